"""The engine for templates whose scanners may wait: streaming that stays linear where the reference
holds everything back.

A pattern that opens with `.*?` and needs a string somewhere after its start
(`(?=[\\s\\S]*?</think>)`: reasoning that opens only once its close is in sight) partially matches at
the scan position until that string arrives, so the reference holds back everything from there, and
rescans all of it on every chunk. While the string is absent nothing in that parser state can be
committed (`rtcompile.strategies.Strategy.awaits`), so the scanner says `WAITING` and this parser
keeps new text without scanning it, looking only for the string in what arrives. When it arrives,
or the stream ends, everything kept is scanned once, as the reference would have.

Lifted only into modules whose plan awaits a string (their `ResponseParser` derives from
`WaitingParser`).
"""

from rtcompile.runtime.engine import BLOCK_CHUNKS, StreamingParser, seal
from rtcompile.runtime.types import Event, Message


class Wait:
    """Text kept while a parser state awaits a string: new text is looked at only for the string (with
    the few characters before it that could begin it), and kept in blocks like a region's body, so
    that waiting costs no more than the text."""

    __slots__ = ("awaited", "tail", "chunks", "blocks")

    def __init__(self, awaited: str, buffer: str, pos: int) -> None:
        self.awaited = awaited
        # The end of the scanned text that a later occurrence could begin in.
        self.tail = buffer[max(pos, len(buffer) - len(awaited) + 1) :]
        self.chunks: list[str] = []
        self.blocks: list[str] = []

    def arrived(self, text: str) -> bool:
        """Whether the awaited string occurs once `text` is added; if not, `text` is kept."""
        window = self.tail + text
        if self.awaited in window:
            return True
        self.tail = window[max(0, len(window) - len(self.awaited) + 1) :]
        self.chunks.append(text)
        if len(self.chunks) >= BLOCK_CHUNKS:
            seal(self.chunks, self.blocks)
        return False

    def text(self) -> str:
        """All the text kept."""
        return "".join(self.blocks) + "".join(self.chunks)


class WaitingParser(StreamingParser):
    """`StreamingParser` whose scanners may say `WAITING` (see the module docstring)."""

    _wait: Wait | None = None  # while the state awaits a string

    def feed(self, text: str) -> list[Event]:
        """Add model text; returns the events it completes."""
        wait = self._wait
        if wait is not None and not self._finalized:
            if not wait.arrived(text):
                return []  # nothing can be committed yet: the text is kept, nothing scanned
            self._wait = None
            text = wait.text() + text
        return StreamingParser.feed(self, text)

    def finalize(self) -> tuple[Message, list[Event]]:
        """End of generation: flush what is held back, close the open region, return the message."""
        self._stop_waiting()
        return StreamingParser.finalize(self)

    def parse_complete(self, text: str) -> Message:
        """`feed(text)` then `finalize()`'s message (see `StreamingParser.parse_complete`)."""
        self._stop_waiting()
        return StreamingParser.parse_complete(self, text)

    def _start_waiting(self) -> None:
        awaited = self._program.tables.awaits[self._state]
        self._wait = Wait(awaited, self._buffer, self._pos)

    def _stop_waiting(self) -> None:
        """The text kept while waiting goes back into the buffer, to be scanned."""
        if self._wait is not None and not self._finalized:
            self._buffer += self._wait.text()
            self._wait = None
