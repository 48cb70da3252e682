"""Timing and memory, in this process.

Engines are interleaved run by run (A, B, C, then A, B, C ...), so that load from other processes on the
machine shifts all engines alike; every figure is a median over repetitions. Each `bench_*` returns plain
data (dicts and lists) for `benchmarks.report`.
"""

from __future__ import annotations

import functools
import gc
import math
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import rtcompile.regex.translate as regex_translation
from benchmarks.config import KB, MB, Config, log, size_label
from benchmarks.engines import Engines, outcome
from benchmarks.workloads import ADVERSARIAL, RICH_FILLER, Workload, seed_of, template_patterns, token_chunks
from rtcompile.regex import charsets, parser

# =============================================================================================== streaming


def time_floor(chunks: list[str]) -> float:
    """The floor: append each chunk to a list and create one event dict per chunk."""
    gc.collect()
    t0 = time.perf_counter()
    body: list[str] = []
    append = body.append
    for chunk in chunks:
        append(chunk)
        _event = {"type": "region_chunk", "field": "content", "text": chunk, "dirty": False}
    "".join(body)
    return time.perf_counter() - t0


class BoundParser:
    """The least a parser can do per chunk and still give what the contract asks for a chunk of region
    text: one method call, one test for a delimiter's first character, the text kept, one event dict
    in a list. It handles no delimiter at all (a chunk holding "<" is dropped), so it is a bound, not
    an engine: where transformers is less than 10x slower than this, no parser is 10x faster than it."""

    __slots__ = ("_body",)

    def __init__(self) -> None:
        self._body: list[str] = []

    def feed(self, text: str) -> list[dict[str, Any]]:
        if "<" in text:
            return []
        self._body.append(text)
        return [{"type": "region_chunk", "field": "content", "text": text, "dirty": False}]

    def finalize(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        return {"role": "assistant", "content": "".join(self._body)}, []


def time_batch(parsers: list[Any], chunks: list[str]) -> tuple[float, Any]:
    """Seconds for streaming `chunks` through each of `parsers` in turn (built beforehand), and the last message."""
    gc.collect()
    message: Any = None
    t0 = time.perf_counter()
    try:
        for parser in parsers:
            feed = parser.feed
            for chunk in chunks:
                feed(chunk)
            message = parser.finalize()[0]
    except Exception as error:  # noqa: BLE001 - recorded as a mismatch, the timing is then meaningless
        return float("nan"), {"error": type(error).__name__}
    return time.perf_counter() - t0, message


def bench_streaming(cfg: Config, engines: Engines, workloads: list[Workload]) -> dict[str, Any]:
    """us/chunk per (size, model, engine), for the engines `cfg.engines_for(size)`, the floor and the bound
    (`BoundParser`).

    Interleaved at two levels, so that load from other processes hits everything alike: within a repetition
    every engine (and the floor) runs once per size, one after the other, and all sizes of one template are
    measured in the same repetitions. A timed sample of a small output streams it through `batch` fresh
    parsers back to back (about `cfg.chunks_per_sample[size]` chunks), so that it is not over in a few ms;
    400 KB and 4 MB outputs are one parser per sample.

    Every streamed message is compared with transformers' message for the same text: its streamed one
    where transformers streams that size, else its one-shot `parse_response`.
    """
    results: dict[int, dict[str, dict[str, float]]] = {size: {} for size in cfg.sizes}
    mismatches: list[str] = []
    for w in workloads:
        t_model = time.perf_counter()
        texts = {size: w.text(size) for size in cfg.sizes}
        chunks = {size: token_chunks(texts[size], seed_of(w.model, size)) for size in cfg.sizes}
        batch = {size: max(1, cfg.chunks_per_sample[size] // len(chunks[size])) for size in cfg.sizes}
        samples: dict[int, dict[str, list[float]]] = {
            size: {e: [] for e in [*cfg.engines_for(size), "floor", "bound"]} for size in cfg.sizes
        }
        messages: dict[int, dict[str, Any]] = {size: {} for size in cfg.sizes}
        for rep in range(cfg.reps):
            for size in cfg.sizes:
                n = batch[size] * len(chunks[size])
                for e in cfg.engines_for(size):
                    if e == "transformers" and rep >= cfg.tf_reps.get(size, cfg.reps):
                        continue
                    parsers = [engines.parser(e, w) for _ in range(batch[size])]
                    seconds, messages[size][e] = time_batch(parsers, chunks[size])
                    samples[size][e].append(seconds / n * 1e6)
                    del parsers
                samples[size]["floor"].append(math.fsum(time_floor(chunks[size]) for _ in range(batch[size])) / n * 1e6)
                bound_seconds, _ = time_batch([BoundParser() for _ in range(batch[size])], chunks[size])
                samples[size]["bound"].append(bound_seconds / n * 1e6)
        for size in cfg.sizes:
            got = messages[size]
            reference = got.get("transformers")
            if reference is None:
                reference = outcome(functools.partial(engines.parse, "transformers", w, texts[size]))
            if any(m != reference for m in got.values()):
                mismatches.append(f"{w.model} @ {size_label(size)}: streamed messages differ from transformers'")
            results[size][w.model] = {e: statistics.median(v) for e, v in samples[size].items() if v}
            results[size][w.model].update({f"{e}_min": min(v) for e, v in samples[size].items() if v})
            results[size][w.model]["chunks"] = len(chunks[size])
            results[size][w.model]["batch"] = batch[size]
        del chunks
        log(f"  streaming {w.model}: {time.perf_counter() - t_model:5.1f} s")
    return {"per_chunk": results, "mismatches": mismatches}


# =============================================================================================== memory


def retained_after(make: Callable[[], Any], total: int, chunk_sizes: tuple[int, int], seed: int) -> dict[str, float]:
    """Bytes still allocated (tracemalloc) by a parser that has been fed `total` characters of content.

    The content is RICH_FILLER cycled; events are dropped as soon as `feed` returns them. `body` is the size
    of the fed text as one Python string (what the region's body is when it closes).
    """
    rng = random.Random(seed)
    period = 64 * KB
    base = RICH_FILLER * (2 * period // len(RICH_FILLER) + 2)
    sizes = []
    fed = 0
    while fed < total:
        n = rng.randint(*chunk_sizes)
        sizes.append(n)
        fed += n
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    parser = make()
    t0 = time.perf_counter()
    offset = 0
    for n in sizes:
        start = offset % period
        parser.feed(base[start : start + n])
        offset += n
    elapsed = time.perf_counter() - t0
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    buffer = getattr(parser, "_buffer", "")
    del parser
    gc.collect()
    pieces = []
    offset = 0
    for n in sizes:
        start = offset % period
        pieces.append(base[start : start + n])
        offset += n
    body = sys.getsizeof("".join(pieces))
    return {
        "fed": fed,
        "chunks": len(sizes),
        "body": body,
        "retained": current - before,
        "peak": peak - before,
        "buffer_chars": len(buffer),
        "seconds": elapsed,
    }


def bench_memory(cfg: Config, engines: Engines, workloads: dict[str, Workload]) -> list[dict[str, Any]]:
    """Content streamed into an open region: qwen3 (implicit content) and gpt_oss (explicit `final` region).

    tracemalloc slows token-sized feeds about 8x, so the full 10 MB token-chunk run is done for qwen3 only.
    """
    rows = []
    scenarios = [
        ("qwen3", "implicit content", ""),
        ("gpt_oss", "explicit `final` region", "<|channel|>final<|message|>"),
    ]
    for model, region, opener in scenarios:
        w = workloads[model]
        token_engines = tuple(e for e in ("compiled", "interpreter") if e in cfg.engines)
        plans = [
            (
                "token (1-6 chars)",
                (1, 6),
                cfg.memory_size if model == "qwen3" else cfg.memory_size_small,
                token_engines,
            ),
            ("4 KB chunks", (4 * KB, 4 * KB), cfg.memory_size, cfg.engines),
        ]
        for chunking, sizes, total, engine_names in plans:
            for engine in engine_names:

                def make(engine: str = engine, w: Workload = w, opener: str = opener) -> Any:
                    parser = engines.parser(engine, w)
                    if opener:
                        parser.feed(opener)
                    return parser

                r = retained_after(make, total, sizes, seed_of("mem", model))
                rows.append({"model": model, "region": region, "chunking": chunking, "engine": engine, **r})
                log(
                    f"  memory {model} {chunking} {engine}: {r['retained'] / MB:.1f} MB retained "
                    f"for a {r['body'] / MB:.1f} MB body, {r['seconds']:.1f} s"
                )
    return rows


# =============================================================================================== one-shot


def bench_oneshot(cfg: Config, engines: Engines, workloads: list[Workload]) -> dict[str, Any]:
    """ms per `parse_response` call per (size, model, engine): medians of `cfg.oneshot_reps[size]` calls,
    the engines taking turns call by call; and the (size, model) pairs whose messages differ between engines."""
    results: dict[int, dict[str, dict[str, float]]] = {}
    mismatches: list[str] = []
    for size in cfg.oneshot_sizes:
        results[size] = {}
        t_size = time.perf_counter()
        for w in workloads:
            text = w.text(size)
            samples: dict[str, list[float]] = {e: [] for e in cfg.engines}
            messages: dict[str, Any] = {}
            for _ in range(cfg.oneshot_reps[size]):
                for e in cfg.engines:
                    gc.collect()
                    t0 = time.perf_counter()
                    messages[e] = outcome(functools.partial(engines.parse, e, w, text))
                    samples[e].append((time.perf_counter() - t0) * 1e3)
            if any(m != messages["transformers"] for m in messages.values()):
                mismatches.append(f"{w.model} @ {size_label(size)}")
            results[size][w.model] = {e: statistics.median(v) for e, v in samples.items()}
        log(f"  one-shot {size_label(size)}: {time.perf_counter() - t_size:.1f} s")
    return {"ms": results, "mismatches": mismatches}


# =============================================================================================== adversarial


def bench_adversarial(cfg: Config, engines: Engines, workloads: dict[str, Workload]) -> list[dict[str, Any]]:
    """Fed one character at a time; us per character, segment by segment.

    Each engine streams its text in `cfg.adv_segments` equal segments, and the engines take turns segment by
    segment (compiled segment 1, interpreter segment 1, transformers segment 1, compiled segment 2, ...), so
    they share the same time windows. The first segment is the cost of the short stream (the first 100 KB of
    the 1 MB one), the whole run the cost of the long one; a parser that is not linear gets slower segment by
    segment. transformers streams a tenth of the size.
    """
    rows = []
    for label, model, unit in ADVERSARIAL:
        w = workloads[model]
        total = {e: cfg.adv_tf_total if e == "transformers" else cfg.adv_total for e in cfg.engines}
        parsers = {e: engines.parser(e, w) for e in cfg.engines}
        texts = {e: (unit * (total[e] // len(unit) + 1))[: total[e]] for e in cfg.engines}
        step = {e: total[e] // cfg.adv_segments for e in cfg.engines}
        per_char: dict[str, list[float]] = {e: [] for e in cfg.engines}
        for i in range(cfg.adv_segments):
            for e in cfg.engines:
                piece = texts[e][i * step[e] : (i + 1) * step[e]]
                feed = parsers[e].feed
                gc.collect()
                t0 = time.perf_counter()
                for ch in piece:
                    feed(ch)
                per_char[e].append((time.perf_counter() - t0) / len(piece) * 1e6)
        for e in cfg.engines:
            outcome(parsers[e].finalize)
            segments = per_char[e]
            rows.append(
                {
                    "stream": label,
                    "model": model,
                    "engine": e,
                    "segment": step[e],
                    "total": step[e] * cfg.adv_segments,
                    "segments": segments,
                    "first": segments[0],
                    "whole": statistics.fmean(segments),
                    "last": segments[-1],
                    # robust to a busy machine (contention only adds time): fastest late vs fastest early segment
                    "late_vs_early": min(segments[len(segments) // 2 :]) / min(segments[: len(segments) // 2]),
                }
            )
            log(
                f"  adversarial {label} on {model}, {e}: first {size_label(step[e])} {segments[0]:.2f} us/char, "
                f"whole {size_label(step[e] * cfg.adv_segments)} {statistics.fmean(segments):.2f}, "
                f"last {segments[-1]:.2f}"
            )
    return rows


# =============================================================================================== regex translation


def _translation_caches() -> list[Any]:
    """The memo caches of the regex front end (parser, charsets, translate), but the one-off table of cased
    code points.

    Cleared before each timed call, so that every call does all the work of a first translation (whatever
    caches the module grows, they are found by their `cache_clear`).
    """
    modules = (parser, charsets, regex_translation)
    caches = [v for m in modules for v in vars(m).values() if callable(getattr(v, "cache_clear", None))]
    return [cache for cache in caches if cache is not charsets.cased_code_points]


def bench_regex_translation(cfg: Config, models: list[str]) -> dict[str, Any]:
    """ms per uncached `translate(pattern)`, for every regex of the bundled templates.

    Patterns take turns within each repetition. The table of cased code points (`_cased_code_points`, built
    once per process on the first `(?i)` character set) is timed on its own, and built before the patterns.
    """
    patterns = template_patterns(models)
    caches = _translation_caches()
    charsets.cased_code_points.cache_clear()
    gc.collect()
    t0 = time.perf_counter()
    charsets.cased_code_points()
    table_ms = (time.perf_counter() - t0) * 1e3
    samples: list[list[float]] = [[] for _ in patterns]
    outcomes: list[str] = ["" for _ in patterns]
    for _ in range(cfg.regex_reps):
        for index, (_model, _kind, pattern) in enumerate(patterns):
            for cache in caches:
                cache.cache_clear()
            gc.collect()
            t0 = time.perf_counter()
            try:
                regex_translation.translate(pattern)
                outcomes[index] = "ok"
            except (regex_translation.InvalidRegex, regex_translation.UnsupportedRegex) as error:
                outcomes[index] = type(error).__name__
            samples[index].append((time.perf_counter() - t0) * 1e3)
    rows: list[dict[str, Any]] = [
        {
            "model": model,
            "kind": kind,
            "pattern": pattern,
            "outcome": outcomes[index],
            "ms": statistics.median(samples[index]),
            "ms_min": min(samples[index]),
        }
        for index, (model, kind, pattern) in enumerate(patterns)
    ]
    slowest = max(rows, key=lambda row: row["ms"])
    log(f"  regex translation: {len(rows)} patterns, slowest {slowest['ms']:.2f} ms ({slowest['model']})")
    return {"patterns": rows, "cased_table_ms": table_ms, "reps": cfg.regex_reps}
