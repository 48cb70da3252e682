"""How `regex`'s optimiser and compiler shape a node, which decides the engine shortcuts that apply.

Its partial matching depends on what the tree compiles into, not just on what it matches: whether a
repeat's body becomes a single-character node (a *_REPEAT_ONE opcode), what the look-ahead test at
the start of a repeat iteration is, and which start test (a first-character prefilter, a string
anchor) the search loop uses. These mirrors read translatable trees (`rtcompile.regex.partial`).
"""

from __future__ import annotations

import dataclasses

from rtcompile.regex.ast import (
    Alternation,
    Assertion,
    Atomic,
    BranchReset,
    Chars,
    Concat,
    Conditional,
    Fuzzy,
    Group,
    Lookaround,
    Node,
    Repeat,
    flat_items,
    flatten_alternation,
    linear_items,
    unwrap,
)
from rtcompile.regex.charsets import complement, normalise
from rtcompile.regex.errors import UnsupportedRegex


def is_single_character(node: Node) -> bool:
    """Whether `regex` compiles `node` to a single-character node (so a repeat of it is a *_REPEAT_ONE).

    Its optimiser unwraps one-item sequences and merges an alternation of single characters with the
    same case flag into one set.
    """
    if isinstance(node, Chars):
        return True
    if isinstance(node, Concat):
        return len(node.items) == 1 and is_single_character(node.items[0])
    if isinstance(node, Alternation):
        branches = [unwrap(branch) for branch in flatten_alternation(node)]
        if not all(isinstance(b, Chars) and b.kind != "any" for b in branches):
            return False
        return len({b.ignore_case for b in branches if isinstance(b, Chars)}) == 1
    return False


def first_test(node: Node) -> str:
    """What `regex`'s look-ahead test at the start of `node` is: "consume" (reads a character, so it
    reports partial at the end), "other" (a zero-width or opaque node) or "unknown" (depends on
    optimisations we do not mirror)."""
    items = flat_items(node)
    if not items:
        return "other"
    first = items[0]
    if isinstance(first, Chars):
        return "consume"
    if isinstance(first, Group):
        return first_test(first.body)
    if isinstance(first, Repeat):
        # regex emits the `min` mandatory iterations as plain copies before the repeat node itself.
        return "other" if first.min == 0 else first_test(first.body)
    if isinstance(first, Alternation):
        return _alternation_test(first)
    return "other"


def _alternation_test(node: Alternation) -> str:
    if is_single_character(node):
        return "consume"
    heads = [flat_items(branch) for branch in flatten_alternation(node)]
    if any(not head for head in heads):
        return "other"  # an empty branch: no common prefix can be split off
    firsts = [head[0] for head in heads]
    literals = [(f.literal, f.ignore_case) if isinstance(f, Chars) and f.kind == "literal" else None for f in firsts]
    if None not in literals:
        # regex moves a common leading literal out of the alternation; distinct literals stay a BRANCH.
        return "consume" if len(set(literals)) == 1 else "other"
    if not all(isinstance(f, Chars) for f in firsts):
        # A common leading item that is not a character is zero-width or opaque to the test either way.
        return "other"
    chars = [f for f in firsts if isinstance(f, Chars)]
    if len({(f.ranges, f.ignore_case) for f in chars}) > 1:
        return "other"  # the leading sets differ, so nothing is factored out
    return "unknown"  # equal sets: factored out only if regex considers the nodes equal


# -- the search loop's start test --------------------------------------------------------------------


def has_simple_start(node: Node) -> bool:
    items = flat_items(node)
    if not items:
        return False
    first = items[0]
    if isinstance(first, Chars):
        return True
    if isinstance(first, Group):
        return has_simple_start(first.body)
    if isinstance(first, Alternation):
        return _alternation_test(first) == "consume"
    return False


def start_test(node: Node) -> str | None:
    """The start test of a pattern with a "simple start" (a first node that reads one character)."""
    if not has_simple_start(node):
        return None
    items = flat_items(node)
    first = items[0]
    while isinstance(first, Group):
        first = flat_items(first.body)[0]
    return "any" if isinstance(first, Chars) and first.kind == "any" else "char"


def firstset(node: Node) -> list[Chars] | None:
    """regex's `get_firstset` + `_check_firstset`: the possible first characters, if it builds them."""
    members = _firstset_members(node)
    if None in members:
        return None
    chars = [member for member in members if member is not None]
    if not chars or any(member.kind in ("negated_literal", "any") for member in chars):
        return None
    return chars


def _firstset_members(node: Node) -> list[Chars | None]:
    if isinstance(node, Chars):
        return [node]
    if isinstance(node, Assertion):
        return [None]
    if isinstance(node, Lookaround):
        return _firstset_members(node.body) if node.positive and not node.behind else [None]
    if isinstance(node, Group):
        return _firstset_members(node.body)
    if isinstance(node, Repeat):
        members = _firstset_members(node.body)
        return members + [None] if node.min == 0 else members
    if isinstance(node, Alternation):
        union = [member for branch in node.branches for member in _firstset_members(branch)]
        return union or [None]
    if not isinstance(node, Concat):
        return [None]  # constructs the translation refuses
    collected: list[Chars | None] = []
    for item in node.items:
        collected.extend(_firstset_members(item))
        if None not in collected:
            return collected
        collected = [member for member in collected if member is not None]
    return collected + [None]


def leading_test(node: Node) -> str | None:
    """Without a first-character set, regex's start test is the first node past group boundaries,
    lookarounds and mandatory repeats: "char" (scans to the end of the text and reports partial),
    "any", "anchored" (the string start) or None (anything else)."""
    for item in linear_items(node):
        if isinstance(item, Lookaround):
            continue
        if isinstance(item, Repeat) and item.min > 0:
            if is_single_character(item.body):
                body = unwrap(item.body)
                return "any" if isinstance(body, Chars) and body.kind == "any" else "char"
            return leading_test(item.body)
        if isinstance(item, Chars):
            return "any" if item.kind == "any" else "char"
        if isinstance(item, Assertion) and item.kind == "string_start":
            return "anchored"
        return None
    return None


# ---------------------------------------------------------------------------------------------------
# Alternations of single characters: regex merges them into one set, and gets negated characters wrong
# ---------------------------------------------------------------------------------------------------


def merge_character_branches(root: Node) -> Node:
    """`root` with every alternation rewritten the way `regex` actually matches it.

    `regex`'s optimiser reduces each run of adjacent one-character branches (same case flag) to one set
    union, and its compiler packs all the *negated single characters* of such a union into one
    "none of these" member: ``[^a]|[^b]`` matches what ``[^ab]`` matches, not every character. A run
    with at most one negated character means what it says and is left alone. Raises
    `UnsupportedRegex` where the merge would come after `regex` splits off a prefix or suffix common
    to all branches (``x[^a]|x[^b]``), or under case-insensitive matching, which is not modelled.
    """
    return _merged(root)


def _merged(node: Node) -> Node:
    if isinstance(node, Alternation):
        branches = tuple(_merged(branch) for branch in node.branches)
        return _merge_runs(Alternation(branches))
    if isinstance(node, Concat):
        return Concat(tuple(_merged(item) for item in node.items))
    if isinstance(node, (Group, Repeat, Lookaround, Atomic, Fuzzy)):
        return dataclasses.replace(node, body=_merged(node.body))
    if isinstance(node, BranchReset):
        return dataclasses.replace(node, branches=tuple(_merged(b) for b in node.branches))
    if isinstance(node, Conditional):
        return dataclasses.replace(node, yes=_merged(node.yes), no=_merged(node.no))
    return node


def _is_negated_character(node: Node) -> bool:
    return isinstance(node, Chars) and node.kind == "negated_literal"


def _merge_runs(node: Alternation) -> Node:
    branches = flatten_alternation(node)
    _refuse_merges_after_common_affixes(branches)
    merged: list[Node] = []
    run: list[Chars] = []

    def flush() -> None:
        if sum(1 for member in run if _is_negated_character(member)) < 2:
            merged.extend(run)
        elif any(member.ignore_case for member in run):
            raise UnsupportedRegex(
                "negated characters merged under (?i)",
                "regex merges alternatives like [^a]|[^b] into one set, with case-insensitive rules not modelled",
            )
        else:
            merged.append(_buggy_union(run))
        run.clear()

    for branch in branches:
        inner = unwrap(branch)
        if isinstance(inner, Chars) and inner.kind != "any":
            if run and run[-1].ignore_case != inner.ignore_case:
                flush()
            run.append(inner)
        else:
            flush()
            merged.append(branch)
    flush()
    if len(merged) == len(branches):
        return node  # nothing merged: keep the tree as written
    return merged[0] if len(merged) == 1 else Alternation(tuple(merged))


def _buggy_union(run: list[Chars]) -> Chars:
    """What regex's set union of `run` matches: the other members, or none of the negated characters."""
    negated = normalise((m.literal, m.literal) for m in run if _is_negated_character(m) and m.literal is not None)
    others = [r for m in run if not _is_negated_character(m) for r in m.ranges]
    return Chars(normalise([*others, *complement(negated)]), "set")


def _refuse_merges_after_common_affixes(branches: list[Node]) -> None:
    """regex moves items common to the start (or, in lookbehinds, the end) of every branch out first,
    which can leave several negated characters adjacent; we do not model that factoring."""
    if len(branches) < 2:
        return
    sequences = [flat_items(branch) for branch in branches]
    shortest = min(len(items) for items in sequences)
    for step in (1, -1):
        common = 0
        while common < shortest and all(
            items[common * step - (step < 0)] == sequences[0][common * step - (step < 0)] for items in sequences
        ):
            common += 1
        if not common:
            continue
        rests = [items[common:] if step > 0 else items[: len(items) - common] for items in sequences]
        if sum(1 for rest in rests if len(rest) == 1 and _is_negated_character(unwrap(rest[0]))) >= 2:
            raise UnsupportedRegex(
                "negated characters after a common prefix",
                "regex factors out the common part of the branches and then merges [^a]|[^b] into [^ab]",
            )
