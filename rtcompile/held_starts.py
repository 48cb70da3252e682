"""Held-back text that grows without a scan: the starts of a state's delimiters.

A model spells a delimiter over several tokens (`<`, `se`, `ed:f`, `unction_call>`), and from its
first character on the engine holds the text back, since a delimiter may still claim it: every
chunk after that is scanned, most of them only to hold back a longer start. Where a state's
delimiters never look before the scan position, what a scan decides depends on the held-back text
alone, so for the texts that can be held back this way it is decided here, once, by the reference's
rule (`rtcompile.scan_rule`): a start of a delimiter (a prefix of a literal its matches begin with)
is listed when scanning it holds back all of it and commits nothing. A generated module lists them
per state (`ParserState.held_starts`); held-back text that grows into one of them is held back with
no scan, which is exactly what the scan would have done.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from rtcompile.ir import Delimiter
from rtcompile.regex.analysis import start_literals
from rtcompile.regex.first_chars import modelled_tree
from rtcompile.runtime.engine import prefixes_of
from rtcompile.scan_rule import state_scanner

__all__ = ["held_starts"]

# Starts are listed for a delimiter with at most this many literals its matches begin with (a field
# may list thousands), each at most this long.
MAX_STARTS: Final = 8
MAX_START_LENGTH: Final = 64


def held_starts(delimiters: Sequence[Delimiter], history: Iterable[int | None]) -> tuple[str, ...]:
    """Texts every non-empty prefix of which a state watching `delimiters` (in tie-break order) holds
    back whole, committing nothing, when it is all the state has to scan; in sorted order, none a
    prefix of another. They are prefixes of the literals its delimiters' matches begin with, where the
    reference's rule says so. `history` gives, per delimiter, how far before the scan position it looks
    (`rtcompile.plan.delimiter_history`): where one may, the decision would depend on committed text
    too, and nothing is listed."""
    if any(width != 0 for width in history):
        return ()
    scan = state_scanner(delimiters)

    def held_whole(text: str) -> bool:
        """Whether scanning `text` takes no delimiter and holds back all of it."""
        which, _start, _end, _groups, hold = scan(text, 0, False, [])
        return which == -1 and hold == 0

    held = set(filter(held_whole, prefixes_of(*(start for d in delimiters for start in _starts(d)))))
    # (a listed text's prefixes are listed with it: a module keeps the longest, `prefixes_of` the rest)
    closed = {text for text in held if prefixes_of(text) <= held}
    return tuple(sorted(text for text in closed if not any(other.startswith(text) for other in closed - {text})))


def _starts(delimiter: Delimiter) -> tuple[str, ...]:
    """The literals every match of `delimiter` begins with one of (none if unknown or too many)."""
    if delimiter.literals is not None:
        starts: tuple[str, ...] | None = delimiter.literals
    else:
        parsed = modelled_tree(delimiter.pattern)
        starts = None if parsed is None else start_literals(parsed.root)
    if starts is None or len(starts) > MAX_STARTS:
        return ()
    return tuple(start for start in starts if len(start) <= MAX_START_LENGTH)
