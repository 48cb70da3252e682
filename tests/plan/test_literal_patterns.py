"""Patterns that are literals written as regexes (`(?:<\\|im_end\\|>|</s>)`), searched as literals.

`rtcompile.plan.scanned_delimiter` hands such a delimiter to the scanners as the strings it matches,
with `can_extend` (the reference lets a regex match that ends at the buffer's end grow). These tests
check the three things that rests on: `matched_strings` gives exactly the strings a pattern matches
(against `regex` on every short string); the plan converts only what it may (no named group, no
string a prefix of another, no class or case folding); and converted templates stream exactly like
the reference on every two-way split and one character at a time, a chunk ending right after a
complete match included.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompile.ir import Delimiter
from rtcompile.plan import plan_parser, scanned_delimiter
from rtcompile.regex.analysis import matched_strings
from rtcompile.regex.parser import parse_regex
from rtcompile.tooling.observe import identical, observe
from tests.support.compiled import compiled_engine
from tests.support.differential import interpreter_engine, loaded_template, reference_engine, two_way_splits
from tests.support.lanes import examples

ALPHABET = "ab<"


def _pattern(draw: st.DrawFn, depth: int) -> str:
    """A pattern over ALPHABET made of characters, escapes, sequences, alternations and groups."""
    kind = draw(
        st.sampled_from(["char", "escaped", "class", "seq", "alt", "group", "named", "repeat"][: 8 if depth else 3])
    )
    if kind == "char":
        return draw(st.sampled_from(ALPHABET))
    if kind == "escaped":
        return "\\" + draw(st.sampled_from("<"))
    if kind == "class":
        return "[" + "".join(draw(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=2, unique=True))) + "]"
    parts = [_pattern(draw, depth - 1) for _ in range(draw(st.integers(1, 3)))]
    if kind == "seq":
        return "".join(parts)
    if kind == "alt":
        return "(?:" + "|".join(parts) + ")"
    if kind == "group":
        return "(" + "".join(parts) + ")"
    if kind == "named":
        return "(?P<g" + str(depth) + ">" + "".join(parts) + ")"
    return "(?:" + "".join(parts) + ")" + draw(st.sampled_from(["?", "*", "{2}"]))


@st.composite
def patterns(draw: st.DrawFn) -> str:
    return _pattern(draw, 3)


def _all_strings(length: int) -> list[str]:
    return ["".join(chars) for n in range(length + 1) for chars in itertools.product(ALPHABET, repeat=n)]


SHORT = _all_strings(6)


@settings(max_examples=examples(300), deadline=None)
@given(patterns())
def test_matched_strings_are_exactly_what_the_pattern_matches(pattern: str) -> None:
    try:
        compiled = regex.compile(pattern, regex.DOTALL)
    except regex.error:
        return  # (a name drawn twice)
    strings = matched_strings(parse_regex(pattern).root)
    if strings is None:
        return
    assert len(set(strings)) == len(strings)
    assert all(compiled.fullmatch(s) for s in strings)
    longest = max(map(len, strings))
    if longest <= 6:
        assert {s for s in SHORT if compiled.fullmatch(s)} == set(strings)


def test_matched_strings_in_pattern_order() -> None:
    assert matched_strings(parse_regex(r"(?:<\|im_end\|>|</s>)").root) == ("<|im_end|>", "</s>")
    assert matched_strings(parse_regex(r"<(?:/think|\|end\|)>").root) == ("</think>", "<|end|>")
    assert matched_strings(parse_regex(r"\)(?:\n|```)").root) == (")\n", ")```")
    assert matched_strings(parse_regex(r"(<a>)|<a>").root) == ("<a>",)
    for pattern in (r"\s*</think>", r"<tool_call>|$", r"(?P<name>\w+)", r"a{2}", r"(?i)<end>", r"(?=<a>)"):
        assert matched_strings(parse_regex(pattern).root) is None, pattern


def regex_delimiter(pattern: str, names: tuple[str, ...] = ()) -> Delimiter:
    return Delimiter(pattern, None, False, names)


def test_a_pattern_of_a_few_strings_none_a_prefix_of_another_is_scanned_as_literals() -> None:
    scanned = scanned_delimiter(regex_delimiter(r"(?:<\|im_end\|>|</s>)"))
    assert scanned.literals == ("<|im_end|>", "</s>")
    assert scanned.can_extend  # a regex match at the buffer's end may still grow, for the reference
    assert scanned.group_names == ()
    assert regex.compile(scanned.pattern).fullmatch("<|im_end|>")
    assert scanned_delimiter(regex_delimiter(r"</think>")).literals == ("</think>",)
    assert scanned_delimiter(regex_delimiter(r"(?i)<\|>")).literals == ("<|>",)  # no letters to fold


@pytest.mark.parametrize(
    ("pattern", "names"),
    [
        (r"<a|<ab", ()),  # which one matches depends on the order
        (r"(?P<x><a>)", ("x",)),  # a capture the region's events carry
        (r"(?i)<end>", ()),  # case folding
        (r"[<>]x", ()),
        (r"</think>|(?=<a>)", ()),
        (r"(?r)<a>", ()),  # a flag the analyses do not model
        (r"(?:)", ()),
    ],
)
def test_other_patterns_stay_patterns(pattern: str, names: tuple[str, ...]) -> None:
    delimiter = regex_delimiter(pattern, names)
    assert scanned_delimiter(delimiter) is delimiter


def test_a_watch_keeps_the_template_path_and_the_pattern_as_written() -> None:
    template = {
        "start_anchor": "<|assistant|>",
        "fields": {
            "reasoning_content": {"open_pattern": r"(?:<think>)", "close_pattern": r"</think>|</t>"},
            "content": {"close": "<end>"},
        },
    }
    plan = plan_parser(loaded_template(template))
    outside = {w.where: w for w in plan.states[0].watches}
    watch = outside[("fields", "reasoning_content", "open_pattern")]
    assert watch.delimiter.literals == ("<think>",)
    assert watch.written_as == "(?:<think>)"
    assert outside[("fields", "content", "close")].written_as is None
    (inside,) = plan.states[1].watches
    assert inside.where == ("fields", "reasoning_content", "close_pattern")
    assert inside.delimiter.literals == ("</think>", "</t>")


# ------------------------------------------------------------------------------------- differential

TEMPLATES: list[dict[str, Any]] = [
    {  # every delimiter a literal set written as a pattern, one state merging two of them
        "start_anchor": "<|assistant|>",
        "fields": {
            "reasoning_content": {"open_pattern": r"(?:<think>)", "close_pattern": r"</think>|<\|end\|>"},
            "tool_calls": {
                "open_pattern": r"<tool>",
                "close_pattern": r"(</tool>)",
                "content": "json",
                "repeats": True,
            },
            "content": {"close_pattern": r"<\|im_end\|>|</s>"},
        },
    },
    {  # a pattern set beside a literal list and a real regex in one state
        "start_anchor": "<|assistant|>",
        "fields": {
            "reasoning_content": {"open": ["<think>", "<reason>"], "close_pattern": r"</(?:think|reason)>"},
            "tool_calls": {
                "open_pattern": r"<call name=(?P<name>\w+)>",
                "close": "</call>",
                "content": "json",
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
                "repeats": True,
            },
            "content": {"close_pattern": r"(?:<eot>)"},
        },
    },
    {  # one literal in two fields, a literal in one and a pattern in the other: the pattern's holds it back
        "start_anchor": "<|assistant|>",
        "fields": {
            "x": {"open": "<", "content": "text"},
            "y": {"open_pattern": "<", "content": "text"},
            "z": {"content": "text"},
        },
    },
]

TEXTS = [
    "<think>hm</think>answer<|im_end|>",
    '<think>a<b</think><tool>{"x": 1}</tool><tool>[2]</tool></s>',
    "<think><think></think>x<|end|>y<|im_end|>z",
    "<reason>r</reason>a<call name=f>{}</call>b<eot>c",
    '<think>x</reason><call name=g>{"a": 2}</call><eot>',
    "plain <thin <|im_en </s",
    "<",
    "a<b<",
]


@pytest.mark.parametrize("index", range(len(TEMPLATES)))
def test_literal_patterns_stream_like_the_reference_at_every_split(index: int) -> None:
    template = TEMPLATES[index]
    for text in TEXTS:
        for chunks in [*two_way_splits(text), list(text), [text]]:
            ours = observe(compiled_engine(template), "", chunks)
            assert ours == observe(reference_engine(template), "", chunks), chunks
            assert identical(ours, observe(interpreter_engine(template), "", chunks)), chunks


def test_a_literal_too_long_for_a_partial_match_pattern_streams_like_the_reference() -> None:
    """A 10,000-character literal pattern: a stdlib partial-match pattern for it would nest a group per
    character; searched as a literal it is held back with `literal_set_hold`."""
    long = "<" + "x" * 10000 + ">"
    template = {"start_anchor": "<|assistant|>", "fields": {"content": {"close_pattern": long}}}
    assert scanned_delimiter(regex_delimiter(long)).literals == (long,)
    text = "answer " + long[:5000] + " more " + long + " after"
    cuts = [1, 7, 100, 5007, 5013, len(text) - len(long) - 6, len(text) - 6, len(text) - 1]
    for chunks in [[text[:cut], text[cut:]] for cut in cuts] + [[text]]:
        ours = observe(compiled_engine(template), "", chunks)
        assert ours == observe(reference_engine(template), "", chunks), [len(c) for c in chunks]
        assert identical(ours, observe(interpreter_engine(template), "", chunks))
