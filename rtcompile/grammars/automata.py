"""Finite automata over code points, for the regular parts of a template's grammar.

A grammar must never admit output the parser reads differently. Two questions decide that, and both
are answered here with automata rather than by hand:

* *Clean text* (`clean_text`): free text in a region may hold no match of a delimiter the parser
  watches there, and may not end in the beginning of one either (a match that starts in the text and
  runs on into what follows would be found first). That language is regular; it is built as a DFA.
* *Where a delimiter's match ends* (`delimiter_match`): the grammar writes a delimiter, the parser
  finds it with the `regex` module, whose backtracking prefers some matches to others (greedy
  repeats the longer, lazy ones the shorter, alternatives the earlier). Running the pattern as a
  leftmost-first automaton (the order-preserving subset construction of RE2's DFA) over every text
  the grammar may write says whether the parser's match is exactly that text, and which characters
  may not come next (they would make it longer).

Symbols are code points plus `END`, the end of the output (what `$` matches). The regexes read here
are the skeleton's plain-data form (`rtcompile.runtime.grammar`): ("lit", text), ("set", ranges),
("seq", items), ("alt", items), ("rep", item, min, max), ("end",), and ("dfa", rows) for a DFA built
here; the leftmost-first automaton is built from `rtcompile.regex.ast` trees.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rtcompile.regex import ast as rx
from rtcompile.regex.charsets import MAX_CODE_POINT, Ranges, complement, normalise

END = MAX_CODE_POINT + 1  # the symbol for "the output ends here"
ANY: Ranges = ((0, MAX_CODE_POINT),)

Regex = tuple[Any, ...]  # the plain-data regex form (see the module docstring)

EMPTY: Regex = ("seq", ())
NOTHING: Regex = ("set", ())


class NoAutomaton(Exception):
    """A construct the automata here do not model (the caller turns it into a refusal)."""


# --------------------------------------------------------------------------- regex constructors


def char_set(ranges: Ranges) -> Regex:
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return ("lit", chr(ranges[0][0]))
    return ("set", ranges)


def seq(items: Iterable[Regex]) -> Regex:
    """A sequence, flattened, with adjacent literals merged (and NOTHING absorbing)."""
    flat: list[Regex] = []
    for item in items:
        if item == NOTHING:
            return NOTHING
        for part in item[1] if item[0] == "seq" else (item,):
            if flat and part[0] == "lit" and flat[-1][0] == "lit":
                flat[-1] = ("lit", flat[-1][1] + part[1])
            else:
                flat.append(part)
    return flat[0] if len(flat) == 1 else ("seq", tuple(flat))


def alt(items: Iterable[Regex]) -> Regex:
    """An alternation, flattened, single characters merged into one set, EMPTY as `?`."""
    flat: list[Regex] = []
    seen: set[Regex] = set()  # (a list's `in` made long alternations quadratic to build)
    singles: list[tuple[int, int]] = []
    optional = False
    for item in items:
        for part in item[1] if item[0] == "alt" else (item,):
            if part == EMPTY:
                optional = True
            elif part[0] == "set" or (part[0] == "lit" and len(part[1]) == 1):
                singles += part[1] if part[0] == "set" else [(ord(part[1]), ord(part[1]))]
            elif _is_new(part, seen, flat):
                flat.append(part)
    if singles:
        flat.insert(0, char_set(normalise(singles)))
    if not flat:
        return EMPTY if optional else NOTHING
    body = flat[0] if len(flat) == 1 else ("alt", tuple(flat))
    return ("rep", body, 0, 1) if optional else body


def _is_new(part: Regex, seen: set[Regex], flat: list[Regex]) -> bool:
    """Whether `part` is not among the branches kept so far (recorded in `seen` if new); a part holding
    a DFA's table (a dict) cannot be hashed and is compared with each branch."""
    try:
        if part in seen:
            return False
        seen.add(part)
        return True
    except TypeError:
        return part not in flat


def without_end(node: Regex) -> Regex:
    """`node` less the texts that need the output to end (`$` becomes NOTHING)."""
    kind = node[0]
    if kind == "end":
        return NOTHING
    if kind == "seq":
        return seq(without_end(item) for item in node[1])
    if kind == "alt":
        return alt(without_end(item) for item in node[1])
    if kind == "rep":
        body = without_end(node[1])
        if body == NOTHING:
            return EMPTY if node[2] == 0 else NOTHING
        return ("rep", body, node[2], node[3])
    return node


def prefixes(node: Regex) -> Regex:
    """The non-empty prefixes of the texts of `node` (whole texts included; `$` ends a text)."""
    kind = node[0]
    if kind == "lit":  # a(b(c)?)? for "abc"
        text = node[1]
        out: Regex = NOTHING
        for char in reversed(text):
            out = seq([("lit", char), ("rep", out, 0, 1)]) if out != NOTHING else ("lit", char)
        return out
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
    raise NoAutomaton(f"no prefixes for regex node {kind!r}")


def right_quotient(node: Regex, symbols: Ranges) -> Regex:
    """The texts u such that u followed by one of `symbols` is a text of `node` (END a symbol)."""
    kind = node[0]
    if kind == "lit":
        text = node[1]
        return ("lit", text[:-1]) if text and _in(ord(text[-1]), symbols) else NOTHING
    if kind == "set":
        return EMPTY if overlap(node[1], symbols) else NOTHING
    if kind == "end":
        return EMPTY if _in(END, symbols) else NOTHING
    if kind == "alt":
        return alt(right_quotient(item, symbols) for item in node[1])
    if kind == "seq":
        items = node[1]
        if not items:
            return NOTHING
        head, last = seq(items[:-1]), items[-1]
        options = [seq([head, right_quotient(last, symbols)])]
        if nullable(last):
            options.append(right_quotient(head, symbols))
        return alt(options)
    if kind == "rep":
        _, body, low, high = node
        if high == 0:
            return NOTHING
        before = ("rep", body, max(low - 1, 0), None if high is None else high - 1)
        return seq([before, right_quotient(body, symbols)])
    raise NoAutomaton(f"no quotient for regex node {kind!r}")


def non_empty(node: Regex) -> Regex:
    """`node` without the empty text."""
    kind = node[0]
    if kind == "lit":
        return node if node[1] else NOTHING
    if kind in ("set", "end"):
        return node
    if kind == "alt":
        return alt(non_empty(item) for item in node[1])
    if kind == "seq":
        items = node[1]
        if not items:
            return NOTHING
        first, rest = items[0], seq(items[1:])
        options = [seq([non_empty(first), rest])]
        if nullable(first):
            options.append(non_empty(rest))
        return alt(options)
    if kind == "rep":
        _, body, low, high = node
        body = non_empty(body)
        if body == NOTHING or high == 0:
            return NOTHING
        return ("rep", body, max(low, 1), high)
    raise NoAutomaton(f"no non-empty form for regex node {kind!r}")


def _in(point: int, ranges: Ranges) -> bool:
    return any(lo <= point <= hi for lo, hi in ranges)


def overlap(first: Iterable[tuple[int, int]], second: Iterable[tuple[int, int]]) -> bool:
    others = list(second)
    return any(lo <= o_hi and o_lo <= hi for lo, hi in first for o_lo, o_hi in others)


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
        return self.closure([t for s in states for ranges, t in self.moves[s] if member(ranges, symbol)])

    def ranges_from(self, states: Iterable[int]) -> list[tuple[int, int]]:
        return [r for s in states for ranges, _ in self.moves[s] for r in ranges]


def member(ranges: Ranges, symbol: int) -> bool:
    i = bisect.bisect_right(ranges, (symbol, END + 1)) - 1
    return i >= 0 and ranges[i][0] <= symbol <= ranges[i][1]


def regex_nfa(pieces: Sequence[Regex]) -> NFA:
    """The NFA of the alternation of `pieces` (plain-data regexes)."""
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
        start = end = nfa.state()
        if kind == "lit":
            symbols: list[Ranges] = [((ord(c), ord(c)),) for c in node[1]]
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
        for state, row in zip(ids, rows, strict=True):
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
            nfa.eps[loop].append(s)
            nfa.eps[e].append(loop)
            return start, loop
        final = nfa.state()
        for _ in range(high - low):
            s, e = _build(nfa, body)
            nfa.eps[end] += [s, final]
            end = e
        nfa.eps[end].append(final)
        return start, final
    raise NoAutomaton(f"no automaton for regex node {kind!r}")


def first_chars(node: Regex) -> Ranges:
    """The characters a non-empty text of `node` can start with (END left out)."""
    nfa = regex_nfa([node])
    here = nfa.closure([nfa.start])
    return normalise(r for r in nfa.ranges_from(here) if r[0] != END)


def nullable(node: Regex) -> bool:
    """Whether `node` admits the empty text: read off its structure (an automaton is built only for a
    DFA node; building one for every node of a quotient made long literal lists cubic to compile)."""
    kind = node[0]
    if kind == "lit":
        return not node[1]
    if kind in ("set", "end"):
        return False
    if kind == "seq":
        return all(nullable(item) for item in node[1])
    if kind == "alt":
        return any(nullable(item) for item in node[1])
    if kind == "rep":
        return node[2] == 0 or nullable(node[1])
    nfa = regex_nfa([node])
    return nfa.accept in nfa.closure([nfa.start])


# --------------------------------------------------------------------------- clean text (DFA)


def _atoms(range_sets: Iterable[Iterable[tuple[int, int]]]) -> list[tuple[int, int]]:
    """The coarsest partition of every symbol (END included) that no range of `range_sets` splits."""
    cuts = {0, END + 1}
    for ranges in range_sets:
        for lo, hi in ranges:
            cuts.add(lo)
            cuts.add(hi + 1)
    points = sorted(cuts)
    return [(lo, hi - 1) for lo, hi in zip(points, points[1:], strict=False)]


Rows = dict[str, Any]  # a DFA as plain data: {"rows": per state ((target, ranges), ...), "accept": states}
Follow = tuple[Any, ...]  # what comes after a text: see `clean_text`


@dataclass
class _Texts:
    """The subset construction behind `clean_text`, before deciding which states may end a text."""

    rows: list[list[tuple[int, int, int]]]  # per state: (low, high, target), sorted
    states: list[tuple[frozenset[int], bool]]  # per state: live `avoid` threads, whether `base` accepts
    avoid: NFA
    finishing: frozenset[int]
    # What `clean_text` worked out already: the states that may end a text, per `follow`, and the
    # minimal DFA per such set (a skeleton asks for the same text before many delimiters, and
    # different `follow`s often leave the same states accepting).
    accepting: dict[Follow | None, frozenset[int]] = field(default_factory=dict)
    minimal: dict[frozenset[int], Rows] = field(default_factory=dict)


_TEXTS: dict[str, _Texts] = {}


def clean_text(avoid: Sequence[Regex], base: Regex | None = None, follow: Follow | None = None) -> Rows:
    """The minimal DFA (plain data) of texts of `base` (any text when None) in which no text of
    `avoid` starts, whatever comes next: none is complete inside the text, and no suffix of the
    text begins one.

    `follow` says more about what comes next, and the text may then end in the beginning of an
    `avoid` text that what follows is sure to kill: ("chars", ranges) one of these characters,
    ("text", text) that text, ("final", text) that text and the end of the output, ("end",) the
    end of the output.

    A state is the set of `avoid` NFA states of matches begun in the text and still alive (with the
    state of `base`); a complete match is a dead end. The construction is shared by every `follow`."""
    key = repr((list(avoid), base))
    texts = _TEXTS.get(key)
    if texts is None:
        if len(_TEXTS) > 256:
            _TEXTS.clear()
        texts = _TEXTS[key] = _construct(avoid, base)
    accepting = texts.accepting.get(follow)
    if accepting is None:
        accepting = texts.accepting[follow] = frozenset(
            i
            for i, (threads, accepts) in enumerate(texts.states)
            if accepts and _killed(texts.avoid, texts.finishing, threads, follow)
        )
    minimal = texts.minimal.get(accepting)
    if minimal is None:
        minimal = texts.minimal[accepting] = _minimise(texts.rows, accepting)
    return dict(minimal)  # the caller's own dict (its values are tuples: nothing else to copy)


def _construct(avoid: Sequence[Regex], base: Regex | None) -> _Texts:
    delimiters = regex_nfa(avoid)
    base_nfa = regex_nfa([base if base is not None else ("rep", ("set", ANY), 0, None)])
    starting = delimiters.closure([delimiters.start])
    finishing = delimiters.finishing()
    first = (frozenset[int](), base_nfa.closure([base_nfa.start]))
    index = {first: 0}
    order = [first]
    rows: list[list[tuple[int, int, int]]] = []
    while len(rows) < len(order):
        threads, here = order[len(rows)]
        begun = threads | starting
        row: list[tuple[int, int, int]] = []
        # only the characters that matter in this state are told apart
        for lo, hi in _atoms([delimiters.ranges_from(begun), base_nfa.ranges_from(here)]):
            if lo > MAX_CODE_POINT:
                continue
            there = base_nfa.step(here, lo)
            after = delimiters.step(begun, lo)
            if not there or delimiters.accept in after:
                continue
            key = (after & finishing, there)
            if key not in index:
                index[key] = len(order)
                order.append(key)
            row.append((lo, hi, index[key]))
        rows.append(row)
    states = [(threads, base_nfa.accept in here) for threads, here in order]
    return _Texts(rows, states, delimiters, finishing)


def _minimise(rows: list[list[tuple[int, int, int]]], accepting: frozenset[int]) -> Rows:
    """Moore's partition refinement over the states that can reach an accepting one; plain data."""
    useful = set(accepting)
    changed = True
    while changed:
        changed = False
        for s, row in enumerate(rows):
            if s not in useful and any(t in useful for _, _, t in row):
                useful.add(s)
                changed = True
    if 0 not in useful:
        return {"rows": ((),), "accept": ()}
    states = sorted(useful)
    block = {s: int(s in accepting) for s in states}
    count = len(set(block.values()))
    while True:
        signature = {s: (block[s], _merged(rows[s], block)) for s in states}
        numbering: dict[object, int] = {}
        for s in states:
            numbering.setdefault(signature[s], len(numbering))
        block = {s: numbering[signature[s]] for s in states}
        if len(numbering) == count:
            break
        count = len(numbering)
    renumber: dict[int, int] = {block[0]: 0}
    for s in states:
        renumber.setdefault(block[s], len(renumber))
    out: list[tuple[tuple[int, Ranges], ...]] = [()] * len(renumber)
    done: set[int] = set()
    for s in states:
        new = renumber[block[s]]
        if new in done:
            continue
        done.add(new)
        by_target: dict[int, list[tuple[int, int]]] = {}
        for lo, hi, target in rows[s]:
            if target in block:
                by_target.setdefault(renumber[block[target]], []).append((lo, hi))
        out[new] = tuple((target, normalise(ranges)) for target, ranges in sorted(by_target.items()))
    accept = tuple(sorted({renumber[block[s]] for s in states if s in accepting}))
    return {"rows": tuple(out), "accept": accept}


def _merged(row: list[tuple[int, int, int]], block: dict[int, int]) -> tuple[tuple[int, int, int], ...]:
    """A row's moves by target block, adjacent ranges of one block merged (the state's signature)."""
    out: list[tuple[int, int, int]] = []
    for lo, hi, target in row:
        if target not in block:
            continue
        b = block[target]
        if out and out[-1][2] == b and out[-1][1] + 1 == lo:
            out[-1] = (out[-1][0], hi, b)
        else:
            out.append((lo, hi, b))
    return tuple(out)


def _killed(nfa: NFA, finishing: frozenset[int], threads: frozenset[int], follow: Follow | None) -> bool:
    """Whether no match begun in the text (`threads`, alive at its end) can survive what follows."""
    if not threads:
        return True
    if follow is None:
        return False
    if follow[0] == "chars":
        for atom in _atoms([nfa.ranges_from(threads), follow[1]]):
            if _in(atom[0], follow[1]) and nfa.step(threads, atom[0]) & finishing:
                return False
        return True
    for symbol in _symbols(follow):
        threads = nfa.step(threads, symbol)
        if nfa.accept in threads:
            return False
        threads &= finishing
    return follow[0] != "text" or not threads


def _symbols(follow: Follow) -> list[int]:
    if follow[0] == "end":
        return [END]
    return [ord(c) for c in follow[1]] + ([END] if follow[0] == "final" else [])


@functools.lru_cache(maxsize=1024)  # a skeleton asks for it per delimiter a text may run into
def danger(avoid: Regex, follow: Follow | None) -> Regex:
    """The non-empty text endings `clean_text` keeps out for `follow` (its `_killed` as a regex),
    for llguidance's `~` terminals: what could begin an `avoid` text that survives what follows."""
    if follow is None:
        return prefixes(avoid)
    if follow[0] == "chars":
        return non_empty(right_quotient(prefixes(avoid), follow[1]))
    symbols = _symbols(follow)
    options = [_quotient(avoid, symbols[:count]) for count in range(1, len(symbols) + 1)]
    if follow[0] == "text":  # a match still alive after the text may go on in what comes next
        options.append(_quotient(prefixes(avoid), symbols))
    return non_empty(alt(options))


def _quotient(node: Regex, symbols: list[int]) -> Regex:
    for symbol in reversed(symbols):
        node = right_quotient(node, ((symbol, symbol),))
    return node


def determinize(node: Regex) -> dict[str, Any]:
    """A DFA of a regex (END a symbol like any other), as plain data (not minimised). Each state's
    moves are split on the characters that matter there only, so large classes stay cheap."""
    nfa = regex_nfa([node])
    first = nfa.closure([nfa.start])
    index = {first: 0}
    order = [first]
    rows: list[tuple[tuple[int, Ranges], ...]] = []
    while len(rows) < len(order):
        here = order[len(rows)]
        by_target: dict[int, list[tuple[int, int]]] = {}
        for atom in _atoms([nfa.ranges_from(here)]):
            there = nfa.step(here, atom[0])
            if not there:
                continue
            if there not in index:
                index[there] = len(order)
                order.append(there)
            by_target.setdefault(index[there], []).append(atom)
        rows.append(tuple((target, normalise(atoms)) for target, atoms in sorted(by_target.items())))
    return {"rows": tuple(rows), "accept": tuple(i for i, states in enumerate(order) if nfa.accept in states)}


def rows_accept(rows: dict[str, Any], text: str) -> bool:
    """Whether a DFA in plain-data form accepts `text`."""
    state = 0
    for char in text:
        for target, ranges in rows["rows"][state]:
            if member(ranges, ord(char)):
                state = target
                break
        else:
            return False
    return state in rows["accept"]


# --------------------------------------------------------------------------- text followed by text


def threads_safe(body: Regex, tail: Regex, delimiters: NFA) -> bool:
    """Whether no match of `delimiters` can begin inside a text of `body` when a text of `tail` follows.

    Matches may start at any character of the body (not in the tail, where the intended delimiter is)
    and run on into the tail; a match still alive at the end of the tail counts as found (what comes
    after is unknown). `body` may over-approximate what a grammar writes (JSON tokens in any order,
    say): a "safe" answer then holds for all of it."""
    parts = [regex_nfa([body]), regex_nfa([tail])]
    starting = delimiters.closure([delimiters.start])
    finishing = delimiters.finishing()
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
        atoms = _atoms([nfa.ranges_from(here), delimiters.ranges_from(threads | starting)])
        for atom in atoms:
            targets = {t for s in here for ranges, t in nfa.moves[s] if member(ranges, atom[0])}
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


# --------------------------------------------------------------------------- where a match ends


class Mismatch(Exception):
    """The parser's match of a delimiter would not be the text the grammar writes."""


_CHAR, _END, _SPLIT, _START, _ACCEPT = range(5)


class PriorityNFA:
    """A pattern as the backtracking engine runs it: epsilon moves in the order the engine tries them.

    `^` is a move allowed only at the start of the text (`at_start`)."""

    def __init__(self) -> None:
        self.kinds: list[int] = []
        self.ranges: list[Ranges] = []
        self.nexts: list[list[int]] = []

    def add(self, kind: int, ranges: Ranges = ()) -> int:
        self.kinds.append(kind)
        self.ranges.append(ranges)
        self.nexts.append([])
        return len(self.kinds) - 1

    def closure(self, pcs: Iterable[int], at_start: bool) -> tuple[tuple[int, ...], bool]:
        """The consuming states reached from `pcs`, in priority order, and whether a match ends here.
        Threads of lower priority than a match are cut, as the engine never tries them."""
        out: list[int] = []
        seen: set[int] = set()

        def visit(pc: int) -> bool:
            if pc in seen:
                return False
            seen.add(pc)
            kind = self.kinds[pc]
            if kind == _SPLIT:
                return any(visit(t) for t in self.nexts[pc])
            if kind == _START:
                return at_start and visit(self.nexts[pc][0])
            if kind == _ACCEPT:
                return True
            out.append(pc)
            return False

        for pc in pcs:
            if visit(pc):
                return tuple(out), True
        return tuple(out), False

    def step(self, pcs: tuple[int, ...], symbol: int) -> tuple[tuple[int, ...], bool]:
        moved = [self.nexts[pc][0] for pc in pcs if _consumes(self, pc, symbol)]
        return self.closure(moved, False)


def _consumes(nfa: PriorityNFA, pc: int, symbol: int) -> bool:
    if nfa.kinds[pc] == _END:
        return symbol == END
    return symbol != END and member(nfa.ranges[pc], symbol)


def priority_nfa(root: rx.Node) -> tuple[PriorityNFA, int]:
    """The engine's automaton for a pattern tree, and its start state. Raises NoAutomaton for what
    it does not model (lookarounds, backreferences, ...: the skeleton refuses those earlier)."""
    nfa = PriorityNFA()
    accept = nfa.add(_ACCEPT)
    start = _prio(nfa, root, accept)
    return nfa, start


def _prio(nfa: PriorityNFA, node: rx.Node, then: int) -> int:
    """States for `node` that continue to `then`; returns the entry state."""
    if isinstance(node, rx.Chars):
        pc = nfa.add(_CHAR, node.ranges)
        nfa.nexts[pc].append(then)
        return pc
    if isinstance(node, rx.Concat):
        for item in reversed(node.items):
            then = _prio(nfa, item, then)
        return then
    if isinstance(node, rx.Alternation):
        pc = nfa.add(_SPLIT)
        nfa.nexts[pc] = [_prio(nfa, branch, then) for branch in node.branches]
        return pc
    if isinstance(node, rx.Group):
        return _prio(nfa, node.body, then)
    if isinstance(node, rx.Repeat) and not node.possessive:
        if node.max is None:
            loop = nfa.add(_SPLIT)
            body = _prio(nfa, node.body, loop)
            nfa.nexts[loop] = [then, body] if node.lazy else [body, then]
            entry = loop
        else:
            entry = then
            for _ in range(node.max - node.min):
                optional = nfa.add(_SPLIT)
                body = _prio(nfa, node.body, entry)
                nfa.nexts[optional] = [then, body] if node.lazy else [body, then]
                entry = optional
        for _ in range(node.min):
            entry = _prio(nfa, node.body, entry)
        return entry
    if isinstance(node, rx.Assertion) and node.kind == "string_start":
        pc = nfa.add(_START)
        nfa.nexts[pc].append(then)
        return pc
    if isinstance(node, rx.Assertion) and node.kind in ("string_end", "string_end_line"):
        pc = nfa.add(_END)
        nfa.nexts[pc].append(then)
        return pc
    raise NoAutomaton(type(node).__name__)


@dataclass(frozen=True)
class Rival:
    """Another delimiter watched at the same place: its texts, and whether it wins a tie of length."""

    nfa: NFA
    wins_ties: bool


def delimiter_match(
    pattern: tuple[PriorityNFA, int], written: Regex, rivals: Sequence[Rival], *, at_start: bool
) -> Ranges:
    """The characters that may not follow a delimiter the grammar writes as a text of `written`, so
    that the parser's match there is exactly that text; raises Mismatch when some text of `written`
    is not what the parser would match whatever follows.

    The parser takes, of the matches starting at the earliest position, the longest, ties going to
    the delimiter watched first; within one pattern, the match the engine's priorities choose.
    `rivals` are the other delimiters watched there (texts before the delimiter are clean, so every
    match starts where it does). END never counts as a following character: the parser's match
    at the end of the output is the same text."""
    engine, entry = pattern
    rows = determinize(written)
    moves, accepting = rows["rows"], set(rows["accept"])
    first = (0, engine.closure([entry], at_start), tuple(r.nfa.closure([r.nfa.start]) for r in rivals))
    finishing = [r.nfa.finishing() for r in rivals]
    banned: list[tuple[int, int]] = []
    seen = {first}
    stack = [first]
    while stack:
        here, (threads, matched), others = stack.pop()
        if here in accepting:
            if not matched:
                raise Mismatch("the parser's match would not end where the grammar's text of it does")
            banned += [r for pc in threads if engine.kinds[pc] == _CHAR for r in engine.ranges[pc]]
            for rival, states, live in zip(rivals, others, finishing, strict=True):
                if rival.nfa.accept in states and rival.wins_ties:
                    raise Mismatch("another delimiter watched there matches the same text and wins the tie")
                banned += rival.nfa.ranges_from(states & live)
        for target, ranges in moves[here]:
            engine_ranges = [r for pc in threads for r in engine.ranges[pc]]
            for atom in _atoms([ranges, engine_ranges, _rival_ranges(rivals, others), [(END, END)]]):
                symbol = atom[0]
                if not member(ranges, symbol):
                    continue
                after = engine.step(threads, symbol)
                if not after[0] and not after[1]:
                    raise Mismatch("the parser's match would end before the grammar's text of it does")
                others_after = tuple(r.nfa.step(s, symbol) for r, s in zip(rivals, others, strict=True))
                item = (target, after, others_after)
                if item not in seen:
                    seen.add(item)
                    stack.append(item)
    return normalise(r for r in banned if r[0] != END)


def _rival_ranges(rivals: Sequence[Rival], others: tuple[frozenset[int], ...]) -> list[tuple[int, int]]:
    return [r for rival, states in zip(rivals, others, strict=True) for r in rival.nfa.ranges_from(states)]


def complement_ranges(ranges: Iterable[tuple[int, int]]) -> Ranges:
    return complement(normalise(ranges))
