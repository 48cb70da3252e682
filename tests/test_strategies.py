"""The planner of scanning strategies (`rtcompile.strategies`): one record per regex delimiter.

Each case is a pattern that calls for one strategy, and the record the planner must give it; the
record's one-line summary is the comment its scanner carries. That each strategy changes how much a
search looks at, never what it finds, is the differential suites' job (every module against the
interpreter and the reference); `test_a_waiting_pattern_partially_matches_at_the_scan_position` checks
the one claim the waiting strategy adds, against `regex` itself.
"""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompile.ir import Delimiter
from rtcompile.strategies import Strategy, strategy


def of(pattern: str) -> Strategy:
    return strategy(Delimiter(pattern, None, False, ()))


def test_a_pattern_that_is_a_plain_literal_is_found_with_str_find() -> None:
    assert of(r"</think>") == Strategy("find", text="</think>")
    assert of(r"<\|im_end\|>") == Strategy("find", text="<|im_end|>")
    long = "<" + "x" * 10000 + ">"  # a partial-match pattern for it would nest 10,000 groups
    assert of(long) == Strategy("find", text=long)
    assert of(long).summary() == "strategy: a plain literal, str.find"


def test_a_pattern_without_an_exact_translation_runs_on_the_regex_module() -> None:
    assert of(r"<function=([^<\n]+?)>") == Strategy("regex")
    assert of(r"<(\w+)>\1") == Strategy("regex")


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


def test_a_pattern_anchored_at_the_start_is_tried_there_only() -> None:
    assert of(r"^\s*\[").start_only
    assert not of(r"a|^\[").start_only  # one branch can match anywhere


def test_a_lazy_dot_star_pattern_is_one_match_attempt_and_awaits_the_string_it_needs() -> None:
    assert of(r"(?=[\s\S]*?</think>)") == Strategy("re", attempt="match", awaits="</think>")
    assert of(r".*?</think>") == Strategy("re", attempt="match", required=("</think>",), awaits="</think>")
    assert of(r"(?i)(?=[\s\S]*?</think>)").awaits is None  # case-insensitive: no one string to look for


def test_the_summary_names_each_decision() -> None:
    assert of(r"(?=[\s\S]*?</think>)").summary() == "strategy: match; streaming waits for '</think>'"
    assert of(r"<tool_call>\s*(?P<name>\w+)").summary() == "strategy: search; after '<tool_call>'; from that string"
    assert of(r"(?:<a>|<b>)x").summary() == "strategy: search; one-shot at '<a>x', '<b>x'"


AWAITING = [r"(?=[\s\S]*?</think>)", r"(?=.*?</t>)", r".*?</t>", r"[\s\S]*?<end>"]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(AWAITING),
    st.text(alphabet="<>/thinkd e\n", max_size=30),
    st.integers(min_value=0, max_value=30),
)
def test_a_waiting_pattern_partially_matches_at_the_scan_position(pattern: str, text: str, pos: int) -> None:
    """While the awaited string is absent after `pos`, `regex`'s partial search reports a partial match
    at `pos` (nothing after it can be committed), or nothing at all at the very end."""
    awaited = of(pattern).awaits
    assert awaited is not None
    pos = min(pos, len(text))
    if awaited in text[pos:]:
        return
    match = regex.compile(pattern, regex.DOTALL).search(text, pos, partial=True)
    if pos < len(text):
        assert match is not None and match.partial and match.start() == pos
    else:
        assert match is None or match.start() == pos
