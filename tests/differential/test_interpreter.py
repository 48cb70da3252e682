"""The interpreter against transformers 5.24.0: same messages, events and exception types.

Templates and streams are generated (see tests/support/strategies.py); each stream is compared one-shot, at
every 2-way split and in random chunkings, with and without a prefix that opens a region.
"""

from __future__ import annotations

from typing import Any

import pytest
import transformers.utils.chat_parsing as reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtcompile
from rtcompile.tooling.observe import agrees_with_reference
from tests.support.differential import interpreter_engine, observe, one_shot, reference_engine, two_way_splits
from tests.support.lanes import examples
from tests.support.strategies import TOOLS, chunkings, prefixes, streams, templates

SETTINGS = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, Any], str, str, list[str], Any]:
    template = draw(templates())
    text = draw(streams(template))
    prefix = draw(prefixes(template))
    tools = draw(st.sampled_from([None, TOOLS]))
    return template, prefix, text, draw(chunkings(text)), tools


@SETTINGS
@given(cases())
def test_random_chunking_matches_reference(case: tuple[dict[str, Any], str, str, list[str], Any]) -> None:
    template, prefix, _text, chunks, tools = case
    expected = observe(reference_engine(template), prefix, chunks, tools)
    assert agrees_with_reference(observe(interpreter_engine(template), prefix, chunks, tools), expected)


@SETTINGS
@given(cases())
def test_one_shot_matches_reference(case: tuple[dict[str, Any], str, str, list[str], Any]) -> None:
    template, prefix, text, _chunks, tools = case
    expected = one_shot(reference.parse_response, text, template, prefix, tools)
    assert agrees_with_reference(one_shot(rtcompile.parse_response, text, template, prefix, tools), expected)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_every_two_way_split_matches_reference(case: tuple[dict[str, Any], str, str, list[str], Any]) -> None:
    template, prefix, text, _chunks, tools = case
    for chunks in two_way_splits(text):
        expected = observe(reference_engine(template), prefix, chunks, tools)
        assert agrees_with_reference(observe(interpreter_engine(template), prefix, chunks, tools), expected), chunks


@settings(max_examples=examples(200), deadline=None)
@given(st.text(max_size=30))
def test_arbitrary_text_on_smollm3_template(text: str) -> None:
    template = SMOLLM3
    for chunks in ([text], [*text]):
        ours = observe(interpreter_engine(template), "", chunks)
        assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks))


SMOLLM3 = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
}


def test_finalize_twice_and_feed_after_finalize_raise_runtime_error() -> None:
    parser = rtcompile.ResponseParser(SMOLLM3, "")
    parser.feed("hi")
    parser.finalize()
    with pytest.raises(RuntimeError):
        parser.finalize()
    with pytest.raises(RuntimeError):
        parser.feed("more")


def test_prefix_is_required() -> None:
    with pytest.raises(ValueError, match="requires `prefix`"):
        rtcompile.ResponseParser(SMOLLM3, None)
    with pytest.raises(ValueError):
        rtcompile.parse_response("x", SMOLLM3, prefix=None)


def test_prefix_after_last_anchor_opens_reasoning() -> None:
    prefix = "<|im_start|>assistant\nold<|im_end|><|im_start|>user\nq<|im_end|><|im_start|>assistant\n<think>"
    parser = rtcompile.ResponseParser(SMOLLM3, prefix)
    assert parser.initial_events == [{"type": "region_open", "field": "reasoning_content"}]
    parser.feed("plan</think>answer")
    message, _ = parser.finalize()
    assert message == {"role": "assistant", "reasoning_content": "plan", "content": "answer"}


def test_batch_with_broadcast_and_per_text_prefixes() -> None:
    texts = ["<think>a</think>b", "c"]
    assert rtcompile.parse_response(texts, SMOLLM3, prefix="") == [
        {"role": "assistant", "reasoning_content": "a", "content": "b"},
        {"role": "assistant", "content": "c"},
    ]
    assert rtcompile.parse_response(["a</think>b", "c"], SMOLLM3, prefix=["<think>", ""]) == [
        {"role": "assistant", "reasoning_content": "a", "content": "b"},
        {"role": "assistant", "content": "c"},
    ]
    with pytest.raises(ValueError, match="prefix"):
        rtcompile.parse_response(texts, SMOLLM3, prefix=["", "", ""])


def test_long_stream_keeps_buffer_small() -> None:
    """Committed text is dropped: the parser's buffer stays bounded however long the stream."""
    parser = rtcompile.ResponseParser(SMOLLM3, "")
    for _ in range(20_000):
        parser.feed("word <thin")
        parser.feed("k>x</think> ")
    assert len(parser._buffer) < 64
