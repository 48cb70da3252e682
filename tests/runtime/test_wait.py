"""`Wait` (rtcompile/runtime/waiting.py), the text a parser keeps while its state awaits strings: it says
that one arrived with exactly the chunk that completes the first occurrence, however the text is chunked
and however far back the occurrence begins (in the scanned text before the wait, in sealed blocks of kept
chunks), and it reads only chunks that hold an awaited string's last character. The streams of modules
that wait are compared with transformers' in tests/differential/test_waiting.py."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rtcompile.runtime.engine import BLOCK_CHUNKS
from rtcompile.runtime.waiting import Wait


def _first_arrival(awaited: tuple[str, ...], scanned: str, after: int, chunks: list[str]) -> int | None:
    """The index of the chunk with which one of `awaited` first occurs, searching all of the text so far
    each time: the chunks, after the end of the scanned text (from `after` on) that an occurrence could
    begin in, one character shorter than the longest string (None: never)."""
    reach = max(map(len, awaited)) - 1
    seen = scanned[max(after, len(scanned) - reach) :]
    for index, chunk in enumerate(chunks):
        seen += chunk
        if any(text in seen for text in awaited):
            return index
    return None


def _arrivals(awaited: tuple[str, ...], scanned: str, after: int, chunks: list[str]) -> tuple[int | None, str]:
    """The index of the chunk `Wait.arrived` says completes an occurrence, and the text it kept before it."""
    wait = Wait(awaited, scanned, after)
    for index, chunk in enumerate(chunks):
        if wait.arrived(chunk):
            return index, wait.text()
    return None, wait.text()


AWAITED = st.lists(st.text("ab<>/", min_size=1, max_size=6), min_size=1, max_size=3).map(tuple)


@settings(max_examples=300, deadline=None)
@given(AWAITED, st.text("ab<>/", max_size=12), st.integers(0, 12), st.lists(st.text("ab<>/", max_size=5)))
@example(("</a>",), "x</", 1, ["a", ">"])  # begun in the scanned text
@example(("<ab>",), "", 0, ["<", "a", "b", ">"])  # one character at a time
@example(("b", "ab"), "ab", 0, ["x"])  # in the scanned text already (no scanner waits there): the next chunk
def test_a_string_arrives_with_the_chunk_that_completes_its_first_occurrence(
    awaited: tuple[str, ...], scanned: str, after: int, chunks: list[str]
) -> None:
    after = min(after, len(scanned))
    expected = _first_arrival(awaited, scanned, after, chunks)
    index, kept = _arrivals(awaited, scanned, after, chunks)
    assert index == expected
    assert kept == "".join(chunks[: len(chunks) if index is None else index])


@pytest.mark.parametrize("length", [2, BLOCK_CHUNKS - 1, BLOCK_CHUNKS, 3 * BLOCK_CHUNKS + 5])
def test_an_occurrence_longer_than_a_block_of_chunks_arrives_with_its_last_character(length: int) -> None:
    """Fed a character at a time, the string's start lies in sealed blocks when its last character comes."""
    awaited = "<" + "x" * length + ">"
    chunks = list("pro<se " + awaited[:-1]) + [">", "after"]
    index, kept = _arrivals((awaited, "</never>"), "<think>", 7, chunks)
    assert index == len(chunks) - 2
    assert kept == "pro<se " + awaited[:-1]


def test_only_chunks_with_an_awaited_last_character_are_read() -> None:
    """A chunk without `>` or `]` cannot complete `</think>` or `[/THINK]`: it is kept, not searched."""
    searched: list[str] = []

    class Counted(Wait):
        __slots__ = ()

        def _occurs_with(self, text: str) -> bool:
            searched.append(text)
            return super()._occurs_with(text)

    wait = Counted(("</think>", "[/THINK]"), "<think>", 7)
    for chunk in ["Let", " me", " think", " <b", "ut", " [1", "0]", " a", "</th", "ink", ">"]:
        if wait.arrived(chunk):
            break
    assert searched == ["0]", ">"]
