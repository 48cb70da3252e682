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
    them, and kept in blocks like a region's body, so that waiting costs no more than
    the text.

    None of the strings occurs in the text so far, so one can occur only once its last
    character arrives: a chunk without the last character of any is kept unread; one
    with such a character is searched, with the few characters before it that an
    occurrence could begin in."""

    __slots__ = ("awaited", "blocks", "chunks", "ends", "reach", "tail")

    def __init__(self, awaited: tuple[str, ...], buffer: str, after: int) -> None:
        self.awaited = awaited
        # how many characters before new text an occurrence can begin in
        self.reach = max(map(len, awaited)) - 1
        # the end of the scanned text, from `after` on, that one could begin in
        self.tail = buffer[max(after, len(buffer) - self.reach) :]
        # the characters a chunk must hold to complete an occurrence: the strings' last
        # ones (`""`, in every text, where one occurs in `tail` already: the scanners
        # wait only where none does, and it would arrive with the next chunk)
        ends = dict.fromkeys(text[-1] for text in awaited)
        self.ends = ("",) if any(text in self.tail for text in awaited) else tuple(ends)
        self.chunks: list[str] = []
        self.blocks: list[str] = []

    def arrived(self, text: str) -> bool:
        """Whether one of the awaited strings occurs once `text` is added; if not,
        `text` is kept."""
        for end in self.ends:  # (a loop: `any` of a generator costs more)
            if end in text:
                if self._occurs_with(text):
                    return True
                break
        self.chunks.append(text)
        if len(self.chunks) >= BLOCK_CHUNKS:
            seal(self.chunks, self.blocks)
        return False

    def _occurs_with(self, text: str) -> bool:
        """Whether one of the awaited strings occurs in `text` with the characters
        before it that an occurrence could begin in."""
        window = self._recent() + text
        return any(awaited in window for awaited in self.awaited)

    def _recent(self) -> str:
        """The last `reach` characters before new text: of the text kept, and of the
        scanned `tail` before it. (Each piece is sliced before it is joined: a block may
        hold most of the stream.)"""
        reach, recent = self.reach, ""
        for pieces in (self.chunks, self.blocks, [self.tail]):
            for piece in reversed(pieces):
                if len(recent) == reach:
                    return recent
                recent = piece[len(recent) - reach :] + recent
        return recent

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
