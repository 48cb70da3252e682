"""What the streaming engine is given for one template: the plan's tables and the
backend's functions.

The engine (`rtcompile.runtime.engine`) holds the reference's region rules once;
everything it needs to know about one template arrives as one `ParserProgram`:

* `Tables`, plain data the plan derives from the template
  (`rtcompile.plan.ParserPlan.tables`): the interpreter passes the plan's record, a
  generated module writes the same record as a literal;
* the functions a backend supplies: a scanner per parser state, a handler per field, the
  start anchor's search, the conversion of Python-function tools and the patterns'
  first-use compilation.

Both records take keyword arguments only and have no defaults, so a field added here is
a type error wherever a backend does not supply it.
"""

import _thread
from collections.abc import Callable
from typing import Any, TypeAlias

from rtcompile.runtime.protocol import FunctionSchema
from rtcompile.runtime.types import FieldName

# A scanner's answer: (which, start, end, groups, hold). `which` indexes the state's
# watch list (-1: nothing committable), `start`/`end` span the match, `groups` are its
# named captures, and `hold` is where text that a pending delimiter may still claim
# begins (`len(buffer)` when nothing is pending). (The aliases are strings because
# generated modules import `typing` for the type checker only.)
ScanResult: TypeAlias = "tuple[int, int, int, dict[str, str | None], int]"
# A parser state's scanner: (buffer, scan position, whether the stream has ended, memo)
# -> its answer. At the end of the stream the buffer no longer changes and the scan
# position only moves on, so a scanner may remember in `memo` (the program's
# `memo_slots` entries, fresh for each end-of-stream pass) where a search found its next
# match, or that it found none, instead of searching again.
Scanner: TypeAlias = "Callable[[str, int, bool, list[Any]], ScanResult]"
# A field's handler: (the closed region's body, its captures) -> the field's value.
Handler: TypeAlias = "Callable[[str, dict[str, str]], Any]"


class Tables:
    """The template's tables, as the engine reads them (derived by the plan, never by a
    backend)."""

    # In the order a generated module writes them (by field, then by state, then the
    # rest): not sorted.
    __slots__ = (  # noqa: RUF023
        "names",
        "dirty",
        "joins",
        "repeats",
        "required",
        "defaults",
        "implicit",
        "state_of_field",
        "actions",
        "history",
        "one_scan",
        "awaits",
    )

    def __init__(
        self,
        *,
        names: tuple[FieldName, ...],
        dirty: tuple[bool, ...],
        joins: tuple[str | None, ...],
        repeats: tuple[bool, ...],
        required: tuple[str, ...],
        defaults: dict[str, Any],
        implicit: int,
        state_of_field: tuple[int, ...],
        actions: tuple[tuple[tuple[bool, int], ...], ...],
        history: int | None,
        one_scan: bool,
        awaits: tuple[tuple[tuple[str, ...], ...], ...],
    ) -> None:
        self.names = names  # by field index
        self.dirty = dirty  # by field: chunks of structured content are marked `dirty`
        self.joins = joins  # by field: the `join` separator, if any
        self.repeats = repeats  # by field
        self.required = required  # fields the final message must contain
        self.defaults = defaults  # the message before any region closed
        self.implicit = implicit  # the implicit field's index, or -1 (`NO_FIELD`)
        self.state_of_field = (
            state_of_field  # by field: the state inside it (0: implicit)
        )
        self.actions = actions  # by state, by watch: (opens a region?, field)
        # committed characters a delimiter can still inspect; None: unbounded
        self.history = history
        # a complete output may be parsed in one end-of-stream scan (`parse_complete`)
        self.one_scan = one_scan
        # by state, by wait (`WAITING - which`): strings any of which ends that wait
        self.awaits = awaits


class ParserProgram:
    """One template, ready for the engine: its tables and the functions its backend
    plugs in.

    `compile_patterns` runs once, before the first parser starts: generated modules
    compile their patterns on first use rather than at import (some translated classes
    are slow to compile).
    """

    # The constructor's order: not sorted.
    __slots__ = (  # noqa: RUF023
        "tables",
        "scanners",
        "handlers",
        "after_anchor",
        "function_schema",
        "memo_slots",
        "_compile_patterns",
        "_lock",
    )

    def __init__(
        self,
        *,
        tables: Tables,
        scanners: tuple[Scanner, ...],
        handlers: tuple[Handler, ...],
        after_anchor: Callable[[str], str | None],
        function_schema: FunctionSchema,
        memo_slots: int,
        compile_patterns: Callable[[], None] | None,
    ) -> None:
        self.tables = tables
        self.scanners = scanners  # by state
        self.handlers = handlers  # by field
        # the prompt after the last match of the start anchor; None if it never matches
        self.after_anchor = after_anchor
        self.function_schema = function_schema  # Python-function tools to JSON schemas
        self.memo_slots = (
            memo_slots  # what the scanners remember at the end of the stream
        )
        self._compile_patterns = compile_patterns
        # First use may come from many threads at once: one compiles, the others wait
        # for it. (`_thread` rather than `threading`, which costs a module import for
        # one lock.)
        self._lock = _thread.allocate_lock()

    def prepare(self) -> None:
        """Compile the patterns, once: a no-op after the first call."""
        if self._compile_patterns is None:
            return
        with self._lock:
            if self._compile_patterns is not None:
                self._compile_patterns()
                self._compile_patterns = None


def after_last_anchor(anchor: Any, prefix: str) -> str | None:
    """The prompt after the last (non-overlapping) match of the start anchor; None if it
    never matches.

    `anchor` is a compiled pattern (`re` or `regex`)."""
    last_end = None
    for m in anchor.finditer(prefix):
        last_end = m.end()
    return None if last_end is None else prefix[last_end:]
