"""A backtracking matcher that counts its steps, for the tests of `rtcompile.regex.ambiguity`.

It explores a pattern the way stdlib `re` does: alternatives in order, greedy repeats longest first,
lazy ones shortest first, a repeat ends after an iteration that matched nothing (once its minimum is
reached), lookarounds are tried on their own and never backtracked into, and a failing attempt tries
every path. Each node it enters and each character it tests is a step: the work of one attempt,
counted instead of timed. It runs on the tree of the pattern `re` runs
(`rtcompile.regex.stdlib_tree.stdlib_tree`), and agrees with `re` on what matches (checked by the tests).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from rtcompile.regex.ast import (
    Alternation,
    Assertion,
    Backreference,
    Chars,
    Concat,
    Group,
    Lookaround,
    Node,
    Repeat,
    width,
)
from rtcompile.regex.charsets import contains

Captures = dict[str, tuple[int, int]]
Continuation = Callable[[int, Captures], bool]


class StepLimit(Exception):
    """The attempt took more steps than allowed."""


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


class Backtracker:
    def __init__(self, text: str, limit: int) -> None:
        self.text, self.limit, self.steps = text, limit, 0

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.limit:
            raise StepLimit

    def match(self, node: Node, pos: int, captures: Captures, then: Continuation) -> bool:
        """Whether `node` matches at `pos` with `then` matching after it (trying every way in order)."""
        self.step()
        if isinstance(node, Chars):
            return pos < len(self.text) and contains(node.ranges, ord(self.text[pos])) and then(pos + 1, captures)
        if isinstance(node, Concat):
            return self.sequence(node.items, 0, pos, captures, then)
        if isinstance(node, Alternation):
            return any(self.match(branch, pos, captures, then) for branch in node.branches)
        if isinstance(node, Group):
            key = str(node.index)
            return self.match(node.body, pos, captures, lambda end, inner: then(end, {**inner, key: (pos, end)}))
        if isinstance(node, Repeat):
            return self.repeat(node, 0, pos, -1, captures, then)
        if isinstance(node, Assertion):
            return self.holds(node.kind, pos) and then(pos, captures)
        if isinstance(node, Lookaround):
            return self.lookaround(node, pos, captures, then)
        if isinstance(node, Backreference):
            start, end = captures.get(node.group, (-1, -1))
            if start < 0:
                return False
            piece = self.text[start:end]
            self.steps += len(piece)
            return self.text.startswith(piece, pos) and then(pos + len(piece), captures)
        raise TypeError(node)

    def sequence(self, items: tuple[Node, ...], index: int, pos: int, captures: Captures, then: Continuation) -> bool:
        if index == len(items):
            return then(pos, captures)
        return self.match(
            items[index], pos, captures, lambda end, inner: self.sequence(items, index + 1, end, inner, then)
        )

    def repeat(self, node: Repeat, count: int, pos: int, last: int, captures: Captures, then: Continuation) -> bool:
        """`count` iterations done, the last one starting at `last`."""
        self.step()
        done = count >= node.min
        if done and pos == last:
            return then(pos, captures)  # an empty iteration past the minimum ends the repeat, as in `re`
        more = node.max is None or count < node.max

        def again(end: int, inner: Captures) -> bool:
            return self.repeat(node, count + 1, end, pos, inner, then)

        if node.lazy:
            return (done and then(pos, captures)) or (more and self.match(node.body, pos, captures, again))
        return (more and self.match(node.body, pos, captures, again)) or (done and then(pos, captures))

    def lookaround(self, node: Lookaround, pos: int, captures: Captures, then: Continuation) -> bool:
        found: list[Captures] = []

        def record(end: int, inner: Captures) -> bool:
            if node.behind and end != pos:
                return False
            found.append(inner)
            return True

        if node.behind:  # `re` takes fixed-width lookbehinds only: the body starts that far back
            start = pos - width(node.body)[0]
            matched = start >= 0 and self.match(node.body, start, captures, record)
        else:
            matched = self.match(node.body, pos, captures, record)
        if matched != node.positive:
            return False
        return then(pos, found[0] if matched else captures)

    def holds(self, kind: str, pos: int) -> bool:
        text = self.text
        if kind == "string_start":
            return pos == 0
        if kind == "string_end":
            return pos == len(text)
        if kind == "string_end_line":
            return pos == len(text) or (pos == len(text) - 1 and text[pos] == "\n")
        if kind == "line_start":
            return pos == 0 or text[pos - 1] == "\n"
        if kind == "line_end":
            return pos == len(text) or text[pos] == "\n"
        before = pos > 0 and _is_word(text[pos - 1])
        after = pos < len(text) and _is_word(text[pos])
        if kind == "boundary":
            return before != after
        if kind == "non_boundary":
            return before == after
        raise ValueError(kind)


def attempt(root: Node, text: str, pos: int = 0, limit: int = 2_000_000) -> tuple[int | None, int]:
    """One attempt to match `root` at `pos`: the end of the match (None: no match) and the steps taken
    (`limit` when it ran out)."""
    matcher = Backtracker(text, limit)
    found: list[int] = []

    def accept(end: int, captures: Captures) -> bool:
        found.append(end)
        return True

    depth = sys.getrecursionlimit()
    sys.setrecursionlimit(max(depth, 20_000))
    try:
        matcher.match(root, pos, {}, accept)
    except StepLimit:
        return None, limit
    finally:
        sys.setrecursionlimit(depth)
    return (found[0] if found else None), matcher.steps


def steps(root: Node, text: str, limit: int = 2_000_000) -> int:
    """The steps of one attempt at the start of `text`."""
    return attempt(root, text, 0, limit)[1]
