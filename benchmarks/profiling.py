"""Where the time goes: which path each chunk takes, cProfile over streaming and one-shot runs, and timeit of
the pieces of one `feed`.

A generated module's `ResponseParser.feed` is the fast path written out inline (one `in` test per character
that can start a delimiter of the current state, then the region chunk); anything else falls back to the
engine's `StreamingParser.feed`, the slow path that scans for delimiters. `slow_path_shares` counts, per
template, how many chunks take the slow path (no profiler: the module's engine `feed` is wrapped in a
counter while it streams).

cProfile inflates the cost of small Python calls: its figures are for shares, not absolute times.
`component_costs` reads private attributes of the three parsers (it times their internal steps alone);
a piece a parser no longer has is reported as missing, not timed.
"""

from __future__ import annotations

import cProfile
import inspect
import io
import pstats
import re
import timeit
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.config import Config
from benchmarks.engines import Engines
from benchmarks.workloads import Workload, seed_of, token_chunks

# =============================================================================================== path per chunk


def slow_path_shares(cfg: Config, engines: Engines, workloads: list[Workload]) -> dict[str, dict[str, Any]]:
    """Per template, at the headline size with the streaming run's chunks: how many `feed` calls of the
    compiled parser took the slow path (the engine's `StreamingParser.feed`), overall and per parser state
    (the state the parser was in when the chunk arrived)."""
    out: dict[str, dict[str, Any]] = {}
    for w in workloads:
        chunks = token_chunks(w.text(cfg.headline), seed_of(w.model, cfg.headline))
        parser = engines.parser("compiled", w)
        # The module's own `feed` calls the engine's by its class (`StreamingParser.feed(self, text)`): the
        # counter goes on the class while this parser streams.
        engine: Any = next(cls for cls in type(parser).__mro__ if cls.__name__ == "StreamingParser")
        scanning = engine.feed
        slow = [0]

        def counted(self: Any, text: str, scanning: Callable[..., Any] = scanning, slow: list[int] = slow) -> Any:
            slow[0] += 1
            return scanning(self, text)

        by_state: dict[int, list[int]] = {}
        engine.feed = counted
        try:
            for chunk in chunks:
                state = parser._state
                before = slow[0]
                parser.feed(chunk)
                counts = by_state.setdefault(state, [0, 0])
                counts[0] += 1
                counts[1] += slow[0] - before
            parser.finalize()
        finally:
            engine.feed = scanning
        out[w.model] = {
            "chunks": len(chunks),
            "slow": slow[0],
            "share": slow[0] / len(chunks),
            "specialised_feed": "feed" in vars(type(parser)),
            "by_state": {
                _state_name(parser, state): {"chunks": n, "slow": s} for state, (n, s) in sorted(by_state.items())
            },
        }
    return out


def _state_name(parser: Any, state: int) -> str:
    """`outside` for state 0, else `in <field>` (the field whose explicit region the state is)."""
    if state == 0:
        return "outside"
    tables = parser._program.tables
    fields = [i for i, s in enumerate(tables.state_of_field) if s == state]
    return f"in {tables.names[fields[0]]}" if fields else f"state {state}"


# =============================================================================================== cProfile


def _qualnames(modules: dict[str, ModuleType]) -> dict[tuple[str, int], str]:
    """(file, first line) -> qualified name, for every function and method of the generated modules.

    cProfile names a function by `co_name` only, so `ResponseParser.feed` (the fast path) and
    `StreamingParser.feed` would be the same `feed` without this.
    """
    names: dict[tuple[str, int], str] = {}

    def add(function: Any) -> None:
        code = getattr(function, "__code__", None)
        if code is not None:
            names[(code.co_filename, code.co_firstlineno)] = function.__qualname__

    for module in modules.values():
        for value in vars(module).values():
            if inspect.isfunction(value):
                add(value)
            elif inspect.isclass(value) and value.__module__ == module.__name__:
                for member in vars(value).values():
                    add(getattr(member, "__func__", member))
    return names


def _profile_label(filename: str, line: int, func: str, qualnames: dict[tuple[str, int], str]) -> str:
    """One row per function across the generated modules.

    `rtc_qwen3.py:1797(feed)` -> `<generated>.ResponseParser.feed`; numbered helpers are merged
    (`_scan_7` -> `_scan_<n>`).
    """
    name = Path(filename).name
    if name.startswith("rtc_"):
        qualname = qualnames.get((filename, line), func)
        return "<generated>." + re.sub(r"_(scan|handle)_\d+$", r"_\1_<n>", qualname)
    if not line:
        return func
    return f"{name}:{line}({func})"


def _rows(profiler: cProfile.Profile, qualnames: dict[tuple[str, int], str], chunks: int) -> tuple[float, list[Any]]:
    """Total profiled seconds, and one row per (merged) function, most self time first."""
    stats = pstats.Stats(profiler, stream=io.StringIO())
    total: float = stats.total_tt  # type: ignore[attr-defined]
    merged: dict[str, list[float]] = {}
    for (filename, line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        entry = merged.setdefault(_profile_label(filename, line, func, qualnames), [0, 0.0, 0.0])
        entry[0] += nc
        entry[1] += tt
        entry[2] += ct
    rows: list[dict[str, Any]] = [
        {"function": label, "calls": nc, "tottime": tt, "cumtime": ct, "per_chunk_calls": nc / max(1, chunks)}
        for label, (nc, tt, ct) in merged.items()
    ]
    rows.sort(key=lambda r: -r["tottime"])
    return total, rows


def _profile_stream(profiler: cProfile.Profile, parser: Any, chunks: list[str]) -> None:
    profiler.enable()
    for chunk in chunks:
        parser.feed(chunk)
    parser.finalize()
    profiler.disable()


def profile_engines(cfg: Config, engines: Engines, workloads: list[Workload]) -> dict[str, Any]:
    """cProfile over one streaming run of every template (token chunks): per engine over all templates
    together, and for the compiled modules per template."""
    qualnames = _qualnames(engines.modules)
    chunkings = {w.model: token_chunks(w.text(cfg.profile_size), seed_of("profile", w.model)) for w in workloads}
    together: dict[str, Any] = {}
    for engine in cfg.engines:
        profiler = cProfile.Profile()
        for w in workloads:
            _profile_stream(profiler, engines.parser(engine, w), chunkings[w.model])
        chunks = sum(len(c) for c in chunkings.values())
        total, rows = _rows(profiler, qualnames, chunks)
        together[engine] = {"total": total, "chunks": chunks, "rows": rows[:14]}
    per_template: dict[str, Any] = {}
    for w in workloads:
        profiler = cProfile.Profile()
        _profile_stream(profiler, engines.parser("compiled", w), chunkings[w.model])
        total, rows = _rows(profiler, qualnames, len(chunkings[w.model]))
        cum = {r["function"]: r["cumtime"] for r in rows}
        per_template[w.model] = {
            "total": total,
            "chunks": len(chunkings[w.model]),
            "fast_self": next((r["tottime"] for r in rows if r["function"] == "<generated>.ResponseParser.feed"), 0.0),
            "scanning_cum": cum.get("<generated>.StreamingParser.feed", 0.0),
            "finalize_cum": cum.get("<generated>.StreamingParser.finalize", 0.0),
            "rows": [r for r in rows if r["function"] != "<generated>.ResponseParser.feed"][:4],
        }
    return {"together": together, "per_template": per_template}


def profile_oneshot_worst(
    cfg: Config, engines: Engines, workloads: list[Workload], one: dict[int, Any]
) -> dict[str, Any]:
    """cProfile of compiled and transformers `parse_response` where compiled/transformers is worst (over
    the target sizes, 4 KB and 400 KB, where measured)."""
    sizes = [s for s in cfg.oneshot_sizes if s in (4 * 1024, 400 * 1024)] or cfg.oneshot_sizes
    size, w = max(
        ((s, w) for s in sizes for w in workloads),
        key=lambda sw: one[sw[0]][sw[1].model]["compiled"] / one[sw[0]][sw[1].model]["transformers"],
    )
    qualnames = _qualnames(engines.modules)
    text = w.text(size)
    out: dict[str, Any] = {"model": w.model, "size": size, "engines": {}}
    for engine in ("compiled", "transformers"):
        profiler = cProfile.Profile()
        profiler.enable()
        engines.parse(engine, w, text)
        profiler.disable()
        total, rows = _rows(profiler, qualnames, 1)
        out["engines"][engine] = {"total": total, "rows": rows[:6]}
    return out


# =============================================================================================== timeit


def component_costs(engines: Engines, w: Workload) -> list[tuple[str, str, float | None]]:
    """Per-call cost of the pieces of one `feed`, without a profiler (timeit, best of 5 x 20000 calls).

    The parser is inside the region its first text opens (for qwen3 with its recorded prompt: content),
    with nothing held back. `plain` = a 3-character chunk no delimiter can start in (the fast path);
    `busy` = one with a delimiter's first character but no delimiter ("a<b" for qwen3: the slow path).
    Reads private attributes of the three parsers; a piece that is missing is reported as None.
    """
    rows: list[tuple[str, str, float | None]] = []
    plain, busy = "abc", "a<b"
    number = 20000

    def best(stmt: Callable[[], Any]) -> float:
        return min(timeit.repeat(stmt, number=number, repeat=5)) / number * 1e6

    def piece(engine: str, label: str, make: Callable[[], Callable[[], Any]]) -> None:
        try:
            rows.append((engine, label, best(make())))
        except (AttributeError, IndexError, KeyError, TypeError) as error:
            rows.append((engine, f"{label} (missing: {type(error).__name__}: {error})", None))

    compiled = engines.parser("compiled", w)
    compiled.feed("Hello")
    region = compiled._program.tables.names[compiled._field] if compiled._field >= 0 else "no field"
    piece("compiled", f"whole `feed({plain!r})` in {region} (fast path)", lambda: lambda: compiled.feed(plain))
    piece("compiled", f"whole `feed({busy!r})` in {region} (slow path)", lambda: lambda: compiled.feed(busy))
    engine: Any = type(compiled).__mro__[1]  # the engine class, whose `feed` scans (no fast path)
    scanning = engine.feed
    piece("compiled", f"the engine's `feed({plain!r})` (scanning)", lambda: lambda: scanning(compiled, plain))

    def scanner() -> Callable[[], Any]:
        scan = compiled._program.scanners[compiled._state]
        return lambda: scan(busy, 0, False, [])

    piece("compiled", f"the state's scanner on {busy!r} (no match)", scanner)
    events: list[Any] = []

    def accumulate() -> Callable[[], Any]:
        add = compiled._accumulate

        def run() -> None:
            add(events, plain)
            events.clear()

        return run

    piece("compiled", f"`_accumulate(events, {plain!r})` (event dict + body append)", accumulate)
    piece("compiled", "`_drop_committed()`", lambda: compiled._drop_committed)

    if "interpreter" in engines.loaded:
        interp = engines.parser("interpreter", w)
        interp.feed("Hello")
        piece("interpreter", f"whole `feed({plain!r})`", lambda: lambda: interp.feed(plain))
        piece("interpreter", f"whole `feed({busy!r})`", lambda: lambda: interp.feed(busy))

    tf = engines.parser("transformers", w)
    tf.feed("Hello")

    def tf_feed(chunk: str) -> Callable[[], Callable[[], Any]]:
        def run() -> None:
            tf._buffer, tf._pos = "x", 1  # keep its buffer as short as the others' (it never trims it itself)
            tf.feed(chunk)

        return lambda: run

    piece("transformers", f"whole `feed({plain!r})`, buffer reset to 1 char before each call", tf_feed(plain))
    piece("transformers", f"whole `feed({busy!r})`, buffer reset to 1 char before each call", tf_feed(busy))

    def tf_scan() -> Callable[[], Any]:
        tf._buffer, tf._pos = "x" + plain, 1
        watch = tf._watchlist()
        return lambda: tf._scan(watch, False)

    piece("transformers", "`_scan(watchlist, False)` (regex partial searches, no match)", tf_scan)

    body: list[str] = []

    def floor() -> None:
        body.append(plain)
        events.append({"type": "region_chunk", "field": "content", "text": plain, "dirty": False})
        events.clear()

    piece("floor", "append + one event dict", lambda: floor)
    return rows
