"""A module whose delimiters look back (a lookbehind, `\\b`) keeps the committed characters they may look
at; where no lane reads them itself, its region lanes add text to the region's body alone and the kept
history catches up when the engine next looks at the buffer (`StreamingParser._catch_up`): a copy per
scan instead of one per chunk. What a lookbehind sees is the same either way: events and messages stay
the reference's for every chunking, through regions long enough that their chunks are sealed into blocks
between scans, and where the text a lookbehind reads was added by a lane.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtcompile.runtime.engine import BLOCK_CHUNKS
from rtcompile.tooling.observe import agrees_with_reference, identical
from tests.support.compiled import compiled_engine, compiled_source
from tests.support.differential import interpreter_engine, observe, reference_engine, two_way_splits
from tests.support.lanes import examples
from tests.support.strategies import chunkings


def _template(close: str) -> dict[str, Any]:
    return {
        "start_anchor": "<s>",
        "fields": {
            "reasoning_content": {"open": "<think>", "close_pattern": close},
            "content": {"close": "<|end|>"},
        },
    }


# `</think>` closes only where the three characters before it are not all letters, or after a closing
# bracket and a newline, or not after a backslash: the lookbehind reads text a lane added
TEMPLATES = {
    "not-after-a-word": _template(r"(?<![a-z]{3})</think>"),
    "after-a-bracket-line": _template(r"(?<=[}\]]\n)</think>"),
    "word-edge": _template(r"\b</think>|(?<![.!?][.!?])</think>"),
    # one character looked back at: kept by slicing each chunk's last, were it not left to catch up
    "not-escaped": _template(r"(?<!\\)</think>"),
}
# a tool call's close looks back for a string: that lane keeps the history itself, chunk by chunk, while
# the reasoning's and the content's leave it lagging
MIXED = _template(r"(?<![a-z]{3})</think>")
MIXED["fields"] = {
    **MIXED["fields"],
    "tool_calls": {
        "open": "<tool>",
        "close_pattern": r"(?<=\}\})</tool>|(?<![a-z]{3})<end/>",
        "repeats": True,
    },
}
TEMPLATES["mixed"] = MIXED


def test_the_lanes_leave_the_history_to_catch_up() -> None:
    for name, template in TEMPLATES.items():
        assert "_history_lags = True" in compiled_source(template), name
    # but for the tool call's, which keeps it and says so (as the engine's `_accumulate` does)
    assert compiled_source(MIXED).count("self._synced = len(self._body) + 1") == 2


def test_a_lane_that_keeps_the_history_and_one_that_lets_it_lag_agree_with_the_reference() -> None:
    # `bc` after a scan of the tool call's body (`}}` may end a close), taken by the lane that keeps the
    # history: `<end/>` then looks back at ` bc`, and closes; `bc` counted twice would make it `cbc`
    _agrees(MIXED, ["<tool>", '{"a": {"b": 1}} ', "bc", "<end/>", "<|end|>"])
    _agrees(MIXED, ["<think>", "ab", "c1", "</think>", "<tool>", "}} ", "x", "<end/>", "then", "<|end|>"])
    pieces = ['{"a": {"b": 1', "}", " <", "x", "}", "</tool>"]
    for cut in range(1, len(pieces)):
        _agrees(MIXED, ["<tool>", *"".join(pieces[:cut]), *pieces[cut:], "<|end|>"])


def _agrees(template: dict[str, Any], chunks: list[str]) -> None:
    ours = observe(compiled_engine(template), "", chunks)
    assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks)), chunks
    assert identical(ours, observe(interpreter_engine(template), "", chunks)), chunks


PIECES = ["<think>", "</think>", "</th", "ink>", "abc", "a1", " ", "}\n", "]\n", ".", "?!", "x", "\n", "<|end|>", "<"]
PIECES += ["\\", "<tool>", '{"a": {"b": 1}}', "}}", "</tool>", "</to", "ol>", "<end/>", "bc"]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streams_match_the_reference(name: str, data: st.DataObject) -> None:
    text = "".join(data.draw(st.lists(st.sampled_from(PIECES), max_size=30)))
    _agrees(TEMPLATES[name], data.draw(chunkings(text)))


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_long_regions_sealed_between_scans_match_the_reference(name: str) -> None:
    # many more lane chunks than a block holds between the scans, each close tried after a run of
    # them: after a word (no close for the first template), after `}` and a newline, after a backslash
    # (none for the last), after a dot
    filler = ["ab ", "cd", "e "] * BLOCK_CHUNKS
    chunks = ["<think>", *filler, "xyz", "</think>", *filler, "}\n", "</think>", *filler, "\\", "</think>"]
    chunks += [*filler, "..", "</thi", "nk>"]
    chunks += ["done", "<|end|>"]
    _agrees(TEMPLATES[name], chunks)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_two_way_split_and_one_character_at_a_time_match_the_reference(name: str) -> None:
    text = '<think>a b c xyz</think> ok}\n</think> a\\</think> more.</think>after<tool>{"a": {"b": 1}}</tool>x<|end|>'
    for chunks in [*two_way_splits(text), list(text)]:
        _agrees(TEMPLATES[name], chunks)
