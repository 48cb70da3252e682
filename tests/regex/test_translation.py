"""Differential tests: translated stdlib patterns against the `regex` module they replace.

The reference engine compiles delimiters with ``regex.compile(p, regex.DOTALL)`` and streams with
``search(text, pos, partial=True)``. Every test here compares our stdlib translation with `regex`
itself, on random patterns from a grammar covering the supported subset and on strings biased towards
the pattern's own characters plus Unicode traps (combining marks, superscript and Arabic-Indic
digits, U+001C-U+001F, U+2028, case-folding oddities).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from regex import _regex as regex_engine

from rtcompile.regex import charsets
from rtcompile.regex.ast import Chars, Concat
from rtcompile.regex.parser import parse_regex
from rtcompile.regex.stdlib import emit_ranges
from rtcompile.regex.translate import InvalidRegex, StdlibRegex, UnsupportedRegex, translate
from rtcompile.runtime.partial import merged_groupdict
from tests.support.lanes import examples
from tests.support.regex_matching import (
    assert_same_partial,
    our_partial,
    patterns,
    regex_partial,
    summary,
    texts_for,
    translated,
)

FUZZ = settings(
    max_examples=examples(500),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


# ---------------------------------------------------------------------------------------------------
# Differential properties
# ---------------------------------------------------------------------------------------------------


@pytest.mark.slow  # ~5 s
@FUZZ
@given(pattern=patterns(), data=st.data())
def test_full_matching_equals_regex(pattern: str, data: st.DataObject) -> None:
    compiled, result = translated(pattern)
    ours = re.compile(result.full, re.DOTALL)
    # Duplicate group names are renamed (extra stdlib groups): then compare what a caller reads, the
    # spans and the named groups as `merged_groupdict` reports them.
    observed = summary if not result.duplicates else functools.partial(_merged_summary, result)
    if not result.duplicates:
        assert dict(ours.groupindex) == dict(compiled.groupindex)
        assert ours.groups == compiled.groups
    for text in data.draw(st.lists(texts_for(pattern), min_size=1, max_size=4)):
        pos = data.draw(st.integers(0, len(text)))
        assert observed(ours.search(text, pos)) == _expected(result, compiled.search(text, pos))
        assert observed(ours.match(text, pos)) == _expected(result, compiled.match(text, pos))
        assert [observed(m) for m in ours.finditer(text)] == [_expected(result, m) for m in compiled.finditer(text)]


def _merged_summary(result: StdlibRegex, match: Any) -> tuple[Any, ...] | None:
    return None if match is None else (match.span(), merged_groupdict(match, result.duplicates))


def _expected(result: StdlibRegex, match: Any) -> tuple[Any, ...] | None:
    if not result.duplicates:
        return summary(match)
    return None if match is None else (match.span(), match.groupdict())


@pytest.mark.slow  # ~6 s
@FUZZ
@given(pattern=patterns(), data=st.data())
def test_partial_search_equals_regex(pattern: str, data: st.DataObject) -> None:
    compiled, result = translated(pattern)
    for text in data.draw(st.lists(texts_for(pattern), min_size=1, max_size=4)):
        pos = data.draw(st.integers(0, len(text)))
        ours, theirs = our_partial(result, text, pos), regex_partial(compiled, text, pos)
        if result.duplicates:  # renamed groups: numbered captures differ by design (see above)
            ours, theirs = (o if o is None or o[0] == "partial" else o[:2] for o in (ours, theirs))
        assert_same_partial(ours, theirs, len(text))


REAL_WORLD = [
    r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
    r"<tool_call>\s*<function=(?P<name>\w+)>",
    r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
    r"\s*</think>\s*",
    r"</answer>|$",
    r"<\|start\|>assistant",
]
REAL_WORLD_TEXT = st.lists(
    st.sampled_from(
        [
            "<|channel|>", "commentary to=functions.", "get_weather", "<|message|>", "<|start|>", "assistant",
            "<tool_call>", "<function=", "search", ">", "<parameter=", "query", "</parameter>", "</think>",
            "</answer>", " ", "\n", "\u2028", "\u00a0", "é", "\u0301", "\u00b2", "\u0663", "<", "|", "/", "x",
            "<|chan", "<tool_", "</thi", "</ans", "<|start|>assi",
        ]
    ),
    max_size=8,
).map("".join)  # fmt: skip


@pytest.mark.parametrize("pattern", REAL_WORLD)
@settings(max_examples=examples(100), deadline=None)
@given(text=REAL_WORLD_TEXT)
def test_real_world_delimiters(pattern: str, text: str) -> None:
    compiled = regex.compile(pattern, regex.DOTALL)
    result = translate(pattern)
    ours = re.compile(result.full, re.DOTALL)
    assert [summary(m) for m in ours.finditer(text)] == [summary(m) for m in compiled.finditer(text)]
    # Streaming: every prefix of the text is a possible buffer, searched from a few emit positions.
    for end in range(len(text) + 1):
        buffer = text[:end]
        for pos in sorted({0, end // 2, max(0, end - 3), end}):
            assert summary(ours.search(buffer, pos)) == summary(compiled.search(buffer, pos))
            assert_same_partial(our_partial(result, buffer, pos), regex_partial(compiled, buffer, pos), end)


@pytest.mark.parametrize(
    ("pattern", "text", "pos", "expected"),
    [
        (r"\s*</think>\s*", "Hello </thi", 0, ("partial", 5)),
        (r"\s*</think>\s*", "Hello </think>\n", 0, ("full", (5, 15), ())),
        (r"</answer>|$", "x</ans", 0, ("full", (6, 6), ())),
        (r"</answer>", "x</ans", 0, ("partial", 1)),
        (r"<\|start\|>assistant", "abc<|start|>as", 0, ("partial", 3)),
        (r"<tool_call>\s*<function=(?P<name>\w+)>", "<tool_call>\n<function=get_w", 0, ("partial", 0)),
        (r"x(?=abc)", "xab", 0, ("partial", 0)),
        (r"x(?!abc)", "xab", 0, ("full", (0, 1), ())),
        (r"x(?!ab|cd)", "xa", 0, ("full", (0, 1), ())),
        (r"x(?!ab|cd)", "xc", 0, ("full", (0, 1), ())),
        (r"x(?=ab|cd)", "xc", 0, ("partial", 0)),
    ],
)
def test_partial_search_examples(pattern: str, text: str, pos: int, expected: tuple[Any, ...]) -> None:
    compiled = regex.compile(pattern, regex.DOTALL)
    assert regex_partial(compiled, text, pos) == expected
    assert our_partial(translate(pattern), text, pos) == expected


# ---------------------------------------------------------------------------------------------------
# Syntax that the two engines read differently
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "samples"),
    [
        (r"\N{LATIN SMALL LETTER A}\N", ["aN", "a"]),
        (r"\0\01\012\101", ["\x00\x01\nA"]),
        (r"[\1\101]", ["\x01", "A", "1"]),
        (r"a{,2}b", ["b", "aab", "a{,2}b"]),
        (r"a{b", ["a{b"]),
        (r"a{1,2", ["a{1,2"]),
        (r"a{ 1}", ["a{ 1}", "a"]),
        (r"[]a]", ["]", "a"]),
        (r"[^]a]", ["]", "b"]),
        (r"[a[b]", ["[", "a"]),
        (r"[\w-z]", ["-", "z", "b"]),
        (r"\Z|\z", ["", "x"]),
        (r"a$", ["a", "a\n", "a\n\n"]),
        (r"\v\a\x7f", ["\x0b\x07\x7f"]),
        (r"\gx\px\Nx", ["gxpxNx"]),
        (r"(?x) a b # comment", ["ab", "a b"]),
        (r"(?x)[ ]\ ", ["  "]),
        (r"(?m)^a$", ["a", "b\na\nc", "a\n"]),
        (r"a(?i)b|c", ["aB", "AB", "C"]),
        (r"(?i)k\u212a[k-l]", ["KKL", "k\u212a\u212a"]),
        (r"(?i)\u0130i", ["i\u0130", "\u0130I", "II"]),
        (r"(?i)[^k]", ["\u212a", "x"]),
        (r"[^\s\S]", ["a", "\n"]),
        (r"a(?#comment)*", ["aaa"]),
        (r"(?V0)a(?V0)b", ["ab"]),
    ],
)
def test_regex_syntax_is_read_like_regex(pattern: str, samples: list[str]) -> None:
    compiled = regex.compile(pattern, regex.DOTALL)
    ours = re.compile(translate(pattern).full, re.DOTALL)
    for sample in samples:
        assert summary(ours.fullmatch(sample)) == summary(compiled.fullmatch(sample)), sample
        assert [summary(m) for m in ours.finditer(sample)] == [summary(m) for m in compiled.finditer(sample)]


@pytest.mark.slow  # every code point: ~1 s of CPU
def test_character_classes_match_regex_on_every_code_point() -> None:
    pattern = r"[\w][\d][\s][^\W\d][\S\u0301]"
    compiled = [regex.compile(p, regex.DOTALL) for p in (r"\w", r"\d", r"\s", r"[^\W\d]", r"[\S\u0301]")]
    node = parse_regex(pattern).root
    assert isinstance(node, Concat)
    for element, reference in zip(node.items, compiled, strict=True):
        assert isinstance(element, Chars)
        ours = re.compile(emit_ranges(element.ranges), re.DOTALL)
        mismatches = [
            cp for cp in range(0, 0x110000, 7) if (ours.match(chr(cp)) is None) != (reference.match(chr(cp)) is None)
        ]
        assert mismatches == []


def test_case_table_is_complete() -> None:
    flags = charsets.CASE_FLAGS
    brute_force = tuple(cp for cp in range(0x110000) if len(regex_engine.get_all_cases(flags, cp)) > 1)
    assert charsets.cased_code_points() == brute_force


# ---------------------------------------------------------------------------------------------------
# Refusals and metadata
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        (r"a++", "possessive quantifier"),
        (r"a{1,2}+", "possessive quantifier"),
        (r"(?>ab)", "atomic group"),
        (r"(?<=a+)b", "variable-width lookbehind"),
        (r"(?<=a|bc)d", "variable-width lookbehind"),
        (r"\Ga", "\\G search anchor"),
        (r"\X", "\\X grapheme cluster"),
        (r"a\Kb", "\\K keep"),
        (r"(a(?R)?b)", "recursion"),
        (r"(a)(?1)", "group call"),
        (r"(?:abc){e<=1}", "fuzzy matching"),
        (r"(?V1)a", "(?V1) flag"),
        (r"(?r)a", "(?r) flag"),
        (r"(?a)\w", "(?a) flag"),
        (r"(?L)a", "(?L) flag"),
        (r"(?f)(?i)ss", "(?f) flag"),
        (r"(?b)a{e<=1}", "fuzzy matching"),
        (r"(?w)\b", "(?w) flag"),
        (r"(?i)\p{Lu}", "\\p{...} property"),
        (r"(?i)[\p{Lu}a]", "\\p{...} property"),
        (r"(?i)[[:alpha:]]", "POSIX character class"),
        (r"(a)\1", "backreference"),
        (r"\1(a)", "backreference"),
        (r"(?P<x>a)(?P=x)", "backreference"),
        (r"(?P<x>a?)(?P<x>b)", "duplicate group name"),
        (r"(?|(a)|(b))", "branch reset group"),
        (r"(a)?(?(1)a|b)", "conditional group"),
        (r"(*FAIL)", "control verb"),
        (r"(?i)[\hx]", "\\h horizontal space"),
        (r"(?=ab)a", "lookahead followed by more pattern"),
        (r"a(?!b+)", "variable-width negative lookahead"),
        (r"(?=(?<=a)b)", "nested lookaround"),
        (r"(?<=(a))b", "capture group in lookbehind"),
        (r"\s*?x", "lazy single-character repeat"),
        (r"a.{0,3}?b", "lazy single-character repeat"),
    ],
)
def test_unsupported_constructs_are_named(pattern: str, construct: str) -> None:
    regex.compile(pattern, regex.DOTALL)  # valid for regex ...
    with pytest.raises(UnsupportedRegex) as info:  # ... but refused by us
        translate(pattern)
    assert info.value.construct == construct
    assert construct in str(info.value)


@pytest.mark.parametrize("pattern", ["(", "a**", "[z-a]", r"\e", r"\1", "(?P<1>a)", "a{2,1}", r"\x4"])
def test_invalid_patterns_raise_invalid_regex(pattern: str) -> None:
    with pytest.raises(InvalidRegex):
        translate(pattern)
    assert not issubclass(InvalidRegex, UnsupportedRegex)


@pytest.mark.parametrize(
    ("pattern", "history"),
    [
        (r"</think>", 0),
        (r"\bfoo", 1),
        (r"(?<=ab)c", 2),
        (r"(?<!\d.)x|\B", 2),
        (r"^<\|start\|>", 1),  # one kept character tells the start of the text from dropped text's end
        (r"\Aa|b", 1),
        (r"(?m)^a", 1),
        (r"(?<=\b.)a", 2),  # the boundary reads the character before the lookbehind's window
    ],
)
def test_history(pattern: str, history: int) -> None:
    assert translate(pattern).history == history


def test_translations_are_cached() -> None:
    for pattern in REAL_WORLD:
        assert translate(pattern) is translate(pattern)
        assert parse_regex(pattern) is parse_regex(pattern)


class _CountingRegex:
    """Stands in for the `regex` module inside `charsets`, counting the membership probes of sets."""

    def __init__(self) -> None:
        self.probes = 0

    def compile(self, pattern: str, flags: int = 0) -> Any:
        compiled = regex.compile(pattern, flags)
        counter = self

        class Probe:
            def match(self, text: str) -> Any:
                counter.probes += 1
                return compiled.match(text)

            def finditer(self, text: str) -> Any:
                return compiled.finditer(text)

        return Probe()

    def __getattr__(self, name: str) -> Any:
        return getattr(regex, name)


def test_set_resolution_probes_few_code_points(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sets are resolved by probing `regex` at item boundaries (and, under (?i), at cased code points),
    never by trying every code point; the wall-clock budget is measured in benchmarks/."""
    charsets.cased_code_points()  # a one-off table, built on first use of (?i) with a set
    counting = _CountingRegex()
    monkeypatch.setattr(charsets, "regex", counting)
    word_ranges = len(charsets.TABLES["w"])
    for pattern, budget in [
        (r"[\w.-]+", 4 * word_ranges + 50),
        (r"[^<]*", 50),
        (r"(?:\n|\s)*<(?P<tag>[a-z_]+)>", 50),
        (r"(?i)<tool_call>\s*\{[^}]*\}", 4 * len(charsets.cased_code_points()) + 50),
    ]:
        charsets.resolve_set.cache_clear()
        counting.probes = 0
        parse_regex.cache_clear()
        parse_regex(pattern)
        assert 0 < counting.probes <= budget, (pattern, counting.probes)
