"""Grammars for constrained decoding, from a template's grammar skeleton and a request's
tools.

The skeleton (`rtcompile.grammars.skeleton`; a literal table in a generated module)
holds what the template fixes and what was checked against the parser: per parser
state the free text allowed there and the delimiters out of it, and how a tool call is
written.
This module adds the tools and the request's options and writes the grammar as
llguidance Lark (argument schemas as `%json`), llama.cpp GBNF, or an xgrammar structural
tag. Standard library only: it is lifted into generated modules.

Every region returns to the parser's state 0, so a message is a regular sequence of
segments (free text, a delimiter, a region, ...): the segments form a small automaton
whose nodes are (parser state, characters the next text may not start with, whether a
call was made), turned into one expression by state elimination. Expressions are plain
tuples:

    ("lit", text)                     a fixed text
    ("re", regex)                     a regular text (the skeleton's regex form)
    ("lead", lang, banned, options)   free text, then one of options: (regex, rest)
    ("text", lang, banned)            free text that ends the message
    ("json", schema, ws, strings)     a JSON value valid for `schema`
    ("seq", items) ("alt", items) ("rep", item, min, max) ("rule", name, item)

`lang` indexes the skeleton's free-text languages; `banned` are characters the text may
not start with. In Lark, free text and the delimiter after it are one terminal:
llguidance's lexer takes the longest match and never backs up, so text that could go on
into the delimiter must carry it.
"""

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from rtcompile.runtime.coercion import coerce_value, schema_types
from rtcompile.runtime.content import (
    _CALL_LIST_NAME,  # names a Python call list can hold
)
from rtcompile.runtime.engine import StreamingParser
from rtcompile.runtime.protocol import tool_schemas

FORMATS = ("lark", "gbnf", "structural-tag")
EMPTY: tuple[Any, ...] = ("seq", ())
NOTHING: tuple[Any, ...] = ("set", ())
MAX_CODE_POINT = 0x10FFFF
# JSON numbers the grammar writes: integers of at most 15 digits (exact as doubles, far
# below Python's int-string limit), fractions of at most 15 digits.
NUMBER_LIMIT = 10**15 - 1
_DIGITS = ("set", ((48, 57),))
_INTEGER = (
    "seq",
    (
        ("rep", ("lit", "-"), 0, 1),
        (
            "alt",
            (("lit", "0"), ("seq", (("set", ((49, 57),)), ("rep", _DIGITS, 0, 14)))),
        ),
    ),
)
_NUMBER = (
    "seq",
    (_INTEGER, ("rep", ("seq", (("lit", "."), ("rep", _DIGITS, 1, 15))), 0, 1)),
)
_BARE_KEY = re.compile(r"[A-Za-z0-9_]+")
# Schema keywords a grammar honours, and those it may ignore (they constrain nothing it
# writes).
_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "items",
        "enum",
        "const",
        "anyOf",
        "minItems",
        "maxItems",
    }
)
_ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "$comment",
        "nullable",
        "additionalProperties",
        "$schema",
    }
)


class GrammarError(ValueError):
    """The request (tools, options, prompt) or the template has no grammar."""


def parser_grammar(
    parser: StreamingParser,
    skeleton: dict[str, Any],
    tools: Iterable[Any],
    *,
    tool_choice: Any,
    parallel_tool_calls: bool,
    format: str,
) -> str:
    """The grammar of what `parser` (fed its prompt, nothing else) reads next, for
    `tools` (JSON schemas, or Python functions the parser converts)."""
    start = parser.grammar_start()
    if start is None:
        raise GrammarError(
            "the prompt ends in text a delimiter may still claim: no grammar starts "
            "there"
        )
    return build_grammar(
        skeleton,
        tool_schemas(tools, parser._program.function_schema),
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
        start=start,
        format=format,
    )


def build_grammar(
    skeleton: dict[str, Any],
    tools: Iterable[Any],
    *,
    tool_choice: Any = "auto",
    parallel_tool_calls: bool = True,
    start: tuple[int, bool] = (0, True),
    format: str = "lark",
) -> str:
    """The grammar text for `tools`. `start` is (the parser state after the prompt,
    whether the message is still empty there). Raises GrammarError for what has no
    grammar."""
    refused = skeleton["refused"]
    if refused:
        where = ".".join(str(part) for part in refused["path"])
        message = refused["message"]
        raise GrammarError(f"{where}: {message}" if where else message)
    if format not in FORMATS:
        raise GrammarError(
            f"unknown grammar format {format!r} (one of: {', '.join(FORMATS)})"
        )
    table = tool_table(tools)
    mode, names = _choice(tool_choice, table, skeleton)
    message = _Message(skeleton, table, mode, names, parallel_tool_calls)
    expression = message.expression(*start)
    if format == "lark":
        return _Lark(skeleton).grammar(expression)
    if format == "gbnf":
        return _Gbnf(skeleton).grammar(expression)
    return json.dumps(
        {"type": "structural_tag", "format": _Structural(skeleton).format(expression)},
        ensure_ascii=False,
    )


def tool_table(tools: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Tool name -> its parameters schema, for tools given as JSON schemas (wrapped in
    `{"type": "function", "function": ...}` or bare)."""
    table: dict[str, dict[str, Any]] = {}
    for index, tool in enumerate(tools):
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise GrammarError(
                f"tools[{index}]: a tool is a JSON schema with a function name"
            )
        parameters = function.get("parameters")
        if parameters is None:
            parameters = {"type": "object", "properties": {}}
        if not isinstance(parameters, dict):
            raise GrammarError(
                f"tools[{index}]: parameters must be a JSON schema object"
            )
        table[function["name"]] = parameters
    return table


def _choice(
    tool_choice: Any, table: dict[str, Any], skeleton: dict[str, Any]
) -> tuple[str, list[str]]:
    """("none" | "auto" | "required", the tools that may be called)."""
    if isinstance(tool_choice, dict):
        function = tool_choice.get("function")
        tool_choice = function.get("name") if isinstance(function, dict) else None
    if tool_choice in ("none", "auto", "required"):
        mode, names = str(tool_choice), list(table)
    elif isinstance(tool_choice, str) and tool_choice in table:
        mode, names = "required", [tool_choice]
    else:
        raise GrammarError(
            f"tool_choice {tool_choice!r} is not auto, required, none or a declared "
            "tool"
        )
    if mode == "required" and (skeleton["call"] is None or not names):
        raise GrammarError(
            "tool_choice needs a call, but the template has no tool-call field or no "
            "tool is given"
        )
    if skeleton["call"] is None or not names:
        mode = "none"
    return mode, names


# --------------------------------------------------------------------------- the
# message


class _Message:
    """The message as an automaton of segments, turned into one expression."""

    def __init__(
        self,
        skeleton: dict[str, Any],
        table: dict[str, Any],
        mode: str,
        names: list[str],
        parallel: bool,
    ) -> None:
        self.sk = skeleton
        self.table = table
        self.mode = mode
        self.names = names
        self.call = skeleton["call"]
        # Parallel calls are items of one region's list, or regions of a field that
        # repeats (a field that does not repeat keeps only its last region: one call
        # region at most).
        self.parallel = parallel
        self.regions = (
            parallel
            and self.call is not None
            and self.call["repeats"]
            and not self.call["list"]
        )
        # Whether a call was made matters for `required` and for "at most one call
        # region".
        self.phases = mode == "required" or (mode == "auto" and not self.regions)
        self.nodes: list[tuple[Any, ...]] = []
        # (from, to) -> labels; to == -1: the end
        self.edges: dict[tuple[int, int], list[Any]] = {}
        self.bodies: dict[Any, Any] = {}

    def expression(self, state: int, at_start: bool) -> Any:
        if self.call is not None and state == self.call["state"]:
            raise GrammarError(
                "the prompt ends inside a tool call: no grammar starts there"
            )
        if state >= len(self.sk["states"]):
            raise GrammarError(f"no parser state {state}")
        self._node((state, (), 0, at_start))
        done = 0
        while done < len(self.nodes):
            self._expand(done)
            done += 1
        return _eliminate(len(self.nodes), self.edges)

    def _node(self, key: tuple[Any, ...]) -> int:
        if key not in self.nodes:
            self.nodes.append(key)
        return self.nodes.index(key)

    def _edge(self, source: int, key: tuple[Any, ...] | None, label: Any) -> None:
        target = -1 if key is None else self._node(key)
        self.edges.setdefault((source, target), []).append(label)

    def _may_end(self, phase: int) -> bool:
        return self.mode != "required" or phase == 1

    def _may_call(self, phase: int) -> bool:
        return self.mode != "none" and (phase == 0 or self.regions)

    def _expand(self, index: int) -> None:
        state, banned, phase, at_start = self.nodes[index]
        if state == "call":
            self._after_call(index, phase)
            return
        info = self.sk["states"][state]
        textless = (
            at_start and not info["start_text"]
        )  # a `^` delimiter matches at once
        if at_start:
            banned = _union(banned, info["start_banned"])
        leads: dict[tuple[Any, int | None], list[tuple[Any, Any]]] = {}
        for exit_ in info["exits"]:
            if exit_["at_start"] and not at_start:
                continue
            for variant in exit_["variants"]:
                then, final = _split_end(variant["written"])
                lang = None if exit_["at_start"] or textless else variant["text"]
                options = self._exits(exit_, then, final, phase, variant["split"])
                for lead_re, key, rest in options:
                    leads.setdefault((key, lang), []).append((lead_re, rest))
                if (
                    variant["final_text"] is not None
                    and then is not None
                    and self._may_end(phase)
                    and not textless
                ):
                    leads.setdefault((None, variant["final_text"]), []).append(
                        (then, EMPTY)
                    )
        allowed = _complement(banned)
        for (key, lang), pairs in leads.items():
            if lang is None:
                for lead_re, rest in pairs:
                    self._edge(index, key, ("seq", (("re", lead_re), rest)))
                continue
            self._edge(index, key, ("lead", lang, banned, tuple(pairs)))
            if not banned:
                continue
            # Text after `banned` is written non-empty (its first character is the one
            # checked), so a delimiter right after the last one is a way of its own:
            # one starting with an allowed character (`<|python_tag|>` first where a
            # `^(?=\[)` open bans `[`; `</tool_calls><end_of_sentence>` after `\s*`).
            for lead_re, rest in pairs:
                first = starting(lead_re, allowed)
                if first != NOTHING:
                    self._edge(index, key, ("seq", (("re", first), rest)))
        if self._may_end(phase):
            end = EMPTY if textless else ("text", info["end_text"], banned)
            if banned and end != EMPTY:  # the output may end right after the delimiter
                end = _alt([EMPTY, end])
            self._edge(index, None, end)

    def _exits(
        self,
        exit_: dict[str, Any],
        then: Any,
        final: Any,
        phase: int,
        split: bool = False,
    ) -> list[tuple[Any, Any, Any]]:
        """(regex written, the node it leads to (None: the end), what follows it) per
        way out."""
        call = self.call
        out: list[tuple[Any, Any, Any]] = []
        if (
            call is not None
            and exit_["field"] == call["field"]
            and exit_["kind"] == "open"
        ):
            if not self._may_call(phase):
                return out
            after = ("call", (), 1 if self.phases else 0, False)
            if call["name"][0] == "capture" and then is not None:
                slot = ("slot", call["name"][1])
                items = then[1] if then[0] == "seq" else (then,)
                at = items.index(slot) if split else 0
                head = ("seq", items[:at])
                calls = []
                for name in self.names:
                    self._check_name(name)
                    named = _fill(("seq", items[at:]), {slot[1]: ("lit", name)})
                    body = self._body(name, exit_["not_next"])
                    calls.append(
                        ("seq", (("re", named), body)) if split else (named, body)
                    )
                if split:  # the delimiter up to the name, then one of the tools
                    out.append((head, after, _alt(calls)))
                else:
                    out += [(named, after, body) for named, body in calls]
            elif then is not None:
                out.append((then, after, self._body(None, exit_["not_next"])))
            return out
        next_state = exit_["then"]
        if then is not None:
            out.append(
                (then, (next_state, tuple(exit_["not_next"]), phase, False), EMPTY)
            )
        if final is not None and self._may_end(phase):
            out.append((final, None, EMPTY))
        return out

    def _after_call(self, index: int, phase: int) -> None:
        call = self.call
        assert call is not None
        trail = _space(call["trail"])
        for exit_ in self.sk["states"][call["state"]]["exits"]:
            for variant in exit_["variants"]:
                then, final = _split_end(variant["written"])
                if then is not None:
                    key = (exit_["then"], tuple(exit_["not_next"]), phase, False)
                    self._edge(index, key, ("re", ("seq", (trail, then))))
                if final is not None and self._may_end(phase):
                    self._edge(index, None, ("re", ("seq", (trail, final))))
        if (
            call["end_ok"] or not self.sk["states"][call["state"]]["exits"]
        ) and self._may_end(phase):
            self._edge(index, None, EMPTY)

    def _check_name(self, name: str) -> None:
        rows = self.call["name_rows"] if self.call else None
        if rows is not None and not rows_accept(rows, classes(self.sk), name):
            raise GrammarError(
                f"tool name {name!r} cannot be written where the template's open "
                "delimiter names it"
            )

    # -- call bodies

    def _body(self, name: str | None, not_next: Any) -> Any:
        key = (name, tuple(not_next))
        if key not in self.bodies:
            self.bodies[key] = (
                "rule",
                f"call_{len(self.bodies)}",
                self._write_body(name, not_next),
            )
        return self.bodies[key]

    def _write_body(self, name: str | None, not_next: Any) -> Any:
        call = self.call
        assert call is not None
        lead = "".join(c for c in call["lead"] if not _member(not_next, ord(c)))
        syntax = call["syntax"]
        writer = _Writer(call, self.table, self.sk)
        if syntax == "xml-inline":
            assert name is not None
            return writer.xml_arguments(name, not_next)
        if syntax == "python-call-list":
            body = writer.listed(
                [writer.python_call(n) for n in self.names], self.parallel
            )
        elif name is not None:
            body = writer.arguments(name)
        else:
            objects = [writer.call_object(n) for n in self.names]
            body = (
                writer.listed(objects, self.parallel) if call["list"] else _alt(objects)
            )
        return ("seq", (("re", _space(lead)), body)) if lead else body


def _space(chars: str) -> Any:
    if not chars:
        return EMPTY
    return (
        "rep",
        ("set", tuple(sorted((ord(c), ord(c)) for c in set(chars)))),
        0,
        None,
    )


# --------------------------------------------------------------------------- arguments


class _Writer:
    """Tool calls and their arguments, in the template's argument syntax."""

    def __init__(
        self, call: dict[str, Any], table: dict[str, Any], skeleton: dict[str, Any]
    ) -> None:
        self.call = call
        self.table = table
        self.texts = skeleton["texts"]
        self.classes = classes(skeleton)
        self.ws = call["ws"]
        self.banned = call["banned"]

    def _w(self) -> Any:
        return ("re", _space(self.ws)) if self.ws else EMPTY

    def _punct(self, text: str) -> Any:
        return ("seq", (self._w(), ("lit", text), self._w()))

    def _value(self, cleaned: dict[str, Any]) -> Any:
        if self.call["syntax"] == "json-dialect":
            return self._dialect_value(cleaned)
        return ("json", cleaned, self.ws, self.banned)

    def arguments(self, name: str) -> Any:
        where = f"tools.{name}.parameters"
        return self._value(_arguments_schema(self.table[name], where, self.banned))

    def call_object(self, name: str) -> Any:
        """A JSON object with the call's name and arguments under the keys the transform
        reads (in either order)."""
        name_key, args_key = self.call["name"][1], self.call["arguments"][1]
        where = f"tools.{name}.parameters"
        for text in (name, name_key, args_key):
            _json_text(text, self.banned)
        members = {
            name_key: {"enum": [name]},
            args_key: _arguments_schema(self.table[name], where, self.banned),
        }
        orders = []
        for first, second in ((name_key, args_key), (args_key, name_key)):
            orders.append(
                self._value(
                    {
                        "type": "object",
                        "properties": {first: members[first], second: members[second]},
                        "required": [first, second],
                        "additionalProperties": False,
                    }
                )
            )
        return _alt(orders)

    def listed(self, items: list[Any], parallel: bool) -> Any:
        """`[` items `]`: at least one, at most one unless calls may be parallel."""
        if not items:
            raise GrammarError("no tool can be called")
        item = _alt(items)
        flat = [j for i in items for j in (i[1] if i[0] == "alt" else (i,))]
        if self.call["syntax"] == "json" and all(i[0] == "json" for i in flat):
            schemas = [i[1] for i in flat]
            schema: dict[str, Any] = {
                "type": "array",
                "items": {"anyOf": schemas},
                "minItems": 1,
            }
            if not parallel:
                schema["maxItems"] = 1
            return ("json", schema, self.ws, self.banned)
        more = (
            ("rep", ("seq", (self._punct(","), item)), 0, None) if parallel else EMPTY
        )
        return ("seq", (("lit", "["), self._w(), item, more, self._w(), ("lit", "]")))

    def python_call(self, name: str) -> Any:
        if _CALL_LIST_NAME.fullmatch(name) is None:
            raise GrammarError(
                f"tool name {name!r} is not a name a Python call list can hold"
            )
        where = f"tools.{name}.parameters"
        cleaned = _arguments_schema(self.table[name], where, self.banned)
        props, required = cleaned["properties"], cleaned["required"]
        members = []
        for key, sub in props.items():
            if _CALL_LIST_NAME.fullmatch(key) is None:
                raise GrammarError(
                    f"{where}: parameter {key!r} is not a keyword a Python call can "
                    "take"
                )
            value = _json_expression(sub, self.ws, self.banned, python=True)
            members.append(
                (("seq", (("lit", key), self._punct("="), value)), key in required)
            )
        body = _member_list(members, self._punct(","))
        return ("seq", (("lit", name), self._punct("("), body, self._punct(")")))

    # -- JSON with bare keys and custom-delimited strings

    def _dialect_value(self, schema: dict[str, Any]) -> Any:
        if "anyOf" in schema:
            return _alt([self._dialect_value(s) for s in schema["anyOf"]])
        if "enum" in schema:
            return _alt([self._dialect_literal(v) for v in schema["enum"]])
        kind = schema["type"]
        if kind == "object":
            members = []
            for key, sub in schema["properties"].items():
                member = (
                    "seq",
                    (
                        self._dialect_key(key),
                        self._punct(":"),
                        self._dialect_value(sub),
                    ),
                )
                members.append((member, key in schema["required"]))
            return (
                "seq",
                (
                    ("lit", "{"),
                    self._w(),
                    _member_list(members, self._punct(",")),
                    self._w(),
                    ("lit", "}"),
                ),
            )
        if kind == "array":
            return _array(
                self._dialect_value(schema["items"]),
                schema,
                self._w(),
                self._punct(","),
            )
        if kind == "string":
            opener, closer, lang = self.call["delims"]
            return (
                "seq",
                (("lit", opener), ("lead", lang, (), ((("lit", closer), EMPTY),))),
            )
        return _scalar(kind)

    def _dialect_key(self, key: str) -> Any:
        quoted = _json_text(key, self.banned)
        if self.call["unquoted_keys"] and _BARE_KEY.fullmatch(key):
            return ("alt", (("lit", key), ("lit", quoted)))
        return ("lit", quoted)

    def _dialect_literal(self, value: Any) -> Any:
        if not isinstance(value, str):
            return ("lit", json.dumps(value))
        opener, closer, lang = self.call["delims"]
        if not rows_accept(self.texts[lang]["dfa"], self.classes, value):
            raise GrammarError(
                f"the string {value!r} cannot be written safely inside a tool call of "
                "this template"
            )
        return ("lit", opener + value + closer)

    # -- xml-inline

    def xml_arguments(self, name: str, not_next: Any) -> Any:
        where = f"tools.{name}.parameters"
        cleaned = _arguments_schema(self.table[name], where, self.banned)
        props, required = cleaned["properties"], cleaned["required"]
        sep = ("re", self.call["sep"])
        # right after the name, no separator the name's group would take on (`name,` is
        # a name)
        first = starting(self.call["sep"], _complement(not_next))
        lead = [EMPTY] if first == NOTHING else [EMPTY, ("re", first)]
        parts: list[Any] = [_alt(lead)]
        raw = self.table[name].get("properties") or {}
        tags = []
        for key, sub in props.items():
            if not rows_accept(self.call["key"], self.classes, key):
                raise GrammarError(
                    f"{where}: parameter {key!r} cannot be written in the template's "
                    "tags"
                )
            # Tag values are text the parser types by the schema (its first type that
            # reads the text wins): one type (or one and null) leaves no room for
            # another reading.
            types = schema_types(raw[key])
            if len(set(types) - {"null"}) > 1:
                raise GrammarError(
                    f"{where}.{key}: a value of several types has no grammar form in "
                    "tags"
                )
            tags.append((self._xml_tag(key, sub, types), key in required))
        if self.call["apart"] is not None:
            # a tag the next could go on: at least one separator between them (as one
            # lexeme: llguidance's would take every separator into a `sep` before it)
            apart = ("re", ("rep", self.call["apart"], 1, None))
            parts.append(_member_list(tags, apart, sep))
        else:
            for tag, required in tags:
                tag = ("seq", (tag, sep))
                parts.append(tag if required else ("rep", tag, 0, 1))
        return ("seq", tuple(parts))

    def _xml_tag(self, key: str, schema: dict[str, Any], types: Any) -> Any:
        items = self.call["tag"]
        items = items[1] if items[0] == "seq" else (items,)
        at = next(i for i, item in enumerate(items) if item == ("slot", "value"))
        head = _fill(("seq", items[:at]), {"key": ("lit", key)})
        value = self._xml_value(schema, self.call["tail"], types)
        return ("seq", (("re", head), value))

    def _xml_value(self, schema: dict[str, Any], tail: Any, types: Any) -> Any:
        """A value and the rest of its tag; free text and the tag's end are one Lark
        terminal."""
        if "anyOf" in schema:
            return _alt([self._xml_value(s, tail, types) for s in schema["anyOf"]])
        values = self.call["values"]
        if "enum" in schema:
            options = []
            for value in schema["enum"]:
                text = (
                    value
                    if isinstance(value, str) and not self.call["json_values"]
                    else json.dumps(value)
                )
                if not _same(self._xml_reads(text, types), value):
                    raise GrammarError(
                        f"the value {value!r} would not read back from the template's "
                        "tags"
                    )
                fitting = [
                    end
                    for entries in values.values()
                    for end, lang in entries or ()
                    if rows_accept(self.texts[lang]["dfa"], self.classes, text)
                ]
                if not fitting:
                    raise GrammarError(
                        f"the value {value!r} cannot be written in the template's tags"
                    )
                options += [
                    ("re", ("seq", (("lit", text), end)))
                    for end in dict.fromkeys(fitting)
                ]
            return _alt(options)
        kind = schema["type"]
        if kind in ("object", "array"):
            if not self.call["structured"]:
                raise GrammarError(
                    f"an {kind} value cannot be written in the template's tags"
                )
            return ("seq", (("json", schema, " \t", self.banned), ("re", tail)))
        entries = values.get(kind)
        if not entries:
            raise GrammarError(
                f"a {kind} value cannot be written in the template's tags"
            )
        return _alt([("lead", lang, (), ((end, EMPTY),)) for end, lang in entries])

    def _xml_reads(self, text: str, types: Any) -> Any:
        """What the parser makes of a tag's value text, given the tools."""
        value: Any = text
        if self.call["json_values"]:
            try:
                value = json.loads(text)
            except ValueError:
                value = text
        return coerce_value(value, types) if isinstance(value, str) else value


def _same(first: Any, second: Any) -> bool:
    return type(first) is type(second) and bool(first == second)


def _member_list(items: list[tuple[Any, bool]], comma: Any, tail: Any = EMPTY) -> Any:
    """Members in order, separated by `comma`; the optional ones may be left out; `tail`
    after the last one written, if any.

    One way per first member written (any up to the first required one), each followed
    by the rest, a comma before each. The rests a way shares with the next are rules
    (Lark and GBNF print each once; a structural tag, which has no references, grows
    with the square of the members). Before, the members from here on, with and without
    something written before them, each held the next twice: the grammar doubled per
    optional member (83 MB of Lark for a Python call of 16 optional parameters)."""
    required_at = [k for k, (_, required) in enumerate(items) if required]
    optional = required_at[0] if required_at else len(items)  # the first required one
    rest: list[Any] = [tail] * (len(items) + 1)  # members k.. after something written
    for k in range(len(items) - 1, -1, -1):
        member, required = items[k]
        step = ("seq", (comma, member))
        rest[k] = ("seq", (step if required else ("rep", step, 0, 1), rest[k + 1]))
        if 2 <= k <= optional + 1:  # (named by an object of its own: no rule shares it)
            rest[k] = ("rule", object(), rest[k])
    starts = []
    for k, (member, required) in enumerate(items):
        starts.append(("seq", (member, rest[k + 1])))
        if required:
            break
    else:
        starts.append(EMPTY)
    return _alt(starts)


def _array(item: Any, schema: dict[str, Any], space: Any, comma: Any) -> Any:
    low, high = schema.get("minItems", 0), schema.get("maxItems")
    if high == 0:
        body: Any = EMPTY
    else:
        more: Any = (
            "rep",
            ("seq", (comma, item)),
            max(low - 1, 0),
            None if high is None else high - 1,
        )
        body = ("seq", (item, more if high != 1 else EMPTY))
        if low == 0:
            body = ("rep", body, 0, 1)
    return ("seq", (("lit", "["), space, body, space, ("lit", "]")))


def _scalar(kind: str) -> Any:
    if kind == "integer":
        return ("re", _INTEGER)
    if kind == "number":
        return ("re", _NUMBER)
    if kind == "boolean":
        return ("alt", (("lit", "true"), ("lit", "false")))
    return ("lit", "null")


def _json_text(text: str, banned: Any) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    if "\\u" in encoded or any(_member(banned, ord(c)) for c in text):
        raise GrammarError(
            f"the string {text!r} cannot be written safely inside a tool call of this "
            "template"
        )
    return encoded


# --------------------------------------------------------------------------- schemas


def _object_schema(schema: Any, where: str) -> dict[str, Any]:
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise GrammarError(f"{where}: tool parameters must be an object schema")
    return schema


def _properties(schema: dict[str, Any], where: str) -> tuple[dict[str, Any], list[str]]:
    props = schema.get("properties") or {}
    required = schema.get("required") or []
    if not isinstance(props, dict) or not isinstance(required, list):
        raise GrammarError(f"{where}: properties must be an object and required a list")
    for name in required:
        if name not in props:
            raise GrammarError(
                f"{where}: required parameter {name!r} is not among the properties"
            )
    return props, required


def _clean_schema(schema: Any, where: str, banned: Any) -> dict[str, Any]:
    """`schema` rebuilt from the keywords a grammar honours, every string kept free of
    `banned` characters (a pattern), numbers bounded; what it cannot honour is a
    GrammarError."""
    if not isinstance(schema, dict):
        raise GrammarError(f"{where}: a schema must be an object")
    for key in schema:
        if key not in _KEYWORDS and key not in _ANNOTATIONS:
            raise GrammarError(
                f"{where}: the schema keyword {key!r} has no grammar form"
            )
    if "enum" in schema or "const" in schema:
        values = schema["enum"] if "enum" in schema else [schema["const"]]
        if not isinstance(values, list) or not values:
            raise GrammarError(f"{where}: enum must be a non-empty list")
        for value in values:
            if isinstance(value, str):
                _json_text(value, banned)
            elif not (
                value is None or isinstance(value, (bool, int, float))
            ) or not _fits(value):
                raise GrammarError(
                    f"{where}: the enum value {value!r} has no grammar form"
                )
        return {"enum": list(values)}
    if "anyOf" in schema:
        return {
            "anyOf": [
                _clean_schema(s, f"{where}.anyOf[{i}]", banned)
                for i, s in enumerate(schema["anyOf"])
            ]
        }
    declared = schema.get("type")
    types = (
        [declared]
        if isinstance(declared, str)
        else list(declared or ["string", "number", "boolean", "null"])
    )
    if schema.get("nullable") and "null" not in types:
        types.append("null")
    variants = [_typed_schema(kind, schema, where, banned) for kind in types]
    return variants[0] if len(variants) == 1 else {"anyOf": variants}


def _typed_schema(
    kind: Any, schema: dict[str, Any], where: str, banned: Any
) -> dict[str, Any]:
    if kind == "object":
        props, required = _properties(schema, where)
        for key in props:
            _json_text(key, banned)
        return {
            "type": "object",
            "properties": {
                k: _clean_schema(v, f"{where}.{k}", banned) for k, v in props.items()
            },
            "required": list(required),
            "additionalProperties": False,
        }
    if kind == "array":
        out: dict[str, Any] = {
            "type": "array",
            "items": _clean_schema(schema.get("items", {}), f"{where}.items", banned),
        }
        for bound in ("minItems", "maxItems"):
            if bound in schema:
                if not isinstance(schema[bound], int) or schema[bound] < 0:
                    raise GrammarError(f"{where}: {bound} must be a count")
                out[bound] = schema[bound]
        return out
    if kind == "string":
        string: dict[str, Any] = {"type": "string"}
        # control characters never stand raw in a JSON string (they are escaped): no
        # need to ban them
        visible = _minus(banned, ((0, 31),))
        if visible:
            string["pattern"] = (
                "^[^" + "".join(_pattern_range(lo, hi) for lo, hi in visible) + "]*$"
            )
        return string
    if kind in ("integer", "number"):
        return {"type": kind, "minimum": -NUMBER_LIMIT, "maximum": NUMBER_LIMIT}
    if kind in ("boolean", "null"):
        return {"type": kind}
    raise GrammarError(f"{where}: the type {kind!r} has no grammar form")


def _arguments_schema(schema: Any, where: str, banned: Any) -> dict[str, Any]:
    """A tool's parameters, cleaned. An argument may not be both a string and an object
    or array: the parser, given the tools, reads a string argument that looks like JSON
    as the object."""
    props, _ = _properties(_object_schema(schema, where), where)
    schema = {**schema, "type": "object"}
    for key, sub in props.items():
        kinds = set(_argument_types(sub))
        if "string" in kinds and kinds & {"object", "array"}:
            raise GrammarError(
                f"{where}.{key}: a string that may also be an object or array has no "
                "grammar form"
            )
    return _clean_schema(schema, where, banned)


def _argument_types(schema: Any) -> list[str]:
    """The types the parser's argument typing reads in a schema
    (`coercion.schema_types`)."""
    if not isinstance(schema, dict):
        return []
    declared = schema.get("type")
    types = (
        [declared]
        if isinstance(declared, str)
        else [t for t in declared or [] if isinstance(t, str)]
    )
    for choice in schema.get("anyOf") or []:
        types += _argument_types(choice)
    return types


def _fits(value: Any) -> bool:
    return (
        not isinstance(value, (int, float))
        or isinstance(value, bool)
        or abs(value) <= NUMBER_LIMIT
    )


def _pattern_range(lo: int, hi: int) -> str:
    def one(point: int) -> str:
        if point > 0xFFFF:
            raise GrammarError(
                "a character outside the Basic Multilingual Plane has no string "
                "pattern form"
            )
        return f"\\u{point:04x}"

    return one(lo) if lo == hi else f"{one(lo)}-{one(hi)}"


# ---------------------------------------------------------------------------
# expressions


def _alt(items: list[Any]) -> Any:
    return items[0] if len(items) == 1 else ("alt", tuple(items))


def _union(first: Any, second: Any) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted([*first, *second]):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def _member(ranges: Any, point: int) -> bool:
    return any(lo <= point <= hi for lo, hi in ranges)


def _complement(ranges: Any) -> tuple[tuple[int, int], ...]:
    out, low = [], 0
    for lo, hi in _union(ranges, ()):
        if lo > low:
            out.append((low, lo - 1))
        low = max(low, hi + 1)
    if low <= MAX_CODE_POINT:
        out.append((low, MAX_CODE_POINT))
    return tuple(out)


def classes(skeleton: dict[str, Any]) -> list[tuple[tuple[int, int], ...]]:
    """The skeleton's character classes (written as hexadecimal ranges, "30-39 5f"), as
    ranges."""
    return [
        tuple(
            (int(lo, 16), int(hi or lo, 16))
            for lo, _, hi in (item.partition("-") for item in text.split())
        )
        for text in skeleton["classes"]
    ]


def rows_accept(rows: dict[str, Any], classes: list[Any], text: str) -> bool:
    """Whether a DFA in the skeleton's form (moves on indices into `classes`) accepts
    `text`."""
    state = 0
    for char in text:
        for target, ranges in rows["rows"][state]:
            if _member(classes[ranges], ord(char)):
                state = target
                break
        else:
            return False
    return state in rows["accept"]


def starting(node: Any, allowed: Any) -> Any:
    """The non-empty texts of a regex that start with an `allowed` character (NOTHING if
    none)."""
    kind = node[0]
    if kind == "lit":
        return node if node[1] and _member(allowed, ord(node[1][0])) else NOTHING
    if kind == "set":
        kept = _minus(node[1], _complement(allowed))
        return ("set", kept) if kept else NOTHING
    if kind == "end":
        return node
    if kind == "alt":
        options = [starting(item, allowed) for item in node[1]]
        kept = tuple(o for o in options if o != NOTHING)
        return ("alt", kept) if kept else NOTHING
    if kind == "seq":
        items = node[1]
        if not items:
            return NOTHING
        options = [("seq", (starting(items[0], allowed), *items[1:]))]
        if options[0][1][0] == NOTHING:
            options = []
        if _nullable(items[0]):
            options.append(starting(("seq", items[1:]), allowed))
        kept = tuple(o for o in options if o != NOTHING)
        return ("alt", kept) if kept else NOTHING
    if kind == "rep":
        body, low, high = node[1], node[2], node[3]
        first = starting(body, allowed)
        if high == 0 or first == NOTHING:
            return NOTHING
        # no repeat of nothing after the first ({0,0} is an error to llguidance)
        if high == 1:
            return first
        more = ("rep", body, max(low - 1, 0), None if high is None else high - 1)
        return ("seq", (first, more))
    raise GrammarError(f"no regex form for {kind!r} at the start of a delimiter")


def _nullable(node: Any) -> bool:
    kind = node[0]
    if kind == "lit":
        return not node[1]
    if kind in ("set", "end", "slot"):
        return False
    if kind == "seq":
        return all(_nullable(item) for item in node[1])
    if kind == "alt":
        return any(_nullable(item) for item in node[1])
    return bool(node[2] == 0 or _nullable(node[1]))


def _split_end(node: Any) -> tuple[Any, Any]:
    """(`node` without the texts that need the output to end, those texts without the
    end)."""
    if node == ("end",):
        return None, EMPTY
    if node[0] == "alt":
        cont, final = [], []
        for item in node[1]:
            c, f = _split_end(item)
            if c is not None:
                cont.append(c)
            if f is not None:
                final.append(f)
        return (("alt", tuple(cont)) if cont else None), (
            ("alt", tuple(final)) if final else None
        )
    if node[0] == "seq" and node[1]:
        head, last = node[1][:-1], node[1][-1]
        c, f = _split_end(last)
        return (None if c is None else ("seq", (*head, c))), (
            None if f is None else ("seq", (*head, f))
        )
    if node[0] == "rep" and _split_end(node[1])[1] is not None:
        raise GrammarError("a repeated end anchor has no grammar form")
    return node, None


def _fill(node: Any, slots: dict[str, Any]) -> Any:
    if node[0] == "slot":
        return slots[node[1]]
    if node[0] in ("seq", "alt"):
        return (node[0], tuple(_fill(item, slots) for item in node[1]))
    if node[0] == "rep":
        return ("rep", _fill(node[1], slots), node[2], node[3])
    return node


def _eliminate(count: int, edges: dict[tuple[int, int], list[Any]]) -> Any:
    """The expression of an automaton from node 0 to the end (-1), by state elimination
    (the segment automaton, a free-text DFA). The node eliminated next is the one whose
    elimination copies the least (its labels' sizes times the paths they go on), so
    the expression stays small: a DFA's chain of states spelling a delimiter is taken
    from its far end, each state's label nested once in its predecessor's, not copied
    into every longer path."""
    graph = {key: _alt(labels) for key, labels in edges.items()}
    size = {key: _size(label) for key, label in graph.items()}
    ins: dict[int, set[int]] = {}
    outs: dict[int, set[int]] = {}
    for a, b in graph:
        outs.setdefault(a, set()).add(b)
        ins.setdefault(b, set()).add(a)
    left = set(range(1, count))
    while left:
        node = min(left, key=lambda n: (_copies(n, ins, outs, size), n))
        left.discard(node)
        loop = graph.pop((node, node), None)
        loop_size = size.pop((node, node), 0)
        sources = sorted(ins.pop(node, set()) - {node})
        targets = sorted(outs.pop(node, set()) - {node}, key=lambda b: (b < 0, b))
        middle = EMPTY if loop is None else ("rep", loop, 0, None)
        for a in sources:
            outs[a].discard(node)
        for b in targets:
            ins[b].discard(node)
        for a in sources:
            into, into_size = graph.pop((a, node)), size.pop((a, node))
            for b in targets:
                path: Any = ("seq", (into, middle, graph[(node, b)]))
                path_size = into_size + loop_size + size[(node, b)]
                if (a, b) in graph:
                    path = ("alt", (graph[(a, b)], path))
                    path_size += size[(a, b)]
                graph[(a, b)], size[(a, b)] = path, path_size
                outs[a].add(b)
                ins.setdefault(b, set()).add(a)
        for b in targets:
            del graph[(node, b)], size[(node, b)]
    loop = graph.get((0, 0))
    final = graph.get((0, -1))
    if final is None:
        raise GrammarError("no message can be written with these options")
    return final if loop is None else ("seq", (("rep", loop, 0, None), final))


def _copies(
    node: int,
    ins: dict[int, set[int]],
    outs: dict[int, set[int]],
    size: dict[tuple[int, int], int],
) -> int:
    """How much eliminating `node` would copy: each label into it once per way out,
    each label out of it once per way in, its loop once per pair."""
    sources = ins.get(node, set()) - {node}
    targets = outs.get(node, set()) - {node}
    copied = sum(size[(a, node)] for a in sources) * (len(targets) - 1)
    copied += sum(size[(node, b)] for b in targets) * (len(sources) - 1)
    return copied + size.get((node, node), 0) * (len(sources) * len(targets) - 1)


def _size(e: Any) -> int:
    """An expression's printed size, roughly: its leaves (a rule counts once)."""
    if e[0] in ("seq", "alt"):
        return sum(_size(item) for item in e[1]) or 1
    if e[0] == "rep":
        return _size(e[1])
    return 1


# --------------------------------------------------------------------------- printing


class _Rules:
    """Rule naming shared by the Lark and GBNF printers: one rule per `rule` node, per
    free text."""

    def __init__(
        self, skeleton: dict[str, Any], dfa_texts: dict[Any, Any] | None = None
    ) -> None:
        self.texts = skeleton["texts"]
        self.classes = classes(skeleton)
        self.lines: list[str] = []
        self.names: dict[Any, str] = {}
        self.defined: set[str] = set()
        # free texts as expressions, by (language, banned): worked out once per grammar
        # (a structural tag's printers share them)
        self.dfa_texts = {} if dfa_texts is None else dfa_texts

    def dfa_text(self, lang: int, banned: Any) -> str:
        """A free text spelled out from its DFA (`_dfa_expression`): its parts' rules
        first, each after those it refers to, then its expression."""
        key = (lang, tuple(banned))
        if key not in self.dfa_texts:
            text = _dfa_expression(self.texts[lang]["dfa"], self.classes, banned)
            self.dfa_texts[key] = _as_rules(text)
        text, parts = self.dfa_texts[key]
        for part in parts:
            self.expr(part)
        return self.expr(text)

    defines = ":"  # what stands between a rule's name and its body
    wraps_repeats = False  # whether a repeated item is put in parentheses
    expr: Callable[[Any], str]  # each printer's expression writer

    def rule_body(self, key: Any, body: str) -> str:
        """A rule's body as written (`key`: the rule's own, from its expression)."""
        return body

    def named(self, key: Any, make: Any) -> str:
        if key not in self.names:
            self.names[key] = make(len(self.names))
        return self.names[key]

    def structure(self, e: Any) -> str:
        """A rule, sequence, alternative or repeat: written alike in both formats."""
        kind = e[0]
        if kind == "rule":
            name = self.named(("rule", e[1]), lambda i: f"r{i}")
            if name not in self.defined:
                self.defined.add(name)
                body = self.rule_body(e[1], self.expr(e[2]))
                self.lines.append(f"{name}{self.defines} {body}")
            return name
        if kind == "seq":
            items = [self.expr(i) for i in e[1] if i != EMPTY]
            return "(" + " ".join(items) + ")" if items else '""'
        if kind == "alt":
            return "(" + " | ".join(self.expr(i) for i in e[1]) + ")"
        if kind == "rep":
            item = self.expr(e[1])
            item = f"({item})" if self.wraps_repeats else item
            return f"{item}{_quantifier(e[2], e[3])}"
        raise GrammarError(f"cannot print {kind!r}")


class _Lark(_Rules):
    """llguidance's Lark. Free text whose delimiters are literals is an `&`/`~` terminal
    fused with the delimiter after it (llguidance's lexer takes the longest match and
    never backs up, so text that could go on into the delimiter must carry it); other
    free text (its `~` terminals would cost llguidance's lexer too much) is spelled out
    from its DFA (`_dfa_expression`), each character a lexeme, with the delimiter after
    it also a character at a time (then no lexeme can be taken on over the delimiter's
    first characters)."""

    def grammar(self, expression: Any) -> str:
        start = self.expr(expression)
        return "\n".join(["%llguidance {}", f"start: {start}", *self.lines]) + "\n"

    def expr(self, e: Any) -> str:
        kind = e[0]
        if kind == "lit":
            return json.dumps(e[1], ensure_ascii=False) if e[1] else '""'
        if kind == "re":
            return '""' if e[1] == EMPTY else f"/{lark_regex(e[1])}/"
        if kind == "text":
            return self.text(e[1], e[2])
        if kind == "lead":
            return self.lead(e[1], e[2], e[3])
        if kind == "json":
            schema = dict(e[1])
            ws = e[2]
            schema["x-guidance"] = (
                {"whitespace_pattern": "[" + "".join(_escape(c) for c in ws) + "]*"}
                if ws
                else {"whitespace_flexible": False}
            )
            return "%json " + json.dumps(schema, ensure_ascii=False)
        return self.structure(e)

    def lead(self, lang: int, banned: Any, pairs: Any) -> str:
        text = self.text(lang, banned)
        fused = self.texts[lang]["lark"] is not None
        options = []
        for lead_re, rest in pairs:
            if fused:
                head = self.named(("fused", text, lead_re), lambda i: f"T{i}")
                if head not in self.defined:
                    self.lines.append(f"{head}: {text} /{lark_regex(lead_re)}/")
                    self.defined.add(head)
            else:
                head = _split_regex(lead_re)
            options.append(f"({head} {self.expr(rest)})" if rest != EMPTY else head)
        choice = "(" + " | ".join(options) + ")"
        return choice if fused else f"({text} {choice})"

    def text(self, lang: int, banned: Any) -> str:
        terminal = self.texts[lang]["lark"]

        def make(index: int) -> str:
            if terminal is None:
                return self.dfa(f"text{index}", lang, banned)
            name = f"TEXT{index}"
            text = terminal
            if banned:  # not empty, and not starting with a banned character
                text += f" & ~/{lark_regex(('set', tuple(banned)))}(?s:.*)/ & /(?s:.+)/"
            self.lines.append(f"{name}: {text}")
            return name

        return self.named(("text", lang, tuple(banned)), make)

    def dfa(self, name: str, lang: int, banned: Any) -> str:
        self.lines.append(f"{name}: {self.dfa_text(lang, banned)}")
        return name


def _split_regex(node: Any) -> str:
    """A regex as Lark items one character each (see `_Lark`)."""
    kind = node[0]
    if kind == "lit":
        return " ".join(json.dumps(c, ensure_ascii=False) for c in node[1]) or '""'
    if kind == "set":
        return f"/{lark_regex(node)}/"
    if kind == "seq":
        return (
            "(" + " ".join(_split_regex(i) for i in node[1]) + ")" if node[1] else '""'
        )
    if kind == "alt":
        return "(" + " | ".join(_split_regex(i) for i in node[1]) + ")"
    if kind == "rep":
        return f"({_split_regex(node[1])}){_quantifier(node[2], node[3])}"
    raise GrammarError(f"no regex form for {kind!r}")


class _Gbnf(_Rules):
    """llama.cpp GBNF (also xgrammar's EBNF): free text as a rule of its DFA's
    expression, a character class at a time.

    llguidance reads GBNF through a converter that makes a rule referring to no
    recursive rule one lexeme; its lexer, greedy, would then take a delimiter's first
    characters into the text before it and never give them back (no text could be
    followed by `<|user|>`). Free text and its parts carry an alternative that matches
    nothing, `never`, a recursive rule: they stay rules, read a character at a time."""

    defines = " ::="
    wraps_repeats = True
    guarded = False  # whether a rule refers to `never`

    def grammar(self, expression: Any, root: str = "root") -> str:
        start = self.expr(expression)
        lines = [f"{root} ::= {start}", *self.lines]
        if self.guarded:  # a class of no character, then itself: taken by no text
            lines.append(f"never ::= {_gbnf_class(())} never")
        return "\n".join(lines) + "\n"

    def guard(self, body: str) -> str:
        self.guarded = True
        return f"{body} | never"

    def rule_body(self, key: Any, body: str) -> str:
        text_part = isinstance(key, tuple) and key[0] == "text part"
        return self.guard(body) if text_part else body

    def expr(self, e: Any) -> str:
        kind = e[0]
        if kind == "lit":
            return _gbnf_literal(e[1])
        if kind == "re":
            return _gbnf_regex(e[1])
        if kind == "text":
            return self.text(e[1], e[2])
        if kind == "lead":
            text = self.text(e[1], e[2])
            # The delimiter one character at a time: a reader that lexes (llguidance's,
            # through its GBNF converter) then never takes a literal on from the free
            # text's last characters.
            options = [
                " ".join(
                    p
                    for p in (
                        _gbnf_regex(lead_re, split=True),
                        self.expr(rest) if rest != EMPTY else "",
                    )
                    if p
                )
                for lead_re, rest in e[3]
            ]
            return f"{text} ({' | '.join(options)})"
        if kind == "json":
            return self.expr(_json_expression(e[1], e[2], e[3]))
        return self.structure(e)

    def text(self, lang: int, banned: Any) -> str:
        def make(index: int) -> str:
            name = f"text{index}"
            text = self.dfa_text(lang, banned)
            self.lines.append(f"{name} ::= {self.guard(text)}")
            return name

        return self.named(("text", lang, tuple(banned)), make)


def _dfa_expression(rows: dict[str, Any], classes: list[Any], banned: Any) -> Any:
    """A free-text DFA (the skeleton's form) as an expression with no recursion: its
    states eliminated (`_eliminate`), loops as repeats, a character class per lexeme
    (a run as one lexeme would be taken on, greedily, over the characters of a
    delimiter that follows). With `banned`, the text is not empty and starts with none
    of them.

    Written as a rule per state, each move to another state a call of that state's
    rule, every character that leaves a state and comes back to it (a `<` in text that
    avoids `<tool_call>`) was one call deeper until the text ended; an Earley parser
    (llguidance, also reading GBNF) keeps every open call in each row where the text
    may end, so a mask cost time growing with the text (seconds a byte inside a call's
    tags), and past 2,000 items a row llguidance gave up. Repeats keep its rows as
    small as the expression."""
    moves = [[(target, classes[c]) for target, c in row] for row in rows["rows"]]
    entry = [(target, _minus(ranges, banned)) for target, ranges in moves[0]]
    # node 0: the entry; the DFA's state s: node s + 1; -1: the end
    chars: dict[tuple[int, int], Any] = {}
    for source, row in [*enumerate(moves, 1), (0, entry if banned else [])]:
        for target, ranges in row:
            key = (source, target + 1)
            chars[key] = _union(chars.get(key, ()), ranges)
    labels = {key: [("re", ("set", c))] for key, c in chars.items() if c}
    for state in rows["accept"]:
        labels[(state + 1, -1)] = [EMPTY]
    if not banned:
        labels[(0, 1)] = [EMPTY]
    try:
        return _eliminate(len(moves) + 1, labels)
    except GrammarError:  # no text at all (no accepting state, every entry banned)
        return ("re", NOTHING)


# How deep a text's expression nests before a part of it becomes a rule of its own:
# llguidance refuses a rule nested past about 30 parentheses.
MAX_NESTING = 8


def _as_rules(text: Any) -> tuple[Any, list[Any]]:
    """`text` (an expression whose paths share parts, as elimination leaves it) with
    each part it holds more than once, or nested deeper than MAX_NESTING, made a rule:
    printed once, and no rule nested past what llguidance reads. Also those rules, each
    after the rules it refers to (printed in that order, no printing recurses deeper
    than one rule). Walked with a stack and by identity: a shared part is walked once
    (walking every path anew takes exponential time), and a long delimiter's chain of
    states does not recurse hundreds deep."""
    uses: dict[int, int] = {}
    order: list[Any] = []  # every part, after its own parts
    stack: list[tuple[Any, bool]] = [(text, False)]
    while stack:
        e, walked = stack.pop()
        if walked:
            order.append(e)
            continue
        uses[id(e)] = uses.get(id(e), 0) + 1
        if uses[id(e)] == 1:
            stack.append((e, True))
            stack += [(part, False) for part in _parts(e)]
    done: dict[int, tuple[Any, int, int]] = {}  # id: (rewritten, depth, size)
    rules: list[Any] = []
    for e in order:
        parts = [done[id(part)] for part in _parts(e)]
        depth = 1 + max((d for _, d, _ in parts), default=-1)
        size = sum(n for _, _, n in parts) or 1
        out = e
        if e[0] in ("seq", "alt"):
            out = (e[0], tuple(part for part, _, _ in parts))
        elif e[0] == "rep":
            out = ("rep", parts[0][0], e[2], e[3])
        shared = uses[id(e)] > 1 and size > 2
        if e is not text and (shared or depth > MAX_NESTING):
            out = ("rule", ("text part", object()), out)
            rules.append(out)
            depth, size = 0, 1
        done[id(e)] = (out, depth, size)
    return done[id(text)][0], rules


def _parts(e: Any) -> tuple[Any, ...]:
    if e[0] in ("seq", "alt"):
        return tuple(e[1])
    return (e[1],) if e[0] == "rep" else ()


def _minus(ranges: Any, banned: Any) -> tuple[tuple[int, int], ...]:
    return _complement(_union(_complement(ranges), banned))


class _Structural:
    """xgrammar's structural tag: the expression as nested formats; free text and
    regular parts as `grammar` formats (GBNF, which xgrammar's EBNF reads), arguments as
    `json_schema` where any JSON whitespace is safe."""

    def __init__(self, skeleton: dict[str, Any]) -> None:
        self.sk = skeleton
        self.ws_free = bool(skeleton["call"] and skeleton["call"]["ws_free"])
        self.dfa_texts: dict[Any, Any] = {}  # (each `grammar` format's printer's)

    def format(self, e: Any) -> dict[str, Any]:
        kind = e[0]
        if kind == "lit":
            return {"type": "const_string", "value": e[1]}
        if kind in ("re", "text"):
            return self._grammar(e)
        if kind == "lead":
            options = [self._pair(lead_re, rest) for lead_re, rest in e[3]]
            choice = (
                options[0] if len(options) == 1 else {"type": "or", "elements": options}
            )
            return {
                "type": "sequence",
                "elements": [self._grammar(("text", e[1], e[2])), choice],
            }
        if kind == "json":
            if self.ws_free and e[2] == self.sk["call"]["ws"]:
                return {"type": "json_schema", "json_schema": e[1]}
            return self._grammar(e)
        if kind == "rule":
            return self.format(e[2])
        if kind == "seq":
            items = [self.format(i) for i in e[1] if i != EMPTY]
            if not items:
                return {"type": "const_string", "value": ""}
            return (
                items[0] if len(items) == 1 else {"type": "sequence", "elements": items}
            )
        if kind == "alt":
            return {"type": "or", "elements": [self.format(i) for i in e[1]]}
        if kind == "rep":
            content = self.format(e[1])
            low, high = e[2], e[3]
            if (low, high) == (0, None):
                return {"type": "star", "content": content}
            if (low, high) == (1, None):
                return {"type": "plus", "content": content}
            if (low, high) == (0, 1):
                return {"type": "optional", "content": content}
            return {
                "type": "repeat",
                "min": low,
                "max": -1 if high is None else high,
                "content": content,
            }
        raise GrammarError(f"cannot print {kind!r}")

    def _pair(self, lead_re: Any, rest: Any) -> dict[str, Any]:
        head = self._grammar(("re", lead_re))
        return (
            head
            if rest == EMPTY
            else {"type": "sequence", "elements": [head, self.format(rest)]}
        )

    def _grammar(self, e: Any) -> dict[str, Any]:
        grammar = _Gbnf(self.sk, self.dfa_texts).grammar(e)
        return {"type": "grammar", "grammar": grammar}


def _json_expression(
    schema: dict[str, Any], ws: str, banned: Any, python: bool = False
) -> Any:
    """A cleaned schema (`_clean_schema`) as an expression: JSON text for GBNF and
    structural tags, or (`python`) a Python call list's value: strings in either quotes,
    True/False/None as well."""
    space: Any = ("re", _space(ws)) if ws else EMPTY
    comma = ("seq", (space, ("lit", ","), space))
    if "anyOf" in schema:
        return _alt([_json_expression(s, ws, banned, python) for s in schema["anyOf"]])
    if "enum" in schema:
        return _alt(
            [("lit", json.dumps(v, ensure_ascii=False)) for v in schema["enum"]]
        )
    kind = schema["type"]
    if kind == "object":
        members = []
        for key, sub in schema["properties"].items():
            value = _json_expression(sub, ws, banned, python)
            member = (
                "seq",
                (("lit", _json_text(key, banned)), space, ("lit", ":"), space, value),
            )
            members.append((member, key in schema["required"]))
        return (
            "seq",
            (("lit", "{"), space, _member_list(members, comma), space, ("lit", "}")),
        )
    if kind == "array":
        return _array(
            _json_expression(schema["items"], ws, banned, python), schema, space, comma
        )
    if kind == "string":
        quotes = "\"'" if python else '"'
        return _alt([("re", _quoted(quote, banned, python)) for quote in quotes])
    if python and kind in ("boolean", "null"):
        words = (
            ("true", "false", "True", "False")
            if kind == "boolean"
            else ("null", "None")
        )
        return _alt([("lit", word) for word in words])
    return _scalar(kind)


def _quoted(quote: str, banned: Any, python: bool = False) -> Any:
    """A string between `quote`s with JSON's escapes (no \\u; a Python call list's \\'
    too), holding no character of `banned`."""
    plain = _complement(_union(((0, 31), (ord(quote), ord(quote)), (92, 92)), banned))
    letters = "\"'\\bfnrt" if python else '"\\bfnrt'
    escapes = tuple((ord(c), ord(c)) for c in letters if not _member(banned, ord(c)))
    char = (
        "alt",
        (("set", plain), ("seq", (("lit", "\\"), ("set", _union(escapes, ()))))),
    )
    return ("seq", (("lit", quote), ("rep", char, 0, None), ("lit", quote)))


def _quantifier(low: int, high: int | None) -> str:
    if (low, high) == (0, None):
        return "*"
    if (low, high) == (1, None):
        return "+"
    if (low, high) == (0, 1):
        return "?"
    return f"{{{low},}}" if high is None else f"{{{low},{high}}}"


def _escape(c: str) -> str:
    """One character in a Rust (llguidance) regex, between Lark's slashes."""
    if c.isprintable() and c not in "\\/.+*?()|[]{}^$#&-~ ":
        return c
    return f"\\x{{{ord(c):x}}}"


def lark_regex(node: Any) -> str:
    """A regex in llguidance's (Rust) syntax."""
    kind = node[0]
    if kind == "lit":
        return "".join(_escape(c) for c in node[1]) if node[1] else "(?:)"
    if kind == "set":
        if not node[1]:
            return "[^\\x{0}-\\x{10ffff}]"
        return (
            "["
            + "".join(
                (
                    _escape(chr(lo))
                    if lo == hi
                    else f"{_escape(chr(lo))}-{_escape(chr(hi))}"
                )
                for lo, hi in node[1]
            )
            + "]"
        )
    if kind == "seq":
        return (
            "".join(
                f"(?:{lark_regex(i)})" if i[0] == "alt" else lark_regex(i)
                for i in node[1]
            )
            if node[1]
            else "(?:)"
        )
    if kind == "alt":
        return "(?:" + "|".join(lark_regex(i) for i in node[1]) + ")"
    if kind == "rep":
        return f"(?:{lark_regex(node[1])}){_quantifier(node[2], node[3])}"
    raise GrammarError(f"no regex form for {kind!r}")


def _gbnf_char(point: int) -> str:
    if point >= 0x10000:
        return chr(
            point
        )  # llguidance's GBNF reader has no \U escape; llama.cpp reads the character
    return f"\\x{point:02X}" if point < 0x100 else f"\\u{point:04X}"


def _gbnf_literal(text: str) -> str:
    if not text:
        return '""'
    return (
        '"'
        + "".join(
            (
                c
                if c.isascii() and c.isalnum() or c in " _-:;,.=<>/|!?()[]{}@#$%&*+~'"
                else _gbnf_char(ord(c))
            )
            for c in text
        )
        + '"'
    )


def _gbnf_class(ranges: Any) -> str:
    if not ranges:
        return "[^\\x00-" + chr(MAX_CODE_POINT) + "]"
    return (
        "["
        + "".join(
            _gbnf_char(lo) if lo == hi else f"{_gbnf_char(lo)}-{_gbnf_char(hi)}"
            for lo, hi in ranges
        )
        + "]"
    )


def _gbnf_regex(node: Any, split: bool = False) -> str:
    kind = node[0]
    if kind == "lit":
        if split and len(node[1]) > 1:
            return "(" + " ".join(_gbnf_literal(c) for c in node[1]) + ")"
        return _gbnf_literal(node[1])
    if kind == "set":
        return _gbnf_class(node[1])
    if kind == "seq":
        return (
            "(" + " ".join(_gbnf_regex(i, split) for i in node[1]) + ")"
            if node[1]
            else '""'
        )
    if kind == "alt":
        return "(" + " | ".join(_gbnf_regex(i, split) for i in node[1]) + ")"
    if kind == "rep":
        return f"({_gbnf_regex(node[1], split)}){_quantifier(node[2], node[3])}"
    raise GrammarError(f"no GBNF form for {kind!r}")
