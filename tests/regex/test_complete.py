"""`translate_complete` against `regex` on complete text: patterns with backreferences, atomic groups,
possessive and lazy repeats, lookarounds and \\R (what `tag_pattern`s and start anchors may use), matched
with ``finditer`` exactly as the content parsers and the anchor search use them: same spans, same
named captures."""

from __future__ import annotations

import random
import re

import pytest
import regex

from rtcompile.regex.translate import UnsupportedRegex, translate_complete
from tests.support.lanes import pick

ALPHABET = "ab\n\r"
PATTERNS = pick(3000, 300)
TEXTS_PER_PATTERN = 12


class _Generator:
    """Random small patterns; groups are numbered as written, so backreferences can name earlier ones."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.groups: list[str] = []

    def pattern(self, depth: int = 0) -> str:
        items = [self.item(depth) for _ in range(self.rng.randint(1, 3))]
        text = "".join(items)
        if depth < 2 and self.rng.random() < 0.2:
            text += "|" + "".join(self.item(depth) for _ in range(self.rng.randint(1, 2)))
        return text

    def item(self, depth: int) -> str:
        rng = self.rng
        choice = rng.random()
        if depth >= 2 or choice < 0.35:
            atom = rng.choice(["a", "b", "[ab]", "[^a]", ".", "\\n", "$", "^", "\\R"])
        elif choice < 0.5:
            self.groups.append(f"g{len(self.groups) + 1}")
            name = self.groups[-1]
            body = self.pattern(depth + 1)
            atom = f"(?P<{name}>{body})" if rng.random() < 0.5 else f"({body})"
        elif choice < 0.6 and self.groups:
            number = rng.randint(1, len(self.groups))
            atom = rng.choice([f"(?:\\{number})", f"(?P={self.groups[number - 1]})"])
        elif choice < 0.7:
            atom = f"(?>{self.pattern(depth + 1)})"
        elif choice < 0.8:
            atom = rng.choice(["(?=", "(?!"]) + self.pattern(depth + 1) + ")"
        else:
            atom = f"(?:{self.pattern(depth + 1)})"
        if atom in ("$", "^") or atom.startswith("(?=") or atom.startswith("(?!"):
            return atom
        if rng.random() < 0.4:
            atom += rng.choice(["*", "+", "?", "{1,2}", "*?", "+?", "??", "*+", "++", "?+"])
        return atom


def _observed(pattern: regex.Pattern[str] | re.Pattern[str], text: str) -> list[tuple[object, ...]]:
    """What the content parsers and the anchor search read: spans and named captures (the translation
    adds unnamed groups to spell atomic groups, so numbered captures shift)."""
    return [(m.span(), m.groupdict()) for m in pattern.finditer(text)]


def test_complete_translation_matches_regex_on_random_patterns() -> None:
    rng = random.Random(20260514)
    compared = refused = 0
    for _ in range(PATTERNS):
        generator = _Generator(rng)
        source = generator.pattern()
        try:
            expected = regex.compile(source, regex.DOTALL)
        except regex.error:
            continue
        try:
            translated = re.compile(translate_complete(source), re.DOTALL)
        except UnsupportedRegex:
            refused += 1
            continue
        for _ in range(TEXTS_PER_PATTERN):
            text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 8)))
            assert _observed(translated, text) == _observed(expected, text), (source, text)
            compared += 1
    assert compared > PATTERNS * TEXTS_PER_PATTERN // 2, (compared, refused)


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        (r"((a)|b)+\2", "backreference to a repeated group"),
        (r"(a)(?:\1)+", "backreference in a repeat"),
        (r"(?i)(a)\1", "case-insensitive backreference"),
    ],
)
def test_complete_translation_refuses_what_regex_repeat_guards_change(pattern: str, construct: str) -> None:
    with pytest.raises(UnsupportedRegex) as info:
        translate_complete(pattern)
    assert info.value.construct == construct
