"""The streaming engine: the reference's region rules, written once for both backends.

transformers' `ResponseParser` cuts a stream of model text into regions and turns each
closed region into a value of the message. This module is that procedure; what it needs
to know about one template is plugged in by a backend:

* per parser state, a *scanner*: given the buffer, the scan position and whether the
  stream has ended, it returns the earliest delimiter match that can be committed (and
  which watched delimiter it is) plus where held-back text starts;
* per field, a *handler*: the closed region's body and captures -> the field's value;
* the plan's tables (field names, join/repeat rules, defaults, ...), the start anchor's
  search and the conversion of Python-function tools to JSON schemas,

all in one `rtcompile.runtime.program.ParserProgram`, the class attribute `_program`
(the interpreter sets it per parser). The interpreter (`rtcompile.backends.interpreter`)
plugs in scanners built on the `regex` module; a generated module plugs in scanners and
handlers specialised for its template, and gets this file lifted verbatim into it.
Either way the rules are the ones below. A backend may give `feed` a fast path (a chunk
in which no delimiter can start is region text without scanning: see `_region_text`);
everything else is `StreamingParser.feed`. Which fast path the next chunk may take is
one attribute, `_lane`, which the engine sets after each step (see `_settle`).

The states: state 0 is "outside any explicit region" (inside the implicit field, or in
no field when the template has none: then text is dropped); each explicit field has a
state of its own. A region opens when its open delimiter is committed, or, for the
implicit field, at the first text; it closes at its close delimiter, when another field
opens, or at the end of the stream.
"""

from __future__ import annotations

import copy
import sys
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, cast

from rtcompile.runtime.coercion import coerce_tool_calls
from rtcompile.runtime.program import ParserProgram
from rtcompile.runtime.protocol import (
    PREFIX_REQUIRED,
    batch_prefixes,
    is_empty,
    join_value,
    tool_parameters,
)
from rtcompile.runtime.types import (
    Event,
    FieldName,
    Message,
    RegionChunk,
    RegionClose,
    RegionMalformed,
    RegionOpen,
)

NO_FIELD: Final = -1  # `Tables.implicit` of a template without an implicit field
NO_GROUPS: Final[dict[str, str | None]] = {}
# While streaming, scanners remember nothing (the buffer grows).
NO_MEMO: Final[list[Any]] = []
# A scanner's `which`, at or below this, when nothing in its state can be committed
# from `start` on before one of the strings of the state's wait `WAITING - which`
# (`Tables.awaits`) occurs after `end` (see `rtcompile.runtime.waiting`); the text
# before `start` is committed.
WAITING: Final = -2
# Region chunks joined into one string at a time (see `_seal_body`): few enough that a
# parser holds little beyond its text mid-stream, even with a thousand parsers open at
# once.
BLOCK_CHUNKS: Final = 32
# `StreamingParser._lane`, besides a state's index: every chunk is scanned; no region is
# open and text outside regions is dropped (the template has no implicit field).
SCAN: Final = -1
OUTSIDE: Final = -2
# `StreamingParser._lane` as a generated module's own `_settle` sets it: the text held
# back is the start of a delimiter, and a chunk that leaves it the start of one is held
# back with it, without a scan (see `rtcompile.held_starts`).
HELD: Final = -4
# `StreamingParser._lane` as a generated module's own `_settle` sets it: the text held
# back may be a partial match of one of the state's delimiters, past its start; a chunk
# that leaves it one, with no complete match in it, or a match that more text may
# lengthen, is held back with it, without a scan (a generated module's `_holds_partial`
# says which).
PARTIAL: Final = -5


def prefixes_of(*texts: str) -> frozenset[str]:
    """Every non-empty prefix of `texts` (a module's held-back starts: see `HELD`)."""
    return frozenset(text[:end] for text in texts for end in range(1, len(text) + 1))


class StartAnchorWarning(UserWarning):
    """A non-empty prompt (`prefix`) in which the template's start anchor never matches.

    The reference then parses the whole prompt as part of the message, so prompt text
    leaks into it (`prefix="garbage"` gives `{"content": "garbageHello!"}`); usually the
    prompt was rendered with another chat template, or passed where the generation was
    meant.
    """


class StreamingParser:
    """Parses one generation as it streams: `feed()` text, then `finalize()`.

    `initial_events` holds the events of the prompt's pre-written part of the message
    (the text after the last start anchor in `prefix`). A backend supplies `_program`
    (see the module docstring).

    Extensions beyond the reference, each off by default (with all off, every event and
    message is exactly the reference's):

    * `captures`: `region_open` events of fields opened by a delimiter carry
      `"captures"`, the open delimiter's named groups (a tool name is known before its
      arguments arrive);
    * `spans`: `region_open` carries `"start"`, `region_close` carries `"end"`: offsets
      into the generation (the text fed after `prefix`) where the region's delimiter
      begins and where the region ends; a region the prompt opened starts at a negative
      offset;
    * `recover`: a region whose content fails to parse does not raise; it yields a
      `region_malformed` event (`field`, `error` (the exception type's name), `message`,
      `text`), is left out of the message, and parsing goes on. `malformed` lists those
      events.
    """

    # what a backend plugs in (see the module docstring)
    _program: ParserProgram
    # Only `rtcompile.runtime.waiting.WaitingParser` defines it: only its scanners say
    # `WAITING`.
    _start_waiting: Callable[[int, int], None]
    # Set by a generated module whose lanes add region text to the body alone, leaving
    # the buffer's kept history to catch up when the engine next looks (`_catch_up`).
    _history_lags = False

    # -- the open region, as the fast path reads it (set by `_mark_opened`)
    _chunk_name: FieldName
    _chunk_dirty: bool

    def __init__(
        self,
        prefix: str | None = None,
        *,
        tools: Iterable[Any] | None = None,
        captures: bool = False,
        spans: bool = False,
        recover: bool = False,
    ) -> None:
        """`prefix` is the prompt the model continued (required: see `PREFIX_REQUIRED`);
        `tools` the tools it was given (JSON schemas or Python functions), whose
        parameter types coerce the arguments of parsed tool calls; `captures`, `spans`
        and `recover` turn on the extensions."""
        if prefix is None:
            raise ValueError(PREFIX_REQUIRED)
        program = self._program
        program.prepare()
        self._tool_params = tool_parameters(tools, program.function_schema)
        self._with_captures = captures
        self._with_spans = spans
        self._recover = recover
        self.malformed: list[RegionMalformed] = []
        # Set when every chunk must be scanned: after finalize (feed then raises), and
        # with spans (the fast path does not count the text it lets through).
        self._scan_always = spans
        self._offset = 0  # the generation offset of the buffer's first character
        self._buffer = ""
        self._pos = 0  # scan position: text before it is committed
        self._output: dict[str, Any] = copy.deepcopy(program.tables.defaults)
        self._state = 0
        self._field = program.tables.implicit  # the current region's field, or NO_FIELD
        self._captures: dict[str, str] = {}
        # The current region's text: recent chunks, plus blocks of joined chunks, so
        # that a long region costs about its text in memory rather than a list entry per
        # 1-6 character token.
        self._body: list[str] = []
        self._blocks: list[str] = []
        # How many of `_body`'s chunks the buffer's kept history takes in (read where
        # `_history_lags`: a module's lanes add region text to the body alone).
        self._synced = 0
        # whether the current region has opened (emitted region_open)
        self._opened = False
        # the fast path may take a chunk: a region is open and `_scan_always` is off
        self._fast = False
        self._finalized = False
        self._lane = SCAN
        self.initial_events: list[Event] = []
        if prefix:
            self._consume_prefix(prefix)
        self._settle()

    # -- the public protocol

    def feed(self, text: str) -> list[Event]:
        """Add model text; returns the events it completes."""
        if self._finalized:
            raise RuntimeError("ResponseParser already finalized")
        if self._history_lags and self._synced != len(self._body):
            self._catch_up()
        if text:
            self._buffer += text
        events: list[Event] = []
        self._process(events, False)
        self._drop_committed()
        self._settle()
        return events

    def _settle(self) -> None:
        """Say which fast path the next chunk may take, after a step of the engine:
        `_lane` is the state's index when a region of it is open and nothing is held
        back or awaited; `OUTSIDE` when no region is open and text outside regions is
        dropped; else `SCAN`. (A module whose `feed` takes up a held-back run gives
        that its state's lane too: see `rtcompile.plan.pending_run`.)

        A module's `feed` reads this one attribute per chunk, where it would otherwise
        test the state, the open region and the held-back text one by one. Scanning
        (`_process`) sets `SCAN` first, so a step that raises leaves every later chunk
        to the engine."""
        if self._pos != len(self._buffer):
            self._lane = SCAN
        elif self._fast:
            self._lane = self._state
        elif self._field < 0 and not self._scan_always:
            self._lane = OUTSIDE
        else:
            self._lane = SCAN

    def _seal_body(self) -> None:
        """Join the region's recent chunks into a block (see `seal`), once the kept
        history has taken them in."""
        self._catch_up()
        seal(self._body, self._blocks)
        self._synced = 0

    def _catch_up(self) -> None:
        """Take the region text a generated module's lane added to the body alone into
        the buffer's kept history (its end, as much as a delimiter may look back at),
        before the engine looks at the buffer. (A lane that kept the history itself
        would copy it for every chunk; this copies it once per scan. `_offset` is left
        alone, as lanes leave it: it is read only with spans, where no lane runs.)"""
        body = self._body
        if not self._history_lags or self._synced == len(body):
            return
        history = self._program.tables.history
        # only the end of the added text can be kept: join no more chunks than that
        start, taken = len(body), 0
        while start > self._synced and (history is None or taken < history):
            start -= 1
            taken += len(body[start])
        kept = self._buffer + "".join(body[start:])
        if history is not None:
            kept = kept[len(kept) - history :]
        self._buffer = kept
        self._pos = len(kept)
        self._synced = len(body)

    def _commit_run(self, text: str, cut: int) -> list[Event]:
        """`feed(text)` where scanning is known to find no delimiter and to hold back
        exactly `text[cut:]`: the text before it is committed as region text. (A
        generated `feed` knows this for text that ends a held-back run: see
        `rtcompile.plan.pending_run`.)"""
        events: list[Event] = []
        self._catch_up()
        self._buffer += text
        hold = len(self._buffer) - len(text) + cut
        self._accumulate(events, self._buffer[self._pos : hold])
        self._pos = hold
        self._drop_committed()
        return events

    def _hold_start(
        self,
        text: str,
        cut: int,
        starts: frozenset[str],
        partial: Callable[[str], bool] | None = None,
    ) -> list[Event]:
        """`feed(text)` for a chunk of the open region in which no delimiter can start
        before `cut` (-1: no character of it may start one): where `text[cut:]` is a
        start the state holds back whole (`starts`, see `HELD`), or a partial match it
        holds back whole (`partial` says so: a generated module's `_holds_partial`, see
        `PARTIAL`), scanning would commit the text before it as region text and hold it
        back, which is done here; else the chunk is scanned. (A generated `feed` calls
        this for a chunk of its region that its test says a delimiter may start in; no
        wait is open there.)"""
        if cut < 0:
            return StreamingParser.feed(self, text)
        held = text[cut:]
        if held in starts:
            lane = HELD
        elif partial is not None and partial(held):
            lane = PARTIAL
        else:
            return StreamingParser.feed(self, text)
        events: list[Event] = []
        self._catch_up()
        self._buffer += text
        hold = len(self._buffer) - len(held)
        self._accumulate(events, self._buffer[self._pos : hold])
        self._pos = hold
        self._drop_committed()
        self._lane = lane
        return events

    def finalize(self) -> tuple[Message, list[Event]]:
        """End of generation: flush what is held back, close the open region, return the
        message."""
        if self._finalized:
            raise RuntimeError("ResponseParser already finalized")
        self._catch_up()
        events: list[Event] = []
        self._process(events, True)
        return self._message(), events

    def parse_complete(self, text: str) -> Message:
        """The message of `feed(text)` then `finalize()`, for an output known to be
        complete.

        Streaming holds back text a delimiter may still claim and takes it up again once
        more text (or the end) is there; every such decision is taken up again at the
        end, where nothing can grow. So with all the text in hand, one scan that treats
        the buffer's end as the stream's end commits the same regions with the same
        bodies: the same message, or the same exception. Only the events (how the region
        text is cut into chunks) would differ, and they are not returned.
        """
        # The plan says where this does not hold (`rtcompile.plan.one_scan_is_exact`).
        if not self._program.tables.one_scan:
            self.feed(text)
            return self.finalize()[0]
        if self._finalized:
            raise RuntimeError("ResponseParser already finalized")
        self._catch_up()
        self._buffer += text
        self._process([], True)
        return self._message()

    def grammar_start(self) -> tuple[int, bool] | None:
        """Where a grammar for the generation starts (see `grammar`), before any `feed`:
        the parser state the prompt left, and whether the generation starts the
        message's text (a `^` delimiter can match at its start); None when the prompt
        ends in text a delimiter may still claim.

        (The second is exact for templates with a `^` delimiter: they keep at least one
        committed character, so a prompt that wrote part of the message leaves the scan
        position past 0.)"""
        if self._pos != len(self._buffer):
            return None
        return self._state, self._offset == 0 and self._pos == 0

    def _message(self) -> Message:
        """Check the required fields, drop empty values and end the parser; the final
        message."""
        tables = self._program.tables
        missing = [name for name in tables.required if name not in self._output]
        if missing:
            raise ValueError(
                "Required response_template fields missing from parsed output: "
                f"{missing}"
            )
        defaults = tables.defaults
        # Typed Any: in a generated module the dict is that template's `Message`
        # TypedDict.
        message: Any = {
            k: v for k, v in self._output.items() if k in defaults or not is_empty(v)
        }
        self._output = message
        self._finalized = self._scan_always = True
        self._fast = False
        return cast("Message", message)

    # -- scanning

    def _consume_prefix(self, prefix: str) -> None:
        """Run the part of the prompt after the last start anchor through the parser."""
        truncated = self._program.after_anchor(prefix)
        if truncated is None:
            warnings.warn(
                "the start anchor does not occur in `prefix`, so all of the prompt is "
                "parsed as part of the "
                "message (pass the prompt the model continued, or prefix='' if there "
                "is none)",
                StartAnchorWarning,
                stacklevel=_caller_stacklevel(),
            )
            truncated = prefix
        if truncated:
            self._buffer = truncated
            self._offset = -len(truncated)
            self._process(self.initial_events, False)
            self._drop_committed()

    def _region_text(self, text: str) -> RegionChunk:
        """`text` as text of the open region: kept for the region's value; its chunk
        event.

        A backend's fast path does the same: a region is open, nothing is held back and
        no delimiter can start in `text`, so all of it is region text (what scanning
        would conclude). A generated module writes this body inline in its `feed`
        (`rtcompile.backends.codegen.lift.inlined_method`), a call per chunk saved, so
        it ends by returning a name."""
        body = self._body
        body.append(text)
        if len(body) >= BLOCK_CHUNKS:
            self._seal_body()
        chunk: RegionChunk = {
            "type": "region_chunk",
            "field": self._chunk_name,
            "text": text,
            "dirty": self._chunk_dirty,
        }
        return chunk

    def _process(self, events: list[Event], eos: bool) -> None:
        """Commit every delimiter that can be committed, and the text before it."""
        scanners = self._program.scanners
        actions = self._program.tables.actions
        # At the end of the stream the buffer stays as it is: scanners may remember
        # their searches.
        memo: list[Any] = [None] * self._program.memo_slots if eos else NO_MEMO
        self._lane = SCAN
        while True:
            which, start, end, groups, hold = scanners[self._state](
                self._buffer, self._pos, eos, memo
            )
            if which <= WAITING:
                if start > self._pos:
                    self._accumulate(events, self._buffer[self._pos : start])
                    self._pos = start
                self._start_waiting(WAITING - which, end)
                break
            if which >= 0:
                if start > self._pos:
                    self._accumulate(events, self._buffer[self._pos : start])
                self._pos = end
                opens, field = actions[self._state][which]
                if opens:
                    self._close_current(events, start)
                    self._open(events, field, groups, start)
                    continue
                had_content = self._opened
                # Close-delimiter captures join (and override) the open-delimiter
                # captures.
                self._captures.update(
                    {k: v for k, v in groups.items() if v is not None}
                )
                self._close_current(events, end)
                if not had_content and start == end:
                    break  # a zero-width close of an empty region would fire forever
                continue
            if eos:
                if self._pos < len(self._buffer):
                    self._accumulate(events, self._buffer[self._pos :])
                    self._pos = len(self._buffer)
                self._close_current(events, self._pos)
                break
            if hold > self._pos:
                self._accumulate(events, self._buffer[self._pos : hold])
                self._pos = hold
            break

    def _drop_committed(self) -> None:
        """Forget committed text no delimiter can look at any more (what keeps streaming
        linear)."""
        history = self._program.tables.history
        if history is None:
            return
        cut = self._pos - history
        if cut > 0:
            self._buffer = self._buffer[cut:]
            self._pos -= cut
            self._offset += cut

    # -- regions

    def _accumulate(self, events: list[Event], text: str) -> None:
        field = self._field
        if not text or field < 0:
            return  # no implicit field: text outside explicit regions is dropped
        if not self._opened:
            self._mark_opened(field)
            opened: RegionOpen = {"type": "region_open", "field": self._chunk_name}
            if self._with_spans:
                opened["start"] = self._offset + self._pos
            events.append(opened)
        # (the text is in the buffer already: the history takes it in, whether or not
        # the body is sealed now)
        self._synced = len(self._body) + 1
        events.append(self._region_text(text))

    def _open(
        self, events: list[Event], field: int, groups: dict[str, str | None], start: int
    ) -> None:
        """Open `field`'s region at its open delimiter (which begins at buffer index
        `start`)."""
        self._state = self._program.tables.state_of_field[field]
        self._field = field
        self._captures = {k: v for k, v in groups.items() if v is not None}
        self._body = []
        self._blocks = []
        self._synced = 0
        self._mark_opened(field)
        opened: RegionOpen = {"type": "region_open", "field": self._chunk_name}
        if self._with_captures:
            opened["captures"] = dict(self._captures)
        if self._with_spans:
            opened["start"] = self._offset + start
        events.append(opened)

    def _close_current(self, events: list[Event], end: int) -> None:
        """Close the current region, which ends at buffer index `end` (a region that
        never opened closes silently), and go back to state 0."""
        field = self._field
        if field >= 0 and self._opened:
            body = "".join(self._blocks) + "".join(self._body)
            if self._recover:
                self._close_recovering(events, field, body, end)
            else:
                value = self._program.handlers[field](body, self._captures)
                if self._tool_params:
                    value = coerce_tool_calls(value, self._tool_params)
                self._store(field, value)
                self._emit_close(events, field, value, end)
        self._state = 0
        self._field = self._program.tables.implicit
        self._captures = {}
        self._body = []
        self._blocks = []
        self._synced = 0
        self._opened = self._fast = False

    def _mark_opened(self, field: int) -> None:
        self._opened = True
        self._fast = not self._scan_always
        tables = self._program.tables
        self._chunk_name = tables.names[field]
        self._chunk_dirty = tables.dirty[field]

    def _emit_close(
        self, events: list[Event], field: int, value: Any, end: int
    ) -> None:
        closed: RegionClose = {
            "type": "region_close",
            "field": self._program.tables.names[field],
            "value": value,
        }
        if self._with_spans:
            closed["end"] = self._offset + end
        events.append(closed)

    def _close_recovering(
        self, events: list[Event], field: int, body: str, end: int
    ) -> None:
        """`recover`: a region that fails to parse (or to be stored) becomes a
        `region_malformed` event."""
        try:
            value = self._program.handlers[field](body, self._captures)
            if self._tool_params:
                value = coerce_tool_calls(value, self._tool_params)
            self._store(field, value)
        except Exception as error:  # noqa: BLE001
            # whatever the content parser raised is reported, not raised
            malformed: RegionMalformed = {
                "type": "region_malformed",
                "field": self._program.tables.names[field],
                "error": type(error).__name__,
                "message": str(error),
                "text": body,
            }
            if self._with_spans:
                malformed["end"] = self._offset + end
            self.malformed.append(malformed)
            events.append(malformed)
            return
        self._emit_close(events, field, value, end)

    def _store(self, field: int, value: Any) -> None:
        tables = self._program.tables
        name = tables.names[field]
        join = tables.joins[field]
        if join is not None:
            self._output[name] = join_value(name, self._output.get(name), value, join)
        elif tables.repeats[field]:
            self._output.setdefault(name, []).append(value)
        else:
            self._output[name] = value


def seal(chunks: list[str], blocks: list[str]) -> None:
    """Join `chunks` into one block at the end of `blocks`, and empty `chunks`. A block
    no longer than the new one is merged into it, so block lengths fall from first to
    last: n characters are a handful of strings (about log n), and each character is
    copied about log n times."""
    block = "".join(chunks)
    chunks.clear()
    while blocks and len(blocks[-1]) <= len(block):
        block = blocks.pop() + block
    blocks.append(block)


def _caller_stacklevel() -> int:
    """The `stacklevel` that points a warning at the user's line: past this module's
    frames and rtcompile's (the engine may be reached through `parse_response`, a
    subclass or rtcompile's API), and those of a parser module that imports this engine
    from a shared runtime (it plugs its `_PROGRAM` in)."""
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None:
        module = frame.f_globals.get("__name__", "")
        ours = module == __name__ or module.startswith("rtcompile.")
        if not ours and not isinstance(frame.f_globals.get("_PROGRAM"), ParserProgram):
            break
        frame, level = frame.f_back, level + 1
    return level


def parse_texts(
    new_parser: Callable[[str | None], StreamingParser],
    text: str | Sequence[str],
    prefix: str | Sequence[str] | None,
) -> Message | list[Message]:
    """`parse_response` for one complete output, or a batch: a parser per text, fed
    once, finalized.

    For a batch `prefix` is one prompt broadcast to every text, or one per text (as
    transformers takes it).
    """
    if isinstance(text, str):
        return _parse_one(new_parser(batch_prefixes(1, prefix)[0]), text)
    texts = list(text)
    prefixes = batch_prefixes(len(texts), prefix)
    return [_parse_one(new_parser(p), t) for t, p in zip(texts, prefixes, strict=True)]


def _parse_one(parser: StreamingParser, text: str) -> Message:
    return parser.parse_complete(text)
