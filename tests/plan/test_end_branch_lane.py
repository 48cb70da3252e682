"""A close with a branch that matches only at the text's end (`</think>|\\Z`): `regex`'s partial search
reports that complete match over any partial one, so streaming in such a state never holds text back
(`rtcompile.plan.holds_nothing`). A compiled module then takes a region's chunk in which a delimiter
may start as region text unless another branch matches in it, where it would scan; events and
messages stay the reference's for every chunking, a delimiter spelled over two chunks included.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtcompile
from rtcompile.plan import plan_parser
from rtcompile.tooling.observe import agrees_with_reference, identical
from tests.support.compiled import compiled_engine, scanned_chunks
from tests.support.differential import interpreter_engine, observe, reference_engine, two_way_splits
from tests.support.lanes import examples
from tests.support.strategies import chunkings

REASONING_TO_THE_END = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {
            "open": "<|think_start|>",
            "close_pattern": r"<\|think_end\|>|\Z|(?=<\|tool_call_start\|>)",
        },
        "tool_calls": {"open": "<|tool_call_start|>", "close": "<|tool_call_end|>", "content": "json"},
        "content": {"close": "<|im_end|>"},
    },
}


def other_branches(close: str, *, more: dict[str, Any] | None = None) -> list[str | None]:
    fields: dict[str, Any] = {"x": {"open": "<x>", "close_pattern": close}, **(more or {}), "content": {}}
    states = plan_parser(rtcompile.load_template({"start_anchor": "<s>", "fields": fields})).states
    return [state.other_branches for state in states]


def test_the_plan_finds_the_other_branches_of_a_close_that_matches_at_the_end() -> None:
    assert other_branches(r"</x>|\Z") == [None, "</x>"]
    assert other_branches(r"\Z|</x>|(?=<y>)") == [None, "</x>|(?=<y>)"]


@pytest.mark.parametrize(
    "close",
    [
        r"</x>|$",  # `$` also matches before a final newline, which is then held back
        r"</x>",  # no end branch
        r"\Z",  # no other branch: no delimiter starts in any chunk anyway
        r"(?<=\n)</x>|\Z",  # looks before the scan position
    ],
)
def test_no_other_branches_where_text_may_be_held_back(close: str) -> None:
    assert other_branches(close) == [None, None]


def test_code_full_of_starts_in_the_reasoning_is_not_scanned() -> None:
    chunks = ["<|think_start|>", "if a <", "|b", " and c <|", "think", "_e", " then"]
    # only the open; `<|think_end|>` spelled over chunks is no close here: every chunk's text is
    # committed, as the reference commits it
    assert scanned_chunks(REASONING_TO_THE_END, chunks) == 1
    ours = observe(compiled_engine(REASONING_TO_THE_END), "", chunks)
    assert agrees_with_reference(ours, observe(reference_engine(REASONING_TO_THE_END), "", chunks))


def test_a_close_within_a_chunk_is_scanned() -> None:
    chunks = ["<|think_start|>", "hm", " <|think_end|>ok", " done"]
    assert scanned_chunks(REASONING_TO_THE_END, chunks) == 2  # the open, and the chunk with the close
    ours = observe(compiled_engine(REASONING_TO_THE_END), "", chunks)
    assert agrees_with_reference(ours, observe(reference_engine(REASONING_TO_THE_END), "", chunks))


PIECES = ["<|think_start|>", "<|think_end|>", "<|think", "_end|>", "<|tool_call_start|>", '{"name": "f"}']
PIECES += ["<|tool_call_end|>", "<|im_end|>", "<|", "<", "a < b", " ", "\n", "x"]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streams_match_the_reference(data: st.DataObject) -> None:
    text = "".join(data.draw(st.lists(st.sampled_from(PIECES), max_size=25)))
    chunks = data.draw(chunkings(text))
    ours = observe(compiled_engine(REASONING_TO_THE_END), "", chunks)
    assert agrees_with_reference(ours, observe(reference_engine(REASONING_TO_THE_END), "", chunks))
    assert identical(ours, observe(interpreter_engine(REASONING_TO_THE_END), "", chunks))


def test_every_two_way_split_and_one_character_at_a_time_match_the_reference() -> None:
    text = "<|think_start|>a <|b <|think_end|> <|tool_call_start|>{}<|tool_call_end|>c <|im_end|>"
    for chunks in [*two_way_splits(text), list(text)]:
        ours = observe(compiled_engine(REASONING_TO_THE_END), "", chunks)
        assert agrees_with_reference(ours, observe(reference_engine(REASONING_TO_THE_END), "", chunks)), chunks
