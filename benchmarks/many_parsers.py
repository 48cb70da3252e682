"""Many parsers streaming at once (a server with 1,000 generations in flight), compiled modules only.

Each of the `cfg.concurrent_parsers` parsers streams the template's 4 KB output in its own random token
chunking (1-6 characters, its own seed), so the parsers reach their delimiters at different rounds.

* throughput: round-robin (chunk i of every parser before chunk i+1 of any; a parser whose chunks have run
  out is skipped) against sequential (each parser's whole stream, then the next parser's), over the same
  parsers' chunks. Both orders are laid out beforehand as two parallel lists (bound `feed`, chunk) and run
  by the same loop, `for feed, chunk in zip(feeds, chunks): feed(chunk)`, so they differ only in order;
  then every parser is finalized (timed too). The two orders alternate which runs first, repetition by
  repetition, each on fresh parsers. Every message must equal transformers' one-shot message.
* memory: a separate round-robin run under tracemalloc, stopped mid-stream (after half the median number
  of chunks per parser). Chunks are sliced from the text inside the traced loop, as text arriving from a
  tokenizer is new, so a parser that keeps a chunk is charged for it and a chunk it drops costs nothing;
  events are dropped as soon as `feed` returns them. `retained` = traced bytes still allocated after
  `gc.collect()` minus those before the parsers were built, divided by the number of parsers (it includes
  the parser objects themselves, their buffers, bodies and closed values, and 8 bytes each for the list
  that holds them). A parser's `text` = the characters it has been fed so far; `text as str` =
  `sys.getsizeof` of that text as one Python string (1 byte a character for ASCII, 2 once it has a
  character such as the filler's "東"); `overhead` = retained minus `text as str`: what a parser costs
  beyond holding its text once, compactly.
"""

from __future__ import annotations

import functools
import gc
import statistics
import sys
import time
import tracemalloc
from typing import Any

from benchmarks.config import Config, log
from benchmarks.engines import Engines, outcome
from benchmarks.workloads import Workload, seed_of, token_chunks


def _bounds(chunks: list[str]) -> list[tuple[int, int]]:
    out, at = [], 0
    for chunk in chunks:
        out.append((at, at + len(chunk)))
        at += len(chunk)
    return out


def _timed_run(engines: Engines, w: Workload, n: int, index: list[int], chunks: list[str]) -> tuple[float, list[Any]]:
    """Seconds to feed `chunks[i]` to parser `index[i]` for every i, then finalize all; and the messages."""
    parsers = [engines.parser("compiled", w) for _ in range(n)]
    bound = [p.feed for p in parsers]
    feeds = [bound[k] for k in index]
    gc.collect()
    t0 = time.perf_counter()
    try:
        for feed, chunk in zip(feeds, chunks, strict=True):
            feed(chunk)
        messages = [p.finalize()[0] for p in parsers]
    except Exception as error:  # noqa: BLE001 - recorded, the timing is then meaningless
        return float("nan"), [{"error": type(error).__name__}]
    return time.perf_counter() - t0, messages


def _memory_mid_stream(
    engines: Engines, w: Workload, text: str, bounds: list[list[tuple[int, int]]]
) -> dict[str, float]:
    n = len(bounds)
    rounds = int(statistics.median(len(b) for b in bounds)) // 2
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    parsers = [engines.parser("compiled", w) for _ in range(n)]
    gc.collect()
    built = tracemalloc.get_traced_memory()[0]
    for i in range(rounds):
        for k in range(n):
            own = bounds[k]
            if i < len(own):
                start, end = own[i]
                parsers[k].feed(text[start:end])
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    fed = [b[min(rounds, len(b)) - 1][1] if rounds else 0 for b in bounds]
    text_str = statistics.fmean(sys.getsizeof(text[:f]) for f in fed)
    retained = (current - before) / n
    del parsers
    gc.collect()
    return {
        "rounds": rounds,
        "built": (built - before) / n,
        "retained": retained,
        "peak": (peak - before) / n,
        "text_chars": statistics.fmean(fed),
        "text_str": text_str,
        "overhead": retained - text_str,
        "overhead_chars": retained - statistics.fmean(fed),
    }


def bench_concurrent(cfg: Config, engines: Engines, workloads: list[Workload]) -> list[dict[str, Any]]:
    """Round-robin vs sequential throughput and mid-stream memory per parser, for each of `workloads`."""
    rows = []
    n = cfg.concurrent_parsers
    for w in workloads:
        t_model = time.perf_counter()
        text = w.text(cfg.headline)
        reference = outcome(functools.partial(engines.parse, "transformers", w, text))
        chunkings = [token_chunks(text, seed_of("concurrent", w.model, k)) for k in range(n)]
        lengths = [len(c) for c in chunkings]
        total = sum(lengths)
        orders = {
            "sequential": (
                [k for k in range(n) for _ in range(lengths[k])],
                [chunk for chunks in chunkings for chunk in chunks],
            ),
            "round-robin": (
                [k for i in range(max(lengths)) for k in range(n) if i < lengths[k]],
                [chunkings[k][i] for i in range(max(lengths)) for k in range(n) if i < lengths[k]],
            ),
        }
        samples: dict[str, list[float]] = {order: [] for order in orders}
        wrong: set[str] = set()
        for rep in range(cfg.concurrent_reps):
            names = list(orders) if rep % 2 == 0 else list(orders)[::-1]
            for order in names:
                seconds, messages = _timed_run(engines, w, n, *orders[order])
                samples[order].append(seconds / total * 1e6)
                if any(m != reference for m in messages):
                    wrong.add(order)
        del orders
        memory = _memory_mid_stream(engines, w, text, [_bounds(c) for c in chunkings])
        sequential = statistics.median(samples["sequential"])
        round_robin = statistics.median(samples["round-robin"])
        rows.append(
            {
                "model": w.model,
                "parsers": n,
                "chunks": total,
                "sequential": sequential,
                "round_robin": round_robin,
                "ratio": round_robin / sequential,
                "samples": samples,
                "mismatch": sorted(wrong),
                **memory,
            }
        )
        log(
            f"  concurrent {w.model}: {n} parsers, sequential {sequential:.2f} us/chunk, round-robin "
            f"{round_robin:.2f} ({round_robin / sequential:.2f}x); {memory['retained']:.0f} bytes/parser mid-stream "
            f"for {memory['text_chars']:.0f} chars ({memory['overhead']:.0f} beyond its text); "
            f"{time.perf_counter() - t_model:.1f} s"
        )
    return rows
