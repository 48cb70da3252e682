"""The benchmark's where-the-time-goes stage (benchmarks/profiling.py) reads the engine's internals, which
change under it: it must still count what it says it counts (the full run stopped at this stage once, when
the engine's slow path was renamed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks import profiling
from benchmarks.config import Config
from benchmarks.engines import Engines
from benchmarks.workloads import Workload, seed_of, token_chunks


def test_slow_path_shares_count_the_chunks_that_reach_the_engine(tmp_path: Path) -> None:
    cfg = Config("quick")
    engines = Engines(["qwen3"], tmp_path)
    workload = Workload("qwen3")
    shares = profiling.slow_path_shares(cfg, engines, [workload])["qwen3"]
    chunks = token_chunks(workload.text(cfg.headline), seed_of("qwen3", cfg.headline))
    assert shares["chunks"] == len(chunks) and shares["specialised_feed"]
    # Some chunks hold a delimiter, most are region text taken by the module's own fast path.
    assert 0 < shares["slow"] < len(chunks) / 5
    by_state = shares["by_state"]
    assert set(by_state) == {"outside", "in reasoning_content", "in tool_calls"}
    assert sum(s["chunks"] for s in by_state.values()) == len(chunks)
    assert sum(s["slow"] for s in by_state.values()) == shares["slow"]
    # The counter is gone afterwards: the engine's `feed` is its own again.
    parser = engines.parser("compiled", workload)
    engine: Any = next(cls for cls in type(parser).__mro__ if cls.__name__ == "StreamingParser")
    assert engine.feed.__qualname__ == "StreamingParser.feed"
