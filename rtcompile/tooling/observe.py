"""Run a parser over a chunked stream and record everything a user could observe.

Shared by `rtcompile verify` and the test suite. An *engine* makes parsers with the reference's
streaming shape: `make(prefix, tools)` returns an object with `initial_events`, `feed(text)` and
`finalize()`. `observe` returns a record that compares equal for two engines exactly when a
caller could not tell them apart: the initial events, the events of every feed, the final message
and events, or where an exception was raised and which built-in exception types catch it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Make = Callable[[str, Any], Any]


@dataclass(frozen=True)
class Raised:
    """An exception, as far as a caller's `except` clauses can tell: where, and of which built-in types."""

    step: str
    type_name: str
    message: str
    builtin_types: tuple[str, ...] = ()  # built-in classes in the exception's MRO, most specific first

    @classmethod
    def of(cls, step: str, exc: BaseException) -> Raised:
        builtins = tuple(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins" and c is not object)
        return cls(step, type(exc).__name__, str(exc), builtins)

    def __eq__(self, other: object) -> bool:
        # Equal when raised at the same step and an `except` of the most specific built-in type of
        # either catches the other (our TemplateError is a ValueError, like the reference's error).
        if not isinstance(other, Raised) or self.step != other.step:
            return False
        mine, theirs = self.builtin_types, other.builtin_types
        return (
            self.type_name == other.type_name
            or mine[:1] == theirs[:1]
            or bool(mine and mine[0] in theirs)
            or bool(theirs and theirs[0] in mine)
        )

    def __hash__(self) -> int:
        return hash(self.step)

    def identical(self, other: Raised) -> bool:
        """The same exception class name and message (what a compiled module owes the interpreter)."""
        return (self.step, self.type_name, self.message) == (other.step, other.type_name, other.message)


def normalise(value: Any) -> Any:
    """A copy of `value` in which NaN compares equal to itself (json parses `NaN`); nothing else changes.

    Without recursion: a transform may build values hundreds of levels deep.
    """
    copies: list[tuple[Any, Any]] = []  # (original container, its copy still to fill)

    def shell(node: Any) -> Any:
        if isinstance(node, float) and math.isnan(node):
            return "<nan>"
        if isinstance(node, (dict, list)):
            copy: Any = {} if isinstance(node, dict) else []
            copies.append((node, copy))
            return copy
        return node

    root = shell(value)
    while copies:
        original, copy = copies.pop()
        if isinstance(original, dict):
            copy.update((key, shell(member)) for key, member in original.items())
        else:
            copy.extend([shell(member) for member in original])
    return root


def observe(make: Make, prefix: str, chunks: Sequence[str], tools: Any = None) -> list[Any]:
    record: list[Any] = []
    try:
        parser = make(prefix, tools)
    except Exception as exc:  # noqa: BLE001 - which exception is exactly what we record
        return [Raised.of("init", exc)]
    record.append(normalise(parser.initial_events))
    for i, chunk in enumerate(chunks):
        try:
            record.append(normalise(parser.feed(chunk)))
        except Exception as exc:  # noqa: BLE001
            record.append(Raised.of(f"feed {i}", exc))
            return record
    try:
        message, events = parser.finalize()
    except Exception as exc:  # noqa: BLE001
        record.append(Raised.of("finalize", exc))
        return record
    record.append(normalise(events))
    record.append(normalise(message))
    return record


def identical(left: list[Any], right: list[Any]) -> bool:
    """Equal records where, in addition, exceptions have the same class name and message."""
    if left != right:
        return False
    return all(
        a.identical(b) for a, b in zip(left, right, strict=True) if isinstance(a, Raised) and isinstance(b, Raised)
    )
