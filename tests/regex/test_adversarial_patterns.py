"""The divergences a random-regex attack found (issue 24), each class as explicit cases.

Every case runs the compiled module, the interpreter and transformers on the same streams, in one
chunk, under every 2-way split, one character at a time and one-shot (`tests.support.regex_fuzz.divergences`),
and expects no difference: messages, events, exception classes (and, between our two engines,
exception messages).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import regex

from rtcompile.regex.analysis import history
from rtcompile.regex.parser import parse_regex
from rtcompile.regex.translate import UnsupportedRegex, translate, translate_complete
from tests.support.regex_fuzz import divergences

# ---------------------------------------------------------------------------------------------------
# Delimiters that match the empty string, at the end of the stream
# ---------------------------------------------------------------------------------------------------

# Zero-width or empty-matching patterns: at the end of the stream an empty match at the very end opens
# (or closes) nothing in the reference; a generated scanner watching one such delimiter took it.
EMPTY_MATCHING = ["^", "$", r"\Z", r"(?s)\Z", r"\B", r"\M\M", r"(?x)$\b", r"(?:\d|)", r"(?x)K*?", "1*?", r"a\K"]
ENDINGS = ["\nx", "11</t>", "11</t>1", "xK é</t>", "<t>1\n", ""]


def _open_template(pattern: str) -> dict[str, Any]:
    return {
        "start_anchor": "<s>",
        "fields": {"tc": {"open_pattern": pattern, "close": "</t>", "transform": {"c": "{content}"}}, "content": {}},
    }


@pytest.mark.parametrize("pattern", EMPTY_MATCHING)
def test_empty_matching_open_at_the_end_of_the_stream(pattern: str) -> None:
    assert divergences(_open_template(pattern), "", ENDINGS) == []


@pytest.mark.parametrize("pattern", EMPTY_MATCHING)
def test_empty_matching_close_at_the_end_of_the_stream(pattern: str) -> None:
    # The close's own (empty) capture joins the region's captures only where the close is taken.
    close = f"(?P<end>{pattern})"
    template = {
        "start_anchor": "<s>",
        "fields": {"tc": {"open": "<t>", "close_pattern": close, "transform": {"c": "{content}", "e": "{end}"}}},
    }
    assert divergences(template, "", [f"<t>{ending}" for ending in ENDINGS]) == []


def test_empty_matching_open_and_close_of_one_field() -> None:
    template = {"start_anchor": "<s>", "fields": {"tc": {"open_pattern": "1*?", "close_pattern": r"\Z"}, "content": {}}}
    assert divergences(template, "<s>", ["11", "", "x1"]) == []


# ---------------------------------------------------------------------------------------------------
# Word boundaries and start anchors at the far edge of a lookbehind
# ---------------------------------------------------------------------------------------------------

# `\b` at the start of `(?<=\b.)` reads the character before the lookbehind's window: the committed
# text kept behind the scan position must hold it, or a match depends on where the stream was cut.
EDGE_LOOKBEHINDS = [
    r"(?<=\b.)X",
    r"(?<=\b )(?<=\b.)X",
    r"(?<!^ )X(?<=\bX)",
    r"(?<!\Mk)(?<=\b.)X",
    r"(?<=\B.)X",
    r"(?<=\m.)X",
    r"(?<=^.)X",
    r"(?<=\b(?:.|ab))X",
    r"(?<=\b.{2})X",
]
EDGE_TEXTS = ["</t>1_1_ßKé X", "</t> a X", "aa X", "</t>ab.X", "</t>_ ab X</t>é X"]


@pytest.mark.parametrize("pattern", EDGE_LOOKBEHINDS)
def test_boundary_at_the_edge_of_a_lookbehind_in_an_open(pattern: str) -> None:
    template = {"start_anchor": "<s>", "fields": {"tc": {"open_pattern": pattern, "close": "</t>"}, "content": {}}}
    assert divergences(template, "", EDGE_TEXTS) == []


@pytest.mark.parametrize("pattern", EDGE_LOOKBEHINDS)
def test_boundary_at_the_edge_of_a_lookbehind_in_a_close(pattern: str) -> None:
    template = {"start_anchor": "<s>", "fields": {"tc": {"open": "</t>", "close_pattern": pattern}, "content": {}}}
    assert divergences(template, "", EDGE_TEXTS) == []


@pytest.mark.parametrize(
    ("pattern", "reach"),
    [
        (r"X", 0),
        (r"\bX", 1),
        (r"^X", 1),  # one character kept tells a dropped text's end from the start of the text
        (r"(?<=.\b)X", 1),  # the boundary sits at the window's near edge: the window already holds it
        (r"(?<=\b.)X", 2),
        (r"(?<=^..)X", 3),
        (r"(?<=\b(?:.|ab))X", 3),
        (r"(?<=(?:\b.){2})X", 3),
        (r"(?<=\b.{2})X", 3),
        (r"X(?<=\bX)", 2),  # counted from the match start: an upper bound
        (r"(?<=a(?=\b))X", 1),
        (r"(?<=(?=\b).)X", 2),
        (r"(?<=(?<=\b.)a)X", 3),
        (r"(?<=a\Z)X", 1),  # \Z reads forwards
        (r"(?<=a|\bbc)X", 3),
        (r"(?<=\b.*)X", None),
    ],
)
def test_history_counts_what_boundaries_read_before_a_lookbehind_window(pattern: str, reach: int | None) -> None:
    assert history(parse_regex(pattern).root) == reach


# ---------------------------------------------------------------------------------------------------
# Backreferences written before their group
# ---------------------------------------------------------------------------------------------------

FORWARD_REFERENCES = [
    r"\1(^(?i:_){0,2}?)^(\b$)",
    r"\1(\h+\A)",
    r"\1(?P<m>$)",
    r"(?P=m)(?P<m>a)",
    r"\g<1>(a)",
    r"(?:\1|x)(a)",
    r"(?:\1|(a))b",
    r"(?=\1)(a)",
    r"a|\1(b)",
]
REFERENCE_TEXTS = ["", "a", "aa", "xa", "ab", "b", "_", "__", " \t", "x\n"]


@pytest.mark.parametrize("pattern", FORWARD_REFERENCES)
def test_forward_reference_translates_like_regex(pattern: str) -> None:
    """A reference to a group that has not matched yet fails in `regex`; stdlib `re` rejects the
    spelling, so the translation writes what never matches."""
    expected = regex.compile(pattern, regex.DOTALL)
    ours = re.compile(translate_complete(pattern), re.DOTALL)
    for text in REFERENCE_TEXTS:
        assert [(m.span(), m.groups()) for m in ours.finditer(text)] == [
            (m.span(), m.groups()) for m in expected.finditer(text)
        ]
        for pos in range(len(text) + 1):
            theirs = expected.search(text, pos)
            mine = ours.search(text, pos)
            assert (mine and (mine.span(), mine.groups())) == (theirs and (theirs.span(), theirs.groups()))


@pytest.mark.parametrize("pattern", FORWARD_REFERENCES)
def test_forward_reference_in_a_delimiter_falls_back_to_regex(pattern: str) -> None:
    with pytest.raises(UnsupportedRegex) as info:
        translate(pattern)
    assert info.value.construct == "backreference"


def test_forward_reference_in_the_start_anchor() -> None:
    template = {"start_anchor_pattern": r"\1(^(?i:_){0,2}?)^(\b$)", "fields": {"content": {}}}
    for prefix in ["", "_", "__", "x"]:
        assert divergences(template, prefix, ["a", ""]) == []


def test_forward_reference_in_a_tag_pattern() -> None:
    tag = r"(?P<key>\w+)=(?:(?P=value)|)(?P<value>\d);"
    field = {"open": "<t>", "close": "</t>", "content": "xml-inline", "content_args": {"tag_pattern": tag}}
    template = {"start_anchor": "<s>", "fields": {"tc": field}}
    assert divergences(template, "", ["<t>a=1;bb=22;</t>", "<t>k=;</t>"]) == []


# ---------------------------------------------------------------------------------------------------
# Partial matching: a lazy run merged into the one after it
# ---------------------------------------------------------------------------------------------------

# `x*?x+?` matches what `x+?` matches, but `regex`'s partial search reads a lazy run by what follows
# it (a literal or a negated character: partial within one character of the end), so the two hold back
# different text; the compiler no longer merges a lazy run into the run after it.
MERGED_LAZY_RUNS = [
    (r"(?i:ı)+x*?x+?", ["ıǅ", "ıǅ ıx", "ıI"]),
    (r"ǅ*?[^x]+?", ["x", "xx", "ǅx"]),
    (r"ba*?a+?", ["bb", "bA", "ba"]),
    (r"xa*?[^x]+?", ["xx", "xxa"]),
]


@pytest.mark.parametrize(("pattern", "texts"), MERGED_LAZY_RUNS)
def test_lazy_run_before_a_run_that_holds_it(pattern: str, texts: list[str]) -> None:
    opening = {"start_anchor": "<s>", "fields": {"tc": {"open_pattern": pattern, "close": "</t>"}, "content": {}}}
    closing = {"start_anchor": "<s>", "fields": {"tc": {"open": "<t>", "close_pattern": pattern}, "content": {}}}
    assert divergences(opening, "", texts) == []
    assert divergences(closing, "", [f"<t>{text}" for text in texts]) == []


# `regex`'s partial search from the very end of a text, for a pattern that starts with `.`, can answer
# with an empty "full" match there (`regex.compile(".").search("ǅǅ", 2, partial=True)`: it reads past
# the text) that the ordinary search does not find; the translated search finds nothing. Neither
# commits anything: a match at the end of the buffer is held back, and at the end of the stream
# `regex` searches without `partial`.
@pytest.mark.parametrize("pattern", [".", "..", r".\Z", "(?i).", r"\Z.", ".x"])
def test_dot_searched_from_the_end_of_the_buffer(pattern: str) -> None:
    template = {"start_anchor": "<s>", "fields": {"tc": {"open": "<t>", "close_pattern": pattern}, "content": {}}}
    assert divergences(template, "", ["<t>ǅǅ", "<t>ǅıİ\x1c\r", "<t>İ\rx"]) == []


# Found after the merges (the long fuzz run, seed 1, and the slow lane's seed 2400): a pattern with a
# control verb or \G keeps the whole buffer, since where the buffer starts changes what regex reports
# (the same constructs make a complete output parse the streaming way, `one_scan`).
SCAN_START_CASES = [
    (
        {
            "start_anchor": "<s>",
            "fields": {"tc": {"open_pattern": "\\w(*SKIP){e<=1}σ|\\s\\G", "close": "</t>"}, "content": {}},
        },
        "ςbσ<s>",
        ["²😀ẞ𐐨é"],
    ),
    (
        {
            "start_anchor": "<s>",
            "fields": {
                "tc": {
                    "open_pattern": "(?iw)(?P<b>\\P{L}𝐀(?-i:[[:lower:]0-9 ]\\W[xy]{,2}[^x]{0,2}?ẞ|ſ\\P{L}Σ|)k"
                    "|(*SKIP){2}>)[\\s]*",
                    "close": "\n",
                    "transform": {"c": "{content}", "b": "{b}"},
                },
                "content": {},
            },
        },
        "𝐀",
        ["\n.𝐀é-x.ẞk 𝐀 ->ẞK"],
    ),
    # A close with \G keeps the whole buffer while a held-back run (\v+) streams: the run's fast path
    # kept "the last None characters" (a TypeError) before it kept everything.
    (
        {
            "start_anchor": "<s>",
            "fields": {
                "tc": {"open_pattern": "\\v+ı[\\P(?V1){Ll}a-z😀]", "close_pattern": "(?x)\\A\\G\\R\\w"},
                "content": {},
            },
        },
        "<s>",
        ["é٣\x0b\x0b\x0bı{\x0b\x0b", "<s>"],
    ),
    # A fuzzy constraint: regex's partial search and its complete search report different approximate
    # matches, so a complete output parses the way it streams (the one-shot run kept 'x', not 'x\nς').
    (
        {
            "start_anchor": "<s>",
            "fields": {"tc": {"open_pattern": "(?m:\\p{Lt}){e<=1}1(?(a))|𝐀", "close": "\n"}, "content": {}},
        },
        ">é<s>",
        ["x\nςᾏ1"],
    ),
    # Full case folding: regex reports a partial match of the close starting before the position it
    # searches from, in the prompt ('<t' of '\x85<t'), so the reference holds the whole region back;
    # with the prompt dropped, the module released '𐐀' (the long fuzz run, seed 1: 2 runs of 822,039).
    (
        {
            "start_anchor": "<s>",
            "fields": {
                "tc": {"close_pattern": "(?if)ß\\tk\\z", "open": "<t"},
                "content": {"transform": {"c": "{content}"}},
            },
        },
        "\x85<t",
        ["𐐀ﬁẞ\tk<ti"],
    ),
]


@pytest.mark.parametrize(("template", "prefix", "texts"), SCAN_START_CASES)
def test_a_pattern_that_depends_on_where_the_scan_starts_keeps_the_buffer(
    template: dict[str, Any], prefix: str, texts: list[str]
) -> None:
    assert divergences(template, prefix, texts) == []
