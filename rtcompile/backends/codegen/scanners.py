r"""One scanner function per parser state, with every watched delimiter inlined.

A scanner answers the engine's question for its state (see `rtcompile.runtime.engine.ScanResult`):
literal delimiters are found with `str.find` (in a long buffer, by jumping between occurrences of their
first characters: `find_literal`, `search_literals`); regex delimiters use their exact stdlib translation plus
the pattern that reproduces `regex`'s partial matching. The plan fixes the watch order, so a watch's
index is its tie-break rank.

A state's literal delimiters are found by one search of their alternation, and held back once for the
whole state: the held text starts at the longest suffix of the buffer that is a proper prefix of any
literal the state watches. That is what the reference's per-delimiter rules amount to unless one literal
contains another (see `_literals_nest`); such states search delimiter by delimiter. One search of a
trie-shaped pattern anchored at the end (`<(?:t(?:h(?:i(?:n(?:k)?)?)?)?)?\Z`) finds the pending text;
very long literals use the runtime's linear-time scan.
"""

from __future__ import annotations

import re
from typing import TypeAlias

from rtcompile.backends.codegen.parts import ModuleParts
from rtcompile.backends.codegen.writer import CodeWriter, literal
from rtcompile.errors import format_path
from rtcompile.ir import Template
from rtcompile.plan import ParserState, Watch
from rtcompile.regex.analysis import PastRun, depends_on_scan_start
from rtcompile.regex.ast import width
from rtcompile.regex.charsets import Ranges, characters, normalise, size
from rtcompile.regex.first_chars import modelled_tree
from rtcompile.strategies import lead_pattern

# Beyond these the pending text is found by `literal_set_hold` (linear in the literals) instead of a trie
# pattern, which nests one group per character and is written into the module as one string.
MAX_TRIE_DEPTH = 48
# A literal longer than this is written once, as a module constant, rather than inline where it is searched.
MAX_INLINE_LITERAL = 40
MAX_TRIE_LITERALS = 64


def state_hint(state: ParserState, template: Template) -> str:
    """The word a state's functions are named by: `outside`, or `in_<field>`."""
    return "outside" if state.field is None else f"in {template.fields[state.field].name}"


def watch_hint(watch: Watch, template: Template) -> str:
    return f"{template.fields[watch.field].name} {'open' if watch.opens else 'close'}"


def scanner(parts: ModuleParts, state: ParserState, template: Template) -> tuple[str, str]:
    """The scanner function for `state`: its name and its code."""
    name = parts.names.new("_scan", state_hint(state, template))
    out = CodeWriter()
    with out.block(f"def {name}(buf: str, pos: int, eos: bool, memo: list[Any]) -> ScanResult:"):
        literal_only = all(w.delimiter.is_literal for w in state.watches) and not _literals_nest(state)
        if state.watches and literal_only:
            _literals_only(out, parts, state, template)
        elif len(state.watches) == 1:
            _single_watch(out, parts, state, template)
        else:
            _several_watches(out, parts, state, template)
    return name, out.code()


def _literals_only(out: CodeWriter, parts: ModuleParts, state: ParserState, template: Template) -> None:
    """Literal delimiters that do not nest: the first match found is the answer (text pending as a
    prefix of a literal always starts after it), else the pending text is held back."""
    out.comment(f"{state.describe(template)}: {', '.join(format_path(w.where) for w in state.watches)}")
    out.line("n = len(buf)")
    out.line("hold = n")
    _wait_check(out, parts, state)
    _literal_search(out, parts, state, template, single=True)
    _pending_literals(out, parts, state, template)
    out.line("return -1, 0, 0, NO_GROUPS, hold")


def _single_watch(out: CodeWriter, parts: ModuleParts, state: ParserState, template: Template) -> None:
    """One delimiter: its first committable match is the answer, with nothing else to weigh it against."""
    watch = state.watches[0]
    out.comment(f"{state.describe(template)}: {format_path(watch.where)}")  # format_path quotes names
    out.line("n = len(buf)")
    out.line("hold = n")
    _wait_check(out, parts, state)
    if watch.delimiter.is_literal:  # literals that nest: see `_literals_nest`
        _literal_watch(out, parts, watch, template, None)
    else:
        _regex_watch(out, parts, watch, template, rank=None)
    _wait_at_hold(out, parts, state, template, several=False)
    out.line("return -1, 0, 0, NO_GROUPS, hold")


def _several_watches(out: CodeWriter, parts: ModuleParts, state: ParserState, template: Template) -> None:
    """Every delimiter searched; the earliest match wins, then the longest, then the plan's order.

    All literal delimiters are found by one search (see `_literal_search`); each regex delimiter by its
    own. Of two equally early, equally long matches the one earlier in the plan's order wins.
    """
    out.comment(state.describe(template))
    out.line("n = len(buf)")
    out.line("hold = n")
    _wait_check(out, parts, state)
    if not state.watches:
        out.line("return -1, 0, 0, NO_GROUPS, hold  # nothing to watch: all text belongs to the region")
        return
    out.line("best = -1")
    out.line("best_start = best_end = 0")
    out.line("best_groups: dict[str, str | None] = NO_GROUPS")
    combined = not _literals_nest(state)
    for rank, watch in enumerate(state.watches):
        if watch.delimiter.is_literal and combined:
            continue
        out.line()
        out.comment(format_path(watch.where))  # format_path quotes names: no line breaks
        if watch.delimiter.is_literal:
            _literal_watch(out, parts, watch, template, rank)
        else:
            _regex_watch(out, parts, watch, template, rank=rank)
    if combined and any(w.delimiter.is_literal for w in state.watches):
        # Last, so that the search need not go past the best match so far (a literal that does not
        # occur would otherwise be searched for to the end at every scan).
        out.line()
        _literal_search(out, parts, state, template, single=False)
    if combined:
        _pending_literals(out, parts, state, template, held=True)
    out.line()
    with out.block("if best >= 0 and best_start >= hold:"):
        out.line("best = -1  # a pending delimiter starts no later and may be the real one")
    _wait_at_hold(out, parts, state, template, several=True)
    out.line("return best, best_start, best_end, best_groups, hold")


def _take(out: CodeWriter, rank: int | str | None, groups: str, branch: str = "if") -> None:
    """Commit the match in `start`/`end`: return it (a single watch), or keep it if it beats the best.

    `rank` is the watch's tie-break rank (or the variable holding it); None for a state's only watch
    (whose index is 0). `branch` ("elif") continues a test written before.
    """
    if rank is None:
        out.line(f"return 0, start, end, {groups}, n")
        return
    # Earlier, then longer, then ranked before: compared as (start, -end, rank).
    with out.block(f"{branch} best < 0 or (start, -end, {rank}) < (best_start, -best_end, best):"):
        out.line(f"best, best_start, best_end = {rank}, start, end")
        out.line(f"best_groups = {groups}")


def _literal_search(
    out: CodeWriter, parts: ModuleParts, state: ParserState, template: Template, *, single: bool
) -> None:
    """Find the earliest, then longest, then first-ranked match of the state's literal delimiters.

    One literal: `str.find`. Several (of one delimiter or of many): one search of their alternation,
    longest first and then by rank; a table says, per literal, which watch it belongs to and whether its
    match may still grow where it ends at the buffer's end (its delimiter's `can_extend`: here only
    literals written as a pattern, `rtcompile.plan.scanned_delimiter`; a literal list that can extend
    nests, see `_literals_nest`).
    """
    for watch in state.watches:
        if watch.written_as is not None:
            out.comment(f"{format_path(watch.where)} {literal(watch.written_as)}: searched as the strings it matches")
    entries: dict[str, tuple[int, bool]] = {}  # literal -> (rank, may grow at the buffer's end)
    for rank, watch in enumerate(state.watches):
        for lit in sorted(set(watch.delimiter.literals or ())):
            # The first watch of a literal ranks it; one that may grow holds it back for all of them.
            first, grows = entries.get(lit, (rank, False))
            entries[lit] = (first, grows or watch.delimiter.can_extend)
    hint = state_hint(state, template)
    if len(entries) == 1:
        ((lit, (rank, grows)),) = entries.items()
        if not single:
            out.comment(format_path(state.watches[rank].where))
        if single:
            out.line(f"start = {_find(parts, literal(lit), len(lit))}")
        else:  # only a match starting no later than the best so far can win
            out.line(f"start = buf.find({literal(lit)}, pos, best_start + {len(lit)} if best >= 0 else n)")
        with out.block("if start >= 0:"):
            out.line(f"end = start + {len(lit)}")
            _take_literal(out, rank, single, "not eos and end == n" if grows else None)
        return
    ordered = sorted(entries, key=lambda lit: (-len(lit), entries[lit][0]))
    table = parts.constant(f"{hint} literal watches", literal({lit: entries[lit] for lit in ordered}))
    # The alternation is built from the table's keys (in its order) when the module compiles its patterns.
    alternation = "|".join(re.escape(lit) for lit in ordered)
    pattern = parts.pattern(f"{hint} literals", alternation, source_code=f'"|".join(map(re.escape, {table}))')
    if not single:
        out.comment(", ".join(format_path(w.where) for w in state.watches if w.delimiter.is_literal))
    parts.need("scanning", "LONG_SCAN")
    parts.need("scanning", "search_literals")
    heads = literal("".join(sorted({lit[0] for lit in ordered})))
    # only a match starting no later than the best so far can win
    last = "n" if single else "best_start if best >= 0 else n"
    search = f"search_literals({pattern}, buf, pos, {heads}, {table}, {last})"
    with out.block("if eos:" if single else "if eos and best < 0:"):  # a search to the end: remembered
        unbounded = f"search_literals({pattern}, buf, pos, {heads}, {table}, n)"
        _remembered_search(out, parts, f"{pattern}.search(buf, pos) if n - pos < LONG_SCAN else {unbounded}", "pos")
    with out.block("else:"):
        out.line(f"m = {pattern}.search(buf, pos) if n - pos < LONG_SCAN else {search}")
    with out.block("if m is not None:"):
        out.line("start, end = m.span()")
        if any(grows for _, grows in entries.values()):
            out.line(f"rank, grows = {table}[m.group()]")
            _take_literal(out, "rank", single, "grows and not eos and end == n")
        else:
            out.line(f"rank = {table}[m.group()][0]")
            _take_literal(out, "rank", single, None)


def _take_literal(out: CodeWriter, rank: int | str, single: bool, may_grow: str | None) -> None:
    """Commit the literal match in `start`/`end`: a literal-only state's answer, or a candidate. Where
    `may_grow` (a condition, as code) holds, the match may still grow and is held back instead.
    `rank` is the watch's rank, or the name of the variable holding it."""
    if may_grow is not None:
        with out.block(f"if {may_grow}:"):
            out.line("hold = min(hold, start)  # a regex's match may still grow")
    if not single:
        _take(out, rank, "NO_GROUPS", "if" if may_grow is None else "elif")
    elif may_grow is None:  # the literal's first watch (its rank) is the answer
        out.line(f"return {rank}, start, end, NO_GROUPS, n")
    else:
        with out.block("else:"):
            out.line(f"return {rank}, start, end, NO_GROUPS, n")


def _literals_nest(state: ParserState) -> bool:
    """Whether one literal the state watches contains another (`<a>` in `x<a>`, or `ab` in `abc`).

    Only then can text pending as a prefix of one literal start before a complete match of another, and
    the reference's per-delimiter rule (a delimiter with a complete match holds nothing back) differ from
    one hold for the whole state; such states search and hold back delimiter by delimiter.
    """
    literals = {lit for w in state.watches for lit in w.delimiter.literals or ()}
    lengths = sorted({len(lit) for lit in literals})
    # Every substring of a literal with the length of some literal is looked up once: linear in the literals
    # for a given set of lengths, where comparing every pair would be quadratic in their number.
    return any(
        outer[start : start + size] in literals
        for outer in literals
        for size in lengths
        if size < len(outer)
        for start in range(len(outer) - size + 1)
    )


def _literal_watch(out: CodeWriter, parts: ModuleParts, watch: Watch, template: Template, rank: int | None) -> None:
    """One literal delimiter searched on its own (in a state whose literals nest, see `_literals_nest`)."""
    literals = watch.delimiter.literals
    assert literals is not None
    by_length = sorted(literals, key=len, reverse=True)
    if len(by_length) == 1:
        out.line(f"start = {_find(parts, literal(by_length[0]), len(by_length[0]))}")
        out.line(f"end = start + {len(by_length[0])}")
    else:
        names = parts.constant(f"{watch_hint(watch, template)} literals", literal(tuple(by_length)))
        out.line("start = end = -1")
        # At the end of the stream each literal's search is remembered (a one-shot parse does not
        # search its whole output again for each region): one memo entry each, in a row.
        slots = [parts.memo_slot() for _ in by_length]
        parts.need("scanning", "find_once")
        out.comment("longest first: at one position the longest literal wins")
        with out.block(f"for slot, lit in enumerate({names}, {slots[0]}):"):
            with out.block("if eos:"):
                out.line("at = find_once(memo, slot, buf, lit, pos)")
            with out.block("else:"):
                out.line(f"at = {_streaming_find(parts, 'lit', None)}")
            with out.block("if at >= 0 and (start < 0 or at < start):"):
                out.line("start, end = at, at + len(lit)")
    with out.block("if start >= 0:"):
        if watch.delimiter.can_extend:
            with out.block("if not eos and end == n:"):
                out.line("hold = min(hold, start)  # a longer literal of the set may still complete")
            with out.block("else:"):
                _take(out, rank, "NO_GROUPS")
        else:
            _take(out, rank, "NO_GROUPS")
    with out.block("else:"):  # only a delimiter without a complete match holds text back
        _hold_pending(out, parts, sorted(literals), watch_hint(watch, template))


def _pending_literals(
    out: CodeWriter, parts: ModuleParts, state: ParserState, template: Template, *, held: bool = False
) -> None:
    """Hold back the longest buffer suffix that is a proper prefix of a literal the state watches.
    `held`: other watches may have set `hold` already, and a hold no later than where a pending
    literal could start leaves nothing for this search to change."""
    literals = sorted({lit for w in state.watches for lit in w.delimiter.literals or ()})
    if any(len(lit) > 1 for lit in literals):
        out.line()
        out.comment("text that may still become a literal delimiter")
        _hold_pending(out, parts, literals, state_hint(state, template), held=held)


def _hold_pending(out: CodeWriter, parts: ModuleParts, literals: list[str], hint: str, *, held: bool = False) -> None:
    pending = [lit for lit in literals if len(lit) > 1]  # a one-character literal is never pending
    if not pending:
        out.line("pass  # one-character literals are never pending")
        return
    reach = max(len(lit) for lit in pending) - 1  # the longest proper prefix
    if reach > MAX_TRIE_DEPTH or len(pending) > MAX_TRIE_LITERALS:
        parts.need("scanning", "literal_set_hold")
        names = parts.constant(f"{hint} pending literals", literal(tuple(pending)))
        with out.block("if not eos:"):
            out.line(f"hold = min(hold, literal_set_hold(buf, pos, {names}))")
        return
    pattern = parts.pattern(f"{hint} pending", _proper_prefix_trie(pending) + r"\Z")
    with out.block(f"if not eos and hold > pos and hold > n - {reach}:" if held else "if not eos:"):
        out.line(f"m = {pattern}.search(buf, max(pos, n - {reach}))")
        with out.block("if m is not None and m.start() < hold:"):
            out.line("hold = m.start()")


_Trie: TypeAlias = "dict[str, _Trie]"


def _proper_prefix_trie(literals: list[str]) -> str:
    """A stdlib pattern matching exactly the non-empty proper prefixes of `literals`, nested as a trie."""
    trie: _Trie = {}
    for lit in literals:
        node = trie
        for char in lit[:-1]:
            node = node.setdefault(char, {})

    def alternatives(node: _Trie) -> str:
        branches = [
            re.escape(c) + (f"(?:{alternatives(child)})?" if child else "") for c, child in sorted(node.items())
        ]
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return alternatives(trie)


def _regex_watch(out: CodeWriter, parts: ModuleParts, watch: Watch, template: Template, *, rank: int | None) -> None:
    """One regex delimiter, searched as its strategy says (`rtcompile.strategies`); `rank` is None
    when it is the state's only watch (then a match returns)."""
    plan = watch.strategy
    assert plan is not None
    out.comment(plan.summary())
    hint = watch_hint(watch, template)
    full, prefix = parts.stdlib_regex(watch.delimiter.pattern, hint, watch.where)
    parts.need("scanning", "regex_can_grow")
    # A state's only watch returns its match at once; with several, the best match is checked against
    # the hold (`_several_watches`), which also covers a match at the end of the buffer.
    at_end = rank is None and _may_match_at_end(watch.delimiter.pattern)
    if plan.engine == "regex":
        _regex_module_watch(out, parts, watch, template, full, rank, at_end)
        return
    partial = "partial_match" if plan.attempt == "match" else "partial_search"
    parts.need("partial", partial)
    # Where every match starts with the first string it contains, the search starts where that was
    # found; where it starts with a run of a small class before it, at the start of that run.
    search_from: str = plan.search_from  # "pos" or "found": the scanner's variable of that name
    if plan.search_from == "lead":
        assert plan.lead is not None
        parts.need("scanning", "lead_start")
        chars = characters(plan.lead)
        name = parts.constant(f"{hint} lead", f"frozenset({literal(chars)})")
        search_from = f"lead_start(buf, pos, found, {name})"
    # Without the strings every match contains there is no complete match: only the partial one is
    # looked for, where `re`'s search could cost the square of a long pending run (`[^\s]+\[ARGS\]`).
    absent = _absent_in_order(out, parts, plan.required) if plan.required else None
    # Where a watch searched before matched at `pos`, only a match or partial match at `pos` can change
    # the outcome: the rest of the buffer is not searched (`partial_search_at`).
    bounded = rank is not None and rank > 0 and plan.attempt == "search"
    branch = "if"
    if plan.start_only:  # `re` would still try every position
        with out.block("if pos > 0:"):
            out.line("m = None")
        branch = "elif"
    if absent is not None:
        with out.block(f"{branch} {absent}:"):
            out.comment(f"every match contains {_in_order_text(plan.required)}")
            out.line("m = None")
            with out.block("if not eos:"):
                if bounded:
                    out.comment("(only one at `pos` could matter where a match starts there already)")
                    at_pos = "best >= 0 and best_start == pos"
                    out.line(f"live = {prefix}.match(buf, pos) if {at_pos} else {prefix}.search(buf, pos)")
                else:
                    out.line(f"live = {prefix}.search(buf, pos)")
                with out.block("if live is not None:"):
                    out.line("hold = min(hold, live.start())")
        branch = "elif"
    with out.block(f"{branch} eos:"):
        if plan.one_shot == "awaited":
            # (`re` would walk the lookahead's lazy run a character at a time to the string it awaits;
            # the match is the literal's: `endpos` leaves out every literal that ends after that string)
            parts.need("scanning", "last_start")
            literals = "|".join(re.escape(lead) for lead in plan.awaits_after)
            head = parts.pattern(f"{hint} literals", literals)
            last = f"last_start(memo, {parts.memo_slot()}, buf, {literal(plan.awaits)})"
            _remembered_search(out, parts, f"{head}.search(buf, {search_from}, {last})", search_from)
        elif plan.one_shot == "one_start":
            # (`re` would walk to that string a character at a time, trying the pattern at each)
            (start,) = plan.starts
            parts.need("scanning", "find_once")
            out.line(f"found = find_once(memo, {parts.memo_slot()}, buf, {literal(start)}, pos)")
            with out.block("if found < 0:"):
                out.line("m = None")
            with out.block("else:"):
                _remembered_search(out, parts, f"{full}.search(buf, found)", "found")
        elif plan.one_shot == "starts":  # `re` would run the whole pattern at every position
            parts.need("scanning", "LONG_UNPREFIXED_SCAN")
            parts.need("scanning", "search_from_starts")
            jumping = f"search_from_starts({full}, buf, pos, {literal(plan.starts)})"
            search = f"{full}.search(buf, pos) if n - pos < LONG_UNPREFIXED_SCAN else {jumping}"
            _remembered_search(out, parts, search, "pos")
        elif plan.before_end is not None:  # the end branches tried once, not at every position
            parts.need("scanning", "search_before_end")
            branches = plan.before_end.branches
            rest = "None" if branches is None else parts.pattern_once(f"{hint} before end", branches)
            search = f"search_before_end({full}, {rest}, buf, pos, {plan.before_end.final_newline})"
            _remembered_search(out, parts, search, "pos")
        else:
            _remembered_search(out, parts, f"{full}.{plan.attempt}(buf, {search_from})", search_from)
    if bounded:
        parts.need("partial", "partial_search_at")
        with out.block("elif best >= 0 and best_start == pos:"):
            out.line(f"m, partial_at = partial_search_at({full}, {prefix}, buf, pos)")
            with out.block("if partial_at is not None:"):
                out.line("hold = min(hold, partial_at)")
    with out.block("else:"):
        out.line(f"m, partial_at = {partial}({full}, {prefix}, buf, pos)")
        with out.block("if partial_at is not None:"):
            out.line("hold = min(hold, partial_at)")
    _take_unless_growing(out, rank, f"regex_can_grow({full}, buf, m)", parts.groups_code(full), at_end)


def _remembered_search(out: CodeWriter, parts: ModuleParts, search: str, start: str) -> None:
    """`m = <search>` at the end of the stream, for a search from `start` on, remembered: the buffer no
    longer changes and searches only move on, so a one-shot parse does not search its whole output
    again for each region (see `recall`)."""
    parts.need("scanning", "recall")
    parts.need("scanning", "FORGOTTEN")
    slot = parts.memo_slot()
    out.line(f"m = recall(memo, {slot}, {start})")
    with out.block("if m is FORGOTTEN:"):
        out.line(f"m = {search}")
        out.line(f"memo[{slot}] = ({start}, m)")


def _wait_check(out: CodeWriter, parts: ModuleParts, state: ParserState) -> None:
    """Where a watch awaits strings from the scan position (`Strategy.awaits`): while they are absent
    after `pos`, that watch holds everything from `pos`, so nothing can be committed and no other
    search is needed."""
    waits = [(index, rank) for index, rank in enumerate(state.awaits) if not state.watches[rank].waits_at_hold]
    if not waits:
        return
    index, rank = waits[0]  # (one such watch is enough to wait on)
    awaited = state.watches[rank].awaits
    parts.need("engine", "WAITING")
    with out.block("if not eos:"):
        out.comment(f"nothing can be committed before {_any_of(awaited)} (see `Tables.awaits`)")
        absent = []
        for number, text in enumerate(awaited):
            name = "awaited" if len(awaited) == 1 else f"awaited_{number}"
            out.line(f"{name} = {_streaming_find(parts, literal(text), len(text))}")
            absent.append(f"{name} < 0")
        with out.block(f"if {' and '.join(absent)}:"):
            out.line(f"return {_waiting(index)}, pos, pos, NO_GROUPS, pos")


def _wait_at_hold(
    out: CodeWriter, parts: ModuleParts, state: ParserState, template: Template, *, several: bool
) -> None:
    """Where watches await strings where the state holds back from: after literals
    (`Strategy.awaits_after`: when nothing can be committed before the held-back text and it starts
    with one of a watch's literals, not followed by any of its strings, that watch partially matches
    there until one arrives) or past a lazy run (`Strategy.awaits_past`, `_wait_past_run`). Either
    way nothing held can be committed until then (every match from there on starts no earlier than
    the hold)."""
    waits = [(index, rank) for index, rank in enumerate(state.awaits) if state.watches[rank].waits_at_hold]
    if not waits:
        return
    parts.need("engine", "WAITING")
    # (with several watches, none matched before the hold)
    with out.block("if best < 0 and not eos:" if several else "if not eos:"):
        for index, rank in waits:
            watch = state.watches[rank]
            leads, awaited = watch.awaits_after, watch.awaits
            if not leads:
                _wait_past_run(out, parts, state, index, rank, template)
                continue
            # Where the shortest literal ends, at the latest where what the lookahead reads begins.
            after = min(map(len, leads))
            starts = literal(leads[0] if len(leads) == 1 else leads)
            absent = [f"buf.find({literal(text)}, hold + {after}) < 0" for text in awaited]
            with out.block(f"if {' and '.join([f'buf.startswith({starts}, hold)', *absent])}:"):
                out.comment(
                    f"{format_path(watch.where)} partially matches until {_any_of(awaited)} follows: nothing"
                    " from there on can be committed until then (see `Tables.awaits`)"
                )
                out.line(f"return {_waiting(index)}, hold, hold + {after}, NO_GROUPS, hold")


def _wait_past_run(
    out: CodeWriter, parts: ModuleParts, state: ParserState, index: int, rank: int, template: Template
) -> None:
    """Where the state holds back from a partial match of a lazy run's watch (`Strategy.awaits_past`)
    that is past the pattern's mandatory part, that match stays partial until its string follows."""
    watch = state.watches[rank]
    plan = watch.strategy
    assert plan is not None and plan.awaits_past is not None
    mandatory = parts.pattern(f"{watch_hint(watch, template)} mandatory", plan.awaits_past.mandatory, flags="re.DOTALL")
    with out.block(f"if {_partial_at(rank)} == hold and not {mandatory}.match(buf, hold):"):
        out.comment(
            f"{format_path(watch.where)} partially matches past its lazy run until {_any_of(watch.awaits)}"
            " follows: nothing from there on can be committed until then (see `Tables.awaits`)"
        )
        out.line(f"return {_waiting(index)}, hold, hold, NO_GROUPS, hold")


def _partial_at(rank: int) -> str:
    """The scanner's variable for where a regex-module watch partially matched (-1: it did not)."""
    return f"partial_{rank}"


def _waiting(index: int) -> str:
    """A scanner's `which` for the state's wait `index` (see `WAITING`)."""
    return "WAITING" if index == 0 else f"WAITING - {index}"


def _any_of(texts: tuple[str, ...]) -> str:
    return " or ".join(map(_comment_text, texts))


def _may_match_at_end(pattern: str) -> bool:
    """Whether a match of `pattern` can start at the end of the buffer: it can match the empty string
    (or its tree cannot say: ``\\K`` moves the reported start)."""
    parsed = modelled_tree(pattern)
    return parsed is None or width(parsed.root)[0] == 0


def _regex_module_watch(
    out: CodeWriter,
    parts: ModuleParts,
    watch: Watch,
    template: Template,
    pattern: str,
    rank: int | None,
    at_end: bool,
) -> None:
    """A delimiter matched with the `regex` module (no exact stdlib translation of its partial matches):
    what the interpreter and the reference find, partial matches included, searched as its strategy
    says: from its leading characters (`Strategy.leads`), past a lazy run (`Strategy.awaits_past`), and
    at the end of the stream with its complete matches' stdlib translation where there is one
    (`Strategy.complete`). That last search is remembered like a stdlib one's, unless what `regex`
    reports depends on where it starts (then it is `regex`'s, from the scan position)."""
    plan = watch.strategy
    assert plan is not None
    out.comment("no exact stdlib translation: matched with the regex module, as the reference does")
    hint = watch_hint(watch, template)
    complete = None
    if plan.complete:
        complete, _ = parts.stdlib_regex(watch.delimiter.pattern, f"{hint} complete", watch.where, streamed=False)
    past = plan.awaits_past
    partial_at = _partial_at(rank or 0)
    if past is not None:
        out.line(f"{partial_at} = -1")
    with out.block("if eos:"):
        if complete is None:
            search = f"{pattern}.search(buf, pos)"
            if depends_on_scan_start(watch.delimiter.pattern):
                out.line(f"m = {search}")
            else:
                _remembered_search(out, parts, search, "pos")
        else:  # no partial matches at the end: the complete ones' stdlib translation
            _remembered_search(out, parts, f"{complete}.search(buf, pos)", "pos")
    with out.block("else:"):
        start = "pos"
        if plan.leads is not None:
            # No match or partial match starts before the first of its leading characters, nor
            # anywhere when there is none (a partial match at the very end holds nothing back).
            out.line(f"lead = {_first_of(parts, plan.leads, hint)}")
            start = "lead"
        if past is None:
            search = f"{pattern}.search(buf, {start}, partial=True)"
            out.line(f"m = {search}" if start == "pos" else f"m = None if lead < 0 else {search}")
        else:
            assert complete is not None
            _past_run_search(out, pattern, complete, past, start, partial_at)
    may_grow = f"(m.partial or regex_can_grow({pattern}, buf, m))"
    if past is not None:  # (a complete match is `re`'s, which has no `partial`)
        may_grow = f"({partial_at} >= 0 or regex_can_grow({complete}, buf, m))"
    _take_unless_growing(out, rank, may_grow, "m.groupdict()", at_end)


def _past_run_search(out: CodeWriter, pattern: str, complete: str, past: PastRun, start: str, partial_at: str) -> None:
    """A streaming search of a lazy run's pattern (`Strategy.awaits_past`): complete matches on `re`; if
    there is none, `regex`'s partial search, from `span` characters before the last S on (an attempt
    further back finds an S and fails)."""
    if start == "pos":
        out.line(f"m = {complete}.search(buf, pos)")
    else:
        out.line(f"m = None if lead < 0 else {complete}.search(buf, lead)")
    with out.block("if m is None:" if start == "pos" else "if m is None and lead >= 0:"):
        out.line(f"last = buf.rfind({literal(past.awaited)}, {start})")
        out.line(f"m = {pattern}.search(buf, max({start}, last - {past.span}), partial=True)")
        with out.block("if m is not None and m.partial:"):
            out.line(f"{partial_at} = m.start()")


def _first_of(parts: ModuleParts, leads: tuple[tuple[Ranges, ...], ...], hint: str) -> str:
    """The expression for where a match's leading characters (`Strategy.leads`) first occur in `buf`
    from `pos` on, -1 if nowhere: `str.find` for one character."""
    char = _one_lead(leads)
    if char is not None:
        return f"buf.find({literal(char)}, pos)"
    parts.need("scanning", "first_of")
    return f"first_of({_leads_pattern(parts, leads, hint)}, buf, pos)"


def leads_begin(parts: ModuleParts, leads: tuple[tuple[Ranges, ...], ...], hint: str, text: str) -> str:
    """The test that `text` begins with a match's leading characters (`Strategy.leads`), or with a
    start of them that is all of it: where it does not, no match or partial match begins where it
    does (`str.startswith` for one character)."""
    char = _one_lead(leads)
    if char is not None:
        return f"{text}.startswith({literal(char)})"
    return f"{_leads_pattern(parts, leads, hint)}.match({text}) is not None"


def _one_lead(leads: tuple[tuple[Ranges, ...], ...]) -> str | None:
    """The character every match begins with, where its leading characters are that one alone."""
    if all(len(classes) == 1 for classes in leads):
        chars = normalise([pair for classes in leads for pair in classes[0]])
        if size(chars) == 1:
            return chr(chars[0][0])
    return None


def _leads_pattern(parts: ModuleParts, leads: tuple[tuple[Ranges, ...], ...], hint: str) -> str:
    """The pattern of a match's leading characters, or a start of them that ends the text."""
    return parts.pattern_once(f"{hint} leads", lead_pattern(leads), flags="0")


def _take_unless_growing(out: CodeWriter, rank: int | None, may_grow: str, groups: str, at_end: bool) -> None:
    """A regex match `m`, if any: held back while more text may still change it (`may_grow`), else
    taken with its `groups`. With `at_end`, a match that starts at the end of the buffer is left
    untaken, as the engine's rule has it (a match starting where held-back text begins is not taken,
    and nothing is held back past the end): at the end of the stream an empty match there (``$``,
    ``1*?``) opens or closes nothing in the reference."""
    with out.block("if m is not None:"):
        out.line("start, end = m.span()")
        with out.block(f"if not eos and {may_grow}:"):
            out.line("hold = min(hold, start)")
        with out.block("elif start < n:" if at_end else "else:"):
            _take(out, rank, groups)


def _find(parts: ModuleParts, needle: str, length: int | None, *, since: str = "pos") -> str:
    """The expression for `buf.find(needle, since)`; `needle` is code, `length` its length if known.
    At the end of the stream the answer is remembered (`find_once`: a one-shot parse does not search
    its whole output again for each region); a long buffer is searched by `find_literal` then."""
    slot = parts.memo_slot()
    parts.need("scanning", "find_once")
    return f"find_once(memo, {slot}, buf, {needle}, {since}) if eos else buf.find({needle}, {since})"


def _streaming_find(parts: ModuleParts, needle: str, length: int | None) -> str:
    """The expression for `buf.find(needle, pos)` where nothing can be remembered (a loop over a
    delimiter's literals); a long buffer is searched by `find_literal`."""
    if length == 1:
        return f"buf.find({needle}, pos)"
    parts.need("scanning", "LONG_SCAN")
    parts.need("scanning", "find_literal")
    return f"buf.find({needle}, pos) if n - pos < LONG_SCAN else find_literal(buf, {needle}, pos)"


def _absent_in_order(out: CodeWriter, parts: ModuleParts, required: tuple[str, ...]) -> str:
    """The condition that `required` does not occur in turn from `pos` (each after the one before),
    writing the finds it needs first: no complete match can start at `pos` then. The first string's
    position is left in `found`, the others are searched from there, where they usually are soon.
    (There are at most three: see `required_literals`.)"""
    out.line(f"found = {_find(parts, literal(required[0]), len(required[0]))}")
    if len(required) == 1:
        return "found < 0"
    out.line("at = found")
    for before, text in zip(required, required[1:], strict=False):  # each after the one before it
        with out.block("if at >= 0:"):
            out.line(f"at = {_find(parts, literal(text), len(text), since=f'at + {len(before)}')}")
    return "at < 0"


def _in_order_text(required: tuple[str, ...]) -> str:
    return " then ".join(map(_comment_text, required))


def _comment_text(text: str) -> str:
    """Template text for a comment: its repr, so line breaks and control characters stay escaped."""
    return repr(text)
