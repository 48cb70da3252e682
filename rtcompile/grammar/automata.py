"""Finite automata over code points, for the regular parts of a template's grammar.

A grammar must never admit output the parser reads differently, so free text in a region may hold no
match of a delimiter the parser watches there, and may not end in the beginning of one either (a match
that starts in the text and runs on into what follows would be found first). That language is regular
but not easy to write by hand; it is built here as a DFA and written back as a regular expression:

    regex AST --(to_nfa)--> NFA --(clean_text)--> DFA --(to_regex)--> grammar regex (plain data)

Symbols are code points plus `END`, the end of the output (what `$` matches), so that a delimiter
that needs the output to end is alive at the end of a text and kept out of it. The regex ASTs read
here are `rtcompile.regex.ast` trees; what has no automaton form (lookbehind, backreferences, ...) is
refused by the caller (`rtcompile.grammar.skeleton`) before it gets here.

The regexes produced are plain data, the description's regex form (`rtcompile.runtime.grammar`):
("lit", text), ("set", ranges), ("seq", items), ("alt", items), ("rep", item, min, max).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rtcompile.regex.charsets import MAX_CODE_POINT, Ranges, complement, normalise

END = MAX_CODE_POINT + 1  # the symbol for "the output ends here"
ANY: Ranges = ((0, MAX_CODE_POINT),)

Regex = tuple[Any, ...]  # the description's regex form (see the module docstring)


# --------------------------------------------------------------------------- NFA


@dataclass
class NFA:
    """A Thompson NFA: per state, epsilon targets and (ranges, target) moves; one start, one accept."""

    eps: list[list[int]] = field(default_factory=list)
    moves: list[list[tuple[Ranges, int]]] = field(default_factory=list)
    start: int = 0
    accept: int = 0

    def state(self) -> int:
        self.eps.append([])
        self.moves.append([])
        return len(self.eps) - 1

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        seen = set(states)
        stack = list(seen)
        while stack:
            for target in self.eps[stack.pop()]:
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        return frozenset(seen)

    def finishing(self) -> frozenset[int]:
        """The states from which the accept state can be reached."""
        back: list[list[int]] = [[] for _ in self.eps]
        for s, targets in enumerate(self.eps):
            for t in targets:
                back[t].append(s)
        for s, moves in enumerate(self.moves):
            for _, t in moves:
                back[t].append(s)
        seen = {self.accept}
        stack = [self.accept]
        while stack:
            for s in back[stack.pop()]:
                if s not in seen:
                    seen.add(s)
                    stack.append(s)
        return frozenset(seen)

    def step(self, states: Iterable[int], symbol: int) -> frozenset[int]:
        out = [t for s in states for ranges, t in self.moves[s] if _member(ranges, symbol)]
        return self.closure(out)


def _member(ranges: Ranges, symbol: int) -> bool:
    i = bisect.bisect_right(ranges, (symbol, END + 1)) - 1
    return i >= 0 and ranges[i][0] <= symbol <= ranges[i][1]


def regex_nfa(pieces: Sequence[Regex]) -> NFA:
    """The NFA of the alternation of `pieces` (description-form regexes, where ("end",) is `$`)."""
    nfa = NFA()
    nfa.start, nfa.accept = nfa.state(), nfa.state()
    for piece in pieces:
        start, end = _build(nfa, piece)
        nfa.eps[nfa.start].append(start)
        nfa.eps[end].append(nfa.accept)
    return nfa


def _build(nfa: NFA, node: Regex) -> tuple[int, int]:
    kind = node[0]
    if kind in ("lit", "set", "end"):
        start = nfa.state()
        end = start
        symbols: list[Ranges]
        if kind == "lit":
            symbols = [((ord(c), ord(c)),) for c in node[1]]
        elif kind == "set":
            symbols = [node[1]]
        else:
            symbols = [((END, END),)]
        for ranges in symbols:
            nxt = nfa.state()
            nfa.moves[end].append((ranges, nxt))
            end = nxt
        return start, end
    if kind == "seq":
        start = end = nfa.state()
        for item in node[1]:
            s, e = _build(nfa, item)
            nfa.eps[end].append(s)
            end = e
        return start, end
    if kind == "alt":
        start, end = nfa.state(), nfa.state()
        for item in node[1]:
            s, e = _build(nfa, item)
            nfa.eps[start].append(s)
            nfa.eps[e].append(end)
        return start, end
    if kind == "dfa":
        rows, accepting = node[1]["rows"], node[1]["accept"]
        ids = [nfa.state() for _ in rows]
        end = nfa.state()
        for state, row in zip(ids, rows):
            for target, ranges in row:
                nfa.moves[state].append((ranges, ids[target]))
        for state in accepting:
            nfa.eps[ids[state]].append(end)
        return ids[0], end
    if kind == "rep":
        _, body, low, high = node
        start = end = nfa.state()
        for _ in range(low):
            s, e = _build(nfa, body)
            nfa.eps[end].append(s)
            end = e
        if high is None:
            s, e = _build(nfa, body)
            loop = nfa.state()
            nfa.eps[end].append(loop)
            nfa.eps[loop] += [s]
            nfa.eps[e].append(loop)
            return start, loop
        final = nfa.state()
        for _ in range(high - low):
            s, e = _build(nfa, body)
            nfa.eps[end] += [s, final]
            end = e
        nfa.eps[end].append(final)
        return start, final
    raise ValueError(f"no automaton for regex node {kind!r}")


# --------------------------------------------------------------------------- DFA


@dataclass
class DFA:
    """A DFA over `atoms` (disjoint code-point ranges covering every symbol); `moves[s][a]` is the
    state after atom `a` (None: no move). State 0 is the start."""

    atoms: list[tuple[int, int]]
    moves: list[list[int | None]]
    accepting: set[int]


def _atoms(range_sets: Iterable[Ranges]) -> list[tuple[int, int]]:
    cuts = {0, END + 1}
    for ranges in range_sets:
        for lo, hi in ranges:
            cuts.add(lo)
            cuts.add(hi + 1)
    points = sorted(cuts)
    return [(lo, hi - 1) for lo, hi in zip(points, points[1:])]


def clean_text(delimiters: NFA, *, alphabet: Ranges = ANY, extra: Sequence[Ranges] = ()) -> DFA:
    """The DFA of texts over `alphabet` in which no match of `delimiters` (an NFA without empty
    matches) starts: none is complete inside the text, and no suffix of it begins one.

    A state is the set of NFA states of matches begun in the text and still alive; a text is clean
    when that set is empty at its end, and a complete match sends it to a dead end. `extra` adds
    range sets to the atom partition (so that the DFA can be intersected with another built over
    them)."""
    atoms = _atoms([*(r for moves in delimiters.moves for r, _ in moves), alphabet, *extra])
    allowed = [_within(atom, alphabet) for atom in atoms]
    starting = delimiters.closure([delimiters.start])
    finishing = delimiters.finishing()
    index: dict[frozenset[int], int] = {frozenset(): 0}
    order: list[frozenset[int]] = [frozenset()]
    moves: list[list[int | None]] = []
    while len(moves) < len(order):
        current = order[len(moves)]
        row: list[int | None] = []
        for atom, ok in zip(atoms, allowed):
            if not ok:
                row.append(None)
                continue
            after = delimiters.step(current | starting, atom[0])
            if delimiters.accept in after:
                row.append(None)
                continue
            live = after & finishing
            if live not in index:
                index[live] = len(order)
                order.append(live)
            row.append(index[live])
        moves.append(row)
    return DFA(atoms, moves, {0})


def _within(atom: tuple[int, int], ranges: Ranges) -> bool:
    return any(lo <= atom[0] and atom[1] <= hi for lo, hi in ranges)


def regex_dfa(nfa: NFA, atoms: list[tuple[int, int]] | None = None) -> DFA:
    """The subset-construction DFA of `nfa` (anchored: it reads whole strings)."""
    if atoms is None:
        atoms = _atoms(r for moves in nfa.moves for r, _ in moves)
    start = nfa.closure([nfa.start])
    index = {start: 0}
    order = [start]
    moves: list[list[int | None]] = []
    while len(moves) < len(order):
        current = order[len(moves)]
        row: list[int | None] = []
        for atom in atoms:
            after = nfa.step(current, atom[0])
            if not after:
                row.append(None)
                continue
            if after not in index:
                index[after] = len(order)
                order.append(after)
            row.append(index[after])
        moves.append(row)
    return DFA(atoms, moves, {i for i, states in enumerate(order) if nfa.accept in states})


def intersect(first: DFA, second: DFA) -> DFA:
    """The product DFA (both must share the same atoms)."""
    assert first.atoms == second.atoms
    index = {(0, 0): 0}
    order = [(0, 0)]
    moves: list[list[int | None]] = []
    while len(moves) < len(order):
        a, b = order[len(moves)]
        row: list[int | None] = []
        for i in range(len(first.atoms)):
            x, y = first.moves[a][i], second.moves[b][i]
            if x is None or y is None:
                row.append(None)
                continue
            if (x, y) not in index:
                index[(x, y)] = len(order)
                order.append((x, y))
            row.append(index[(x, y)])
        moves.append(row)
    accepting = {i for i, (a, b) in enumerate(order) if a in first.accepting and b in second.accepting}
    return DFA(first.atoms, moves, accepting)


def is_empty(dfa: DFA) -> bool:
    return not _useful(dfa) or 0 not in _useful(dfa)


def _useful(dfa: DFA) -> set[int]:
    """States from which an accepting state can be reached."""
    useful = set(dfa.accepting)
    changed = True
    while changed:
        changed = False
        for s, row in enumerate(dfa.moves):
            if s not in useful and any(t in useful for t in row if t is not None):
                useful.add(s)
                changed = True
    return useful


def minimise(dfa: DFA) -> DFA:
    """Moore's partition refinement over the useful states (smaller regexes come out of it)."""
    useful = _useful(dfa)
    if 0 not in useful:
        return DFA(dfa.atoms, [[None] * len(dfa.atoms)], set())
    states = sorted(useful)
    block = {s: (s in dfa.accepting) for s in states}
    count = -1
    while True:
        signature = {
            s: (block[s], tuple(block.get(t) if t is not None and t in useful else None for t in dfa.moves[s]))
            for s in states
        }
        numbering: dict[object, int] = {}
        for s in states:
            numbering.setdefault(signature[s], len(numbering))
        new_block = {s: numbering[signature[s]] for s in states}
        if len(numbering) == count:
            break
        count = len(numbering)
        block = new_block  # type: ignore[assignment]
    renumber: dict[object, int] = {block[0]: 0}
    for s in states:
        renumber.setdefault(block[s], len(renumber))
    moves: list[list[int | None]] = [[None] * len(dfa.atoms) for _ in renumber]
    accepting = set()
    for s in states:
        row = moves[renumber[block[s]]]
        for i, t in enumerate(dfa.moves[s]):
            row[i] = renumber[block[t]] if t is not None and t in useful else None
        if s in dfa.accepting:
            accepting.add(renumber[block[s]])
    return DFA(dfa.atoms, moves, accepting)


# --------------------------------------------------------------------------- DFA -> regex


def to_regex(dfa: DFA) -> Regex:
    """A regex for the DFA's language, by state elimination (cheapest state first)."""
    dfa = minimise(dfa)
    start, final = -1, -2
    edges: dict[tuple[int, int], Regex] = {(start, 0): EMPTY}
    for s, row in enumerate(dfa.moves):
        by_target: dict[int, list[tuple[int, int]]] = {}
        for atom, t in zip(dfa.atoms, row):
            if t is not None and atom[0] != END:
                by_target.setdefault(t, []).append(atom)
        for t, atoms in by_target.items():
            edges[(s, t)] = char_set(normalise(atoms))
        if s in dfa.accepting:
            edges[(s, final)] = EMPTY
    remaining = set(range(len(dfa.moves)))
    while remaining:

        def cost(k: int) -> tuple[int, int]:
            ins = sum(1 for (a, b) in edges if b == k and a != k)
            outs = sum(1 for (a, b) in edges if a == k and b != k)
            return ins * outs, k

        k = min(remaining, key=cost)
        remaining.discard(k)
        loop = edges.pop((k, k), None)
        ins = [(a, r) for (a, b), r in edges.items() if b == k]
        outs = [(b, r) for (a, b), r in edges.items() if a == k]
        for a, _ in ins:
            del edges[(a, k)]
        for b, _ in outs:
            del edges[(k, b)]
        middle = star(loop) if loop is not None else EMPTY
        for a, r_in in ins:
            for b, r_out in outs:
                path = seq([r_in, middle, r_out])
                old = edges.get((a, b))
                edges[(a, b)] = path if old is None else alt([old, path])
    return edges.get((start, final), NOTHING)


# --------------------------------------------------------------------------- regex constructors

EMPTY: Regex = ("seq", ())
NOTHING: Regex = ("set", ())


def char_set(ranges: Ranges) -> Regex:
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return ("lit", chr(ranges[0][0]))
    return ("set", ranges)


def seq(items: Iterable[Regex]) -> Regex:
    flat: list[Regex] = []
    for item in items:
        if item == NOTHING:
            return NOTHING
        parts = item[1] if item[0] == "seq" else (item,)
        for part in parts:
            if flat and part[0] == "lit" and flat[-1][0] == "lit":
                flat[-1] = ("lit", flat[-1][1] + part[1])
            else:
                flat.append(part)
    return flat[0] if len(flat) == 1 else ("seq", tuple(flat))


def alt(items: Iterable[Regex]) -> Regex:
    flat: list[Regex] = []
    singles: list[tuple[int, int]] = []
    optional = False
    for item in items:
        for part in item[1] if item[0] == "alt" else (item,):
            if part == EMPTY:
                optional = True
            elif part[0] == "set" or (part[0] == "lit" and len(part[1]) == 1):
                singles += part[1] if part[0] == "set" else [(ord(part[1]), ord(part[1]))]
            elif part not in flat:
                flat.append(part)
    if singles:
        flat.insert(0, char_set(normalise(singles)))
    if not flat:
        return EMPTY if optional else NOTHING
    body = flat[0] if len(flat) == 1 else ("alt", tuple(flat))
    return ("rep", body, 0, 1) if optional else body


def star(item: Regex) -> Regex:
    if item == EMPTY:
        return EMPTY
    if item[0] == "rep" and item[2] in (0, 1) and item[3] in (1, None):
        return ("rep", item[1], 0, None)
    return ("rep", item, 0, None)


def complement_set(ranges: Ranges) -> Ranges:
    return complement(normalise(ranges))


# --------------------------------------------------------------------------- structural safety


def threads_safe(body: Regex, tail: Regex, delimiters: NFA) -> bool:
    """Whether no match of `delimiters` can begin inside a text of `body` when `tail` follows.

    Matches may start at any character of the body (not in the tail, which is where the intended
    delimiter is) and run on into the tail; a match that is still alive at the end of the tail
    counts as found (the text after it is unknown). `body` over-approximates what a grammar writes
    (JSON punctuation and whitespace around strings, say), so a "safe" answer holds for all of it."""
    parts = [regex_nfa([body]), regex_nfa([tail])]
    starting = delimiters.closure([delimiters.start])
    finishing = delimiters.finishing()
    atoms = _atoms(
        [*(r for nfa in parts for moves in nfa.moves for r, _ in moves), *(r for m in delimiters.moves for r, _ in m)]
    )
    first = (0, parts[0].start, frozenset[int]())
    seen = {first}
    stack = [first]
    while stack:
        part, state, threads = stack.pop()
        nfa = parts[part]
        here = nfa.closure([state])
        followers: list[tuple[int, int, frozenset[int]]] = []
        if part == 0 and parts[0].accept in here:
            followers.append((1, parts[1].start, threads))
        if part == 1 and parts[1].accept in here and threads:
            return False  # the tail ended with a match still possible
        for atom in atoms:
            targets = {t for s in here for ranges, t in nfa.moves[s] if _member(ranges, atom[0])}
            if not targets:
                continue
            begun = threads | starting if part == 0 else threads
            after = delimiters.step(begun, atom[0])
            if delimiters.accept in after:
                return False
            live = after & finishing
            followers += [(part, t, live) for t in targets]
        for item in followers:
            if item not in seen:
                seen.add(item)
                stack.append(item)
    return True


def first_chars(node: Regex) -> Ranges:
    """The characters a non-empty match of `node` can start with (END excluded)."""
    nfa = regex_nfa([node])
    here = nfa.closure([nfa.start])
    return normalise(r for s in here for ranges, _ in nfa.moves[s] for r in ranges if r[0] != END)


def extension_chars(emitted: Regex, delimiter: NFA) -> Ranges:
    """Characters that, written right after a text of `emitted` (a sublanguage of the delimiter),
    could make the delimiter's match run on past it: what must not come next."""
    emit = regex_nfa([emitted])
    finishing = delimiter.finishing()
    atoms = _atoms([*(r for m in emit.moves for r, _ in m), *(r for m in delimiter.moves for r, _ in m)])
    start = (emit.start, delimiter.closure([delimiter.start]))
    seen = {start}
    stack = [start]
    out: list[tuple[int, int]] = []
    while stack:
        state, threads = stack.pop()
        here = emit.closure([state])
        if emit.accept in here:
            for atom in atoms:
                if atom[0] != END and delimiter.step(threads, atom[0]) & finishing:
                    out.append(atom)
        for atom in atoms:
            targets = {t for s in here for ranges, t in emit.moves[s] if _member(ranges, atom[0])}
            if targets:
                after = delimiter.step(threads, atom[0])
                for t in targets:
                    item = (t, after)
                    if item not in seen:
                        seen.add(item)
                        stack.append(item)
    return normalise(out)


def nullable(node: Regex) -> bool:
    nfa = regex_nfa([node])
    return nfa.accept in nfa.closure([nfa.start])


def prefixes(node: Regex) -> Regex:
    """The non-empty prefixes of the texts of `node` (complete ones included), as a regex."""
    kind = node[0]
    if kind == "lit":
        return alt([("lit", node[1][:i]) for i in range(1, len(node[1]) + 1)])
    if kind == "set":
        return node
    if kind == "end":
        return NOTHING
    if kind == "alt":
        return alt(prefixes(item) for item in node[1])
    if kind == "seq":
        items = node[1]
        return alt(seq([*items[:i], prefixes(items[i])]) for i in range(len(items)))
    if kind == "rep":
        _, body, _, high = node
        before = ("rep", body, 0, None if high is None else high - 1)
        return seq([before, prefixes(body)])
    raise ValueError(f"no prefixes for regex node {kind!r}")


def dfa_rows(dfa: DFA) -> dict[str, Any]:
    """A minimised DFA as plain data: per state, (low, high, target) moves; and the accepting states."""
    dfa = minimise(dfa)
    rows = []
    for row in dfa.moves:
        by_target: dict[int, list[tuple[int, int]]] = {}
        for atom, target in zip(dfa.atoms, row):
            if target is not None and atom[0] != END:
                by_target.setdefault(target, []).append(atom)
        rows.append(tuple((target, normalise(atoms)) for target, atoms in sorted(by_target.items())))
    return {"rows": tuple(rows), "accept": tuple(sorted(dfa.accepting))}
