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

from rtcompile.runtime.engine import BLOCK_CHUNKS, StreamingParser, seal
from rtcompile.runtime.types import Event, Message


class Wait:
    """Text kept while a parser state awaits strings: new text is looked at only for
    them (with the few characters before it that could begin one), and kept in blocks
    like a region's body, so that waiting costs no more than the text."""

    __slots__ = ("awaited", "blocks", "chunks", "reach", "tail")

    def __init__(self, awaited: tuple[str, ...], buffer: str, after: int) -> None:
        self.awaited = awaited
        # how many characters before new text an occurrence can begin in
        self.reach = max(map(len, awaited)) - 1
        # the end of the scanned text, from `after` on, that one could begin in
        self.tail = buffer[max(after, len(buffer) - self.reach) :]
        self.chunks: list[str] = []
        self.blocks: list[str] = []

    def arrived(self, text: str) -> bool:
        """Whether one of the awaited strings occurs once `text` is added; if not,
        `text` is kept."""
        window = self.tail + text
        for awaited in self.awaited:  # (a loop: `any` of a generator costs more)
            if awaited in window:
                return True
        self.tail = window[max(0, len(window) - self.reach) :]
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
            if not wait.arrived(text):
                # nothing can be committed yet: the text is kept, nothing scanned
                return []
            self._wait = None
            text = wait.text() + text
        return StreamingParser.feed(self, text)

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

    def _start_waiting(self, wait: int, after: int) -> None:
        """Wait for one of the strings of the state's wait `wait` after `after`.

        (A module's own `feed` hands this class's every chunk while waiting: a state
        that waits at the scan position has no fast path, one that waits at a literal
        holds it back, and a held-back run that a module extends without a scan never
        starts with a character another delimiter can start with,
        `rtcompile.plan.pending_run`.)"""
        awaited = self._program.tables.awaits[self._state][wait]
        self._wait = Wait(awaited, self._buffer, after)

    def _stop_waiting(self) -> None:
        """The text kept while waiting goes back into the buffer, to be scanned."""
        if self._wait is not None and not self._finalized:
            self._buffer += self._wait.text()
            self._wait = None
