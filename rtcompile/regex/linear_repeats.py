r"""Repeats that stdlib `re` runs one slow step per character, rewritten into exactly equivalent forms
it runs as tight loops (complete matching: `tag_pattern`s, the start anchor).

`re` extends a lazy repeat one character at a time, re-trying the rest of the pattern after each,
and runs a repeated alternation through its general repeat machinery for every iteration; on a
400 KB argument value that is most of a one-shot `parse_response`. `regex` has shortcuts for both.
Two rewrites, each exact (same matches, same captures, same order of backtracking):

* A lazy repeat of one character class ``C{m,}?`` whose continuation ``R`` is the rest of the pattern
  (nothing after it can make the match fail and backtrack into the repeat) ends at the first position
  where ``R`` matches. ``R`` can only match where a character of its first-character set ``S`` is,
  so it becomes ``C{m}[C-S]*(?:(?!R)[C&S][C-S]*)*``: a greedy run of characters that cannot start
  ``R``, and at each one that can, a check that ``R`` does not start there (``R`` is tried at fewer
  positions than before, and once more where it matches). If ``C`` and ``S`` are disjoint, ``R``
  can only start where the run of ``C`` ends: ``C{m,}``. Only when ``R`` cannot match empty, holds
  no atomic group, possessive or lazy repeat (a second lazy repeat in ``R`` would be scanned twice:
  the last one is the long value), nor anything the tree does not model, and refers back only to
  groups captured before the repeat (``<(\w+)>(.*?)</\1>``: a group still open there, or one
  captured in ``R``, would hold something else in the check than in ``R``).
* ``(?:A|B)*`` with ``A`` one character class and ``B`` a fixed sequence of classes whose first
  cannot be in ``A`` (a string body ``(?:[^"\\]|\\.)*``): every text splits into iterations in at
  most one way, so it is ``A*(?:BA*)*``, which tries the same ends in the same (longest first) order.

These run after `rtcompile.regex.nested_repeats` (their loops are not ambiguous nested repeats: an
iteration always consumes its one mandatory character first).
"""

from __future__ import annotations

import dataclasses

from rtcompile.regex.ast import (
    Alternation,
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
    unwrap,
    walk,
)
from rtcompile.regex.charsets import complement, intersection
from rtcompile.regex.first_chars import first_characters

# What a continuation may not contain for the lazy rewrite (see the module docstring).
_UNMODELLED = (Atomic, Opaque, Fuzzy, Conditional, BranchReset)


def linearise_repeats(root: Node) -> Node:
    """`root` with both rewrites applied wherever they are exact."""
    return _rewrite(root, _Rest((), ()), frozenset())


@dataclasses.dataclass(frozen=True)
class _Rest:
    """What follows a node up to the end of the pattern: as written (to judge it) and rewritten (to
    spell it)."""

    written: tuple[Node, ...]
    rewritten: tuple[Node, ...]


def _rewrite(node: Node, rest: _Rest | None, open_groups: frozenset[str]) -> Node:
    """`node` rewritten; `rest` is what follows it up to the end of the pattern, None where something
    after it may send the matcher back into it (inside a repeat, a lookbehind...); `open_groups` the
    numbers and names of the groups around it."""
    if isinstance(node, Concat):
        items: list[Node] = []
        for index in range(len(node.items) - 1, -1, -1):
            # Right to left, so that a continuation is spelled with the items after it rewritten.
            after = (
                None if rest is None else _Rest((*node.items[index + 1 :], *rest.written), (*items, *rest.rewritten))
            )
            items.insert(0, _rewrite(node.items[index], after, open_groups))
        return Concat(tuple(items))
    if isinstance(node, Group):
        return dataclasses.replace(node, body=_rewrite(node.body, rest, open_groups | _references(node)))
    if isinstance(node, Alternation):
        return Alternation(tuple(_rewrite(branch, rest, open_groups) for branch in node.branches))
    if isinstance(node, Lookaround):
        # A lookahead stops at its first match: its end is the end of the pattern for its body.
        return dataclasses.replace(node, body=_rewrite(node.body, None if node.behind else _Rest((), ()), open_groups))
    if isinstance(node, Atomic):
        return dataclasses.replace(node, body=_rewrite(node.body, _Rest((), ()), open_groups))
    if isinstance(node, Repeat):
        if rest is not None and (lazy := _unrolled_lazy(node, rest, open_groups)) is not None:
            return lazy
        repeat = dataclasses.replace(node, body=_rewrite(node.body, None, open_groups))
        return _unrolled_alternation(repeat) or repeat
    return node


def _references(group: Group) -> frozenset[str]:
    """What a backreference to `group` may say (`_group_key`): its number, and its name if it has one."""
    return frozenset({str(group.index)} if group.name is None else {str(group.index), group.name})


def _group_key(reference: str) -> str:
    """A backreference's group as `_references` spells it (`\\g<01>` is group 1)."""
    return str(int(reference)) if reference.isdigit() else reference


# -- lazy repeats ending the pattern ------------------------------------------------------------------


def _unrolled_lazy(node: Repeat, rest: _Rest, open_groups: frozenset[str]) -> Node | None:
    body = unwrap(node.body)
    if not (node.lazy and not node.possessive and node.max is None and isinstance(body, Chars)):
        return None
    inside = [inner for item in rest.written for inner in walk(item)]
    if not rest.written or any(map(_unsuitable, inside)):
        return None
    # (the check `(?!R)` runs with the groups around the repeat still open and `R`'s made plain)
    unsettled = open_groups.union(*(_references(inner) for inner in inside if isinstance(inner, Group)))
    if any(isinstance(inner, Backreference) and _group_key(inner.group) in unsettled for inner in inside):
        return None
    # The characters `R` consumes first (a lookahead in it only tests the text after it).
    first = first_characters(Concat(rest.written), lookaheads=False)
    if first is None or first.nullable:
        return None
    starts = first.ranges
    stops = intersection(body.ranges, starts)
    if not stops:
        return Repeat(body, node.min, None, lazy=False)
    run = intersection(body.ranges, complement(starts))
    run_repeat: list[Node] = [Repeat(Chars(run, "set"), 0, None, lazy=False)] if run else []
    mandatory: list[Node] = [body] * node.min if node.min <= 4 else [Repeat(body, node.min, node.min, lazy=False)]
    if len(rest.written) == 1 and isinstance(unwrap(rest.written[0]), Chars):
        return Concat((*mandatory, *run_repeat))  # R is one character: it matches wherever the run stops
    not_rest = Lookaround(
        Concat(tuple(_without_captures(item) for item in rest.rewritten)), behind=False, positive=False
    )
    step = Concat((not_rest, Chars(stops, "set"), *run_repeat))
    return Concat((*mandatory, *run_repeat, Repeat(step, 0, None, lazy=False)))


def _unsuitable(node: Node) -> bool:
    if isinstance(node, _UNMODELLED):
        return True
    return isinstance(node, Repeat) and (node.lazy or node.possessive)


def _without_captures(node: Node) -> Node:
    """`node` with its capture groups made plain: the lookahead copy of a continuation only tests."""
    if isinstance(node, Group):
        return Concat((_without_captures(node.body),))
    if isinstance(node, Concat):
        return Concat(tuple(_without_captures(item) for item in node.items))
    if isinstance(node, Alternation):
        return Alternation(tuple(_without_captures(branch) for branch in node.branches))
    if isinstance(node, (Repeat, Lookaround)):
        return dataclasses.replace(node, body=_without_captures(node.body))
    return node


# -- repeated two-way alternations --------------------------------------------------------------------


def _unrolled_alternation(node: Repeat) -> Node | None:
    if (node.min, node.max, node.lazy, node.possessive) != (0, None, False, False):
        return None
    body = unwrap(node.body)
    if not isinstance(body, Alternation) or len(body.branches) != 2:
        return None
    first, second = (unwrap(branch) for branch in body.branches)
    single, fixed = (first, second) if isinstance(first, Chars) else (second, first)
    if not isinstance(single, Chars):
        return None
    sequence = fixed.items if isinstance(fixed, Concat) else (fixed,)
    chars = [unwrap(item) for item in sequence]
    if not chars or not all(isinstance(item, Chars) for item in chars):
        return None
    lead = chars[0]
    assert isinstance(lead, Chars)
    if intersection(single.ranges, lead.ranges):
        return None  # an iteration could go either way
    run = Repeat(single, 0, None, lazy=False)
    return Concat((run, Repeat(Concat((*chars, run)), 0, None, lazy=False)))
