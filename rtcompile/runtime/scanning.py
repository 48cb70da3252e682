"""Delimiter hold-back decisions used by generated scanners (the interpreter gets them from `regex`)."""

import re
from collections.abc import Set


def literal_hold(buf: str, pos: int, prefixes: Set[str], longest: int) -> int:
    """Where held-back text starts for literal delimiters with no complete match after `pos`.

    That is the start of the longest suffix of `buf[pos:]` that is a proper prefix of one of the
    literals (`prefixes` holds all of them, `longest` is the longest one's length): such a suffix
    may become the delimiter when more text arrives. `len(buf)` when there is none.
    """
    n = len(buf)
    for size in range(min(longest, n - pos), 0, -1):
        if buf[n - size :] in prefixes:
            return n - size
    return n


def regex_can_grow(pattern: "re.Pattern[str]", buf: str, m: "re.Match[str]") -> bool:
    """Whether a complete regex match could still change when the stream goes on.

    A match that reaches the end of the buffer can always grow (or, if empty, only be real at the
    true end). One that ends earlier may still lean on the end of input (`$`, `\\Z` inside a
    lookahead): it is final only if it survives the buffer being extended by a plain character.
    """
    if m.end() == len(buf):
        return True
    extended = pattern.match(buf + "\x00", m.start())
    return extended is None or extended.span() != m.span() or extended.groupdict() != m.groupdict()
