"""How each content parser runs: the function of `rtcompile.runtime.content` a parser's IR calls, and
with which arguments, decided once for both backends.

The interpreter calls that function with these arguments; the code generator writes the same call into a
field's handler (leaving out the arguments equal to the function's defaults, which are the reference's:
`rtcompile.ir.KINDS`). An argument is a plain value (`Value`), a runtime function passed by name
(`RuntimeFunction`: the `unquoted_keys` rewrite, which a generated module holds only when a field uses
it), a nested content parser (`Nested`: the `value_parser` of xml-inline and kv-lines) or a regex
(`TagRegex`: xml-inline's `tag_pattern`, compiled by each backend its own way). A `FailingParser` calls
nothing; each backend raises its error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from rtcompile.errors import JsonPath
from rtcompile.ir import (
    CallingParser,
    ContentParser,
    JsonParser,
    KvLinesParser,
    PythonCallListParser,
    ScalarParser,
    XmlInlineParser,
    unreachable,
)


@dataclass(frozen=True)
class Value:
    """A plain value (a bool, a string, a tuple of pairs), passed as it is."""

    value: object


@dataclass(frozen=True)
class RuntimeFunction:
    """A function of `rtcompile.runtime.content`, passed by name."""

    name: str


@dataclass(frozen=True)
class Nested:
    """A nested content parser run on each value (None: values are kept as they are). `path` is where its
    arguments are, below the field's `content_args`."""

    parser: ContentParser | None
    path: JsonPath


@dataclass(frozen=True)
class TagRegex:
    """A template regex, compiled with DOTALL (`path`: where it is, below the field's `content_args`)."""

    pattern: str
    path: JsonPath


Argument: TypeAlias = Value | RuntimeFunction | Nested | TagRegex


@dataclass(frozen=True)
class RuntimeCall:
    """`function(text, name=argument, ...)`: `function` is in `rtcompile.runtime.content`; the keyword
    arguments are in the order a handler writes them."""

    function: str
    arguments: tuple[tuple[str, Argument], ...]


def runtime_call(parser: CallingParser) -> RuntimeCall:
    """The call that parses a text with `parser`."""
    match parser:
        case ScalarParser(kind=kind, strip=strip):
            return RuntimeCall(f"parse_{kind}", (("strip", Value(strip)),))
        case JsonParser():
            return _json_call(parser)
        case XmlInlineParser():
            return RuntimeCall(
                "parse_xml_inline",
                (
                    ("tag_re", TagRegex(parser.tag_pattern, ("tag_pattern",))),
                    ("tag_pattern", Value(parser.tag_pattern)),
                    ("value_parser", Nested(parser.value_parser, ("value_parser", "args"))),
                    ("merge_duplicates", Value(parser.merge_duplicates)),
                ),
            )
        case KvLinesParser():
            return RuntimeCall(
                "parse_kv_lines",
                (
                    ("line_sep", Value(parser.line_sep)),
                    ("kv_sep", Value(parser.kv_sep)),
                    ("strip", Value(parser.strip)),
                    ("value_parser", Nested(parser.value_parser, ("value_parser", "args"))),
                ),
            )
        case PythonCallListParser():
            return RuntimeCall("parse_python_call_list", ())
        case _:
            unreachable(parser)


def _json_call(parser: JsonParser) -> RuntimeCall:
    """JSON with the rewrites its arguments ask for, and only those (each is a function of its own, so
    that a generated module lifts only the ones its template uses)."""
    quote_keys: Argument = RuntimeFunction("json_quote_bare_keys") if parser.unquoted_keys else Value(None)
    lenient = ("allow_non_json", Value(parser.allow_non_json))
    strip = ("strip", Value(parser.strip))
    if parser.string_delims:
        delims = ("string_delims", Value(parser.string_delims))
        return RuntimeCall("parse_json_delimited", (delims, ("quote_keys", quote_keys), lenient, strip))
    return RuntimeCall("parse_json", (("dialect", quote_keys), lenient, strip))
