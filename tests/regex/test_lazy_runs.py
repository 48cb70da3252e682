"""A lazy run between literals (`X? C{m,}? S`: `(?:\\[TOOL_CALLS\\])?(?P<name>[^\\s\\[\\]]+?)\\[ARGS\\]`), matched
with the `regex` module: the two claims its streaming strategy rests on (`rtcompile.regex.analysis.
awaited_past_run`, `Strategy.awaits_past`), checked against `regex` itself on patterns of every shape of the
family and texts made of their own characters.

* Waiting: where `regex`'s partial search reports a partial match past the pattern's mandatory part, text
  that adds no S after the old end leaves it where it was (so a stream waits there, looking only for S).
* Searching: with no complete match (found on `re`, with the exact translation), the partial search from
  `span` characters before the last S on reports what the search from the scan position reports.

The reference is quadratic on such a pattern (it looks for S to the end of the text from every start);
tests/plan/test_linear_work.py shows the module is not.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
import regex

from rtcompile.regex.analysis import PastRun, awaited_past_run
from rtcompile.regex.parser import parse_regex
from rtcompile.regex.translate import translate_complete
from tests.support.lanes import pick

CLASSES = ["[a-c]", "[^\\s\\[\\]]", "\\w", "[^<\\n]", "[a-z0-9_.-]"]


def _family(rng: random.Random) -> tuple[str, str]:
    """A random pattern of the family, and an alphabet for its texts."""
    lead = rng.choice(["", "[T]", "<f=", "ab", "[TOOL_C]"])
    optional = bool(lead) and rng.random() < 0.6
    run = rng.choice(CLASSES)
    low = rng.choice([1, 1, 2, 3])
    awaited = rng.choice(["[A]", ">x", "ca", "=>", "[ARGS]", "]]"])
    prefix = f"(?:{re.escape(lead)})?" if optional else re.escape(lead)
    quantifier = "+?" if low == 1 else f"{{{low},}}?"
    name = "(?P<name>" if rng.random() < 0.5 else "("
    pattern = f"{prefix}{name}{run}{quantifier}){re.escape(awaited)}"
    alphabet = sorted(set(lead + awaited + "abc_ \n<[]") | {"x", "-"})
    return pattern, "".join(alphabet)


def _patterns(count: int, seed: int) -> list[tuple[str, str, PastRun]]:
    rng = random.Random(seed)
    found: list[tuple[str, str, PastRun]] = []
    while len(found) < count:
        pattern, alphabet = _family(rng)
        past = awaited_past_run(parse_regex(pattern).root)
        assert past is not None, pattern  # every pattern of the family is one
        found.append((pattern, alphabet, past))
    return found


def _text(rng: random.Random, alphabet: str, past: PastRun, length: int) -> str:
    pieces: list[str] = []
    while sum(len(piece) for piece in pieces) < length:
        pieces.append(rng.choice([rng.choice(alphabet), rng.choice(alphabet), past.awaited, "[T]", "<f=", "ab"]))
    return "".join(pieces)[:length]


def _outcome(m: Any) -> tuple[Any, ...] | None:
    return None if m is None else (m.span(), bool(getattr(m, "partial", False)), m.groupdict())


@pytest.mark.parametrize("seed", range(pick(6, 2)))
def test_a_partial_match_past_the_mandatory_part_stays_until_its_string_follows(seed: int) -> None:
    rng = random.Random(seed)
    waited = 0
    for pattern, alphabet, past in _patterns(pick(40, 15), seed):
        compiled = regex.compile(pattern, regex.DOTALL)
        mandatory = re.compile(past.mandatory, re.DOTALL)
        for _ in range(pick(400, 150)):
            text = _text(rng, alphabet, past, rng.randint(0, 14))
            pos = rng.randint(0, len(text))
            found = compiled.search(text, pos, partial=True)
            if found is None or not found.partial or found.start() == len(text):
                continue
            if mandatory.match(text, found.start()):
                continue  # still within the mandatory part: no wait
            more = _text(rng, alphabet, past, rng.randint(1, 8))
            longer = text + more
            if past.awaited in longer[max(found.start(), len(text) - len(past.awaited) + 1) :]:
                continue  # the string arrived: the stream scans again
            waited += 1
            again = compiled.search(longer, pos, partial=True)
            assert again is not None and again.partial and again.start() == found.start(), (pattern, text, pos, more)
    assert waited > pick(1000, 200)


@pytest.mark.parametrize("seed", range(pick(6, 2)))
def test_the_partial_search_may_start_span_characters_before_the_last_string(seed: int) -> None:
    rng = random.Random(seed)
    for pattern, alphabet, past in _patterns(pick(40, 15), seed + 100):
        compiled = regex.compile(pattern, regex.DOTALL)
        complete = re.compile(translate_complete(pattern), re.DOTALL)
        for _ in range(pick(300, 100)):
            text = _text(rng, alphabet, past, rng.randint(0, 24))
            pos = rng.randint(0, len(text))
            expected = _outcome(compiled.search(text, pos, partial=True))
            found = complete.search(text, pos)
            if found is None:
                last = text.rfind(past.awaited, pos)
                found = compiled.search(text, max(pos, last - past.span), partial=True)
            assert _outcome(found) == expected, (pattern, text, pos)


@pytest.mark.parametrize(
    ("pattern", "awaited", "span"),
    [
        ("(?:\\[TOOL_CALLS\\])?(?P<name>[^\\s\\[\\]]+?)\\[ARGS\\]", "[ARGS]", 13),
        ("<function=([^<\\n]+?)>\\n", ">\n", 11),
        ("[a-z]{2,}?XY", "XY", 2),
    ],
)
def test_patterns_of_the_family(pattern: str, awaited: str, span: int) -> None:
    past = awaited_past_run(parse_regex(pattern).root)
    assert past is not None and (past.awaited, past.span) == (awaited, span)


@pytest.mark.parametrize(
    "pattern",
    [
        "(?:ab)?[a-c]+?c",  # a one-character S: regex tests the class at each step instead
        "[a-c]*?XY",  # no mandatory character
        "(?i)<f=[a-z]+?>x",  # case-insensitive
        "<f=[a-z]+?>x\\d",  # something after S
        "<f=[a-z]+>x",  # greedy
        "<f=[a-z]{1,5}?>x",  # bounded
        "<f=(?:ab)+?>x",  # a run of more than one character
    ],
)
def test_patterns_outside_the_family(pattern: str) -> None:
    assert awaited_past_run(parse_regex(pattern).root) is None


def test_the_one_character_counterexample_is_one() -> None:
    """Why S needs two characters: with one, regex tests the run's class at each step, and text without S
    moves the partial match (here from 1 to 3)."""
    compiled = regex.compile("(?:ab)?[a-c]+?c", regex.DOTALL)
    before, after = compiled.search("ba ", 1, partial=True), compiled.search("ba a", 1, partial=True)
    assert before is not None and after is not None and (before.start(), after.start()) == (1, 3)
