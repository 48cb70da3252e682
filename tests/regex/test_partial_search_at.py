"""`partial_search_at`: `partial_search` where another delimiter matched at the scan position already, so
that only a match or partial match starting there can change what a scan decides. Whatever starts at
`pos` (a complete match, with its span and groups, or a partial match) is what `partial_search` finds;
nothing is reported at `pos` that `partial_search` does not report there (a partial match at `pos` is
not one when a complete match follows later: `regex` prefers that).
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtcompile.regex.translate import StdlibRegex
from rtcompile.runtime.partial import partial_search, partial_search_at
from tests.support.lanes import examples
from tests.support.regex_matching import patterns, texts_for, translated


def _at(result: tuple[re.Match[str] | None, int | None], pos: int) -> tuple[Any, ...] | None:
    """What of a `partial_search` result starts at `pos`: a complete match, or a partial one; None if
    it starts later or there is none."""
    match, partial_at = result
    if match is not None:
        return ("full", match.span(), match.groups()) if match.start() == pos else None
    return ("partial",) if partial_at == pos else None


def _check(result: StdlibRegex, text: str, pos: int) -> None:
    full, prefix = re.compile(result.full, re.DOTALL), re.compile(result.prefix, re.DOTALL)
    everywhere = partial_search(full, prefix, text, pos)
    at_pos = partial_search_at(full, prefix, text, pos)
    assert _at(at_pos, pos) == _at(everywhere, pos), (result.full, text, pos)
    if _at(at_pos, pos) is None:  # nothing at `pos`: either nothing at all, or what the search found
        assert at_pos == (None, None) or _described(at_pos) == _described(everywhere)


def _described(result: tuple[re.Match[str] | None, int | None]) -> tuple[Any, ...]:
    """A search result as comparable data (two `re.Match` objects are equal only if they are one)."""
    match, partial_at = result
    return (None, partial_at) if match is None else (match.span(), match.groups(), partial_at)


@settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
@given(pattern=patterns(), data=st.data())
def test_what_starts_at_the_position_is_what_partial_search_finds(pattern: str, data: st.DataObject) -> None:
    _compiled, result = translated(pattern)
    for text in data.draw(st.lists(texts_for(pattern), min_size=1, max_size=4)):
        _check(result, text, data.draw(st.integers(0, len(text))))


def test_a_partial_match_at_the_position_gives_way_to_a_complete_one_later() -> None:
    # `a1` at 0 may still become `a12b`, but `1` at 1 is a complete match: `regex` reports that one
    _compiled, result = translated(r"a\d+b|\d")
    full, prefix = re.compile(result.full, re.DOTALL), re.compile(result.prefix, re.DOTALL)
    match, partial_at = partial_search_at(full, prefix, "a1", 0)
    assert match is not None and match.span() == (1, 2) and partial_at is None
    # with no complete match anywhere, the partial match at 0 is reported; with nothing at 0, nothing
    # (a complete match later, which cannot beat one at 0, is not looked for)
    assert partial_search_at(full, prefix, "a", 0) == (None, 0)
    assert partial_search_at(full, prefix, "xa", 0) == (None, None)
    assert partial_search_at(full, prefix, "x 1", 0) == (None, None)
