"""Fuzzy-matching constraints (``a{e<=1}``): recognising them so that the parser can step over them.

After a ``{`` that does not start a repeat count, `regex` tries to read a list of constraints; if it
can, the ``{...}`` is an approximate-match constraint on the preceding item, otherwise it is literal
text. This mirrors `regex`'s `parse_fuzzy` closely enough to tell the two apart.
"""

from __future__ import annotations

from rtcompile.regex.cursor import PatternCursor
from rtcompile.regex.escapes import ALPHA, DIGITS, parse_escape
from rtcompile.regex.sets import parse_set

Constraints = dict[str, object]


class _NotFuzzy(Exception):
    """regex's internal ParseError: the text is not a fuzzy constraint after all."""


def read_fuzzy_constraint(cursor: PatternCursor, ignore_case: bool) -> Constraints | None:
    """After ``{``: the constraints, with the cursor past the closing ``}``; None (cursor unmoved) if
    `regex` reads the text literally."""
    saved = cursor.pos
    constraints: Constraints = {}
    try:
        _items(cursor, constraints, strict=True)
    except _NotFuzzy:
        cursor.pos = saved
        return None
    if cursor.match(":"):
        _skip_test(cursor, ignore_case)
    cursor.match("}")
    return constraints


def looks_fuzzy(cursor: PatternCursor) -> bool:
    """Whether the text after ``{`` reads as constraints when repeated letters are allowed.

    `regex` reads ``{e,e}`` literally (a letter may only be constrained once); the translation has
    always refused it as fuzzy matching anyway. The cursor does not move.
    """
    saved = cursor.pos
    try:
        _items(cursor, {}, strict=False)
    except _NotFuzzy:
        return False
    finally:
        cursor.pos = saved
    return True


def is_actually_fuzzy(constraints: Constraints) -> bool:
    """regex's `is_actually_fuzzy`: constraints that allow no error at all are dropped."""
    if constraints.get("e") == (0, 0):
        return False
    return (constraints.get("s"), constraints.get("i"), constraints.get("d")) != ((0, 0), (0, 0), (0, 0))


def _items(cursor: PatternCursor, constraints: Constraints, strict: bool) -> None:
    _item(cursor, constraints, strict)
    while cursor.match(","):
        _item(cursor, constraints, strict)


def _item(cursor: PatternCursor, constraints: Constraints, strict: bool) -> None:
    saved = cursor.pos
    try:
        _cost_constraint(cursor, constraints, strict)
    except _NotFuzzy:
        cursor.pos = saved
        _cost_equation(cursor, constraints)


def _compare(cursor: PatternCursor) -> bool | None:
    """``<=`` (True), ``<`` (False) or neither (None)."""
    if cursor.match("<="):
        return True
    if cursor.match("<"):
        return False
    return None


def _count(cursor: PatternCursor) -> int:
    return int(cursor.get_while(DIGITS) or 0)


def _constraint(ch: str, constraints: Constraints, strict: bool) -> str:
    if ch not in "deis" or (strict and ch in constraints):
        raise _NotFuzzy
    return ch


def _cost_constraint(cursor: PatternCursor, constraints: Constraints, strict: bool) -> None:
    """``e``, ``e<=3``, ``1<=e<3``..."""
    saved = cursor.pos
    ch = cursor.get()
    if ch and ch in ALPHA:
        letter = _constraint(ch, constraints, strict)
        inclusive = _compare(cursor)
        if inclusive is None:
            constraints[letter] = (0, None)
        else:
            constraints[letter] = (0, _count(cursor) - (0 if inclusive else 1))
        return
    if ch and ch in DIGITS:
        cursor.pos = saved
        low = _count(cursor)
        low_inclusive = _compare(cursor)
        if low_inclusive is None:
            raise _NotFuzzy
        letter = _constraint(cursor.get(), constraints, strict)
        high_inclusive = _compare(cursor)
        if high_inclusive is None:
            raise _NotFuzzy
        high = _count(cursor)
        constraints[letter] = (low + (0 if low_inclusive else 1), high - (0 if high_inclusive else 1))
        return
    raise _NotFuzzy


def _cost_equation(cursor: PatternCursor, constraints: Constraints) -> None:
    """``2i+2d+1s<=4``."""
    while True:
        cursor.get_while(DIGITS)
        if cursor.get() not in tuple("dis"):
            raise _NotFuzzy
        if not cursor.match("+"):
            break
    if _compare(cursor) is None:
        raise _NotFuzzy
    cursor.get_while(DIGITS)
    constraints["cost"] = True


def _skip_test(cursor: PatternCursor, ignore_case: bool) -> None:
    """The ``:[a-z]`` part of ``{e<=1:[a-z]}``: which characters an error may involve."""
    ch = cursor.get()
    if ch == "\\":
        parse_escape(cursor, in_set=False, ignore_case=ignore_case)
    elif ch == "[":
        parse_set(cursor, ignore_case)
