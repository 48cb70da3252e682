"""The generated module's own `feed`: the common chunk handled inline, everything else by the engine.

Most chunks of a long region contain no character that can start a watched delimiter, and arrive
when nothing is held back; such a chunk is region text, exactly as scanning would conclude. A
generated module knows its states, so it writes that check as one expression (`"<" in text`) and
the fast path inline, ending in the body of the engine's `_region_text` written out (a call per chunk
saved: `lift.inlined_method`). Anything else goes to the engine's `feed` (`StreamingParser.feed`),
which scans.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from rtcompile.backends.codegen.layout import INDENT, LINE_LENGTH, width
from rtcompile.backends.codegen.lift import inlined_method
from rtcompile.backends.codegen.parts import ModuleParts
from rtcompile.backends.codegen.scanners import leads_begin, state_hint, watch_hint
from rtcompile.backends.codegen.writer import CodeWriter, literal
from rtcompile.errors import format_path
from rtcompile.plan import ParserPlan, ParserState, delimiter_history
from rtcompile.regex.charsets import Ranges, characters, complement, normalise, size
from rtcompile.regex.first_chars import match_starts
from rtcompile.regex.second_chars import second_chars
from rtcompile.regex.stdlib import emit_ranges

MAX_IN_TESTS = 3  # more start characters than this are tested with one character-class search
MAX_LISTED = 16  # characters a second look lists one by one; more are written as ranges
MAX_STRIPPED = 64  # a held-back run of at most this many characters is measured with `str.rstrip`


def engine_class(plan: ParserPlan) -> str:
    """The runtime class a module's ResponseParser derives from: the engine, or the engine that can
    wait for a string (`rtcompile.runtime.waiting`) where a state awaits one."""
    return "WaitingParser" if any(state.awaits for state in plan.states) else "StreamingParser"


def specialised_feed(parts: ModuleParts, plan: ParserPlan) -> str | None:
    """The `feed` method for the module's ResponseParser (and, where a state has a held-back run or
    held-back starts, the `_settle` that gives held text a lane), or None to keep the engine's generic
    one."""
    runs = [state for state in plan.states if state.pending_run is not None]
    held = [state for state in plan.states if state.held_starts]
    partials = _partial_watches(parts, plan)
    if (
        not runs
        and not held
        and not partials
        and (plan.history is None or all(s.delimiter_starts is None for s in plan.states))
    ):
        return None  # no state has a fast path
    # the states whose test the feed reads: the regions' lanes, the held-back runs', and outside
    region_lanes = _region_lanes(plan, runs)
    tested = [s for s in plan.states if s.index in region_lanes or (s in runs and not _held_at_begins(s, bool(held)))]
    if _drops_outside_text(plan) and plan.states[0] not in tested:
        tested.insert(0, plan.states[0])
    second_looks = _second_looks(parts, plan, tested)
    busy = _busy_tests(parts, plan, tested, second_looks)
    test_of = {index: lines for lines, states in busy.items() for index in states}
    lanes = [index for index in _region_lanes(plan, runs) if test_of[index] != ("True",)]
    if not runs and not lanes and not held and not partials and not _drops_outside_text(plan):
        return None  # every state's chunks are scanned (a lookbehind too long to test on a line, say)
    scan = f"return {engine_class(plan)}.feed(self, text)"
    held_table = _held_table(parts, plan) if held else None
    # A chunk that ends in the start of a delimiter, with none before it, is region text up to that start.
    tail = None if held_table is None else _HeldTail(parts, plan, held_table, second_looks, bool(partials))
    out = CodeWriter(depth=1)
    declared: set[str] = set()  # names the feed's inline region text declared (see `_region_text`)
    if lanes and _history_lags(plan, runs, lanes):
        out.comment("The region lanes leave the kept history to catch up when the engine looks (`_catch_up`).")
        out.line("_history_lags = True")
        out.line()
    with out.block("def feed(self, text: str) -> list[Event]:"):
        out.line('"""Add model text; returns the events it completes."""')
        out.comment("Which fast path this chunk may take, if any, the engine said after its last step (`_settle`).")
        out.line("lane = self._lane")
        if engine_class(plan) == "WaitingParser":
            parts.need("waiting", "AWAITING")
            with out.block("if lane == AWAITING:"):
                out.comment("The state awaits strings: new text is only looked at for them (see `WaitingParser`).")
                out.line("wait = self._wait")
                with out.block("if wait is not None:  # (always, while the lane is AWAITING)"):
                    out.line("return self._arrive(wait, text) if wait.arrived(text) else []")
        for state in runs:
            _run_lane(out, parts, plan, state, test_of.get(state.index), scan, declared, tail)
        if lanes:
            _region_lanes_branch(out, parts, plan, runs, lanes, test_of, scan, declared, tail)
        if _drops_outside_text(plan):
            parts.need("engine", "OUTSIDE")
            with out.block("if lane == OUTSIDE:"):
                out.comment("No region is open and nothing is held back: text no delimiter can start in is dropped.")
                _scan_unless_quiet(out, test_of[0], [], scan)
                out.line("return []")
        if held_table is not None:
            _held_lane(out, parts, plan, held_table, bool(partials))
        if partials:
            _partial_lane(out, parts, plan)
        out.line(scan)
    if runs or held_table is not None or partials:
        parts.need("engine", "SCAN")
        out.line()
        _settle(out, parts, plan, runs, held_table, sorted(partials))
    if partials:
        out.line()
        _holds_partial(out, partials)
    return out.code()


def _held_table(parts: ModuleParts, plan: ParserPlan) -> str:
    """The name of the table of held-back starts (`ParserState.held_starts`), by state."""
    parts.need("engine", "prefixes_of")
    by_state = [f"prefixes_of({', '.join(map(literal, state.held_starts))})" for state in plan.states]
    one = "," if len(by_state) == 1 else ""  # (a trailing comma after more would keep a line each)
    return parts.constant("held starts", f"({', '.join(by_state)}{one})")


def _held_lane(out: CodeWriter, parts: ModuleParts, plan: ParserPlan, table: str, partial: bool) -> None:
    """The lane of held-back text that starts a delimiter (see `rtcompile.held_starts`): a chunk that
    leaves it the start of one is held back with it, as scanning would. One that does not, in an open
    region, makes what was held back and the chunk one chunk of the region's lane (which holds a partial
    match back through `_hold_start`); with no region open, where the module tests for partial matches
    (`partial`: see `_partial_lane`), one that leaves it a partial match is held back with it, and the
    lane is then `PARTIAL`."""
    parts.need("engine", "HELD")
    # With nothing kept (history 0) the buffer is exactly what is held back.
    held = "self._buffer" if plan.history == 0 else "self._buffer[self._pos :]"
    with out.block("if lane == HELD:"):
        out.comment(
            "Held back: the start of a delimiter. Text that leaves it the start of one is held back"
            f" with it, as scanning would hold it (`{table}`, by state)."
        )
        out.line(f"held = {held} + text")
        with out.block(f"if held in {table}[self._state]:"):
            _hold(out, plan)
        _refeed_in_region(out, plan)
        if partial:
            out.comment(
                "No region is open. No longer the start of a delimiter but a partial match of one"
                " (`<tool>get_w`), or a match that more text may lengthen: held back as scanning would hold it."
            )
            with out.block("if self._holds_partial(held):"):
                out.line("self._lane = PARTIAL")
                _hold(out, plan)


def _hold(out: CodeWriter, plan: ParserPlan) -> None:
    """`held` (what was held back, and `text`) stays held back, as scanning would hold it."""
    # With nothing kept (history 0) the buffer is exactly what is held back.
    out.line("self._buffer = held" if plan.history == 0 else "self._buffer += text")
    out.line("return []")


def _refeed_in_region(out: CodeWriter, plan: ParserPlan) -> None:
    """Held-back text (`held`, with the chunk) that the held lane cannot keep holding: where a region is
    open, it is one chunk of the region, which the region's lane takes or scans, as a scan would search
    it as one (its test and second look usually clear a held `<` that a tag name follows)."""
    with out.block("if self._fast:"):
        out.comment(
            "A region is open: what was held back and `text` are one chunk of it, which its lane"
            " takes or scans (a scan would search them as one)."
        )
        _drop_held(out, plan)
        out.line("self._lane = self._state")
        out.line("return self.feed(held)")


def _drop_held(out: CodeWriter, plan: ParserPlan) -> None:
    """Take what is held back out of the buffer (the lane has it in hand), leaving the committed
    characters a delimiter may look back at."""
    # With nothing kept (history 0) the buffer is exactly what is held back.
    out.line('self._buffer = ""' if plan.history == 0 else "self._buffer = self._buffer[: self._pos]")


@dataclass(frozen=True)
class _PartialTest:
    """What a state's part of the module's `_holds_partial` reads (see `_partial_watches`)."""

    # the patterns of the watches it tests: complete and partial, or the `regex` one and None, and the
    # test that a match may begin where the held text does, where the watch's leading characters say
    watches: tuple[tuple[str, str | None, str | None], ...]
    # the literals after which a watch of the state awaits strings (`Strategy.awaits_after`): held text
    # in which one occurs may begin a wait rather than be held back, and is scanned
    absent: tuple[str, ...]


def _partial_watches(parts: ModuleParts, plan: ParserPlan) -> dict[int, _PartialTest]:
    """By state, where no watch looks before the scan position, and a watch that awaits strings awaits
    them after literals: the patterns of the other watches whose scanners search them
    (`ModuleParts.streamed`). Where one of them partially matches held-back text from its start and
    matches nowhere in it, or its first match is all of the text (which more text may lengthen:
    `regex_can_grow`), a scan holds all of it back: that match begins where the text does, and a
    complete match of another delimiter, which can begin no earlier, waits for it; so does a wait,
    which begins at one of its literals, unless one of them is in the text (then it is scanned)."""
    found: dict[int, _PartialTest] = {}
    for state in plan.states:
        if any(delimiter_history(w.delimiter) != 0 for w in state.watches):
            continue
        waiting = [state.watches[rank] for rank in state.awaits]
        if not all(watch.awaits_after for watch in waiting):
            continue  # one waits at the scan position, or past a lazy run: where, the text alone does not say
        usable = []
        for w in state.watches:
            names = None if w.delimiter.is_literal or w.awaits else parts.streamed.get(w.delimiter.pattern)
            if names is None or names[0] in parts.match_only:
                continue
            full, partial = names
            leads = None if w.strategy is None else w.strategy.leads
            begins = None if leads is None else leads_begin(parts, leads, watch_hint(w, plan.template), "held")
            usable.append((full, partial, begins))
        if usable:
            found[state.index] = _PartialTest(
                tuple(usable), tuple(sorted({lit for w in waiting for lit in w.awaits_after}))
            )
    return found


def _partial_lane(out: CodeWriter, parts: ModuleParts, plan: ParserPlan) -> None:
    """The lane of held-back text that may be a partial match of a delimiter (`_partial_watches`): a chunk
    that leaves it one, with no complete match in it, or a match that more text may lengthen, is held back
    with it, as scanning would; else, in an open region, the held text and the chunk are one chunk of the
    region's lane (`_refeed_in_region`: a held `<` that `parameter=` follows, say, which the lane's test
    clears); else the chunk is scanned."""
    parts.need("engine", "PARTIAL")
    with out.block("if lane == PARTIAL:"):
        out.comment(
            "Held back: perhaps a partial match of a delimiter. A chunk that leaves it one, from its start,"
            " and completes none, or leaves it a match more text may lengthen, is held back with it, as"
            " scanning would hold it."
        )
        # With nothing kept (history 0) the buffer is exactly what is held back.
        out.line("held = self._buffer + text" if plan.history == 0 else "held = self._buffer[self._pos :] + text")
        with out.block("if self._holds_partial(held):"):
            _hold(out, plan)
        _refeed_in_region(out, plan)


def _holds_partial(out: CodeWriter, partials: dict[int, _PartialTest]) -> None:
    """The module's `_holds_partial` (the `PARTIAL` lane asks it, `StreamingParser._hold_start` is given
    it): per state, whether one of its watches (`_partial_watches`) holds all of the held-back text
    back: it partially matches the text from its start and matches nowhere in it, or its first match
    is all of it, which more text may still lengthen (`regex_can_grow`: `call:get_w` of a name run)."""
    with out.block("def _holds_partial(self, held: str) -> bool:"):
        _docstring(
            out,
            "Whether scanning `held` holds all of it back: a partial match, from its start, of a"
            " delimiter of the state, with no complete match in it, or a match that is all of it.",
        )

        def any_holds(test: _PartialTest) -> None:
            if test.absent:
                out.comment("a wait may begin at one of these: scanned")
                with out.block(f"if {' or '.join(f'{literal(lit)} in held' for lit in test.absent)}:"):
                    out.line("return False")
            for number, (full, partial, begins) in enumerate(test.watches):
                last = number == len(test.watches) - 1
                if partial is None:  # `regex`, whose partial search prefers a complete match anywhere
                    search = f"{full}.search(held, partial=True)"
                    if begins is None:
                        out.line(f"m = {search}")
                    else:
                        # (a `regex` search costs microseconds; none starts before its leading characters)
                        out.line(f"m = {search} if {begins} else None")
                    holds = "m is not None and m.start() == 0 and (m.partial or m.end() == len(held))"
                    if last:
                        out.line(f"return bool({holds})")
                        continue
                    with out.block(f"if {holds}:"):
                        out.line("return True")
                    continue
                out.line(f"m = {full}.search(held)")
                with out.block("if m is None:"):
                    if last:
                        out.line(f"return {partial}.match(held) is not None")
                    else:
                        with out.block(f"if {partial}.match(held) is not None:"):
                            out.line("return True")
                # (a match elsewhere, or one that ends before the text does, is taken or committed)
                holds = "m.start() == 0 and m.end() == len(held)"
                if last:
                    out.line(f"return {holds}")
                else:
                    with out.block(f"elif {holds}:"):
                        out.line("return True")

        # (asked in any state: a region's lane holds back a start through `_hold_start`)
        if len(partials) == 1:
            ((index, test),) = partials.items()
            with out.block(f"if self._state != {index}:"):
                out.line("return False")
            any_holds(test)
            return
        out.line("state = self._state")
        for index, test in partials.items():
            with out.block(f"if state == {index}:"):
                any_holds(test)
        out.line("return False")


class _HeldTail:
    """The code for a region's chunk whose test says a delimiter may start in it: where it ends in a
    held-back start (`table`) with no delimiter starting before it, that start is held back and the text
    before it is region text, as scanning would conclude (`StreamingParser._hold_start`); else it is
    scanned."""

    def __init__(
        self, parts: ModuleParts, plan: ParserPlan, table: str, second_looks: dict[int, str], partial: bool
    ) -> None:
        self.parts, self.plan, self.table, self.second_looks = parts, plan, table, second_looks
        # what `_hold_start` is given: the table of held-back starts, and where the module has one, its
        # test of held-back partial matches (`_holds_partial`)
        self.held = f"{table}[lane], self._holds_partial" if partial else f"{table}[lane]"

    def write(self, out: CodeWriter, state: ParserState) -> None:
        """The tail's code for the lanes that share `state`'s test."""
        self.parts.need("engine", "HELD")
        if state.begins_with is not None:
            self._unless_no_delimiter_begins(out, state)
            return
        # a `$` may match before a newline that ends the text, which is held back whole
        newline = state.final_newline and "\n" in state.held_starts
        out.comment("held back from `cut` on, if that is a start held whole")
        if state.delimiter_starts:
            out.line(f"cut = {self._first_start(state)}")
            if newline:
                with out.block("if cut < 0:"):
                    out.comment("no character starts a delimiter: the chunk ends in the newline a `$` matches before")
                    out.line("cut = len(text) - 1")
        elif newline:
            out.comment("(the newline a `$` matches before, which ends the chunk: no delimiter starts elsewhere)")
            out.line("cut = len(text) - 1")
        else:
            out.line("cut = -1  # (no start to hold back: scanned)")
        out.line(f"return self._hold_start(text, cut, {self.held})")

    def _unless_no_delimiter_begins(self, out: CodeWriter, state: ParserState) -> None:
        """Where the state's matches all begin with known literals (`ParserState.begins_with`): the chunk
        is region text unless one of them begins in it or the start of one ends it; from the first such
        place on it is held back, if that is a start held whole, else scanned."""
        assert state.begins_with is not None
        hint = f"{state_hint(state, self.plan.template)} begins"
        begins = self.parts.pattern(hint, _literal_or_its_start(state.begins_with), flags="0")
        self.parts.need("scanning", "first_of")
        out.comment("where a delimiter begins, or the start of one ends the text (-1: nowhere, region text)")
        out.line(f"cut = first_of({begins}, text, 0)")
        with out.block("if cut >= 0:"):
            out.comment("held back from there, if that is a start held whole")
            out.line(f"return self._hold_start(text, cut, {self.held})")

    def _first_start(self, state: ParserState) -> str:
        """Where in `text` the first character that may start a delimiter of the state is, -1 if none:
        one its second look allows, if it has one."""
        second = self.second_looks.get(state.index)
        starts = state.delimiter_starts
        assert starts
        if second is None and len(starts) == 1:
            return f"text.find({literal(chr(next(iter(starts))))})"
        if second is None:
            hint = f"{state_hint(state, self.plan.template)} first starts"
            second = self.parts.pattern(hint, emit_ranges(normalise([(c, c) for c in starts])), flags="0")
        self.parts.need("scanning", "first_of")
        return f"first_of({second}, text, 0)"


def _region_lanes_branch(
    out: CodeWriter,
    parts: ModuleParts,
    plan: ParserPlan,
    runs: list[ParserState],
    lanes: list[int],
    test_of: dict[int, BusyTest],
    scan: str,
    declared: set[str],
    tail: _HeldTail | None,
) -> None:
    """The lanes of the states in which a region is open: a chunk their state's test says no
    delimiter can start in is region text; one it says a delimiter may start in is scanned, unless no
    delimiter begins in it after all or it ends in a held-back start (`tail`), or the state's watch
    also matches at the text's end (`_unless_other_branches`). States with the same test (and the same
    code for a busy chunk) share a branch of the test."""
    # (states that share a test share the code for a busy chunk too: what decides it is in the key)
    groups: dict[tuple[BusyTest, str | None, bool, tuple[str, ...] | None], list[int]] = {}
    for index in lanes:
        state = plan.states[index]
        other_branches = state.other_branches if plan.history == 0 else None
        key = (test_of[index], other_branches, state.final_newline, state.begins_with)
        groups.setdefault(key, []).append(index)

    def on_busy(other_branches: str | None, states: list[int]) -> Callable[[CodeWriter], None] | None:
        first = plan.states[states[0]]
        if other_branches is not None:
            table = None if tail is None else tail.table
            return lambda out: _unless_other_branches(out, parts, plan, first, scan, table)
        if tail is not None and any(plan.states[index].held_starts for index in states):
            # (a state of the branch without held-back starts finds none in the table, and scans)
            return lambda out: tail.write(out, first)
        return None

    lags = _history_lags(plan, runs, lanes)
    with out.block(f"if {_lane_test(plan, runs, lanes)}:"):
        if len(groups) == 1:
            (((lines, other_branches, _, _), states),) = groups.items()
            _scan_unless_quiet(out, lines, ["not text"], scan, on_busy(other_branches, states))
        else:
            with out.block("if not text:"):
                out.line(scan)
            # A state whose test is "no delimiter can start after the text's start" needs no branch;
            # without one, the last branch is the `else`.
            tested = [(key, states) for key, states in groups.items() if key[0] != ("False",)]
            for number, ((lines, other_branches, _, _), states) in enumerate(tested):
                busy = on_busy(other_branches, states)
                # a lane whose test reads the kept history keeps it itself, where the others leave it lagging
                keeps = lags and any(plan.states[index].after for index in states)
                if number == len(tested) - 1 and len(tested) == len(groups):
                    if len(lines) == 1 and busy is None and not keeps:
                        # the other lanes' test (one too long for a line splits at its brackets)
                        with out.block(f"elif {lines[0]}:"):
                            out.line(scan)
                        continue
                    header = "else:"
                else:
                    header = f"{'if' if number == 0 else 'elif'} {_lane_test(plan, runs, states)}:"
                with out.block(header):
                    _scan_unless_quiet(out, lines, [], scan, busy)
                    if keeps:
                        _keep_history(out, plan, lagging=True)
        _region_text(out, plan, declared, catch_up=lags)


def _unless_other_branches(
    out: CodeWriter, parts: ModuleParts, plan: ParserPlan, state: ParserState, scan: str, table: str | None
) -> None:
    """For a chunk a delimiter may start in, in a state whose watch also matches at the text's end
    (`ParserState.other_branches`): scanning holds back no partial match, so the chunk is region text
    unless another branch matches in it; but for a newline that ends it where the end branch is a `$`,
    which is held back (`table`, the held-back starts, lists it: see `rtcompile.held_starts`)."""
    assert state.other_branches is not None
    hint = f"{watch_hint(state.watches[0], plan.template)} before end"
    pattern = parts.pattern_once(hint, state.other_branches)
    out.comment("the close also matches where the text ends: nothing is held back (`regex` takes that match)")
    with out.block(f"if {pattern}.search(text) is not None:"):
        out.line(scan)
    if state.final_newline:
        with out.block('if text.endswith("\\n"):'):
            if table is not None and "\n" in state.held_starts:
                out.comment("but for the newline a `$` matches before, which the next character undoes")
                out.line(f"return self._hold_start(text, len(text) - 1, {table}[lane])")
            else:
                out.line(scan)


_Trie: TypeAlias = "dict[str, _Trie]"


def _literal_or_its_start(literals: tuple[str, ...]) -> str:
    """A stdlib pattern matching one of `literals`, or a non-empty prefix of one that ends the text: a
    trie, `<(?:/(?:x(?:>|\\Z)|\\Z)|\\Z)` for `</x>`."""
    trie: _Trie = {}
    for lit in literals:
        node = trie
        for char in lit:
            node = node.setdefault(char, {})
        node[""] = {}  # a literal ends here

    def branches(node: _Trie) -> list[str]:
        out = []
        for char, child in sorted(node.items()):
            if "" in child:
                out.append(re.escape(char))  # a literal is complete here: the longer ones need not be
            else:
                out.append(f"{re.escape(char)}(?:{'|'.join(branches(child))}|\\Z)")
        return out

    top = branches(trie)
    return top[0] if len(top) == 1 else f"(?:{'|'.join(top)})"


def _region_lanes(plan: ParserPlan, runs: list[ParserState]) -> list[int]:
    """The states whose lane the feed takes up by a state's test (those with a held-back run have a branch
    of their own): every state in which a region can be open (state 0 only with an implicit field)."""
    return [s.index for s in plan.states if s not in runs and (s.index > 0 or plan.implicit >= 0)]


def _lane_test(plan: ParserPlan, runs: list[ParserState], lanes: list[int]) -> str:
    """The feed's test that the chunk's lane is one of `lanes`."""
    if not runs and lanes == _region_lanes(plan, runs):
        return "lane >= 0"  # every region's lane: a state's index
    return f"lane == {lanes[0]}" if len(lanes) == 1 else f"lane in {literal(tuple(lanes))}"


def _scan_unless_quiet(
    out: CodeWriter,
    lines: tuple[str, ...],
    guards: list[str],
    scan: str,
    on_busy: Callable[[CodeWriter], None] | None = None,
) -> None:
    """Scan the chunk if one of `guards` or the state's busy test (`lines`, see `BusyTest`) holds (for
    the busy test, `on_busy` writes what happens instead, if given)."""
    if on_busy is not None and lines != ("False",):
        if guards:
            with out.block(f"if {' or '.join(guards)}:"):
                out.line(scan)
        with out.block(f"if {_busy_test(out, lines)}:"):
            on_busy(out)
        return
    test = _busy_test(out, lines)
    if test == "False":
        if guards:
            with out.block(f"if {' or '.join(guards)}:"):
                out.line(scan)
        return
    # One test if it fits on a line; else the delimiter test gets an `if` of its own.
    joined = " or ".join([*guards, f"({test})" if guards and " and " in test else test])
    tests = [joined] if width(f"{INDENT * out.depth}if {joined}:") <= LINE_LENGTH else [*guards, test]
    for guard in tests:
        with out.block(f"if {guard}:"):
            out.line(scan)


def _busy_test(out: CodeWriter, lines: tuple[str, ...]) -> str:
    """The busy test's expression: itself, or `busy` after the lines that compute it."""
    if len(lines) == 1:
        return lines[0]
    out.line(f"busy = {lines[0]}")
    for line in lines[1:]:
        out.line(f"busy = {line}")
    return "busy"


def _region_text(
    out: CodeWriter, plan: ParserPlan, declared: set[str], *, catch_up: bool = False, kept: bool = False
) -> None:
    """`text` as region text: the committed characters a delimiter may look back at kept, the rest
    given to the region (the engine's `_region_text`). `declared` holds the names the feed declared
    already (its annotated assignments are written once). With `catch_up`, the kept history is left
    to take the text in when the engine next looks at the buffer (`StreamingParser._catch_up`): for
    lanes that do not read it themselves; with `kept`, the lane has kept it already."""
    if catch_up and plan.history:
        out.comment("(what a delimiter may look back at is taken from the region's text when needed)")
    elif not kept:
        _keep_history(out, plan)
    # the engine's `_region_text`, written out here: a call per chunk saved
    # (written out a second time in the feed, its annotation is left out: see `inlined_method`)
    statements, chunk = inlined_method("engine", "StreamingParser", "_region_text", annotated=not declared)
    declared.add(chunk)
    for statement in statements:
        out.code_lines(statement)
    out.line(f"return [{chunk}]")


def _history_lags(plan: ParserPlan, runs: list[ParserState], lanes: list[int]) -> bool:
    """Whether the region lanes leave the committed characters a delimiter may look back at to the
    engine's `_catch_up` rather than keep them chunk by chunk: where some are kept (keeping them costs
    a slice and two stores per chunk, a copy where more than one is kept, a sixth of a plain chunk's
    time where one is), no held-back run reads them, and some lane does not read them (a lane whose
    test looks for a lookbehind's string keeps them itself)."""
    some = plan.history is not None and plan.history > 0
    return some and not runs and any(not plan.states[index].after for index in lanes)


def _keep_history(out: CodeWriter, plan: ParserPlan, *, lagging: bool = False) -> None:
    """Keep the committed characters a delimiter may look back at, with `text` committed; where the
    module's other lanes leave them `lagging`, say that the body's chunks so far are taken in (the
    engine's `_synced`: the chunk the lane adds next is in the buffer already)."""
    if plan.history is None:  # a delimiter may look back at anything: nothing is dropped
        out.line("self._buffer += text")
        out.line("self._pos = len(self._buffer)")
    elif plan.history == 0:
        pass  # literal delimiters never look back: the buffer stays empty
    elif plan.history == 1:
        out.line("self._buffer = text[-1:]  # the committed character a delimiter may look back at")
        out.line("self._pos = 1")
    else:
        out.line(f"self._buffer = (self._buffer + text)[-{plan.history}:]  # what a delimiter may look back at")
        out.line("self._pos = len(self._buffer)")
    if lagging:
        out.line("self._synced = len(self._body) + 1")


def _drops_outside_text(plan: ParserPlan) -> bool:
    """Whether text outside any region is dropped (no implicit field) and the state outside has a
    fast path: a chunk no delimiter can start in, with nothing held back, then changes nothing
    (the regions' fast path is off there, since no region is open)."""
    return plan.implicit < 0 and plan.states[0].delimiter_starts is not None and plan.history == 0


def _run_lane(
    out: CodeWriter,
    parts: ModuleParts,
    plan: ParserPlan,
    state: ParserState,
    busy: BusyTest | None,
    scan: str,
    declared: set[str],
    tail: _HeldTail | None,
) -> None:
    """The lane of a state with a held-back run (see `rtcompile.plan.pending_run`): text without a
    character that could begin anything but the run, after nothing held back or a held-back run, is
    what scanning would find no delimiter in: it commits up to the last character outside the run and
    holds back the rest, which happens here without the scan (text that ends outside the run, with
    nothing held, is plain region text). Other text is held back from the run before the first place a
    match may begin, where that is known (`_held_at_begins`); else it is region text if the state's test
    (`busy`) says no delimiter can start in it and nothing is held, and scanned if not.

    Held-back text has the lane only when it is such a run (the module's `_settle`)."""
    run = state.pending_run
    assert run is not None
    hint = state_hint(state, plan.template)
    quiet = _holds(parts, run.busy, f"{hint} run busy", negated=True)
    stripped = parts.constant(f"{hint} run", literal(characters(run.run))) if size(run.run) <= MAX_STRIPPED else None
    begins = None
    if run.begins is not None:
        # a second look at text with a busy character: none of the literals a match begins with
        begins = parts.pattern(f"{hint} begins", _literal_or_its_start(run.begins), flags="0")
        quiet = f"{f'({quiet})' if ' and ' in quiet else quiet} or {begins}.search(text) is None"
    # With nothing kept (history 0) the buffer is exactly what is held back.
    held = "self._buffer" if plan.history == 0 else "self._pos != len(self._buffer)"
    with out.block(f"if lane == {state.index}:"):
        out.comment(f"held back, if anything: a run that may still begin {format_path(run.owner.where)}")
        out.line(f"held = {held}")
        with out.block(f"if {quiet}:"):
            _before_trailing_run(out, parts, run.run, hint, stripped)
            with out.block("if not last:  # the run goes on"):
                out.line("self._buffer += text")
                out.line("return []")
            with out.block("if held or last < len(text):"):
                _end_run(out, plan)
            if plan.history != 0:  # (with none kept, the buffer is what is held back)
                with out.block("else:"):
                    _keep_history(out, plan)
        with out.block("else:"):
            if _held_at_begins(state, tail is not None):
                assert begins is not None and stripped is not None and tail is not None
                _hold_before_begins(out, parts, plan, begins, stripped, tail.held)
            elif busy is None or busy == ("True",):
                out.line(scan)
            else:
                # (where `begins` is known, one of them begins in `text` or ends it cut short: the state's
                # test, which the module's other lanes share, then says so too, and a scan decides)
                _scan_unless_quiet(out, busy, ["held"], scan)
                _keep_history(out, plan)
        # (every way here has kept what a delimiter may look back at)
        _region_text(out, plan, declared, kept=True)


def _held_at_begins(state: ParserState, held_starts: bool) -> bool:
    """Whether the lane of `state`'s held-back run takes a chunk in which a match may begin
    (`_hold_before_begins`) rather than give it to the state's test: where every match begins with a
    known literal (`PendingRun.begins`), the run is stripped with `str.rstrip`, and the module holds
    starts back (`_hold_start` is given their table)."""
    run = state.pending_run
    return run is not None and run.begins is not None and size(run.run) <= MAX_STRIPPED and held_starts


def _hold_before_begins(
    out: CodeWriter, parts: ModuleParts, plan: ParserPlan, begins: str, run: str, held: str
) -> None:
    """A chunk of a held-back run's lane in which a literal a match begins with begins, or the start of one
    ends it (`begins`, the pattern of `PendingRun.begins`). A match begins at such a literal, or at the
    owner's run right before it, and at no other place: nothing can begin before the run of `run`
    characters that ends where the first of them begins. From there on the text is held back if that is
    a start held whole or a partial match, as scanning would hold it (`_hold_start`), else scanned. A
    held run is part of the run before the first literal, or ends before it: it becomes part of the chunk.
    (`held`: what `_hold_start` is given, `_HeldTail.held`.)"""
    parts.need("scanning", "first_of")
    with out.block("if held:  # a held run: one text with the chunk"):
        out.line("text = held + text" if plan.history == 0 else "text = self._buffer[self._pos :] + text")
        _drop_held(out, plan)
    out.comment("held back from the run before the first literal on, if scanning would hold that back")
    out.line(f"begin = first_of({begins}, text, 0)")
    out.line(f"cut = len(text[:begin].rstrip({run}))")
    out.line(f"return self._hold_start(text, cut, {held})")


def _end_run(out: CodeWriter, plan: ParserPlan) -> None:
    """A held-back run ends in `text` before its index `last` (at least 1), or `text` ends in one: what
    was held and `text` up to `last` become the chunk's region text (`text`), the rest is held back,
    and the committed characters a delimiter may look back at are kept before it (as the engine's
    `_commit_run` does, a call and a scan's bookkeeping saved)."""
    history = plan.history
    if history is None:  # the whole stream is kept: the engine's bookkeeping is no dearer
        out.line("return self._commit_run(text, last)")
        return
    out.comment("the run ends: what was held and `text` up to its last run are region text")
    if history == 0:
        out.line("self._buffer = text[last:]")
        out.line("text = held + text[:last]")
        return
    out.line("run = self._buffer[self._pos :]")
    if history == 1:
        out.line("self._buffer = text[last - 1 :]  # the committed character a delimiter may look back at")
        out.line("self._pos = 1")
    else:
        out.line(f"kept = (self._buffer + text[:last])[-{history}:]  # what a delimiter may look back at")
        out.line("self._buffer = kept + text[last:]")
        out.line("self._pos = len(kept)")
    out.line("text = run + text[:last]")


def _settle(
    out: CodeWriter,
    parts: ModuleParts,
    plan: ParserPlan,
    runs: list[ParserState],
    held_table: str | None,
    partials: list[int],
) -> None:
    """`_settle`: the engine's lanes; a held-back run keeps its state's lane, held-back text that starts a
    delimiter (`held_table`, the table of its starts) gets `HELD`, and other held-back text in the states
    `partials` gets `PARTIAL` (the engine gives held text none)."""
    engine = engine_class(plan)
    lanes = [f"The engine's lanes (`{engine}._settle`)"]
    if runs:
        lanes.append("a held-back run's")
    if held_table is not None:
        lanes.append("`HELD` where the text held back starts a delimiter")
    if partials:
        lanes.append("`PARTIAL` where it may be a partial match of one")
    doc = ", ".join(lanes[:-1]) + f" and {lanes[-1]}." if len(lanes) > 1 else f"{lanes[0]}."
    with out.block("def _settle(self) -> None:"):
        _docstring(out, doc)
        out.line(f"{engine}._settle(self)")
        if runs:
            with out.block("if self._lane == SCAN and self._fast:"):
                for state in runs:
                    run = state.pending_run
                    assert run is not None
                    breaks = parts.pattern(
                        f"{state_hint(state, plan.template)} run break", emit_ranges(complement(run.run)), flags="0"
                    )
                    condition = f"self._state == {state.index} and not {breaks}.search(self._buffer, self._pos)"
                    with out.block(f"if {condition}:"):
                        out.line(f"self._lane = {state.index}")
        held_back = "self._lane == SCAN and self._pos != len(self._buffer)"
        held = None if held_table is None else f"self._buffer[self._pos :] in {held_table}[self._state]"
        # (the lane is `PARTIAL` in those states only: no test where that is every state)
        in_partials = _state_test(partials) if len(partials) < len(plan.states) else None
        if held is not None and partials:
            with out.block(f"if {held_back}:"):
                with out.block(f"if {held}:"):
                    out.line("self._lane = HELD")
                with out.block("else:" if in_partials is None else f"elif {in_partials}:"):
                    out.line("self._lane = PARTIAL")
        elif held is not None:
            with out.block(f"if {held_back} and {held}:"):
                out.line("self._lane = HELD")
        elif partials:
            with out.block(f"if {held_back}{'' if in_partials is None else f' and {in_partials}'}:"):
                out.line("self._lane = PARTIAL")


def _state_test(states: list[int]) -> str:
    """The test that the parser is in one of `states`."""
    return f"self._state == {states[0]}" if len(states) == 1 else f"self._state in {literal(tuple(states))}"


def _docstring(out: CodeWriter, text: str) -> None:
    """A docstring, wrapped to the line length."""
    room = LINE_LENGTH - len(INDENT * out.depth)
    lines = textwrap.wrap(f'"""{text}"""', room)
    for line in lines:
        out.line(line)


def _holds(parts: ModuleParts, chars: Ranges, hint: str, *, negated: bool = False) -> str:
    """An expression true when `text` holds one of `chars` (`negated`: none of them): an `in` test
    each for a few, else one character-class search."""
    if size(chars) <= MAX_IN_TESTS:
        listed = [literal(c) for c in characters(chars)]
        if negated:
            return " and ".join(f"{c} not in text" for c in listed)
        return " or ".join(f"{c} in text" for c in listed)
    pattern = parts.pattern(hint, emit_ranges(chars), flags="0")
    return f"not {pattern}.search(text)" if negated else f"{pattern}.search(text) is not None"


def _before_trailing_run(out: CodeWriter, parts: ModuleParts, run: Ranges, hint: str, stripped: str | None) -> None:
    """`last = ` the length of `text` without its trailing run of `run` characters (0: all of it is
    run). A run of few characters (whitespace: 25) is stripped off with `str.rstrip` (`stripped`, the
    constant of its characters); else the last character outside it is matched."""
    if stripped is not None:
        out.line(f"last = len(text.rstrip({stripped}))")
        return
    last_break = parts.pattern(f"{hint} last break", f".*{emit_ranges(complement(run))}", flags="re.DOTALL")
    out.line(f"found = {last_break}.match(text)")
    out.line("last = 0 if found is None else found.end()")


# A state's test, as the right-hand sides of `busy = ...` lines: one where it fits on a line, else
# the first test, then `busy or ...` for each one after it.
BusyTest = tuple[str, ...]


def _busy_tests(
    parts: ModuleParts, plan: ParserPlan, states: list[ParserState], second_looks: dict[int, str]
) -> dict[BusyTest, list[int]]:
    """Per distinct test ("text may hold a delimiter start") of `states`, the states it applies to, in
    state order (`second_looks`: their second looks' patterns). (Only the states whose test the feed
    reads: a module names no pattern it never uses.)"""
    first_looks: dict[frozenset[int], str] = {}  # states with the same first characters share a test
    tests: dict[BusyTest, list[int]] = {}
    for state in states:
        starts = state.delimiter_starts
        second = second_looks.get(state.index)
        if starts is None:
            test = "True"  # no fast path in this state
        elif not starts:
            test = "False"  # nothing can start a delimiter after the text's start
        elif second is not None and len(starts) > MAX_IN_TESTS:
            # one search, not two: the second look's pattern begins with every first character
            test = f"{second}.search(text) is not None"
        else:
            if starts not in first_looks:
                hint = f"{state_hint(state, plan.template)} starts"
                first_looks[starts] = _holds(parts, normalise([(c, c) for c in starts]), hint)
            test = first_looks[starts]
            if second is not None:
                first = f"({test})" if " or " in test else test
                test = f"{first} and {second}.search(text) is not None"
                # (on a line of its own: the `busy = ...` of a chain, or an `if` of the feed; one
                # too long for it is split as ruff splits it, at the brackets around the search)
                if width(f"{INDENT * 3}busy = {test}") > LINE_LENGTH:
                    test = f"{first} and ({second}.search(text) is not None)"
        others = []
        if state.final_newline:  # a `$` may match before a newline that ends the text
            # (`in` first: most chunks hold no newline, and it costs a third of `endswith`)
            others.append('"\\n" in text and text.endswith("\\n")')
        for string in state.after:
            # a path led by a lookbehind on `string` starts only where it ends: in `text`, or at its start
            others.append(f"{literal(string)} in self._buffer[-{len(string)}:] + text")
        tests.setdefault(_any_of(test, others), []).append(state.index)
    return tests


def _any_of(test: str, others: list[str]) -> BusyTest:
    """`test` or any of `others`, on one line if it fits (else one line each, none that ruff or black
    would split: `others` are short)."""

    def fits(line: str) -> bool:
        return width(f"{INDENT * 3}busy = {line}") <= LINE_LENGTH

    if test == "False" and others:
        test, *others = others
        if not fits(test):
            return ("True",)  # a lookbehind on a string too long to test on a line: scan every chunk
    if not others:
        return (test,)  # (one too long for a line is already written to be split at its brackets)
    one = test
    for other in others:
        one = f"({one}) or {other}" if " and " in one else f"{one} or {other}"
    if fits(one):
        return (one,)
    lines = tuple(f"busy or {other}" for other in others)
    if not all(fits(line) for line in lines):
        return ("True",)
    return (test, *lines)


def _second_looks(parts: ModuleParts, plan: ParserPlan, states: list[ParserState]) -> dict[int, str]:
    """Per state, a pattern giving its first characters a second look, where no delimiter of the
    state starting with one can be that one character: "<" followed by one of "/", "t", "|", or "<"
    ending the text (the rest may follow). The characters that may follow come from the literals,
    from the patterns' trees (`rtcompile.regex.second_chars`), and for a pattern matched with the
    `regex` module from its leading characters (`Strategy.leads`). Code full of "<" (`a < b`,
    `<div>`) then stays on the fast path in a state whose delimiters begin "<|" or "</", literal or
    not (kimi's `<\\|open\\|>call tool="..."`). Each state looks for its own delimiters only (its lane
    tests them alone); states that need the same pattern share it."""
    sources: dict[int, str] = {}
    for state in states:
        source = _second_look_source(state) if state.delimiter_starts else None
        if source is not None:
            sources[state.index] = source
    names: dict[str, str] = {}
    for index, source in sources.items():
        if source not in names:
            shared = list(sources.values()).count(source) > 1
            hint = "delimiter starts" if shared else f"{state_hint(plan.states[index], plan.template)} starts"
            names[source] = parts.pattern(hint, source)
    return {index: names[source] for index, source in sources.items()}


def _second_look_source(state: ParserState) -> str | None:
    """The second-look pattern of `state` (see `_second_looks`), or None if none of its first
    characters can be narrowed."""
    seconds: dict[int, Ranges | None] = {}  # None: any character may follow

    def widen(first: int, follow: Ranges | None) -> None:
        if first in seconds and seconds[first] is None:
            return  # any character may follow it already
        seconds[first] = None if follow is None else normalise([*(seconds.get(first) or ()), *follow])

    for watch in state.watches:
        literals = watch.delimiter.literals
        if literals is not None:
            for lit in literals:
                widen(ord(lit[0]), ((ord(lit[1]), ord(lit[1])),) if len(lit) > 1 else None)
            continue
        follows = second_chars(watch.delimiter.pattern)
        plan = watch.strategy
        if follows is None and plan is not None and plan.leads is not None:
            # matched with the `regex` module: no match or partial match begins but at its leading
            # characters, where its scanner starts searching
            follows = _lead_follows(plan.leads)
        starts = match_starts(watch.delimiter)
        for first in sorted(() if starts is None else starts.chars):
            widen(first, None if follows is None else follows.get(first))
    if all(follow is None for follow in seconds.values()):
        return None
    # First characters the same characters may follow share an alternative (every whitespace
    # character of a leading `\s*`, say): one class, not an alternative each.
    alike: dict[Ranges | None, list[int]] = {}
    for first, follow in sorted(seconds.items()):
        alike.setdefault(follow, []).append(first)
    return "|".join(_second_look(firsts, follow) for follow, firsts in sorted(alike.items(), key=lambda a: a[1]))


def _lead_follows(leads: tuple[tuple[Ranges, ...], ...]) -> dict[int, Ranges | None]:
    """`second_chars`' answer for a pattern matched with the `regex` module, read from its leading
    characters (`Strategy.leads`): for each first character, those that may follow it (None: any)."""
    follows: dict[int, Ranges | None] = {}
    for classes in leads:
        second = classes[1] if len(classes) > 1 else None
        for first in characters(classes[0]):
            cp = ord(first)
            if cp in follows and follows[cp] is None:
                continue  # any character may follow it already
            follows[cp] = None if second is None else normalise([*(follows.get(cp) or ()), *second])
    return follows


def _second_look(firsts: list[int], follow: Ranges | None) -> str:
    """One of `firsts`, then (if narrowed) one of `follow` or the end of the text, where more may
    follow."""
    first = re.escape(chr(firsts[0])) if len(firsts) == 1 else emit_ranges(normalise([(c, c) for c in firsts]))
    if follow is None:
        return first
    if size(follow) <= MAX_LISTED:
        follow_class = f"[{''.join(map(re.escape, characters(follow)))}]"
    else:
        follow_class = emit_ranges(follow)
    return f"{first}(?:{follow_class}|\\Z)"
