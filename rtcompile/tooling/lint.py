"""`rtcompile lint`: what is wrong with a template, and what it would do wrong in production.

Three kinds of findings, each a `Diagnostic` with a stable code (`file:line:col: severity[code]: path:
message` on the command line), located where a position is known:
* the validator's errors and warnings (`rtcompile.frontend.diagnostics`);
* defects found by exercising the interpreter: streaming that disagrees with one-shot parsing,
  a non-repeating implicit field that stray text re-opens and overwrites, text silently dropped,
  tool-name captures narrower than real tool names, indentation stripped from values, transforms
  that raise on an optional capture -- each with the input that shows it;
* with the model's chat template: the real generation prompt and whether `start_anchor` finds
  it, and whether every parsed field is read back when the message is rendered again.

A chat template that cannot be read, does not compile or does not render is bad input, like a
template that cannot be read: a `TemplateError` located in the Jinja source (the `.jinja` file, or
the config's `"chat_template"` string), not a finding.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Callable, Iterable
from typing import Any

import jinja2

from rtcompile.api import ResponseParser, TemplateSource, examine_template
from rtcompile.backends.interpreter import anchor_pattern
from rtcompile.errors import Diagnostic, TemplateError
from rtcompile.frontend.diagnostics import walk_placeholders
from rtcompile.frontend.source import SourceDocument, parse_json_document, read_text_file
from rtcompile.ir import Template, Transform, XmlInlineParser
from rtcompile.prompt import compile_chat_template, normalize_messages, render_chat_template
from rtcompile.regex.analysis import optional_group_names
from rtcompile.regex.parser import parse_regex
from rtcompile.runtime.program import after_last_anchor
from rtcompile.tooling.codes import (
    ANCHOR_NOT_FOUND,
    ANCHOR_TOO_EARLY,
    CHAT_TEMPLATE_RENDER,
    FIELD_NOT_RENDERED,
    GENERATION_PROMPT,
    IMPLICIT_OVERWRITE,
    LINT_CODES,
    NARROW_NAME_CAPTURE,
    NO_IMPLICIT_FIELD,
    OPTIONAL_CAPTURE,
    STREAM_DIVERGENCE,
    STRIPPED_INDENTATION,
)
from rtcompile.tooling.fuzz import delimiter_texts, random_chunking, random_stream
from rtcompile.tooling.observe import Raised, observe
from rtcompile.tooling.report import Silenced

#: Called after each fuzzing case with the number done so far (for a progress line).
Progress = Callable[[int], None]


def finding(code: str, message: str, path: Iterable[str | int] = (), example: str | None = None) -> Diagnostic:
    """A lint finding, with the severity its code always has."""
    return Diagnostic(LINT_CODES[code], message, tuple(path), code=code, example=example)


def run(
    template_path: TemplateSource,
    *,
    chat_template_path: str | None = None,
    cases: int = 300,
    progress: Progress | None = None,
) -> list[Diagnostic]:
    """Everything lint reports about a template, in order: load-time diagnostics, static defects,
    defects found in `cases` random streams, and the chat-template checks (the config's own chat
    template, or the file `chat_template_path`). Raises `TemplateError` when the chat template cannot
    be read, compiled or rendered."""
    template, document, diagnostics = examine_template(template_path)
    if template is None:
        return diagnostics  # it does not load: the error is the finding
    chat_template = _chat_template(document, chat_template_path)  # bad input fails before the long part
    located = _locator(document)
    diagnostics += [located(f) for f in static_defects(template)]
    diagnostics += [located(f) for f in fuzz_defects(template, cases=cases, seed=0, progress=progress)]
    if chat_template is not None:
        diagnostics += [located(f) for f in chat_template_checks(template, chat_template)]
    return diagnostics


def check_template(
    source: TemplateSource, *, chat_template: str | None = None, cases: int = 300, disable: Iterable[str] = ()
) -> list[Diagnostic]:
    """What `rtcompile lint` reports about a template, as `Diagnostic`s: the error that stops it loading,
    or its warnings, the defects found by running it on `cases` random streams, and, with a chat template
    (the file `chat_template`, or the config's own), the chat-template checks (`"info"` diagnostics
    among them). `disable` leaves out the warnings and infos with those codes, as `--disable` does.
    Raises `TemplateError` when the chat template cannot be read, compiled or rendered."""
    silenced = Silenced.parse(disable)
    return [d for d in run(source, chat_template_path=chat_template, cases=cases) if not silenced.hides(d)]


def _locator(document: SourceDocument | None) -> Callable[[Diagnostic], Diagnostic]:
    def locate(found: Diagnostic) -> Diagnostic:
        if document is None or found.file is not None:  # a finding about the chat template is located already
            return found
        line, col = document.locate_nearest(found.path) or (None, None)
        return dataclasses.replace(found, file=document.file, line=line, col=col)

    return locate


# --------------------------------------------------------------------------- static defects

NARROW_NAME = re.compile(r"\(\?P<name>\\w[+*]\)")
STRIPPING_VALUE = re.compile(r"\\s\*\(\?P<value>|\(\?P<value>[^)]*\)\\s\*")


def static_defects(template: Template) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    if template.implicit is None:
        found.append(
            finding(
                NO_IMPLICIT_FIELD,
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
                    finding(
                        NARROW_NAME_CAPTURE,
                        r"tool-name capture (?P<name>\w+) rejects real tool names with '-' or '.' (the call is "
                        r"then not recognised at all); use something like (?P<name>[^\s<>(]+)",
                        ("fields", f.name, key),
                        example=repr("get-weather / maps.search"),
                    )
                )
            found += _optional_captures(f.name, key, delimiter.pattern, f.transform)
        if isinstance(f.parser, XmlInlineParser) and STRIPPING_VALUE.search(f.parser.tag_pattern):
            found.append(
                finding(
                    STRIPPED_INDENTATION,
                    r"\s* next to (?P<value>...) strips leading indentation and newlines from values, which corrupts "
                    "code arguments",
                    ("fields", f.name, "content_args", "tag_pattern"),
                    example=repr("<parameter=code>\n    return 1\n</parameter>"),
                )
            )
    return found


def _optional_captures(field: str, key: str, pattern: str, transform: Transform | None) -> list[Diagnostic]:
    """Named groups the transform uses that the pattern can match without: the transform then raises."""
    used = set() if transform is None else {p.root for p, _ in walk_placeholders(transform)}
    try:
        optional = optional_group_names(parse_regex(pattern))
    except (ValueError, RecursionError):
        return []
    return [
        finding(
            OPTIONAL_CAPTURE,
            f"the transform uses {{{name}}}, but group {name!r} may not take part in a match: the field then fails "
            "with KeyError",
            ("fields", field, key),
        )
        for name in sorted(optional & used)
    ]


# --------------------------------------------------------------------------- defects found by running the template


def fuzz_defects(template: Template, *, cases: int, seed: int, progress: Progress | None = None) -> list[Diagnostic]:
    rng = random.Random(seed)
    delimiters = delimiter_texts(template, rng)
    found: dict[str, Diagnostic] = {}
    make = lambda prefix, tools: ResponseParser(template, prefix, tools=tools)  # noqa: E731
    for case in range(cases):
        if progress is not None:
            progress(case)
        text = random_stream(template, rng, delimiters)
        one_shot = observe(make, "", [text])
        for chunks in (random_chunking(text, rng), list(text)):
            streamed = observe(make, "", chunks)
            if _outcome(streamed) != _outcome(one_shot) and "stream" not in found:
                found["stream"] = finding(
                    STREAM_DIVERGENCE,
                    "streaming gives a different message than one-shot parsing for the same text (a delimiter regex "
                    f"commits before its match is final?): one-shot {_outcome(one_shot)!r}, "
                    f"streamed {_outcome(streamed)!r}",
                    ("fields",),
                    example=f"{text!r} in chunks {chunks!r}",
                )
        overwritten = _implicit_overwrite(template, one_shot)
        if overwritten and "implicit" not in found:
            assert template.implicit is not None
            found["implicit"] = finding(
                IMPLICIT_OVERWRITE,
                f"the implicit field {template.implicit.name!r} does not repeat, so text between regions re-opens it "
                f'and the later value {overwritten[1]!r} overwrites {overwritten[0]!r}; consider "repeats": true '
                'with "join": ""',
                ("fields", template.implicit.name),
                example=repr(text),
            )
    if progress is not None:
        progress(cases)
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


@dataclasses.dataclass(frozen=True)
class ChatTemplate:
    """A chat template's Jinja source, and where it came from: `locate(line)` gives the file and the
    position of the Jinja source's line `line` in it."""

    source: str
    file: str | None
    document: SourceDocument | None = None  # the JSON file holding the source as a string, if it is one

    def error(self, message: str, line: int | None) -> TemplateError:
        """`message` as an error at line `line` of the Jinja source (None: the source as a whole)."""
        if self.document is None:  # a .jinja file: its lines are the source's lines
            return TemplateError(message, file=self.file, line=line)
        offset = 0 if line is None else _line_offset(self.source, line)
        position = self.document.locate_in_string((), offset) or (None, None)
        return TemplateError(message, ("chat_template",), file=self.file, line=position[0], col=position[1])


def _line_offset(text: str, line: int) -> int:
    """Where line `line` (1-based) of `text` starts."""
    offset = 0
    for _ in range(line - 1):
        offset = text.index("\n", offset) + 1
    return offset


def _chat_template(document: SourceDocument | None, explicit: str | None) -> ChatTemplate | None:
    """The chat template to check: the file `explicit`, else the template file's own `"chat_template"`
    string, else none; compiled once here, so that a syntax error is reported before the long checks."""
    if explicit is not None:
        chat_template = ChatTemplate(read_text_file(explicit), explicit)
    else:
        value = getattr(document, "value", None)
        if document is None or not isinstance(value, dict) or not isinstance(value.get("chat_template"), str):
            return None
        held = parse_json_document(
            document.text, file=document.file, prefix=("chat_template",), strict_outside_prefix=False
        )
        chat_template = ChatTemplate(str(value["chat_template"]), document.file, held)
    try:
        compile_chat_template(chat_template.source)
    except jinja2.TemplateSyntaxError as error:
        raise chat_template.error(f"Jinja syntax error: {error.message}", error.lineno) from None
    return chat_template


def _jinja_line(error: BaseException) -> int | None:
    """The line of the Jinja source a rendering error was raised at (jinja2 puts it in the traceback)."""
    line = None
    traceback = error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == "<template>":
            line = traceback.tb_lineno
        traceback = traceback.tb_next
    return line


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


def chat_template_checks(template: Template, chat_template: ChatTemplate) -> list[Diagnostic]:
    """What the rendered generation prompt looks like and whether the start anchor finds it, in three
    contexts; and whether each field renders back. A chat template that does not render a plain
    conversation raises `TemplateError`; one that fails only with tools or thinking is a warning."""
    found: list[Diagnostic] = []
    conversation = [{"role": "user", "content": "LINT_USER_TURN"}]
    for label, context in (
        ("no tools", {}),
        ("with tools", {"tools": SAMPLE_TOOLS}),
        ("thinking enabled", {"enable_thinking": True}),
    ):
        try:
            prompt = render(chat_template.source, conversation, add_generation_prompt=True, **context)
        except Exception as exc:  # noqa: BLE001 - whatever the template raises, it is reported, not a crash
            problem = f"the chat template does not render ({label}): {type(exc).__name__}: {exc}"
            error = chat_template.error(problem, _jinja_line(exc))
            if not context:  # not even a plain conversation renders: nothing else can be checked
                raise error from None
            warning = finding(CHAT_TEMPLATE_RENDER, problem, error.path)
            found.append(dataclasses.replace(warning, file=error.file, line=error.line, col=error.col))
            continue
        generation = prompt.split("LINT_USER_TURN")[-1]
        truncated = after_last_anchor(anchor_pattern(template), prompt)
        if truncated is None:
            found.append(
                finding(
                    ANCHOR_NOT_FOUND,
                    f"start anchor not found in the rendered prompt ({label}); its generation prompt is "
                    f"{generation!r}, so every earlier turn would be parsed as part of the reply",
                    ("start_anchor",),
                )
            )
        elif "LINT_USER_TURN" in truncated:
            found.append(
                finding(
                    ANCHOR_TOO_EARLY, f"start anchor matches before the last user turn ({label})", ("start_anchor",)
                )
            )
        else:
            found.append(
                finding(
                    GENERATION_PROMPT, f"generation prompt ({label}) is {generation!r}; after the anchor: {truncated!r}"
                )
            )
    found += _round_trip(template, chat_template.source)
    return found


def _round_trip(template: Template, chat_template: str) -> list[Diagnostic]:
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
                finding(
                    FIELD_NOT_RENDERED,
                    f"the chat template never renders field {f.name!r} of a parsed message, so the parsed message "
                    "cannot be sent back in the next turn (does the chat template read another key?)",
                    ("fields", f.name),
                )
            )
    return found
