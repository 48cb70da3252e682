"""The linear rewrites of complete-match patterns (`rtcompile.regex.linear_repeats`): lazy repeats that
end the pattern and repeated two-way alternations, against `regex` with ``finditer`` (what the
xml-inline parser and the start anchor run): same spans, same captures, on every short text over a
small alphabet, on random longer ones, and on long bodies with near misses of the closing tag."""

from __future__ import annotations

import itertools
import json
import random
import re

import pytest
import regex

from rtcompile.regex.translate import translate_complete
from rtcompile.runtime.content import _CALL_LIST_STRING
from tests.support.lanes import pick
from tests.support.paths import TEMPLATES

ALPHABET = 'ab<>/\n\\"'

HEADS = ["", "a", "<", "(?P<k>[ab]+)>", "a|<", "(?:<|b)"]
LAZIES = [".*?", ".+?", "[^a]*?", "[ab<]*?", "[^<]+?", "(?P<v>.*?)", "(?P<v>[^\n]*?)", "(?P<v>.{2,}?)", "a*?"]
TAILS = [
    "</a>",
    "<",
    "\n?</a>",
    "(?:b|</a>)",
    "</[ab]+>",
    "\\b</a>",
    "(?P<t>b)a?",
    "(?:<)?</(?:a)?b>",
    "</a>(?=b)",
    "(?<=a)<",
    "<(?!a)",
    "$",
    "a*",
    "b(?P<w>.*?)a",
]
ALTERNATIONS = [
    '"(?:[^"\\\\]|\\\\.)*"',
    '"(?:\\\\.|[^"\\\\])*"',
    "(?:a|<b)*>",
    "(?:[ab]|<\n)*",
    "(?:a|b)*<",
    "(?:a|ab)*<",
    "(?:[^a]|a.)*$",
]


# Continuations that refer back to a group: captured before the repeat (rewritten), still open at
# it or captured in the continuation (left lazy: the check would see another value), possibly unset.
BACKREFERENCES = [
    "<(?P<k>[ab]+)>(?P<v>.*?)</(?P=k)>",
    "(a)(.*?)<\\1",
    "((a).*?)<\\2",
    "(?:(a)|b)(?P<v>.*?)<\\1",
    "<(?P<k>a|b)?>(?P<v>.*?)</(?P=k)>",
    "(?P<k>[ab]+)(?P<v>.*?)/(?P=k)(?P=k)",
    "(?P<v>a.*?)b(?P=v)",
    "((a).*?)<\\2\\1",
    "(.*?)(a)<\\2",
    "(?P<k>[ab])(?P<v>.*?)(?P=k)",
    "(?P<v>a.*?)b\\g<01>",  # group 1 by another spelling
]


def _observed(pattern: regex.Pattern[str] | re.Pattern[str], text: str) -> list[tuple[object, ...]]:
    return [(m.span(), m.groupdict()) for m in pattern.finditer(text)]


def _texts(rng: random.Random) -> list[str]:
    short = ["".join(t) for n in range(pick(5, 2)) for t in itertools.product(ALPHABET, repeat=n)]
    return short + ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(5, 14))) for _ in range(pick(300, 30))]


def _cases() -> list[str]:
    lazy = [head + middle + tail for head in HEADS for middle in LAZIES for tail in TAILS]
    alternations = ALTERNATIONS + [f"x{a}y" for a in ALTERNATIONS] + [f"(?P<s>{a})b?" for a in ALTERNATIONS]
    return lazy + alternations + BACKREFERENCES


@pytest.mark.parametrize("pattern", _cases())
def test_rewritten_pattern_matches_like_regex(pattern: str) -> None:
    expected = regex.compile(pattern, regex.DOTALL)
    translated = re.compile(translate_complete(pattern), re.DOTALL)
    for text in _texts(random.Random(pattern)):
        assert _observed(translated, text) == _observed(expected, text), (pattern, text, translated.pattern)


def _bundled_tag_patterns() -> list[tuple[str, str]]:
    """Each distinct tag pattern of the bundled templates, named by the first template that has it (nine
    patterns in sixteen fields: olmo3 and minicpm, say, share one, checked once)."""
    found: dict[str, str] = {}
    for path in sorted(TEMPLATES.glob("*.json")):
        fields = json.loads(path.read_text(encoding="utf-8"))["response_template"]["fields"]
        for field in fields.values():
            pattern = (field.get("content_args") or {}).get("tag_pattern")
            if pattern is not None:
                found.setdefault(pattern, path.stem)
    return [(model, pattern) for pattern, model in found.items()]


@pytest.mark.parametrize(("model", "pattern"), _bundled_tag_patterns())
def test_bundled_tag_patterns_on_long_bodies_with_near_misses(model: str, pattern: str) -> None:
    expected = regex.compile(pattern, regex.DOTALL)
    translated = re.compile(translate_complete(pattern), re.DOTALL)
    # What a value may hold: the closing tags and separators cut short, escapes, newlines, brackets.
    pieces = ["<", "</", "</parameter", "</arg_value", "<|close|>", "</｜DSML｜parameter", '"', "\\", '\\"', "]", "}"]
    pieces += ["\n", "\n<", "]<]minimax[>[", "x" * 50, " ", "=", ",", "[", "{", "'"]
    rng = random.Random(model)
    for _ in range(pick(30, 10)):
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(pick(200, 20), pick(2000, 200))))
        for text in _texts_around(pattern, body, rng):
            assert _observed(translated, text) == _observed(expected, text), (model, text[:200])


def _texts_around(pattern: str, body: str, rng: random.Random) -> list[str]:
    """Texts that open a tag like the pattern's, hold `body`, and close it properly or not at all."""
    openers = ['<｜DSML｜parameter name="k">', "<arg_key>k</arg_key>\n<arg_value>", "<parameter=k>\n"]
    openers += ['<parameter name="k">', '<|open|>argument key="k"<|sep|>', "]<]minimax[>[<k>", 'k="', "k=[", "k={"]
    closers = ["</｜DSML｜parameter>", "</arg_value>", "\n</parameter>", "</parameter>", "<|close|>argument<|sep|>"]
    closers += ["</k>", '"', "]", "}", ""]
    texts = []
    for opener in openers:
        for closer in rng.sample(closers, 4):
            texts.append(opener + body + closer + body[: rng.randint(0, 100)])
    return texts


def test_a_continuation_referring_back_to_a_group_captured_before_the_repeat_is_unrolled() -> None:
    # `<(\\w+)>(.*?)</\\1>`: the key is fixed by the time the value is read, so the check `(?!</\\1>)`
    # sees what the close will; a group still open at the repeat or captured after it would not be.
    for pattern in BACKREFERENCES[:6]:
        assert "*?" not in translate_complete(pattern), pattern
    for pattern in BACKREFERENCES[6:]:
        assert "*?" in translate_complete(pattern), pattern


def test_bundled_tag_patterns_lose_every_lazy_repeat_of_the_value() -> None:
    # The long part of a parameter is its value: no bundled translation leaves it to `re`'s one-step loop.
    for model, pattern in _bundled_tag_patterns():
        translated = translate_complete(pattern)
        value = translated[translated.index("(?P<value>") :]
        assert "*?" not in value and "+?" not in value, model


def test_the_call_list_string_pattern_is_the_references_unrolled() -> None:
    # rtcompile.runtime.content spells the python-call-list string token unrolled; the reference's
    # spelling is the repeated alternation. Same match, same groups, from every position.
    written = re.compile(r"""'((?:[^'\\\n\r]|\\.)*)'|"((?:[^"\\\n\r]|\\.)*)\"""", re.DOTALL)
    alphabet = "'\"\\a\n"
    texts = ["".join(t) for n in range(7) for t in itertools.product(alphabet, repeat=n)]
    rng = random.Random(7)
    texts += ["'" + "".join(rng.choice(alphabet + "bc") for _ in range(3000)) + "'" for _ in range(20)]
    for text in texts:
        for pos in range(min(len(text), 8) + 1):
            ours, theirs = _CALL_LIST_STRING.match(text, pos), written.match(text, pos)
            assert (ours and (ours.span(), ours.groups())) == (theirs and (theirs.span(), theirs.groups())), text
