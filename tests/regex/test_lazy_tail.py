"""A lazy one-character repeat that ends a delimiter (``<tool_call>\\s*?``): `regex` never reads past
its mandatory characters at the end of the text, so its partial matches are those of the pattern with
the repeat cut to its minimum. Compared with `regex` on every head/tail combination below, every text
up to length 3 over the alphabet and random longer ones, from every position."""

from __future__ import annotations

import itertools
import random

import pytest
import regex

from rtcompile.regex.translate import UnsupportedRegex, translate
from tests.support.regex_matching import assert_same_partial, our_partial, regex_partial

HEADS = ["<t>", "a", "<", "ab", "x?", "(?:a|b)", "", "[ab]+", "\\n", "(?P<k>a)"]
TAILS = ["\\s*?", "[^>]+?", "\\d+?", "a*?", "[ab]{1,3}?", "b{2,}?", ".*?", "[^a]??", "a+?"]
ALPHABET = "ab< t>\n1"


@pytest.mark.parametrize("head", HEADS)
def test_a_tail_lazy_repeat_matches_regex_partially(head: str) -> None:
    rng = random.Random(head)
    short = ["".join(t) for n in range(4) for t in itertools.product(ALPHABET, repeat=n)]
    for tail in TAILS:
        source = head + tail
        expected = regex.compile(source, regex.DOTALL)
        result = translate(source)
        texts = short + ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(4, 6))) for _ in range(60)]
        for text in texts:
            for pos in range(len(text) + 1):
                assert_same_partial(our_partial(result, text, pos), regex_partial(expected, text, pos), len(text))


@pytest.mark.parametrize("pattern", [r"<t[^>]*?>", r"a(\s*?)", r"(?:a\d+?)+"])
def test_lazy_repeats_followed_by_more_stay_with_regex(pattern: str) -> None:
    with pytest.raises(UnsupportedRegex) as info:
        translate(pattern)
    assert info.value.construct == "lazy single-character repeat"
