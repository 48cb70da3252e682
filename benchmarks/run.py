#!/usr/bin/env python
"""Benchmark: rtcompile's compiled parser modules vs transformers 5.24.0 vs the rtcompile interpreter.

    python benchmarks/run.py            # full run (~15 min on 2 cores), writes benchmarks/RESULTS.md
    python benchmarks/run.py --quick    # < 2 min, smaller sizes and fewer repetitions, into a temporary directory
    python benchmarks/run.py --out DIR  # where RESULTS.md, results.json and per_chunk_cost.png go
    python benchmarks/run.py --models qwen3 gpt_oss   # only these templates

What is measured (all in one process, engines interleaved run by run: A, B, C, then A, B, C ...,
so that a noisy machine shifts all engines alike; every number is a median over repetitions):

* streaming: a realistic output per bundled template (templates/*.json), built from the template's own
  recorded cases (tests/data/<model>/cases.json) by inflating reasoning, content and tool-call argument
  text to a target size, fed in token-like chunks (random 1-6 characters); cost per chunk
  (all `feed` calls plus `finalize`, divided by the number of chunks), against the "floor" (a loop that
  only appends each chunk to a list and builds one event dict per chunk);
* growth of the per-chunk cost from 4 KB to 400 KB;
* retained memory (tracemalloc) after streaming 10 MB of content into an open region;
* one-shot `parse_response`;
* import time of a generated module in a fresh interpreter (vs `transformers.utils.chat_parsing`);
* adversarial streams fed one character at a time;
* uncached translation of every regex of the bundled templates to stdlib `re` (`rtcompile.regex.translate`);
* nested unbounded repeats (`<(a+)+>`) on growing near misses (`benchmarks.nested_repeats`).

The rtcompile measured is the one of this checkout (the directory above benchmarks/), not whichever
one the environment has installed. The package `benchmarks` says where each part lives.

This is a measurement, never a test: nothing here asserts a timing.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, Python puts benchmarks/ itself on the path: put the checkout first instead, so that
# `benchmarks` is a package and `rtcompile` is this checkout's.
_CHECKOUT = str(Path(__file__).resolve().parent.parent)
if sys.path[0] != _CHECKOUT:
    sys.path.insert(0, _CHECKOUT)

import argparse  # noqa: E402
import gc  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any, TypeVar  # noqa: E402

import transformers  # noqa: E402

import rtcompile  # noqa: E402
from benchmarks import import_time, measurement, nested_repeats, profiling, report  # noqa: E402
from benchmarks.config import TEMPLATES, Config, log  # noqa: E402
from benchmarks.engines import Engines, compile_modules  # noqa: E402
from benchmarks.workloads import Workload, check_workloads  # noqa: E402

T = TypeVar("T")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a run of under 2 minutes (smaller sizes, fewer repetitions); written to a temporary directory "
        "unless --out is given, so it never replaces the committed results",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="directory for RESULTS.md, results.json and the plot (default: benchmarks/; with --quick, a new "
        "temporary directory)",
    )
    parser.add_argument("--models", nargs="*", help="only these templates (default: all bundled templates)")
    args = parser.parse_args()
    cfg = Config(args.quick)
    out: Path = args.out or (
        Path(tempfile.mkdtemp(prefix="rtcompile-bench-quick-")) if args.quick else Path(__file__).resolve().parent
    )
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "transformers": transformers.__version__,
        "rtcompile": rtcompile.__version__,
        "cpu": report.cpu_model(),
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "load_start": os.getloadavg(),
        "rtcompile_sources": report.sources_digest(),
    }
    models: list[str] = args.models or sorted(p.stem for p in TEMPLATES.glob("*.json"))
    with tempfile.TemporaryDirectory(prefix="rtcompile-bench-") as tmp:
        directory = Path(tmp)
        log(f"compiling {len(models)} templates ...")
        engines = Engines(models, directory)
        workloads = [Workload(m) for m in models]
        by_model = {w.model: w for w in workloads}
        for needed in ("qwen3", "gpt_oss"):  # the memory, adversarial and component runs use these two
            if needed not in by_model:
                by_model[needed] = Workload(needed)
                engines.modules.update(compile_modules([needed], directory))
                engines.loaded[needed] = rtcompile.load_template(TEMPLATES / f"{needed}.json")
        env["fast_path"] = {
            m: f"{sum(p is not None for p in plain)} of {len(plain)}"
            for m, module in engines.modules.items()
            if (plain := getattr(module, "_PLAIN", None)) is not None
        }
        # Everything built so far (modules, templates, transformers) lives to the end: move it out of the
        # collector's sight, so the gc.collect() before each timed run is cheap (~60 ms -> ~3 us).
        gc.collect()
        gc.freeze()
        stages: dict[str, float] = {}

        def stage(name: str, run: Callable[[], T]) -> T:
            log(f"{name} ...")
            t0 = time.perf_counter()
            result = run()
            stages[name] = time.perf_counter() - t0
            log(f"{name}: {stages[name]:.0f} s")
            return result

        stage("checking workloads", lambda: check_workloads(engines, workloads, cfg.sizes))
        streaming = stage("streaming", lambda: measurement.bench_streaming(cfg, engines, workloads))
        oneshot = stage("one-shot", lambda: measurement.bench_oneshot(cfg, engines, workloads))
        memory = stage("memory", lambda: measurement.bench_memory(cfg, engines, by_model))
        adversarial = stage("adversarial", lambda: measurement.bench_adversarial(cfg, engines, by_model))
        translation = stage("regex translation", lambda: measurement.bench_regex_translation(cfg, models))
        nested = stage("nested repeats", lambda: nested_repeats.bench_nested_repeats(cfg, directory))
        imports = stage("imports", lambda: import_time.bench_imports(cfg, models, directory))
        profile = stage("profiling", lambda: profiling.profile_engines(cfg, engines, workloads))
        profile["components"] = stage("components", lambda: profiling.component_costs(engines, by_model["qwen3"]))
        profile["oneshot"] = stage(
            "one-shot profile", lambda: profiling.profile_oneshot_worst(cfg, engines, workloads, oneshot)
        )
    env["elapsed"] = time.time() - started
    env["stages"] = stages
    env["load_end"] = os.getloadavg()
    results = report.Results(
        streaming=streaming,
        memory=memory,
        oneshot=oneshot,
        imports=imports,
        adversarial=adversarial,
        translation=translation,
        nested_repeats=nested,
        profile=profile,
    )
    report.write(out, cfg, env, workloads, results)


if __name__ == "__main__":
    main()
