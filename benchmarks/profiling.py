"""Where the time goes: cProfile over streaming and one-shot runs, and timeit of the pieces of one `feed`.

cProfile inflates the cost of small Python calls: its figures are for shares, not absolute times.
`component_costs` reads private attributes of the three parsers (it times their internal steps alone).
"""

from __future__ import annotations

import cProfile
import io
import pstats
import re
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.config import Config
from benchmarks.engines import ENGINES, Engines
from benchmarks.workloads import Workload, seed_of, token_chunks


def _profile_label(filename: str, line: int, func: str) -> str:
    """One row per function across the generated modules.

    `rtc_qwen3.py:556(literal_hold)` -> `<generated>.literal_hold`.
    """
    name = Path(filename).name
    if name.startswith("rtc_"):
        return "<generated>." + re.sub(r"_(scan|handle)_\d+$", r"_\1_<n>", func)
    if not line:
        return func
    return f"{name}:{line}({func})"


def profile_engines(cfg: Config, engines: Engines, workloads: list[Workload]) -> dict[str, Any]:
    """cProfile over one streaming run of every template (token chunks) per engine; tottime per function."""
    out = {}
    for engine in ENGINES:
        for scope, selected in (
            ("all templates", workloads),
            ("gpt_oss", [w for w in workloads if w.model == "gpt_oss"]),
        ):
            profiler = cProfile.Profile()
            total_chunks = 0
            for w in selected:
                chunks = token_chunks(w.text(cfg.profile_size), seed_of("profile", w.model))
                total_chunks += len(chunks)
                parser = engines.parser(engine, w)
                profiler.enable()
                for chunk in chunks:
                    parser.feed(chunk)
                parser.finalize()
                profiler.disable()
            stats = pstats.Stats(profiler, stream=io.StringIO())
            total = stats.total_tt  # type: ignore[attr-defined]
            merged: dict[str, list[float]] = {}
            for (filename, line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
                merged.setdefault(_profile_label(filename, line, func), [0, 0.0, 0.0])
                entry = merged[_profile_label(filename, line, func)]
                entry[0] += nc
                entry[1] += tt
                entry[2] += ct
            rows: list[dict[str, Any]] = [
                {"function": label, "calls": nc, "tottime": tt, "cumtime": ct, "per_chunk_calls": nc / total_chunks}
                for label, (nc, tt, ct) in merged.items()
            ]
            rows.sort(key=lambda r: -r["tottime"])
            out[f"{engine} / {scope}"] = {"total": total, "chunks": total_chunks, "rows": rows[:14]}
    return out


def profile_oneshot_worst(
    cfg: Config, engines: Engines, workloads: list[Workload], one: dict[int, Any]
) -> dict[str, Any]:
    """cProfile of compiled and transformers `parse_response` on the template where compiled/transformers is worst."""
    size = max(cfg.oneshot_sizes)
    w = max(workloads, key=lambda w: one[size][w.model]["compiled"] / one[size][w.model]["transformers"])
    text = w.text(size)
    out: dict[str, Any] = {"model": w.model, "size": size, "engines": {}}
    for engine in ("compiled", "transformers"):
        profiler = cProfile.Profile()
        profiler.enable()
        engines.parse(engine, w, text)
        profiler.disable()
        stats = pstats.Stats(profiler, stream=io.StringIO())
        total = stats.total_tt  # type: ignore[attr-defined]
        rows = [
            {"function": _profile_label(f, line, func), "calls": nc, "tottime": tt, "cumtime": ct}
            for (f, line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items()  # type: ignore[attr-defined]
        ]
        rows.sort(key=lambda r: -r["tottime"])
        out["engines"][engine] = {"total": total, "rows": rows[:6]}
    return out


def component_costs(engines: Engines, w: Workload) -> list[tuple[str, str, float]]:
    """Per-call cost of the pieces of one `feed`, without a profiler (timeit, best of 5 x 20000 calls).

    State: the parser is inside the implicit content region of `w` (qwen3), with the buffer holding what the
    engines keep after a feed (one committed character, see `_drop_committed`) plus a new 3-character chunk.
    Reads private attributes of the three parsers; nothing is modified except the buffer state being set.
    """
    rows: list[tuple[str, str, float]] = []
    chunk = "abc"
    number = 20000

    def best(stmt: Callable[[], Any]) -> float:
        return min(timeit.repeat(stmt, number=number, repeat=5)) / number * 1e6

    module = engines.modules[w.model]
    buf = "x" + chunk
    compiled = engines.parser("compiled", w)
    compiled.feed("Hello")
    rows.append(("compiled", "whole `feed('abc')` (content region)", best(lambda: compiled.feed(chunk))))
    scan0 = module._SCANNERS[0]
    rows.append(("compiled", "`_scan_0(buf, 1, False)` (3 delimiters, no match)", best(lambda: scan0(buf, 1, False))))
    hold = module.literal_hold
    prefixes = [v for k, v in vars(module).items() if k.startswith("_prefixes_")]
    longest = max(len(x) for x in prefixes[-1])
    rows.append(
        (
            "compiled",
            f"one `literal_hold` call ({longest}-char literals, 3-char tail)",
            best(lambda: hold(buf, 1, prefixes[-1], longest)),
        )
    )
    rows.append(("compiled", "`_drop_committed()`", best(compiled._drop_committed)))
    events: list[Any] = []
    body: list[str] = []
    rows.append(
        (
            "compiled",
            "`_accumulate(events, 'abc')` (event dict + body append)",
            best(lambda: compiled._accumulate(events, chunk)),
        )
    )
    events.clear()

    interp = engines.parser("interpreter", w)
    interp.feed("Hello")
    rows.append(("interpreter", "whole `feed('abc')` (content region)", best(lambda: interp.feed(chunk))))
    interp._buffer, interp._pos = buf, 1
    rows.append(
        ("interpreter", "`_scan(False)` (3 regex partial searches, no match)", best(lambda: interp._scan(False)))
    )

    tf = engines.parser("transformers", w)
    tf.feed("Hello")

    def tf_feed() -> None:
        tf._buffer, tf._pos = "x", 1  # keep its buffer as short as the others' (it never trims it itself)
        tf.feed(chunk)

    rows.append(("transformers", "whole `feed('abc')`, buffer reset to 1 char before each call", best(tf_feed)))
    tf._buffer, tf._pos = buf, 1
    watch = tf._watchlist()
    rows.append(
        (
            "transformers",
            "`_scan(watchlist, False)` (3 regex partial searches, no match)",
            best(lambda: tf._scan(watch, False)),
        )
    )

    def floor() -> None:
        body.append(chunk)
        events.append({"type": "region_chunk", "field": "content", "text": chunk, "dirty": False})
        events.clear()

    rows.append(("floor", "append + one event dict", best(floor)))
    return rows
