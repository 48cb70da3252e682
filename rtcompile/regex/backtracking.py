r"""Backtracking: whether a module may run a pattern on stdlib `re` (`refuse_slow_backtracking`), and
the load-time warning about unbounded repeats in a row that can share the same text.

`refuse_slow_backtracking` judges the stdlib translation by what one match attempt can cost `re`
(`rtcompile.regex.ambiguity`) against what it costs `regex`; the rest of this module is the warning:

``<tool_call>\s*\s*\s*\{`` on ``<tool_call>`` and a long run of spaces with no ``{``: a backtracking
engine tries every way of cutting the run between the three repeats (and every end for the last one)
before it gives up, about n^3 / 6 attempts for n spaces. Each pair of repeats that can consume the
same characters, with nothing between them that must consume a character neither of them accepts,
adds one free cut, hence one factor n: k such repeats in a row cost time growing like n^k on a near
miss. (Nested unbounded repeats, ``(a+)+``, are exponential and reported by
`rtcompile.regex.analysis.nested_unbounded_repeat`; this analysis leaves such patterns to it.)

The analysis errs on the side of reporting: a repeat's characters are every character its body can
consume, zero-width items and constructs it does not model (backreferences, fuzzy matching,
``\K``...) never separate two repeats, and a repeat whose body is several characters long
(``(?:ab)*``) counts whenever both bodies can match text made of the characters they share. It does
not report what cannot backtrack: a single repeat, repeats of disjoint characters (``\s*\w+``),
repeats separated by something that must consume a character outside their common set (``\s*,\s*``),
possessive repeats and atomic groups (searched on their own), and repeats at the end of the pattern
with nothing after them that can fail (the first, greedy try matches).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Iterator
from typing import Final

from rtcompile.regex.ambiguity import Cost, backtracking_cost, regex_is_superlinear
from rtcompile.regex.ast import (
    Alternation,
    Assertion,
    Atomic,
    BranchReset,
    Chars,
    Concat,
    Conditional,
    Group,
    InlineFlag,
    Lookaround,
    Node,
    Repeat,
    walk,
)
from rtcompile.regex.charsets import ALL, Ranges, complement, normalise
from rtcompile.regex.describe import describe_repeat
from rtcompile.regex.errors import SlowOnStdlib
from rtcompile.regex.parser import parse_regex
from rtcompile.regex.stdlib_tree import UnreadablePattern, stdlib_tree

# A bounded repeat of a part holding unbounded repeats is read as this many copies at most (the degree
# reported for `(?:\s*x?){50}` stops growing there: it is already far past anything acceptable).
MAX_UNROLLED_COPIES: Final = 6
# Alternatives holding unbounded repeats multiply the ways through the pattern; past this many the
# remaining ones are not examined.
MAX_PATHS: Final = 4096
# A pattern without unbounded repeats stays on stdlib without the analysis when one attempt has at most
# this many ways to go (each a bounded stretch of text).
MAX_BOUNDED_WAYS: Final = 100_000


@dataclasses.dataclass(frozen=True)
class PolynomialBacktracking:
    """`degree` unbounded repeats in a row (`repeats`, in pattern order) that can share one run of text:
    a near miss of length n costs time growing like n ** degree."""

    degree: int
    repeats: tuple[Repeat, ...]

    def example(self) -> str:
        r"""The repeats as a reader would write them (``\s*\s*\s*``)."""
        return "".join(describe_repeat(repeat) for repeat in self.repeats)


def polynomial_backtracking(root: Node) -> PolynomialBacktracking | None:
    """The longest run of overlapping unbounded repeats in `root` (two at least), or None."""
    best: PolynomialBacktracking | None = None
    for sequence in _searched_sequences(root):
        for path in itertools.islice(_paths(sequence), MAX_PATHS):
            found = _longest_chain(path)
            if found is not None and (best is None or found.degree > best.degree):
                best = found
    return best


# ---------------------------------------------------------------------------------------------------
# Whether a module may run a pattern's translation on stdlib `re`
# ---------------------------------------------------------------------------------------------------


def refuse_slow_backtracking(pattern: str, translations: tuple[str, ...]) -> None:
    """Raise `SlowOnStdlib` when stdlib `re`, running `translations` (the stdlib patterns a module
    compiles for the template's `pattern`: the full and partial-match ones, or the complete-match
    one), could take asymptotically longer than `regex` takes on `pattern`.

    One attempt of `re` at a position costs about n ** e steps (`rtcompile.regex.ambiguity`). Linear
    is always fine. Quadratic is fine where the pattern is ambiguous without any assertion taking
    part: then `regex` too walks each of about n ways in (its repeat guards skip tails that already
    failed, not the runs leading to them), so `re` is no slower in growth. Anything more, or a pattern
    too large to analyse, is matched with `regex`, as the reference matches it.
    """
    if attempts_are_bounded(pattern):
        return  # each attempt tries a bounded number of ways, however long the pattern (a 10,000-character literal)
    verdict = _stdlib_verdict(pattern, translations)
    if verdict is not None:
        raise SlowOnStdlib(f"backtracking ({verdict.growth()} in stdlib re)", _reason(verdict))


@functools.lru_cache(maxsize=512)
def attempts_are_bounded(pattern: str) -> bool:
    """Whether one attempt of a backtracking matcher at a position tries at most `MAX_BOUNDED_WAYS`
    ways through `pattern`, each reading a bounded stretch, whatever the text: no unbounded repeat, no
    back-reference, and few enough choices. A search is then linear in the text without the analysis
    (too slow for a pattern thousands of characters long). The bound on the choices matters as much
    as the bounded repeats: ``(?:a?b?){25}`` reads at most 50 characters but may try 2 ** 50 ways."""
    try:
        return _ways(parse_regex(pattern).root) <= MAX_BOUNDED_WAYS
    except (ValueError, RecursionError):
        return False


def _ways(node: Node) -> int:
    """An upper bound on the ways one attempt can go through `node`, capped just past
    `MAX_BOUNDED_WAYS` (a pattern with an unbounded repeat or a back-reference is past it)."""
    cap = MAX_BOUNDED_WAYS + 1
    if isinstance(node, (Chars, Assertion, InlineFlag)):
        return 1
    if isinstance(node, (Group, Atomic, Lookaround)):
        return _ways(node.body)
    if isinstance(node, Concat):
        total = 1
        for item in node.items:
            total = min(cap, total * _ways(item))
        return total
    if isinstance(node, (Alternation, BranchReset)):
        return min(cap, sum(_ways(branch) for branch in node.branches))
    if isinstance(node, Conditional):
        return min(cap, _ways(node.yes) + _ways(node.no))
    if isinstance(node, Repeat) and node.max is not None:
        body = _ways(node.body)
        if body == 1:
            return min(cap, node.max - node.min + 1)  # only the count varies
        total, copies = 0, 1  # copies: body ** count, the ways through `count` copies
        for count in range(node.max + 1):
            if copies >= cap:
                return cap  # this count, or a later one up to the maximum, is allowed
            if count >= node.min:
                total = min(cap, total + copies)
            copies *= body
        return total
    return cap  # an unbounded repeat, a back-reference, fuzzy matching, a construct not modelled


@functools.lru_cache(maxsize=512)
def _stdlib_verdict(pattern: str, translations: tuple[str, ...]) -> Cost | None:
    """None when stdlib `re` is safe for `translations`, else the cost that is not."""
    worst = Cost(1)
    for translation in translations:
        try:
            cost = backtracking_cost(stdlib_tree(translation))
        except UnreadablePattern:
            cost = Cost(None, known=False)
        if cost.exponent is None:
            worst = cost
            break
        if cost.exponent > (worst.exponent or 0):
            worst = cost
    if worst.linear:
        return None
    if worst.exponent == 2 and regex_is_superlinear(parse_regex(pattern).root):
        return None
    return worst


def _reason(cost: Cost) -> str:
    where = f" ({cost.example})" if cost.example else ""
    if not cost.known:
        return "it is too large to prove that a near miss costs it no more than the regex module"
    if cost.many_paths:
        return "it can try more ways to match one text than the pattern has characters, at every character"
    if cost.exponent is None:
        return f"a near miss of n characters can cost it time exponential in n{where}"
    return f"a near miss of n characters can cost it time growing like {cost.growth()}{where}"


# ---------------------------------------------------------------------------------------------------
# Sequences: the pattern itself, and every part that a backtracking engine matches on its own
# ---------------------------------------------------------------------------------------------------


def _searched_sequences(root: Node) -> Iterator[Node]:
    """`root`, then the bodies of lookarounds and atomic groups: the engine matches each to the end
    (backtracking inside it) before going on, and never re-enters it afterwards."""
    yield root
    for node in walk(root):
        if isinstance(node, (Lookaround, Atomic)):
            yield node.body
        elif isinstance(node, Conditional) and isinstance(node.condition, Lookaround):
            yield node.condition.body


def _is_chain_member(node: Node) -> bool:
    return isinstance(node, Repeat) and node.max is None and not node.possessive


def _holds_member(node: Node) -> bool:
    """Whether `node` has an unbounded repeat the enclosing sequence can backtrack into."""
    if _is_chain_member(node):
        return True
    if isinstance(node, (Lookaround, Atomic)):
        return False  # searched on its own, and opaque to the sequence around it
    if isinstance(node, Repeat):
        return not node.possessive and _holds_member(node.body)
    if isinstance(node, (Group, Concat, Alternation, BranchReset)):
        return any(_holds_member(child) for child in _parts(node))
    if isinstance(node, Conditional):
        return _holds_member(node.yes) or _holds_member(node.no)
    return False


def _parts(node: Group | Concat | Alternation | BranchReset) -> tuple[Node, ...]:
    if isinstance(node, Group):
        return (node.body,)
    if isinstance(node, Concat):
        return node.items
    return node.branches


Path = tuple[Node, ...]


def _paths(node: Node) -> Iterator[Path]:
    """The flat sequences of items `node` can match, choosing one branch of every alternative that holds
    an unbounded repeat (other items stay whole: they only ever sit between repeats)."""
    if not _holds_member(node) or _is_chain_member(node):
        yield (node,)
    elif isinstance(node, Group):
        yield from _paths(node.body)
    elif isinstance(node, Concat):
        yield from _concatenated([_paths(item) for item in node.items])
    elif isinstance(node, (Alternation, BranchReset)):
        for branch in node.branches:
            yield from _paths(branch)
    elif isinstance(node, Conditional):
        yield from _paths(node.yes)
        yield from _paths(node.no)
    else:
        assert isinstance(node, Repeat)  # bounded, or unbounded with a member inside (exponential)
        copies = min(node.max if node.max is not None else MAX_UNROLLED_COPIES, MAX_UNROLLED_COPIES)
        required = min(node.min, copies)
        for count in range(required, copies + 1):
            yield from _concatenated([_paths(node.body) for _ in range(count)])


def _concatenated(choices: list[Iterator[Path]]) -> Iterator[Path]:
    if not choices:
        yield ()
        return
    first, rest = choices[0], choices[1:]
    # `rest` is consumed once per path of `first`: materialise it (bounded by MAX_PATHS).
    tails = list(itertools.islice(_concatenated(rest), MAX_PATHS))
    for head in first:
        for tail in tails:
            yield head + tail


# ---------------------------------------------------------------------------------------------------
# Chains on one path
# ---------------------------------------------------------------------------------------------------


def _longest_chain(path: Path) -> PolynomialBacktracking | None:
    """The longest chain of repeats in `path` where each next one overlaps the previous with only
    items between them that can match text of their common characters, followed by something that
    can fail (otherwise the first try succeeds)."""
    members = [i for i, item in enumerate(path) if _is_chain_member(item)]
    chars = {i: consumed_chars(path[i]) for i in members}
    # longest[i]: the longest chain ending at member i, as member indices.
    longest: dict[int, tuple[int, ...]] = {}
    for j in members:
        best: tuple[int, ...] = (j,)
        for i in members:
            if i >= j:
                break
            if len(longest[i]) + 1 <= len(best) or not _share_runs(path[i], path[j], chars[i], chars[j]):
                continue
            if all(can_match_within(path[m], intersect(chars[i], chars[j])) for m in range(i + 1, j)):
                best = (*longest[i], j)
        longest[j] = best
    chains = [chain for last, chain in longest.items() if len(chain) >= 2 and _can_fail(path[last + 1 :])]
    if not chains:
        return None
    chain = max(chains, key=len)
    repeats = tuple(path[i] for i in chain)
    return PolynomialBacktracking(len(chain), tuple(r for r in repeats if isinstance(r, Repeat)))


def _share_runs(first: Node, second: Node, first_chars: Ranges, second_chars: Ranges) -> bool:
    """Whether both repeats' bodies can match text made of characters they have in common (``(?:ab)*``
    and ``a*`` cannot: the first never consumes a run of ``a``)."""
    shared = intersect(first_chars, second_chars)
    return (
        bool(shared)
        and isinstance(first, Repeat)
        and isinstance(second, Repeat)
        and can_match_within(first.body, shared)
        and can_match_within(second.body, shared)
    )


def _can_fail(rest: Path) -> bool:
    """Whether what follows the repeats may fail to match (then the engine backtracks into them)."""
    return not all(_always_matches(item) for item in rest)


def _always_matches(node: Node) -> bool:
    """Whether `node` matches the empty string wherever it is tried (no assertion to fail)."""
    if isinstance(node, Repeat):
        return node.min == 0 or _always_matches(node.body)
    if isinstance(node, (Group, Atomic)):
        return _always_matches(node.body)
    if isinstance(node, Concat):
        return all(_always_matches(item) for item in node.items)
    if isinstance(node, (Alternation, BranchReset)):
        return any(_always_matches(branch) for branch in node.branches)
    return False


# ---------------------------------------------------------------------------------------------------
# Character sets
# ---------------------------------------------------------------------------------------------------


def consumed_chars(node: Node) -> Ranges:
    """Every character `node` may consume (everything, when it holds a construct not modelled here)."""
    found: list[tuple[int, int]] = []
    for inner in walk(node):
        if isinstance(inner, Chars):
            found.extend(inner.ranges)
        elif not isinstance(inner, (Group, Concat, Alternation, BranchReset, Repeat, Atomic, Assertion, Lookaround)):
            return ALL  # backreferences, fuzzy matching, conditionals, \X, recursion...
    return normalise(found)


def intersect(left: Ranges, right: Ranges) -> Ranges:
    return complement(normalise(complement(left) + complement(right)))


def can_match_within(node: Node, allowed: Ranges) -> bool:
    """Whether `node` can match some text made only of characters in `allowed` (the empty text too):
    then it does not stop two repeats around it from cutting a run of those characters anywhere."""
    if isinstance(node, Chars):
        return bool(intersect(node.ranges, allowed))
    if isinstance(node, Repeat):
        return node.min == 0 or can_match_within(node.body, allowed)
    if isinstance(node, (Group, Atomic)):
        return can_match_within(node.body, allowed)
    if isinstance(node, Concat):
        return all(can_match_within(item, allowed) for item in node.items)
    if isinstance(node, (Alternation, BranchReset)):
        return any(can_match_within(branch, allowed) for branch in node.branches)
    return True  # zero-width assertions and lookarounds, and constructs not modelled here


# ---------------------------------------------------------------------------------------------------
# Naming the repeats in a message
# ---------------------------------------------------------------------------------------------------
