"""The reference's scanning rule for one parser state, run on the `regex` module: what a state's scanner
decides for a buffer, written once. The interpreter runs it as its scanners; the planner asks it which
held-back texts need no scan (`rtcompile.held_starts`).

How a state's scanner decides (the reference's rules, restated):

* A delimiter match is committed only when more input cannot change it: a partial match at the
  end of the buffer, or a complete one that could still grow, holds back the text from its start.
* Of the committable matches the earliest wins; then the longest; then the plan's tie-break order
  (opens before closes, then the field name).
* A committable match that starts at or after held-back text is not taken yet: the pending
  delimiter starts no later and may turn out to be the real one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import regex

from rtcompile.ir import Delimiter
from rtcompile.runtime.engine import NO_GROUPS
from rtcompile.runtime.program import Scanner, ScanResult
from rtcompile.runtime.scanning import regex_can_grow

__all__ = ["compile_delimiter", "state_scanner"]


def compile_delimiter(delimiter: Delimiter) -> Any:
    """The delimiter's pattern as the reference compiles it."""
    return regex.compile(delimiter.pattern, regex.DOTALL)


def state_scanner(delimiters: Sequence[Delimiter]) -> Scanner:
    """The scanner for a state watching `delimiters` (in tie-break order): every one searched with
    `regex`'s partial matching."""
    watched = [(rank, compile_delimiter(delimiter), delimiter) for rank, delimiter in enumerate(delimiters)]

    def scan(buffer: str, pos: int, eos: bool, memo: list[Any]) -> ScanResult:
        hold = len(buffer)
        best: tuple[int, Any] | None = None
        best_key: tuple[int, int, int] | None = None
        for rank, pattern, delimiter in watched:
            # At the end of the stream nothing can grow, so only complete matches count.
            m = pattern.search(buffer, pos) if eos else pattern.search(buffer, pos, partial=True)
            if m is None:
                continue
            if not eos and (m.partial or _can_grow(delimiter, pattern, buffer, m)):
                hold = min(hold, m.start())
                continue
            key = (m.start(), m.start() - m.end(), rank)
            if best_key is None or key < best_key:
                best_key, best = key, (rank, m)
        if best is None or best[1].start() >= hold:
            return -1, 0, 0, NO_GROUPS, hold
        rank, m = best
        return rank, m.start(), m.end(), m.groupdict(), hold

    return scan


def _can_grow(delimiter: Delimiter, pattern: Any, buffer: str, m: Any) -> bool:
    """Whether a complete match could still change when more text arrives."""
    if delimiter.is_literal:
        # A literal match is final once its last character is in, unless a longer literal of the
        # same set could still complete from the same start.
        return m.end() == len(buffer) and delimiter.can_extend
    return regex_can_grow(pattern, buffer, m)
