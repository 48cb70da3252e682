"""What a delimiter match can start with, for the generated parsers' fast paths.

When nothing is held back and a new chunk contains none of the characters that any watched
delimiter can start with, no delimiter can match or partially match inside it: the chunk is
plain region text. Generated modules test that with one `in` check (or one character-class
search) and skip the scanner entirely, which is what most chunks of a long region need.

The analysis reads the pattern's tree and is conservative: anything it cannot bound (a match that
may be empty, large classes such as ``.`` or ``[^<]``, backreferences, fuzzy matching) gives `None`,
and that parser state simply has no fast path. Partial matches are those of `regex`'s partial search
as the translation reproduces it; for patterns it refuses because `regex`'s shortcuts report partial
matches that cannot occur (lazy single-character repeats), the bound covers real matches only.
"""

from __future__ import annotations

from typing import Final

from rtcompile.ir import Delimiter
from rtcompile.regex.ast import (
    Alternation,
    Assertion,
    Atomic,
    BranchReset,
    Chars,
    Concat,
    Conditional,
    Group,
    Lookaround,
    Node,
    Opaque,
    ParsedRegex,
    Repeat,
    flat_items,
    walk,
)
from rtcompile.regex.charsets import size
from rtcompile.regex.parser import parse_regex

MAX_CLASS_SIZE: Final = 4096
# Inline flags whose meaning the tree reflects; any other (ASCII, full case folding, V1...) changes
# what the nodes match, so no bound is claimed.
_MODELLED_FLAGS: Final = frozenset(("i", "m", "s", "x", "V0"))


class _Unbounded(Exception):
    """The first character of a match cannot be bounded to a small explicit set."""


def delimiter_first_chars(delimiter: Delimiter) -> frozenset[int] | None:
    """Code points a match (or partial match) of `delimiter` can start with; None if unbounded."""
    if delimiter.literals is not None:
        return frozenset(ord(lit[0]) for lit in delimiter.literals)
    parsed = modelled_tree(delimiter.pattern)
    if parsed is None:
        return None
    try:
        chars, nullable = _first(parsed.root)
    except (_Unbounded, RecursionError):
        return None
    return None if nullable else frozenset(chars)


def modelled_tree(pattern: str) -> ParsedRegex | None:
    """The tree, if the analyses can rely on it: the flags it reflects, and no opaque construct (``\\K``,
    for one, moves the start of the match it reports)."""
    try:
        parsed = parse_regex(pattern)
    except (ValueError, RecursionError):
        return None
    if any(flag.letter not in _MODELLED_FLAGS for flag in parsed.inline_flags):
        return None
    if any(isinstance(node, Opaque) for node in walk(parsed.root)):
        return None
    return parsed


def _first(node: Node) -> tuple[set[int], bool]:
    """First characters of `node`, and whether it can match the empty string."""
    if isinstance(node, Chars):
        if size(node.ranges) > MAX_CLASS_SIZE:
            raise _Unbounded("large class")
        return {cp for lo, hi in node.ranges for cp in range(lo, hi + 1)}, False
    if isinstance(node, Assertion):
        return set(), True  # anchors and word boundaries consume nothing
    if isinstance(node, Lookaround):
        if node.behind:
            return set(), True  # a lookbehind looks at text before the match
        # A lookahead reads the following text too, positive or negative (and `regex` reports partial
        # matches from it).
        return _first(node.body)[0], True
    if isinstance(node, (Group, Atomic)):
        return _first(node.body)
    if isinstance(node, Concat):
        return _sequence(node.items)
    if isinstance(node, (Alternation, BranchReset)):
        return _union(node.branches)
    if isinstance(node, Repeat):
        chars, nullable = _first(node.body)
        return chars, nullable or node.min == 0
    if isinstance(node, Conditional):
        chars, nullable = _union((node.yes, node.no))
        if isinstance(node.condition, Lookaround):
            chars |= _first(node.condition)[0]
        return chars, nullable
    raise _Unbounded(type(node).__name__)  # backreferences, fuzzy matching, \X, group calls...


def _sequence(items: tuple[Node, ...]) -> tuple[set[int], bool]:
    chars: set[int] = set()
    for item in items:
        item_chars, nullable = _first(item)
        chars |= item_chars
        if not nullable:
            return chars, False
    return chars, True


def _union(branches: tuple[Node, ...]) -> tuple[set[int], bool]:
    chars: set[int] = set()
    any_nullable = False
    for branch in branches:
        branch_chars, nullable = _first(branch)
        chars |= branch_chars
        any_nullable = any_nullable or nullable
    return chars, any_nullable


def char_class(first_chars: frozenset[int]) -> str:
    """A stdlib regex character class matching exactly `first_chars`."""
    return "[" + "".join(f"\\U{c:08x}" if c > 0xFFFF else f"\\u{c:04x}" for c in sorted(first_chars)) + "]"


def starts_at_buffer_start(delimiter: Delimiter) -> bool:
    """Whether every match must begin at position 0 (the pattern starts with `^` or `\\A`).

    Without MULTILINE both mean the start of the string, and the engines keep at least one
    committed character once they drop text, so such a delimiter can only fire on the first scan.
    """
    if delimiter.literals is not None:
        return False
    parsed = modelled_tree(delimiter.pattern)
    return parsed is not None and _begins_with_string_start(parsed.root)


def _begins_with_string_start(node: Node) -> bool:
    """Whether every path through `node` tests the string start before anything else."""
    items = flat_items(node)
    if not items:
        return False
    first = items[0]
    if isinstance(first, Group):
        return _begins_with_string_start(first.body)
    if isinstance(first, (Alternation, BranchReset)):
        return all(_begins_with_string_start(branch) for branch in first.branches)
    return isinstance(first, Assertion) and first.kind == "string_start"
