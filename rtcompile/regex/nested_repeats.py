r"""Nested unbounded repeats: stdlib `re` backtracks exponentially where `regex` does not.

On a near miss, ``<(a+)+>`` tries every way of splitting the run of ``a`` into iterations: `re` takes
about a second on 22 characters, while `regex` memoises per attempt the positions where a repeat's
body or tail already failed ("repeat guards") and answers in microseconds. A compiled module must not
be asymptotically slower than the reference, so:

* the forms below are rewritten into one repeat with the same matches and the same captures (each
  rewrite was checked against `regex` on exhaustive small texts; ``S`` is one character or class):
  ``(?:S+)+ -> S+``, ``(S+)+ -> (S+)``, ``(?:S*)* -> S*``, ``(?:S+)* -> S*``, ``(S+)* -> (S+)?``,
  ``(?:S*)+ -> S*``, ``(?:S+?)+ -> S+``, ``(?:S+?)+? -> S+?``;
* adjacent unbounded repeats of classes where one class holds the other (``\s*\s*``, ``\s+\n*``,
  ``a*[ab]+``), both greedy or both lazy, become the one that holds: the same strings, and, since the
  rest of the pattern sees only where the run ends, the same match (`re` would try every way of
  sharing the run between them: polynomial in its length, where `regex` is not); of two lazy runs only
  a second one is dropped (``a+?a*?``), since `regex`'s partial matches depend on the first (``a*?a+?``);
* any other unbounded repeat whose iterations can split the same text in several ways (its body is,
  apart from parts that may match nothing, an unbounded repeat or an alternation holding one) is
  refused (`UnsupportedRegex`), so the module matches it with `regex` itself.
"""

from __future__ import annotations

import dataclasses

from rtcompile.regex.ast import (
    Alternation,
    Chars,
    Concat,
    Group,
    Node,
    Repeat,
    children,
    flatten_alternation,
    unwrap,
    width,
)
from rtcompile.regex.charsets import Ranges, normalise
from rtcompile.regex.errors import UnsupportedRegex
from rtcompile.regex.optimiser import is_single_character


def tame_nested_repeats(root: Node) -> Node:
    """`root` with the exact rewrites applied; raises `UnsupportedRegex` for nested repeats left over."""
    rewritten = _rewrite(root)
    _refuse_ambiguous(rewritten)
    return rewritten


def _rewrite(node: Node) -> Node:
    if isinstance(node, Repeat):
        node = dataclasses.replace(node, body=_rewrite(node.body))
        return _collapse(node) or node
    if isinstance(node, Concat):
        return Concat(_merge_adjacent_runs([_rewrite(item) for item in node.items]))
    if isinstance(node, Alternation):
        return Alternation(tuple(_rewrite(branch) for branch in node.branches))
    if isinstance(node, Group):
        return dataclasses.replace(node, body=_rewrite(node.body))
    return node


def _merge_adjacent_runs(items: list[Node]) -> tuple[Node, ...]:
    """`items` with each pair of adjacent class runs merged where one run's class holds the other's:
    ``A{m,} B*`` is ``A{m,}`` when B is within A, ``A* B{m,}`` is ``B{m,}`` when A is within B."""
    merged: list[Node] = []
    for item in items:
        previous = merged[-1] if merged else None
        if isinstance(previous, Repeat) and isinstance(item, Repeat) and _mergeable(previous, item):
            first, second = _class_of(previous), _class_of(item)
            if item.min == 0 and _within(second, first):
                continue  # the second run adds nothing the first could not take
            # Not a lazy first run: `regex`'s partial search reads a lazy run by what follows it, so
            # `a*?a+?` reports partial matches (within one character of the end, when a literal or a
            # negated character follows) that `a+?` alone does not.
            if previous.min == 0 and _within(first, second) and not previous.lazy:
                merged[-1] = item
                continue
        merged.append(item)
    return tuple(merged)


def _mergeable(first: Repeat, second: Repeat) -> bool:
    return (
        first.max is None
        and second.max is None
        and first.lazy == second.lazy
        and not first.possessive
        and not second.possessive
        and isinstance(first.body, Chars)
        and isinstance(second.body, Chars)
        and first.body.untranslatable is None
        and second.body.untranslatable is None
    )


def _class_of(repeat: Repeat) -> Ranges:
    assert isinstance(repeat.body, Chars)
    return repeat.body.ranges


def _within(inner: Ranges, outer: Ranges) -> bool:
    return normalise(inner + outer) == normalise(outer)


def _single_repeat(node: Node) -> tuple[Repeat, Group | None] | None:
    """The inner repeat of ``(?:S+)`` or ``(S+)`` (with its capture group), if `node` is one."""
    inner = unwrap(node)
    group = None
    if isinstance(inner, Group):
        group, inner = inner, unwrap(inner.body)
    if isinstance(inner, Repeat) and not inner.possessive and is_single_character(inner.body):
        return inner, group
    return None


def _collapse(outer: Repeat) -> Node | None:
    """The single repeat equal to `outer` (an unbounded repeat of an unbounded repeat), if known."""
    if outer.max is not None or outer.possessive or outer.min > 1:
        return None
    found = _single_repeat(outer.body)
    if found is None:
        return None
    inner, group = found
    if inner.max is not None or inner.min > 1:
        return None
    outer_kind = (outer.min, outer.lazy)  # (1, False) is +, (0, False) is *, (1, True) is +?
    inner_kind = (inner.min, inner.lazy)

    def repeat(low: int, high: int | None, lazy: bool) -> Repeat:
        return Repeat(inner.body, low, high, lazy)

    if group is None:
        table = {
            ((1, False), (1, False)): repeat(1, None, False),  # (?:S+)+
            ((0, False), (0, False)): repeat(0, None, False),  # (?:S*)*
            ((0, False), (1, False)): repeat(0, None, False),  # (?:S+)*
            ((1, False), (0, False)): repeat(0, None, False),  # (?:S*)+
            ((1, False), (1, True)): repeat(1, None, False),  # (?:S+?)+
            ((1, True), (1, True)): repeat(1, None, True),  # (?:S+?)+?
        }
        return table.get((outer_kind, inner_kind))
    if inner_kind != (1, False):
        return None
    captured = dataclasses.replace(group, body=repeat(1, None, False))
    if outer_kind == (1, False):  # (S+)+
        return captured
    if outer_kind == (0, False):  # (S+)* -> (S+)?
        return Repeat(captured, 0, 1, False)
    return None


def _refuse_ambiguous(node: Node) -> None:
    if isinstance(node, Repeat) and node.max is None and _splits_ambiguously(node.body):
        raise UnsupportedRegex(
            "nested repeat",
            "stdlib re backtracks exponentially on near misses of nested unbounded repeats (regex's repeat "
            "guards do not)",
        )
    for child in children(node):
        _refuse_ambiguous(child)


def _splits_ambiguously(body: Node) -> bool:
    """Whether one iteration of `body` can itself be an unbounded repeat (all else matching nothing)."""
    inner = unwrap(body)
    if isinstance(inner, Group):
        return _splits_ambiguously(inner.body)
    if isinstance(inner, Repeat):
        return inner.max is None or _splits_ambiguously(inner.body)
    if isinstance(inner, Alternation):
        return any(_splits_ambiguously(branch) for branch in flatten_alternation(inner))
    if isinstance(inner, Concat):
        solid = [item for item in inner.items if width(item)[0] > 0]
        if len(solid) > 1:
            return False
        candidates = solid or list(inner.items)
        return any(_splits_ambiguously(item) for item in candidates)
    return False
