"""A close with a branch that matches at the text's end (`</think>|\\Z`, `</think>|$`): `regex`'s partial
search reports that complete match over any partial one, so streaming in such a state holds back no
partial match (`rtcompile.plan.holds_nothing`); a `$` also matches before a newline that ends the text,
which is held back until the next character. A compiled module then takes a region's chunk in which a
delimiter may start as region text unless another branch matches in it, where it would scan, and holds
back such a newline without a scan; events and messages stay the reference's for every chunking, a
delimiter spelled over two chunks included.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtcompile
from rtcompile.plan import ParserState, plan_parser
from rtcompile.tooling.observe import agrees_with_reference, identical
from tests.support.compiled import compiled_engine, scanned_chunks
from tests.support.differential import interpreter_engine, observe, reference_engine, two_way_splits
from tests.support.lanes import examples
from tests.support.strategies import chunkings

REASONING_TO_THE_END: dict[str, Any] = {
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


# The same, with a `$`: a newline that ends a chunk is held back.
REASONING_TO_THE_LINE_END = {
    **REASONING_TO_THE_END,
    "fields": {
        **REASONING_TO_THE_END["fields"],
        "reasoning_content": {
            "open": "<|think_start|>",
            "close_pattern": r"<\|think_end\|>|$|(?=<\|tool_call_start\|>)",
        },
    },
}
TEMPLATES = [pytest.param(REASONING_TO_THE_END, id="end"), pytest.param(REASONING_TO_THE_LINE_END, id="line-end")]


def states_of(close: str) -> list[ParserState]:
    fields: dict[str, Any] = {"x": {"open": "<x>", "close_pattern": close}, "content": {}}
    return list(plan_parser(rtcompile.load_template({"start_anchor": "<s>", "fields": fields})).states)


def other_branches(close: str) -> list[str | None]:
    return [state.other_branches for state in states_of(close)]


def test_the_plan_finds_the_other_branches_of_a_close_that_matches_at_the_end() -> None:
    assert other_branches(r"</x>|\Z") == [None, "</x>"]
    assert other_branches(r"\Z|</x>|(?=<y>)") == [None, "</x>|(?=<y>)"]
    assert other_branches(r"</x>|$") == [None, "</x>"]


def test_a_newline_that_ends_the_text_is_held_back_before_a_dollar_only() -> None:
    # the region's held-back starts: the newline `$` matches before; no start of `</x>`, which `$`
    # (or `\Z`) matching at the end keeps from being held back
    assert [state.held_starts for state in states_of(r"</x>|$")] == [("<x",), ("\n",)]
    assert [state.held_starts for state in states_of(r"</x>|\Z")] == [("<x",), ()]


@pytest.mark.parametrize(
    "close",
    [
        r"</x>",  # no end branch
        r"\Z",  # no other branch: no delimiter starts in any chunk anyway
        r"(?<=\n)</x>|\Z",  # looks before the scan position
    ],
)
def test_no_other_branches_where_text_may_be_held_back(close: str) -> None:
    assert other_branches(close) == [None, None]


@pytest.mark.parametrize("template", TEMPLATES)
def test_code_full_of_starts_in_the_reasoning_is_not_scanned(template: dict[str, Any]) -> None:
    chunks = ["<|think_start|>", "if a <", "|b", " and c <|", "think", "_e", " then"]
    # only the open; `<|think_end|>` spelled over chunks is no close here: every chunk's text is
    # committed, as the reference commits it
    assert scanned_chunks(template, chunks) == 1
    ours = observe(compiled_engine(template), "", chunks)
    assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks))


def test_lines_of_the_reasoning_are_not_scanned_before_a_dollar() -> None:
    # each newline that ends a chunk is held back (`$` matches before it), and goes with the next chunk
    chunks = ["<|think_start|>", "first\n", "\n", "- a <|\n", "\nlast", " line\n"]
    assert scanned_chunks(REASONING_TO_THE_LINE_END, chunks) == 1
    ours = observe(compiled_engine(REASONING_TO_THE_LINE_END), "", chunks)
    assert agrees_with_reference(ours, observe(reference_engine(REASONING_TO_THE_LINE_END), "", chunks))


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_close_within_a_chunk_is_scanned(template: dict[str, Any]) -> None:
    chunks = ["<|think_start|>", "hm\n", " <|think_end|>ok", " done"]
    assert scanned_chunks(template, chunks) == 2  # the open, and the chunk with the close
    ours = observe(compiled_engine(template), "", chunks)
    assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks))


PIECES = ["<|think_start|>", "<|think_end|>", "<|think", "_end|>", "<|tool_call_start|>", '{"name": "f"}']
PIECES += ["<|tool_call_end|>", "<|im_end|>", "<|", "<", "a < b", " ", "\n", "x"]


@pytest.mark.parametrize("template", TEMPLATES)
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streams_match_the_reference(template: dict[str, Any], data: st.DataObject) -> None:
    text = "".join(data.draw(st.lists(st.sampled_from(PIECES), max_size=25)))
    chunks = data.draw(chunkings(text))
    ours = observe(compiled_engine(template), "", chunks)
    assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks))
    assert identical(ours, observe(interpreter_engine(template), "", chunks))


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_two_way_split_and_one_character_at_a_time_match_the_reference(template: dict[str, Any]) -> None:
    text = "<|think_start|>a <|b\n <|think_end|> <|tool_call_start|>{}<|tool_call_end|>c\n\n <|im_end|>"
    for chunks in [*two_way_splits(text), list(text)]:
        ours = observe(compiled_engine(template), "", chunks)
        assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks)), chunks
