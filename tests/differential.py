"""Run a parser engine over a chunked stream and record everything a user could observe.

An *engine* is anything with the reference's streaming shape: `make(prefix, tools)` returns an
object with `initial_events`, `feed(text)` and `finalize()`. `observe` returns a comparable
record: the initial events, the events of every feed, the final message and events, or the
exception type (and at which step) where one was raised. Two engines agree on a stream when their
records are equal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import transformers.utils.chat_parsing as reference

import rtcompile

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
        # Equal when both were raised at the same step and an `except` of the most specific built-in
        # type of either would catch the other (our TemplateError is a ValueError, as the reference's).
        if not isinstance(other, Raised) or self.step != other.step:
            return False
        return (
            self.type_name == other.type_name
            or self.builtin_types[:1] == other.builtin_types[:1]
            or (self.builtin_types[:1] and self.builtin_types[0] in other.builtin_types)
            or (other.builtin_types[:1] and other.builtin_types[0] in self.builtin_types)
        )

    def __hash__(self) -> int:
        return hash(self.step)


def normalise(value: Any) -> Any:
    """Make NaN compare equal to itself (json parses `NaN`), keep everything else as it is."""
    if isinstance(value, float) and math.isnan(value):
        return "<nan>"
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def observe(make: Make, prefix: str, chunks: Sequence[str], tools: Any = None) -> list[Any]:
    record: list[Any] = []
    try:
        parser = make(prefix, tools)
    except Exception as exc:  # noqa: BLE001 - the exception type is what we compare
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


def reference_engine(template: dict[str, Any]) -> Make:
    return lambda prefix, tools: reference.ResponseParser(template, prefix=prefix, tools=tools)


def interpreter_engine(template: dict[str, Any]) -> Make:
    return lambda prefix, tools: rtcompile.ResponseParser(template, prefix, tools=tools)


def one_shot(parse: Callable[..., Any], text: str, template: Any, prefix: str, tools: Any = None) -> Any:
    try:
        return normalise(parse(text, template, prefix=prefix, tools=tools))
    except Exception as exc:  # noqa: BLE001
        return Raised.of("parse", exc)


def two_way_splits(text: str) -> list[list[str]]:
    return [[text[:i], text[i:]] for i in range(len(text) + 1)]
