"""Streaming that waits (`rtcompile.runtime.waiting`): where an open delimiter is literals followed by a
lookahead reading up to its close (`<think>(?=[\\s\\S]*?</think>)`), a compiled module stops scanning the
held text and looks only for the awaited strings in new text; so it does where a lazy run between literals
(`(?:\\[TOOL_CALLS\\])?(?P<name>[^\\s\\[\\]]+?)\\[ARGS\\]`, matched with the regex module) has a partial match
past its mandatory part. Whatever it waits on, every event and the message are transformers' (exact
`observe` records, in one chunk, every 2-way split and one character at a time), and the module does wait,
so that this tests the path it names. That the work stays linear is tests/plan/test_linear_work.py's (the
`~lookahead-open` and `~lazy-names` rewrites).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rtcompile.tooling.observe import identical
from tests.support.compiled import compiled_module
from tests.support.differential import observe, reference_engine, two_way_splits

_TOOL_CALLS = {"open": "<tool_call>", "close": "</tool_call>", "content": "json", "repeats": True}
_CONTENT = {"close": "<|im_end|>", "content": "text"}
TEMPLATES: dict[str, dict[str, Any]] = {
    # one literal, one awaited string: TRL's reasoning open after a literal
    "literal": {
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "reasoning_content": {"open_pattern": r"<think>(?=[\s\S]*?</think>)", "close": "</think>"},
            "tool_calls": _TOOL_CALLS,
            "content": _CONTENT,
        },
    },
    # literals and awaited strings in alternations (magistral-like)
    "alternations": {
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "reasoning_content": {
                "open_pattern": r"(?:\[THINK\]|<think>)(?=[\s\S]*?(?:\[/THINK\]|</think>|<tool_call>))",
                "close": ["[/THINK]", "</think>"],
            },
            "tool_calls": _TOOL_CALLS,
            "content": _CONTENT,
        },
    },
    # two fields that wait in one state, each for its own close (cohere-like)
    "two waits": {
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "reasoning_content": {"open_pattern": r"<think>(?=[\s\S]*?</think>)", "close": "</think>"},
            "content": {"open_pattern": r"<say>(?=[\s\S]*?</say>)", "close": "</say>"},
            "tool_calls": _TOOL_CALLS,
        },
    },
    # a literal of whitespace beside a close that holds back a run of whitespace
    "whitespace": {
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "reasoning_content": {"open_pattern": r"\n\n(?=[\s\S]*?</think>)", "close": "</think>"},
            "tool_calls": {**_TOOL_CALLS, "open_pattern": r"\s*<tool_call>", "open": None},
            "content": {"content": "text"},
        },
    },
    # a lazy name after an optional prefix (a mistral-like tool call, written lazily), matched with the regex
    # module: past its first character its partial match stays until [ARGS] follows
    "lazy run": {
        "start_anchor": "[/INST]",
        "fields": {
            "reasoning_content": {"open": "[THINK]", "close": "[/THINK]"},
            "tool_calls": {
                "open_pattern": r"(?:\[TOOL_CALLS\])?(?P<name>[^\s\[\]]+?)\[ARGS\]",
                "close": ["[TOOL_CALLS]", "</s>"],
                "content": "json",
                "repeats": True,
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
            "content": {"close": "</s>", "content": "text", "repeats": True, "join": ""},
        },
    },
    # a required literal, two mandatory characters and a two-character string
    "lazy run after a literal": {
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "tool_calls": {
                **_TOOL_CALLS,
                "open_pattern": r"<function=(?P<name>[a-z_]{2,}?)>\n",
                "open": None,
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
            "content": {"content": "text"},
        },
    },
}
for _template in TEMPLATES.values():
    for _spec in _template["fields"].values():
        if _spec.get("open") is None:
            _spec.pop("open", None)
PIECES = [
    *("<think>", "</think>", "</th", "<thi", "[THINK]", "[/THINK]", "<say>", "</say>", "</sa"),
    *("<tool_call>", '{"name": "f", "arguments": {"a": 1}}', "</tool_call>", "<|im_end|>"),
    *("x", "reasoning", " ", "\n", "\n\n", "<", "/"),
    *("[TOOL_CALLS]", "[ARGS]", "[ARG", "get_weather", "[", "</s>", "<function=", "ab>", ">\n"),
]


def _agrees(template: dict[str, Any], text: str) -> int:
    """Asserts the compiled module and transformers agree on `text` in one chunk, every 2-way split and one
    character at a time; returns how many times the module began to wait."""
    module = compiled_module(template)
    waits = 0

    def make(prefix: str, tools: Any) -> Any:
        parser = module.ResponseParser(prefix, tools=tools)
        start = parser._start_waiting

        def counted(wait: int, after: int) -> None:
            nonlocal waits
            waits += 1
            start(wait, after)

        parser._start_waiting = counted
        return parser

    for chunks in [[text], *two_way_splits(text), list(text)]:
        ours = observe(make, "", chunks, None)
        assert identical(ours, observe(reference_engine(template), "", chunks, None)), chunks
    return waits


@pytest.mark.parametrize("name", TEMPLATES)
def test_a_module_that_waits_at_a_literal_streams_as_transformers_does(name: str) -> None:
    texts = {
        "literal": "Hi <think>some long reasoning\nmore</think> answer<|im_end|>",
        "alternations": "[THINK]plan<think> a</th then [/THINK]done<|im_end|>",
        "two waits": "<say>hello <think>no</say> and <think>why</think><say>bye",
        "whitespace": "hi\n\n  \n \n more</think> done",
        "lazy run": 'Let me check the weather for you [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>',
        "lazy run after a literal": 'Calling <function=get_time>\n{"zone": "CET"}</tool_call> now',
    }
    assert _agrees(TEMPLATES[name], texts[name]) > 0


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(TEMPLATES)), st.lists(st.sampled_from(PIECES), max_size=12))
@example("literal", ["<think>", "x", "<think>", "</th", "x", "</think>"])  # a second literal while waiting
@example("alternations", ["<think>", "</think>", "[THINK]", "x"])  # a wait that never ends
@example("lazy run", ["x", " ", "[ARGS]", "get_weather", "[ARG", "x", "[ARGS]", "{", "</s>"])  # an S that fails
def test_modules_that_wait_stream_every_output_as_transformers_does(name: str, pieces: list[str]) -> None:
    _agrees(TEMPLATES[name], "".join(pieces))
