"""Unicode properties, POSIX classes and ``\\h``: their code points come from `regex` itself, so the
stdlib translation spells them as exact classes. Compared with `regex` (full and partial matching)
on texts mixing letters, digits, spaces and non-ASCII characters, and on every code point for the
classes alone."""

from __future__ import annotations

import random
import re

import pytest
import regex

from rtcompile.regex.translate import UnsupportedRegex, translate
from tests.support.regex_matching import assert_same_partial, our_partial, regex_partial

CLASSES = [
    r"\p{L}",
    r"\P{L}",
    r"\pN",
    r"\p{Lu}",
    r"\p{^Lu}",
    r"\p{Script=Greek}",
    r"[[:alpha:]]",
    r"[[:^digit:]]",
    r"[[:alpha:][:digit:]_]",
    r"[\p{L}\d]",
    r"[^\P{L}x]",
    r"\h",
    r"\p{L",
    r"\g<1",
    r"[[:a=:]]",
]
CONTEXTS = ["{}", "<{}+>", "{}*?x", "(?:{}|y)+z", "a{}{{2}}"]
SAMPLE = "aZé1٣ \t\u00a0\u3000_ΩωЖx<>zyg{}p<:=]1"


@pytest.mark.parametrize("item", [r"(?i)\p{Lu}", r"(?i)[[:upper:]]", r"(?i)[\p{Lu}x]"])
def test_case_insensitive_properties_are_left_to_regex(item: str) -> None:
    with pytest.raises(UnsupportedRegex):
        translate(item)


@pytest.mark.slow  # every code point: ~1 s of CPU each
@pytest.mark.parametrize("item", CLASSES)
def test_a_class_matches_the_code_points_regex_matches(item: str) -> None:
    everything = "".join(map(chr, range(0x110000))).encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    expected = regex.compile(item, regex.DOTALL)
    ours = re.compile(translate(item).full, re.DOTALL)
    theirs = [m.span() for m in expected.finditer(everything)]
    assert [m.span() for m in ours.finditer(everything)] == theirs


@pytest.mark.parametrize("item", CLASSES)
def test_a_class_in_context_matches_regex_fully_and_partially(item: str) -> None:
    rng = random.Random(item)
    for context in CONTEXTS:
        source = context.format(item)
        try:
            expected = regex.compile(source, regex.DOTALL)
        except regex.error:
            continue
        try:
            result = translate(source)
        except ValueError as error:  # a lazy one-character repeat in a delimiter: partial matching is refused
            assert "lazy single-character repeat" in str(error)
            continue
        full = re.compile(result.full, re.DOTALL)
        for _ in range(40):
            text = "".join(rng.choice(SAMPLE) for _ in range(rng.randint(0, 6)))
            assert [m.span() for m in full.finditer(text)] == [m.span() for m in expected.finditer(text)]
            for pos in range(len(text) + 1):
                assert_same_partial(our_partial(result, text, pos), regex_partial(expected, text, pos), len(text))
