"""Duplicate group names (``(?P<n>..)|(?P<n>..)``, as one gpt-oss pattern writes both recipient orders):
later occurrences are renamed, and `merged_groupdict` reports what `regex` reports for the shared name
(the capture that completed last). Compared with `regex` on random patterns: searches from every
position (spans and captures) and partial matches."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
import regex

from rtcompile.regex.translate import UnsupportedRegex, translate
from rtcompile.runtime.partial import merged_groupdict
from tests.support.lanes import pick
from tests.support.regex_matching import assert_same_partial, our_partial, regex_partial

PATTERNS = pick(1500, 150)
TEXTS_PER_PATTERN = 8
BODIES = ["a", "b", "ab", "a+", "[ab]", "b?a", "(?:ab|b)"]


def _random_pattern(rng: random.Random) -> str:
    def group() -> str:
        return f"(?P<{rng.choice('nm')}>{rng.choice(BODIES)})"

    items = []
    for _ in range(rng.randint(2, 4)):
        item = rng.choice([group(), group(), "x", "a", "(?:" + group() + "|" + group() + ")"])
        if rng.random() < 0.25:
            item = f"(?:{item})" + rng.choice(["+", "*", "?"])
        items.append(item)
    if rng.random() < 0.5:
        cut = rng.randint(1, len(items) - 1)
        return "".join(items[:cut]) + "|" + "".join(items[cut:])
    return "".join(items)


def _spans_only(outcome: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    """A partial-search outcome without numbered groups (renaming adds stdlib groups; the named ones
    are compared through `merged_groupdict`)."""
    return outcome if outcome is None or outcome[0] == "partial" else outcome[:2]


def test_renamed_duplicates_report_what_regex_reports() -> None:
    rng = random.Random(11)
    compared = translated = 0
    for _ in range(PATTERNS):
        source = _random_pattern(rng)
        expected = regex.compile(source, regex.DOTALL)
        try:
            result = translate(source)
        except UnsupportedRegex:
            continue
        translated += 1
        full = re.compile(result.full, re.DOTALL)
        for _ in range(TEXTS_PER_PATTERN):
            text = "".join(rng.choice("abx") for _ in range(rng.randint(0, 7)))
            for pos in range(len(text) + 1):
                theirs, ours = expected.search(text, pos), full.search(text, pos)
                assert (ours is None) == (theirs is None), (source, text, pos)
                if ours is not None and theirs is not None:
                    assert ours.span() == theirs.span(), (source, text, pos)
                    assert merged_groupdict(ours, result.duplicates) == theirs.groupdict(), (source, text, pos)
                mine, reference = our_partial(result, text, pos), regex_partial(expected, text, pos)
                assert_same_partial(_spans_only(mine), _spans_only(reference), len(text))
                compared += 1
    assert translated > PATTERNS // 3 and compared > translated * TEXTS_PER_PATTERN


@pytest.mark.parametrize("pattern", [r"(?P<a>x?)|(?P<a>y)", r"(?P<a>x(?P<a>y))", r"(?P<a>x)|(?P<a>y)(?P=a)"])
def test_duplicates_whose_value_rule_is_not_modelled_are_left_to_regex(pattern: str) -> None:
    with pytest.raises(UnsupportedRegex) as info:
        translate(pattern)
    assert info.value.construct == "duplicate group name"
