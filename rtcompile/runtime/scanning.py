"""Delimiter hold-back decisions used by generated scanners (the interpreter gets them from `regex`)."""

import re
from collections.abc import Iterable
from typing import Final


def literal_hold(buf: str, pos: int, literal: str) -> int:
    """Where held-back text starts for a literal delimiter that does not occur in `buf[pos:]`.

    That is the start of the longest suffix of `buf[pos:]` that is a proper prefix of `literal` (it
    may become the delimiter when more text arrives), or `len(buf)` when there is none. Candidates
    are the occurrences of the literal's first character in the last `len(literal) - 1` characters,
    leftmost (longest) first, each checked in one comparison; a literal that keeps producing failed
    candidates (`aaaa...b` against `aaaa`) is finished with KMP, so the cost stays linear in the
    literal's length.
    """
    n = len(buf)
    start = max(pos, n - len(literal) + 1)
    first = literal[0]
    at = buf.find(first, start)
    for _ in range(_DIRECT_CANDIDATES):
        if at < 0:
            return n
        if literal.startswith(buf[at:]):
            return at
        at = buf.find(first, at + 1)
    return n if at < 0 else n - _longest_prefix_suffix(buf, at, literal)


def literal_set_hold(buf: str, pos: int, literals: Iterable[str]) -> int:
    """`literal_hold` for a set of literals, none of which occurs in `buf[pos:]`: the leftmost hold."""
    return min(literal_hold(buf, pos, literal) for literal in literals)


_DIRECT_CANDIDATES: Final = 8
_FAILURE_TABLES: dict[str, list[int]] = {}


def _longest_prefix_suffix(buf: str, start: int, literal: str) -> int:
    """The length of the longest prefix of `literal` that is a suffix of `buf[start:]` (shorter than it)."""
    failure = _FAILURE_TABLES.get(literal)
    if failure is None:
        failure = _FAILURE_TABLES[literal] = _failure_table(literal)
    matched = 0
    for char in buf[start:]:
        while matched and char != literal[matched]:
            matched = failure[matched - 1]
        if char == literal[matched]:
            matched += 1
    return matched


def _failure_table(literal: str) -> list[int]:
    """KMP: for each prefix of `literal`, the length of its longest proper prefix that is also its suffix."""
    table = [0] * len(literal)
    matched = 0
    for index in range(1, len(literal)):
        while matched and literal[index] != literal[matched]:
            matched = table[matched - 1]
        if literal[index] == literal[matched]:
            matched += 1
        table[index] = matched
    return table


def regex_can_grow(pattern: re.Pattern[str], buf: str, m: re.Match[str]) -> bool:
    """Whether a complete regex match could still change when the stream goes on.

    A match that reaches the end of the buffer can always grow (or, if empty, only be real at the
    true end). One that ends earlier may still lean on the end of input (`$`, `\\Z` inside a
    lookahead): it is final only if it survives the buffer being extended by a plain character.
    """
    if m.end() == len(buf):
        return True
    extended = pattern.match(buf + "\x00", m.start())
    return (
        extended is None
        or extended.span() != m.span()
        or extended.groupdict() != m.groupdict()
    )
