"""The guard before a regex delimiter's search: a module looks for the strings every match contains,
in order (`rtcompile.regex.analysis.required_literals`), and skips the full search while they are not
all there, as gpt-oss's open pattern is while its `<|message|>` has yet to arrive. Skipping must never
miss a match: events and messages stay exactly the reference's for any chunking, with the strings
arriving in pieces, out of order, or only some of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtcompile.tooling.observe import agrees_with_reference, identical
from tests.support.bundled import template_of
from tests.support.compiled import compiled_engine, compiled_module
from tests.support.differential import interpreter_engine, observe, reference_engine
from tests.support.lanes import examples
from tests.support.strategies import chunkings

# Three strings every call open contains, in this order; the name between the first two.
CALLS = {
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {
            "open_pattern": "(?:<x>\\s*)?<a>(?P<name>[a-z]+)<b>[^<]*<c>",
            "close": "</a>",
            "repeats": True,
            "transform": {"name": "{name}", "arguments": "{content}"},
        },
        "content": {"close": "<|end|>"},
    },
}

# A pattern that can only match at the buffer's start: its `if pos > 0` comes before the guard.
ANCHORED = {
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {"open_pattern": "^<a>(?P<name>[a-z]+)<b>", "close": "</a>", "transform": {"name": "{name}"}},
        "content": {"close": "<|end|>"},
    },
}

TEMPLATES = {
    "gpt_oss": template_of("gpt_oss"),
    "granite_20b_fc": template_of("granite_20b_fc"),
    "calls": CALLS,
    "anchored": ANCHORED,
}
GUARDS = {  # each string after the one before it, while streaming
    "gpt_oss": 'buf.find("<|message|>", at + 13)',
    "granite_20b_fc": "buf.find('\",', at + 7)",
    "calls": 'buf.find("<c>", at + 3)',
    "anchored": 'buf.find("<b>", at + 3)',
}
# Whole calls, calls with a required string missing or out of order, and text between them.
PIECES = {
    "gpt_oss": [
        '<|channel|>commentary to=functions.get <|constrain|>json<|message|>{"a": 1}<|call|>',
        'to=functions.get<|message|>{"a": 1}<|call|>',
        "<|channel|>commentary to=functions.get <|constrain|>json",
        "<|message|><|channel|>commentary to=functions.get ",
        "<|channel|>final<|message|>hi<|end|>", "<|channel|>analysis<|message|>hm<|end|>",
        "<|start|>assistant", "<|mess", " to=functions.", "x", "<",
    ],
    "granite_20b_fc": [
        '<function_call> {"name": "get", "arguments": {"a": 1}}',
        '<function_call> {"name": "get" "arguments": {"a": 1}}',
        '<function_call> {"arguments": {"a": 1}, "name": "get", }',
        '{"name": "', '", ', '"arguments": ', "x", " ",
    ],
    "calls": [
        "<a>get<b>1<c>x</a>", "<x> <a>get<b><c></a>", "<a>get<c><b>x</a>", "<c><a>get<b>", "<a>get<b>x",
        "<a>", "<b>", "<c>", "</a>", "<", "x", "<|end|>",
    ],
    "anchored": ["<a>get<b>x</a>", "<a>get", "<b>", "</a>", "x", "<a>", "<|end|>", "<"],
}  # fmt: skip


@pytest.mark.parametrize("model", sorted(TEMPLATES))
def test_the_module_guards_its_search_with_every_required_string(model: str) -> None:
    module = compiled_module(TEMPLATES[model])
    assert module.__file__ is not None
    assert GUARDS[model] in Path(module.__file__).read_text(encoding="utf-8")


@pytest.mark.parametrize("model", sorted(TEMPLATES))
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streams_match_the_reference(model: str, data: st.DataObject) -> None:
    template = TEMPLATES[model]
    text = "".join(data.draw(st.lists(st.sampled_from(PIECES[model]), max_size=8)))
    for chunks in (data.draw(chunkings(text)), list(text), [text]):
        ours = observe(compiled_engine(template), "", chunks)
        assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks)), chunks
        assert identical(ours, observe(interpreter_engine(template), "", chunks))
