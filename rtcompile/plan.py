"""The plan: everything both backends derive from the IR, computed once.

A `ParserPlan` says which parser states a template has, which delimiters each state watches and in
which order ties between equally early, equally long matches are broken, how much committed text the
engine must keep for delimiters that look behind, and which characters can start a delimiter (the fast
path). The interpreter and the code generator read the plan; neither re-derives any of it.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

from rtcompile.errors import JsonPath
from rtcompile.held_starts import MAX_START_LENGTH, MAX_STARTS, begins_with, held_starts
from rtcompile.ir import Delimiter, Field, Template, literal_delimiter
from rtcompile.per_template import per_template
from rtcompile.regex.analysis import LeadingRun, depends_on_scan_start, history, leading_run, matched_strings
from rtcompile.regex.charsets import Ranges, contains, normalise
from rtcompile.regex.errors import InvalidRegex
from rtcompile.regex.first_chars import MatchStarts, delimiter_first_chars, match_starts, modelled_tree
from rtcompile.regex.parser import parse_regex
from rtcompile.regex.translate import UnsupportedRegex, translate_before_end
from rtcompile.runtime.program import Tables
from rtcompile.strategies import Strategy, strategy


@dataclass(frozen=True)
class Watch:
    """A delimiter one parser state watches: the field it belongs to and whether it opens or closes it."""

    field: int  # index into `Template.fields`
    opens: bool
    delimiter: Delimiter
    where: JsonPath  # where the delimiter is written in the template
    # the template's pattern, where the delimiter is searched as the literals it matches (`scanned_delimiter`)
    written_as: str | None = None

    @property
    def strategy(self) -> Strategy | None:
        """How a generated scanner searches it (None for a literal: literals are searched per state)."""
        return None if self.delimiter.is_literal else strategy(self.delimiter)

    @property
    def awaits(self) -> tuple[str, ...]:
        """The strings its strategy awaits (`Strategy.awaits`); () when it awaits none."""
        plan = self.strategy
        return () if plan is None else plan.awaits

    @property
    def awaits_after(self) -> tuple[str, ...]:
        """The literals after which it awaits them (`Strategy.awaits_after`); (): at the scan position."""
        plan = self.strategy
        return () if plan is None else plan.awaits_after

    @property
    def waits_at_hold(self) -> bool:
        """Whether it awaits them where the state holds back from (after literals, or past a lazy run:
        `Strategy.awaits_after`, `Strategy.awaits_past`) rather than at the scan position."""
        plan = self.strategy
        return plan is not None and bool(plan.awaits_after or plan.awaits_past)


@dataclass(frozen=True)
class ParserState:
    """Where the parser is: outside every explicit region (state 0), or inside one explicit field."""

    index: int
    field: int | None  # the explicit field this state is inside; None for state 0
    watches: tuple[Watch, ...]  # in tie-break order: of two equal matches the earlier watch wins
    delimiter_starts: frozenset[int] | None  # code points a watched delimiter can start with; None: no fast path
    # What held-back text may take without scanning (see `pending_run`); None: no such run.
    pending_run: PendingRun | None = None
    # The ranks of the watches that await strings (see `Strategy.awaits`), in rank order: where one
    # of them partially matches and none of its strings follows, nothing can be committed in this
    # state until one does. A scanner that says so names its index here (`WAITING`).
    awaits: tuple[int, ...] = ()
    # A watched `$` may also match before a newline that ends the text (see `MatchStarts`).
    final_newline: bool = False
    # Or one may start right after one of these strings, in sorted order (see `MatchStarts.after`).
    after: tuple[str, ...] = ()
    # Texts every prefix of which scanning holds back whole in this state, committing nothing: starts
    # of its delimiters (`rtcompile.held_starts`). Held-back text that grows into such a prefix is held
    # back without a scan. (Where a scan would start to wait for a string instead, text is kept either
    # way and nothing committed until the string comes: waiting only looks at less of it.)
    held_starts: tuple[str, ...] = ()
    # Where the state's only watch also matches at the text's end (an end branch: `</think>|\Z`), a
    # streaming scan holds back no partial match of it, since `regex` takes that complete match over
    # any partial one, and takes a delimiter only where another branch matches: these, translated for
    # stdlib `re` (see `holds_nothing`). None for any other state. (A `$` branch also matches before a
    # newline that ends the text, which is then held back: `final_newline`, and `held_starts` lists it.)
    other_branches: str | None = None
    # The literals every match of a watched delimiter begins with one of, where known for every watch
    # and none looks before the scan position (`rtcompile.held_starts.begins_with`): a chunk in which
    # none begins and no start of one ends is region text. None where not known.
    begins_with: tuple[str, ...] | None = None

    def awaited(self) -> tuple[tuple[str, ...], ...]:
        """By wait (`awaits`): the strings any of which ends it (`Tables.awaits`)."""
        return tuple(self.watches[rank].awaits for rank in self.awaits)

    def describe(self, template: Template) -> str:
        if self.field is None:
            return "outside any explicit region"
        return f"inside field {template.fields[self.field].name!r}"


@dataclass(frozen=True)
class ParserPlan:
    template: Template
    states: tuple[ParserState, ...]
    state_of_field: tuple[int, ...]  # by field: the state inside it (0 for the implicit field)
    implicit: int  # the implicit field's index, -1 when there is none
    history: int | None  # see `template_history`
    required: tuple[str, ...]  # fields that must appear in the final message
    one_scan: bool  # see `one_scan_is_exact`

    @property
    def actions(self) -> tuple[tuple[tuple[bool, int], ...], ...]:
        """By state, by watch: (whether it opens a region, its field), as the engine reads them."""
        return tuple(tuple((w.opens, w.field) for w in state.watches) for state in self.states)

    @property
    def tables(self) -> Tables:
        """The engine's tables for this template (both backends hand over this record)."""
        fields = self.template.fields
        return Tables(
            names=tuple(f.name for f in fields),
            dirty=tuple(f.dirty for f in fields),
            joins=tuple(f.join for f in fields),
            repeats=tuple(f.repeats for f in fields),
            required=self.required,
            defaults=dict(self.template.defaults),
            implicit=self.implicit,
            state_of_field=self.state_of_field,
            actions=self.actions,
            history=self.history,
            one_scan=self.one_scan,
            awaits=tuple(state.awaited() for state in self.states),
        )


@per_template  # the code generator, the grammar skeleton and the interpreter all plan a template
def plan_parser(template: Template) -> ParserPlan:
    fields = template.fields
    implicit = template.implicit
    history = template_history(template)
    outside = [_watch(i, True, f) for i, f in enumerate(fields) if f.open is not None]
    if implicit is not None and implicit.close is not None:
        outside.append(_watch(fields.index(implicit), False, implicit))
    watch_lists: list[tuple[int | None, list[Watch]]] = [(None, outside)]
    state_of_field = []
    for i, f in enumerate(fields):
        if f.open is None:
            state_of_field.append(0)
            continue
        state_of_field.append(len(watch_lists))
        inside = [_watch(i, False, f)] if f.close is not None else []
        watch_lists.append((i, inside))
    states = []
    for index, (field, watches) in enumerate(watch_lists):
        ordered = _tie_break_order(watches, template)
        found = _delimiter_starts(watches, history)
        starts = None if found is None else found.chars
        awaits = _awaits(ordered, starts)
        final_newline = found is not None and found.final_newline
        after = () if found is None else tuple(sorted(found.after))
        delimiters = [w.delimiter for w in ordered]
        histories = [delimiter_history(d) for d in delimiters]
        held = held_starts(delimiters, histories)
        run = pending_run(watches)
        others = holds_nothing(ordered)
        begins = begins_with(delimiters, histories)
        state = ParserState(index, field, ordered, starts, run, awaits, final_newline, after, held, others, begins)
        states.append(state)
    return ParserPlan(
        template=template,
        states=tuple(states),
        state_of_field=tuple(state_of_field),
        implicit=-1 if implicit is None else fields.index(implicit),
        history=history,
        required=tuple(f.name for f in fields if not f.optional),
        one_scan=one_scan_is_exact(template),
    )


def _tie_break_order(watches: list[Watch], template: Template) -> tuple[Watch, ...]:
    """The reference breaks ties between equally early, equally long matches by (opens first, field name)."""
    return tuple(sorted(watches, key=lambda w: (0 if w.opens else 1, template.fields[w.field].name)))


def _awaits(watches: tuple[Watch, ...], starts: frozenset[int] | None) -> tuple[int, ...]:
    """The ranks of the watches whose strategies await strings. One that awaits them from the scan
    position opens with `.*?`: its first characters are unbounded, so its state has no fast path to
    get past it; one that awaits them after literals (`Strategy.awaits_after`) starts with those, and
    one past a lazy run (`Strategy.awaits_past`) waits only where its partial match is held back."""
    ranks = tuple(rank for rank, watch in enumerate(watches) if watch.awaits)
    assert starts is None or all(watches[rank].waits_at_hold for rank in ranks)
    return ranks


def _delimiter_starts(watches: list[Watch], history: int | None) -> MatchStarts | None:
    """Where a match of one of `watches` can begin in new text (see `MatchStarts`); None: anywhere."""
    if history is None:
        return None  # every character must stay in the buffer: the fast path cannot drop text
    chars: set[int] = set()
    after: set[str] = set()
    final_newline = False
    for watch in watches:
        starts = match_starts(watch.delimiter)
        if starts is None:
            return None
        chars |= starts.chars
        after |= starts.after
        final_newline |= starts.final_newline
    # (the strings' lookbehinds are what the buffer's kept history covers: `delimiter_history`)
    assert all(len(string) <= history for string in after)
    return MatchStarts(frozenset(chars), final_newline, frozenset(after))


def holds_nothing(watches: tuple[Watch, ...]) -> str | None:
    r"""For a state whose one watch has a branch that matches at the text's end (`\Z`, or `$`): the
    stdlib translation of its other branches (`rtcompile.regex.translate.translate_before_end`). A
    streaming scan of such a state holds back no partial match: wherever the text ends, that branch
    matches there, and `regex`'s partial search reports a complete match over a partial one; so a scan
    takes a delimiter only where another branch matches, and otherwise commits everything (but for a
    `$` branch, a newline that ends the text: `$` matches before it, a match the next character
    undoes, so it is held back). None where this does not hold, or where the watch looks before the
    scan position."""
    if len(watches) != 1 or watches[0].delimiter.is_literal:
        return None
    delimiter = watches[0].delimiter
    if delimiter_history(delimiter) != 0:
        return None
    try:
        split = translate_before_end(delimiter.pattern)
    except (InvalidRegex, UnsupportedRegex):
        return None
    if split is None or split.branches is None:
        return None
    return split.branches


@dataclass(frozen=True)
class PendingRun:
    """What a state's held-back text may take without a scan (see `pending_run`)."""

    run: Ranges  # characters that lengthen the held-back run
    busy: Ranges  # characters that may begin something else: text holding one is scanned
    owner: Watch  # the delimiter the run may begin
    # The literals one of which begins every match of the state's delimiters, the owner's run left
    # out (`\s*</tool_call>`: `</tool_call>`), where known for every delimiter, none begins with a run
    # character and none looks before the scan position: text holding a `busy` character but none of
    # them, and ending in no start of one, is taken as text without one (see `pending_run`). Sorted;
    # None where not known.
    begins: tuple[str, ...] | None = None


def pending_run(watches: list[Watch]) -> PendingRun | None:
    r"""How text held back in this state as a run can be taken without scanning, when one watched
    pattern starts with a run that can only grow into a match (`rtcompile.regex.analysis.leading_run`).

    mistral's `(?:\[TOOL_CALLS\])?[^\s\[\]]+\[ARGS\]` is the case in point: every word outside a
    region is held back as a possible tool name; `\s*</tool_call>` holds back the whitespace that ends
    a chunk. In text without a `busy` character (what the rest of that pattern, and every other
    watch, can start with), nothing matches, and the one partial match is the run of `run`
    characters at the end: scanning would commit the text up to that run and hold the run back,
    which the generated `feed` does directly. (`run` leaves out what another watch can start with, so
    that a held run never hides the start of another delimiter.)

    Where `begins` is known, so is more: a match begins with one of those literals, after a run of
    the owner's, and a partial match ends in a start of one, or is a run (the literals begin outside
    the run, the held text is run). Text in which none of them begins and no start of one ends is
    then like text without a `busy` character: `"<" in text` is only a second look's cue
    (xml-inline bodies are full of `</parameter>` beside a `\s*</tool_call>` close)."""
    runs = [(w, run) for w in watches if not w.delimiter.is_literal and (run := _run_of(w.delimiter)) is not None]
    if len(runs) != 1:
        return None
    owner, leading = runs[0]
    starts: set[int] = set()
    for watch in watches:
        if watch is not owner:
            first = delimiter_first_chars(watch.delimiter)
            if first is None:
                return None
            starts |= first
    remaining = normalise(r for r in _minus(leading.run, starts))
    if not remaining:
        return None
    busy = normalise([*leading.busy, *((c, c) for c in starts)])
    return PendingRun(remaining, busy, owner, _run_begins(watches, owner, leading, remaining))


def _run_begins(watches: list[Watch], owner: Watch, leading: LeadingRun, run: Ranges) -> tuple[str, ...] | None:
    """`PendingRun.begins`: the owner's literals after its run and the other watches' first literals,
    where all are known and listable, none begins with a run character (then the whole run is held
    back, as the run lane strips it) and no watch looks before the scan position."""
    if leading.after is None or run != leading.run:
        return None
    if any(delimiter_history(w.delimiter) != 0 for w in watches):
        return None
    others = begins_with([w.delimiter for w in watches if w is not owner], [0] * (len(watches) - 1))
    if others is None:
        return None
    literals = tuple(sorted({*leading.after, *others}))
    listable = len(literals) <= MAX_STARTS and all(0 < len(lit) <= MAX_START_LENGTH for lit in literals)
    if not listable or any(contains(run, ord(lit[0])) for lit in literals):
        return None
    return literals


def _run_of(delimiter: Delimiter) -> LeadingRun | None:
    parsed = modelled_tree(delimiter.pattern)
    return None if parsed is None else leading_run(parsed.root)


def _minus(ranges: Ranges, points: set[int]) -> list[tuple[int, int]]:
    """`ranges` without `points`."""
    out = []
    for lo, hi in ranges:
        cuts = sorted(p for p in points if lo <= p <= hi)
        start = lo
        for cut in cuts:
            if start < cut:
                out.append((start, cut - 1))
            start = cut + 1
        if start <= hi:
            out.append((start, hi))
    return out


def _watch(index: int, opens: bool, f: Field) -> Watch:
    """Field `index`'s open or close delimiter as a state watches it (see `scanned_delimiter`)."""
    kind = "open" if opens else "close"
    delimiter = f.open if opens else f.close
    assert delimiter is not None
    where = ("fields", f.name, kind if delimiter.is_literal else f"{kind}_pattern")
    scanned = scanned_delimiter(delimiter)
    return Watch(index, opens, scanned, where, None if scanned is delimiter else delimiter.pattern)


def scanned_delimiter(delimiter: Delimiter) -> Delimiter:
    """`delimiter` as the scanners search it: a regex that matches only a few strings, none a prefix of
    another (``(?:<\\|im_end\\|>|</s>)``: literals written as a pattern), is searched as those literals.

    That is exact. At one position at most one of such strings matches, and text that is a proper
    prefix of one is a prefix of no string that matches there, so the pattern's order of them (which
    may differ from the reference's longest-first order for literals) never shows. The reference does
    treat a regex match differently from a literal one in one place: a match that ends at the buffer's
    end may still grow, and is held back; `can_extend` says just that (for a literal list, because one
    of its literals extends another). Everything else about the delimiter (what a diagnostic calls it,
    its captures: none) stays as written."""
    if delimiter.is_literal or delimiter.group_names:
        return delimiter
    parsed = modelled_tree(delimiter.pattern)
    strings = None if parsed is None else matched_strings(parsed.root)
    if not strings or "" in strings:
        return delimiter
    literals = literal_delimiter(strings)
    if literals.can_extend:
        return delimiter  # which of two such strings matches depends on the pattern's order
    return dataclasses.replace(literals, can_extend=True)


# --------------------------------------------------------------------------- history
#
# The engine drops committed text to stay linear, but a lookbehind or `\b` at the scan position
# inspects characters before it: how many of them each delimiter needs.


def delimiter_history(delimiter: Delimiter) -> int | None:
    """Characters before the search position the delimiter can inspect; None if unbounded or unknown."""
    if delimiter.is_literal:
        return 0
    return pattern_history(delimiter.pattern)


@functools.lru_cache(maxsize=512)
def pattern_history(pattern: str) -> int | None:
    """What `delimiter_history` says of a regex: how far before the search position its lookbehinds,
    word boundaries and start anchors read (a start anchor needs one character kept, so that no
    dropped text can make a later position look like the start).

    Read off the pattern's tree, whether or not stdlib `re` can run it: a pattern matched with the
    `regex` module (no exact translation) looks back exactly as far, so it bounds the buffer the same
    way. A pattern the parser cannot read, or that searches backwards (`(?r)`), keeps the whole buffer
    (slower, never wrong)."""
    try:
        parsed = parse_regex(pattern)
    except (InvalidRegex, UnsupportedRegex, ValueError):
        return None
    if any(flag.letter == "r" for flag in parsed.inline_flags):
        return None  # a reverse search reads from the end back to the scan position, and its partial matches before it
    if depends_on_scan_start(pattern):
        return None  # \G, \K and control verbs: where the buffer starts changes what regex reports
    return history(parsed.root)


def template_history(template: Template) -> int | None:
    """How many committed characters the streaming engine must keep for `template`'s delimiters.

    None when some delimiter can look back without bound: then nothing is dropped. A template whose
    delimiters never look back (literals, and regexes without lookbehind, `\\b` or start anchors) keeps
    nothing: the buffer holds only text a pending delimiter may still claim.
    """
    delimiters: list[Delimiter] = []  # the start anchor is only searched in the prompt, never streamed
    for f in template.fields:
        delimiters += [d for d in (f.open, f.close) if d is not None]
    needed = 0
    for delimiter in delimiters:
        width = delimiter_history(delimiter)
        if width is None:
            return None
        needed = max(needed, width)
    return needed


def one_scan_is_exact(template: Template) -> bool:
    """Whether a complete output may be parsed in one end-of-stream scan (`StreamingParser.parse_complete`).

    Streaming holds text back and scans again from where the held text starts; for a delimiter whose
    matches do not depend on where a scan starts, that later scan finds what one scan finds, whatever
    engine runs it. Some constructs do depend on it: `\\G` matches only where a scan starts, `\\K`
    reports a start after text it consumed, control verbs move the next start, `(?r)` searches
    backwards from the end, and a fuzzy constraint's best match differs between a partial search and
    a complete one. Templates with one of those parse the way they stream.
    """
    for f in template.fields:
        for delimiter in (f.open, f.close):
            if delimiter is not None and not delimiter.is_literal and depends_on_scan_start(delimiter.pattern):
                return False
    return True
