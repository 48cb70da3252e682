"""The analyses that read the pattern tree: sound against `regex` itself, and working on patterns that
stdlib `re` cannot reproduce (those the translation refuses)."""

from __future__ import annotations

import random
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rtcompile.ir import Delimiter
from rtcompile.regex.analysis import (
    lead_class,
    nested_unbounded_repeat,
    optional_group_names,
    portability_concerns,
    required_literals,
)
from rtcompile.regex.ast import walk
from rtcompile.regex.first_chars import delimiter_first_chars, match_starts, starts_at_buffer_start
from rtcompile.regex.parser import parse_regex
from rtcompile.regex.second_chars import second_chars
from rtcompile.regex.translate import InvalidRegex, UnsupportedRegex, translate
from rtcompile.runtime.scanning import lead_start
from rtcompile.tooling.fuzz import delimiter_examples
from tests.support.lanes import examples
from tests.support.regex_matching import TRAPS, patterns

# Constructs `regex` accepts and the translation refuses, mixed into generated patterns.
EXTENSIONS = [
    "a++", "\\w*+", "(?>ab|a)", "\\p{Lu}", "\\P{L}", "[\\p{N}x]", "[[:digit:]]", "(k)\\1", "(?P<n>a)(?P=n)",
    "(?:ab){e<=1}", "\\X", "\\R", "\\K", "\\G", "\\m", "(?|(a)|(b))", "(a)?(?(1)b|c)", "(?(?=a)ab|cd)",
    "\\h", "(?i:\\p{Lu})", "(?=ab)a",
]  # fmt: skip


@st.composite
def extended_patterns(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.one_of(patterns(depth=1), st.sampled_from(EXTENSIONS)), min_size=1, max_size=4))
    return draw(st.sampled_from(["", "", "(?i)"])) + "".join(parts)


def texts_for(pattern: str) -> st.SearchStrategy[str]:
    own = sorted({ch for ch in pattern if ch not in "\\()[]?*+{}|^$"}) or ["a"]
    piece = st.one_of(st.sampled_from(own), st.sampled_from(TRAPS), st.sampled_from(["ab", "K", "1", "\r\n"]))
    return st.lists(piece, max_size=8).map("".join)


def compiled_or_skip(pattern: str) -> Any:
    try:
        return regex.compile(pattern, regex.DOTALL)
    except regex.error:
        assume(False)


def regex_delimiter(pattern: str) -> Delimiter:
    return Delimiter(pattern, None, False, ())


ANALYSIS = settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


@ANALYSIS
@given(pattern=st.one_of(patterns(), extended_patterns()), data=st.data())
def test_first_chars_hold_every_match_and_partial_match_start(pattern: str, data: st.DataObject) -> None:
    compiled = compiled_or_skip(pattern)
    first = delimiter_first_chars(regex_delimiter(pattern))
    assume(first is not None)
    assert first is not None
    try:
        translate(pattern)
        partial_matches_are_real = True
    except UnsupportedRegex:
        partial_matches_are_real = False  # e.g. regex's shortcuts for lazy repeats, which we refuse
    for text in data.draw(st.lists(texts_for(pattern), min_size=1, max_size=4)):
        for match in compiled.finditer(text):
            assert match.start() < len(text) and ord(text[match.start()]) in first, (text, match)
        for pos in range(len(text) + 1 if partial_matches_are_real else 0):
            match = compiled.search(text, pos, partial=True)
            if match is not None and pos <= match.start() < len(text):
                assert ord(text[match.start()]) in first, (text, pos, match)


def _contains_in_order(text: str, strings: tuple[str, ...]) -> bool:
    at = 0
    for string in strings:
        found = text.find(string, at)
        if found < 0:
            return False
        at = found + len(string)
    return True


WORDS = ["ab", "<|m|>", "to=", "b<"]
# Items that consume known text, items that may consume nothing, and items that consume varying text.
ITEMS = st.one_of(
    st.sampled_from(WORDS).map(regex.escape),
    st.sampled_from(["(?:ab)?", "(?:to=|b)", "[a-c]*", "[^<]+", "(?P<n>[b-t]+)", "\\s*", "(?=ab)", "\\b", "(?i:ab)"]),
    patterns(depth=1),
)


@ANALYSIS
@given(items=st.lists(ITEMS, min_size=1, max_size=6), seed=st.integers(0, 2**32), data=st.data())
def test_required_literals_are_in_every_match_in_order(items: list[str], seed: int, data: st.DataObject) -> None:
    pattern = "".join(items)
    compiled = compiled_or_skip(pattern)
    required = required_literals(parse_regex(pattern).root)
    # Texts the pattern matches (drawn from its tree), then the same with other text around and between.
    examples = delimiter_examples(pattern, random.Random(seed), count=6)
    assume(examples)
    piece = st.one_of(st.sampled_from([*examples, *WORDS, " ", "c"]), texts_for(pattern))
    texts = [*examples, *data.draw(st.lists(st.lists(piece, max_size=6).map("".join), max_size=3))]
    for text in texts:
        for match in compiled.finditer(text, overlapped=True):
            assert _contains_in_order(match.group(), required), (text, match, required)


@pytest.mark.parametrize(
    ("pattern", "required"),
    [
        # gpt-oss's tool-call open: the name and the optional parts break the runs
        (
            "(?:<\\|channel\\|>commentary\\s+)?to=functions\\.(?P<name>[^\\s<]+)(?:\\s*<\\|channel\\|>commentary)?"
            "[^<]*(?:<\\|constrain\\|>[^<]*)?<\\|message\\|>",
            ("to=functions.", "<|message|>"),
        ),
        ('\\{"name": "(?P<name>[^"]+)", "arguments": ', ('{"name": "', '", "arguments": ')),
        ("a(?:b|c)d", ()),  # single characters are no filter worth a search
        ("a(b)c", ("abc",)),  # capture groups too
        ("(?:ab)cd", ("abcd",)),  # groups are opened up
        ("(?i)abc", ()),  # case-insensitive text is not plain
        ("(?=abc)abd", ("abd",)),  # a lookahead consumes nothing
        ("ab\\bcd", ("ab", "cd")),  # nor does a word boundary, which splits the run
        ("ab(?:x|y)cd(?:z)?ef+gh", ("ab", "cd", "gh")),
        ("a.bbb.cc.dddd.eeeee", ("bbb", "dddd", "eeeee")),  # the three longest, in order
        ("", ()),
    ],
)
def test_required_literals(pattern: str, required: tuple[str, ...]) -> None:
    assert required_literals(parse_regex(pattern).root) == required


LEADS = st.sampled_from(["\\}", "\\s*", "[ab]+", "\\]?", "b{1,3}", "(?:\\s)*", "[^<a-z]"])


@ANALYSIS
@given(
    lead=st.lists(LEADS, max_size=3).map("".join),
    rest=st.lists(ITEMS, max_size=3).map("".join),
    word=st.sampled_from(WORDS),
    seed=st.integers(0, 2**32),
    data=st.data(),
)
def test_no_match_starts_before_the_run_of_its_lead_class(
    lead: str, rest: str, word: str, seed: int, data: st.DataObject
) -> None:
    pattern = lead + regex.escape(word) + rest
    compiled = compiled_or_skip(pattern)
    ranges = lead_class(parse_regex(pattern).root)
    assume(ranges is not None)
    assert ranges is not None
    chars = frozenset(chr(cp) for lo, hi in ranges for cp in range(lo, hi + 1))
    first = required_literals(parse_regex(pattern).root)[0]
    examples = delimiter_examples(pattern, random.Random(seed), count=4)
    piece = st.sampled_from([*examples, *WORDS, " ", "  ", "}", "]", "a", "b", "<"])
    for text in [*examples, *data.draw(st.lists(st.lists(piece, max_size=10).map("".join), min_size=1, max_size=3))]:
        for match in compiled.finditer(text, overlapped=True):
            for pos in range(match.start() + 1):
                found = text.find(first, pos)
                assert 0 <= found and lead_start(text, pos, found, chars) <= match.start(), (text, pos, match)


@pytest.mark.parametrize(
    ("pattern", "lead"),
    [
        ("\\}\\s*\\]\\s*<\\|tools_suffix\\|>", "\t\n\x0b\x0c\r ]}"),  # apertus's close (and Unicode spaces)
        ("<\\|a\\|>(?P<n>\\w+)", ""),  # the string comes first
        ("[ab]+xy", "ab"),
        ("x(?:y|z)yz", None),  # an alternation before the string
        ("\\b\\}xy", None),  # so far only classes and their repeats
        (".xy", None),  # a class too large to test character by character
        ("x(?P<n>\\w+)", None),  # no string every match contains
    ],
)
def test_lead_class(pattern: str, lead: str | None) -> None:
    ranges = lead_class(parse_regex(pattern).root)
    if lead is None:
        assert ranges is None
        return
    assert ranges is not None
    chars = "".join(chr(cp) for lo, hi in ranges for cp in range(lo, hi + 1))
    # (with \\s the class goes on with Unicode's spaces, after the ASCII characters listed)
    assert chars.startswith(lead) if "\\s" in pattern else chars == lead


def _follows(seconds: dict[int, Any], text: str, start: int) -> bool:
    """Whether the second look lets the match (or partial match) starting at `start` through."""
    if start + 1 >= len(text):
        return True  # the text ends after its first character: always looked at
    follow = seconds.get(ord(text[start]))
    return follow is None or any(lo <= ord(text[start + 1]) <= hi for lo, hi in follow)


# Alternatives beside a pattern that test the text's start or end first (`<\|im_end\|>|$`): they start
# no match inside the text (`match_starts`), so they have no second characters to look at.
STRING_ENDS = st.sampled_from(["", "$|", "\\Z|", "(?:$)|", "^<a|", "\\A<|", "(?:\\Aa|$)|"])


def _leads_with_string_start(pattern: str) -> bool:
    """Whether a path of `pattern` tests the text's start first (`^<a|...`): its matches begin at 0."""
    return bool(regex.match(r"(?:\(\?:)?(?:\^|\\A)", pattern)) or "|^" in pattern or "|\\A" in pattern


@ANALYSIS
@given(
    end=STRING_ENDS,
    body=st.one_of(patterns(), extended_patterns(), st.lists(ITEMS, min_size=1, max_size=4).map("".join)),
    seed=st.integers(0, 2**32),
    data=st.data(),
)
def test_second_chars_hold_every_match_and_partial_match(end: str, body: str, seed: int, data: st.DataObject) -> None:
    """Every match and partial match that can begin in a chunk starts with a first character and a
    second one the second look lets through. (A chunk never begins the text: a parser that has
    committed text keeps one character of it where a pattern tests the text's start, `match_starts`;
    so a match at 0 of such a pattern is not the second look's business.)"""
    pattern = end + body
    compiled = compiled_or_skip(pattern)
    anywhere = 1 if _leads_with_string_start(pattern) else 0
    seconds = second_chars(pattern)
    assume(seconds is not None)
    assert seconds is not None
    starts = match_starts(regex_delimiter(pattern))
    assert starts is not None
    # no character a match cannot start with (a nullable path after a lookbehind unbounds the first;
    # beside an end branch, `match_starts` keeps only the characters a complete match needs, and the
    # fast path gives only those a second look)
    first = delimiter_first_chars(regex_delimiter(pattern))
    if not end:
        assert set(seconds) <= (starts.chars if first is None else first)
    # where a literal a path's lookbehind needs ends, the fast path scans whatever follows
    # (`MatchStarts.after`): the second look answers for every other position
    after = starts.after
    examples = delimiter_examples(pattern, random.Random(seed), count=4)
    piece = st.one_of(st.sampled_from([*examples, *WORDS, " ", "c"] if examples else WORDS), texts_for(pattern))
    texts = [*examples, *data.draw(st.lists(st.lists(piece, max_size=6).map("".join), min_size=1, max_size=3))]
    for text in texts:
        for match in compiled.finditer(text, overlapped=True):
            # (a zero-width match inside the text comes from an alternative that is a lookahead alone)
            if anywhere <= match.start() < len(text) and not _ends_one_of(after, text, match.start()):
                assert _follows(seconds, text, match.start()), (text, match)
        for pos in range(anywhere, len(text) + 1):
            match = compiled.search(text, pos, partial=True)
            if match is not None and pos <= match.start() < len(text) and not _ends_one_of(after, text, match.start()):
                assert _follows(seconds, text, match.start()), (text, pos, match)


def _ends_one_of(strings: frozenset[str], text: str, position: int) -> bool:
    return any(text.endswith(string, 0, position) for string in strings)


@pytest.mark.parametrize(
    ("pattern", "seconds"),
    [
        ('<\\|open\\|>call tool="(?P<name>[^"]+)"', {"<": "|"}),
        ("(?:<\\|channel\\|>commentary\\s+)?to=functions\\.", {"<": "|", "t": "o"}),
        ("<(?:a|bc)?d", {"<": "abd"}),
        ("x{2,5}y", {"x": "x"}),
        ("a*b", {"a": "ab", "b": None}),  # "b" alone is a match: anything may follow it
        ("(?i)<think>", {"<": "Tt"}),
        ("(?:ab)*c", {"a": "b", "c": None}),
        ("(?<![x])\\bab", {"a": "b"}),  # what zero-width items require only narrows the matches
        ("(?<=x)ab|cd", {"c": "d"}),  # a path after a literal is looked for by where the literal ends
        # An alternative that is a lookahead alone matches empty where its body's text begins.
        ("x*<e|(?=<s)", {"x": "<x", "<": "es"}),
        ("(?:(?=ab))", {"a": "b"}),
        ("(?=<)", {"<": None}),
        # An alternative that tests the text's start or end first starts no match inside the text
        # (`$` may hold back a final newline: the fast path tests for that on its own).
        ("<\\|im_end\\|>|$", {"<": "|"}),
        ("(?:$|</s>)", {"<": "/"}),
        ("\\Z|<a", {"<": "a"}),
        ("^<x>|<y>", {"<": "y"}),
        ("(?:\\A<x>|<y>)", {"<": "y"}),
        ("<a$|<b", {"<": "ab"}),  # (an end after the first character narrows nothing)
    ],
)
def test_second_chars(pattern: str, seconds: dict[str, str | None]) -> None:
    found = second_chars(pattern)
    assert found is not None
    listed = {
        chr(first): None if follow is None else "".join(chr(cp) for lo, hi in follow for cp in range(lo, hi + 1))
        for first, follow in found.items()
    }
    assert listed == seconds


@pytest.mark.parametrize(
    "pattern", ["[^<]+x", "(a)\\1", "a?", "(?:ab){e<=1}", "a*?b", "(?=)", "(?=a)|b?", "(?!a)", "$", "\\Z|\\A"]
)
def test_second_chars_give_up_where_matches_are_not_bounded(pattern: str) -> None:
    assert second_chars(pattern) is None


ANCHORS = st.sampled_from(["^", "\\A", "(?:^|\\A)", "(?:\\Aa|^b)", "(\\A)", "(?m)^", ""])


@ANALYSIS
@given(pattern=st.tuples(ANCHORS, st.one_of(patterns(), extended_patterns())).map("".join), data=st.data())
def test_buffer_start_delimiters_only_match_at_zero(pattern: str, data: st.DataObject) -> None:
    compiled = compiled_or_skip(pattern)
    assume(starts_at_buffer_start(regex_delimiter(pattern)))
    for text in data.draw(st.lists(texts_for(pattern), min_size=1, max_size=4)):
        for pos in range(len(text) + 1):
            match = compiled.search(text, pos)
            assert match is None or match.start() == 0, (text, pos, match)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"a++b", "a"),
        (r"(?>xy|z)", "xz"),
        (r"(k)\1", "k"),
        (r"(?i)\p{Lu}", None),  # every cased letter: too large to enumerate
        (r"(?i)[[:digit:]]x", "0123456789"),
        (r"(a)?(?(1)b|c)", "abc"),
        (r"(?|(x)|(y))z", "xy"),
        (r"\Gab", "a"),
        (r"(?:ab){e<=1}", None),  # fuzzy matching can start anywhere
        (r"\1?(a)", None),  # a backreference may start the match
    ],
)
def test_first_chars_of_patterns_the_translation_refuses(pattern: str, expected: str | None) -> None:
    with pytest.raises(UnsupportedRegex):
        translate(pattern)
    first = delimiter_first_chars(regex_delimiter(pattern))
    assert first == (None if expected is None else frozenset(map(ord, expected)))


def test_large_unicode_property_is_bounded_exactly() -> None:
    first = delimiter_first_chars(regex_delimiter(r"\p{Nd}"))
    digits = regex.compile(r"\p{Nd}")
    assert first == frozenset(cp for cp in range(0x110000) if digits.match(chr(cp)))


@pytest.mark.parametrize(
    ("pattern", "nodes"),
    [
        (r"a++", ["Concat", "Repeat", "Chars"]),
        (r"(?>a)", ["Concat", "Atomic", "Concat", "Chars"]),
        (r"(a)\1", ["Concat", "Group", "Concat", "Chars", "Backreference"]),
        (r"(?P<n>a)(?P=n)", ["Concat", "Group", "Concat", "Chars", "Backreference"]),
        (r"\p{L}", ["Concat", "Chars"]),
        (r"a{e<=1}", ["Concat", "Fuzzy", "Chars"]),
        (r"(a){e<=1}", ["Concat", "Group", "Fuzzy", "Concat", "Chars"]),
        (r"(?|(a)|(b))", ["Concat", "BranchReset", "Concat", "Group", "Concat", "Chars", "Concat", "Group"]),
        (r"(a)(?(1)b)", ["Concat", "Group", "Concat", "Chars", "Conditional", "Concat", "Chars", "Concat"]),
        (r"(*FAIL)|\X", ["Alternation", "Concat", "Opaque", "Concat", "Opaque"]),
        (r"a(?R)?", ["Concat", "Chars", "Repeat", "Opaque"]),
    ],
)
def test_the_parser_builds_nodes_for_regex_only_constructs(pattern: str, nodes: list[str]) -> None:
    assert [type(node).__name__ for node in walk(parse_regex(pattern).root)][: len(nodes)] == nodes


def test_group_numbering_follows_regex() -> None:
    for pattern in [r"(?|(a)|(b)(c))(d)", r"(?P<x>a)(b)(?P<x>c)", r"(a)(?:b(c))?"]:
        parsed = parse_regex(pattern)
        reference = regex.compile(pattern)
        assert (parsed.group_count, dict(parsed.group_names)) == (reference.groups, dict(reference.groupindex))


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        (r"(?i)(\p{L})++", "\\p{...} property"),  # inside the repeat, met before its possessive suffix
        (r"a++\p{L}", "possessive quantifier"),
        (r"(?a)(?>x)", "(?a) flag"),
        (r"(?>x)(?a)", "atomic group"),
        (r"(?P<x>a)\1(?P<x>b)", "backreference"),
        (r"(?P<x>a)(?P<x>b)\1", "duplicate group name"),
    ],
)
def test_the_first_untranslatable_construct_is_named(pattern: str, construct: str) -> None:
    with pytest.raises(UnsupportedRegex) as info:
        translate(pattern)
    assert info.value.construct == construct


def test_invalid_patterns_are_not_parsed() -> None:
    with pytest.raises(InvalidRegex):
        parse_regex("(")


@pytest.mark.parametrize(
    ("pattern", "optional"),
    [
        (r"(?P<a>x)?(?P<b>y)", {"a"}),
        (r"(?P<a>x)|(?P<b>y)", {"a", "b"}),
        (r"(?P<a>x)|(?P<a>y)", set()),  # one name in both branches: always set
        (r"(?!(?P<a>x))y", {"a"}),  # a group in a negative lookaround never takes part
        (r"(?=(?P<a>x))x", set()),
        (r"(?P<a>x)(?(a)(?P<b>y)|z)", {"b"}),
        (r"(?:(?P<a>x)+)*", {"a"}),
    ],
)
def test_optional_groups(pattern: str, optional: set[str]) -> None:
    assert optional_group_names(parse_regex(pattern)) == optional


@pytest.mark.parametrize(
    ("pattern", "nested"),
    [
        (r"<(\p{L}+)+>", True),
        (r"(?:a|b*)*", True),
        (r"(?:a{1,5})+", False),
        (r"(?:a++)+", False),
        (r"(?=(a+)+)", True),
        (r"(?>(a*)*)", True),
    ],
)
def test_nested_unbounded_repeats(pattern: str, nested: bool) -> None:
    assert nested_unbounded_repeat(parse_regex(pattern).root) is nested


def test_portability_concerns_come_from_the_tree() -> None:
    assert portability_concerns(parse_regex(r"[*+](?=a)\101").root) == ["a lookaround"]
    assert portability_concerns(parse_regex(r"(a)\1(?>b)c*+(?1)").root) == [
        "a backreference",
        "an atomic group",
        "a possessive quantifier",
        "recursion",
    ]


@pytest.mark.parametrize(
    "pattern",
    [r"<(?P<k>\w+)>.*?</(?P=k)>", r"<(\p{L}+)+>", r"(?i)<think>", r"<a>(?|(x)|(y))\1", r"\[C\]\s*(?:x){e<=1}"],
)
def test_the_fuzzer_draws_examples_of_any_pattern_regex_accepts(pattern: str) -> None:
    examples = delimiter_examples(pattern, random.Random(1))
    assert examples
    assert all(regex.fullmatch(pattern, text, regex.DOTALL) for text in examples)
