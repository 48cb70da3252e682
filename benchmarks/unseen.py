"""The unseen set: templates nobody tuned rtcompile for, measured against issue 19's targets.

The set is the random realistic templates (`benchmarks.unseen_templates`, each on its own output) and
the rewrites of every bundled template (`benchmarks.rewrites`, each on its bundled template's workload).
Per template, in this order, all within a few seconds (so that load from other processes hits every
figure of a template alike):

* streaming 4 KB, token chunks: compiled, transformers and the bound (`measurement.BoundParser`)
  interleaved repetition by repetition, as the bundled set's streaming stage does it (a sample streams
  the output through fresh parsers back to back); the streamed messages of compiled and transformers
  are compared;
* per-chunk cost at the big sizes (1 MB, 4 MB; compiled, one parser per stream, `GROWTH_STREAMS`
  streams, each stretch of `SEGMENT` chunks the best of its streams) against 4 KB's best sample. A
  stream that costs more than `DEADLINE` times what 4 KB's per-chunk cost predicts is stopped: its
  growth is then at least the figure reported (measured on the part streamed), and the bigger sizes are
  not run, so that a quadratic template costs seconds, not hours;
* one-shot `parse_response` at 4 KB, 40 KB, 400 KB and 4 MB, compiled and transformers taking turns
  call by call; an engine whose cost per character grew more than `DEADLINE` times from 4 KB, or one call
  of which took over `ONE_SHOT_BUDGET`, is not run at a bigger size (one call cannot be stopped: the
  reference is quadratic or worse on some templates, and 4 MB would take hours). Messages (or errors)
  are compared.

`bench_unseen` returns plain data for `benchmarks.unseen_report`. This is a measurement, never a test.
"""

from __future__ import annotations

import functools
import gc
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.config import KB, TEMPLATES, Config, log, size_label
from benchmarks.engines import Engines, outcome
from benchmarks.measurement import BoundParser, time_batch
from benchmarks.rewrites import RewriteWorkload, rewrites
from benchmarks.unseen_templates import UnseenTemplate, random_templates
from benchmarks.workloads import seed_of, token_chunks

DEADLINE = 8.0  # a big stream or one-shot costing this many times its linear prediction is stopped
MIN_BUDGET = 2.0  # seconds any stopped stream may take first
HEAD_BUDGET = 5.0  # seconds one 4 KB stream may take
ONE_SHOT_BUDGET = 10.0  # seconds one parse_response call may take before its engine is called no more
HEAD = 4 * KB
# Streams per big size. Every stream does the same work stretch by stretch (the same chunks into a fresh parser),
# so each stretch of `SEGMENT` chunks counts at the best of its streams, as a 4 KB sample counts at its best: load
# from other processes lands on a stretch of one stream, not on the same stretch of every stream. (Whole streams,
# the best of two, still moved by tens of percent: one 1 MB stream is a tenth of a second, and a spike anywhere in
# it counted.)
GROWTH_STREAMS = 3
SEGMENT = 1000


def constructs_of(w: Any) -> tuple[str, ...]:
    return tuple(w.constructs) if isinstance(w, (UnseenTemplate, RewriteWorkload)) else ()


def unseen_workloads(cfg: Config, names: list[str] | None = None) -> list[Any]:
    """The unseen set: every `cfg.unseen_random_step`-th random template and the rewrites of the bundled
    templates `cfg.unseen_rewritten` (None: all); with `names`, only these, from the whole set (a random
    template's or a rewrite's name, or a bundled template's name for all its rewrites)."""
    randoms = random_templates()
    models = sorted(p.stem for p in TEMPLATES.glob("*.json"))
    if not names:
        randoms = randoms[:: cfg.unseen_random_step]
        models = cfg.unseen_rewritten or models
    chosen: list[Any] = list(randoms)
    for model in models:
        template = json.loads((TEMPLATES / f"{model}.json").read_text(encoding="utf-8"))["response_template"]
        chosen += [RewriteWorkload(r) for r in rewrites(model, template)]
    if names:
        chosen = [w for w in chosen if w.model in names or w.model.split("~")[0] in names]
    return chosen


def bench_unseen(cfg: Config, workloads: list[Any], directory: Path, checkpoint: Path | None = None) -> dict[str, Any]:
    """Every figure of the unseen set, per template (see the module docstring); the rows so far are written to
    `checkpoint` after each template (a long run that is stopped keeps them)."""
    log(f"  compiling {len(workloads)} unseen templates ...")
    engines = Engines([w.model for w in workloads], directory, {w.model: w.template for w in workloads})
    gc.collect()
    gc.freeze()
    rows: dict[str, dict[str, Any]] = {}
    for index, w in enumerate(workloads):
        t0 = time.perf_counter()
        row: dict[str, Any] = {"constructs": list(constructs_of(w)), "shape": w.shape, "notes": []}
        row["stream"] = _streaming_head(cfg, engines, w, row)
        row["growth"], row["stopped"] = _growth(cfg, engines, w, row.pop("best compiled"), row)
        row["oneshot"] = _oneshot(cfg, engines, w, row)
        rows[w.model] = row
        if checkpoint is not None:
            checkpoint.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
        log(
            f"  unseen {index + 1}/{len(workloads)} {w.model}: {time.perf_counter() - t0:4.1f} s; "
            + "; ".join(f"{k} {v}" for k, v in _summary(row).items())
        )
    return {"rows": rows, "sizes": cfg.unseen_big, "oneshot_sizes": list(cfg.unseen_oneshot_reps)}


def _summary(row: dict[str, Any]) -> dict[str, str]:
    s = row["stream"]
    out = {
        "compiled/bound": f"{s['compiled'] / s['bound']:.2f}x",
        "tf/compiled": f"{s['transformers'] / s['compiled']:.2f}x",
    }
    for size, g in row["growth"].items():
        out[f"growth {size_label(size)}"] = f"{'>=' if size in row['stopped'] else ''}{g:.2f}x"
    for size, ms in row["oneshot"].items():
        if len(ms) == 2:
            out[f"one-shot {size_label(size)} tf/compiled"] = f"{ms['transformers'] / ms['compiled']:.2f}x"
    return out


def _streaming_head(cfg: Config, engines: Engines, w: Any, row: dict[str, Any]) -> dict[str, float]:
    """us/chunk at 4 KB: compiled, transformers and the bound, interleaved, medians over `cfg.reps` (and the
    compiled engine's best sample in `row["best compiled"]`, which its growth is measured against).

    Each engine first streams the output once with a deadline: one that takes over `HEAD_BUDGET` (transformers
    rescans held text with a lookahead that reads to its end from every position: cubic) is stopped there,
    and its figure, from the part streamed, is a lower bound."""
    text = w.text(HEAD)
    chunks = token_chunks(text, seed_of(w.model, HEAD))
    batch = max(1, cfg.chunks_per_sample[HEAD] // len(chunks))
    samples: dict[str, list[float]] = {"compiled": [], "transformers": [], "bound": []}
    messages: dict[str, Any] = {}
    stopped = []
    for engine in ("compiled", "transformers"):
        stretches, fed = _stream_with_deadline(engines.parser(engine, w), chunks, HEAD_BUDGET, every=100)
        if fed < len(chunks):
            stopped.append(engine)
            samples[engine].append(sum(stretches) / fed * 1e6)
            row["notes"].append(f"{engine} stopped after {fed} of {len(chunks)} chunks at 4 KB: at least this slow")
    for _ in range(cfg.reps):
        for engine in ("compiled", "transformers"):
            if engine in stopped:
                continue
            seconds, messages[engine] = time_batch([engines.parser(engine, w) for _ in range(batch)], chunks)
            samples[engine].append(seconds / (batch * len(chunks)) * 1e6)
        seconds, _ = time_batch([BoundParser() for _ in range(batch)], chunks)
        samples["bound"].append(seconds / (batch * len(chunks)) * 1e6)
    row["best compiled"] = min(samples["compiled"])
    if len(messages) == 2 and messages["compiled"] != messages["transformers"]:
        row["notes"].append("streamed messages differ from transformers'")
    if isinstance(messages.get("transformers"), dict) and "error" in messages["transformers"]:
        row["notes"].append(f"transformers' stream raises {messages['transformers']['error']}")
    return {engine: statistics.median(values) for engine, values in samples.items()}


def _stream_with_deadline(
    parser: Any, chunks: list[str], budget: float, every: int = SEGMENT
) -> tuple[list[float], int]:
    """Seconds spent on each stretch of `every` chunks (the last one's with finalize) and chunks fed (all of
    them, or fewer when `budget` ran out: the clock is read after every stretch)."""
    gc.collect()
    feed = parser.feed
    stretches: list[float] = []
    t0 = last = time.perf_counter()
    for start in range(0, len(chunks), every):
        for chunk in chunks[start : start + every]:
            feed(chunk)
        now = time.perf_counter()
        if start + every >= len(chunks):
            outcome(parser.finalize)
            now = time.perf_counter()
        stretches.append(now - last)
        last = now
        if now - t0 > budget and start + every < len(chunks):
            return stretches, start + every
    return stretches, len(chunks)


def _growth(
    cfg: Config, engines: Engines, w: Any, head: float, row: dict[str, Any]
) -> tuple[dict[int, float], dict[int, float]]:
    """Per-chunk cost at each big size over the 4 KB one (`head`, its best sample): `GROWTH_STREAMS` streams,
    each stretch of `SEGMENT` chunks at the best of its streams (see `GROWTH_STREAMS`); and, for a stopped
    stream, the share streamed. An output that does not parse at a size (a rewrite's inflated tool call that
    its content parser refuses, as transformers refuses it: llama4~lookahead-closes from 40 KB) is not timed
    there, nor above, and is said in the row's notes."""
    growth: dict[int, float] = {}
    stopped: dict[int, float] = {}
    for size in cfg.unseen_big:
        chunks = token_chunks(w.text(size), seed_of(w.model, size))
        budget = max(MIN_BUDGET, DEADLINE * head * 1e-6 * len(chunks))
        best: list[float] = []
        for _ in range(GROWTH_STREAMS):
            try:
                stretches, fed = _stream_with_deadline(engines.parser("compiled", w), chunks, budget)
            except Exception as error:  # noqa: BLE001 - the figure is then meaningless: said instead
                raised = type(error).__name__
                row["notes"].append(f"the {size_label(size)} stream raises {raised}: not timed from there")
                return growth, stopped
            if fed < len(chunks):  # (a stream stopped is not streamed again)
                growth[size], stopped[size] = sum(stretches) / fed * 1e6 / head, fed / len(chunks)
                return growth, stopped
            best = [min(pair) for pair in zip(best, stretches, strict=True)] if best else stretches
        growth[size] = sum(best) / len(chunks) * 1e6 / head
    return growth, stopped


def _oneshot(cfg: Config, engines: Engines, w: Any, row: dict[str, Any]) -> dict[int, dict[str, float]]:
    """ms per `parse_response` per size and engine. One call cannot be stopped, so an engine whose first call at
    a size takes over `ONE_SHOT_BUDGET` is not called again there nor run at a bigger size, and one that grew more
    than `DEADLINE` times per character since the first size is not run at a bigger size either."""
    results: dict[int, dict[str, float]] = {}
    running = ["compiled", "transformers"]
    first: dict[str, float] = {}  # the engine's fastest ms per character at the first size
    for size, reps in cfg.unseen_oneshot_reps.items():
        text = w.text(size)
        samples: dict[str, list[float]] = {e: [] for e in running}
        messages: dict[str, Any] = {}
        for rep in range(reps):
            for engine in running:
                if rep and samples[engine][0] > ONE_SHOT_BUDGET * 1e3:
                    continue
                call: Callable[[], Any] = functools.partial(engines.parse, engine, w, text)
                gc.collect()
                t0 = time.perf_counter()
                messages[engine] = outcome(call)
                samples[engine].append((time.perf_counter() - t0) * 1e3)
        results[size] = {e: statistics.median(v) for e, v in samples.items()}
        if len(messages) == 2 and messages["compiled"] != messages["transformers"]:
            row["notes"].append(f"one-shot messages differ at {size_label(size)}")
        for engine in list(running):
            fastest = min(samples[engine])  # load from other processes only adds time
            cost = first.setdefault(engine, fastest / len(text))
            if fastest > ONE_SHOT_BUDGET * 1e3 or fastest / len(text) > DEADLINE * cost:
                running.remove(engine)
                row["notes"].append(
                    f"{engine} one-shot took {fastest / 1e3:.1f} s at {size_label(size)}, "
                    f"{fastest / len(text) / cost:.0f}x per character of the first size: not run bigger"
                )
    return results
