"""The interpreter: runs a template's plan on the streaming engine with the `regex` module.

This is the executable specification that compiled modules must equal: the engine
(`rtcompile.runtime.engine`) holds the reference's region rules, and this backend plugs into it one
generic scanner per parser state, built on `regex` exactly as transformers 5.24.0 uses it
(`search(buffer, pos, partial=True)`), and one handler per field calling the runtime content parsers.

How a state's scanner decides is the reference's rule, written once in `rtcompile.scan_rule`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

import regex

from rtcompile.content_calls import Argument, Nested, RuntimeFunction, TagRegex, Value, runtime_call
from rtcompile.ir import ContentParser, FailingParser, Field, Template, unreachable
from rtcompile.per_template import per_template
from rtcompile.plan import ParserPlan, ParserState, plan_parser
from rtcompile.runtime import content as parsers
from rtcompile.runtime.engine import StreamingParser
from rtcompile.runtime.program import Handler, ParserProgram, after_last_anchor
from rtcompile.runtime.tool_schema import function_to_tool_schema
from rtcompile.runtime.transform import content_scope, each_item_scope, require_each_list
from rtcompile.runtime.transform_data import build_value
from rtcompile.runtime.types import Event, Message
from rtcompile.scan_rule import compile_delimiter, state_scanner
from rtcompile.transform_program import Program, transform_program

__all__ = ["Event", "InterpretedParser", "Message", "anchor_pattern"]

# Tells whether no delimiter of a parser state can start in a chunk (its fast path).
PlainCheck: TypeAlias = Callable[[str, str], bool]  # (buffer, text)

_ERRORS: dict[str, type[Exception]] = {
    "ValueError": ValueError,
    "KeyError": KeyError,
    "TypeError": TypeError,
    "AttributeError": AttributeError,
}


# --------------------------------------------------------------------------- content parsers and transforms


def content_function(parser: ContentParser) -> Callable[[Any], Any]:
    """A callable that parses one region body (or one nested value) with `parser`."""
    match parser:
        case FailingParser():
            return _failing(parser)
        case _:
            call = runtime_call(parser)  # every other parser calls a runtime function
            arguments = {name: _argument(value) for name, value in call.arguments}
            return functools.partial(getattr(parsers, call.function), **arguments)


def _argument(argument: Argument) -> Any:
    match argument:
        case Value(value=value):
            return value
        case RuntimeFunction(name=name):
            return getattr(parsers, name)
        case Nested(parser=nested):
            return None if nested is None else content_function(nested)
        case TagRegex(pattern=pattern):
            return regex.compile(pattern, regex.DOTALL)
        case _:
            unreachable(argument)


def _failing(parser: FailingParser) -> Callable[[Any], Any]:
    def fail(text: Any) -> Any:
        raise _ERRORS[parser.error](parser.message)

    return fail


def field_value(
    field: Field, program: Program | None, parse: Callable[[str], Any], body: str, captures: Mapping[str, str]
) -> Any:
    """Parse a closed region's body and reshape it with the field's transform, given as a flat program
    (`rtcompile.transform_program`): the same code a generated module runs for a deep transform."""
    value = parse(body)
    if program is None:
        return value
    if not field.transform_each:
        return build_value(program, content_scope(captures, value))
    return [
        build_value(program, each_item_scope(field.name, captures, item))
        for item in require_each_list(field.name, value)
    ]


def anchor_pattern(template: Template) -> Any:
    return compile_delimiter(template.start_anchor)


# --------------------------------------------------------------------------- fast-path checks


def _plain_check(state: ParserState) -> PlainCheck | None:
    """True for a chunk, after a buffer, in which none of the state's delimiters can start (see
    `ParserState`)."""
    if state.delimiter_starts is None:
        return None
    starts = frozenset(map(chr, state.delimiter_starts))
    final_newline, after = state.final_newline, state.after
    if not final_newline and not after:
        return lambda buffer, text: starts.isdisjoint(text)

    def plain(buffer: str, text: str) -> bool:
        if not starts.isdisjoint(text):
            return False
        if final_newline and text.endswith("\n"):  # a `$` may match before a newline that ends the text
            return False
        # a path led by a lookbehind on a string may start where the string ends, in `text` or at its start
        return not any(string in buffer[-len(string) :] + text for string in after)

    return plain


def _handler(f: Field) -> Handler:
    parse = content_function(f.parser)
    program = None if f.transform is None else transform_program(f.transform)
    return lambda body, captures: field_value(f, program, parse, body, captures)


# --------------------------------------------------------------------------- the streaming parser


class _Interpreted:
    """A template ready to run, built once per `Template` and shared by its parsers: the engine's
    program and the fast-path check of each parser state."""

    def __init__(self, plan: ParserPlan) -> None:
        anchor = anchor_pattern(plan.template)
        self.program = ParserProgram(
            tables=plan.tables,
            scanners=tuple(state_scanner([w.delimiter for w in state.watches]) for state in plan.states),
            handlers=tuple(_handler(f) for f in plan.template.fields),
            after_anchor=lambda prefix: after_last_anchor(anchor, prefix),
            function_schema=function_to_tool_schema,
            memo_slots=0,  # the interpreter searches afresh every time
            compile_patterns=None,
        )
        self.plain = tuple(_plain_check(state) for state in plan.states)


@per_template
def _interpreted(template: Template) -> _Interpreted:
    return _Interpreted(plan_parser(template))


class InterpretedParser(StreamingParser):
    """The engine running a template's interpreted program: `interpret(template)` plugs it in, before
    the engine's `__init__` runs (`rtcompile.ResponseParser` does both)."""

    _plain: tuple[PlainCheck | None, ...]  # by state: the fast-path check (None: scan every chunk)

    def interpret(self, template: Template) -> None:
        """Plug in `template`'s program (built once per template, shared by its parsers)."""
        interpreted = _interpreted(template)
        self._program = interpreted.program
        self._plain = interpreted.plain

    def feed(self, text: str) -> list[Event]:
        """Add model text; returns the events it completes. A chunk in which no delimiter of the
        current state can start, with a region open and nothing held back, is region text."""
        plain = self._plain[self._state]
        if plain is not None and text and self._fast and self._pos == len(self._buffer) and plain(self._buffer, text):
            # What `_drop_committed` would keep (plain checks exist only where history is bounded).
            history = self._program.tables.history
            self._buffer = (self._buffer + text)[-history:] if history else ""
            self._pos = len(self._buffer)
            return [self._region_text(text)]
        return super().feed(text)
