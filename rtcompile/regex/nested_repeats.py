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
  a second one is dropped (``a+?a*?``), since `regex`'s partial matches depend on the first
  (``a*?a+?``); non-capturing groups are opened first, as `regex` opens them (``(?:.*)(?:.*)`` is
  ``.*.*``, then ``.*``);
* the same for runs of one class with counts: ``C{a,b}C{c,d} -> C{a+c,b+d}`` (greedy; lazy ones only
  unbounded, as above);
* a greedy run ``C{m,}`` next to a part that may match nothing and reads only characters of ``C``
  with greedy repeats (``[^>]*(?:a[^>]*)*``, ``(?:a|b)?[ab]+``) is the run alone. (Lazy repeats are
  left alone in these rewrites although the argument below holds for them: `regex`'s partial
  matching has shortcuts of its own for them, which the partial-match translation mirrors.)
* repeats of a part that reads one character of ``C`` and then a greedy run of ``C``:
  ``(?:X C{k,})* -> (?:X C{k,})?`` (``(?:a\w*)*``), ``+`` without the ``?``, lazy ``*?`` to ``??``;
* a repeat of a counted run whose iterations may take zero or one character or more, up to a bound:
  ``(?:C{a,b}){m,n} -> C{a*m,b*n}`` for ``a <= 1`` (``(?:a?){25}`` is ``a{0,25}``; ``n`` may be
  unbounded), greedy;
* any other unbounded repeat whose iterations can split the same text in several ways (its body is,
  apart from parts that may match nothing, an unbounded repeat or an alternation holding one) is
  refused (`UnsupportedRegex`), so the module matches it with `regex` itself.

Why the rewrites that drop or merge parts are exact: none of those parts captures, tests or refers
back, so what the rest of the pattern sees is only where they end, and a backtracking matcher takes
the first end, in the order it tries them, for which the rest matches. Every rewrite keeps both the
set of ends and the order in which each end is first tried (longest first for greedy runs: the run
gives back one character at a time, and whatever else can match at a given end only reaches ends
tried before; shortest first for lazy ones). Each was also checked against `regex` on exhaustive small
texts, partial matches included. What is left ambiguous is for `rtcompile.regex.backtracking` to judge.
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
    flat_items,
    flatten_alternation,
    unwrap,
    walk,
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


# Counts above this are left as written (a merged count must stay a valid quantifier for both engines).
_MAX_MERGED_COUNT = 65_535


def _rewrite(node: Node) -> Node:
    if isinstance(node, Repeat):
        node = dataclasses.replace(node, body=_rewrite(node.body))
        return _collapse(node) or _collapse_counted(node) or _single_iteration(node) or node
    if isinstance(node, Concat):
        rewritten = [_rewrite(item) for item in flat_items(node)]
        return Concat(_merge_adjacent_runs(flat_items(Concat(tuple(rewritten)))))
    if isinstance(node, Alternation):
        return Alternation(tuple(_rewrite(branch) for branch in node.branches))
    if isinstance(node, Group):
        return dataclasses.replace(node, body=_rewrite(node.body))
    return node


def _merge_adjacent_runs(items: list[Node]) -> tuple[Node, ...]:
    """`items` with each pair of adjacent class runs merged where one run's class holds the other's:
    ``A{m,} B*`` is ``A{m,}`` when B is within A, ``A* B{m,}`` is ``B{m,}`` when A is within B; runs
    of one class with counts are added up; a part that may match nothing and reads only characters of
    a greedy unbounded run next to it is dropped."""
    merged: list[Node] = []
    for item in items:
        previous = merged[-1] if merged else None
        added = _added_runs(previous, item) if isinstance(previous, Repeat) and isinstance(item, Repeat) else None
        if added is not None:
            merged[-1] = added
            continue
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
        before, after = _greedy_run(previous), _greedy_run(item)
        if before is not None and _absorbed(item, before):
            continue
        if previous is not None and after is not None and _absorbed(previous, after):
            merged[-1] = item
            continue
        merged.append(item)
    return tuple(merged)


def _run_class(repeat: Repeat) -> Chars | None:
    """The class of a run of one character class (not possessive, translatable), else None."""
    body = unwrap(repeat.body)
    if repeat.possessive or not isinstance(body, Chars) or body.untranslatable is not None:
        return None
    return body


def _added_runs(first: Repeat, second: Repeat) -> Repeat | None:
    """``C{a,b}C{c,d}`` as ``C{a+c,b+d}`` (one class, both greedy or both lazy), else None."""
    one, two = _run_class(first), _run_class(second)
    if one is None or two is None or one.ranges != two.ranges or first.lazy != second.lazy:
        return None
    if first.lazy and (first.max is not None or second.max is not None):
        return None  # regex's partial matching has shortcuts of its own for lazy counted runs
    if first.lazy and second.min > 0:
        return None  # `a*?a+?` stays: regex's partial search reads a lazy run by what follows it
    high = None if first.max is None or second.max is None else first.max + second.max
    if first.min + second.min > _MAX_MERGED_COUNT or (high is not None and high > _MAX_MERGED_COUNT):
        return None
    return Repeat(first.body, first.min + second.min, high, first.lazy)


def _greedy_run(node: Node | None) -> Ranges | None:
    """The class of a greedy unbounded run of one class (``C{m,}``), else None."""
    if not isinstance(node, Repeat) or node.lazy or node.max is not None:
        return None
    chars = _run_class(node)
    return None if chars is None else chars.ranges


def _absorbed(node: Node, run: Ranges) -> bool:
    """Whether `node` may match nothing and reads nothing but characters of `run`, with no capture,
    test or backreference in it: next to a greedy run of `run` it changes neither the ends nor the
    order in which they are first tried."""
    if width(node)[0] != 0:
        return False
    for inner in walk(node):
        if isinstance(inner, Chars):
            if inner.untranslatable is not None or not _within(inner.ranges, run):
                return False
        elif isinstance(inner, Repeat):
            if inner.possessive or inner.lazy:
                return False  # a lazy run is no different here, but regex's partial matching treats it apart
        elif not isinstance(inner, (Concat, Alternation)):
            return False
    return True


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


def _collapse_counted(outer: Repeat) -> Repeat | None:
    """``(?:C{a,b}){m,n}`` with ``a <= 1`` and ``b`` bounded is ``C{a*m,b*n}``: its iterations reach
    every count from ``a*m`` to ``b*n`` (``n`` may be unbounded), in the same order."""
    found = _single_repeat(outer.body)
    if found is None or found[1] is not None or outer.possessive:
        return None
    inner, _ = found
    if inner.max is None or inner.min > 1 or inner.lazy or outer.lazy or _run_class(inner) is None:
        return None
    low = inner.min * outer.min
    high = None if outer.max is None else inner.max * outer.max
    if low > _MAX_MERGED_COUNT or (high is not None and high > _MAX_MERGED_COUNT):
        return None
    return Repeat(inner.body, low, high, outer.lazy)


def _single_iteration(outer: Repeat) -> Node | None:
    """``(?:X C{k,})*`` (X one character of the class C, the run greedy) is ``(?:X C{k,})?``: a second
    iteration only reads on into the same run of C, so it reaches no end the first did not; ``+`` is
    one iteration."""
    if outer.possessive or outer.lazy or outer.max is not None or outer.min > 1:
        return None
    body = unwrap(outer.body)
    if not isinstance(body, Concat) or len(body.items) != 2:
        return None
    head, run = (unwrap(item) for item in body.items)
    run_class = _greedy_run(run)
    if not isinstance(head, Chars) or head.untranslatable is not None or run_class is None:
        return None
    if not _within(head.ranges, run_class):
        return None
    once = Concat((head, run))
    return once if outer.min == 1 else Repeat(once, 0, 1, outer.lazy)


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
