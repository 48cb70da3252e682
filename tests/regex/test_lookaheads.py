"""Positive lookaheads with nothing after them (reasoning opens like ``(?=[\\s\\S]*?</think>)``, closes
like ``\\n(?=\\n|$)``): `regex` reports a partial match exactly when some path of the lookahead's body
reads past the end, which the prefix pattern spells. Compared with `regex` on random patterns, all
texts up to length 3 over a small alphabet and random longer ones, from every position."""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path

import regex

import rtcompile
from rtcompile.regex.translate import UnsupportedRegex, translate
from tests.support.compiled import compiled_module
from tests.support.lanes import pick
from tests.support.regex_matching import assert_same_partial, our_partial, regex_partial

ATOMS = ["a", "b", "[ab]", "a*", "b+", "(?:ab|a)", "a?b", "[^a]*", ".*?", "[\\s\\S]*?", "\\n", "$", "</t>", "(a)"]
SHAPES = ["{p}(?={b})", "{p}(?:(?={b})|z)", "(?:{p}(?={b}))?", "{p}((?={b}))", "^(?={b})", "(?={b})"]
PATTERNS = pick(500, 50)
ALPHABET = "ab<t/>\n"


def _texts(rng: random.Random) -> list[str]:
    short = ["".join(t) for n in range(pick(4, 3)) for t in itertools.product(ALPHABET, repeat=n)]
    return short + ["".join(rng.choice(ALPHABET + "z") for _ in range(rng.randint(4, 7))) for _ in range(pick(40, 10))]


def test_tail_positive_lookaheads_match_regex_partially() -> None:
    rng = random.Random(4)
    compared = translated = 0
    for _ in range(PATTERNS):
        prefix = "".join(rng.choice(["a", "b", "<", "<t>", "x?", ""]) for _ in range(rng.randint(0, 2)))
        body = "".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.3:
            body += "|" + rng.choice(ATOMS)
        source = rng.choice(SHAPES).format(p=prefix, b=body)
        expected = regex.compile(source, regex.DOTALL)
        try:
            result = translate(source)
        except UnsupportedRegex:
            continue
        translated += 1
        for text in _texts(rng):
            for pos in range(len(text) + 1):
                assert_same_partial(our_partial(result, text, pos), regex_partial(expected, text, pos), len(text))
                compared += 1
    assert translated > PATTERNS // 2, translated


def test_a_lazy_lookahead_open_is_matched_in_one_attempt_per_scan() -> None:
    """`(?=[\\s\\S]*?</think>)` with no `</think>` anywhere: stdlib `search` would try every position,
    each scanning to the end (quadratic); the module matches at the scan position only, which gives
    the same answers."""
    pattern = r"(?=[\s\S]*?</think>)"
    assert translate(pattern).match_only and not translate(r"<think>(?=[\s\S]*?</think>)").match_only
    template = {
        "start_anchor": "<A>",
        "fields": {"reasoning_content": {"open_pattern": pattern, "close": "</think>"}, "content": {}},
    }
    module = compiled_module(template)
    assert module.REQUIRES == ()
    assert module.__file__ is not None
    source = Path(module.__file__).read_text(encoding="utf-8")
    scanner_source = "".join(source.partition("def _scan_outside")[1:])
    assert ".match(buf, pos)" in scanner_source and "partial_match(" in scanner_source
    for text in ["x" * 3000, "a</think>b", "ab" * 500 + "</think>c", "</thi"]:
        for chunks in ([text], [text[: len(text) // 2], text[len(text) // 2 :]]):
            parser, interpreted = module.ResponseParser(""), rtcompile.ResponseParser(template, "")
            assert [parser.feed(c) for c in chunks] == [interpreted.feed(c) for c in chunks]
            assert parser.finalize() == interpreted.finalize()


def test_match_only_search_equals_search() -> None:
    rng = random.Random(9)
    for source in [r".*?a", r"(?=.*?ab)", r"(?s:.)*?b$", r"(?=[\s\S]*?</t>)"]:
        result = translate(source)
        assert result.match_only
        full = re.compile(result.full, re.DOTALL)
        for _ in range(300):
            text = "".join(rng.choice("ab</t>\n") for _ in range(rng.randint(0, 9)))
            for pos in range(len(text) + 1):
                found, matched = full.search(text, pos), full.match(text, pos)
                assert (found and found.span()) == (matched and matched.span())
