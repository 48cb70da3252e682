"""`rtcompile lint`: what is wrong with a template, and what it would do wrong in production.

Three kinds of findings, each `file:line:col: path: message` where a position is known:
* the validator's errors and warnings (`rtcompile.frontend.diagnostics`);
* defects found by exercising the interpreter: streaming that disagrees with one-shot parsing,
  a non-repeating implicit field that stray text re-opens and overwrites, text silently dropped,
  tool-name captures narrower than real tool names, indentation stripped from values, transforms
  that raise on an optional capture -- each with the input that shows it;
* with the model's chat template: the real generation prompt and whether `start_anchor` finds
  it, and whether every parsed field is read back when the message is rendered again.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rtcompile.api import ResponseParser, examine_template
from rtcompile.backends.interpreter import anchor_pattern
from rtcompile.errors import Diagnostic, render_message
from rtcompile.frontend.diagnostics import walk_placeholders
from rtcompile.ir import Template, Transform, XmlInlineParser
from rtcompile.prompt import normalize_messages, render_chat_template
from rtcompile.regex.analysis import optional_group_names
from rtcompile.regex.parser import parse_regex
from rtcompile.runtime.program import after_last_anchor
from rtcompile.tooling.fuzz import delimiter_texts, random_chunking, random_stream
from rtcompile.tooling.observe import Raised, observe


@dataclass(frozen=True)
class Finding:
    severity: Literal["error", "warning", "info"]
    message: str
    path: tuple[str | int, ...] = ()
    file: str | None = None
    line: int | None = None
    col: int | None = None
    example: str | None = None

    def render(self) -> str:
        text = render_message(f"{self.severity}: {self.message}", self.path, self.file, self.line, self.col)
        return text if self.example is None else f"{text}\n    input: {self.example}"


def _from_diagnostic(d: Diagnostic) -> Finding:
    return Finding(d.severity, d.message, d.path, d.file, d.line, d.col)


def run(template_path: str, *, chat_template_path: str | None = None, cases: int = 300) -> list[Finding]:
    template, document, diagnostics = examine_template(template_path)
    findings = [_from_diagnostic(d) for d in diagnostics]
    if template is None:
        return findings  # it does not load: the error is the finding
    located = _locator(document)
    findings += [located(f) for f in static_defects(template)]
    findings += [located(f) for f in fuzz_defects(template, cases=cases, seed=0)]
    chat_template = _chat_template(document, chat_template_path)
    if chat_template is not None:
        findings += [located(f) for f in chat_template_checks(template, chat_template)]
    return findings


def _locator(document: Any) -> Any:
    def locate(finding: Finding) -> Finding:
        if document is None:
            return finding
        line, col = document.locate_nearest(finding.path) or (None, None)
        return Finding(finding.severity, finding.message, finding.path, document.file, line, col, finding.example)

    return locate


# --------------------------------------------------------------------------- static defects

NARROW_NAME = re.compile(r"\(\?P<name>\\w[+*]\)")
STRIPPING_VALUE = re.compile(r"\\s\*\(\?P<value>|\(\?P<value>[^)]*\)\\s\*")


def static_defects(template: Template) -> list[Finding]:
    found: list[Finding] = []
    if template.implicit is None:
        found.append(
            Finding(
                "warning",
                "no implicit field (one without 'open'): text outside delimited regions is silently dropped",
                ("fields",),
                example=repr("plain answer text"),
            )
        )
    for f in template.fields:
        for key, delimiter in (("open_pattern", f.open), ("close_pattern", f.close)):
            if delimiter is None or delimiter.is_literal:
                continue
            if NARROW_NAME.search(delimiter.pattern):
                found.append(
                    Finding(
                        "warning",
                        r"tool-name capture (?P<name>\w+) rejects real tool names with '-' or '.' (the call is "
                        r"then not recognised at all); use something like (?P<name>[^\s<>(]+)",
                        ("fields", f.name, key),
                        example=repr("get-weather / maps.search"),
                    )
                )
            found += _optional_captures(f.name, key, delimiter.pattern, f.transform)
        if isinstance(f.parser, XmlInlineParser) and STRIPPING_VALUE.search(f.parser.tag_pattern):
            found.append(
                Finding(
                    "warning",
                    r"\s* next to (?P<value>...) strips leading indentation and newlines from values, which corrupts "
                    "code arguments",
                    ("fields", f.name, "content_args", "tag_pattern"),
                    example=repr("<parameter=code>\n    return 1\n</parameter>"),
                )
            )
    return found


def _optional_captures(field: str, key: str, pattern: str, transform: Transform | None) -> list[Finding]:
    """Named groups the transform uses that the pattern can match without: the transform then raises."""
    used = set() if transform is None else {p.root for p, _ in walk_placeholders(transform)}
    try:
        optional = optional_group_names(parse_regex(pattern))
    except (ValueError, RecursionError):
        return []
    return [
        Finding(
            "warning",
            f"the transform uses {{{name}}}, but group {name!r} may not take part in a match: the field then fails "
            "with KeyError",
            ("fields", field, key),
        )
        for name in sorted(optional & used)
    ]


# --------------------------------------------------------------------------- defects found by running the template


def fuzz_defects(template: Template, *, cases: int, seed: int) -> list[Finding]:
    rng = random.Random(seed)
    delimiters = delimiter_texts(template, rng)
    found: dict[str, Finding] = {}
    make = lambda prefix, tools: ResponseParser(template, prefix, tools=tools)  # noqa: E731
    for _ in range(cases):
        text = random_stream(template, rng, delimiters)
        one_shot = observe(make, "", [text])
        for chunks in (random_chunking(text, rng), list(text)):
            streamed = observe(make, "", chunks)
            if _outcome(streamed) != _outcome(one_shot) and "stream" not in found:
                found["stream"] = Finding(
                    "error",
                    "streaming gives a different message than one-shot parsing for the same text (a delimiter regex "
                    f"commits before its match is final?): one-shot {_outcome(one_shot)!r}, "
                    f"streamed {_outcome(streamed)!r}",
                    ("fields",),
                    example=f"{text!r} in chunks {chunks!r}",
                )
        overwritten = _implicit_overwrite(template, one_shot)
        if overwritten and "implicit" not in found:
            assert template.implicit is not None
            found["implicit"] = Finding(
                "warning",
                f"the implicit field {template.implicit.name!r} does not repeat, so text between regions re-opens it "
                f'and the later value {overwritten[1]!r} overwrites {overwritten[0]!r}; consider "repeats": true '
                'with "join": ""',
                ("fields", template.implicit.name),
                example=repr(text),
            )
    return list(found.values())


def _outcome(record: list[Any]) -> Any:
    """What a caller ends up with: the message, or the kind of exception (wherever it was raised)."""
    last = record[-1]
    return f"raises {last.builtin_types[0]}" if isinstance(last, Raised) else last


def _implicit_overwrite(template: Template, record: list[Any]) -> tuple[Any, Any] | None:
    implicit = template.implicit
    if implicit is None or implicit.repeats:
        return None
    values = [
        e["value"]
        for events in record
        if isinstance(events, list)
        for e in events
        if isinstance(e, dict) and e.get("type") == "region_close" and e.get("field") == implicit.name
    ]
    for earlier, later in zip(values, values[1:], strict=False):
        if earlier and earlier != later:
            return earlier, later
    return None


# --------------------------------------------------------------------------- the chat template


def _chat_template(document: Any, explicit: str | None) -> str | None:
    if explicit is not None:
        return Path(explicit).read_text(encoding="utf-8")
    value = getattr(document, "value", None)
    if isinstance(value, dict) and isinstance(value.get("chat_template"), str):
        return str(value["chat_template"])
    return None


SAMPLE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def render(chat_template: str, messages: list[dict[str, Any]], **context: Any) -> str:
    """The prompt transformers would render (see `rtcompile.prompt`), with placeholder special tokens."""
    return render_chat_template(chat_template, normalize_messages(messages), **{**LINT_SPECIAL_TOKENS, **context})


LINT_SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}


def chat_template_checks(template: Template, chat_template: str) -> list[Finding]:
    found: list[Finding] = []
    conversation = [{"role": "user", "content": "LINT_USER_TURN"}]
    for label, context in (
        ("no tools", {}),
        ("with tools", {"tools": SAMPLE_TOOLS}),
        ("thinking enabled", {"enable_thinking": True}),
    ):
        try:
            prompt = render(chat_template, conversation, add_generation_prompt=True, **context)
        except Exception as exc:  # noqa: BLE001 - a broken chat template is a finding, not a crash
            found.append(Finding("warning", f"chat template fails to render ({label}): {exc}", ()))
            continue
        generation = prompt.split("LINT_USER_TURN")[-1]
        truncated = after_last_anchor(anchor_pattern(template), prompt)
        if truncated is None:
            found.append(
                Finding(
                    "error",
                    f"start anchor not found in the rendered prompt ({label}); its generation prompt is "
                    f"{generation!r}, so every earlier turn would be parsed as part of the reply",
                    ("start_anchor",),
                )
            )
        elif "LINT_USER_TURN" in truncated:
            found.append(
                Finding("error", f"start anchor matches before the last user turn ({label})", ("start_anchor",))
            )
        else:
            found.append(
                Finding("info", f"generation prompt ({label}) is {generation!r}; after the anchor: {truncated!r}")
            )
    found += _round_trip(template, chat_template)
    return found


def _round_trip(template: Template, chat_template: str) -> list[Finding]:
    """Fields whose parsed values the chat template never renders back (wrong key names)."""
    found = []
    for f in template.fields:
        marker = f"LINT_VALUE_{f.name.upper()}"
        value: Any = marker
        if f.name == "tool_calls":
            value = [{"type": "function", "function": {"name": marker, "arguments": {"city": "Paris"}}}]
        message: dict[str, Any] = {"role": "assistant", "content": "" if f.name != "content" else marker, f.name: value}
        try:
            rendered = render(
                chat_template,
                [{"role": "user", "content": "hi"}, message],
                add_generation_prompt=False,
                tools=SAMPLE_TOOLS,
            )
        except Exception:  # noqa: BLE001
            continue
        if marker not in rendered:
            found.append(
                Finding(
                    "warning",
                    f"the chat template never renders field {f.name!r} of a parsed message, so the parsed message "
                    "cannot be sent back in the next turn (does the chat template read another key?)",
                    ("fields", f.name),
                )
            )
    return found
