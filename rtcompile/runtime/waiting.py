"""The engine for templates whose scanners may wait: streaming that stays linear where
the reference holds everything back.

A pattern that needs one of some strings somewhere after its start, with anything
before it, partially matches until one of them arrives: one that opens with `.*?`
(`.*?</think>`) does so at the scan position; literals followed by such a lookahead
(`<think>(?=[\\s\\S]*?</think>)`: reasoning that opens only once its close is in
sight) do so wherever one of the literals occurs. The reference holds back everything
from there, and rescans all of it on every chunk. While the strings are absent nothing
in that parser state can be committed from there on
(`rtcompile.strategies.Strategy.awaits`), so the scanner says `WAITING` (the text
before is committed as usual) and this parser keeps new text without scanning it,
looking only for the strings in what arrives. When one arrives, or the stream ends,
everything kept is scanned once, as the reference would have.

Lifted only into modules whose plan awaits strings (their `ResponseParser` derives from
`WaitingParser`).
"""

from typing import Final

from rtcompile.runtime.engine import BLOCK_CHUNKS, StreamingParser, seal
from rtcompile.runtime.types import Event, Message

# `StreamingParser._lane` while the state awaits strings: a module's `feed` asks the
# wait about each chunk (`Wait.arrived`), before any other fast path.
AWAITING: Final = -3


class Wait:
    """Text kept while a parser state awaits strings: new text is looked at only for
    them (with the few characters before it that could begin one), and kept in blocks
    like a region's body, so that waiting costs no more than the text."""

    __slots__ = ("awaited", "blocks", "chunks", "reach", "tail")

    def __init__(self, awaited: tuple[str, ...], buffer: str, after: int) -> None:
        self.awaited = awaited
        # how many characters before new text an occurrence can begin in; `self.reach`
        # slices that many off the end of a text (none for one-character strings)
        reach = max(map(len, awaited)) - 1
        self.reach = slice(-reach, None) if reach else slice(0, 0)
        # the end of the scanned text, from `after` on, that one could begin in
        self.tail = buffer[max(after, len(buffer) - reach) :]
        self.chunks: list[str] = []
        self.blocks: list[str] = []

    def arrived(self, text: str) -> bool:
        """Whether one of the awaited strings occurs once `text` is added; if not,
        `text` is kept."""
        window = self.tail + text
        for awaited in self.awaited:  # (a loop: `any` of a generator costs more)
            if awaited in window:
                return True
        self.tail = window[self.reach]
        self.chunks.append(text)
        if len(self.chunks) >= BLOCK_CHUNKS:
            seal(self.chunks, self.blocks)
        return False

    def text(self) -> str:
        """All the text kept."""
        return "".join(self.blocks) + "".join(self.chunks)


class WaitingParser(StreamingParser):
    """`StreamingParser` whose scanners may say `WAITING` (see the module docstring)."""

    _wait: Wait | None = None  # while the state awaits strings

    def feed(self, text: str) -> list[Event]:
        """Add model text; returns the events it completes."""
        wait = self._wait
        if wait is not None and not self._finalized:
            # until one arrives nothing can be committed: text is kept, not scanned
            return self._arrive(wait, text) if wait.arrived(text) else []
        return StreamingParser.feed(self, text)

    def _arrive(self, wait: Wait, text: str) -> list[Event]:
        """One of the awaited strings arrived with `text`: everything kept is scanned.

        (A module's own `feed` calls `Wait.arrived` and this directly, the call of this
        class's `feed` saved: `_wait` is set only while the parser is not finalized.)"""
        self._wait = None
        return StreamingParser.feed(self, wait.text() + text)

    def finalize(self) -> tuple[Message, list[Event]]:
        """End of generation: flush what is held back, close the open region, return the
        message."""
        self._stop_waiting()
        return StreamingParser.finalize(self)

    def parse_complete(self, text: str) -> Message:
        """`feed(text)` then `finalize()`'s message (see
        `StreamingParser.parse_complete`)."""
        self._stop_waiting()
        return StreamingParser.parse_complete(self, text)

    def _settle(self) -> None:
        """`StreamingParser._settle`, or `AWAITING` while the state awaits strings."""
        if self._wait is None:
            StreamingParser._settle(self)
        else:
            self._lane = AWAITING

    def _start_waiting(self, wait: int, after: int) -> None:
        """Wait for one of the strings of the state's wait `wait` after `after`.

        (A module's own `feed` asks the wait about every chunk first, before any fast
        path.)"""
        awaited = self._program.tables.awaits[self._state][wait]
        self._wait = Wait(awaited, self._buffer, after)

    def _stop_waiting(self) -> None:
        """The text kept while waiting goes back into the buffer, to be scanned."""
        if self._wait is not None and not self._finalized:
            self._buffer += self._wait.text()
            self._wait = None
