"""The first-character walk (`rtcompile.regex.first_chars.first_characters`) against brute force: on
random patterns over a small alphabet built from every construct the walk models, every real match that
`regex` finds on every short string starts with a character the walk reports, and the walk says a
pattern can match the empty string exactly when `regex` finds an empty match (with zero-width tests or
conditionals, which can rule the empty match out, it may say so where `regex` finds none, never the
reverse). Also the decisions its users make on top of it."""

from __future__ import annotations

from itertools import product
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rtcompile.ir import Delimiter
from rtcompile.regex.analysis import leading_run
from rtcompile.regex.ast import Assertion, Conditional, Lookaround, walk
from rtcompile.regex.charsets import TABLES, Ranges, complement, contains, normalise
from rtcompile.regex.first_chars import (
    MAX_CLASS_SIZE,
    delimiter_first_chars,
    first_characters,
    match_starts,
    modelled_tree,
)
from rtcompile.regex.parser import parse_regex
from tests.support.lanes import examples

ALPHABET = "abA"
# Every string of up to four characters of ALPHABET.
TEXTS = ["".join(chars) for length in range(5) for chars in product(ALPHABET, repeat=length)]

CHARACTERS = ["a", "b", "A", "[ab]", "[^a]", ".", "\\w", "(?i:a)"]
ZERO_WIDTH = ["^", "$", "\\A", "\\Z", "\\b", "\\B"]
QUANTIFIERS = ["*", "+", "?", "{2}", "{0,2}", "{1,2}", "{0}"]


@st.composite
def small_patterns(draw: st.DrawFn, depth: int = 0) -> str:
    """A sequence or alternation (empty branches allowed) of characters, zero-width tests, groups of
    every kind, lookarounds and conditionals, some quantified (greedy, lazy or possessive)."""

    def item() -> str:
        kind = draw(st.sampled_from(["char", "char", "char", "zero_width", "nested"] if depth < 2 else ["char"]))
        if kind == "char":
            return draw(st.sampled_from(CHARACTERS))
        if kind == "zero_width":
            return draw(st.sampled_from(ZERO_WIDTH))
        inner = draw(small_patterns(depth + 1))
        opener = draw(st.sampled_from(["(", "(?:", "(?>", "(?|", "(?=", "(?!", "(?<=", "(?<!", "cond"]))
        if opener == "cond":
            condition = draw(st.sampled_from(["1", "?=a", "?!b", "?<=a"]))
            return f"(?({condition}){inner}|{draw(small_patterns(depth + 1))})"
        return f"{opener}{inner})"

    def quantified() -> str:
        text = item()
        if text in ZERO_WIDTH or draw(st.integers(0, 2)) == 0:
            return text
        return text + draw(st.sampled_from(QUANTIFIERS)) + draw(st.sampled_from(["", "", "?", "+"]))

    def sequence() -> str:
        return "".join(quantified() for _ in range(draw(st.integers(0, 3))))

    pattern = "|".join(sequence() for _ in range(draw(st.sampled_from([1, 1, 2, 3]))))
    if depth == 0:
        # Group 1 for the conditionals to test, sometimes set and sometimes not.
        pattern = draw(st.sampled_from(["", "", "(a)?", "(b|)"])) + pattern
        pattern = draw(st.sampled_from(["", "", "(?i)"])) + pattern
    return pattern


def compiled(pattern: str) -> Any:
    try:
        return regex.compile(pattern, regex.DOTALL)
    except regex.error:
        assume(False)


BRUTE_FORCE = settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@BRUTE_FORCE
@given(pattern=small_patterns())
def test_the_walk_agrees_with_every_match_on_every_short_string(pattern: str) -> None:
    matcher = compiled(pattern)
    parsed = modelled_tree(pattern)
    assume(parsed is not None)
    assert parsed is not None
    reading = first_characters(parsed.root)
    consuming = first_characters(parsed.root, lookaheads=False)
    assert reading is not None and consuming is not None  # every construct drawn is modelled
    assert reading.nullable == consuming.nullable
    assert all(contains(reading.ranges, cp) for lo, hi in consuming.ranges for cp in (lo, hi))
    empty_match = False
    for text in TEXTS:
        for pos in range(len(text) + 1):
            match = matcher.match(text, pos)
            if match is None:
                continue
            if match.end() == pos:
                empty_match = True
            else:
                assert contains(consuming.ranges, ord(text[pos])), (text, pos, match)
    assert empty_match <= consuming.nullable, "an empty match of a pattern said not to have one"
    if not any(isinstance(node, (Assertion, Lookaround, Conditional)) for node in walk(parsed.root)):
        assert empty_match == consuming.nullable, "no empty match of a pattern said to have one"


def test_a_lookahead_counts_as_read_but_not_as_consumed() -> None:
    parsed = modelled_tree("(?=x)a|(?(?!A)c|d)")
    assert parsed is not None
    reading = first_characters(parsed.root)
    consuming = first_characters(parsed.root, lookaheads=False)
    assert reading is not None and consuming is not None
    assert (reading.ranges, reading.nullable) == (((65, 65), (97, 97), (99, 100), (120, 120)), False)  # A a c-d x
    assert (consuming.ranges, consuming.nullable) == (((97, 97), (99, 100)), False)


@pytest.mark.parametrize("pattern", [r"(a)?\1", r"\1?(a)", r"(?:ab){e<=1}", r"(?:x|)\X", r"a?(?R)?"])
def test_constructs_the_walk_does_not_model_give_no_answer(pattern: str) -> None:
    assert first_characters(parse_regex(pattern).root) is None


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        # Each class is small enough to spell out, so their union is too, however large it gets.
        ("[\\u0000-\\u0800]|[\\u1000-\\u1800]", 2 * 0x801),
        (f"[\\u0000-\\u{MAX_CLASS_SIZE - 1:04x}]", MAX_CLASS_SIZE),
        (f"[\\u0000-\\u{MAX_CLASS_SIZE:04x}]", None),
        ("a|[^<]", None),
        ("(?=[^<])a", None),  # a lookahead is read, so its class counts
        ("a(?=[^<])", 1),  # ...but not after the first character
    ],
)
def test_the_fast_path_bound_gives_up_on_any_large_class_it_reads(pattern: str, size: int | None) -> None:
    first = delimiter_first_chars(Delimiter(pattern, None, False, ()))
    assert (None if first is None else len(first)) == size


LOWER: Ranges = ((ord("a"), ord("z")),)
NOT_SPACE_OR_BRACKET = complement(normalise([*TABLES["s"], (ord("["), ord("[")), (ord("]"), ord("]"))]))


@pytest.mark.parametrize(
    ("pattern", "run"),
    [
        (r"[^\s\[\]]+\[ARGS\]", NOT_SPACE_OR_BRACKET),  # mistral_v11's tool name
        (r"(?:<call>)?(?P<name>[a-z]+)\(", LOWER),
        (r"[a-z]+[^a-z]", LOWER),  # a class far too large for the fast-path bound
        (r"[a-z]+(?:<|>)x", LOWER),
        (r"[a-z]+(?|<|>)", LOWER),
        (r"[a-z]+(?><)", LOWER),
        (r"[a-z]+(?:<)+", LOWER),
        (r"[a-z]+[a-z<]", None),  # the run could run on into the next item
        (r"[a-z]+<?", None),  # the next item may consume nothing
        (r"[a-z]+(?:<|)x", None),
        (r"[a-z]+", None),
        (r"x[a-z]+<", None),  # a required item before the run
        (
            r"\s*</t>",
            (
                (9, 13),
                (32, 32),
                (133, 133),
                (160, 160),
                (5760, 5760),
                (8192, 8202),
                (8232, 8233),
                (8239, 8239),
                (8287, 8287),
                (12288, 12288),
            ),
        ),  # a run that may be empty
        (r"[a-z]+?<", None),  # a lazy run stops as soon as it can
        # beside branches that start only outside the run (random-045's `\s*<end_of_turn>|(?=<start_of_tool>)`)
        (r"[a-z]+<|(?=>)", LOWER),
        (r"(?=>)|[a-z]+<", LOWER),
        (r"(?:[a-z]+<|>x|(?=Q))", LOWER),
        (r"[a-z]+<|b", None),  # a branch that may start inside the run
        (r"[a-z]+<|(?=b)", None),
        (r"[a-z]+<|\Z", None),  # one that starts without reading a character
        (r"[a-z]+<|>?", None),
        (r"[a-z]+<|(?<=x)>", None),  # one that depends on the text before it
        (r"[a-z]+<|[A-Z]+>", None),  # two runs
    ],
)
def test_held_back_runs_start_patterns_whose_next_item_starts_outside_them(pattern: str, run: Ranges | None) -> None:
    parsed = modelled_tree(pattern)
    assert parsed is not None
    found = leading_run(parsed.root)
    assert (found.run if found is not None else None) == run


@pytest.mark.parametrize(
    "pattern", [r"[a-z]+<", r"(?:<x>)?[a-z]+<", r"[a-z]*>", r"[a-z]+<|(?=>)", r"(?=>)|[a-z]+<", r"(?:[a-z]+<|>x|(?=Q))"]
)
def test_in_text_without_busy_characters_the_only_partial_match_is_the_trailing_run(pattern: str) -> None:
    """What the generated feed relies on (`rtcompile.plan.pending_run`), as `regex` searches: no
    complete match, and the partial match found from any position starts where the run that ends the
    text does (at the end, for an empty one)."""
    parsed = modelled_tree(pattern)
    assert parsed is not None
    found_run = leading_run(parsed.root)
    assert found_run is not None and found_run.run == LOWER
    compiled = regex.compile(pattern, regex.DOTALL)
    busy = {chr(c) for lo, hi in found_run.busy for c in range(lo, hi + 1)}
    for length in range(6):
        for chars in product("azQ ", repeat=length):
            text = "".join(chars)
            if busy.intersection(text):
                continue
            run_start = len(text.rstrip("abcdefghijklmnopqrstuvwxyz"))
            for pos in range(len(text) + 1):
                found = compiled.search(text, pos, partial=True)
                expected = max(pos, run_start)
                if found is None:
                    assert expected == len(text), (text, pos)  # nothing is held back
                else:
                    assert found.partial and found.start() == expected, (text, pos, found)


# Patterns with a branch that is `\Z` or `$` alone beside others: the closes a streaming parser holds
# nothing back for but what the end branch holds (`\s*</think>|\Z`).
BESIDE_AN_END = [r"\s*ab|\Z", r"\Z|b?a", r"(?:a+b|$)", r"b(?=a)|$|\Z", r"(?i:a)b*|\Z", r"(a)\1|$"]
# (a branch whose first item that must read is a lookahead, or behind a lookbehind: qwen3_coder's closes
# with a leading `\s*`)
BESIDE_AN_END += [r"\s*(?:ab|(?=b))|\Z", r"\s*(?:(?<=a)\s*(?:ba|(?=b)))|\Z", r"\s*(?:b|(?=a\s))|$"]


@pytest.mark.parametrize("pattern", BESIDE_AN_END)
def test_beside_an_end_branch_only_complete_matches_with_the_required_characters_claim_text(pattern: str) -> None:
    """`regex` never reports a partial match for such a pattern, and in text without the characters
    `match_starts` gives, only the end branch matches: empty at the end, or (`$`) before a newline that
    ends the text, which `final_newline` holds back."""
    starts = match_starts(Delimiter(pattern, None, False, ()))
    assert starts is not None
    compiled = regex.compile(pattern, regex.DOTALL)
    for text in [*TEXTS, *(t + "\n" for t in TEXTS), *("\n" + t for t in TEXTS), " ab", "a \nb\n"]:
        for pos in range(len(text) + 1):
            found = compiled.search(text, pos, partial=True)
            assert found is not None and not found.partial, (text, pos)
            if not any(ord(c) in starts.chars for c in text[pos:]):
                ends = [len(text)] + ([len(text) - 1] if starts.final_newline and text.endswith("\n") else [])
                assert found.span() in [(end, end) for end in ends if end >= pos], (text, pos)


# Patterns with paths led by a lookbehind on a literal, alone, beside free paths, or inside a
# leading group (the shapes of qwen3_coder's, step3's and qwen2_5_coder's delimiters).
AFTER_LITERALS = [
    (r"(?<=ab)\s*(?:b|(?=a))", set(), {"ab"}),
    (r"bb\s*a|(?<=ab)\s*(?:b|(?=aA))", {"b"}, {"ab"}),
    (r"(?:<A>\s*|(?<=b)(?:\s*,)?\s*)a\s*A", {"<"}, {"b"}),
    (r"(?<=(a))b", set(), {"a"}),
    (r"(?:(?:a|(?<=A)b)|bA)a", {"a", "b"}, {"A"}),
]
NOT_AFTER_LITERALS = [r"(?i)(?<=a)b", r"(?<=a)?b", r"(?<!a)b", r"(?<=a|b)A", r"b(?<=b)a"]


@pytest.mark.parametrize(("pattern", "chars", "after"), AFTER_LITERALS)
def test_a_path_led_by_a_lookbehind_on_a_literal_starts_only_after_it(
    pattern: str, chars: set[str], after: set[str]
) -> None:
    """Text appended to a buffer: if none of `chars` is in the new text and no string of `after`
    ends inside it or at the buffer's end, `regex` finds no match and no partial match from the
    buffer's end on but an empty one at the very end."""
    starts = match_starts(Delimiter(pattern, None, False, ()))
    assert starts is not None
    assert (starts.chars, starts.after) == (frozenset(map(ord, chars)), frozenset(after))
    compiled = regex.compile(pattern, regex.DOTALL)
    alphabet = "abA ,<"
    for buffer in ["".join(c) for n in range(4) for c in product(alphabet, repeat=n)]:
        for length in range(1, 4):
            for text in ("".join(c) for c in product(alphabet, repeat=length)):
                whole = buffer + text
                start = len(buffer)
                busy = any(ord(c) in starts.chars for c in text) or any(
                    lit in buffer[-len(lit) :] + text for lit in starts.after
                )
                found = compiled.search(whole, start, partial=True)
                if not busy:
                    # (`regex` reports an empty partial match at the end of many texts for such a
                    # pattern, wherever the lookbehind fails; it holds nothing back)
                    end = len(whole)
                    assert found is None or (found.partial and found.span() == (end, end)), (buffer, text)


@pytest.mark.parametrize("pattern", NOT_AFTER_LITERALS)
def test_other_lookbehinds_gate_nothing(pattern: str) -> None:
    """Under `(?i)`, optional, negative, with alternatives, or after the match's first character, a
    lookbehind leaves the path free to start anywhere its first characters allow."""
    starts = match_starts(Delimiter(pattern, None, False, ()))
    assert starts is not None and not starts.after
