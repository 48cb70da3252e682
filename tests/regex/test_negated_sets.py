"""Alternations of single characters: `regex` merges adjacent ones into one set and matches several
negated characters in it as "none of them" (``[^a]|[^b]`` is ``[^ab]``, not "any character"). The
translation reproduces that, for full and partial matching, or leaves the pattern to `regex`."""

from __future__ import annotations

import random
import re

import pytest
import regex

from rtcompile.regex.translate import UnsupportedRegex, translate
from tests.support.lanes import pick
from tests.support.regex_matching import assert_same_partial, our_partial, regex_partial

ATOMS = ["a", "b", "c", "[^a]", "[^b]", "[^c]", "[ab]", "[^ab]", "\\d", "(?:[^a])", "([^b])", "bc", "x"]
PATTERNS = pick(1500, 150)
TEXTS_PER_PATTERN = 10


def _random_pattern(rng: random.Random) -> str:
    alternation = "|".join(rng.choice(ATOMS) for _ in range(rng.randint(2, 4)))
    before = rng.choice(["", "", "x", "<"])
    after = rng.choice(["", "", "x", ">", "+", "*"])
    body = f"(?:{alternation})" if before or after else alternation
    return before + body + after


@pytest.mark.parametrize(
    ("pattern", "full"),
    [("[^a]|[^b]", "[^ab]"), ("(?:[^a]|[^b])x", "[^ab]x"), ("[^a]|b", "[^a]|b"), ("[^a]|bc|[^b]", "[^a]|bc|[^b]")],
)
def test_negated_characters_merge_like_regex(pattern: str, full: str) -> None:
    assert translate(pattern).full == full


@pytest.mark.parametrize("pattern", ["x[^a]|x[^b]", "(?i)[^a]|[^b]"])
def test_merges_we_do_not_model_are_left_to_regex(pattern: str) -> None:
    with pytest.raises(UnsupportedRegex):
        translate(pattern)


def test_random_alternations_of_characters_match_regex_fully_and_partially() -> None:
    rng = random.Random(5)
    compared = 0
    for _ in range(PATTERNS):
        source = _random_pattern(rng)
        expected = regex.compile(source, regex.DOTALL)
        try:
            result = translate(source)
        except UnsupportedRegex:
            continue
        full = re.compile(result.full, re.DOTALL)
        for _ in range(TEXTS_PER_PATTERN):
            text = "".join(rng.choice("abcx<>1") for _ in range(rng.randint(0, 6)))
            assert [m.span() for m in full.finditer(text)] == [m.span() for m in expected.finditer(text)], source
            for pos in range(len(text) + 1):
                assert_same_partial(our_partial(result, text, pos), regex_partial(expected, text, pos), len(text))
                compared += 1
    assert compared > PATTERNS * TEXTS_PER_PATTERN
