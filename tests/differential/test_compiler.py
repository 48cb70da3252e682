"""Generated modules against the interpreter (and so against transformers): equal in everything.

Every case compiles the template to a file, imports it, and compares it with the interpreter on
the same stream: initial events, the events of every feed, the final message and events, and
exceptions (type, step and message).
"""

from __future__ import annotations

from typing import Any

import pytest
import transformers.utils.chat_parsing as reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtcompile
from rtcompile.tooling.observe import agrees_with_reference, identical
from tests.support.compiled import compiled_engine, compiled_module
from tests.support.differential import interpreter_engine, observe, one_shot, reference_engine, two_way_splits
from tests.support.lanes import examples
from tests.support.strategies import TOOLS, chunkings, prefixes, streams, templates

pytestmark = pytest.mark.slow  # ~35 s: every example compiles and imports a module

# Compiling is the slow part, so each generated template is checked on many streams.
STREAMS_PER_TEMPLATE = 12
SETTINGS = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _prefix(data: st.DataObject, template: dict[str, Any]) -> str:
    return data.draw(prefixes(template), label="prefix")


@SETTINGS
@given(templates(compilable=True), st.data())
def test_random_chunkings_match_interpreter_and_reference(template: dict[str, Any], data: st.DataObject) -> None:
    for _ in range(STREAMS_PER_TEMPLATE):
        text = data.draw(streams(template), label="text")
        chunks = data.draw(chunkings(text), label="chunks")
        prefix = _prefix(data, template)
        tools = data.draw(st.sampled_from([None, TOOLS]), label="tools")
        ours = observe(compiled_engine(template), prefix, chunks, tools)
        interpreted = observe(interpreter_engine(template), prefix, chunks, tools)
        assert identical(ours, interpreted), (ours, interpreted)
        assert agrees_with_reference(ours, observe(reference_engine(template), prefix, chunks, tools))


@SETTINGS
@given(templates(compilable=True), st.data())
def test_every_two_way_split_and_char_by_char_match_interpreter(template: dict[str, Any], data: st.DataObject) -> None:
    text = data.draw(streams(template), label="text")
    prefix = _prefix(data, template)
    for chunks in [*two_way_splits(text), list(text)]:
        ours = observe(compiled_engine(template), prefix, chunks)
        assert identical(ours, observe(interpreter_engine(template), prefix, chunks)), chunks


@SETTINGS
@given(templates(compilable=True), st.data())
def test_one_shot_matches_reference(template: dict[str, Any], data: st.DataObject) -> None:
    module = compiled_module(template)
    for _ in range(STREAMS_PER_TEMPLATE):
        text = data.draw(streams(template), label="text")
        prefix = _prefix(data, template)
        tools = data.draw(st.sampled_from([None, TOOLS]), label="tools")
        ours = one_shot(lambda t, _template, **kw: module.parse_response(t, **kw), text, template, prefix, tools)
        assert agrees_with_reference(ours, one_shot(reference.parse_response, text, template, prefix, tools))
        assert ours == one_shot(rtcompile.parse_response, text, template, prefix, tools)


def test_batch_parsing_matches_interpreter() -> None:
    template = {
        "start_anchor": "<a>",
        "fields": {"reasoning_content": {"open": "<think>", "close": "</think>"}, "content": {}},
    }
    module = compiled_module(template)
    texts = ["<think>x</think>y", "z", ""]
    for prefix in ("", ["<think>", "", ""], []):
        assert module.parse_response(texts, prefix=prefix, tools=TOOLS) == rtcompile.parse_response(
            texts, template, prefix=prefix, tools=TOOLS
        )
