"""The module-level functions of a generated module, around its `ResponseParser`.

Lifted into every generated module, after the module's own `ResponseParser` (the engine with the
template's program plugged in); the interpreter has its own entry points (`rtcompile.api`).
"""

from collections.abc import Iterable, Sequence
from typing import Any, overload

from rtcompile.runtime.engine import StreamingParser, parse_texts
from rtcompile.runtime.types import Message

# Defined by each generated module (the engine with its template's program): declared here for the
# type checker only, and never lifted (see `rtcompile.backends.codegen.lift`).
ResponseParser: type[StreamingParser]


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
    """Parse a complete output (or a list of outputs) into a message dict (or a list of them)."""
    return parse_texts(lambda p: ResponseParser(p, tools=tools), text, prefix)
