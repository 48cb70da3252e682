"""The divergences a random-regex attack found (issue 24), each class as explicit cases.

Every case runs the compiled module, the interpreter and transformers on the same streams, in one
chunk, under every 2-way split, one character at a time and one-shot (`tests.regex_fuzz.divergences`),
and expects no difference: messages, events, exception classes (and, between our two engines,
exception messages).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.regex_fuzz import divergences

# ---------------------------------------------------------------------------------------------------
# Delimiters that match the empty string, at the end of the stream
# ---------------------------------------------------------------------------------------------------

# Zero-width or empty-matching patterns: at the end of the stream an empty match at the very end opens
# (or closes) nothing in the reference; a generated scanner watching one such delimiter took it.
EMPTY_MATCHING = ["^", "$", r"\Z", r"(?s)\Z", r"\B", r"\M\M", r"(?x)$\b", r"(?:\d|)", r"(?x)K*?", "1*?", r"a\K"]
ENDINGS = ["\nx", "11</t>", "11</t>1", "xK é</t>", "<t>1\n", ""]


def _open_template(pattern: str) -> dict[str, Any]:
    return {
        "start_anchor": "<s>",
        "fields": {"tc": {"open_pattern": pattern, "close": "</t>", "transform": {"c": "{content}"}}, "content": {}},
    }


@pytest.mark.parametrize("pattern", EMPTY_MATCHING)
def test_empty_matching_open_at_the_end_of_the_stream(pattern: str) -> None:
    assert divergences(_open_template(pattern), "", ENDINGS) == []


@pytest.mark.parametrize("pattern", EMPTY_MATCHING)
def test_empty_matching_close_at_the_end_of_the_stream(pattern: str) -> None:
    # The close's own (empty) capture joins the region's captures only where the close is taken.
    close = f"(?P<end>{pattern})"
    template = {
        "start_anchor": "<s>",
        "fields": {"tc": {"open": "<t>", "close_pattern": close, "transform": {"c": "{content}", "e": "{end}"}}},
    }
    assert divergences(template, "", [f"<t>{ending}" for ending in ENDINGS]) == []


def test_empty_matching_open_and_close_of_one_field() -> None:
    template = {"start_anchor": "<s>", "fields": {"tc": {"open_pattern": "1*?", "close_pattern": r"\Z"}, "content": {}}}
    assert divergences(template, "<s>", ["11", "", "x1"]) == []
