"""The partial-match pattern as streaming searches it (`rtcompile.regex.searched_prefix`): the same first
partial-match start before the end of the text as the translation's `prefix`, for every position of
texts made of what random patterns match; and written so that every branch of a literal-led
delimiter's opens with its first character, which `re` skips by.
"""

from __future__ import annotations

import random
import re

import pytest
import regex

from rtcompile.regex.searched_prefix import _branches, searched_prefix
from rtcompile.regex.translate import InvalidRegex, UnsupportedRegex, translate
from rtcompile.tooling.fuzz import delimiter_examples
from tests.support.lanes import pick
from tests.support.regex_fuzz import random_pattern, random_stream


@pytest.mark.parametrize(
    ("prefix", "searched"),
    [
        (r"(?:\Z|<\Z|<t\Z)", r"<\Z|<t\Z"),  # a branch that matches only at the end is left out
        (r"(?:(?:\Z|a\Z)|(?:\Z|b\Z))", r"a\Z|b\Z"),  # nested alternations are flattened
        (r"(?:\Z|a|b)(?=c)", r"a(?=c)|b(?=c)"),  # a leading group is distributed over what follows
        (r"(?:a|b)*c", r"(?:a|b)*c"),  # not a quantified one
        (r"(?:<a\s+)?to=(?:\Z|x)", r"<a\s+to=(?:\Z|x)|to=(?:\Z|x)"),  # but an optional one: with, without
        (r"(?:<a)??b", r"<ab|b"),  # (lazy or not)
        (r"(?:a)?+b", r"(?:a)?+b"),  # not a possessive one
        (r"(?:a)?", r"(?:a)?"),  # a branch after it would be empty: it matches anywhere, kept as written
        (r"(?:[ab]|c)d", r"(?:[ab]|c)d"),  # a branch would open with a class: kept as written
        (r"\Z", "(?!)"),  # nothing but the end
        (r"\A(?:\Z|a)", r"\A(?:\Z|a)"),  # an anchored pattern is left as it is
        (r"(?:[|)(]\Z|\(\Z)", r"[|)(]\Z|\(\Z"),  # classes and escapes hold no structure
        (r"(?:[]|]x|y)", r"[]|]x|y"),  # a `]` first in a class is a member
    ],
)
def test_these_prefixes_are_searched_so(prefix: str, searched: str) -> None:
    assert searched_prefix(prefix) == searched


def _first_start(pattern: re.Pattern[str], text: str, pos: int) -> int | None:
    """Where the first match from `pos` starts, None if there is none or it starts at the end."""
    m = pattern.search(text, pos)
    return None if m is None or m.start() == len(text) else m.start()


def test_random_patterns_partial_matches_start_where_the_prefix_says() -> None:
    rng = random.Random(2026)
    checked = 0
    while checked < pick(200, 40):
        pattern = random_pattern(rng)
        try:
            regex.compile(pattern, regex.DOTALL)
            prefix = translate(pattern).prefix
        except (regex.error, UnsupportedRegex, InvalidRegex):
            continue
        checked += 1
        written, searched = re.compile(prefix, re.DOTALL), re.compile(searched_prefix(prefix), re.DOTALL)
        examples = delimiter_examples(pattern, rng)
        for text in [random_stream(rng, examples, 4) for _ in range(4)]:
            for pos in range(len(text) + 1):
                expected = _first_start(written, text, pos)
                assert _first_start(searched, text, pos) == expected, (pattern, text, pos)


@pytest.mark.parametrize(
    "delimiter",
    [
        "<tool_call>",
        r"<\|channel\|>analysis<\|message\|>(?=.*?<\|end\|>)",
        r"(?:<\|channel\|>commentary<\|message\|>|<\|channel\|>final<\|message\|>)(?=.*?(?:<\|return\|>|<\|end\|>))",
        r"(?:<think>|<\|think\|>)",
        r"<tool_call>\s*\{",
        # gpt_oss's tool call: `to=` may come first
        r"(?:<\|channel\|>commentary\s+)?to=functions\.(?P<name>[^\s<]+)(?:\s*<\|channel\|>commentary)?[^<]*<\|message\|>",
    ],
)
def test_every_branch_of_a_literal_led_delimiter_opens_with_one_of_its_first_characters(delimiter: str) -> None:
    branches = _branches(searched_prefix(translate(delimiter).prefix))
    assert len(branches) > 1 and all(branch[:1] in "<t" for branch in branches), branches
