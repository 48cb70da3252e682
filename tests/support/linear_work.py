"""Scanning work per fed character, for the bundled templates and the unseen set, with the work meter.

A *subject* is a template and the realistic output it is measured on, named as the benchmarks name it:

* `random-007`: a random realistic template (`benchmarks.unseen_templates`) and its own output;
* `qwen3~lookahead-closes`: a rewrite of a bundled template (`benchmarks.rewrites`) on the bundled
  template's workload (its recorded case, inflated: `benchmarks.workloads`);
* `qwen3`: a bundled template on its workload.

`streaming_work(name, size)` streams the subject's output of about `size` characters through its
compiled module in token-like chunks (1-6 characters) and `one_shot_work` parses it (or it written
several times over: as many times the regions) with `parse_response`, both with the module's string work
metered (`tests.support.work_meter`); `growth` is the ratio of the work per character of two outputs (about 1 for
a linear parser, about the size ratio for one that rescans or copies what it has seen, or searches the
rest of the text for every region). Parsers run with `recover=True`, so that a region that fails to
parse does not end the stream (scanning is the same either way).

    python -m tests.support.linear_work [--only random|rewrites|bundled] [--sizes 2048 8192] [NAME ...]
    python -m tests.support.linear_work --one-shot --sizes 4096 4096 --copies 2 16 [NAME ...]

prints, per subject, the work per character at each size, the growth, and where the work of the
largest size went (the busiest site, with the delimiter its scanner code is for).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

import rtcompile
from benchmarks.rewrites import RewriteWorkload, rewrites
from benchmarks.unseen_templates import random_templates
from benchmarks.workloads import Workload, seed_of, token_chunks
from rtcompile.plan import delimiter_history
from tests.support.paths import TEMPLATES
from tests.support.work_meter import Site, WorkMeter, metered_module

KB = 1024
MB = 1024 * KB


class Subject(Protocol):
    model: str
    template: dict[str, Any]
    prefix: str
    tools: Any

    def text(self, size: int) -> str: ...


def bundled_names() -> list[str]:
    return sorted(path.stem for path in TEMPLATES.glob("*.json"))


@functools.cache
def random_names() -> list[str]:
    return [t.model for t in random_templates()]


@functools.cache
def rewrite_names() -> list[str]:
    names = []
    for model in bundled_names():
        template = json.loads((TEMPLATES / f"{model}.json").read_text(encoding="utf-8"))["response_template"]
        names += [r.model for r in rewrites(model, template)]
    return names


@functools.cache
def subject(name: str) -> Subject:
    if name.startswith("random-"):
        return {t.model: t for t in random_templates()}[name]
    if "~" in name:
        base = name.split("~")[0]
        template = json.loads((TEMPLATES / f"{base}.json").read_text(encoding="utf-8"))["response_template"]
        return RewriteWorkload({r.model: r for r in rewrites(base, template)}[name])
    return Workload(name)


@functools.cache
def metered(name: str) -> tuple[ModuleType, WorkMeter, list[str]]:
    """The subject's compiled module with its work metered, its meter, and its source lines. The module
    leaves out the parts that never parse (the grammar builder, the OpenAI adapter, the conversion of
    Python functions to schemas: `--no-grammar --no-openai --no-function-tools`), which scan nothing and
    made up most of what the meter's rewrite read; its parser is the same."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # patterns matched with `regex`: said at compile time, not an error here
        source = rtcompile.compile_template(subject(name).template, grammar=False, openai=False, function_tools=False)
    module, meter = metered_module(source, "metered_" + re.sub(r"\W", "_", name))
    return module, meter, source.splitlines()


@dataclass(frozen=True)
class Work:
    """What the meter counted for one output of `fed` characters."""

    fed: int
    scanning: int
    assembly: int
    busiest: tuple[tuple[str, int], ...]  # (site and the delimiter it scans for, characters), busiest first

    @property
    def per_char(self) -> float:
        """Scanning characters per fed character."""
        return self.scanning / self.fed


def _measured(name: str, size: int, run: Any, copies: int = 1) -> Work:
    module, meter, lines = metered(name)
    s = subject(name)
    text = s.text(size) * copies
    meter.reset()
    run(module, s, text)
    busiest = tuple((f"{site} [{watch_of(lines, site)}]", chars) for site, chars in meter.by_site(meter.scanning)[:3])
    return Work(len(text), sum(meter.scanning.values()), sum(meter.assembly.values()), busiest)


def streaming_work(name: str, size: int) -> Work:
    def stream(module: ModuleType, s: Subject, text: str) -> None:
        parser = module.ResponseParser(s.prefix, tools=s.tools, recover=True)
        feed = parser.feed
        for chunk in token_chunks(text, seed_of(name, size)):
            feed(chunk)
        with contextlib.suppress(ValueError):  # a required field missing: said once the scan is over
            parser.finalize()

    return _measured(name, size, stream)


def one_shot_work(name: str, size: int, copies: int = 1) -> Work:
    """`parse_response` of the output of about `size` characters written `copies` times over (one after the
    other: a parse with as many times the regions)."""

    def parse(module: ModuleType, s: Subject, text: str) -> None:
        with contextlib.suppress(ValueError):  # a region that does not parse: the scan is over by then
            module.parse_response(text, prefix=s.prefix, tools=s.tools)

    return _measured(name, size, parse, copies)


def growth(small: Work, big: Work) -> float:
    return big.per_char / max(small.per_char, 1e-9)


def unbounded_history(name: str) -> list[str]:
    """The delimiters of the subject whose lookbehind reach rtcompile cannot bound: with one, the engine keeps
    the whole stream (`rtcompile.plan.template_history` is None)."""
    template = rtcompile.load_template(subject(name).template)
    found = []
    for f in template.fields:
        for kind, delimiter in (("open", f.open), ("close", f.close)):
            if delimiter is not None and delimiter_history(delimiter) is None:
                found.append(f"{f.name}.{kind} {delimiter.pattern!r}")
    return found


def watch_of(lines: list[str], site: Site) -> str:
    """What the code at `site` scans for: the nearest `# fields....` comment above it in its scanner (the
    generator writes one above each watch), or the function it is in."""
    for line in reversed(lines[: site.line]):
        stripped = line.strip()
        if (
            stripped.startswith("# fields.")
            or stripped.startswith("# inside field")
            or stripped.startswith("# outside")
        ):
            return stripped[2:]
        if stripped.startswith("def "):
            return stripped[4:].split("(")[0]
    return "?"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="subjects (default: all of --only)")
    parser.add_argument("--only", choices=["random", "rewrites", "bundled"], action="append")
    parser.add_argument("--sizes", type=int, nargs="+", default=[2 * KB, 8 * KB])
    parser.add_argument("--one-shot", action="store_true", help="parse_response instead of streaming")
    parser.add_argument("--copies", type=int, nargs="+", help="one-shot: each size's output written N times over")
    args = parser.parse_args(argv)
    copies = args.copies or [1] * len(args.sizes)
    sets: dict[str, Callable[[], list[str]]] = {
        "random": random_names,
        "rewrites": rewrite_names,
        "bundled": bundled_names,
    }
    names = args.names or [n for only in (args.only or list(sets)) for n in sets[only]()]
    for name in names:
        if args.one_shot:
            works = [one_shot_work(name, size, n) for size, n in zip(args.sizes, copies, strict=True)]
        else:
            works = [streaming_work(name, size) for size in args.sizes]
        per_char = " ".join(f"{w.per_char:8.2f}" for w in works)
        line = f"{name:40} {per_char}  growth {growth(works[0], works[-1]):7.2f}x  {works[-1].busiest[:1]}"
        print(line, unbounded_history(name) or "", flush=True)


if __name__ == "__main__":
    main()
