"""`rtcompile verify`: differential fuzzing of a compiled module against the interpreter (and transformers).

For each case a random stream is built from the template's own delimiters (see `rtcompile.tooling.fuzz`)
and fed to every engine one-shot, at every 2-way split and in random token-like chunkings. The
compiled module must equal the interpreter exactly (events, messages, exception types and
messages); the interpreter must equal transformers where it is installed. The first divergence is
shrunk to a minimal reproducer.
"""

from __future__ import annotations

import importlib.util
import random
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from rtcompile.api import compile_template, load_template
from rtcompile.backends.interpreter import ResponseParser
from rtcompile.ir import Template
from rtcompile.tooling.fuzz import delimiter_texts, random_chunking, random_prefix, random_stream
from rtcompile.tooling.observe import Make, identical, observe

Same = Callable[[list[Any], list[Any]], bool]


@dataclass
class Divergence:
    against: str
    prefix: str
    chunks: list[str]
    ours: list[Any]
    theirs: list[Any]


@dataclass
class Summary:
    cases: int = 0
    chunkings: int = 0
    comparisons: int = 0
    engines: list[str] = field(default_factory=list)
    divergence: Divergence | None = None


@dataclass(frozen=True)
class Pair:
    """Two engines that must agree, and how strictly."""

    name: str
    ours: Make
    theirs: Make
    same: Same


def load_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"rtcompile_verify_{abs(hash(str(path)))}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path}: cannot import this file as a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compiled_on_the_fly(template_path: str) -> ModuleType:
    directory = Path(tempfile.mkdtemp(prefix="rtcompile-verify-"))
    target = directory / "parser_under_test.py"
    target.write_text(compile_template(template_path), encoding="utf-8")
    return load_module(target)


def engine_pairs(template: Template, module: ModuleType) -> list[Pair]:
    spec = dict(template.source)
    compiled: Make = lambda prefix, tools: module.ResponseParser(prefix, tools=tools)  # noqa: E731
    interpreted: Make = lambda prefix, tools: ResponseParser(template, prefix, tools=tools)  # noqa: E731
    pairs = [Pair("compiled module vs interpreter", compiled, interpreted, identical)]
    try:
        from transformers.utils.chat_parsing import ResponseParser as Reference
    except ImportError:
        return pairs
    reference: Make = lambda prefix, tools: Reference(spec, prefix=prefix, tools=tools)  # noqa: E731
    pairs.append(Pair("interpreter vs transformers", interpreted, reference, lambda a, b: a == b))
    return pairs


def chunkings_for(text: str, rng: random.Random, random_count: int, max_split_length: int) -> list[list[str]]:
    chunkings = [[text], *(random_chunking(text, rng) for _ in range(random_count))]
    if len(text) <= max_split_length:
        chunkings += [[text[:i], text[i:]] for i in range(1, len(text))]
    return chunkings


def run(
    template_path: str,
    *,
    module_path: str | None,
    cases: int,
    seed: int,
    progress: Callable[[int, Summary], None] | None = None,
) -> Summary:
    template = load_template(template_path)
    module = load_module(Path(module_path)) if module_path else compiled_on_the_fly(template_path)
    pairs = engine_pairs(template, module)
    rng = random.Random(seed)
    delimiters = delimiter_texts(template, rng)
    summary = Summary(engines=[p.name for p in pairs])
    for case in range(cases):
        text = random_stream(template, rng, delimiters)
        prefix = random_prefix(template, rng, delimiters)
        for chunks in chunkings_for(text, rng, random_count=3, max_split_length=120):
            summary.chunkings += 1
            for pair in pairs:
                summary.comparisons += 1
                ours, theirs = observe(pair.ours, prefix, chunks), observe(pair.theirs, prefix, chunks)
                if not pair.same(ours, theirs):
                    summary.divergence = shrink(pair, prefix, chunks)
                    summary.cases = case + 1
                    return summary
        summary.cases = case + 1
        if progress is not None:
            progress(case + 1, summary)
    return summary


def shrink(pair: Pair, prefix: str, chunks: list[str]) -> Divergence:
    """Greedily simplify a diverging case: drop chunks, drop characters, merge chunks, cut the prefix."""

    def diverges(p: str, c: list[str]) -> bool:
        return not pair.same(observe(pair.ours, p, c), observe(pair.theirs, p, c))

    changed = True
    while changed:
        changed = False
        for candidate_prefix, candidate in _simpler(prefix, chunks):
            if diverges(candidate_prefix, candidate):
                prefix, chunks, changed = candidate_prefix, candidate, True
                break
    return Divergence(
        pair.name, prefix, chunks, observe(pair.ours, prefix, chunks), observe(pair.theirs, prefix, chunks)
    )


def _simpler(prefix: str, chunks: list[str]) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    if prefix:
        out += [("", chunks), (prefix[len(prefix) // 2 :], chunks), (prefix[1:], chunks), (prefix[:-1], chunks)]
    for i in range(len(chunks)):
        out.append((prefix, chunks[:i] + chunks[i + 1 :]))
    for i in range(len(chunks) - 1):
        out.append((prefix, chunks[:i] + [chunks[i] + chunks[i + 1]] + chunks[i + 2 :]))
    for i, chunk in enumerate(chunks):
        for j in range(len(chunk)):
            out.append((prefix, chunks[:i] + [chunk[:j] + chunk[j + 1 :]] + chunks[i + 1 :]))
    return out


def report(template_path: str, summary: Summary) -> str:
    lines = [
        f"verify {template_path}: {summary.cases} cases, {summary.chunkings} chunkings, "
        f"{summary.comparisons} comparisons ({'; '.join(summary.engines)})"
    ]
    d = summary.divergence
    if d is None:
        lines.append(f"all {summary.comparisons} comparisons agree")
        return "\n".join(lines)
    lines += [
        f"DIVERGENCE ({d.against}), shrunk to:",
        f"  template: {template_path}",
        f"  prefix:   {d.prefix!r}",
        f"  chunks:   {d.chunks!r}",
        f"  text:     {''.join(d.chunks)!r}",
        f"  ours:     {d.ours!r}",
        f"  theirs:   {d.theirs!r}",
    ]
    return "\n".join(lines)


def print_progress(done: int, summary: Summary) -> None:
    if done % 200 == 0:
        print(f"  {done} cases, {summary.comparisons} comparisons...", file=sys.stderr, flush=True)
