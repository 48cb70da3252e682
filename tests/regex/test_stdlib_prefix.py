"""A shared first character moved in front of a leading optional part (`rtcompile.regex.stdlib_prefix`):
`(?:<X)?<Y` is written `<(?:X<)?Y`, so that `re` skips to `<` in C instead of trying every position.
The translations find exactly what `regex` finds (search, match and finditer: spans and every group), on
every shape of the rewrite, greedy and lazy, with captures inside and after it, and under `(?i)`. (Why: a
one-shot parse of a random template with such an open was 3x slower than transformers at 400 KB, `re`
trying the whole pattern at each of 400,000 positions; the benchmarks measure that, not this test.)"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
import regex

from rtcompile.regex.parser import parse_regex
from rtcompile.regex.stdlib_prefix import hoist_leading_character
from rtcompile.regex.translate import translate, translate_complete
from tests.support.lanes import pick

SHAPES = [
    r"(?:<t>\s*)?<f=(?P<name>[^>\n]+)>",  # seed_oss / mimo / random-003's shape
    r"(?i)(?:<t>\s*)?<f=(?P<name>[^>\n]+)>",
    r"(?:<t>)??<f>",  # lazy: the optional part is tried last
    r"(?:<(?P<a>t)>)?<(?P<b>f)>",  # captures inside and after
    r"(?:ab)?ac",
    r"(?:aa)?a",
]
ALPHABET = "<>tf= \nabcT"


def _summary(m: Any) -> tuple[Any, ...] | None:
    return None if m is None else (m.span(), m.groups(), m.groupdict())


def test_the_rewrite_moves_the_shared_character_in_front() -> None:
    hoisted = hoist_leading_character(parse_regex(r"(?:<t>\s*)?<f=").root)
    assert translate(r"(?:<t>\s*)?<f=").full.startswith("<(?:t>")
    assert hoisted != parse_regex(r"(?:<t>\s*)?<f=").root
    # nothing shared, a capture around the optional part, or nothing after it: left as written
    for pattern in (r"(?:<t>)?[<a]f", r"(<t>)?<f", r"(?:<t>)?", r"(?:<t>)?+<f"):
        root = parse_regex(pattern).root
        assert hoist_leading_character(root) is root, pattern


@pytest.mark.parametrize("pattern", SHAPES)
def test_the_translations_find_what_regex_finds_on_every_short_text(pattern: str) -> None:
    compiled = regex.compile(pattern, regex.DOTALL)
    streamed = re.compile(translate(pattern).full, re.DOTALL) if not _refused(pattern) else None
    complete = re.compile(translate_complete(pattern), re.DOTALL)
    for length in range(pick(6, 5)):
        for chars in itertools.product(ALPHABET, repeat=length):
            text = "".join(chars)
            expected = [_summary(m) for m in compiled.finditer(text)]
            for ours in (streamed, complete):
                if ours is None:
                    continue
                assert [_summary(m) for m in ours.finditer(text)] == expected, (pattern, text)
                assert _summary(ours.search(text, 1)) == _summary(compiled.search(text, 1)), (pattern, text)
                assert _summary(ours.match(text)) == _summary(compiled.match(text)), (pattern, text)


def _refused(pattern: str) -> bool:
    try:
        translate(pattern)
    except ValueError:
        return True
    return False
