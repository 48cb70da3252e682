"""What can follow a delimiter match's first character, for the generated parsers' second look.

The fast path of a generated `feed` sends a chunk to the scanner when it holds a character a watched
delimiter can start with (`rtcompile.regex.first_chars`). Most of those characters, in real text,
start no delimiter: the `<` of `a < b` cannot begin `<\\|open\\|>call ...`. Where every match of a
pattern that starts with `<` goes on with `|`, a `<` followed by anything else (and not ending the
chunk) can start neither a match nor a partial match, and the chunk may stay on the fast path.

The analysis summarises each node by its two-character prefixes, as a parser generator computes
FIRST sets of length two: whether the node matches the empty string, the characters that alone are a
match, and pairs (first characters, characters that can follow them). Concatenation, alternation
and repetition combine summaries exactly (a repeat's summary settles after two rounds); zero-width
items (anchors, lookarounds) are taken as matching the empty string, which only widens the result.
Anything it cannot bound gives None, and the caller keeps the first-character test alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from rtcompile.regex.ast import (
    Alternation,
    Assertion,
    Atomic,
    BranchReset,
    Chars,
    Concat,
    Group,
    Lookaround,
    Node,
    Repeat,
    flat_items,
)
from rtcompile.regex.charsets import Ranges, contains, normalise, size
from rtcompile.regex.first_chars import MAX_CLASS_SIZE, modelled_tree, paths_after_literals
from rtcompile.regex.translate import InvalidRegex, UnsupportedRegex, translate

# A summary with more pairs than this is given up (nested alternations of classes); real delimiters
# have a handful.
_MAX_PAIRS: Final = 64


class _Unbounded(Exception):
    """The node's prefixes cannot be summarised (a backreference, fuzzy matching, too many pairs)."""


@dataclass(frozen=True)
class _Prefixes:
    """The two-character prefixes of a node's matches."""

    nullable: bool  # the empty string is a match
    ones: Ranges  # characters that alone are a match
    # (first characters, characters that can follow them) of the matches of two or more characters
    pairs: tuple[tuple[Ranges, Ranges], ...]

    @property
    def first(self) -> Ranges:
        return normalise([*self.ones, *(r for first, _ in self.pairs for r in first)])


_EMPTY: Final = _Prefixes(True, (), ())
_NOTHING: Final = _Prefixes(False, (), ())  # no match at all

# Zero-width tests of the text's very start or end (without MULTILINE): what `first_chars.match_starts`
# takes as starting no match inside the text.
_STRING_ENDS: Final = ("string_start", "string_end", "string_end_line")


def second_chars(pattern: str) -> dict[int, Ranges | None] | None:
    """For each character a match of `pattern` can start with, the characters that can follow it in
    a match, or None where the match may be that one character; None for the whole pattern when its
    matches cannot be bounded (or `regex`'s partial matches are not those of its stdlib translation,
    so that text the analysis rules out could still be held back by the reference). Paths led by a
    lookbehind on a literal are left out: the fast path tests for that literal's end instead
    (`MatchStarts.after`)."""
    try:
        translate(pattern)
    except (InvalidRegex, UnsupportedRegex, RecursionError):
        return None
    parsed = modelled_tree(pattern)
    if parsed is None:
        return None
    # a path led by a lookbehind on a literal is the fast path's business where the literal ends
    free, _ = paths_after_literals(parsed.root)
    try:
        prefixes = _either([_path_prefixes(path) for path in free])
    except (_Unbounded, RecursionError):
        return None
    first = prefixes.first
    if prefixes.nullable or not first or size(first) > MAX_CLASS_SIZE:
        return None
    seconds: dict[int, Ranges | None] = {}
    for lo, hi in first:
        for cp in range(lo, hi + 1):
            if contains(prefixes.ones, cp):
                seconds[cp] = None
            else:
                seconds[cp] = normalise([r for f, s in prefixes.pairs if contains(f, cp) for r in s])
    return seconds


def _path_prefixes(path: Node) -> _Prefixes:
    """The prefixes of where a top-level alternative's matches begin. One that is a positive
    lookahead alone (`...|(?=<tool>)`) matches the empty string, and only where its body's text
    starts: that text's prefixes are the ones a match there needs (as `first_chars` reads it), where
    taken as zero-width it would make the whole pattern nullable and leave it without a second look."""
    node = path
    while isinstance(node, (Group, Atomic)):
        node = node.body
    if isinstance(node, Lookaround) and node.positive and not node.behind:
        return _prefixes(node.body)
    if _tests_a_string_end_first(path):
        return _NOTHING
    return _prefixes(path)


def _tests_a_string_end_first(path: Node) -> bool:
    """Whether `path` first tests the text's start or end (`^`, `\\A`, `$`, `\\Z` without MULTILINE):
    then it starts no match inside the text, as `first_chars.match_starts` reads it (its `$` may still
    hold back a final newline, which the fast path tests on its own), and has no prefixes to look at
    (taken as zero-width it would make the pattern nullable: `<\\|im_end\\|>|$` without a second look)."""
    items = flat_items(path)
    first = items[0] if items else None
    while isinstance(first, Group):
        inner = flat_items(first.body)
        first = inner[0] if inner else None
    return isinstance(first, Assertion) and first.kind in _STRING_ENDS


def _prefixes(node: Node) -> _Prefixes:
    if isinstance(node, Chars):
        if node.untranslatable is not None:
            raise _Unbounded(node.untranslatable.construct)
        return _Prefixes(False, node.ranges, ())
    if isinstance(node, (Assertion, Lookaround)):
        return _EMPTY  # consumes nothing; what it requires only narrows the matches
    if isinstance(node, (Group, Atomic)):
        return _prefixes(node.body)
    if isinstance(node, Concat):
        summary = _EMPTY
        for item in node.items:
            summary = _then(summary, _prefixes(item))
        return summary
    if isinstance(node, (Alternation, BranchReset)):
        return _either([_prefixes(branch) for branch in node.branches])
    if isinstance(node, Repeat):
        return _repeat(_prefixes(node.body), node.min, node.max)
    raise _Unbounded(type(node).__name__)  # backreferences, conditionals, fuzzy matching, \X ...


def _then(left: _Prefixes, right: _Prefixes) -> _Prefixes:
    """The prefixes of `left` followed by `right`."""
    pairs = list(left.pairs)
    right_first = right.first
    if left.ones and right_first:
        pairs.append((left.ones, right_first))
    if left.nullable:
        pairs += right.pairs
    ones = normalise([*(left.ones if right.nullable else ()), *(right.ones if left.nullable else ())])
    return _checked(_Prefixes(left.nullable and right.nullable, ones, tuple(pairs)))


def _either(branches: list[_Prefixes]) -> _Prefixes:
    return _checked(
        _Prefixes(
            any(b.nullable for b in branches),
            normalise([r for b in branches for r in b.ones]),
            tuple(pair for b in branches for pair in b.pairs),
        )
    )


def _repeat(body: _Prefixes, low: int, high: int | None) -> _Prefixes:
    """`body` repeated `low` to `high` times. The prefixes of k repetitions are the same for every
    k >= 2 (two characters come from at most two repetitions), so 0, 1 and 2 stand for all."""
    rounds = {min(k, 2) for k in range(low, low + 3) if high is None or k <= high}
    summaries = []
    if 0 in rounds:
        summaries.append(_EMPTY)
    if 1 in rounds:
        summaries.append(body)
    if 2 in rounds:
        summaries.append(_then(body, body))
    return _either(summaries)


def _checked(summary: _Prefixes) -> _Prefixes:
    if len(summary.pairs) > _MAX_PAIRS:
        raise _Unbounded("too many pairs")
    return summary
