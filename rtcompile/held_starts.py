"""Held-back text that grows without a scan: the starts of a state's delimiters.

A model spells a delimiter over several tokens (`<`, `se`, `ed:f`, `unction_call>`), and from its
first character on the engine holds the text back, since a delimiter may still claim it: every
chunk after that is scanned, most of them only to hold back a longer start. Where a state's
delimiters never look before the scan position, what a scan decides depends on the held-back text
alone, so for the texts that can be held back this way it is decided here, once, by the reference's
rule (`rtcompile.scan_rule`): a start of a delimiter (a prefix of a literal its matches begin with,
or a newline that ends the text, before which a `$` matches) is listed when scanning it holds back
all of it and commits nothing. A generated module lists them per state (`ParserState.held_starts`);
held-back text that grows into one of them is held back with no scan, which is exactly what the scan
would have done. Where every match of a state's delimiters begins with a known literal
(`begins_with`), a chunk in which none begins and no start of one ends is region text: a scan would
take no delimiter in it and hold none of it back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from rtcompile.ir import Delimiter
from rtcompile.regex.analysis import start_literals
from rtcompile.regex.first_chars import match_starts, modelled_tree
from rtcompile.runtime.engine import prefixes_of
from rtcompile.scan_rule import state_scanner

__all__ = ["begins_with", "held_starts"]

# Starts are listed for a delimiter with at most this many literals its matches begin with (a field
# may list thousands), each at most this long.
MAX_STARTS: Final = 8
MAX_START_LENGTH: Final = 64


def held_starts(delimiters: Sequence[Delimiter], history: Iterable[int | None]) -> tuple[str, ...]:
    """Texts every non-empty prefix of which a state watching `delimiters` (in tie-break order) holds
    back whole, committing nothing, when it is all the state has to scan; in sorted order, none a
    prefix of another. They are prefixes of the literals its delimiters' matches begin with, and a
    newline where a `$` matches before it, where the reference's rule says so. `history` gives, per
    delimiter, how far before the scan position it looks (`rtcompile.plan.delimiter_history`): where
    one may, the decision would depend on committed text too, and nothing is listed."""
    if any(width != 0 for width in history):
        return ()
    scan = state_scanner(delimiters)

    def held_whole(text: str) -> bool:
        """Whether scanning `text` takes no delimiter and holds back all of it."""
        which, _start, _end, _groups, hold = scan(text, 0, False, [])
        return which == -1 and hold == 0

    candidates = [start for d in delimiters for start in _starts(d)]
    if any(_matches_before_final_newline(d) for d in delimiters):
        candidates.append("\n")
    held = set(filter(held_whole, prefixes_of(*candidates)))
    # (a listed text's prefixes are listed with it: a module keeps the longest, `prefixes_of` the rest)
    closed = {text for text in held if prefixes_of(text) <= held}
    return tuple(sorted(text for text in closed if not any(other.startswith(text) for other in closed - {text})))


def begins_with(delimiters: Sequence[Delimiter], history: Iterable[int | None]) -> tuple[str, ...] | None:
    """The literals every match of one of `delimiters` begins with one of, in sorted order, where they
    are known for each (and few and short enough to test a chunk for) and no delimiter looks before
    the scan position; else None. Text in which none of them begins and no non-empty prefix of one
    ends is text a scan takes no delimiter in and holds nothing of back: every match, and every
    partial match `regex` reports, begins with one of them or with the start of one that the text's
    end cuts short."""
    if any(width != 0 for width in history):
        return None
    found: set[str] = set()
    for delimiter in delimiters:
        starts = _all_starts(delimiter)
        if starts is None:
            return None
        found.update(starts)
    return tuple(sorted(found))


def _all_starts(delimiter: Delimiter) -> tuple[str, ...] | None:
    """The literals every match of `delimiter` begins with one of; None if unknown, or if there are
    too many or one is too long."""
    starts = _literals(delimiter)
    if starts is None or len(starts) > MAX_STARTS or any(len(start) > MAX_START_LENGTH for start in starts):
        return None
    return starts


def _literals(delimiter: Delimiter) -> tuple[str, ...] | None:
    """The literals every match of `delimiter` begins with one of, or None if unknown."""
    if delimiter.literals is not None:
        return delimiter.literals
    parsed = modelled_tree(delimiter.pattern)
    return None if parsed is None else start_literals(parsed.root)


def _starts(delimiter: Delimiter) -> tuple[str, ...]:
    """The literals every match of `delimiter` begins with one of (none if unknown or too many), but
    those too long to list."""
    starts = _literals(delimiter)
    if starts is None or len(starts) > MAX_STARTS:
        return ()
    return tuple(start for start in starts if len(start) <= MAX_START_LENGTH)


def _matches_before_final_newline(delimiter: Delimiter) -> bool:
    """Whether a match of `delimiter` may begin just before a newline that ends the text (a `$`)."""
    if delimiter.is_literal:
        return False
    starts = match_starts(delimiter)
    return starts is not None and starts.final_newline
