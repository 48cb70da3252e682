"""Random realistic response templates nobody tuned rtcompile for, and a realistic output for each.

`random_templates(count, seed)` draws templates the way model trainers write them: a reasoning field,
a tool-call field and an end-of-turn close for the implicit content, in one token style (`<think>`,
`<|think_start|>`, `[THINK]`, `<｜think▁begin｜>`, ...), each delimiter written in one of the forms the
compiler accepts (a literal or a list of them, an escaped regex, a `(?:...)` wrapper, `(?i)`, leading
or trailing `\\s*`, an alternative with `$` or `\\Z`, a nullable alternative `</think>|(?=<tool_call>)`,
a lookahead close, a `(?=[\\s\\S]*?</think>)` open, a start-anchored `^\\s*(?=\\[)` open, a lazy name
`<function=(?P<name>[^<\\n]+?)>`, a quote matched by a back-reference) and each tool-call format with
its content parser (json with or without a transform, unquoted keys and custom string delimiters, a
JSON list, a Python call list, xml-inline with three kinds of tag pattern, kv-lines), with repeats,
join, `optional: false` and a typed extra field now and then. Each template records the constructs it
is made of (`UnseenTemplate.constructs`), so that a slow one can be explained.

Every template comes with the output a model would write for it (`UnseenTemplate.text(size)`): its
regions in order (reasoning, content, one to three tool calls, the end-of-turn token), each delimiter
written as the model writes it, and prose inflated to the size asked for: prose with whitespace runs,
stray `<`, `[`, `{`, newlines, and near misses of the template's own delimiters (`_prose`). A template
is kept only if transformers loads it, and its output gives the regions it was written with in the
rtcompile interpreter (`UnseenTemplate.problem`, checked by the tests); the draw is deterministic for a
seed.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from transformers.utils.chat_parsing.response_templates import load_response_template

import rtcompile
from benchmarks.workloads import ARG_FILLER, RICH_FILLER, filler

# Prose beyond RICH_FILLER: runs of spaces, tabs and blank lines, stray '<', '[' and '{', a JSON-ish
# snippet and a citation, the text a reasoning model writes around code.
WHITESPACE_PROSE = (
    "Plan:  \n\n    1. parse the request   \n    2. call the tool\t\n\n\n"
    "Check: x <y and y> z, see [1] and {a: b} or [x]{y}.   \n  \n"
    '    {"draft": [1, 2], "ok": true}\n\t\n'
)

COUNT = 120  # the unseen set's random templates
SEED = 19

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {text: {"type": "string"}, number: {"type": "integer"}},
            },
        },
    }
    for name, text, number in (("get_weather", "city", "days"), ("search_web", "query", "limit"))
]
CALLS = [(str(tool["function"]["name"]), *tool["function"]["parameters"]["properties"]) for tool in TOOLS]  # type: ignore[index]


@dataclass(frozen=True)
class Slot:
    """Where prose goes in an output: `kind` is reasoning, content or arg (a tool-call string argument)."""

    kind: str


Piece = str | Slot
SHARES = {"reasoning": 0.35, "content": 0.35, "arg": 0.30}


@dataclass(frozen=True)
class Delim:
    """A delimiter as the template spells it, and what the model writes for it ('' when zero-width)."""

    value: str | list[str]
    is_pattern: bool
    text: str
    constructs: tuple[str, ...] = ()

    def spec(self, kind: str) -> dict[str, Any]:
        return {f"{kind}_pattern" if self.is_pattern else kind: self.value}


@dataclass
class UnseenTemplate:
    """A template and its output; `model` names it the way the benchmarks name templates."""

    model: str
    template: dict[str, Any]
    constructs: tuple[str, ...]
    prefix: str
    pieces: list[Piece]
    regions: dict[str, int]  # explicit field -> how many regions of it the output closes
    implicit: str | None  # the implicit field, when the output has text for it
    prose: str  # reasoning and content prose, cycled (with this template's near misses)
    tools: list[dict[str, Any]] | None = field(default_factory=lambda: TOOLS)
    notes: list[str] = field(default_factory=list)

    @property
    def shape(self) -> str:
        parts = [f"{n} {name}" if n > 1 else name for name, n in self.regions.items()]
        return " + ".join([*parts, *([self.implicit] if self.implicit else [])])

    def text(self, size: int) -> str:
        """The output with its prose inflated so that the whole is about `size` characters."""
        fixed = sum(len(p) for p in self.pieces if isinstance(p, str))
        slots = [p for p in self.pieces if isinstance(p, Slot)]
        kinds = Counter(s.kind for s in slots)
        weight = {kind: SHARES[kind] / n for kind, n in kinds.items()}
        total = sum(weight[s.kind] for s in slots)
        budget = max(8 * len(slots), size - fixed)
        out: list[str] = []
        for index, piece in enumerate(self.pieces):
            if isinstance(piece, str):
                out.append(piece)
                continue
            length = max(8, int(budget * weight[piece.kind] / total))
            out.append(filler(ARG_FILLER if piece.kind == "arg" else self.prose, length, 211 * index))
        return "".join(out)

    def problem(self) -> str | None:
        """None if the rtcompile interpreter closes the regions the output was written with, else what differs.
        (Whether every engine agrees with transformers on it is the benchmark's and the tests' business.)"""
        parser = rtcompile.ResponseParser(self.template, self.prefix, tools=self.tools)
        try:
            events = parser.feed(self.text(4096)) + parser.finalize()[1]
        except Exception as error:  # noqa: BLE001 - the draw is rejected, with the reason
            return f"{type(error).__name__}: {error}"
        closed = Counter(e["field"] for e in events if e["type"] == "region_close")
        explicit = {name: n for name, n in closed.items() if name != self.implicit}
        if explicit != self.regions or (self.implicit is not None and not closed[self.implicit]):
            return f"closed {dict(closed)}, written {self.regions} and the implicit {self.implicit}"
        return None


# =============================================================================================== tokens


def _angle(word: str, end: bool) -> str:
    return f"</{word}>" if end else f"<{word}>"


def _pipe(word: str, end: bool) -> str:
    return f"<|{word}_{'end' if end else 'start'}|>"


def _bracket(word: str, end: bool) -> str:
    return f"[/{word.upper()}]" if end else f"[{word.upper()}]"


def _fullwidth(word: str, end: bool) -> str:
    return f"<｜{word}▁{'end' if end else 'begin'}｜>"


def _namespaced(word: str, end: bool) -> str:
    return f"</seed:{word}>" if end else f"<seed:{word}>"


def _sentinel(word: str, end: bool) -> str:
    return f"<{'end' if end else 'start'}_of_{word}>"


STYLES: dict[str, Callable[[str, bool], str]] = {
    "angle": _angle,
    "pipe": _pipe,
    "bracket": _bracket,
    "fullwidth": _fullwidth,
    "namespaced": _namespaced,
    "sentinel": _sentinel,
}
REASONING_WORDS = ["think", "thought", "reasoning"]
TOOL_WORDS = ["tool_call", "function_call", "tool", "call"]
END_TOKENS = [
    "<|im_end|>",
    "<|eot_id|>",
    "</s>",
    "<|end|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "[e~[",
    "<｜end▁of▁sentence｜>",
]
ANCHORS = ["<|im_start|>assistant\n", "<|start_header_id|>assistant<|end_header_id|>\n\n", "<start_of_turn>model\n"]


def as_pattern(value: str | list[str], is_pattern: bool) -> str:
    """A delimiter as a regex: a pattern as it is, literals as the alternation the reference builds from
    them (escaped, longest first)."""
    if is_pattern:
        assert isinstance(value, str)
        return value
    literals = [value] if isinstance(value, str) else list(dict.fromkeys(value))
    return "|".join(re.escape(literal) for literal in sorted(literals, key=len, reverse=True))


# =============================================================================================== delimiter forms


def literal_form(rng: random.Random, token: str, other: str, closing: bool) -> Delim:
    """`token` written in one of the forms that keep it a single token; `other` is a second spelling for
    lists and alternations."""
    escaped = re.escape(token)
    forms: list[Callable[[], Delim]] = [
        lambda: Delim(token, False, token, ("literal",)),
        lambda: Delim([token, other], False, token, ("literal list",)),
        lambda: Delim(escaped, True, token, ("regex literal",)),
        lambda: Delim(f"(?:{escaped})", True, token, ("(?:) wrapper",)),
        lambda: Delim(f"{escaped}|{re.escape(other)}", True, token, ("alternation",)),
        lambda: Delim(f"(?i){escaped}", True, token, ("(?i)",)),
    ]
    if closing:
        forms += [
            lambda: Delim(rf"\s*{escaped}", True, "\n" + token, ("leading \\s*",)),
            lambda: Delim(f"{escaped}|$", True, token, ("|$ close",)),
            lambda: Delim(rf"{escaped}|\Z", True, token, ("|\\Z close",)),
        ]
    else:
        forms.append(lambda: Delim(rf"{escaped}\s*", True, token + "\n", ("trailing \\s*",)))
    return rng.choice(forms)()


# =============================================================================================== tool-call formats


@dataclass(frozen=True)
class ToolFormat:
    """How one family writes tool calls: the field (without its delimiters' texts) and the call text."""

    name: str
    open: Delim
    close: Delim
    spec: dict[str, Any]  # content, content_args, transform, transform_each, repeats
    call: Callable[[str, str, str], list[Piece]]  # (name, text key, number key) -> the region's body
    separator: str  # between two calls' regions (or items of one list)
    listed: bool = False  # all calls in one region, as a list

    @property
    def constructs(self) -> tuple[str, ...]:
        return (*self.open.constructs, *self.close.constructs, f"{self.name} tool calls")


FUNCTION = {"type": "function", "function": "{content}"}
NAMED = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
EACH = {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}
ARG = Slot("arg")


def _json_args(name: str, text_key: str, number_key: str) -> list[Piece]:
    return [f'{{"{text_key}": "', ARG, f'", "{number_key}": 3}}']


def _name_open(rng: random.Random, token: str) -> Delim:
    """An open delimiter that captures the tool's name, and its text with `{name}` to fill in."""
    escaped = re.escape(token)
    forms = [
        (rf"{escaped}(?P<name>[^\s<]+)\n", f"{token}{{name}}\n", "name capture"),
        (rf"{escaped}\s*<function=(?P<name>[^>\n]+)>", f"{token}\n<function={{name}}>", "name capture"),
        (rf"{escaped}\s*<function=(?P<name>[^<\n]+?)>", f"{token}\n<function={{name}}>", "lazy name"),
        (rf"(?:{escaped}\s*)?<function=(?P<name>[^>\n]+)>", f"{token}\n<function={{name}}>", "optional prefix"),
        (r"<invoke name=([\"'])(?P<name>[^\"'\n]+)\1>", '<invoke name="{name}">', "back-reference"),
        (
            rf"{escaped}\s*(?:functions\.)?(?P<name>[^\s:<]+):\d+\s*<\|args\|>",
            f"{token}functions.{{name}}:0<|args|>",
            "indexed name",
        ),
    ]
    pattern, text, construct = rng.choice(forms)
    if rng.random() < 0.2:
        pattern, construct = f"(?i){pattern}", f"{construct}, (?i)"
    return Delim(pattern, True, text, (construct,))


def tool_format(rng: random.Random, open_token: str, close_token: str, end_token: str) -> ToolFormat:
    kind = rng.choice(
        ["json", "json named", "json list", "python list", "xml", "xml glm", "xml backref", "gemma", "kv"]
    )
    close = literal_form(rng, close_token, close_token.replace("_", "-"), True)
    listed = kind in ("json list", "python list")
    if listed and rng.random() < 0.4:
        # One region holding every call, opened by the list itself at the start, as xLAM and Llama write it.
        open_ = Delim(r"^\s*(?=\[)", True, "", ("start-anchored open",))
        close = literal_form(rng, end_token, end_token + "\n", True)
    elif kind in ("json", "json list", "python list"):
        open_ = literal_form(rng, open_token, open_token.replace("_", "-"), False)
    else:
        open_ = _name_open(rng, open_token)
    if rng.random() < 0.15:  # a call may leave out its close when the next one starts
        close = _nullable(close, _lead(open_.text) or open_token)
    if listed:
        content = "json" if kind == "json list" else "python-call-list"
        spec: dict[str, Any] = {"content": content, "transform": EACH, "transform_each": True}
        call: Callable[[str, str, str], list[Piece]] = _json_call if kind == "json list" else _python_item
        return ToolFormat(kind, open_, close, spec, call, ", ", listed=True)
    if kind == "json":
        return ToolFormat(
            kind, open_, close, {"content": "json", "transform": FUNCTION, "repeats": True}, _json_call, "\n"
        )
    if kind == "json named":
        return ToolFormat(
            kind, open_, close, {"content": "json", "transform": NAMED, "repeats": True}, _json_args, "\n"
        )
    if kind == "gemma":
        args: dict[str, Any] = {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]}
        spec = {"content": "json", "content_args": args, "transform": NAMED, "repeats": True}
        return ToolFormat(kind, open_, close, spec, _gemma_args, "")
    value_parser = {"name": "json", "args": {"allow_non_json": True}}
    if kind == "kv":
        spec = {
            "content": "kv-lines",
            "content_args": {"value_parser": value_parser},
            "transform": NAMED,
            "repeats": True,
        }
        return ToolFormat(kind, open_, close, spec, _kv_args, "\n")
    tag_pattern, call = XML_TAGS[kind]
    args = {"tag_pattern": tag_pattern, "value_parser": value_parser}
    spec = {"content": "xml-inline", "content_args": args, "transform": NAMED, "repeats": True}
    return ToolFormat(kind, open_, close, spec, call, "\n")


def _json_call(name: str, text_key: str, number_key: str) -> list[Piece]:
    return [f'{{"name": "{name}", "arguments": ', *_json_args(name, text_key, number_key), "}"]


def _python_item(name: str, text_key: str, number_key: str) -> list[Piece]:
    return [f'{name}({text_key}="', ARG, f'", {number_key}=3)']


def _gemma_args(name: str, text_key: str, number_key: str) -> list[Piece]:
    return [f'{{{text_key}:<|"|>', ARG, f'<|"|>,{number_key}:3}}']


def _kv_args(name: str, text_key: str, number_key: str) -> list[Piece]:
    return [f"\n{text_key}: ", ARG, f"\n{number_key}: 3\n"]


def _xml_params(name: str, text_key: str, number_key: str) -> list[Piece]:
    return [f"\n<parameter={text_key}>\n", ARG, f"\n</parameter>\n<parameter={number_key}>\n3\n</parameter>\n"]


def _glm_params(name: str, text_key: str, number_key: str) -> list[Piece]:
    tail = f"</arg_value>\n<arg_key>{number_key}</arg_key>\n<arg_value>3</arg_value>\n"
    return [f"\n<arg_key>{text_key}</arg_key>\n<arg_value>", ARG, tail]


def _backref_params(name: str, text_key: str, number_key: str) -> list[Piece]:
    return [f"<{text_key}>", ARG, f"</{text_key}><{number_key}>3</{number_key}>"]


# xml-inline tag patterns: Qwen3-Coder's, GLM's, and one whose close names its open by a back-reference.
XML_TAGS: dict[str, tuple[str, Callable[[str, str, str], list[Piece]]]] = {
    "xml": (r"<parameter=(?P<key>[^>\n]+)>\n?(?P<value>.*?)\n?</parameter>", _xml_params),
    "xml glm": (r"<arg_key>(?P<key>.*?)</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>", _glm_params),
    "xml backref": (r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", _backref_params),
}

# =============================================================================================== templates


@dataclass
class _Part:
    """One field of a template being drawn: its spec, what it is made of, and its part of the output."""

    name: str
    spec: dict[str, Any]
    constructs: tuple[str, ...]
    pieces: list[Piece]
    regions: int  # regions of this field the pieces close
    texts: list[str]  # its delimiters' texts, for near misses in the prose


def _lead(text: str) -> str:
    """The token a delimiter's text starts with (what a lookahead for it looks for)."""
    return text.strip().split("\n")[0].split("{name}")[0]


def _reasoning(
    rng: random.Random, style: Callable[[str, bool], str], other: Callable[[str, bool], str], next_open: str, ends: bool
) -> _Part:
    """The reasoning field; `next_open` is what the model writes after it. Where `ends` (an explicit content
    field's open comes next), the reasoning may end with no close at all, at a lookahead for that open."""
    word = rng.choice(REASONING_WORDS)
    token, end = style(word, False), style(word, True)
    kind = rng.random()
    if kind < 0.12:  # TRL: reasoning opens once its close is in sight
        open_ = Delim(rf"(?=[\s\S]*?{re.escape(end)})", True, "", ("lookahead open",))
    elif kind < 0.2:
        open_ = Delim(rf"^\s*{re.escape(token)}", True, token, ("start-anchored open",))
    else:
        open_ = literal_form(rng, token, other(word, False), False)
    close = literal_form(rng, end, other(word, True), True)
    if ends and open_.text and rng.random() < 0.5:  # granite's "Here is my response:" ends the reasoning
        close = Delim(f"(?={re.escape(next_open)})", True, "", ("lookahead close",))
    elif rng.random() < 0.15:  # reasoning may end where a tool call starts, without its close
        close = _nullable(close, next_open)
    spec: dict[str, Any] = {**open_.spec("open"), **close.spec("close"), "content": "text"}
    constructs = (*open_.constructs, *close.constructs)
    if rng.random() < 0.2:
        spec.update(repeats=True, join="\n")
        constructs += ("join",)
    name = rng.choice(["reasoning_content", "reasoning_content", "thinking", "reasoning"])
    return _Part(name, spec, constructs, [open_.text, Slot("reasoning"), close.text], 1, [open_.text, close.text])


def _nullable(close: Delim, next_open: str) -> Delim:
    """`close`, or nothing right before `next_open`: `</think>|(?=<tool_call>)`."""
    pattern = f"{as_pattern(close.value, close.is_pattern)}|(?={re.escape(next_open)})"
    return Delim(pattern, True, close.text, (*close.constructs, "nullable close"))


def _explicit_content(
    rng: random.Random, style: Callable[[str, bool], str], other: Callable[[str, bool], str]
) -> _Part:
    word = rng.choice(["response", "answer"])
    open_ = literal_form(rng, style(word, False), other(word, False), False)
    close = literal_form(rng, style(word, True), other(word, True), True)
    spec = {**open_.spec("open"), **close.spec("close"), "content": "text"}
    constructs = ("explicit content", *open_.constructs, *close.constructs)
    return _Part(
        "content", spec, constructs, ["\n", open_.text, Slot("content"), close.text], 1, [open_.text, close.text]
    )


def _implicit_content(rng: random.Random, end: Delim, prose: bool) -> _Part:
    """The implicit field (`prose`: the output has text for it, else only the end-of-turn token)."""
    spec: dict[str, Any] = {**end.spec("close"), "content": "text"}
    constructs = ("implicit content", *end.constructs)
    if rng.random() < 0.7:
        spec.update(repeats=True, join="")
        constructs += ("join",)
    if prose and rng.random() < 0.1:
        spec["optional"] = False
        constructs += ("optional: false",)
    pieces: list[Piece] = ["\n\n", Slot("content"), "\n"] if prose else []
    return _Part("content", spec, constructs, pieces, 0, [end.text])


def _content_close(rng: random.Random, end_token: str, other: str) -> Delim:
    forms: list[Callable[[], Delim]] = [
        lambda: literal_form(rng, end_token, other, True),
        lambda: Delim(rf"{re.escape(end_token)}|\Z", True, end_token, ("|\\Z close",)),
        lambda: Delim(f"{re.escape(end_token)}|$", True, end_token, ("|$ close",)),
        lambda: Delim(r"\Z", True, "", ("\\Z close",)),
        lambda: Delim("$", True, "", ("$ close",)),
    ]
    return rng.choices(forms, [6, 2, 2, 1, 1])[0]()


def _tool_calls(rng: random.Random, tools: ToolFormat, calls: int) -> _Part:
    spec = {**tools.open.spec("open"), **tools.close.spec("close"), **tools.spec}
    close_text = tools.close.text
    pieces: list[Piece] = []
    if tools.listed:
        items: list[Piece] = []
        for k in range(calls):
            items += [*([tools.separator] if k else []), *tools.call(*CALLS[k % len(CALLS)])]
        pieces += [tools.open.text, "[", *items, "]", close_text]
    else:
        for k in range(calls):
            name, text_key, number_key = CALLS[k % len(CALLS)]
            pieces += [*([tools.separator] if k else []), tools.open.text.format(name=name)]
            pieces += [*tools.call(name, text_key, number_key), close_text]
    regions = 1 if tools.listed else calls
    return _Part("tool_calls", spec, tools.constructs, pieces, regions, [tools.open.text, close_text])


def _extra(rng: random.Random, style: Callable[[str, bool], str]) -> _Part:
    """A typed field some templates add (a confidence score, a flag)."""
    word, content, value = rng.choice(
        [("confidence", "float", "0.75"), ("score", "int", "7"), ("final", "bool", "true")]
    )
    token, end = style(word, False), style(word, True)
    spec = {"open": token, "close": end, "content": content}
    return _Part(word, spec, (f"{content} field",), ["\n", token, value, end], 1, [token, end])


def draw_template(rng: random.Random, index: int) -> UnseenTemplate:
    """One template and its output. Field order: reasoning, tool calls, extra, content (as the bundled ones)."""
    style_name, other_name = rng.sample(sorted(STYLES), 2)
    style, other = STYLES[style_name], STYLES[other_name]
    end_token = rng.choice(END_TOKENS)
    tool_word = rng.choice(TOOL_WORDS)
    tools = tool_format(rng, style(tool_word, False), style(tool_word, True), end_token)
    # A list opened by `^\s*(?=\[)` must start the output: then it is the whole output.
    alone = "start-anchored open" in tools.open.constructs
    tool_lead = _lead(tools.open.text) or style(tool_word, False)
    end = _content_close(rng, end_token, other("end", True))
    if not alone and rng.random() < 0.15:
        content = _explicit_content(rng, style, other)
    else:
        content = _implicit_content(rng, end, prose=not alone)
    explicit = "open" in content.spec or "open_pattern" in content.spec
    next_open = _lead(content.texts[0]) if explicit else tool_lead
    reasoning = _reasoning(rng, style, other, next_open, explicit) if not alone and rng.random() < 0.8 else None
    calls = _tool_calls(rng, tools, rng.randint(1, 3))
    extra = _extra(rng, style) if not alone and rng.random() < 0.1 else None
    parts = [p for p in (reasoning, calls, extra, content) if p is not None]
    pieces: list[Piece] = []
    for part in (reasoning, content, calls, extra):  # the order the model writes them
        if part is not None:
            pieces += part.pieces
    if not alone:
        pieces.append(end.text)
    template: dict[str, Any] = {"defaults": {"role": "assistant"}, "fields": {p.name: p.spec for p in parts}}
    anchor = rng.choice(ANCHORS)
    constructs = [f"{style_name} tokens"]
    if rng.random() < 0.3:
        template["start_anchor_pattern"] = re.escape(anchor).replace("\\\n", r"\s*")
        constructs.append("pattern start anchor")
    else:
        template["start_anchor"] = anchor
    for part in parts:
        constructs += part.constructs
    texts = [text for part in parts for text in part.texts] + [end.text]
    return UnseenTemplate(
        model=f"random-{index:03d}",
        template=template,
        constructs=tuple(dict.fromkeys(constructs)),
        prefix=f"{anchor.replace('assistant', 'user')}What's the weather in Paris?\n{anchor}",
        pieces=pieces,
        regions={p.name: p.regions for p in parts if p.regions},
        implicit=None if explicit or alone else "content",
        prose=_prose(texts),
    )


def _prose(delimiter_texts: list[str]) -> str:
    """RICH_FILLER and WHITESPACE_PROSE with near misses of this template's delimiters between paragraphs:
    the first half of the token each delimiter text starts with, then a space (half: no whole token
    inside a longer lead such as `<start_of_call>functions.`)."""
    leads = [_lead(t) for t in delimiter_texts]
    near = [lead[: len(lead) // 2 + 1] + " " for lead in leads if len(lead) >= 3]
    paragraphs = RICH_FILLER.split("\n\n") + WHITESPACE_PROSE.split("\n\n\n")
    out: list[str] = []
    for index, paragraph in enumerate(paragraphs):
        out.append(paragraph)
        if near:
            out.append(" " + near[index % len(near)])
        out.append("\n\n")
    return "".join(out)


def random_templates(count: int = COUNT, seed: int = SEED) -> list[UnseenTemplate]:
    """`count` templates drawn from `seed` (the same ones every time), each one transformers loads.
    (That each output gives the regions it was written with is tests/plan/test_unseen_templates.py's check.)"""
    rng = random.Random(seed)
    found: list[UnseenTemplate] = []
    while len(found) < count:
        candidate = draw_template(rng, len(found))
        try:
            load_response_template(candidate.template)
        except ValueError:
            continue
        found.append(candidate)
    return found
