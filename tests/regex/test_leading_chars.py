"""`leading_chars` against `regex` itself: a streaming search of a pattern matched with the `regex` module
may start where its leading characters first occur (`Strategy.leads`), and is skipped where they do not
occur, only if `regex` reports the same from there as from the scan position: the same match or partial
match, or, where they never occur, nothing a scanner acts on (no match, or a partial one at the very end,
which holds nothing back).

Patterns come from the differential fuzzer's grammar (every construct `regex` reads: lazy repeats,
lookarounds, backreferences, flags...); texts are built from each pattern's own characters and the
subtle ones, so that matches and partial matches are common."""

from __future__ import annotations

import itertools
import random
import re
from typing import Any

import pytest
import regex

from rtcompile.regex.analysis import depends_on_scan_start
from rtcompile.regex.first_chars import leading_chars
from rtcompile.strategies import lead_pattern
from tests.support.lanes import pick
from tests.support.regex_fuzz import SUBTLE, random_pattern


def _outcome(m: Any) -> tuple[Any, ...] | None:
    return None if m is None else (m.span(), m.partial, m.groupdict(), m.groups())


def _from_the_lead(compiled: Any, leads: re.Pattern[str], text: str, pos: int) -> tuple[Any, ...] | None:
    """What the generated scanner gets: `regex`'s partial search from the first lead at or after `pos`."""
    lead = leads.search(text, pos)
    return None if lead is None else _outcome(compiled.search(text, lead.start(), partial=True))


def _acted_on(outcome: tuple[Any, ...] | None, text: str) -> tuple[Any, ...] | None:
    """`outcome` as a scanner acts on it: a partial match at the very end holds nothing back."""
    if outcome is not None and outcome[1] and outcome[0][0] == len(text):
        return None
    return outcome


def _texts(pattern: str, rng: random.Random) -> list[str]:
    alphabet = sorted(set(pattern) | set(SUBTLE[-12:]) | {"<", "i", "n", "v", "o", "k", "e"})
    texts = []
    for _ in range(40):
        texts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9))))
    return texts


def _patterns(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    found: list[str] = []
    while len(found) < count:
        pattern = random_pattern(rng)
        try:
            regex.compile(pattern, regex.DOTALL)
        except (regex.error, OverflowError, RecursionError, ValueError):
            continue
        if leading_chars(pattern) is not None and not depends_on_scan_start(pattern):
            found.append(pattern)
    return found


@pytest.mark.parametrize("seed", range(pick(8, 2)))
def test_a_search_from_the_first_lead_reports_what_regex_reports_from_the_scan_position(seed: int) -> None:
    rng = random.Random(seed)
    for pattern in _patterns(pick(60, 25), seed):
        compiled = regex.compile(pattern, regex.DOTALL)
        leads_found = leading_chars(pattern)
        assert leads_found is not None
        leads = re.compile(lead_pattern(leads_found))
        for text in _texts(pattern, rng):
            for pos in range(len(text) + 1):
                try:
                    expected = _acted_on(_outcome(compiled.search(text, pos, partial=True)), text)
                    got = _acted_on(_from_the_lead(compiled, leads, text, pos), text)
                except (RecursionError, regex.error):
                    continue
                assert got == expected, (pattern, text, pos)


# Shapes whose partial matches `regex` reports through its shortcuts (lazy one-character repeats before a
# character or a string, backreferences, lookaheads, possessive and atomic runs), after a leading character.
SHORTCUT_SHAPES = [
    ("<f=[a-z]+?>x", "<f=ab>x -"),
    ("<[a-z]*?X", "<aX -"),
    ("<[a-z]*?XY", "<aXY -"),
    ("<(a|b)\\1>", "<ab>"),
    ("<t(?=ool)", "<tol"),
    ("<[^>]+?>", "<a>b"),
    ("(?i)<[^>]*+>", "<A>b"),
    ("<(?>a+)b", "<ab "),
    ("<x|[a-z]+?=", "<x=a "),
    ("[a-z]+?=", "a=- "),
    ("(?:<a)+?b", "<ab"),
    ("k{2,}?x", "kx-"),
]


@pytest.mark.parametrize(("pattern", "alphabet"), SHORTCUT_SHAPES)
def test_every_short_text_agrees_on_shortcut_shapes(pattern: str, alphabet: str) -> None:
    compiled = regex.compile(pattern, regex.DOTALL)
    found = leading_chars(pattern)
    assert found is not None
    leads = re.compile(lead_pattern(found))
    for length in range(pick(6, 5)):
        for chars in itertools.product(alphabet, repeat=length):
            text = "".join(chars)
            for pos in range(length + 1):
                expected = _acted_on(_outcome(compiled.search(text, pos, partial=True)), text)
                assert _acted_on(_from_the_lead(compiled, leads, text, pos), text) == expected, (text, pos)


@pytest.mark.parametrize(
    ("pattern", "leads"),
    [
        ("<invoke name=([\"'])(?P<name>[^\"'\\n]+)\\1>", "<(?:i|\\Z)"),
        ("(?:\\[A\\]|<t)x", "\\[(?:A|\\Z)|<(?:t|\\Z)"),
        ("(?i)<t", "<(?:[Tt]|\\Z)"),
        ("(<a|b)c", "<(?:a|\\Z)|b"),
    ],
)
def test_leads_of_patterns_that_begin_by_reading_characters(pattern: str, leads: str) -> None:
    found = leading_chars(pattern)
    assert found is not None
    assert re.compile(lead_pattern(found)).pattern == leads


@pytest.mark.parametrize(
    "pattern",
    [
        "[a-z]*?X",  # regex reports a partial match at the `-` of "-"
        "(?:\\[TOOL_CALLS\\])?(?P<name>[^\\s\\[\\]]+?)\\[ARGS\\]",  # an optional first item
        "(?=<)<a",  # a lookahead first
        "\\b<a",  # an assertion first
        "a|",  # an empty branch
        "(?a)<a",  # a flag the tree does not model
    ],
)
def test_no_leads_where_a_match_need_not_begin_by_reading_a_character(pattern: str) -> None:
    assert leading_chars(pattern) is None


def test_the_counterexample_is_one() -> None:
    """Why a leading repeat gives no leads: regex reports a partial match where none of its characters is."""
    m = regex.compile("[a-z]*?X").search("-", partial=True)
    assert m is not None and m.partial and m.span() == (0, 1)
