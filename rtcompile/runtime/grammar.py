"""Grammars for constrained decoding, from a template's grammar skeleton and a request's tools.

The skeleton (`rtcompile.grammar.skeleton`, a literal table in a generated module) says what the
template fixes: per parser state the free text allowed there and the delimiters out of it, and how a
tool call is written. This module adds the tools and the request's options and writes the grammar as
llguidance Lark (argument schemas as `%json`) or llama.cpp GBNF. Standard library only: it is lifted
into generated modules.

Expressions are plain tuples: ("lit", text), ("re", regex), ("lang", language), ("ref", rule),
("seq", items), ("alt", items), ("rep", item, min, max), ("json", schema); regexes are the
skeleton's (`automata` module docstring), a language is {"bases", "avoid", "prefixes", "dfa"}.
"""

import json
from collections.abc import Iterable
from typing import Any

EMPTY_SEQ: tuple[Any, ...] = ("seq", ())
JSON_INT_LIMIT = 15  # digits: integers stay exact doubles, and int() never refuses them


class GrammarError(ValueError):
    """The request (tools, options, prompt) or the template has no grammar."""


# --------------------------------------------------------------------------- entry point


def build_grammar(
    skeleton: dict[str, Any],
    tools: Iterable[Any],
    *,
    tool_choice: Any = "auto",
    parallel_tool_calls: bool = True,
    start: tuple[int, bool] = (0, True),
    format: str = "lark",
) -> str:
    """The grammar text. `start` is (parser state after the prompt, whether the message is still
    empty). Raises GrammarError for what has no grammar form."""
    refused = skeleton.get("refused")
    if refused:
        where = ".".join(str(p) for p in refused["path"])
        raise GrammarError(f"{where}: {refused['message']}")
    if format not in ("lark", "gbnf"):
        raise GrammarError(f"unknown grammar format {format!r} (lark, gbnf)")
    table = _tool_table(tools)
    choice = _choice(tool_choice, table, skeleton)
    builder = _Frame(skeleton, table, choice, parallel_tool_calls, format)
    builder.build(*start)
    return builder.text()


def _tool_table(tools: Iterable[Any]) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for index, tool in enumerate(tools):
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise GrammarError(f"tools[{index}]: a tool needs a function name")
        parameters = function.get("parameters")
        table[function["name"]] = parameters if isinstance(parameters, dict) else {}
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
            f"tool_choice {tool_choice!r} is not auto, required, none or a declared tool"
        )
    if mode != "none" and not names:
        mode = "none" if mode == "auto" else mode
    if mode == "required" and (skeleton["call"] is None or not names):
        raise GrammarError(
            "tool_choice requires a call, but the template has no tool-call field or no tool is given"
        )
    if skeleton["call"] is None:
        mode = "none"
    return mode, names


# --------------------------------------------------------------------------- the frame


class _Frame:
    """Rules for the message: one per (parser state, whether a call was made, entry)."""

    def __init__(
        self,
        skeleton: dict[str, Any],
        table: dict[str, Any],
        choice: tuple[str, list[str]],
        parallel: bool,
        fmt: str,
    ) -> None:
        self.sk = skeleton
        self.table = table
        self.mode, self.names = choice
        self.parallel = parallel
        self.fmt = fmt
        self.rules: dict[str, Any] = {}
        self.langs: list[tuple[str, dict[str, Any]]] = []
        self.call = skeleton["call"]
        self.call_state = -1
        if self.call is not None:
            self.call_state = next(
                i
                for i, s in enumerate(skeleton["states"])
                if s["field"] == self.call["field"]
            )

    def build(self, state: int, at_start: bool) -> None:
        if state == self.call_state:
            raise GrammarError(
                "the prompt ends inside a tool call: no grammar starts there"
            )
        if state >= len(self.sk["states"]):
            raise GrammarError(f"no parser state {state}")
        self.rules["start"] = self._state_body(state, 0, None, at_start)

    def _state_rule(self, state: int, phase: int, entry: Any) -> tuple[str, ...]:
        key = f"s{state}p{phase}" + ("" if entry is None else f"e{entry[0]}x{entry[1]}")
        if key not in self.rules:
            self.rules[key] = EMPTY_SEQ  # reserve (recursion)
            self.rules[key] = self._state_body(state, phase, entry, False)
        return ("ref", key)

    def _state_body(self, state: int, phase: int, entry: Any, at_start: bool) -> Any:
        info = self.sk["states"][state]
        text = info["first_text"] if at_start else info["text"]
        if entry is not None:
            text = self.sk["states"][entry[0]]["exits"][entry[1]]["next_text"] or text
        choices: list[Any] = []
        if self.mode != "required" or phase == 1:
            choices.append(EMPTY_SEQ)
        for index, exit_ in enumerate(info["exits"]):
            if exit_["at_start"] and not at_start:
                continue
            if exit_["field"] == (self.call["field"] if self.call else -1):
                choices += self._call_exit(state, index, exit_, phase)
                continue
            cont, final = _split_end(exit_["emit"])
            then_entry = (state, index) if exit_["next_text"] else None
            if cont is not None:
                choices.append(
                    (
                        "seq",
                        (
                            ("re", cont),
                            self._state_rule(exit_["then"], phase, then_entry),
                        ),
                    )
                )
            if final is not None and (self.mode != "required" or phase == 1):
                choices.append(("re", final))
        rest = ("alt", tuple(choices))
        if text is None:
            return rest
        return ("seq", (("lang", text), rest))

    # -- calls

    def _call_exit(
        self, state: int, index: int, exit_: dict[str, Any], phase: int
    ) -> list[Any]:
        call = self.call
        assert call is not None
        if self.mode == "none" or (
            phase == 1 and not (self.parallel and call["repeats"])
        ):
            return []
        close_exits = self.sk["states"][self.call_state]["exits"]
        after: list[Any] = []
        for close_index, close in enumerate(close_exits):
            cont, final = _split_end(close["emit"])
            entry = (self.call_state, close_index) if close["next_text"] else None
            if cont is not None:
                after.append(
                    ("seq", (("re", cont), self._state_rule(close["then"], 1, entry)))
                )
            if final is not None:
                after.append(("re", final))
        if call["end_ok"] or not close_exits:
            after.append(EMPTY_SEQ)
        tail = ("alt", tuple(after))
        lead = self._lead(exit_)
        if call["name"][0] == "capture":
            alternatives = []
            for name in self.names:
                self._check_name(name)
                opened = ("re", _fill(exit_["emit"], {call["name"][1]: name}))
                alternatives.append(
                    ("seq", (opened, lead, self._arguments(name, top=True), tail))
                )
            return alternatives
        return [("seq", (("re", exit_["emit"]), lead, self._calls_body(), tail))]

    def _lead(self, exit_: dict[str, Any]) -> Any:
        """Whitespace allowed before the body (none where it could extend the open delimiter)."""
        call = self.call
        assert call is not None
        banned = {
            chr(c)
            for lo, hi in exit_["not_next"]
            for c in range(lo, min(hi, lo + 64) + 1)
        }
        ws = "".join(c for c in call["ws"] if c not in banned)
        if call["starts_with"] is not None or not ws or call["syntax"] == "xml-inline":
            return EMPTY_SEQ
        return _ws(ws)

    def _check_name(self, name: str) -> None:
        pattern = self.call["name_pattern"] if self.call else None
        if pattern is not None and not _regex_accepts(pattern, name):
            raise GrammarError(
                f"tool name {name!r} cannot be written where the template's open delimiter captures it"
            )

    def _calls_body(self) -> Any:
        call = self.call
        assert call is not None
        if call["syntax"] == "python-call-list":
            item = ("alt", tuple(self._python_call(name) for name in self.names))
        else:
            item = ("alt", tuple(self._call_object(name) for name in self.names))
        if not call["list"] and call["syntax"] != "python-call-list":
            return item
        w = _ws(call["ws"])
        more = (
            "rep",
            ("seq", (w, ("lit", ","), w, item)),
            0,
            None if self.parallel else 0,
        )
        return ("seq", (("lit", "["), w, item, more, w, ("lit", "]")))

    def _call_object(self, name: str) -> Any:
        call = self.call
        assert call is not None
        w = _ws(call["ws"])
        name_member = (
            "seq",
            (
                self._key(call["name"][1]),
                w,
                ("lit", ":"),
                w,
                self._string_literal(name),
            ),
        )
        args_member = (
            "seq",
            (
                self._key(call["arguments"][1]),
                w,
                ("lit", ":"),
                w,
                self._arguments(name, top=False),
            ),
        )
        orders = []
        for first, second in ((name_member, args_member), (args_member, name_member)):
            orders.append(
                (
                    "seq",
                    (
                        ("lit", "{"),
                        w,
                        first,
                        w,
                        ("lit", ","),
                        w,
                        second,
                        w,
                        ("lit", "}"),
                    ),
                )
            )
        return ("alt", tuple(orders))

    def _python_call(self, name: str) -> Any:
        if not _python_name(name):
            raise GrammarError(
                f"tool name {name!r} is not a name a Python call list can hold"
            )
        w = _ws(self.call["ws"] if self.call else "")
        return (
            "seq",
            (
                ("lit", name),
                w,
                ("lit", "("),
                w,
                self._members(self.table[name], "python", f"tools.{name}"),
                w,
                ("lit", ")"),
            ),
        )

    # -- arguments

    def _arguments(self, name: str, *, top: bool) -> Any:
        call = self.call
        assert call is not None
        schema = self.table[name]
        where = f"tools.{name}.parameters"
        syntax = call["syntax"]
        if syntax == "xml-inline":
            return self._xml_arguments(schema, where)
        if syntax == "json" and self.fmt == "lark":
            return ("json", _json_schema(schema, self, where))
        return _value(schema, self, syntax, where, object_only=True)

    def _members(self, schema: dict[str, Any], syntax: str, where: str) -> Any:
        props, required = _properties(schema, where)
        w = _ws(self.call["ws"] if self.call else "")
        items = []
        for key, sub in props.items():
            if syntax == "python":
                if not _python_name(key):
                    raise GrammarError(
                        f"{where}: parameter {key!r} is not a keyword a Python call can take"
                    )
                k = ("lit", key)
                sep = "="
            else:
                k = self._key(key)
                sep = ":"
            items.append(
                (
                    (
                        "seq",
                        (
                            k,
                            w,
                            ("lit", sep),
                            w,
                            _value(sub, self, syntax, f"{where}.{key}"),
                        ),
                    ),
                    key in required,
                )
            )
        return _member_list(items, ("seq", (w, ("lit", ","), w)))

    def _xml_arguments(self, schema: dict[str, Any], where: str) -> Any:
        call = self.call
        assert call is not None
        props, required = _properties(schema, where)
        sep = ("re", call["sep"])
        parts: list[Any] = [sep]
        for key, sub in props.items():
            if not _lang_accepts(call["key"], key):
                raise GrammarError(
                    f"{where}: parameter {key!r} cannot be written in the template's tags"
                )
            value = _xml_value(sub, call, f"{where}.{key}", self)
            tag = _fill_expr(call["tag"], {"key": ("lit", key), "value": value})
            item = ("seq", (tag, sep))
            parts.append(item if key in required else ("rep", item, 0, 1))
        return ("seq", tuple(parts))

    def _key(self, key: str) -> Any:
        call = self.call
        assert call is not None
        quoted = self._string_literal(key)
        if (
            call.get("unquoted_keys")
            and _python_name(key)
            and "." not in key
            and "-" not in key
        ):
            return ("alt", (quoted, ("lit", key)))
        return quoted

    def _string_literal(self, text: str) -> Any:
        call = self.call
        assert call is not None
        encoded = json.dumps(text, ensure_ascii=False)
        if "\\u" in encoded or not _lang_accepts(call["string"], encoded[1:-1]):
            raise GrammarError(
                f"the string {text!r} cannot be written safely inside a tool call of this template"
            )
        return ("lit", encoded)

    # -- output

    def text(self) -> str:
        return _Printer(self.fmt).grammar(self.rules)


def _member_list(items: list[tuple[Any, bool]], comma: Any) -> Any:
    """Members in order, the optional ones may be left out, separated by `comma`."""
    # following[i]: the members from i on when something was written before them
    following: Any = EMPTY_SEQ
    first: Any = EMPTY_SEQ
    for member, required in reversed(items):
        with_comma = ("seq", (comma, member, following))
        new_following = with_comma if required else ("alt", (with_comma, following))
        leading = ("seq", (member, following))
        first = leading if required else ("alt", (leading, first))
        following = new_following
    return first


def _properties(schema: dict[str, Any], where: str) -> tuple[dict[str, Any], list[str]]:
    if not isinstance(schema, dict):
        raise GrammarError(f"{where}: a schema must be an object")
    if schema.get("type", "object") != "object":
        raise GrammarError(f"{where}: tool parameters must be an object schema")
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


_ANNOTATIONS = {
    "description",
    "title",
    "default",
    "examples",
    "$comment",
    "format",
    "nullable",
    "additionalProperties",
    "$schema",
}
_SUPPORTED = {
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


def _types(schema: Any, where: str) -> list[str]:
    if not isinstance(schema, dict):
        raise GrammarError(f"{where}: a schema must be an object")
    for key in schema:
        if key not in _SUPPORTED and key not in _ANNOTATIONS:
            raise GrammarError(
                f"{where}: the schema keyword {key!r} has no grammar form"
            )
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else list(declared or [])
    if schema.get("nullable") and types and "null" not in types:
        types.append("null")
    return types


def _value(
    schema: Any, frame: _Frame, syntax: str, where: str, *, object_only: bool = False
) -> Any:
    """A value valid for `schema`, written in `syntax` (json, json-dialect, python)."""
    types = _types(schema, where)
    if object_only:
        return _object(schema, frame, syntax, where)
    if "enum" in schema or "const" in schema:
        values = schema["enum"] if "enum" in schema else [schema["const"]]
        return ("alt", tuple(_literal_value(v, frame, syntax, where) for v in values))
    if "anyOf" in schema:
        return (
            "alt",
            tuple(
                _value(s, frame, syntax, f"{where}.anyOf[{i}]")
                for i, s in enumerate(schema["anyOf"])
            ),
        )
    if not types:
        types = ["string", "number", "boolean", "null"]
    out = []
    for kind in types:
        if kind == "object":
            out.append(_object(schema, frame, syntax, where))
        elif kind == "array":
            item = _value(schema.get("items", {}), frame, syntax, f"{where}.items")
            w = _ws(frame.call["ws"] if frame.call else "")
            low, high = int(schema.get("minItems", 0)), schema.get("maxItems")
            if low == 0:
                body = (
                    "rep",
                    (
                        "seq",
                        (
                            item,
                            (
                                "rep",
                                ("seq", (w, ("lit", ","), w, item)),
                                0,
                                None if high is None else max(int(high) - 1, 0),
                            ),
                        ),
                    ),
                    0,
                    1,
                )
                if high == 0:
                    body = EMPTY_SEQ
            else:
                body = (
                    "seq",
                    (
                        item,
                        (
                            "rep",
                            ("seq", (w, ("lit", ","), w, item)),
                            low - 1,
                            None if high is None else int(high) - 1,
                        ),
                    ),
                )
            out.append(("seq", (("lit", "["), w, body, w, ("lit", "]"))))
        elif kind == "string":
            out.append(_string_value(frame, syntax))
        elif kind in ("integer", "number"):
            out.append(("re", _NUMBER if kind == "number" else _INTEGER))
        elif kind == "boolean":
            words = ("True", "False") if syntax == "python" else ("true", "false")
            out.append(("alt", (("lit", words[0]), ("lit", words[1]))))
        elif kind == "null":
            out.append(("lit", "None" if syntax == "python" else "null"))
        else:
            raise GrammarError(f"{where}: the type {kind!r} has no grammar form")
    return ("alt", tuple(out))


def _object(schema: Any, frame: _Frame, syntax: str, where: str) -> Any:
    w = _ws(frame.call["ws"] if frame.call else "")
    body = frame._members(schema, "python" if syntax == "python" else "json", where)
    if syntax == "python":
        open_, close = ("lit", "{"), ("lit", "}")
    else:
        open_, close = ("lit", "{"), ("lit", "}")
    return ("seq", (open_, w, body, w, close))


def _string_value(frame: _Frame, syntax: str) -> Any:
    call = frame.call
    assert call is not None
    quoted = ("seq", (("lit", '"'), ("lang", call["string"]), ("lit", '"')))
    if syntax == "json-dialect" and call.get("delims"):
        return (
            "alt",
            (
                quoted,
                *(
                    ("seq", (("lit", o), ("lang", text), ("lit", c)))
                    for o, c, text in call["delims"]
                ),
            ),
        )
    return quoted


def _literal_value(value: Any, frame: _Frame, syntax: str, where: str) -> Any:
    if isinstance(value, str):
        return frame._string_literal(value)
    if syntax == "python":
        if value is None or isinstance(value, bool):
            return ("lit", repr(value))
    if isinstance(value, (bool, int, float)) or value is None:
        return ("lit", json.dumps(value))
    raise GrammarError(f"{where}: the enum value {value!r} has no grammar form")


def _xml_value(schema: Any, call: dict[str, Any], where: str, frame: _Frame) -> Any:
    types = _types(schema, where)
    values = call["values"]
    if "enum" in schema or "const" in schema:
        options = schema["enum"] if "enum" in schema else [schema["const"]]
        out = []
        for option in options:
            text = (
                option
                if isinstance(option, str) and not call["json_values"]
                else json.dumps(option, ensure_ascii=False)
            )
            if not any(
                lang is not None and _lang_accepts(lang, text)
                for lang in values.values()
            ):
                raise GrammarError(
                    f"{where}: the enum value {option!r} cannot be written in the template's tags"
                )
            out.append(("lit", text))
        return ("alt", tuple(out))
    if "anyOf" in schema:
        return (
            "alt",
            tuple(
                _xml_value(s, call, f"{where}.anyOf[{i}]", frame)
                for i, s in enumerate(schema["anyOf"])
            ),
        )
    out = []
    for kind in types or ["string"]:
        lang = values.get(kind)
        if lang is None:
            raise GrammarError(
                f"{where}: a {kind!r} value cannot be written in the template's tags"
            )
        out.append(("lang", lang))
    return ("alt", tuple(out))


def _json_schema(schema: Any, frame: _Frame, where: str) -> dict[str, Any]:
    """The schema for `%json`, rebuilt from what this module supports, with safe strings."""
    call = frame.call
    assert call is not None
    types = _types(schema, where)
    out: dict[str, Any] = {}
    if "enum" in schema or "const" in schema:
        values = schema["enum"] if "enum" in schema else [schema["const"]]
        for value in values:
            if isinstance(value, str):
                frame._string_literal(value)
        return {"enum": list(values)}
    if "anyOf" in schema:
        return {
            "anyOf": [
                _json_schema(s, frame, f"{where}.anyOf[{i}]")
                for i, s in enumerate(schema["anyOf"])
            ]
        }
    if not types:
        types = ["string", "number", "boolean", "null"]
    variants = []
    for kind in types:
        if kind == "object":
            props, required = _properties(schema, where)
            for key in props:
                frame._string_literal(key)
            variants.append(
                {
                    "type": "object",
                    "properties": {
                        k: _json_schema(v, frame, f"{where}.{k}")
                        for k, v in props.items()
                    },
                    "required": list(required),
                    "additionalProperties": False,
                }
            )
        elif kind == "array":
            item: dict[str, Any] = {
                "type": "array",
                "items": _json_schema(schema.get("items", {}), frame, f"{where}.items"),
            }
            for bound in ("minItems", "maxItems"):
                if bound in schema:
                    item[bound] = schema[bound]
            variants.append(item)
        elif kind == "string":
            # %json patterns are plain regexes: strings leave out every character a delimiter of
            # the region can start with (the exact avoidance is in the GBNF form)
            banned = ("set", _complement(call["string"]["first"]))
            variants.append(
                {
                    "type": "string",
                    "pattern": "^"
                    + _Printer("lark").regex(("rep", banned, 0, None))
                    + "$",
                }
            )
        elif kind in ("integer", "number"):
            variants.append(
                {
                    "type": kind,
                    "minimum": -(10**JSON_INT_LIMIT) + 1,
                    "maximum": 10**JSON_INT_LIMIT - 1,
                }
            )
        elif kind in ("boolean", "null"):
            variants.append({"type": kind})
        else:
            raise GrammarError(f"{where}: the type {kind!r} has no grammar form")
    out = variants[0] if len(variants) == 1 else {"anyOf": variants}
    return out


_DIGITS = ("set", ((48, 57),))
_INTEGER = (
    "seq",
    (
        ("rep", ("lit", "-"), 0, 1),
        (
            "alt",
            (
                ("lit", "0"),
                (
                    "seq",
                    (("set", ((49, 57),)), ("rep", _DIGITS, 0, JSON_INT_LIMIT - 1)),
                ),
            ),
        ),
    ),
)
_NUMBER = (
    "seq",
    (
        _INTEGER,
        ("rep", ("seq", (("lit", "."), ("rep", _DIGITS, 1, JSON_INT_LIMIT))), 0, 1),
    ),
)


def _complement(ranges: Any) -> tuple[tuple[int, int], ...]:
    out, low = [], 0
    for lo, hi in sorted(ranges):
        if lo > low:
            out.append((low, lo - 1))
        low = max(low, hi + 1)
    if low <= 0x10FFFF:
        out.append((low, 0x10FFFF))
    return tuple(out)


def _python_name(name: str) -> bool:
    parts = name.replace("-", ".").split(".")
    return all(
        p
        and p.isascii()
        and (p[0].isalpha() or p[0] == "_")
        and p.replace("_", "a").isalnum()
        for p in parts[:1]
    ) and all(p and p.isascii() and p.replace("_", "a").isalnum() for p in parts)


def _ws(chars: str) -> Any:
    if not chars:
        return EMPTY_SEQ
    return (
        "re",
        ("rep", ("set", tuple(sorted((ord(c), ord(c)) for c in chars))), 0, None),
    )


# --------------------------------------------------------------------------- regex helpers


def _split_end(node: Any) -> tuple[Any, Any]:
    """(`node` without the paths that need the output to end, those paths without the end):
    `$` may close the last item of a delimiter, alone or as an alternative."""
    if node == ("end",):
        return None, EMPTY_SEQ
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
        c, f = _split_end(node[1][-1])
        head = node[1][:-1]
        return (None if c is None else ("seq", (*head, c))), (
            None if f is None else ("seq", (*head, f))
        )
    return node, None


def _fill(node: Any, slots: dict[str, str]) -> Any:
    return _fill_expr(node, {k: ("lit", v) for k, v in slots.items()})


def _fill_expr(node: Any, slots: dict[str, Any]) -> Any:
    if node[0] == "slot":
        return slots[node[1]]
    if node[0] in ("seq", "alt"):
        return (node[0], tuple(_fill_expr(item, slots) for item in node[1]))
    if node[0] == "rep":
        return ("rep", _fill_expr(node[1], slots), node[2], node[3])
    return node


def _lang_accepts(lang: dict[str, Any], text: str) -> bool:
    rows, state = lang["dfa"]["rows"], 0
    for char in text:
        point = ord(char)
        for target, ranges in rows[state]:
            if any(lo <= point <= hi for lo, hi in ranges):
                state = target
                break
        else:
            return False
    return state in lang["dfa"]["accept"]


def _regex_accepts(node: Any, text: str) -> bool:
    import re

    return (
        re.fullmatch(_printer_re(node, anchored=False, python=True), text, re.DOTALL)
        is not None
    )


def _printer_re(node: Any, *, anchored: bool, python: bool = False) -> str:
    if isinstance(
        node, dict
    ):  # a language: the regex of its DFA is not needed for %json patterns
        node = _lang_regex(node)
    body = _Printer("python" if python else "lark").regex(node)
    return f"^(?:{body})$" if anchored else body


def _lang_regex(lang: dict[str, Any]) -> Any:
    """A regex for a language, by state elimination over its DFA (small languages only)."""
    rows = lang["dfa"]["rows"]
    accept = set(lang["dfa"]["accept"])
    edges: dict[tuple[int, int], Any] = {(-1, 0): EMPTY_SEQ}
    for s, row in enumerate(rows):
        for target, ranges in row:
            edges[(s, target)] = ("set", tuple(ranges))
        if s in accept:
            edges[(s, -2)] = EMPTY_SEQ
    for k in range(len(rows)):
        loop = edges.pop((k, k), None)
        ins = [(a, r) for (a, b), r in edges.items() if b == k]
        outs = [(b, r) for (a, b), r in edges.items() if a == k]
        for a, _ in ins:
            del edges[(a, k)]
        for b, _ in outs:
            del edges[(k, b)]
        middle = EMPTY_SEQ if loop is None else ("rep", loop, 0, None)
        for a, r_in in ins:
            for b, r_out in outs:
                path = ("seq", (r_in, middle, r_out))
                old = edges.get((a, b))
                edges[(a, b)] = path if old is None else ("alt", (old, path))
    return edges.get((-1, -2), ("set", ()))


# --------------------------------------------------------------------------- printing


class _Printer:
    """Expressions as Lark (llguidance) or GBNF text; regexes in Rust or Python syntax."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.extra: dict[str, str] = {}
        self.lang_names: dict[int, str] = {}

    def grammar(self, rules: dict[str, Any]) -> str:
        lines = []
        if self.fmt == "lark":
            lines.append("%llguidance {}")
        for name, expr in rules.items():
            rule = "root" if (name == "start" and self.fmt == "gbnf") else name.lower()
            lines.append(
                f"{rule}{': ' if self.fmt == 'lark' else ' ::= '}{self.expr(expr)}"
            )
        lines += list(self.extra.values())
        return "\n".join(lines) + "\n"

    def expr(self, e: Any) -> str:
        kind = e[0]
        if kind == "ref":
            return e[1].lower()
        if kind == "lit":
            return json.dumps(e[1], ensure_ascii=False) if e[1] else '""'
        if kind == "re":
            if self.fmt == "lark":
                if e[1] == EMPTY_SEQ:
                    return '""'
                return f"/{self.regex(e[1])}/"
            return self.gbnf_regex(e[1])
        if kind == "lang":
            return self.lang(e[1])
        if kind == "json":
            return "%json " + json.dumps(e[1], ensure_ascii=False)
        if kind == "seq":
            items = [self.expr(i) for i in e[1] if i != EMPTY_SEQ]
            return "(" + " ".join(items) + ")" if items else '""'
        if kind == "alt":
            items = [self.expr(i) for i in e[1]]
            if not items:
                raise GrammarError(
                    "no way to write this part of the message with these options"
                )
            return "(" + " | ".join(items) + ")"
        if kind == "rep":
            return f"{self.expr(e[1])}{_quantifier(e[2], e[3])}"
        raise GrammarError(f"cannot print {kind!r}")

    def lang(self, lang: dict[str, Any]) -> str:
        key = id(lang)
        if key in self.lang_names:
            return self.lang_names[key]
        index = len(self.lang_names)
        if self.fmt == "lark":
            name = f"TEXT{index}"
            parts = [f"/{self.regex(base)}/" for base in lang["bases"]]
            if lang["avoid"] != ("set", ()):
                parts.append(f"~/(?s:.*)(?:{self.regex(lang['avoid'])})(?s:.*)/")
                parts.append(f"~/(?s:.*)(?:{self.regex(lang['prefixes'])})/")
            self.extra[name] = f"{name}: {' & '.join(parts)}"
        else:
            name = f"text{index}"
            for s, row in enumerate(lang["dfa"]["rows"]):
                options = [f"{_gbnf_class(ranges)} {name}-{t}" for t, ranges in row]
                if s in lang["dfa"]["accept"]:
                    options.append('""')
                self.extra[f"{name}-{s}"] = f"{name}-{s} ::= " + (
                    " | ".join(options) if options else _gbnf_class(())
                )
            self.extra[name] = f"{name} ::= {name}-0"
        self.lang_names[key] = name
        return name

    def regex(self, node: Any) -> str:
        kind = node[0]
        if kind == "lit":
            return (
                "".join(_escape_char(c, self.fmt) for c in node[1])
                if node[1]
                else "(?:)"
            )
        if kind == "set":
            if not node[1]:
                return "[^\\x00-\\x{10FFFF}]" if self.fmt != "python" else "(?!)"
            return (
                "[" + "".join(_range_text(lo, hi, self.fmt) for lo, hi in node[1]) + "]"
            )
        if kind == "seq":
            return "".join(self.regex(i) for i in node[1]) if node[1] else "(?:)"
        if kind == "alt":
            return "(?:" + "|".join(self.regex(i) for i in node[1]) + ")"
        if kind == "rep":
            return f"(?:{self.regex(node[1])}){_quantifier(node[2], node[3])}"
        raise GrammarError(f"no regex form for {kind!r}")

    def gbnf_regex(self, node: Any) -> str:
        kind = node[0]
        if kind == "lit":
            return json.dumps(node[1], ensure_ascii=False) if node[1] else '""'
        if kind == "set":
            return _gbnf_class(node[1])
        if kind == "seq":
            return (
                "(" + " ".join(self.gbnf_regex(i) for i in node[1]) + ")"
                if node[1]
                else '""'
            )
        if kind == "alt":
            return "(" + " | ".join(self.gbnf_regex(i) for i in node[1]) + ")"
        if kind == "rep":
            return f"({self.gbnf_regex(node[1])}){_quantifier(node[2], node[3])}"
        raise GrammarError(f"no GBNF form for {kind!r}")


def _quantifier(low: int, high: int | None) -> str:
    if (low, high) == (0, None):
        return "*"
    if (low, high) == (1, None):
        return "+"
    if (low, high) == (0, 1):
        return "?"
    return f"{{{low},}}" if high is None else f"{{{low},{high}}}"


def _escape_char(c: str, fmt: str) -> str:
    if c.isalnum() or c in " _-,:;=\"'<>@#%&~`!":
        return c
    if fmt == "python":
        return f"\\U{ord(c):08x}"
    return f"\\x{{{ord(c):x}}}"


def _range_text(lo: int, hi: int, fmt: str) -> str:
    def one(point: int) -> str:
        return f"\\U{point:08x}" if fmt == "python" else f"\\x{{{point:x}}}"

    return one(lo) if lo == hi else f"{one(lo)}-{one(hi)}"


def _gbnf_class(ranges: Any) -> str:
    def one(point: int) -> str:
        if point >= 0x10000:
            return chr(point)  # llguidance's GBNF reader has no \\U escape
        return f"\\x{point:02X}" if point < 0x100 else f"\\u{point:04X}"

    if not ranges:
        return "[^\\x00-" + chr(0x10FFFF) + "]"
    return (
        "["
        + "".join(one(lo) if lo == hi else f"{one(lo)}-{one(hi)}" for lo, hi in ranges)
        + "]"
    )
