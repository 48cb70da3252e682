"""The module-level functions of a generated module, around its `ResponseParser`.

Lifted into every generated module, after the module's own `ResponseParser` (the engine
with the template's program plugged in); the interpreter has its own entry points
(`rtcompile.api`).
"""

from collections.abc import Iterable, Sequence
from typing import Any, overload

from rtcompile.runtime.engine import StreamingParser, parse_texts
from rtcompile.runtime.grammar import parser_grammar
from rtcompile.runtime.types import Message

# Defined by each generated module (the engine with its template's program, and the
# template's grammar skeleton): declared here for the type checker only, and never
# lifted (see `rtcompile.backends.codegen.lift`).
ResponseParser: type[StreamingParser]
GRAMMAR: dict[str, Any]


@overload
def parse_response(
    text: str, *, prefix: str | Sequence[str] | None, tools: Iterable[Any] | None = None
) -> Message: ...
@overload
def parse_response(
    text: list[str] | tuple[str, ...],
    *,
    prefix: str | Sequence[str] | None,
    tools: Iterable[Any] | None = None,
) -> list[Message]: ...
def parse_response(
    text: str | list[str] | tuple[str, ...],
    *,
    prefix: str | Sequence[str] | None,
    tools: Iterable[Any] | None = None,
) -> Message | list[Message]:
    """Parse a complete output (or a list of outputs) into a message dict (or a list of
    them)."""
    return parse_texts(lambda p: ResponseParser(p, tools=tools), text, prefix)


def grammar(
    tools: Iterable[Any],
    *,
    prefix: str,
    tool_choice: Any = "auto",
    parallel_tool_calls: bool = True,
    format: str = "lark",
) -> str:
    """A grammar for constrained decoding: every text it admits parses into a message
    whose tool calls name tools of `tools` (JSON schemas or Python functions), with
    arguments valid for their schemas, and honour `tool_choice` ("auto", "required",
    "none", a tool's name, or `{"function": {"name": ...}}`) and `parallel_tool_calls`.

    `format`: "lark" (llguidance; arguments as `%json`), "gbnf" (llama.cpp, xgrammar's
    EBNF) or "structural-tag" (xgrammar's JSON). `prefix` is the prompt: the grammar
    starts where it leaves the parser (inside a reasoning block it opened, say). Raises
    `GrammarError` (a ValueError) for what has no grammar: a construct of the template
    (named with its place in it), a tool or an option."""
    return parser_grammar(
        ResponseParser(prefix),
        GRAMMAR,
        tools,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
        format=format,
    )
