"""``\\m`` and ``\\M`` (start and end of a word, by `regex`'s own ``\\w``): translated as lookarounds on
the same table. Compared with `regex` on random patterns and every text up to length 4 over letters,
a space and a combining accent: complete matches and partial matches from every position."""

from __future__ import annotations

import itertools
import random
import re

import regex

from rtcompile.regex.translate import UnsupportedRegex, translate, translate_complete
from tests.support.lanes import pick
from tests.support.regex_matching import assert_same_partial, our_partial, regex_partial

ATOMS = ["a", "b", " ", "é", "\\m", "\\M", "a+", "[ab ]", "(?:a|\\M)", "\\w*", ".", "x?"]
TEXTS = ["".join(t) for n in range(pick(5, 4)) for t in itertools.product("ab é\u0301", repeat=n)]


def test_word_edges_match_regex_fully_and_partially() -> None:
    rng = random.Random(2)
    checked = 0
    while checked < pick(150, 15):
        source = "".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 4)))
        if "\\m" not in source and "\\M" not in source:
            continue
        expected = regex.compile(source, regex.DOTALL)
        try:
            result = translate(source)
        except UnsupportedRegex:  # e.g. a lazy one-character repeat: partial matching stays with regex
            continue
        checked += 1
        complete = re.compile(translate_complete(source), re.DOTALL)
        for text in TEXTS[:: 1 + checked % 3]:
            assert [m.span() for m in complete.finditer(text)] == [m.span() for m in expected.finditer(text)]
            for pos in range(len(text) + 1):
                assert_same_partial(our_partial(result, text, pos), regex_partial(expected, text, pos), len(text))
