"""What is measured: a realistic output per bundled template, its chunkings, the adversarial streams,
and the regex patterns of the bundled templates.

A template's output is one of its recorded cases (tests/data/<model>/cases.json) with reasoning,
content and tool-call argument text inflated to a target size; `check_workloads` makes sure every
inflated output still parses, the same in all engines, before anything is timed.
"""

from __future__ import annotations

import functools
import json
import random
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from benchmarks.config import DATA, KB, TEMPLATES
from benchmarks.engines import ENGINES, Engines, outcome
from rtcompile import load_template
from rtcompile.ir import ContentParser, Delimiter, KvLinesParser, Template, XmlInlineParser

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


@dataclass
class Spans:
    """Where a recorded case's reasoning, content and string tool-call arguments sit in its text.

    `args` holds (start, end, index of the call); `calls` is how many tool calls the case has.
    """

    reasoning: tuple[int, int] | None = None
    content: tuple[int, int] | None = None
    args: list[tuple[int, int, int]] = field(default_factory=list)
    calls: int = 0


def _spans_of(case: dict[str, Any]) -> Spans | None:
    """The spans of a recorded case (None if the case's expected outcome is an error)."""
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

    spans = Spans()
    for key in REASONING_KEYS:
        value = expected.get(key)
        if isinstance(value, str) and len(value) >= 3:
            spans.reasoning = locate(value)
    content = expected.get("content")
    if isinstance(content, str) and len(content) >= 3:
        spans.content = locate(content)
    cursor = 0
    calls = expected.get("tool_calls") or []
    spans.calls = len(calls) if isinstance(calls, list) else 0
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
                spans.args.append((*span, index))
                cursor = span[1]
    return spans


def _case_score(case: dict[str, Any], spans: Spans) -> tuple[int, ...]:
    kinds = (spans.reasoning is not None) + (spans.content is not None) + bool(spans.args)
    return (kinds, min(spans.calls, 2), len(spans.args), len(case["text"]))


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
            firsts: dict[int, tuple[int, int]] = {}
            for start, end, call in spans.args:
                firsts.setdefault(call, (start, end))
            if 0 in firsts and 1 in firsts and self.spans.args and self.spans.args[0][2] == 0:
                self.period = case["text"][firsts[0][1] : firsts[1][0]]
                self.period_case = case["name"]
                break

    def calls(self, size: int) -> int:
        if not self.spans.calls:
            return 0
        if self.period is None:
            return self.spans.calls
        return max(self.spans.calls, calls_for(size))

    @property
    def shape(self) -> str:
        parts = []
        if self.spans.reasoning:
            parts.append("reasoning")
        if self.spans.content:
            parts.append("content")
        if self.spans.calls:
            low, high = self.calls(1 * KB), self.calls(400 * KB)
            parts.append(f"{low}-{high} calls" if low != high else f"{low} call{'s' if low > 1 else ''}")
        return " + ".join(parts)

    def text(self, size: int) -> str:
        """The base text with reasoning, content and string arguments inflated to about `size` characters."""
        return self._inflate(size)[0]

    def filler_chars(self, size: int) -> int:
        """How many characters of `text(size)` are filler (the rest is the case's own text)."""
        return self._inflate(size)[1]

    def _inflate(self, size: int) -> tuple[str, int]:
        text = self.case["text"]
        extra = self.calls(size) - self.spans.calls
        pieces: list[tuple[int, int, str]] = []  # (start, end, kind)
        if self.spans.reasoning:
            pieces.append((*self.spans.reasoning, "reasoning"))
        if self.spans.content:
            pieces.append((*self.spans.content, "content"))
        pieces += [(a, b, "arg") for a, b, _ in self.spans.args]
        n_args = len(self.spans.args) + extra
        weights = {"reasoning": 0.35, "content": 0.35, "arg": 0.30 / max(1, n_args)}
        total_weight = sum(weights[kind] for _, _, kind in pieces) + extra * weights["arg"]
        fixed = len(text) - sum(b - a for a, b, _ in pieces) + extra * len(self.period or "")
        budget = max((len(pieces) + extra) * 8, size - fixed)
        arg_length = max(8, int(budget * weights["arg"] / total_weight))
        out, cursor, first_arg = [], 0, True
        fillers: list[str] = []
        for index, (start, end, kind) in enumerate(sorted(pieces)):
            length = arg_length if kind == "arg" else max(8, int(budget * weights[kind] / total_weight))
            base = ARG_FILLER if kind == "arg" else self.filler
            fillers.append(filler(base, length, 97 * index))
            out += [text[cursor:start], fillers[-1]]
            if kind == "arg" and first_arg:
                first_arg = False
                for k in range(extra):
                    fillers.append(filler(ARG_FILLER, arg_length, 31 * k))
                    out += [self.period or "", fillers[-1]]
            cursor = end
        out.append(text[cursor:])
        return "".join(out), sum(map(len, fillers))


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


# Streams fed one character at a time: (label, template, the unit repeated).
ADVERSARIAL = [
    ("'<' repeated", "qwen3", "<"),
    ("'<tool_cal' repeated", "qwen3", "<tool_cal"),
    ("'<|channel|>commentary to=' repeated", "gpt_oss", "<|channel|>commentary to="),
    ("'<' repeated", "gpt_oss", "<"),
]


def check_workloads(engines: Engines, workloads: list[Workload], sizes: list[int]) -> None:
    """Each inflated output must parse without error, the same in all engines, with its inflated text and calls kept.

    If the rich filler misparses, plain prose is used; if splicing in extra calls misparses, the case's own calls.
    """

    def valid(w: Workload, size: int) -> str | None:
        text = w.text(size)
        results = {e: outcome(functools.partial(engines.parse, e, w, text)) for e in ENGINES}
        reference = results["transformers"]
        if "error" in reference:
            return f"transformers: {reference}"
        if any(r != reference for r in results.values()):
            return "engines disagree"
        if len(json.dumps(reference, ensure_ascii=False)) < 0.8 * w.filler_chars(size):
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


# =============================================================================================== regex patterns


def template_patterns(models: list[str]) -> list[tuple[str, str, str]]:
    """(model, kind, pattern) for every regex of the bundled templates, each pattern once (first model that has it).

    `kind` is "regex delimiter" (a start anchor or field open/close given as a pattern), "literal delimiter"
    (the escaped alternation of literals the loader builds, which is translated too, for example the start
    anchor's) or "tag_pattern" (of an xml-inline content parser, nested ones included).
    """
    seen: set[str] = set()
    found: list[tuple[str, str, str]] = []
    for model in models:
        for kind, pattern in _patterns_of(load_template(TEMPLATES / f"{model}.json")):
            if pattern not in seen:
                seen.add(pattern)
                found.append((model, kind, pattern))
    return found


def _patterns_of(template: Template) -> Iterator[tuple[str, str]]:
    delimiters: list[Delimiter | None] = [template.start_anchor]
    for template_field in template.fields:
        delimiters += [template_field.open, template_field.close]
    for delimiter in delimiters:
        if delimiter is not None:
            yield ("literal delimiter" if delimiter.is_literal else "regex delimiter"), delimiter.pattern
    for template_field in template.fields:
        yield from _parser_patterns(template_field.parser)


def _parser_patterns(parser: ContentParser | None) -> Iterator[tuple[str, str]]:
    if isinstance(parser, XmlInlineParser):
        yield "tag_pattern", parser.tag_pattern
        yield from _parser_patterns(parser.value_parser)
    elif isinstance(parser, KvLinesParser):
        yield from _parser_patterns(parser.value_parser)
