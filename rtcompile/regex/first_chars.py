"""What a delimiter match can start with, for the generated parsers' fast paths.

When nothing is held back and a new chunk contains none of the characters that any watched
delimiter can start with, no delimiter can match or partially match inside it: the chunk is
plain region text. Generated modules test that with one `in` check (or one character-class
search) and skip the scanner entirely, which is what most chunks of a long region need.

The analysis is conservative: anything it cannot bound (a match that may be empty, `.`, negated
classes, backreferences) gives `None`, and that parser state simply has no fast path.
"""

from __future__ import annotations

import re
from typing import Any

from rtcompile.ir import Delimiter
from rtcompile.regex.sre import sre_constants, sre_parse
from rtcompile.regex.translate import translate


class _Unbounded(Exception):
    """The first character of a match cannot be bounded to a small explicit set."""


def delimiter_first_chars(delimiter: Delimiter) -> frozenset[int] | None:
    """Code points a match (or partial match) of `delimiter` can start with; None if unbounded."""
    if delimiter.literals is not None:
        return frozenset(ord(lit[0]) for lit in delimiter.literals)
    try:
        tree = sre_parse.parse(translate(delimiter.pattern).full, re.DOTALL)
        if tree.state.flags & re.IGNORECASE:
            return None
        chars, nullable = _first(tree.data)
    except (_Unbounded, ValueError, re.error, RecursionError):
        return None
    return None if nullable else frozenset(chars)


def _first(items: list[Any]) -> tuple[set[int], bool]:
    """First characters of a sequence, and whether it can match the empty string."""
    chars: set[int] = set()
    for op, arg in items:
        item_chars, nullable = _first_item(op, arg)
        chars |= item_chars
        if not nullable:
            return chars, False
    return chars, True


def _first_item(op: Any, arg: Any) -> tuple[set[int], bool]:
    if op == sre_constants.LITERAL:
        return {arg}, False
    if op == sre_constants.IN:
        return _class_chars(arg), False
    if op == sre_constants.SUBPATTERN:
        _group, add_flags, _del_flags, body = arg
        if add_flags & re.IGNORECASE:
            raise _Unbounded("case-insensitive group")
        return _first(list(body))
    if op == sre_constants.BRANCH:
        chars: set[int] = set()
        any_nullable = False
        for branch in arg[1]:
            branch_chars, nullable = _first(list(branch))
            chars |= branch_chars
            any_nullable = any_nullable or nullable
        return chars, any_nullable
    if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
        low, _high, body = arg
        chars, nullable = _first(list(body))
        return chars, nullable or low == 0
    if op == sre_constants.AT:
        return set(), True  # anchors and word boundaries consume nothing
    if op == sre_constants.ASSERT:
        direction, body = arg
        if direction < 0:
            return set(), True  # a lookbehind looks at text before the match
        # A lookahead reads the following text too (and `regex` reports partial matches from it).
        chars, _ = _first(list(body))
        return chars, True
    if op == sre_constants.ASSERT_NOT:
        return set(), True
    raise _Unbounded(str(op))


MAX_CLASS_SIZE = 4096


def _class_chars(items: Any) -> set[int]:
    chars: set[int] = set()
    for op, arg in items:
        if op == sre_constants.LITERAL:
            chars.add(arg)
        elif op == sre_constants.RANGE:
            low, high = arg
            if high - low > MAX_CLASS_SIZE:
                raise _Unbounded("large range")
            chars.update(range(low, high + 1))
        else:
            raise _Unbounded(str(op))  # negation, categories
        if len(chars) > MAX_CLASS_SIZE:
            raise _Unbounded("large class")
    return chars


def char_class(first_chars: frozenset[int]) -> str:
    """A stdlib regex character class matching exactly `first_chars`."""
    return "[" + "".join(f"\\U{c:08x}" if c > 0xFFFF else f"\\u{c:04x}" for c in sorted(first_chars)) + "]"


def starts_at_buffer_start(delimiter: Delimiter) -> bool:
    """Whether every match must begin at position 0 (the pattern starts with `^` or `\\A`).

    Without MULTILINE both mean the start of the string, and the engines keep at least one
    committed character once they drop text, so such a delimiter can only fire on the first scan.
    """
    if delimiter.literals is not None:
        return False
    try:
        tree = sre_parse.parse(translate(delimiter.pattern).full, re.DOTALL)
    except (ValueError, re.error, RecursionError):
        return False
    if tree.state.flags & re.MULTILINE or not tree.data:
        return False
    op, arg = tree.data[0]
    at_start: tuple[object, ...] = (sre_constants.AT_BEGINNING, sre_constants.AT_BEGINNING_STRING)
    return op == sre_constants.AT and arg in at_start
