"""Held-back delimiter starts (`rtcompile.held_starts`): the texts a state holds back whole, which a
compiled module lengthens without a scan. Listed only where the reference's rule says scanning holds
them back and commits nothing, whatever committed text comes before them; the module then agrees with
the reference for every chunking, and a delimiter spelled over many chunks is scanned at its first and
last only.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtcompile
from rtcompile.plan import ParserState, plan_parser
from rtcompile.runtime.engine import prefixes_of
from rtcompile.scan_rule import state_scanner
from rtcompile.tooling.observe import agrees_with_reference, identical
from tests.support.bundled import template_of
from tests.support.compiled import compiled_engine, scanned_chunks
from tests.support.differential import interpreter_engine, observe, reference_engine
from tests.support.lanes import examples
from tests.support.strategies import PLAIN, chunkings, templates

LITERALS = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "content": "json", "repeats": True},
        "content": {"close": "<|im_end|>"},
    },
}


def held(template: dict[str, Any]) -> list[tuple[str, ...]]:
    """By state: its held starts."""
    return [state.held_starts for state in plan_parser(rtcompile.load_template(template)).states]


def test_a_literal_state_lists_each_delimiter_but_its_last_character() -> None:
    # outside: the opens and the implicit content's close; inside: each region's close
    assert held(LITERALS) == [("<think", "<tool_call", "<|im_end|"), ("</think",), ("</tool_call",)]


def test_a_start_that_the_pattern_goes_on_past_is_held_whole() -> None:
    # `<tool_call>` alone is a partial match of `<tool_call>\s*\{`: held back, all of it
    calls = {"open_pattern": r"<tool_call>\s*\{", "close": "}"}
    template = {"start_anchor": "<s>", "fields": {"tool_calls": calls, "content": {}}}
    assert held(template)[0] == ("<tool_call>",)


def test_a_delimiter_found_inside_another_s_start_leaves_that_start_out() -> None:
    # In `<a` the close `a` matches at 1, after the partial open held back from 0: held whole. In `a`
    # and `<a>` a delimiter is complete and taken: not listed.
    template = {"start_anchor": "<s>", "fields": {"x": {"open": "<a>", "close": "b"}, "content": {"close": "a"}}}
    assert held(template)[0] == ("<a",)


def test_nothing_is_listed_where_a_delimiter_looks_before_the_scan_position() -> None:
    # what a scan decides then depends on the committed text before the held-back text too
    template = {"start_anchor": "<s>", "fields": {"x": {"open_pattern": r"(?<=\n)<x>", "close": "</x>"}, "content": {}}}
    assert held(template) == [(), ("</x",)]


def test_a_state_that_waits_for_a_string_lists_its_starts_too() -> None:
    # held back whole by the reference's rule; a scan here may wait for `</think>` instead
    # (`rtcompile.runtime.waiting`), which keeps the text too and commits nothing until it comes
    template = {
        "start_anchor": "<s>",
        "fields": {"reasoning_content": {"open_pattern": r"<think>(?=[\s\S]*?</think>)", "close": "</think>"}},
    }
    states = plan_parser(rtcompile.load_template(template)).states
    assert states[0].awaits and states[0].held_starts == ("<think>",)


def _check_held_whole(state: ParserState, before: str) -> None:
    """Every listed start, and each of its prefixes, after `before` (committed): the reference's rule
    takes no delimiter and holds back all of it."""
    scan = state_scanner([w.delimiter for w in state.watches])
    for text in sorted(prefixes_of(*state.held_starts)):
        which, _start, _end, _groups, hold = scan(before + text, len(before), False, [])
        assert (which, hold) == (-1, len(before)), (state.index, before, text)


@pytest.mark.parametrize("model", ["qwen3", "gpt_oss", "seed_oss", "mistral_v11", "kimi_k2", "glm4_5"])
def test_bundled_starts_are_held_whole_after_any_committed_text(model: str) -> None:
    for state in plan_parser(rtcompile.load_template(template_of(model))).states:
        for before in ["", "x", "a < b ", "\n", "<", "</", "<|", "[", " "]:
            _check_held_whole(state, before)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(templates(compilable=True), st.lists(PLAIN, max_size=3))
def test_random_templates_starts_are_held_whole_after_any_committed_text(
    template: dict[str, Any], before: list[str]
) -> None:
    for state in plan_parser(rtcompile.load_template(template)).states:
        _check_held_whole(state, "".join(before))


def _same_as_the_interpreter(chunks: list[str]) -> bool:
    ours = observe(compiled_engine(template_of("qwen3")), "", chunks)
    return identical(ours, observe(interpreter_engine(template_of("qwen3")), "", chunks))


def test_a_delimiter_spelled_over_many_chunks_is_scanned_once_complete() -> None:
    chunks = ["Let me see", " <", "t", "oo", "l_c", "al", "l", ">", '{"name": "f", "arguments": {}}']
    # the first chunk (no region is open yet) and `>` (the delimiter is complete); ` <` ends in a start,
    # held back, which `t` to `l` lengthen; the body has no `<`
    assert scanned_chunks(template_of("qwen3"), chunks) == 2
    assert _same_as_the_interpreter(chunks)


def test_a_near_miss_is_region_text_once_it_stops_being_a_start() -> None:
    chunks = ["a", " <", "to", "ol", "s are", " handy"]
    # only the first chunk: `<tools are` (what was held back and the chunk) holds no delimiter, nor the
    # start of one at its end (`rtcompile.held_starts.begins_with`)
    assert scanned_chunks(template_of("qwen3"), chunks) == 1
    assert _same_as_the_interpreter(chunks)


def test_a_start_that_comes_to_nothing_is_region_text_without_a_scan() -> None:
    # ` a <`: ` a ` is region text and `<` held back; `<b` cannot start a delimiter: region text; nor
    # `<|x`; `<|im_end|>` is a delimiter
    chunks = ["Hi", " a <", "b", " c", " d <", "|", "x", " <|im", "_end|>"]
    assert scanned_chunks(template_of("qwen3"), chunks) == 2  # the first chunk, and the one that ends `<|im_end|>`
    assert _same_as_the_interpreter(chunks)


def test_a_start_cut_short_within_a_chunk_is_region_text() -> None:
    # `</thi` goes on with a space, in the chunk itself: no delimiter begins there; `</th` at the end of
    # a chunk is held back, and `</think>` closes the reasoning
    chunks = ["<think>", "x </thi \n", "ok", " </th", "ink>", "done"]
    # the open, the close, and `done`, which opens the content
    assert scanned_chunks(template_of("qwen3"), chunks) == 3
    assert _same_as_the_interpreter(chunks)


# Templates whose modules keep committed text (history > 0: the held text is what follows the scan
# position) and whose modules keep none, with pieces that spell their delimiters a few characters at a
# time.
SPELLED = {
    "qwen3": ["<", "t", "h", "ink>", "</", "th", "ink", ">", "<tool", "_call>", "</tool_call>", "<|im_", "end|>"],
    "seed_oss": ["<seed", ":think>", "</seed:", "think>", "<seed:tool_call>", "<function=f>", "<", "/", "s"],
    "llama3_2": ["<|python", "_tag|>", '{"name": "f"', "<|eom_id|>", "<|", "eot", "_id|>", "<", "|"],
    "gpt_oss": ["<|channel|>", "analysis", "<|message|>", "<|end|>", "<|start|>", "to=", "functions.f", "<|call|>"],
}


@pytest.mark.parametrize("model", sorted(SPELLED))
@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_delimiters_spelled_over_chunks_match_the_reference(model: str, data: st.DataObject) -> None:
    template = template_of(model)
    pieces = [*SPELLED[model], "x", " ", "a < b", "\n"]
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=30)))
    chunks = data.draw(chunkings(text))
    ours = observe(compiled_engine(template), "", chunks)
    assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks))
    assert identical(ours, observe(interpreter_engine(template), "", chunks))
