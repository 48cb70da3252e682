"""The planner of scanning strategies (`rtcompile.strategies`): one record per regex delimiter.

Each case is a pattern that calls for one strategy, and the record the planner must give it; the
record's one-line summary is the comment its scanner carries. That each strategy changes how much a
search looks at, never what it finds, is the differential suites' job (every module against the
interpreter and the reference); `test_a_waiting_pattern_partially_matches_at_the_scan_position` checks
the one claim the waiting strategy adds, against `regex` itself.
"""

from __future__ import annotations

import re
from typing import Any

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompile.ir import Delimiter
from rtcompile.regex.translate import BeforeEnd, translate
from rtcompile.runtime.scanning import (
    FORGOTTEN,
    find_once,
    last_start,
    recall,
    search_before_end,
    search_from_starts,
)
from rtcompile.strategies import Strategy, strategy


def of(pattern: str) -> Strategy:
    return strategy(Delimiter(pattern, None, False, ()))


def test_a_pattern_without_an_exact_translation_runs_on_the_regex_module() -> None:
    lt, f = ((60, 60),), ((102, 102),)
    assert of(r"<function=([^<\n]+?)>") == Strategy("regex", leads=((lt, f),), complete=True)
    assert of(r"<(\w+)>\1") == Strategy("regex", leads=((lt,),), complete=True)  # (a repeat second: one character)
    # no leading character: searched from the scan position
    assert of(r"(?:<a)?(\w+?)>\1") == Strategy("regex", complete=True)


def test_a_regex_module_search_starts_at_the_leading_characters_where_its_start_cannot_matter() -> None:
    plan = of(r"<function=([^<\n]+?)>")
    assert plan.summary() == (
        "strategy: the regex module (no exact stdlib translation), partial=True; streaming from the first "
        "'<(?:f|\\\\Z)'; the stream's end searched with re"
    )
    # `\G`: where a search starts is what it matches, so it starts where the reference's does, on regex
    assert of(r"\G<function=([^<\n]+?)>") == Strategy("regex")


def test_a_lazy_run_between_literals_waits_past_its_mandatory_part_for_the_string_after_it() -> None:
    plan = of(r"(?:\[TOOL_CALLS\])?(?P<name>[^\s\[\]]+?)\[ARGS\]")
    assert plan.awaits == ("[ARGS]",) and plan.awaits_past is not None and plan.awaits_past.span == 13
    assert plan.summary() == (
        "strategy: the regex module (no exact stdlib translation), partial=True; streaming waits past its lazy run"
        " for '[ARGS]'; the stream's end searched with re"
    )
    assert of(r"<f=[a-z]+?>").awaits_past is None  # a one-character string: regex tests the class on the way


def test_strings_every_match_contains_guard_the_search_which_starts_where_the_first_was_found() -> None:
    assert of(r"<tool_call>\s*(?P<name>\w+)") == Strategy("re", required=("<tool_call>",), search_from="found")


def test_a_small_class_before_the_first_string_starts_the_search_at_its_run() -> None:
    plan = of(r"\}\s*\]\s*<\|tools_suffix\|>")
    assert (plan.search_from, plan.required) == ("lead", ("<|tools_suffix|>",))
    assert plan.lead is not None and (ord("}"), ord("}")) in plan.lead


def test_one_start_string_is_found_first_at_the_end_of_the_stream() -> None:
    assert of(r"<(?:a|b)") == Strategy("re", one_shot="one_start", starts=("<",))


def test_several_start_strings_are_tried_where_they_occur() -> None:
    assert of(r"(?:<a>|<b>)x") == Strategy("re", one_shot="starts", starts=("<a>x", "<b>x"))


def test_what_a_leading_lookahead_reads_is_where_a_match_can_start() -> None:
    plan = of(r"(?=<\|im_end\|>)|</think>")
    assert (plan.one_shot, plan.starts) == ("starts", ("</think>", "<|im_end|>"))


def test_caseless_ascii_characters_count_as_plain_under_ignore_case() -> None:
    assert of(r"(?i)<\|e\|>x").required == ("<|", "|>")  # `e` and `x` have case: they end the runs
    assert of(r"(?i)<tool_call>").starts == ("<",)
    assert of(r"(?i)\u02bcn\u02bc\u02bc").required == ()  # U+02BC is part of what U+0149 folds to


ONE_SHOT_STARTS = [r"(?=<\|e\|>)|</t>", r"(?i)<\|e\|>|(?=<\|s\|>)", r"(?i)<t>\w", r"(?=<t>)", r"<a>x?|(?=<t)"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ONE_SHOT_STARTS), st.text(alphabet="<|>estTa", max_size=30), st.integers(0, 30))
def test_a_one_shot_search_from_where_matches_can_start_finds_what_search_finds(
    pattern: str, text: str, pos: int
) -> None:
    plan = of(pattern)
    assert plan.one_shot in ("one_start", "starts")
    full = re.compile(translate(pattern).full, re.DOTALL)
    pos = min(pos, len(text))
    if plan.one_shot == "starts":
        found = search_from_starts(full, text, pos, plan.starts)
    else:
        at = text.find(plan.starts[0], pos)
        found = None if at < 0 else full.search(text, at)
    expected = full.search(text, pos)
    assert (found and found.span()) == (expected and expected.span())


def test_a_pattern_anchored_at_the_start_is_tried_there_only() -> None:
    assert of(r"^\s*\[").start_only
    assert not of(r"a|^\[").start_only  # one branch can match anywhere


def test_a_lazy_dot_star_pattern_is_one_match_attempt_and_awaits_the_strings_it_needs() -> None:
    assert of(r"(?=[\s\S]*?</think>)") == Strategy("re", attempt="match", awaits=("</think>",))
    assert of(r".*?</think>") == Strategy("re", attempt="match", required=("</think>",), awaits=("</think>",))
    assert of(r"(?=[\s\S]*?(?:</think>|<\|end\|>))").awaits == ("</think>", "<|end|>")  # one of them
    assert of(r"(?i)(?=[\s\S]*?think)").awaits == ()  # case-insensitive letters: no one string to look for
    assert of(r"(?i)(?=[\s\S]*?</think>)").awaits == ("</",)  # characters without case are one string
    assert of(r"(?=[\s\S]*?(?:</think>|>))").awaits == ()  # a branch with no string of two characters


def test_literals_before_a_lazy_dot_star_lookahead_are_where_streaming_waits() -> None:
    plan = of(r"<think>(?=[\s\S]*?</think>)")
    assert (plan.awaits_after, plan.awaits) == (("<think>",), ("</think>",))
    plan = of(r"(?:\[THINK\]|<think>)(?=[\s\S]*?(?:\[/THINK\]|</think>|</s>))")
    assert (plan.awaits_after, plan.awaits) == (("[THINK]", "<think>"), ("[/THINK]", "</think>", "</s>"))
    assert of(r"(<think>)(?=.*?</think>)").awaits_after == ("<think>",)  # `.` is any character (DOTALL)
    assert of(r"<think>\s*(?=[\s\S]*?</think>)").awaits_after == ()  # more than literals before it
    assert of(r"<think>(?=[\s\S]*</think>)").awaits_after == ()  # greedy: not drawn as waiting
    assert of(r"<think>(?=[\s\S]*?</think>)x").awaits_after == ()  # the lookahead does not end it


def test_literals_before_a_lookahead_for_plain_strings_end_no_later_than_their_last_occurrence() -> None:
    """At the end of the stream, such a lookahead holds where one of its strings starts at or after it:
    the match is the first literal that ends no later than the last of them starts."""
    assert of(r"<think>(?=[\s\S]*?</think>)") == Strategy(
        "re",
        required=("<think>",),
        search_from="found",
        one_shot="awaited",
        awaits=("</think>",),
        awaits_after=("<think>",),
    )
    assert of(r"(?:<a>|<b>)(?=.*?(?:</a>|</b>))").one_shot == "awaited"
    assert of(r"<t(?=.*?(?:</think>\n|</t))").awaits == ("</think>\n", "</t")
    # (otherwise: from the literal, the whole pattern)
    assert of(r"(<think>)(?=[\s\S]*?</think>)").one_shot == "search"  # a capture: its match reports it
    assert of(r"<think>(?=[\s\S]*?</think>\s)").one_shot == "search"  # more than the string is needed
    assert of(r"<think>(?=[\s\S]*?(?:</think>|))").one_shot == "search"  # an empty branch: always holds


AWAITED_ONE_SHOT = [
    r"<think>(?=[\s\S]*?</think>)",
    r"(?:<t>|<th>)(?=.*?(?:</t>|<e>))",
    r"(?:<th>|<t>)(?=.*?(?:<e>|</t>))",
    r"<t(?=.*?t>)",
    r"(?:<t>|>)(?=[\s\S]*?<t>)",
]


# (texts of these pieces: one character off where a literal or string ends, and the search differs)
AWAITED_PIECES = ["<think>", "</think>", "<t>", "<th>", "</t>", "<e>", "t>", "<", ">", "x", "\n", "h"]


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(AWAITED_ONE_SHOT),
    st.lists(st.sampled_from(AWAITED_PIECES), max_size=8).map("".join),
    st.integers(0, 60),
)
def test_the_first_literal_ending_before_the_last_awaited_string_is_what_search_finds(
    pattern: str, text: str, pos: int
) -> None:
    """The `awaited` one-shot search, as a generated scanner runs it, against `regex` on the pattern."""
    plan = of(pattern)
    assert plan.one_shot == "awaited"
    literals = re.compile("|".join(map(re.escape, plan.awaits_after)), re.DOTALL)
    pos = min(pos, len(text))
    memo: list[Any] = [None]
    found = literals.search(text, pos, last_start(memo, 0, text, plan.awaits))
    expected = regex.compile(pattern, regex.DOTALL).search(text, pos)
    assert (found and found.span()) == (expected and expected.span())
    assert memo[0] == max(text.rfind(string) for string in plan.awaits)  # remembered


def test_the_summary_names_each_decision() -> None:
    assert of(r"(?=[\s\S]*?</think>)").summary() == "strategy: match; streaming waits for '</think>'"
    assert of(r"<tool_call>\s*(?P<name>\w+)").summary() == "strategy: search; after '<tool_call>'; from that string"
    assert of(r"(?:<a>|<b>)x").summary() == "strategy: search; one-shot at '<a>x', '<b>x'"
    assert of(r"(?:<a>|<b>)(?=[\s\S]*?(?:</a>|</b>))").summary() == (
        "strategy: search; one-shot where '<a>' or '<b>' ends before the last '</a>' or '</b>'; streaming waits at"
        " '<a>' or '<b>' for '</a>' or '</b>'"
    )


AWAITING = [r"(?=[\s\S]*?</think>)", r"(?=.*?</t>)", r".*?</t>", r"[\s\S]*?<end>", r"(?=.*?(?:</t>|<end>))"]
AWAITING_AFTER = [r"<think>(?=[\s\S]*?</think>)", r"(?:<t>|<th>)(?=.*?(?:</t>|<end>))", r"<e(?=.*?<end>)"]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(AWAITING),
    st.text(alphabet="<>/thinkd e\n", max_size=30),
    st.integers(min_value=0, max_value=30),
)
def test_a_waiting_pattern_partially_matches_at_the_scan_position(pattern: str, text: str, pos: int) -> None:
    """While the awaited strings are absent after `pos`, `regex`'s partial search reports a partial match
    at `pos` (nothing after it can be committed), or nothing at all at the very end."""
    awaited = of(pattern).awaits
    assert awaited
    pos = min(pos, len(text))
    if any(string in text[pos:] for string in awaited):
        return
    match = regex.compile(pattern, regex.DOTALL).search(text, pos, partial=True)
    if pos < len(text):
        assert match is not None and match.partial and match.start() == pos
    else:
        assert match is None or match.start() == pos


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(AWAITING_AFTER),
    st.text(alphabet="<>/thinkd e\n", max_size=30),
    st.text(alphabet="<>/thinkd e\n", max_size=30),
    st.integers(min_value=0, max_value=1),
)
def test_a_pattern_waiting_after_literals_partially_matches_at_each_until_a_string_follows(
    pattern: str, before: str, after: str, which: int
) -> None:
    """Where one of the literals occurs and none of the awaited strings follows it, `regex` finds no
    match from there on, and a partial one there (the scanner waits at that position): however much
    text is added, as long as no awaited string is."""
    plan = of(pattern)
    lead = plan.awaits_after[min(which, len(plan.awaits_after) - 1)]
    text = before + lead + after
    at = len(before)
    if any(string in text[at + min(map(len, plan.awaits_after)) :] for string in plan.awaits):
        return
    compiled = regex.compile(pattern, regex.DOTALL)
    assert compiled.search(text, at) is None
    match = compiled.search(text, at, partial=True)
    assert match is not None and match.partial and match.start() == at


def test_branches_that_match_only_at_the_end_are_tried_once_at_the_end() -> None:
    assert of(r"</think>|$").before_end == BeforeEnd("</think>", final_newline=True)
    assert of(r"<a>|\Z|<b>").before_end == BeforeEnd("<a>|<b>", final_newline=False)
    assert of(r"$").before_end == BeforeEnd(None, final_newline=True)
    assert of(r"(?P<end>$)|<a>").before_end is None  # a group in an end branch: its match reports it
    assert of(r"a$|b").before_end is None  # `$` inside a branch: not an end branch


END_PATTERNS = [r"</t>|$", r"\n|$", r"$|\n", r"</t>|\Z", r"$", r"\Z", r"(?:x\n)|$|\Z", r"<a>(?P<n>\w)|$"]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(END_PATTERNS), st.text(alphabet="</t>x\n", max_size=12), st.integers(0, 12))
def test_the_split_search_finds_what_the_whole_pattern_finds(pattern: str, text: str, pos: int) -> None:
    split = of(pattern).before_end
    assert split is not None
    full = re.compile(translate(pattern).full, re.DOTALL)
    branches = None if split.branches is None else re.compile(split.branches, re.DOTALL)
    pos = min(pos, len(text))
    found = search_before_end(full, branches, text, pos, split.final_newline)
    expected = full.search(text, pos)
    assert (found and (found.span(), found.groupdict())) == (expected and (expected.span(), expected.groupdict()))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab<>", max_size=40), st.lists(st.integers(0, 40), max_size=8))
def test_end_of_stream_searches_remembered_answer_as_searching_again(text: str, moves: list[int]) -> None:
    """A one-shot parse remembers its searches (`find_once`, `recall`): the buffer no longer changes and
    the scan position only moves on, and every remembered answer is the one a new search gives."""
    pattern = re.compile("<a+>", re.DOTALL)
    memo: list[Any] = [None, None]
    for pos in sorted(min(move, len(text)) for move in moves):
        assert find_once(memo, 0, text, "<b", pos) == text.find("<b", pos)
        found = recall(memo, 1, pos)
        if found is FORGOTTEN:
            found = pattern.search(text, pos)
            memo[1] = (pos, found)
        expected = pattern.search(text, pos)
        assert (found and found.span()) == (expected and expected.span())
