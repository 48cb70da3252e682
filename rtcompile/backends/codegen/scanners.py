"""One scanner function per parser state, with every watched delimiter inlined.

A scanner answers the engine's question for its state (see `rtcompile.runtime.engine.ScanResult`):
literal delimiters are found with `str.find` and held back by a precomputed set of their proper
prefixes; regex delimiters use their exact stdlib translation plus the pattern that reproduces
`regex`'s partial matching. The plan fixes the watch order, so a watch's index is its tie-break rank.
"""

from __future__ import annotations

from rtcompile.backends.codegen.parts import ModuleParts
from rtcompile.backends.codegen.writer import CodeWriter, literal
from rtcompile.frontend.errors import format_path
from rtcompile.ir import Template
from rtcompile.plan import ParserState, Watch
from rtcompile.regex.first_chars import char_class, starts_at_buffer_start


def state_hint(state: ParserState, template: Template) -> str:
    """The word a state's functions are named by: `outside`, or `in_<field>`."""
    return "outside" if state.field is None else f"in {template.fields[state.field].name}"


def watch_hint(watch: Watch, template: Template) -> str:
    return f"{template.fields[watch.field].name} {'open' if watch.opens else 'close'}"


def scanner(parts: ModuleParts, state: ParserState, template: Template) -> tuple[str, str]:
    """The scanner function for `state`: its name and its code."""
    name = parts.names.new("_scan", state_hint(state, template))
    out = CodeWriter()
    with out.block(f"def {name}(buf: str, pos: int, eos: bool) -> ScanResult:"):
        if len(state.watches) == 1:
            _single_watch(out, parts, state, template)
        else:
            _several_watches(out, parts, state, template)
    return name, out.code()


def _single_watch(out: CodeWriter, parts: ModuleParts, state: ParserState, template: Template) -> None:
    """One delimiter: its first committable match is the answer, with nothing else to weigh it against."""
    watch = state.watches[0]
    out.comment(f"{state.describe(template)}: {format_path(watch.where)}")  # format_path quotes names
    out.line("n = len(buf)")
    if watch.delimiter.is_literal:
        _literal_watch(out, parts, watch, template, single=True)
    else:
        _regex_watch(out, parts, watch, template, single=True)
    out.line("return -1, 0, 0, NO_GROUPS, hold")


def _several_watches(out: CodeWriter, parts: ModuleParts, state: ParserState, template: Template) -> None:
    """Every delimiter searched; the earliest match wins, then the longest, then the plan's order.

    Watches are searched in the plan's tie-break order, so on an exact tie the match found first
    stays best: no rank needs comparing at run time.
    """
    out.comment(state.describe(template))
    out.line("n = len(buf)")
    out.line("hold = n")
    if state.watches:
        out.line("best = -1")
        out.line("best_start = best_end = 0")
        out.line("best_groups: dict[str, str | None] = NO_GROUPS")
    for rank, watch in enumerate(state.watches):
        out.line()
        out.comment(format_path(watch.where))  # format_path quotes names: no line breaks
        if watch.delimiter.is_literal:
            _literal_watch(out, parts, watch, template, rank=rank)
        else:
            _regex_watch(out, parts, watch, template, rank=rank)
    if not state.watches:
        out.line("return -1, 0, 0, NO_GROUPS, hold  # nothing to watch: all text belongs to the region")
        return
    out.line()
    with out.block("if best >= 0 and best_start >= hold:"):
        out.line("best = -1  # a pending delimiter starts no later and may be the real one")
    out.line("return best, best_start, best_end, best_groups, hold")


def plain_check(parts: ModuleParts, state: ParserState, template: Template) -> str | None:
    """A function telling whether a chunk can contain no delimiter start at all in this state."""
    starts = state.delimiter_starts
    if starts is None:
        return None
    if not starts:
        condition = "True  # nothing to watch: all text belongs to the region"
    elif len(starts) <= 3:
        condition = " and ".join(f"{literal(chr(c))} not in text" for c in sorted(starts))
    else:
        pattern = parts.pattern(f"{state_hint(state, template)} starts", char_class(starts), flags="0")
        condition = f"{pattern}.search(text) is None"
    name = parts.names.new("_plain", state_hint(state, template))
    parts.scanners.append(f"def {name}(text: str) -> bool:\n    return {condition}")
    return name


def _take(out: CodeWriter, rank: int | None, groups: str) -> None:
    """Commit the match in `start`/`end`: return it (a single watch), or keep it if it beats the best."""
    if rank is None:
        out.line(f"return 0, start, end, {groups}, n")
        return
    assignment = f"best, best_start, best_end, best_groups = {rank}, start, end, {groups}"
    if rank == 0:
        out.line(assignment)  # the first watch searched: nothing to beat yet
        return
    with out.block("if best < 0 or start < best_start or (start == best_start and end > best_end):"):
        out.line(assignment)


def _literal_watch(
    out: CodeWriter, parts: ModuleParts, watch: Watch, template: Template, *, single: bool = False, rank: int = 0
) -> None:
    delimiter = watch.delimiter
    assert delimiter.literals is not None
    hint = watch_hint(watch, template)
    take_rank = None if single else rank
    by_length = sorted(delimiter.literals, key=len, reverse=True)
    pending = [lit for lit in by_length if len(lit) > 1]  # a one-character literal is never pending
    if single:
        out.line("hold = n")
    literals = ""
    if len(by_length) == 1:
        out.line(f"start = buf.find({literal(by_length[0])}, pos)")
        out.line(f"end = start + {len(by_length[0])}")
    else:
        literals = parts.constant(f"{hint} literals", literal(tuple(by_length)))
        out.line("start = end = -1")
        with out.block(f"for lit in {literals}:  # longest first: at one position the longest literal wins"):
            out.line("at = buf.find(lit, pos)")
            with out.block("if at >= 0 and (start < 0 or at < start):"):
                out.line("start, end = at, at + len(lit)")
    with out.block("if start >= 0:"):
        if delimiter.can_extend:
            with out.block("if not eos and end == n:"):
                out.line("hold = min(hold, start)  # a longer literal of the set may still complete")
            with out.block("else:"):
                _take(out, take_rank, "NO_GROUPS")
        else:
            _take(out, take_rank, "NO_GROUPS")
    if len(pending) == 1:
        parts.need("scanning", "literal_hold")
        with out.block("elif not eos:"):
            out.line(f"hold = min(hold, literal_hold(buf, pos, {literal(pending[0])}))")
    elif pending:
        parts.need("scanning", "literal_set_hold")
        names = literals if pending == by_length else parts.constant(f"{hint} pending", literal(tuple(pending)))
        with out.block("elif not eos:"):
            out.line(f"hold = min(hold, literal_set_hold(buf, pos, {names}))")


def _regex_watch(
    out: CodeWriter, parts: ModuleParts, watch: Watch, template: Template, *, single: bool = False, rank: int = 0
) -> None:
    long_literal = parts.long_literal(watch.delimiter.pattern)
    if long_literal is not None:
        _long_literal_watch(out, parts, long_literal, watch_hint(watch, template), single, rank)
        return
    full, prefix = parts.stdlib_regex(watch.delimiter.pattern, watch_hint(watch, template), watch.where)
    # A pattern opening with `.*?` matches later only if it matches at `pos`: one attempt, not n.
    search, partial = ("match", "partial_match") if full in parts.match_only else ("search", "partial_search")
    if not parts.uses_regex(full):
        parts.need("partial", partial)
    parts.need("scanning", "regex_can_grow")
    if single:
        out.line("hold = n")
    if parts.uses_regex(full):
        _regex_module_watch(out, full, None if single else rank)
        return
    # A pattern that can only match at the very start of the buffer cannot match (or partially
    # match, short of the end) once scanning has moved on; `re` would still try every position.
    if starts_at_buffer_start(watch.delimiter):
        with out.block("if pos > 0:"):
            out.line("m = None")
        eos_test = "elif eos:"
    else:
        eos_test = "if eos:"
    with out.block(eos_test):
        out.line(f"m = {full}.{search}(buf, pos)")
    with out.block("else:"):
        out.line(f"m, partial_at = {partial}({full}, {prefix}, buf, pos)")
        with out.block("if partial_at is not None:"):
            out.line("hold = min(hold, partial_at)")
    with out.block("if m is not None:"):
        out.line("start, end = m.span()")
        with out.block(f"if not eos and regex_can_grow({full}, buf, m):"):
            out.line("hold = min(hold, start)")
        with out.block("else:"):
            _take(out, None if single else rank, parts.groups_code(full))


def _regex_module_watch(out: CodeWriter, pattern: str, rank: int | None) -> None:
    """A delimiter matched with the `regex` module (no exact stdlib translation): exactly as the
    interpreter and the reference search it, partial matches included."""
    out.comment("no exact stdlib translation: matched with the regex module, as the reference does")
    out.line(f"m = {pattern}.search(buf, pos) if eos else {pattern}.search(buf, pos, partial=True)")
    with out.block("if m is not None:"):
        out.line("start, end = m.span()")
        with out.block(f"if not eos and (m.partial or regex_can_grow({pattern}, buf, m)):"):
            out.line("hold = min(hold, start)")
        with out.block("else:"):
            _take(out, rank, "m.groupdict()")


def _long_literal_watch(out: CodeWriter, parts: ModuleParts, text: str, hint: str, single: bool, rank: int) -> None:
    """A pattern that is one long literal: found with `str.find`, held back like `regex` holds it (a
    match at the very end may still grow for all the engine knows; a proper prefix at the end is
    a partial match)."""
    parts.need("scanning", "literal_hold")
    name = parts.constant(f"{hint} literal", literal(text))
    if single:
        out.line("hold = n")
    out.line(f"start = buf.find({name}, pos)")
    with out.block("if start >= 0:"):
        out.line(f"end = start + {len(text)}")
        with out.block("if not eos and end == n:"):
            out.line("hold = min(hold, start)")
        with out.block("else:"):
            _take(out, None if single else rank, "NO_GROUPS")
    with out.block("elif not eos:"):
        out.line(f"hold = min(hold, literal_hold(buf, pos, {name}))")
