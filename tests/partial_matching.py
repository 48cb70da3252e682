"""`regex`'s partial search and the translated one, as comparable answers (shared by the tests that
check the translation's partial matching against `regex`)."""

from __future__ import annotations

import re
from typing import Any

from rtcompile.regex.translate import StdlibRegex
from rtcompile.runtime.partial import partial_search


def regex_partial(compiled: Any, text: str, pos: int) -> tuple[Any, ...] | None:
    """`regex`'s partial search as (kind, details), with its one known malformed answer removed.

    For a pattern that starts with a DOTALL ``.``, a partial search starting at ``len(text)`` reads an
    uninitialised position inside `regex` and can return a "full" match the ordinary search does not
    find (sometimes with ``end < start``). Such results are reported as no match.
    """
    match = compiled.search(text, pos, partial=True)
    if match is None:
        return None
    if match.partial:
        return ("partial", match.start())
    if compiled.search(text, pos) is None:
        return None
    return ("full", match.span(), match.groups())


def our_partial(result: StdlibRegex, text: str, pos: int) -> tuple[Any, ...] | None:
    full = re.compile(result.full, re.DOTALL)
    prefix = re.compile(result.prefix, re.DOTALL)
    match, start = partial_search(full, prefix, text, pos)
    if match is not None:
        return ("full", match.span(), match.groups())
    return None if start is None else ("partial", start)


def assert_same_partial(
    ours: tuple[Any, ...] | None, theirs: tuple[Any, ...] | None, end: int, context: object = None
) -> None:
    """Exact equality, except that "nothing before the end" has two equivalent spellings.

    Whether `regex` says "partial at len(text)" or "no match" when nothing earlier is pending depends
    on its search prefilters (and, in rare cases, on search-position caches); a hold position of
    ``len(text)`` holds nothing back, so the reference parser cannot tell the two apart. `context`
    (the pattern, the text...) is shown when they differ.
    """
    nothing = (None, ("partial", end))
    if ours in nothing and theirs in nothing:
        return
    assert ours == theirs, context
