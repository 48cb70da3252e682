"""Held-back text that is a partial match of a delimiter past its start (`<tool>get_wea`, `\\n\\n</to`): a
compiled module lengthens it without a scan while the chunk leaves it a partial match from its start and
completes no match (the `PARTIAL` lane, `rtcompile.backends.codegen.fast_path._partial_lane`): a scan
would hold all of it back. Where the pattern has no stdlib translation, `regex`'s own partial search
decides, as the scan's does; where another state's delimiter looks back, the kept text before the held
text is left alone. Events and messages stay the reference's for every chunking.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtcompile.tooling.observe import agrees_with_reference, identical
from tests.support.compiled import compiled_engine, compiled_source, regex_partial_searches, scanned_chunks
from tests.support.differential import interpreter_engine, observe, reference_engine, two_way_splits
from tests.support.lanes import examples
from tests.support.strategies import chunkings

NAMED_CALLS: dict[str, Any] = {
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<tool>\s*(?:functions\.)?(?P<name>[^\s:<]+):\d+\s*<\|args\|>",
            "close_pattern": r"\s*</tool>",
            "content": "json",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            "repeats": True,
        },
        "content": {"close": "<|end|>"},
    },
}
# a back-reference: no stdlib translation of its partial matches, `regex` decides
QUOTED_NAMES: dict[str, Any] = {
    **NAMED_CALLS,
    "fields": {
        **NAMED_CALLS["fields"],
        "tool_calls": {
            **NAMED_CALLS["fields"]["tool_calls"],
            "open_pattern": r"<invoke name=([\"'])(?P<name>[^\"'\n]+)\1>",
            "close_pattern": r"</invoke>",
        },
    },
}
# the content's close also matches where the text ends: its lane holds back from each `<` its second look lets
# through (the open's `<i`, the close's `<|`), and asks whether that is a partial match of the open
QUOTED_TO_THE_END: dict[str, Any] = {
    **QUOTED_NAMES,
    "fields": {**QUOTED_NAMES["fields"], "content": {"close_pattern": r"<\|end\|>|\Z"}},
}
# the close looks back: the module keeps committed text before what it holds back
LOOKING_BACK: dict[str, Any] = {
    **NAMED_CALLS,
    "fields": {
        **NAMED_CALLS["fields"],
        "tool_calls": {**NAMED_CALLS["fields"]["tool_calls"], "close_pattern": r"(?<=\})\s*</tool>"},
    },
}
# a complete match that ends before held-back text a longer one may still take (`<call=ab` in `<call=ab!`,
# where `<call=ab!1` may follow): taken, not held back, though `<call=ab!` is a partial match from its start
OPTIONAL_TAIL: dict[str, Any] = {
    "start_anchor": "<s>",
    "fields": {
        "tool_calls": {"open_pattern": r"<call=(?:\w+|\w+!\d)", "close": "</call>", "repeats": True},
        "content": {"close": "<|end|>"},
    },
}
# a name run that ends the open: `<tool>call:get_w` is a complete match already, which a scan holds back
# from its start while more text may lengthen it (gemma's `<|tool_call>call:get_weather{...}`)
GROWING: dict[str, Any] = {
    **NAMED_CALLS,
    "fields": {
        **NAMED_CALLS["fields"],
        "tool_calls": {
            **NAMED_CALLS["fields"]["tool_calls"],
            "open_pattern": r"<tool>call:(?P<name>[^{\s<]+)",
            "close_pattern": "</tool>",
        },
    },
}
# reasoning that opens only once its close is in sight: the state outside waits after `<think>` (see
# `rtcompile.runtime.waiting`); held text with `<think>` in it may begin a wait, and is scanned
WAITING: dict[str, Any] = {
    **NAMED_CALLS,
    "fields": {
        "reasoning_content": {"open_pattern": r"<think>(?=[\s\S]*?</think>)", "close": "</think>"},
        **NAMED_CALLS["fields"],
        "tool_calls": {**NAMED_CALLS["fields"]["tool_calls"], "open_pattern": r"<tool>(?P<name>[^:]+):\d+<\|args\|>"},
    },
}
TEMPLATES = {
    "named": NAMED_CALLS,
    "waiting": WAITING,
    "quoted": QUOTED_NAMES,
    "quoted-to-the-end": QUOTED_TO_THE_END,
    "looking-back": LOOKING_BACK,
    "optional-tail": OPTIONAL_TAIL,
    "growing": GROWING,
}
CALLS = {
    "named": ['<tool>functions.get_weather:0<|args|>{"city": "Paris"}\n</tool>'],
    "quoted": ['<invoke name="get_weather">{"city": "Paris"}</invoke>', "<invoke name='f'>{}</invoke>"],
    "looking-back": ['<tool>get_weather:12 <|args|>{"city": "Paris"}  </tool>'],
    "quoted-to-the-end": ['<invoke name="get_weather">{"city": "Paris"}</invoke>', "<invoke name='f'>{}</invoke>"],
    "optional-tail": ["<call=get_weather!1 Paris</call>", "<call=f! and more</call>"],
    "growing": ['<tool>call:get_weather{"city": "Paris"}</tool>', "<tool>call:f {}</tool>"],
    "waiting": [
        '<tool>get_weather:0<|args|>{"city": "Paris"}</tool>',
        "<think>a plan</think>",
        "<tool>a<think>b:1<|args|>{}",
    ],
}


def test_each_template_has_the_lane() -> None:
    for name, template in TEMPLATES.items():
        assert "if lane == PARTIAL:" in compiled_source(template), name


OPENS = {"named": "<tool>functions.get_weather:0<|args|>", "quoted": '<invoke name="get_weather">'}
OPENS["looking-back"] = "<tool>get_weather:12 <|args|>"
OPENS["optional-tail"] = "<call=get_the_current_weather!1"
OPENS["growing"] = "<tool>call:get_the_current_weather"
OPENS["waiting"] = "<tool>get_the_current_weather:0<|args|>"


# (not `optional-tail`: there the text held back is a complete match all along, which a scan takes up)
@pytest.mark.parametrize("name", ["named", "quoted", "looking-back", "waiting"])
def test_a_delimiter_spelled_a_few_characters_at_a_time_is_scanned_where_it_starts_and_ends(name: str) -> None:
    opening = OPENS[name]
    chunks = ["Let me check.", " ", *(opening[i : i + 3] for i in range(0, len(opening), 3)), '{"a": 1}']
    # the first chunk (nothing is open yet); the start of the open is held back without a scan (`HELD`)
    # up to the chunk that makes it more than a start, which is scanned; each chunk after it is held
    # back with it without a scan, up to the one that completes it, which is scanned (and, where the
    # match reaches the end of the text, held back: the next chunk is scanned too); the body has no `<`
    assert len(chunks) >= 12
    assert scanned_chunks(TEMPLATES[name], chunks) <= 4
    _agrees(TEMPLATES[name], chunks)


def test_a_chunk_that_ends_in_a_partial_match_past_a_start_is_region_text_up_to_it() -> None:
    chunks = ["Let me check.", " Now <tool>get_w", "eather:0<|a", "rgs|>", '{"a": 1}', "</tool>"]
    # scanned: the first chunk, and the one after the open; ` Now ` is region text and `<tool>get_w` held
    # back without a scan (`_holds_partial`), lengthened by the next; `rgs|>` completes the open, held back
    # without a scan as a match that reaches the end of the text, taken with the next chunk, which is
    # scanned; `</tool>` is held back the same way (the stream may go on)
    assert scanned_chunks(NAMED_CALLS, chunks) == 2
    _agrees(NAMED_CALLS, chunks)


def test_held_text_that_a_chunk_leaves_no_partial_match_is_region_text_where_the_lane_says_so() -> None:
    # ` </` is held back as a partial match of the close `\s*</tool>` (by the run's lane, without a scan:
    # `_hold_before_begins`); `b>"}` leaves ` </b>"}`, no partial match: in the open call, the region's lane
    # takes held text and chunk as one chunk, region text as a scan would find (scanned: the open, the
    # chunk after it; `</tool>` is held back without a scan, as a match that reaches the end of the text)
    chunks = ["<tool>get:0<|args|>", '{"a": "x', " </", 'b>"}', "</tool>"]
    assert scanned_chunks(NAMED_CALLS, chunks) == 2
    _agrees(NAMED_CALLS, chunks)


def test_a_match_that_more_text_may_lengthen_is_held_back_without_a_scan() -> None:
    # `<tool>` and `cal` are held back as a start (`HELD`); `l:g` makes it a complete match of the open,
    # which a name character may lengthen: held back from its start (`PARTIAL` from there), as are the
    # chunks that lengthen it; `{"a"` ends it, and is scanned (scanned: the first chunk and that one;
    # `</tool>` is held back the same way, a match that ends the text)
    chunks = ["Hi", " <tool>", "cal", "l:g", "et_w", "eather", '{"a"', ": 1}", "</tool>"]
    assert scanned_chunks(GROWING, chunks) == 2
    _agrees(GROWING, chunks)
    # with no region open (no lane to give the chunk to), the same: `l:g` is held back with what was held
    # (scanned: the first chunk, and the one that ends the match)
    chunks = ["<tool>", "cal", "l:g", "et", '{"a": 1}', "</tool>"]
    assert scanned_chunks(GROWING, chunks) == 2
    _agrees(GROWING, chunks)


def test_held_text_in_which_a_wait_may_begin_is_scanned() -> None:
    # `<tool>abc` is held back as a partial match of the open (its name takes any character but `:`);
    # `<think>` after it may begin the reasoning's wait, which the lane does not decide: each chunk from
    # there up to the one that completes the open is scanned (with the first chunk: 5), and agrees
    chunks = ["Hi ", "<tool>ab", "c", "<think>xy", "z", "</think>", ":1<|args|>{}", "</tool>"]
    assert scanned_chunks(WAITING, chunks) == 5
    _agrees(WAITING, chunks)
    source = compiled_source(WAITING)
    assert "if lane == PARTIAL:" in source and '"<think>" in held' in source


def test_held_text_no_match_can_begin_in_is_not_searched_with_regex() -> None:
    # `regex`'s partial search (microseconds each) runs only for held text that begins with the open's
    # leading characters (`<i`, or a `<` that ends it). `<b` and `<y>` are region text on the content's lane:
    # its second look lets a `<` through only before `|` (its close) or `i` (the open's leading characters).
    # `<|b` and `<|y>` pass it: the lane holds back from them and asks about them, and they are then scanned
    # (whose search starts at `<i` too); nor is `<|b` searched where a held `<|` is followed by `b`
    for chunks in (
        ["Hi", " a <b", " and c", " x <y>", " z"],
        ["Hi", " a <|b", " and c", " x <|y>", " z"],
        ["Hi", " a <|", "b and c"],
    ):
        assert regex_partial_searches(QUOTED_TO_THE_END, chunks) == 0, chunks
        _agrees(QUOTED_TO_THE_END, chunks)
    assert scanned_chunks(QUOTED_TO_THE_END, ["Hi", " a <b", " and c", " x <y>", " z"]) == 1  # (the first)
    # `<i` is held back as the start of the open; `nx` ends that: `<inx` is searched where the lane asks
    # whether it is a partial match, and again where it is scanned
    chunks = ["Hi", " a <i", "nx"]
    assert regex_partial_searches(QUOTED_TO_THE_END, chunks) == 2
    _agrees(QUOTED_TO_THE_END, chunks)


def _agrees(template: dict[str, Any], chunks: list[str]) -> None:
    ours = observe(compiled_engine(template), "", chunks)
    assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks)), chunks
    assert identical(ours, observe(interpreter_engine(template), "", chunks)), chunks


def _pieces(name: str) -> list[str]:
    """Pieces of a stream: the template's calls cut into short runs, near misses, prose."""
    pieces = ["x", " ", "a < b", "\n", "<|end|>", "<", "<to", "ol>", "<inv", "oke name=", '"', "'", "get", ":1", "<|"]
    pieces += ["<ca", "ll=", "!", "1", "call:", "{", "get_w", "<think>", "</think>", "<thi", "nk>"]
    for call in CALLS[name]:
        pieces += [call, *(call[i : i + 4] for i in range(0, len(call), 4))]
    return pieces


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streams_match_the_reference(name: str, data: st.DataObject) -> None:
    text = "".join(data.draw(st.lists(st.sampled_from(_pieces(name)), max_size=25)))
    _agrees(TEMPLATES[name], data.draw(chunkings(text)))


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_two_way_split_and_one_character_at_a_time_match_the_reference(name: str) -> None:
    text = f"Hi <to {' '.join(CALLS[name])} <tool>broken:x and on <|end|>"
    for chunks in [*two_way_splits(text), list(text)]:
        _agrees(TEMPLATES[name], chunks)
