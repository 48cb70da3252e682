"""Run a parser over a chunked stream and record everything a user could observe.

Shared by `rtcompile verify` and the test suite. An *engine* makes parsers with the reference's
streaming shape: `make(prefix, tools)` returns an object with `initial_events`, `feed(text)` and
`finalize()`. `observe` returns a record of everything a caller sees: the initial events, the
events of every feed, the final message and events, or where an exception was raised, its class and
its message. Records compare equal exactly (our two engines must agree on everything);
`agrees_with_reference` is the comparison against transformers (exceptions by class).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Make = Callable[[str, Any], Any]


@dataclass(frozen=True)
class Raised:
    """An exception as a caller sees it: where it was raised, its class, its message, and the built-in
    classes in its MRO (what a caller's ``except`` clauses can name).

    Equality is exact (step, class name and message): what a compiled module owes the interpreter.
    Against transformers, whose messages are its own, compare with `same_class`; `caught_alike` is the
    loosest comparison, for the deliberate differences that are documented where they are used.
    """

    step: str
    type_name: str
    message: str
    builtin_types: tuple[str, ...] = ()  # built-in classes in the exception's MRO, most specific first

    @classmethod
    def of(cls, step: str, exc: BaseException) -> Raised:
        builtins = tuple(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins" and c is not object)
        return cls(step, type(exc).__name__, str(exc), builtins)

    def same_class(self, other: Raised) -> bool:
        """Raised at the same step, of the same class (by name): what we owe transformers."""
        return (self.step, self.type_name) == (other.step, other.type_name)

    def caught_alike(self, other: Raised) -> bool:
        """Raised at the same step, and an ``except`` of the most specific built-in class of either
        catches the other (our TemplateError is a ValueError, like the reference's error)."""
        if self.step != other.step:
            return False
        mine, theirs = self.builtin_types, other.builtin_types
        return mine[:1] == theirs[:1] or bool(mine and mine[0] in theirs) or bool(theirs and theirs[0] in mine)

    def identical(self, other: Raised) -> bool:
        """The same step, exception class name and message (equality)."""
        return self == other


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
    """Equal records (exceptions included: same step, class and message); kept for readability."""
    return left == right


def agrees_with_reference(ours: Any, reference: Any) -> bool:
    """Our record (or one-shot outcome) against transformers': equal, except that an exception only
    has to be of the same class at the same step (the reference words its messages its own way)."""
    if isinstance(ours, Raised) and isinstance(reference, Raised):
        return ours.same_class(reference)
    if isinstance(ours, list) and isinstance(reference, list) and len(ours) == len(reference):
        return all(agrees_with_reference(a, b) for a, b in zip(ours, reference, strict=True))
    return bool(ours == reference)
