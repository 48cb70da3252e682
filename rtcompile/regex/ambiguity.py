r"""How much work one match attempt of a pattern can cost a backtracking matcher such as stdlib `re`.

A backtracking matcher that fails at a start position has tried every path of the pattern's automaton
that the text allows, one after the other; where it succeeds, it has tried some of them. So the work of
one attempt on a text of length n is bounded by the number of paths, summed over the prefixes of the
text, and that number is a property of the automaton (Weber and Seidl's degree of ambiguity; Weideman
et al. apply it to backtracking matchers):

* **EDA**, exponential: some state has two different cycles reading the same word (``(a|a)*``,
  ``(a*)*``, ``[^>]*(?:a[^>]*)*``): the paths double with every repetition of that word.
* **IDA** of degree d, polynomial: d + 1 cycles in a row, each pair joined by paths that read the word
  both cycles read (``\s*\s*``: the run can be cut anywhere; ``.*a.*a.*a.*``: degree 3). One attempt
  costs about n ** (d + 1).
* otherwise finitely ambiguous: at most a fixed number of paths on any text, so one attempt costs that
  number times n. The number can still be astronomical (``(?:a?){25}a{25}``), so it is computed
  (`MAX_PATHS`).

The automaton is the pattern's position automaton (one state per character node, with counted repeats
copied out), with each transition weighted by the number of ways `re` can take it: an optional or
empty alternative is a separate path to `re`, and `re` ends a repeat after an iteration that matched
nothing (then tries the rest), so an empty iteration is one more way out of a repeat, never a cycle.
Assertions and lookarounds are read as always passing (more paths than `re` has, never fewer); the
work inside a lookaround is counted separately, as a sub-pattern tried wherever the lookaround is. A
backreference is read as a run of any characters the group can hold (again more paths, not fewer).

The result is an upper bound on the paths `re` can take (never fewer), and two refinements keep it
from calling common patterns slow:

* A state from which every reachable state can accept without assertions, or read any character and
  accept at the end of the text, ends the attempt: the matcher's first try from there succeeds, so
  nothing after it is ever backtracked into (``.*\Z``, a trailing ``\s*``).
* A lookaround whose body reads on without bound costs a walk each time it is tried, and it is
  tried as many times as paths reach it: a ``(?!.*x)`` at every character of an otherwise linear
  pattern makes it n ** 2, a bounded ``(?!</a>)`` changes nothing.

`regex` is no help below n ** 2: its "repeat guards" remember where a repeat's tail already failed,
but each of the n ways into a run still walks the run, so one attempt on every ambiguous pattern we
measured costs it about n ** 2 or more (exponential on ``(a|a)*``). `regex_is_superlinear` tells
whether a pattern is ambiguous in a way that is real for `regex` (no assertion, lookaround or
backreference taking part).
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable, Iterable
from typing import Final, TypeVar

from rtcompile.regex.ast import (
    Alternation,
    Assertion,
    Atomic,
    Backreference,
    BranchReset,
    Chars,
    Concat,
    Conditional,
    Fuzzy,
    Group,
    Lookaround,
    Node,
    Opaque,
    Repeat,
    evaluate_postorder,
    unwrap,
    walk,
    width,
)
from rtcompile.regex.charsets import ALL, Ranges, normalise
from rtcompile.regex.describe import describe_repeat

# More paths than this through a finitely ambiguous pattern (on one text), beyond one per character
# node, count as too many: one attempt then costs more than that many steps per character. (The
# partial-match patterns are alternations of every prefix of a delimiter: about one path per node.)
MAX_PATHS: Final = 64
# Counts are kept up to this (an exact figure beyond it changes nothing).
_COUNT_CAP: Final = 1 << 20
# Patterns with more character nodes than this (counted repeats copied out) are not analysed.
MAX_POSITIONS: Final = 20_000
# A single-character repeat with more copies than this is read as unbounded (`C{3,900}` as `C*`):
# every path of the first is a path of the second, so the bound only grows.
_MAX_COPIES: Final = 64
# Work limits for the product automata and the path counting; beyond them the pattern is "unknown".
_MAX_PRODUCT_STATES: Final = 200_000
_MAX_COUNT_VECTORS: Final = 4_000

# Assertions that always hold at the end of the text.
_TRUE_AT_END: Final = frozenset(("string_end", "string_end_line", "line_end"))


@dataclasses.dataclass(frozen=True)
class Cost:
    """What one match attempt can cost: about n ** `exponent` steps on a text of length n (`exponent`
    None: exponential in n, or more than `MAX_PATHS` paths on some text). `known` is False when the
    pattern was too large to analyse (then `exponent` is None). `example` names the repeats
    responsible, as a reader would write them, when known."""

    exponent: int | None
    known: bool = True
    example: str = ""
    many_paths: bool = False  # exponent None because of a fixed but huge number of paths, not n

    @property
    def linear(self) -> bool:
        return self.exponent == 1

    def growth(self) -> str:
        """``n``, ``n^3``, ``exponential``..."""
        if self.exponent is None:
            if not self.known:
                return "unknown"
            return "too many paths" if self.many_paths else "exponential"
        return "n" if self.exponent == 1 else f"n^{self.exponent}"


class TooComplex(Exception):
    """The pattern is beyond the analysis's limits."""


# ---------------------------------------------------------------------------------------------------
# Ways: how many paths, and whether one of them passes no assertion / only assertions true at the end
# ---------------------------------------------------------------------------------------------------


class Ways:
    """How many paths, and what they pass. Immutable (a plain class: millions are made for a long
    partial-match pattern, and a frozen dataclass is slow to create)."""

    __slots__ = ("at_end", "count", "free", "lookarounds")

    def __init__(self, count: int, free: bool, at_end: bool, lookarounds: int = 0) -> None:
        self.count = count
        self.free = free  # some path passes no assertion or lookaround
        self.at_end = at_end  # some path passes only tests that hold at the end of the text
        self.lookarounds = lookarounds  # bit set of the lookarounds some path passes

    def __add__(self, other: Ways) -> Ways:
        return Ways(
            min(self.count + other.count, _COUNT_CAP),
            self.free or other.free,
            self.at_end or other.at_end,
            self.lookarounds | other.lookarounds,
        )

    def __mul__(self, other: Ways) -> Ways:
        if not self.count or not other.count:
            return NONE
        return Ways(
            min(self.count * other.count, _COUNT_CAP),
            self.free and other.free,
            self.at_end and other.at_end,
            self.lookarounds | other.lookarounds,
        )


NONE: Final = Ways(0, False, False)
ONE: Final = Ways(1, True, True)

Weights = dict[int, Ways]


def _add_into(target: Weights, position: int, ways: Ways) -> None:
    known = target.get(position)
    target[position] = ways if known is None else known + ways


def _scaled(weights: Weights, factor: Ways) -> Weights:
    if not factor.count:
        return {}
    if factor is ONE:
        return weights
    return {position: ways * factor for position, ways in weights.items()}


def _merged(first: Weights, second: Weights) -> Weights:
    """The two added up (one of them itself when the other is empty: weights are never changed once
    made, only new ones built)."""
    if not second:
        return first
    if not first:
        return second
    merged = dict(first)
    for position, ways in second.items():
        _add_into(merged, position, ways)
    return merged


# ---------------------------------------------------------------------------------------------------
# The position automaton
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Fragment:
    """A node's part of the automaton: the positions a path through it can read first (with the ways
    to get there without reading), those it can read last (with the ways on to its end), and the ways
    to match it without reading anything."""

    first: Weights
    last: Weights
    empty: Ways


@dataclasses.dataclass
class Automaton:
    """States are positions (character nodes); entering position q reads one character of
    `classes[q]`. `follow[p][q]`: the ways from having read p to reading q next; `first`, `last`,
    `empty`: the whole pattern's. `repeats[q]`: the unbounded repeat whose body holds q (for naming)."""

    classes: list[Ranges] = dataclasses.field(default_factory=list)
    follow: list[Weights] = dataclasses.field(default_factory=list)
    first: Weights = dataclasses.field(default_factory=dict)
    last: Weights = dataclasses.field(default_factory=dict)
    empty: Ways = NONE
    repeats: list[Repeat | None] = dataclasses.field(default_factory=list)
    unmodelled: list[int] = dataclasses.field(default_factory=list)  # positions standing for a backreference


class _Builder:
    """Builds the automaton bottom-up, children before parents (`evaluate_postorder`): a node's
    fragment from its children's, whose positions are already allocated, in pattern order."""

    def __init__(self, root: Node) -> None:
        self.automaton = Automaton()
        self.root = root
        self.lookarounds: list[Lookaround] = []
        self.repeat_stack: list[Repeat] = []

    def build(self) -> _Fragment:
        return evaluate_postorder(self.root, self.expand, self.combine)

    def expand(self, node: Node) -> list[Node]:
        """What `combine` needs built first: a repeat's body once per copy it is read as."""
        if isinstance(node, Group):
            return [node.body]
        if isinstance(node, Concat):
            return list(node.items)
        if isinstance(node, Alternation):
            return list(node.branches)
        if isinstance(node, Repeat):
            low, high = _copies(node)
            if high is None:
                self.repeat_stack.append(node)  # the positions inside name it (see `combine`)
                return [node.body] * (low + 1)
            return [node.body] * high
        if isinstance(node, (Atomic, BranchReset, Conditional, Fuzzy, Opaque)):
            raise TooComplex  # never in a stdlib translation; `regex` itself handles these
        return []

    def combine(self, node: Node, parts: list[_Fragment]) -> _Fragment:
        if isinstance(node, Chars):
            return self.position(node.ranges)
        if isinstance(node, Group):
            return parts[0]
        if isinstance(node, Concat):
            return self.sequence(parts)
        if isinstance(node, Alternation):
            return _alternatives(parts)
        if isinstance(node, Repeat):
            return self.repeat(node, parts)
        if isinstance(node, Assertion):
            return _Fragment({}, {}, Ways(1, False, node.kind in _TRUE_AT_END))
        if isinstance(node, Lookaround):
            self.lookarounds.append(node)
            return _Fragment({}, {}, Ways(1, False, _lookaround_true_at_end(node), 1 << (len(self.lookarounds) - 1)))
        if isinstance(node, Backreference):
            return self.backreference(node)
        raise TypeError(node)

    def position(self, ranges: Ranges, *, unmodelled: bool = False) -> _Fragment:
        automaton = self.automaton
        index = len(automaton.classes)
        if index >= MAX_POSITIONS:
            raise TooComplex
        automaton.classes.append(ranges)
        automaton.follow.append({})
        automaton.repeats.append(self.repeat_stack[-1] if self.repeat_stack else None)
        if unmodelled:
            automaton.unmodelled.append(index)
        return _Fragment({index: ONE}, {index: ONE}, NONE)

    def link(self, before: Weights, after: Weights) -> None:
        """Add the transitions from every position `before` ends with to every one `after` starts with."""
        follow = self.automaton.follow
        for p, out in before.items():
            for q, into in after.items():
                _add_into(follow[p], q, out * into)

    def sequence(self, parts: list[_Fragment]) -> _Fragment:
        result = _Fragment({}, {}, ONE)
        for fragment in parts:
            self.link(result.last, fragment.first)
            result = _Fragment(
                _merged(result.first, _scaled(fragment.first, result.empty)),
                _merged(fragment.last, _scaled(result.last, fragment.empty)),
                result.empty * fragment.empty,
            )
        return result

    def repeat(self, node: Repeat, copies: list[_Fragment]) -> _Fragment:
        low, high = _copies(node)
        mandatory = self.sequence(copies[:low])
        if high is None:
            self.repeat_stack.pop()
            rest = self.unbounded(copies[low])
        else:
            rest = self.optional_chain(copies[low:])
        self.link(mandatory.last, rest.first)
        return _Fragment(
            _merged(mandatory.first, _scaled(rest.first, mandatory.empty)),
            _merged(rest.last, _scaled(mandatory.last, rest.empty)),
            mandatory.empty * rest.empty,
        )

    def unbounded(self, inner: _Fragment) -> _Fragment:
        """Any number of iterations after the mandatory ones: each one that reads something may be
        followed by another; one that reads nothing ends the repeat (`re`'s rule), so it is one more
        way out, not a cycle."""
        self.link(inner.last, inner.first)
        exits = ONE + inner.empty
        return _Fragment(dict(inner.first), _scaled(inner.last, exits), exits)

    def optional_chain(self, iterations: list[_Fragment]) -> _Fragment:
        """Up to that many more iterations, each a copy of the body (the same rule for empty ones)."""
        result = _Fragment({}, {}, ONE)
        for inner in reversed(iterations):  # the last one first: each earlier one may go on into it
            self.link(inner.last, result.first)
            exits = ONE + inner.empty
            result = _Fragment(dict(inner.first), _merged(_scaled(inner.last, result.empty), result.last), exits)
        return result

    def backreference(self, node: Backreference) -> _Fragment:
        """A run of what the group can hold: `re` reads the group's text in one step, but counting it
        as any run of those characters only adds paths."""
        run = self.position(_group_characters(self.root, node.group), unmodelled=True)
        self.link(run.last, run.first)
        return _Fragment(run.first, run.last, ONE)


def _copies(node: Repeat) -> tuple[int, int | None]:
    """The counts a repeat is read as: its own, or for a single character with more copies than
    `_MAX_COPIES`, unbounded (every path of ``C{m,n}`` is one of ``C*``: the bound can only grow)."""
    if isinstance(unwrap(node.body), Chars) and max(node.min, node.max or 0) > _MAX_COPIES:
        return 0, None
    return node.min, node.max


def _alternatives(parts: list[_Fragment]) -> _Fragment:
    first: Weights = {}
    last: Weights = {}
    empty = NONE
    for fragment in parts:  # added up in place: an alternation of many branches stays linear
        for position, ways in fragment.first.items():
            _add_into(first, position, ways)
        for position, ways in fragment.last.items():
            _add_into(last, position, ways)
        empty = empty + fragment.empty
    return _Fragment(first, last, empty)


def _lookaround_true_at_end(node: Lookaround) -> bool:
    """Whether the lookaround surely holds at the end of the text: a negative lookahead whose body
    must read a character (there is none left)."""
    return not node.behind and not node.positive and width(node.body)[0] > 0


def _group_characters(root: Node, group: str) -> Ranges:
    for node in walk(root):
        if isinstance(node, Group) and (str(node.index) == group or node.name == group):
            found: list[tuple[int, int]] = []
            for inner in walk(node.body):
                if isinstance(inner, Chars):
                    found.extend(inner.ranges)
                elif isinstance(inner, Backreference):
                    return ALL
            return normalise(found)
    return ALL


def build_automaton(root: Node) -> tuple[Automaton, list[Lookaround]]:
    """The position automaton of `root`, and its lookarounds (numbered as in `Ways.lookarounds`)."""
    builder = _Builder(root)
    whole = builder.build()
    automaton = builder.automaton
    automaton.first, automaton.last, automaton.empty = whole.first, whole.last, whole.empty
    return automaton, builder.lookarounds


# ---------------------------------------------------------------------------------------------------
# Letters: the sets of characters no position tells apart
# ---------------------------------------------------------------------------------------------------


def _letter_masks(classes: list[Ranges]) -> list[int]:
    """For each position, a bit mask of the letters its class holds (a letter: the characters held by
    exactly the same positions). Two classes share a character iff their masks meet, and a word of
    letters stands for every text with one of its characters at each place."""
    bounds = sorted({lo for ranges in classes for lo, _ in ranges} | {hi + 1 for ranges in classes for _, hi in ranges})
    holders: list[set[int]] = [set() for _ in bounds]
    for position, ranges in enumerate(classes):
        for lo, hi in ranges:
            for index in range(bisect.bisect_left(bounds, lo), bisect.bisect_left(bounds, hi + 1)):
                holders[index].add(position)
    letters: dict[frozenset[int], int] = {}
    masks = [0] * len(classes)
    for held in holders:
        if held:
            bit = 1 << letters.setdefault(frozenset(held), len(letters))
            for position in held:
                masks[position] |= bit
    return masks


# ---------------------------------------------------------------------------------------------------
# The transitions that count
# ---------------------------------------------------------------------------------------------------


class _Limit(Exception):
    """An explicit search outgrew its budget: the pattern is too large to analyse."""


class _Graph:
    """The automaton's transitions out of the states that do not end the attempt, as numbers of ways;
    with `free_only`, only those a path can take without passing an assertion or lookaround, and none
    through a backreference (what is left is ambiguity any matcher meets)."""

    def __init__(self, automaton: Automaton, *, free_only: bool) -> None:
        self.size = len(automaton.classes)
        self.masks = _letter_masks(automaton.classes)
        ending = _ending_states(automaton, self.masks)
        excluded = set(automaton.unmodelled) if free_only else set()
        self.edges: list[dict[int, int]] = [
            {}
            if p in ending or p in excluded
            else {
                q: ways.count
                for q, ways in automaton.follow[p].items()
                if q not in excluded and (ways.free or not free_only)
            }
            for p in range(self.size)
        ]
        self.start = {q: ways.count for q, ways in automaton.first.items() if ways.free or not free_only}


def _ending_states(automaton: Automaton, masks: list[int]) -> set[int]:
    """The states from which the matcher's first try succeeds: every state they reach (themselves
    included) can accept without passing a test, or can read any character and accept at the end of
    the text. From there the matcher reads on, always able to go on or stop, and never comes back."""
    every_letter = 0
    for mask in masks:
        every_letter |= mask
    covered = normalise(r for ranges in automaton.classes for r in ranges) == ALL

    def ok(p: int) -> bool:
        accept = automaton.last.get(p, NONE)
        if accept.free:
            return True
        readable = 0
        for q, ways in automaton.follow[p].items():
            if ways.free:
                readable |= masks[q]
        return accept.at_end and covered and readable == every_letter

    predecessors: list[list[int]] = [[] for _ in automaton.classes]
    for p, out in enumerate(automaton.follow):
        for q in out:
            predecessors[q].append(p)
    reaches_bad = {p for p in range(len(automaton.classes)) if not ok(p)}
    stack = list(reaches_bad)
    while stack:
        for p in predecessors[stack.pop()]:
            if p not in reaches_bad:
                reaches_bad.add(p)
                stack.append(p)
    return set(range(len(automaton.classes))) - reaches_bad


State = TypeVar("State", int, tuple[int, int])


def _components(nodes: list[State], successors: Callable[[State], Iterable[State]]) -> list[list[State]]:
    """The strongly connected components of the graph on `nodes` (Tarjan's, iteratively), sinks first."""
    index_of: dict[State, int] = {}
    low: dict[State, int] = {}
    on_stack: set[State] = set()
    stack: list[State] = []
    components: list[list[State]] = []
    for root in nodes:
        if root in index_of:
            continue
        index_of[root] = low[root] = len(index_of)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(successors(root)))]
        while work:
            node, pending = work[-1]
            for successor in pending:
                if successor not in index_of:
                    index_of[successor] = low[successor] = len(index_of)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(successors(successor))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index_of[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index_of[node]:
                    component: list[State] = []
                    while not component or component[-1] != node:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                    components.append(component)
    return components


def _reachable(graph: _Graph) -> list[int]:
    seen = set(graph.start)
    stack = list(seen)
    while stack:
        for q in graph.edges[stack.pop()]:
            if q not in seen:
                seen.add(q)
                stack.append(q)
    return sorted(seen)


# ---------------------------------------------------------------------------------------------------
# Exponential, polynomial, finite
# ---------------------------------------------------------------------------------------------------


def _exponential(graph: _Graph, component: list[int]) -> bool:
    """Whether some state of `component` has two different cycles reading the same word: in the
    product of the component with itself, a pair of equal states is in one component with a pair of
    different states, or with a transition that can be taken in two ways."""
    members = set(component)
    masks, edges = graph.masks, graph.edges
    pairs: dict[tuple[int, int], list[tuple[int, int]]] = {}
    doubled: list[tuple[tuple[int, int], tuple[int, int]]] = []
    stack = [(p, p) for p in component]
    for pair in stack:
        pairs[pair] = []
    while stack:
        x, y = stack.pop()
        for x2, count in edges[x].items():
            if x2 not in members:
                continue
            for y2 in edges[y]:
                if y2 not in members or not masks[x2] & masks[y2]:
                    continue
                pairs[(x, y)].append((x2, y2))
                if x == y and x2 == y2 and count > 1:
                    doubled.append(((x, y), (x2, y2)))
                if (x2, y2) not in pairs:
                    if len(pairs) > _MAX_PRODUCT_STATES:
                        raise _Limit
                    pairs[(x2, y2)] = []
                    stack.append((x2, y2))
    number = {pair: i for i, found in enumerate(_components(list(pairs), pairs.__getitem__)) for pair in found}
    mixed: dict[int, set[bool]] = {}
    for (x, y), i in number.items():
        mixed.setdefault(i, set()).add(x == y)
    return any(len(kinds) == 2 for kinds in mixed.values()) or any(number[a] == number[b] for a, b in doubled)


def _polynomial_pair(graph: _Graph, first: list[int], second: list[int], between: set[int]) -> bool:
    """Whether some p in `first` and q in `second` have p -v-> p, p -v-> q and q -v-> q for one word v
    (the middle path running through `between`): in the product of three copies, (p, q, q) is
    reachable from (p, p, q)."""
    firsts, seconds = set(first), set(second)
    masks, edges = graph.masks, graph.edges
    budget = _MAX_PRODUCT_STATES
    for p in first:
        for q in second:
            seen = {(p, p, q)}
            stack = [(p, p, q)]
            while stack:
                x, y, z = stack.pop()
                for x2 in edges[x]:
                    if x2 not in firsts:
                        continue
                    for y2 in edges[y]:
                        shared = masks[x2] & masks[y2]
                        if y2 not in between or not shared:
                            continue
                        for z2 in edges[z]:
                            if z2 not in seconds or not shared & masks[z2]:
                                continue
                            if (x2, y2, z2) == (p, q, q):
                                return True
                            if (x2, y2, z2) not in seen:
                                budget -= 1
                                if budget < 0:
                                    raise _Limit
                                seen.add((x2, y2, z2))
                                stack.append((x2, y2, z2))
    return False


def _paths_at_most(graph: _Graph, limit: int) -> bool:
    """Whether no text has more than `limit` paths at any one length (the paths the matcher has started
    and not yet given up): the vectors of path counts per state reached by any word of letters, found
    by search."""
    seen: set[tuple[tuple[int, int], ...]] = set()
    queue: list[dict[int, int]] = [{}]  # {}: nothing read yet (the first character enters the start states)
    while queue:
        vector = queue.pop()
        entering = graph.start if not vector else _successors(graph, vector)
        for letters in _letter_groups([graph.masks[q] for q in entering]):
            counts: dict[int, int] = {}
            if not vector:
                counts = {q: count for q, count in graph.start.items() if graph.masks[q] & letters}
            else:
                for p, count in vector.items():
                    for q, ways in graph.edges[p].items():
                        if graph.masks[q] & letters:
                            counts[q] = counts.get(q, 0) + count * ways
            if sum(counts.values()) > limit:
                return False
            key = tuple(sorted(counts.items()))
            if counts and key not in seen:
                if len(seen) > _MAX_COUNT_VECTORS:
                    raise _Limit
                seen.add(key)
                queue.append(counts)
    return True


def _successors(graph: _Graph, vector: dict[int, int]) -> set[int]:
    return {q for p in vector for q in graph.edges[p]}


def _letter_groups(masks: list[int]) -> list[int]:
    """The letters of `masks`, grouped by which of the masks hold them: the letters of one group lead
    to the same vector."""
    groups: list[int] = []
    for mask in masks:
        refined: list[int] = []
        rest = mask
        for group in groups:
            refined += [part for part in (group & mask, group & ~mask) if part]
            rest &= ~group
        groups = refined + ([rest] if rest else [])
    return groups


@dataclasses.dataclass(frozen=True)
class _Ambiguity:
    """The automaton's degree of ambiguity: `exponential` (the states of a component with two cycles on
    one word), else `degree` polynomial pairs in a row (`chain`: the components of their repeats, in
    pattern order), and, when neither, whether it stays within the paths allowed."""

    exponential: tuple[int, ...] | None
    chain: tuple[tuple[int, ...], ...]
    degree: int
    few_paths: bool
    # For each reachable state, how the number of paths reaching it in one attempt grows: like
    # n ** reaching[p] (0: a bounded number, no loop comes before it).
    reaching: dict[int, int] = dataclasses.field(default_factory=dict)


def _ambiguity(graph: _Graph, *, count_paths: bool) -> _Ambiguity:
    components = _components(_reachable(graph), graph.edges.__getitem__)  # sinks first
    looping = [c for c in components if len(c) > 1 or c[0] in graph.edges[c[0]]]
    for component in looping:
        if _exponential(graph, component):
            return _Ambiguity(tuple(component), (), 0, False)
    number = {p: i for i, component in enumerate(components) for p in component}
    reach = [0] * len(components)  # bit set of the components each one reaches, itself included
    for i, component in enumerate(components):
        reach[i] = 1 << i
        for p in component:
            for q in graph.edges[p]:
                if number[q] != i:
                    reach[i] |= reach[number[q]]
    loops = [number[c[0]] for c in looping][::-1]  # sources first
    # ending[i]: the longest chain of polynomial pairs (repeat j, repeat i) whose last pair ends at i,
    # each pair's second repeat reaching the next pair's first.
    ending: dict[int, tuple[tuple[int, int], ...]] = {}
    for i in loops:
        best: tuple[tuple[int, int], ...] = ()
        for j in loops:
            if j == i or j not in ending or not reach[j] >> i & 1:
                continue
            before = max((ending[k] for k in ending if reach[k] >> j & 1), key=len, default=())
            if len(before) + 1 > len(best) and _polynomial_pair(
                graph, components[j], components[i], _between(components, reach, j, i)
            ):
                best = (*before, (j, i))
        ending[i] = best
    pairs = max(ending.values(), key=len, default=())
    named: list[int] = []
    for pair in pairs:
        named += [k for k in pair if not named or named[-1] != k]
    reaching: dict[int, int] = {}
    for c, component in enumerate(components):
        before_c = [len(ending[k]) for k in loops if reach[k] >> c & 1]
        for p in component:
            reaching[p] = max(before_c) + 1 if before_c else 0
    few = not pairs and (not count_paths or _paths_at_most(graph, MAX_PATHS + graph.size))
    return _Ambiguity(None, tuple(tuple(components[k]) for k in named), len(pairs), few, reaching)


def _between(components: list[list[int]], reach: list[int], source: int, target: int) -> set[int]:
    """The states on paths from component `source` to component `target`."""
    return {
        p
        for k, component in enumerate(components)
        if reach[source] >> k & 1 and reach[k] >> target & 1
        for p in component
    }


# ---------------------------------------------------------------------------------------------------
# Putting it together
# ---------------------------------------------------------------------------------------------------


def backtracking_cost(root: Node) -> Cost:
    """What one attempt of stdlib `re` to match `root` at a position can cost (see the module
    docstring); `root` is the tree of the pattern `re` runs (`rtcompile.regex.stdlib_tree`)."""
    try:
        automaton, lookarounds = build_automaton(root)
        ambiguity = _ambiguity(_Graph(automaton, free_only=False), count_paths=True)
    except (TooComplex, _Limit, RecursionError):
        return Cost(None, known=False)
    if ambiguity.exponential is not None:
        return Cost(None, example=_name_repeats(automaton, (ambiguity.exponential,)))
    if not ambiguity.degree and not ambiguity.few_paths:
        return Cost(None, example="more ways to match one text than the pattern has characters", many_paths=True)
    exponent, example = ambiguity.degree + 1, _name_repeats(automaton, ambiguity.chain)
    for number, lookaround in enumerate(lookarounds):
        if width(lookaround.body)[1] is not None:
            continue  # a bounded body costs a bounded number of steps wherever it is tried
        inner = backtracking_cost(lookaround.body)
        if inner.exponent is None:
            return inner
        tried = _tries(automaton, ambiguity, 1 << number)
        if tried + inner.exponent > exponent:
            exponent, example = tried + inner.exponent, f"a lookaround that reads on, tried at n^{tried} places"
    return Cost(exponent, example=example)


def _tries(automaton: Automaton, ambiguity: _Ambiguity, lookaround: int) -> int:
    """How the number of times one attempt tries the lookaround grows: like n ** result (the paths
    reaching the states it can follow)."""
    tried = 0
    for p, out in enumerate(automaton.follow):
        passes = any(ways.lookarounds & lookaround for ways in out.values())
        if passes or automaton.last.get(p, NONE).lookarounds & lookaround:
            tried = max(tried, ambiguity.reaching.get(p, 0))
    return tried


def regex_is_superlinear(root: Node) -> bool:
    """Whether `root` (a pattern as `regex` reads it) is ambiguous without any assertion, lookaround or
    backreference taking part: then one attempt of `regex` costs at least about n ** 2 on some near
    miss, repeat guards or not (they skip a repeat's tail where it already failed, but each of the n
    ways in still walks its own run)."""
    try:
        automaton, _ = build_automaton(root)
        ambiguity = _ambiguity(_Graph(automaton, free_only=True), count_paths=False)
    except (TooComplex, _Limit, RecursionError):
        return False
    return ambiguity.exponential is not None or ambiguity.degree > 0


def _name_repeats(automaton: Automaton, components: tuple[tuple[int, ...], ...]) -> str:
    """The repeats holding `components`, written as a reader would (``.*.*``)."""
    names = []
    for component in components:
        repeat = next((automaton.repeats[p] for p in sorted(component) if automaton.repeats[p] is not None), None)
        if repeat is not None:
            names.append(describe_repeat(repeat))
    return "".join(names)
