#!/usr/bin/env python
"""Benchmark: rtcompile's compiled parser modules vs transformers 5.24.0 vs the rtcompile interpreter.

    python benchmarks/run.py            # full run (~15 min on 2 cores)
    python benchmarks/run.py --quick    # < 2 min, smaller sizes and fewer repetitions
    python benchmarks/run.py --out DIR  # where RESULTS.md and per_chunk_cost.png go (default: benchmarks/)

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
* adversarial streams fed one character at a time.

This is a measurement, never a test: nothing here asserts a timing.
"""

# ruff: noqa: E501 - report tables are built from long f-strings

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import io
import json
import os
import platform
import pstats
import py_compile
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
DATA = ROOT / "tests" / "data"

import rtcompile  # noqa: E402
from rtcompile.frontend.errors import TemplateWarning  # noqa: E402

warnings.simplefilter("ignore", TemplateWarning)

from transformers.utils.chat_parsing import ResponseParser as TfParser  # noqa: E402
from transformers.utils.chat_parsing import parse_response as tf_parse_response  # noqa: E402

ENGINES = ("compiled", "interpreter", "transformers")
KB = 1024
MB = 1024 * 1024


def log(*args: Any) -> None:
    print(*args, file=sys.stderr, flush=True)


# =============================================================================================== configuration


class Config:
    def __init__(self, quick: bool) -> None:
        self.quick = quick
        if quick:
            self.sizes = [1 * KB, 4 * KB, 40 * KB]
            self.reps = 2
            self.tf_reps: dict[int, int] = {}
            self.chunks_per_sample = {1 * KB: 6000, 4 * KB: 12000, 40 * KB: 12000}
            self.flat_big = 40 * KB
            self.memory_size = 256 * KB
            self.memory_size_small = 256 * KB
            self.oneshot_sizes = [4 * KB]
            self.oneshot_reps = 5
            self.adv_total = 100 * KB
            self.adv_tf_total = 10 * KB
            self.adv_segments = 10
            self.import_runs = 3
            self.import_models = ["qwen3", "gpt_oss", "gemma4"]
            self.profile_size = 16 * KB
        else:
            self.sizes = [1 * KB, 4 * KB, 40 * KB, 400 * KB]
            self.reps = 3
            self.tf_reps = {400 * KB: 2}  # transformers' 400 KB runs take ~3 s each (its cost grows with the buffer)
            self.chunks_per_sample = {1 * KB: 12000, 4 * KB: 24000, 40 * KB: 24000, 400 * KB: 1}
            self.flat_big = 400 * KB
            self.memory_size = 10 * MB
            self.memory_size_small = 1 * MB
            self.oneshot_sizes = [4 * KB, 400 * KB]
            self.oneshot_reps = 15
            self.adv_total = 1 * MB  # 10 segments of ~100 KB
            self.adv_tf_total = 100 * KB  # 10 segments of 10 KB
            self.adv_segments = 10
            self.import_runs = 4
            self.import_models = None  # all
            self.profile_size = 64 * KB
        self.flat_small = 4 * KB
        self.headline = 4 * KB  # per-chunk speed targets are judged at this output size


# =============================================================================================== workloads

REASONING_KEYS = ("reasoning_content", "thinking", "tool_plan")

# Reasoning/content filler: prose, markdown, a code block with `<`, `>`, braces and brackets, some non-ASCII.
# None of it is a delimiter of any bundled template (checked for each output: see `build_output`).
RICH_FILLER = (
    "Let me think about this step by step. The user wants a summary of the quarterly numbers, so first I "
    "compare revenue (up 12%) with costs (down 3%). If a < b and b < c then a < c, so the margin improved. "
    "Edge cases: empty input, a list with one item, values like 0, -1 or 1e9.\n\n"
    "- **Step 1:** read `report.csv` and validate each row (date, region, amount).\n"
    "- **Step 2:** group by region => {north, south, east, west} and sum the amounts.\n"
    "- **Step 3:** compare with last year; note the café chain in 東京 — it opened in March.\n\n"
    "```python\ndef clamp(x, lo=0, hi=10):\n    return max(lo, min(x, hi))  # keeps 0 <= x <= 10\n\n"
    "rows = [r for r in data if r['amount'] > 0]\n```\n\n"
    "So the answer is: revenue grew, costs fell, and the only caveat is the one-off charge in Q3.\n"
)
# Plain filler, used where the rich one would change how a template splits the output.
SAFE_FILLER = (
    "Let me think about this step by step. The user wants a summary of the quarterly numbers, so first I "
    "compare revenue with costs. Revenue is up 12 percent and costs are down 3 percent, so the margin improved.\n"
    "Next I check the edge cases: empty input, a list with one item, and very large values.\n\n"
)
# Tool-call argument filler: valid unescaped inside JSON strings, Python string literals and XML text.
ARG_FILLER = (
    "Rue de la Paix 12, Paris 75002, France. Opening hours 9 to 18, Monday to Saturday, closed on public "
    "holidays. Ask for the front desk on the second floor and bring a photo ID. "
)


def filler(base: str, length: int, offset: int) -> str:
    """`length` characters of `base`, cycled, from about `offset`; neither end blank (stripping keeps them whole)."""
    text = (base * (length // len(base) + 3))[offset % len(base) :].lstrip()[:length]
    return text[:-1] + "." if text[-1].isspace() else text


def _spans_of(case: dict[str, Any]) -> dict[str, Any] | None:
    """Where the case's reasoning, content and string tool-call arguments sit in its text."""
    text, expected = case["text"], case["expected"]
    if "error" in expected:
        return None
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in taken)

    def locate(value: str, after: int = 0) -> tuple[int, int] | None:
        at = text.find(value, after)
        while at >= 0:
            if free(at, at + len(value)):
                taken.append((at, at + len(value)))
                return at, at + len(value)
            at = text.find(value, at + 1)
        return None

    spans: dict[str, Any] = {"reasoning": None, "content": None, "args": [], "calls": 0}
    for key in REASONING_KEYS:
        value = expected.get(key)
        if isinstance(value, str) and len(value) >= 3:
            spans["reasoning"] = locate(value)
    content = expected.get("content")
    if isinstance(content, str) and len(content) >= 3:
        spans["content"] = locate(content)
    cursor = 0
    calls = expected.get("tool_calls") or []
    spans["calls"] = len(calls) if isinstance(calls, list) else 0
    for index, call in enumerate(calls if isinstance(calls, list) else []):
        arguments = call.get("function", {}).get("arguments") if isinstance(call, dict) else None
        if not isinstance(arguments, dict):
            continue
        for value in arguments.values():
            if not isinstance(value, str) or len(value) < 2 or value.replace(".", "").isdigit():
                continue
            if json.dumps(value, ensure_ascii=False)[1:-1] != value or value in ("true", "false", "null"):
                continue
            span = locate(value, cursor)
            if span is not None:
                spans["args"].append((*span, index))
                cursor = span[1]
    return spans


def _case_score(case: dict[str, Any], spans: dict[str, Any]) -> tuple[int, ...]:
    kinds = (spans["reasoning"] is not None) + (spans["content"] is not None) + bool(spans["args"])
    return (kinds, min(spans["calls"], 2), len(spans["args"]), len(case["text"]))


def calls_for(size: int) -> int:
    """Parallel tool calls in an output of `size` characters (where the format has calls): 2 up to 8."""
    return min(8, 2 + size // (5 * KB))


class Workload:
    """One template's realistic output, ready to be inflated to any size.

    The base is the recorded case with the most kinds of region (reasoning, content, tool calls; then the
    most calls). Its reasoning, content and string arguments are replaced by filler, and more parallel calls
    are spliced in after the first argument of its first call, using the template's own "period" between
    two consecutive calls: the text from the end of call 1's first string argument to the start of call 2's
    in the template's recorded parallel-calls case.
    """

    def __init__(self, model: str) -> None:
        self.model = model
        self.template = json.loads((TEMPLATES / f"{model}.json").read_text(encoding="utf-8"))["response_template"]
        cases = json.loads((DATA / model / "cases.json").read_text(encoding="utf-8"))
        scored = [(c, s) for c in cases if (s := _spans_of(c)) is not None]
        self.case, self.spans = max(scored, key=lambda cs: _case_score(*cs))
        self.prefix: str = self.case["prefix"]
        self.tools = self.case.get("tools")
        self.filler = RICH_FILLER  # switched to SAFE_FILLER by `check_workloads` if the rich one misparses
        self.notes: list[str] = []
        self.period: str | None = None
        self.period_case = ""
        for case, spans in scored:
            firsts = {}
            for start, end, call in spans["args"]:
                firsts.setdefault(call, (start, end))
            if 0 in firsts and 1 in firsts and self.spans["args"] and self.spans["args"][0][2] == 0:
                self.period = case["text"][firsts[0][1] : firsts[1][0]]
                self.period_case = case["name"]
                break

    def calls(self, size: int) -> int:
        if not self.spans["calls"]:
            return 0
        if self.period is None:
            return self.spans["calls"]
        return max(self.spans["calls"], calls_for(size))

    @property
    def shape(self) -> str:
        parts = []
        if self.spans["reasoning"]:
            parts.append("reasoning")
        if self.spans["content"]:
            parts.append("content")
        if self.spans["calls"]:
            low, high = self.calls(1 * KB), self.calls(400 * KB)
            parts.append(f"{low}-{high} calls" if low != high else f"{low} call{'s' if low > 1 else ''}")
        return " + ".join(parts)

    def text(self, size: int) -> str:
        """The base text with reasoning, content and string arguments inflated to about `size` characters."""
        text = self.case["text"]
        extra = self.calls(size) - self.spans["calls"]
        pieces: list[tuple[int, int, str]] = []  # (start, end, kind)
        if self.spans["reasoning"]:
            pieces.append((*self.spans["reasoning"], "reasoning"))
        if self.spans["content"]:
            pieces.append((*self.spans["content"], "content"))
        pieces += [(a, b, "arg") for a, b, _ in self.spans["args"]]
        n_args = len(self.spans["args"]) + extra
        weights = {"reasoning": 0.35, "content": 0.35, "arg": 0.30 / max(1, n_args)}
        total_weight = sum(weights[kind] for _, _, kind in pieces) + extra * weights["arg"]
        fixed = len(text) - sum(b - a for a, b, _ in pieces) + extra * len(self.period or "")
        budget = max((len(pieces) + extra) * 8, size - fixed)
        arg_length = max(8, int(budget * weights["arg"] / total_weight))
        out, cursor, first_arg = [], 0, True
        for index, (start, end, kind) in enumerate(sorted(pieces)):
            length = arg_length if kind == "arg" else max(8, int(budget * weights[kind] / total_weight))
            base = ARG_FILLER if kind == "arg" else self.filler
            out += [text[cursor:start], filler(base, length, 97 * index)]
            if kind == "arg" and first_arg:
                first_arg = False
                for k in range(extra):
                    out += [self.period or "", filler(ARG_FILLER, arg_length, 31 * k)]
            cursor = end
        out.append(text[cursor:])
        return "".join(out)


def token_chunks(text: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    chunks, i = [], 0
    while i < len(text):
        n = rng.randint(1, 6)
        chunks.append(text[i : i + n])
        i += n
    return chunks


def seed_of(*parts: Any) -> int:
    return zlib.crc32(":".join(map(str, parts)).encode())


# =============================================================================================== engines


def compile_modules(models: list[str], directory: Path) -> dict[str, ModuleType]:
    modules = {}
    for model in models:
        code = rtcompile.compile_template(TEMPLATES / f"{model}.json")
        path = directory / f"rtc_{model}.py"
        path.write_text(code, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(f"rtc_{model}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        modules[model] = module
    return modules


class Engines:
    def __init__(self, models: list[str], directory: Path) -> None:
        self.modules = compile_modules(models, directory)
        self.loaded = {m: rtcompile.load_template(TEMPLATES / f"{m}.json") for m in models}

    def parser(self, engine: str, w: Workload) -> Any:
        if engine == "compiled":
            return self.modules[w.model].ResponseParser(w.prefix, tools=w.tools)
        if engine == "interpreter":
            return rtcompile.ResponseParser(self.loaded[w.model], w.prefix, tools=w.tools)
        if engine == "transformers":
            return TfParser(w.template, prefix=w.prefix, tools=w.tools)
        raise ValueError(engine)

    def parse(self, engine: str, w: Workload, text: str) -> Any:
        if engine == "compiled":
            return self.modules[w.model].parse_response(text, prefix=w.prefix, tools=w.tools)
        if engine == "interpreter":
            return rtcompile.parse_response(text, self.loaded[w.model], prefix=w.prefix, tools=w.tools)
        if engine == "transformers":
            return tf_parse_response(text, w.template, prefix=w.prefix, tools=w.tools)
        raise ValueError(engine)


def outcome(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception as error:  # noqa: BLE001 - an engine's error is an outcome to compare
        return {"error": type(error).__name__}


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


# =============================================================================================== checks


def check_workloads(engines: Engines, workloads: list[Workload], sizes: list[int]) -> None:
    """Each inflated output must parse without error, the same in all engines, with its inflated text and calls kept.

    If the rich filler misparses, plain prose is used; if splicing in extra calls misparses, the case's own calls.
    """

    def valid(w: Workload, size: int) -> str | None:
        text = w.text(size)
        results = {e: outcome(lambda e=e: engines.parse(e, w, text)) for e in ENGINES}
        reference = results["transformers"]
        if "error" in reference:
            return f"transformers: {reference}"
        if any(r != reference for r in results.values()):
            return "engines disagree"
        if len(json.dumps(reference, ensure_ascii=False)) < 0.8 * len(text):
            return "inflated text lost"
        calls = reference.get("tool_calls") or []
        if len(calls) != w.calls(size):
            return f"{len(calls)} calls instead of {w.calls(size)}"
        return None

    for w in workloads:
        for attempt in ("rich", "safe", "no-splice"):
            if attempt == "safe":
                w.filler = SAFE_FILLER
            if attempt == "no-splice":
                w.filler, w.period = RICH_FILLER, None
            problems = [p for size in sizes if (p := valid(w, size)) is not None]
            if not problems:
                break
            failure = problems[0]
        else:
            w.notes.append(f"NO VALID OUTPUT ({failure})")
            continue
        if attempt == "safe":
            w.notes.append(f"plain-prose filler (the rich one gave: {failure})")
        if attempt == "no-splice":
            w.notes.append(f"only the case's own calls (splicing in more gave: {failure})")


# =============================================================================================== streaming


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
    """us/chunk per (size, model, engine).

    Interleaved at two levels, so that load from other processes hits everything alike: within a repetition
    every engine (and the floor) runs once per size, one after the other, and all sizes of one template are
    measured in the same repetitions. Each timed sample streams about the same number of chunks whatever the
    output size (a 4 KB output is streamed through `batch` fresh parsers back to back, a 400 KB one through
    one), so short and long outputs are timed over similar spans and see the same share of a busy machine.
    """
    results: dict[int, dict[str, dict[str, float]]] = {size: {} for size in cfg.sizes}
    mismatches: list[str] = []
    for w in workloads:
        t_model = time.perf_counter()
        chunks = {size: token_chunks(w.text(size), seed_of(w.model, size)) for size in cfg.sizes}
        batch = {size: max(1, cfg.chunks_per_sample[size] // len(chunks[size])) for size in cfg.sizes}
        samples: dict[int, dict[str, list[float]]] = {size: {e: [] for e in [*ENGINES, "floor"]} for size in cfg.sizes}
        messages: dict[int, dict[str, Any]] = {size: {} for size in cfg.sizes}
        for rep in range(cfg.reps):
            for size in cfg.sizes:
                n = batch[size] * len(chunks[size])
                for e in ENGINES:
                    if e == "transformers" and rep >= cfg.tf_reps.get(size, cfg.reps):
                        continue
                    parsers = [engines.parser(e, w) for _ in range(batch[size])]
                    seconds, messages[size][e] = time_batch(parsers, chunks[size])
                    samples[size][e].append(seconds / n * 1e6)
                    del parsers
                samples[size]["floor"].append(
                    statistics.fsum(time_floor(chunks[size]) for _ in range(batch[size])) / n * 1e6
                )
        for size in cfg.sizes:
            got = messages[size]
            if any(m != got["transformers"] for m in got.values()):
                mismatches.append(f"{w.model} @ {size_label(size)}: streamed messages differ between engines")
            results[size][w.model] = {e: statistics.median(v) for e, v in samples[size].items()}
            results[size][w.model].update({f"{e}_min": min(v) for e, v in samples[size].items()})
            results[size][w.model]["chunks"] = len(chunks[size])
            results[size][w.model]["batch"] = batch[size]
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
        plans = [
            (
                "token (1-6 chars)",
                (1, 6),
                cfg.memory_size if model == "qwen3" else cfg.memory_size_small,
                ("compiled", "interpreter"),
            ),
            ("4 KB chunks", (4 * KB, 4 * KB), cfg.memory_size, ENGINES),
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


def bench_oneshot(cfg: Config, engines: Engines, workloads: list[Workload]) -> dict[int, dict[str, dict[str, float]]]:
    results: dict[int, dict[str, dict[str, float]]] = {}
    for size in cfg.oneshot_sizes:
        results[size] = {}
        for w in workloads:
            text = w.text(size)
            samples: dict[str, list[float]] = {e: [] for e in ENGINES}
            for _ in range(cfg.oneshot_reps):
                for e in ENGINES:
                    gc.collect()
                    t0 = time.perf_counter()
                    outcome(lambda e=e, w=w, text=text: engines.parse(e, w, text))
                    samples[e].append((time.perf_counter() - t0) * 1e3)
            results[size][w.model] = {e: statistics.median(v) for e, v in samples.items()}
        log(f"  one-shot {size // KB} KB done")
    return results


# =============================================================================================== import time

IMPORT_SNIPPET = """
import sys, time
sys.path.insert(0, {directory!r})
t0 = time.perf_counter()
import {module}
print(time.perf_counter() - t0)
"""

# How much of a module's own import is spent in `re.compile` (its stdlib dependencies are imported before `re` is
# patched, so only the module body's calls count; no wall time is taken from this run).
REGEX_SNIPPET = """
import re, sys, time
{deps}  # its top-level imports first: count the module's own re.compile calls only
sys.path.insert(0, {directory!r})
spent = [0.0, 0]
original = re.compile
def timed(*args, **kwargs):
    t0 = time.perf_counter()
    try:
        return original(*args, **kwargs)
    finally:
        spent[0] += time.perf_counter() - t0
        spent[1] += 1
re.compile = timed
import {module}
print(spent[0], spent[1])
"""


def module_imports(path: Path) -> tuple[str, ...]:
    """The modules a generated module imports at its top level (its `import X` / `from X import` lines)."""
    import re

    names: list[str] = []
    for m in re.finditer(r"^(?:import ([\w.]+)|from ([\w.]+) import)", path.read_text(encoding="utf-8"), re.M):
        name = m.group(1) or m.group(2)
        if name != "__future__" and name not in names:
            names.append(name)
    return tuple(names)


def _import_line(path: Path) -> str:
    deps = module_imports(path)
    return f"import {', '.join(deps)}" if deps else "pass"


def _run(snippet: str, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *flags, "-c", snippet], capture_output=True, text=True, env=env, check=True)


def _import_wall(module: str, directory: Path, env: dict[str, str]) -> float:
    """Seconds of the `import` statement in a fresh interpreter (no -X importtime: it adds its own overhead)."""
    proc = _run(IMPORT_SNIPPET.format(directory=str(directory), module=module), env, "-B")
    return float(proc.stdout.strip().splitlines()[-1])


def _import_self(module: str, directory: Path, env: dict[str, str]) -> float:
    """`-X importtime` self time of `module` (its own body, without the modules it imports), in seconds."""
    proc = _run(IMPORT_SNIPPET.format(directory=str(directory), module=module), env, "-B", "-X", "importtime")
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() == module:
            return int(parts[0].split(":")[1]) / 1e6
    return float("nan")


def bench_imports(cfg: Config, models: list[str], directory: Path) -> dict[str, Any]:
    """Fresh subprocesses; generated modules with their bytecode cached (`.pyc`, the deployed case) and without."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    warm = directory / "warm"
    cold = directory / "cold"
    warm.mkdir()
    cold.mkdir()
    chosen = cfg.import_models or models
    for model in chosen:
        for d in (warm, cold):
            shutil.copy(directory / f"rtc_{model}.py", d / f"rtc_{model}.py")
        py_compile.compile(str(warm / f"rtc_{model}.py"), doraise=True)
    out: dict[str, Any] = {"modules": {}}
    for model in chosen:
        name = f"rtc_{model}"
        row: dict[str, list[float]] = {"warm_wall": [], "warm_self": [], "cold_wall": [], "cold_self": []}
        for _ in range(cfg.import_runs):  # interleaved: warm, cold, warm, cold ...
            row["warm_wall"].append(_import_wall(name, warm, env))
            row["cold_wall"].append(_import_wall(name, cold, env))
            row["warm_self"].append(_import_self(name, warm, env))
            row["cold_self"].append(_import_self(name, cold, env))
        regex = [
            _run(
                REGEX_SNIPPET.format(directory=str(warm), module=name, deps=_import_line(warm / f"{name}.py")),
                env,
                "-B",
            ).stdout.split()
            for _ in range(3)
        ]
        result = {k: statistics.median(v) for k, v in row.items()}
        result["regex"] = statistics.median(float(r[0]) for r in regex)
        result["regex_count"] = int(regex[0][1])
        out["modules"][model] = result
    runs = max(3, cfg.import_runs // 2)
    for label, module in (("transformers", "transformers.utils.chat_parsing"), ("interpreter", "rtcompile")):
        out[label] = statistics.median(_import_wall(module, ROOT, env) for _ in range(runs))
    stdlib_deps = module_imports(directory / f"rtc_{chosen[0]}.py")
    out["stdlib_deps"] = ", ".join(stdlib_deps)
    deps: dict[str, float] = {}
    for dep in (", ".join(stdlib_deps), *stdlib_deps):
        snippet = f"import time; t0 = time.perf_counter(); import {dep}; print(time.perf_counter() - t0)"
        deps[dep] = statistics.median(float(_run(snippet, env, "-B").stdout) for _ in range(cfg.import_runs))
    out["stdlib"] = deps
    return out


# =============================================================================================== adversarial

ADVERSARIAL = [
    ("'<' repeated", "qwen3", "<"),
    ("'<tool_cal' repeated", "qwen3", "<tool_cal"),
    ("'<|channel|>commentary to=' repeated", "gpt_oss", "<|channel|>commentary to="),
    ("'<' repeated", "gpt_oss", "<"),
]


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
        total = {e: cfg.adv_tf_total if e == "transformers" else cfg.adv_total for e in ENGINES}
        parsers = {e: engines.parser(e, w) for e in ENGINES}
        texts = {e: (unit * (total[e] // len(unit) + 1))[: total[e]] for e in ENGINES}
        step = {e: total[e] // cfg.adv_segments for e in ENGINES}
        per_char: dict[str, list[float]] = {e: [] for e in ENGINES}
        for i in range(cfg.adv_segments):
            for e in ENGINES:
                piece = texts[e][i * step[e] : (i + 1) * step[e]]
                feed = parsers[e].feed
                gc.collect()
                t0 = time.perf_counter()
                for ch in piece:
                    feed(ch)
                per_char[e].append((time.perf_counter() - t0) / len(piece) * 1e6)
        for e in ENGINES:
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
                f"whole {size_label(step[e] * cfg.adv_segments)} {statistics.fmean(segments):.2f}, last {segments[-1]:.2f}"
            )
    return rows


# =============================================================================================== profile


def _profile_label(filename: str, line: int, func: str) -> str:
    """One row per function across the 25 generated modules: `rtc_qwen3.py:556(literal_hold)` -> `<generated>.literal_hold`."""
    import re

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
            rows = [
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
    import timeit

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


# =============================================================================================== report


def sources_digest() -> str:
    """sha256 over rtcompile/**/*.py (the package is being edited while benchmarks run: this says which state ran)."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted((ROOT / "rtcompile").rglob("*")):
        if path.is_file() and path.suffix in (".py", ".jinja"):
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def fmt(x: float, digits: int = 2) -> str:
    if x != x:  # NaN
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.{digits}f}"


def size_label(size: float) -> str:
    """1 KB, 4 KB, 102 KB, 400 KB, 1 MB, 10 MB (sizes within 0.5% of a whole MB count as that MB)."""
    if size >= 0.995 * MB:
        return f"{size / MB:.0f} MB" if abs(size / MB - round(size / MB)) < 0.005 * size / MB else f"{size / MB:.2f} MB"
    return f"{size / KB:.0f} KB" if size >= 10 * KB else f"{size / KB:.3g} KB"


def cell(text: str) -> str:
    """Text for a Markdown table cell (a `|` inside, as in `<|channel|>`, would split the cell)."""
    return text.replace("|", "\\|")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def build_report(
    cfg: Config,
    env: dict[str, Any],
    workloads: list[Workload],
    s: dict[str, Any],
    mem: list[dict[str, Any]],
    one: dict[int, Any],
    imp: dict[str, Any],
    adv: list[dict[str, Any]],
    prof: dict[str, Any],
) -> tuple[str, list[tuple[str, bool | None, str]]]:
    per_chunk = s["per_chunk"]
    L: list[str] = []
    targets: list[tuple[str, bool | None, str]] = []
    models = [w.model for w in workloads]

    L.append("# rtcompile benchmark results\n")
    L.append(
        f"- Python {env['python']} ({env['implementation']}), transformers {env['transformers']}, rtcompile "
        f"{env['rtcompile']} (sources sha256 {env['rtcompile_sources']}…, over rtcompile/**/*.py and *.jinja)"
    )
    L.append(f"- CPU: {env['cpu']} ({env['cores']} cores visible), {env['platform']}")
    L.append(
        f"- Mode: {'quick' if cfg.quick else 'full'}; run took {env['elapsed']:.0f} s; started {env['started']}; "
        f"load average {env['load_start'][0]:.2f} at the start, {env['load_end'][0]:.2f} at the end "
        "(other work on the machine shifts all engines alike: they are interleaved run by run)"
    )
    L.append(
        "- Command: `python benchmarks/run.py"
        + (" --quick" if cfg.quick else "")
        + "`; stages: "
        + ", ".join(f"{k} {v:.0f} s" for k, v in env["stages"].items())
    )
    L.append("")

    # ------------------------------------------------------------------ targets (filled below, printed first)
    head = per_chunk[cfg.headline]
    r_tf = [head[m]["transformers"] / head[m]["compiled"] for m in models if "transformers" in head[m]]
    r_in = [head[m]["interpreter"] / head[m]["compiled"] for m in models]
    r_tf_min = [head[m]["transformers_min"] / head[m]["compiled_min"] for m in models]
    r_in_min = [head[m]["interpreter_min"] / head[m]["compiled_min"] for m in models]
    targets.append(
        (
            f"Streaming: compiled >= 8x faster per chunk than transformers (median over {len(r_tf)} templates, {size_label(cfg.headline)})",
            median(r_tf) >= 8,
            f"median {fmt(median(r_tf))}x (min {fmt(min(r_tf))}x, max {fmt(max(r_tf))}x); "
            f"from each engine's fastest repetition instead of its median: {fmt(median(r_tf_min))}x",
        )
    )
    targets.append(
        (
            f"Streaming: compiled >= 2x faster per chunk than the interpreter (median, {size_label(cfg.headline)})",
            median(r_in) >= 2,
            f"median {fmt(median(r_in))}x (min {fmt(min(r_in))}x, max {fmt(max(r_in))}x); "
            f"from the fastest repetitions: {fmt(median(r_in_min))}x",
        )
    )
    big, small = cfg.flat_big, cfg.flat_small
    growth: dict[str, list[float]] = {}
    for e in ("compiled", "interpreter", "transformers", "floor"):
        growth[e] = [per_chunk[big][m][e] / per_chunk[small][m][e] for m in models if e in per_chunk[big][m]]
    for e in ("compiled", "interpreter"):
        worst = max(growth[e])
        worst_model = models[growth[e].index(worst)]
        over = [m for m, g in zip(models, growth[e], strict=True) if g > 1.3]
        targets.append(
            (
                f"Flat: {e} per-chunk cost at {size_label(big)} within 1.3x of {size_label(small)} (median over templates)",
                median(growth[e]) <= 1.3,
                f"median {fmt(median(growth[e]))}x; worst {fmt(worst)}x ({worst_model}); "
                f"{len(over)} of {len(models)} templates above 1.3x" + (f" ({', '.join(over)})" if over else ""),
            )
        )
    for e in ("compiled", "interpreter"):
        rows = [r for r in mem if r["engine"] == e and r["chunking"].startswith("token")]
        worst = max(rows, key=lambda r: (r["fed"], r["retained"] / r["body"]))  # the longest run
        ratio = worst["retained"] / worst["body"]
        targets.append(
            (
                f"Memory: {e} retains at most the open region's body (+ the longest pending delimiter) after "
                f"{size_label(worst['fed'])} of content in token chunks ({worst['model']})",
                worst["retained"] <= 1.05 * worst["body"] + KB,
                f"retained {fmt(worst['retained'] / MB)} MB for a {fmt(worst['body'] / MB)} MB body "
                f"({fmt(ratio)}x; {fmt(worst['retained'] / worst['chunks'])} bytes per chunk fed)",
            )
        )
    for size in cfg.oneshot_sizes:
        r1 = [one[size][m]["transformers"] / one[size][m]["compiled"] for m in models]
        targets.append(
            (
                f"One-shot parse_response: compiled >= 2x faster than transformers ({size_label(size)}, median)",
                median(r1) >= 2,
                f"median {fmt(median(r1))}x (min {fmt(min(r1))}x, {models[r1.index(min(r1))]})",
            )
        )
    walls = {m: v["warm_wall"] * 1e3 for m, v in imp["modules"].items()}
    worst_m = max(walls, key=walls.__getitem__)
    targets.append(
        (
            "Import of a generated module < 10 ms (fresh interpreter, bytecode cached, including the stdlib "
            "modules it imports)",
            walls[worst_m] < 10,
            f"median over modules {fmt(median(list(walls.values())))} ms, worst {fmt(walls[worst_m])} ms ({worst_m}); "
            f"its stdlib imports alone take {fmt(imp['stdlib'][imp['stdlib_deps']] * 1e3)} ms",
        )
    )
    for label, model, _ in ADVERSARIAL:
        for e in ("compiled", "interpreter"):
            row = next(r for r in adv if r["stream"] == label and r["model"] == model and r["engine"] == e)
            g = row["whole"] / row["first"]
            targets.append(
                (
                    f"Adversarial {label} on {model}, one char per feed: {e} linear (fastest segment of the second "
                    f"half of the {size_label(row['total'])} stream within 1.3x of the fastest of the first half)",
                    row["late_vs_early"] <= 1.3,
                    f"{fmt(row['late_vs_early'])}x; first {size_label(row['segment'])} {fmt(row['first'])} us/char, "
                    f"whole {size_label(row['total'])} {fmt(row['whole'])} us/char ({fmt(g)}x)",
                )
            )

    L.append("## Targets\n")
    L.append("| target | met? | measured |")
    L.append("| --- | --- | --- |")
    for name, met, measured in targets:
        L.append(f"| {cell(name)} | {'met' if met else 'NOT MET'} | {cell(measured)} |")
    L.append("")

    # ------------------------------------------------------------------ streaming table
    L.append("## Streaming, token-like chunks (1-6 characters)\n")
    L.append(
        "us per chunk: all `feed` calls + `finalize`, divided by the number of chunks (parser construction not "
        f"timed). Median of {cfg.reps} interleaved repetitions"
        + "".join(f" ({r} for transformers at {size_label(sz)})" for sz, r in cfg.tf_reps.items())
        + "; each repetition times every engine on every size of a template, one after the other. A timed sample "
        "streams the output through `batch` fresh parsers back to back (so that every sample covers about "
        f"{size_label(cfg.chunks_per_sample[cfg.sizes[1]] * 3.5)} of text whatever the output size). "
        "`floor` = append each chunk to a list + build one event dict per chunk. Ratios are "
        "transformers/compiled and interpreter/compiled. Everything alive before the measurements (modules, "
        "templates, transformers) is moved out of the collector's sight with `gc.freeze()`; the collector stays "
        "enabled during the runs.\n"
    )
    for size in cfg.sizes:
        rows = per_chunk[size]
        L.append(f"### {size_label(size)} of output\n")
        L.append(
            "| template | output shape | chunks x batch | compiled | interpreter | transformers | floor | tf / compiled | interp / compiled |"
        )
        L.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for w in workloads:
            r = rows[w.model]
            tf = r.get("transformers", float("nan"))
            L.append(
                f"| {w.model} | {w.shape}{' (' + '; '.join(w.notes) + ')' if w.notes else ''} | {r['chunks']} x {r['batch']} | {fmt(r['compiled'])} | "
                f"{fmt(r['interpreter'])} | {fmt(tf)} | {fmt(r['floor'], 3)} | {fmt(tf / r['compiled'])}x | "
                f"{fmt(r['interpreter'] / r['compiled'])}x |"
            )
        med = {e: median([rows[m][e] for m in models if e in rows[m]]) for e in (*ENGINES, "floor")}
        rt = median([rows[m]["transformers"] / rows[m]["compiled"] for m in models if "transformers" in rows[m]])
        ri = median([rows[m]["interpreter"] / rows[m]["compiled"] for m in models])
        L.append(
            f"| **median** | | | **{fmt(med['compiled'])}** | **{fmt(med['interpreter'])}** | **{fmt(med['transformers'])}** | "
            f"**{fmt(med['floor'], 3)}** | **{fmt(rt)}x** | **{fmt(ri)}x** |"
        )
        L.append("")
    if s["mismatches"]:
        L.append("Streamed-message mismatches between engines: " + "; ".join(s["mismatches"]) + "\n")
    else:
        L.append("Every streamed message was identical in the three engines (checked once per template and size).\n")

    L.append(f"### Growth of the per-chunk cost, {size_label(small)} -> {size_label(big)}\n")
    L.append("| template | compiled | interpreter | transformers | floor |")
    L.append("| --- | ---: | ---: | ---: | ---: |")
    for m in models:
        cells = []
        for e in ("compiled", "interpreter", "transformers", "floor"):
            if e in per_chunk[big][m]:
                cells.append(f"{fmt(per_chunk[big][m][e] / per_chunk[small][m][e])}x")
            else:
                cells.append("-")
        L.append(f"| {m} | " + " | ".join(cells) + " |")
    L.append(
        "| **median** | "
        + " | ".join(f"**{fmt(median(growth[e]))}x**" for e in ("compiled", "interpreter", "transformers", "floor"))
        + " |"
    )
    L.append("")
    L.append("![per-chunk cost](per_chunk_cost.png)\n")

    # ------------------------------------------------------------------ memory
    L.append("## Retained memory while streaming content into an open region\n")
    L.append(
        "tracemalloc: bytes still allocated after feeding (before `finalize`), minus what was allocated before "
        "the parser was built; events are dropped as they are returned. `body as one str` = `sys.getsizeof` of "
        "the fed text joined (the filler has a few non-ASCII characters, so it is a 2-byte-per-character string). "
        "tracemalloc slows token-sized feeds about 8x, so the 10 MB token-chunk run is done on qwen3 only; "
        "transformers is only fed 4 KB chunks (its per-chunk cost grows with its untrimmed buffer).\n"
    )
    L.append(
        "| template | region | chunking | engine | chars fed | chunks | body as one str | retained | retained / body | bytes / chunk | peak | buffer kept (chars) | feed time |"
    )
    L.append("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in mem:
        L.append(
            f"| {r['model']} | {r['region']} | {r['chunking']} | {r['engine']} | {fmt(r['fed'] / MB)} M | {r['chunks']} | "
            f"{fmt(r['body'] / MB)} MB | {fmt(r['retained'] / MB)} MB | {fmt(r['retained'] / r['body'])}x | "
            f"{fmt(r['retained'] / r['chunks'])} | {fmt(r['peak'] / MB)} MB | {r['buffer_chars']} | {fmt(r['seconds'])} s |"
        )
    L.append("")

    # ------------------------------------------------------------------ one-shot
    L.append("## One-shot `parse_response`\n")
    L.append(
        f"ms per call (median of {cfg.oneshot_reps}), same outputs as the streaming runs. The interpreter is "
        "given the already-loaded `Template`; transformers is given the template dict, as its API takes it.\n"
    )
    for size in cfg.oneshot_sizes:
        L.append(f"### {size_label(size)}\n")
        L.append("| template | compiled | interpreter | transformers | tf / compiled | interp / compiled |")
        L.append("| --- | ---: | ---: | ---: | ---: | ---: |")
        for m in models:
            r = one[size][m]
            L.append(
                f"| {m} | {fmt(r['compiled'], 3)} | {fmt(r['interpreter'], 3)} | {fmt(r['transformers'], 3)} | "
                f"{fmt(r['transformers'] / r['compiled'])}x | {fmt(r['interpreter'] / r['compiled'])}x |"
            )
        rt = median([one[size][m]["transformers"] / one[size][m]["compiled"] for m in models])
        ri = median([one[size][m]["interpreter"] / one[size][m]["compiled"] for m in models])
        L.append(f"| **median** | | | | **{fmt(rt)}x** | **{fmt(ri)}x** |")
        L.append("")

    # ------------------------------------------------------------------ imports
    L.append("## Import time (fresh interpreter per measurement)\n")
    L.append(
        f"Median of {cfg.import_runs} subprocesses each. `wall` = `time.perf_counter()` around the `import` "
        "statement, run without `-X importtime` (includes the standard-library modules the generated module "
        "imports that Python had not loaded at startup); `self` = `-X importtime` self time of the module's own "
        "body; `re.compile` = time spent in `re.compile` calls during the import (separate run, `re` patched). "
        "`warm` = bytecode cached in `__pycache__` (the deployed case); `cold` = source only, compiled on import.\n"
    )
    L.append("| module | warm wall | warm self | of which re.compile | cold wall | cold self |")
    L.append("| --- | ---: | ---: | ---: | ---: | ---: |")
    for m, v in imp["modules"].items():
        L.append(
            f"| rtc_{m} | {fmt(v['warm_wall'] * 1e3)} ms | {fmt(v['warm_self'] * 1e3)} ms | "
            f"{fmt(v['regex'] * 1e3)} ms ({v['regex_count']} patterns) | {fmt(v['cold_wall'] * 1e3)} ms | "
            f"{fmt(v['cold_self'] * 1e3)} ms |"
        )
    L.append(f"| `rtcompile` (interpreter) | {fmt(imp['interpreter'] * 1e3)} ms | | | | |")
    L.append(f"| `transformers.utils.chat_parsing` | {fmt(imp['transformers'] * 1e3)} ms | | | | |")
    L.append("")
    L.append(
        "The modules a generated module imports at its top level (read from its import lines), together and each "
        "alone in a fresh interpreter (they overlap, so the parts do not add up to the first row; 0 = already "
        "loaded at interpreter startup):\n"
    )
    L.append("| import | wall |")
    L.append("| --- | ---: |")
    for dep, seconds in imp["stdlib"].items():
        L.append(f"| `import {dep}` | {fmt(seconds * 1e3)} ms |")
    L.append("")

    # ------------------------------------------------------------------ adversarial
    L.append("## Adversarial streams, one character per `feed`\n")
    L.append(
        "us per character, segment by segment (the engines take turns segment by segment, so they share the same "
        "time windows). `first` = the first segment, i.e. the cost of the short stream; `whole` = the whole stream. "
        "transformers streams a tenth of the size: its buffer is never trimmed and `self._buffer += text` copies it "
        "on every feed, so its cost per character grows with the position in the stream.\n"
    )
    L.append(
        "| stream | template | engine | chars | first | whole | whole / first | fastest late / fastest early | per-segment us/char |"
    )
    L.append("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in adv:
        L.append(
            f"| {cell(r['stream'])} | {r['model']} | {r['engine']} | {size_label(r['total'])} in 10 x {size_label(r['segment'])} | "
            f"{fmt(r['first'])} | {fmt(r['whole'])} | {fmt(r['whole'] / r['first'])}x | {fmt(r['late_vs_early'])}x | "
            + " ".join(fmt(x, 1) for x in r["segments"])
            + " |"
        )
    L.append("")

    # ------------------------------------------------------------------ profile
    L.append("## Where the time goes\n")
    L.append(
        f"cProfile (deterministic; it inflates the cost of small Python calls, so read shares, not absolute "
        f"times) over one streaming run per template at {size_label(cfg.profile_size)}, token chunks. "
        "`tottime` = time in the function itself; `calls/chunk` = calls per `feed` chunk.\n"
    )
    components = prof.pop("components")
    oneshot_profile = prof.pop("oneshot")
    L.append("### Component costs on qwen3 (timeit, no profiler)\n")
    L.append(
        "Each piece of one `feed` of a 3-character chunk inside the content region, timed alone (best of 5 x "
        "20000 calls; us per call). The buffer is set to what the engines hold between feeds (one committed "
        "character plus the new chunk).\n"
    )
    L.append("| engine | piece | us/call |")
    L.append("| --- | --- | ---: |")
    for engine, piece, us in components:
        L.append(f"| {engine} | {piece} | {fmt(us, 3)} |")
    L.append("")
    for key, p in prof.items():
        L.append(f"### {key} ({p['chunks']} chunks, {fmt(p['total'])} s profiled)\n")
        L.append("| function | calls/chunk | tottime % | cumtime % |")
        L.append("| --- | ---: | ---: | ---: |")
        for r in p["rows"][:12]:
            L.append(
                f"| `{r['function']}` | {fmt(r['per_chunk_calls'])} | {fmt(100 * r['tottime'] / p['total'], 1)} | "
                f"{fmt(100 * r['cumtime'] / p['total'], 1)} |"
            )
        L.append("")

    op = oneshot_profile
    L.append(
        f"### One-shot `parse_response` on {op['model']} at {size_label(op['size'])} (the template where compiled "
        "is slowest relative to transformers), cProfile\n"
    )
    L.append("| engine | function | calls | tottime % |")
    L.append("| --- | --- | ---: | ---: |")
    for engine, p in op["engines"].items():
        for r in p["rows"]:
            L.append(
                f"| {engine} ({fmt(p['total'] * 1e3)} ms) | `{r['function']}` | {r['calls']} | {fmt(100 * r['tottime'] / p['total'], 1)} |"
            )
    L.append("")

    L.append("## Workloads\n")
    L.append(
        "Each template's output is the recorded case (tests/data/<model>/cases.json) with the most kinds of "
        "region (reasoning, content, tool calls; then the most calls), its reasoning, content and string "
        "tool-call arguments replaced by filler text sized 35% / 35% / 30% of the target (renormalised over what "
        "the case has). Filler: prose + markdown + a Python code block with `<`, `>`, braces, brackets and some "
        "non-ASCII; plain prose where noted. Before timing, every output is parsed one-shot by the three engines, "
        "which must agree and keep the inflated text.\n"
    )
    L.append(
        "`fast path` = parser states of the generated module that have a no-scan fast path (`_PLAIN[state]` is "
        "not None), out of all states; `-` if the module has no such table.\n"
    )
    L.append("| template | case | shape | fast path | notes |")
    L.append("| --- | --- | --- | --- | --- |")
    for w in workloads:
        L.append(
            f"| {w.model} | {w.case['name']} | {w.shape} | {env['fast_path'].get(w.model, '-')} | {'; '.join(w.notes)} |"
        )
    L.append("")
    return "\n".join(L), targets


def plot(cfg: Config, workloads: list[Workload], per_chunk: dict[int, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = [w.model for w in workloads]
    fig, ax = plt.subplots(figsize=(10.5, 5.5))
    styles = {"compiled": ("C0", "o"), "interpreter": ("C1", "s"), "transformers": ("C3", "^"), "floor": ("0.4", "x")}
    for e, (color, marker) in styles.items():
        xs, meds, los, his = [], [], [], []
        for size in cfg.sizes:
            values = [per_chunk[size][m][e] for m in models if e in per_chunk[size][m]]
            if not values:
                continue
            xs.append(size / KB)
            meds.append(statistics.median(values))
            los.append(min(values))
            his.append(max(values))
        ax.plot(xs, meds, marker=marker, color=color, label=f"{e} (median over templates)")
        ax.fill_between(xs, los, his, color=color, alpha=0.12)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("output size (KB, log)")
    ax.set_ylabel("us per chunk (log)")
    ax.set_title(
        f"Streaming cost per token-like chunk (1-6 chars), {len(models)} templates\n(line: median, band: min-max)"
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.set_xticks([size / KB for size in cfg.sizes])
    ax.set_xticklabels([size_label(size) for size in cfg.sizes])
    ax.minorticks_off()
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def print_table(
    cfg: Config,
    env: dict[str, Any],
    workloads: list[Workload],
    s: dict[str, Any],
    mem: list[dict[str, Any]],
    one: dict[int, Any],
    imp: dict[str, Any],
    adv: list[dict[str, Any]],
    targets: list[tuple[str, bool | None, str]],
) -> None:
    per_chunk = s["per_chunk"]
    models = [w.model for w in workloads]
    print(f"Python {env['python']}  |  CPU: {env['cpu']} ({env['cores']} cores)  |  transformers {env['transformers']}")
    print()
    print("us/chunk, median over templates (token chunks of 1-6 chars)")
    print(f"{'size':>8} {'compiled':>10} {'interp':>10} {'transf.':>10} {'floor':>8} {'tf/comp':>8} {'int/comp':>9}")
    for size in cfg.sizes:
        rows = per_chunk[size]
        med = {e: median([rows[m][e] for m in models if e in rows[m]]) for e in (*ENGINES, "floor")}
        rt = median([rows[m]["transformers"] / rows[m]["compiled"] for m in models if "transformers" in rows[m]])
        ri = median([rows[m]["interpreter"] / rows[m]["compiled"] for m in models])
        print(
            f"{size_label(size):>8} {fmt(med['compiled']):>10} {fmt(med['interpreter']):>10} {fmt(med['transformers']):>10} "
            f"{fmt(med['floor'], 3):>8} {fmt(rt) + 'x':>8} {fmt(ri) + 'x':>9}"
        )
    print()
    print(
        f"per template at {size_label(cfg.headline)} and {size_label(cfg.flat_big)} (us/chunk: compiled / interpreter / transformers; growth)"
    )
    for m in models:
        a, b = per_chunk[cfg.flat_small][m], per_chunk[cfg.flat_big][m]
        print(
            f"  {m:<18} {fmt(a['compiled']):>6} {fmt(a['interpreter']):>6} {fmt(a.get('transformers', float('nan'))):>6}   "
            f"{fmt(b['compiled']):>6} {fmt(b['interpreter']):>6} {fmt(b.get('transformers', float('nan'))):>6}   "
            f"growth {fmt(b['compiled'] / a['compiled'])}x {fmt(b['interpreter'] / a['interpreter'])}x "
            f"{fmt(b.get('transformers', float('nan')) / a.get('transformers', float('nan')))}x"
        )
    print()
    print("retained memory (token chunks unless noted)")
    for r in mem:
        print(
            f"  {r['model']:<8} {r['chunking']:<18} {r['engine']:<12} body {fmt(r['body'] / MB)} MB  retained {fmt(r['retained'] / MB)} MB "
            f"({fmt(r['retained'] / r['body'])}x)"
        )
    print()
    print("one-shot parse_response (ms, median over templates)")
    for size in cfg.oneshot_sizes:
        med = {e: median([one[size][m][e] for m in models]) for e in ENGINES}
        rt = median([one[size][m]["transformers"] / one[size][m]["compiled"] for m in models])
        print(
            f"  {size_label(size):>7}: compiled {fmt(med['compiled'], 3)}  interpreter {fmt(med['interpreter'], 3)}  "
            f"transformers {fmt(med['transformers'], 3)}  tf/compiled {fmt(rt)}x"
        )
    print()
    walls = [v["warm_wall"] * 1e3 for v in imp["modules"].values()]
    selfs = [v["warm_self"] * 1e3 for v in imp["modules"].values()]
    print(
        f"import (warm): generated modules median {fmt(median(walls))} ms (max {fmt(max(walls))}), self {fmt(median(selfs))} ms; "
        f"their stdlib imports alone {fmt(imp['stdlib'][imp['stdlib_deps']] * 1e3)} ms; rtcompile {fmt(imp['interpreter'] * 1e3)} ms; "
        f"transformers.utils.chat_parsing {fmt(imp['transformers'] * 1e3)} ms"
    )
    print()
    print("adversarial, one char per feed (us/char: first segment, whole stream)")
    for r in adv:
        print(
            f"  {r['stream']:<40} {r['model']:<8} {r['engine']:<12} first {size_label(r['segment'])}: {fmt(r['first'])}  "
            f"whole {size_label(r['total'])}: {fmt(r['whole'])}  ({fmt(r['whole'] / r['first'])}x; fastest late/early {fmt(r['late_vs_early'])}x)"
        )
    print()
    print("targets")
    for name, met, measured in targets:
        print(f"  [{'met' if met else 'NOT MET':>7}] {name}: {measured}")


# =============================================================================================== main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--quick", action="store_true", help="a run of under 2 minutes (smaller sizes, fewer repetitions)"
    )
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent, help="directory for RESULTS.md and the plot"
    )
    parser.add_argument("--models", nargs="*", help="only these templates (default: all bundled templates)")
    args = parser.parse_args()
    cfg = Config(args.quick)
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    import transformers

    env = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "transformers": transformers.__version__,
        "rtcompile": rtcompile.__version__,
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "load_start": os.getloadavg(),
        "rtcompile_sources": sources_digest(),
    }
    models = args.models or sorted(p.stem for p in TEMPLATES.glob("*.json"))
    with tempfile.TemporaryDirectory(prefix="rtcompile-bench-") as tmp:
        directory = Path(tmp)
        log(f"compiling {len(models)} templates ...")
        engines = Engines(models, directory)
        workloads = [Workload(m) for m in models]
        by_model = {w.model: w for w in workloads}
        for needed in ("qwen3", "gpt_oss"):
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

        def stage(name: str, run: Callable[[], Any]) -> Any:
            log(f"{name} ...")
            t0 = time.perf_counter()
            result = run()
            stages[name] = time.perf_counter() - t0
            log(f"{name}: {stages[name]:.0f} s")
            return result

        stage("checking workloads", lambda: check_workloads(engines, workloads, cfg.sizes))
        streaming = stage("streaming", lambda: bench_streaming(cfg, engines, workloads))
        oneshot = stage("one-shot", lambda: bench_oneshot(cfg, engines, workloads))
        memory = stage("memory", lambda: bench_memory(cfg, engines, by_model))
        adversarial = stage("adversarial", lambda: bench_adversarial(cfg, engines, by_model))
        imports = stage("imports", lambda: bench_imports(cfg, models, directory))
        profile = stage("profiling", lambda: profile_engines(cfg, engines, workloads))
        profile["components"] = stage("components", lambda: component_costs(engines, by_model["qwen3"]))
        profile["oneshot"] = stage("one-shot profile", lambda: profile_oneshot_worst(cfg, engines, workloads, oneshot))
    env["elapsed"] = time.time() - started
    env["stages"] = stages
    env["load_end"] = os.getloadavg()
    report, targets = build_report(cfg, env, workloads, streaming, memory, oneshot, imports, adversarial, profile)
    (args.out / "RESULTS.md").write_text(report + "\n", encoding="utf-8")
    raw = {
        "env": env,
        "streaming": streaming,
        "memory": memory,
        "oneshot": oneshot,
        "imports": imports,
        "adversarial": adversarial,
        "targets": [{"target": t, "met": met, "measured": m} for t, met, m in targets],
        "workloads": {w.model: {"case": w.case["name"], "shape": w.shape, "notes": w.notes} for w in workloads},
    }
    (args.out / "results.json").write_text(json.dumps(raw, indent=1, default=str) + "\n", encoding="utf-8")
    plot(cfg, workloads, streaming["per_chunk"], args.out / "per_chunk_cost.png")
    print_table(cfg, env, workloads, streaming, memory, oneshot, imports, adversarial, targets)
    print(f"\nwrote {args.out / 'RESULTS.md'}, results.json and per_chunk_cost.png ({env['elapsed']:.0f} s)")


if __name__ == "__main__":
    main()
