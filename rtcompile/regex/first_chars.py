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

`first_characters`, the walk over the tree behind it, works on ranges of any size: the held-back runs
(`rtcompile.regex.analysis.pending_run_class`) and the lazy-repeat rewrite
(`rtcompile.regex.linear_repeats`) ask it about classes like ``[^<]`` that no fast path spells out.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    end_kind,
    flat_items,
    flatten_alternation,
    linear_items,
    unwrap,
    walk,
)
from rtcompile.regex.charsets import Ranges, normalise, size
from rtcompile.regex.parser import parse_regex

MAX_CLASS_SIZE: Final = 4096
# Inline flags whose meaning the tree reflects; any other (ASCII, full case folding, V1...) changes
# what the nodes match, so no bound is claimed.
_MODELLED_FLAGS: Final = frozenset(("i", "m", "s", "x", "V0"))


def delimiter_first_chars(delimiter: Delimiter) -> frozenset[int] | None:
    """Code points a match (or partial match) of `delimiter` can start with; None if unbounded."""
    if delimiter.literals is not None:
        return frozenset(ord(lit[0]) for lit in delimiter.literals)
    parsed = modelled_tree(delimiter.pattern)
    if parsed is None:
        return None
    try:
        first = first_characters(parsed.root)
    except RecursionError:
        return None
    # A class too large to spell out char by char (``.``, ``[^<]``) gives no fast path, even where the
    # union of the first characters would be small enough.
    if first is None or first.nullable or first.largest_class > MAX_CLASS_SIZE:
        return None
    return frozenset(cp for lo, hi in first.ranges for cp in range(lo, hi + 1))


@dataclass(frozen=True)
class MatchStarts:
    """Where a match or partial match of a delimiter can begin in text that arrives after a buffer's
    committed part: at one of `chars`, or (`final_newline`) just before a newline that ends the text.
    What `delimiter_first_chars` says, and also for patterns that can match empty where a fast path
    can still tell: a lookahead that needs a character (`(?=<\\|x\\|>)` needs `<`), `\\Z` (only at the very
    end, where a match is held back, empty, with nothing to hold), `$` (there, or before a final newline)
    and `^`/`\\A` (never after the start: a parser that has committed text keeps one character of it
    for such a pattern, so a chunk never starts the text again)."""

    chars: frozenset[int]
    final_newline: bool
    # Or right after one of these strings: a path led by a lookbehind on a literal matches, or
    # partially matches, only where that literal ends (`(?<=</function>)\s*...`, whatever follows).
    after: frozenset[str] = frozenset()


def match_starts(delimiter: Delimiter) -> MatchStarts | None:
    """`MatchStarts` of `delimiter`; None if unbounded (see `delimiter_first_chars`)."""
    if delimiter.literals is not None:
        return MatchStarts(frozenset(ord(lit[0]) for lit in delimiter.literals), False)
    parsed = modelled_tree(delimiter.pattern)
    if parsed is None:
        return None
    beside_end = _complete_matches_beside_an_end(parsed.root)
    if beside_end is not None:
        return beside_end
    free, after = paths_after_literals(parsed.root)
    walker = _FirstCharacterWalk(lookaheads=True, anchors=True)
    try:
        nullable = walker.any_nullable(tuple(free))
    except (_Unbounded, RecursionError):
        return None
    if nullable or walker.largest_class > MAX_CLASS_SIZE:
        return None
    chars = frozenset(cp for lo, hi in normalise(walker.ranges) for cp in range(lo, hi + 1))
    return MatchStarts(chars, walker.final_newline, after)


def start_chars(node: Node) -> Ranges | None:
    """The characters every match of `node` starting inside the text reads first, at its start
    (consuming it, or looking ahead at it), so that neither a complete nor a partial match starts at
    any other character; None if one might (a match that can be empty, any anchor or lookbehind,
    which may let a match begin without reading, or depend on the text before it)."""
    if any(isinstance(n, Assertion) or (isinstance(n, Lookaround) and n.behind) for n in walk(node)):
        return None
    walker = _FirstCharacterWalk(lookaheads=True, anchors=True)
    try:
        if walker.nullable(node):
            return None
    except (_Unbounded, RecursionError):
        return None
    return normalise(walker.ranges)


MAX_PATHS = 32  # leading alternations are opened up into at most this many paths


def paths_after_literals(root: Node) -> tuple[list[Node], frozenset[str]]:
    """The paths of `root` that may start a match anywhere, and the literals whose end the others
    need: a path whose first item is a positive lookbehind on a literal (`(?<=\\})...`) is tried
    only where the text before the position ends with it, which holds or not whatever follows.
    Leading alternations are opened up (`(?:<tools>|(?<=\\}),?)\\{` is two paths); past
    `MAX_PATHS`, `root` is one path that may start anywhere."""
    paths = _opened_paths(root)
    if paths is None:
        return [root], frozenset()
    free: list[Node] = []
    after: set[str] = set()
    for path in paths:
        items = flat_items(path)
        behind = _lookbehind_literal(items[0]) if items else None
        if behind:
            after.add(behind)
        else:
            free.append(path)
    return free, frozenset(after)


def _opened_paths(node: Node) -> list[Node] | None:
    """`node` as the alternatives its first item offers, each followed by the rest (`(?:a|b)c` gives
    `ac` and `bc`); None past `MAX_PATHS`."""
    inner = unwrap(node)
    if isinstance(inner, Alternation):
        paths: list[Node] = []
        for branch in flatten_alternation(inner):
            opened = _opened_paths(branch)
            if opened is None:
                return None
            paths.extend(opened)
        return paths if len(paths) <= MAX_PATHS else None
    items = flat_items(inner)
    if not items:
        return [inner]
    first, rest = items[0], items[1:]
    while isinstance(first, Group):  # a group's boundaries read no text
        first = unwrap(first.body)
    if not isinstance(first, Alternation) and not (isinstance(first, Concat) and first.items):
        return [inner]
    heads = _opened_paths(first)
    if heads is None:
        return None
    return [Concat((*flat_items(head), *rest)) for head in heads]


def _lookbehind_literal(node: Node) -> str | None:
    """The string a positive lookbehind `node` tests for, when it is one fixed string (exact case:
    a class of case variants is not one); None for anything else."""
    if not (isinstance(node, Lookaround) and node.behind and node.positive):
        return None
    string = []
    for item in linear_items(node.body):
        if not (isinstance(item, Chars) and len(item.ranges) == 1 and item.ranges[0][0] == item.ranges[0][1]):
            return None
        string.append(chr(item.ranges[0][0]))
    return "".join(string) or None


def _complete_matches_beside_an_end(root: Node) -> MatchStarts | None:
    """`MatchStarts` of a pattern with a branch that is `\\Z` or `$` alone beside others
    (`\\s*</think>|\\Z`); None for any other pattern.

    Searching with partial matches, `regex` reports the end branch's complete match at the end of any
    text rather than a partial match of another branch that starts earlier: such a delimiter holds
    nothing back but what its end branch does (`$`: a newline that ends the text), and claims text only
    by a complete match of another branch, which reads one of the first characters of that branch's
    first item that must read one (`<` of `\\s*</think>`, and of `\\s*(?:</think>|(?=<function=))`,
    where the lookahead reads it)."""
    inner = unwrap(root)
    if not isinstance(inner, Alternation):
        return None
    kinds = [(end_kind(branch), branch) for branch in flatten_alternation(inner)]
    ends = [kind for kind, _ in kinds if kind is not None]
    others = [branch for kind, branch in kinds if kind is None]
    if not ends or not others:
        return None
    ranges: list[tuple[int, int]] = []
    for branch in others:
        needed = _first_item_that_reads(branch)
        if needed is None or needed.largest_class > MAX_CLASS_SIZE:
            return None
        ranges += needed.ranges
    chars = frozenset(cp for lo, hi in normalise(ranges) for cp in range(lo, hi + 1))
    return MatchStarts(chars, "string_end_line" in ends)


# A complete match may pass these without reading anything at the very end of the text
_END_KINDS: Final = ("string_end", "string_end_line", "line_end")


def _first_item_that_reads(branch: Node) -> _FirstCharacterWalk | None:
    """The walk of the first item of `branch` that every complete match passes by reading a character
    (consuming it, or looking ahead at it), so that the match reads one of the walk's characters in
    the text; None if no item surely does (or one is unbounded)."""
    for item in linear_items(branch):
        if any(isinstance(node, Assertion) and node.kind in _END_KINDS for node in walk(item)):
            return None  # (the walk takes an end as reading no character, which a complete match may do)
        walker = _FirstCharacterWalk(lookaheads=True, anchors=True)
        try:
            if not walker.nullable(item):
                return walker
        except (_Unbounded, RecursionError):
            return None
    return None


def leading_chars(pattern: str) -> tuple[tuple[Ranges, ...], ...] | None:
    """How every match and every partial match of `pattern` begins, for a pattern whose every path
    begins by reading a character: per path, the classes of its first one or two characters (a
    second where the path surely reads one right after the first); None for any other pattern (a
    leading repeat, assertion or lookaround, or an unmodelled construct). `<invoke name=` gives
    ``(("<", "i"),)``; a partial match may also end after the first character, at the end of the text.

    Unlike `first_characters` this holds for what `regex`'s partial search reports even where its
    shortcuts report partial matches that cannot occur: an attempt at a position first tests these
    characters, and one that fails there reads nothing more, so it reports nothing (`[a-z]*?X` is the
    counterexample of a pattern without them: partial at the `-` of ``-``)."""
    parsed = modelled_tree(pattern)
    if parsed is None:
        return None
    paths = _leading_paths(parsed.root)
    if paths is None or any(size(classes[0]) > MAX_CLASS_SIZE for classes in paths):
        return None
    return tuple(dict.fromkeys(paths))


def _leading_paths(node: Node) -> list[tuple[Ranges, ...]] | None:
    items = linear_items(node)
    first = items[0] if items else None
    if isinstance(first, Alternation):
        # (a branch's path stops within the branch: what follows the alternation is not looked at)
        found: list[tuple[Ranges, ...]] = []
        for branch in flatten_alternation(first):
            paths = _leading_paths(branch)
            if paths is None:
                return None
            found += paths
        return found
    if isinstance(first, Repeat) and first.min >= 1 and first.max != 0:
        # its first iteration is read first (a lazy or possessive one too); only its body is looked at
        paths = _leading_paths(first.body)
        return (
            None if paths is None else [path[:1] if isinstance(unwrap(first.body), Chars) else path for path in paths]
        )
    if not isinstance(first, Chars):
        return None
    second = items[1] if len(items) > 1 else None
    return [(first.ranges, second.ranges) if isinstance(second, Chars) else (first.ranges,)]


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


@dataclass(frozen=True)
class FirstCharacters:
    """What a match of a node can start with: `ranges`, the characters it may read first; `nullable`,
    whether it can match the empty string (an over-approximation where zero-width tests or conditionals
    rule the empty match out); `largest_class`, how many code points the largest class read holds."""

    ranges: Ranges
    nullable: bool
    largest_class: int


def first_characters(node: Node, *, lookaheads: bool = True) -> FirstCharacters | None:
    """The first characters of `node` (see `FirstCharacters`); None where the tree cannot bound them
    (backreferences, fuzzy matching, ``\\X``, group calls...).

    With `lookaheads`, what a lookahead at the start of the match examines counts as read (`regex`
    reports partial matches from it, positive or negative); without, only what the match consumes.
    A lookbehind looks at text before the match and never counts.
    """
    walker = _FirstCharacterWalk(lookaheads)
    try:
        nullable = walker.nullable(node)
    except _Unbounded:
        return None
    return FirstCharacters(normalise(walker.ranges), nullable, walker.largest_class)


class _Unbounded(Exception):
    """The first character of a match cannot be bounded from the tree."""


class _FirstCharacterWalk:
    """Collects the first characters of the nodes it is asked about into `ranges`.

    With `anchors` (see `MatchStarts`), a path that tests the text's start first can start no match
    after it, a path that ends the text (`\\Z`, `$`) starts none inside it (`$` may still hold back a
    final newline: `final_newline`), and a lookahead that must read a character makes its path need
    one; without, every zero-width test may match empty anywhere."""

    def __init__(self, lookaheads: bool, anchors: bool = False) -> None:
        self.lookaheads = lookaheads
        self.anchors = anchors
        self.ranges: list[tuple[int, int]] = []
        self.largest_class = 0
        self.final_newline = False

    def nullable(self, node: Node) -> bool:
        """Whether `node` can match the empty string, having added its first characters to `ranges`."""
        if isinstance(node, Chars):
            self.ranges.extend(node.ranges)
            self.largest_class = max(self.largest_class, size(node.ranges))
            return False
        if isinstance(node, Assertion):
            if self.anchors and node.kind in ("string_start", "string_end", "string_end_line"):
                self.final_newline |= node.kind == "string_end_line"
                return False  # no match starts inside the text (see `MatchStarts`)
            if self.anchors and node.kind == "line_end":
                self.ranges.append((0x0A, 0x0A))
                return False  # before a newline, or at the very end
            return True  # anchors and word boundaries consume nothing
        if isinstance(node, Lookaround):
            if self.lookaheads and not node.behind:
                body_nullable = self.nullable(node.body)  # it reads the following text, whatever it consumes
                # A positive lookahead that must read a character is not passed without one there.
                return body_nullable or not node.positive or not self.anchors
            return True
        if isinstance(node, (Group, Atomic)):
            return self.nullable(node.body)
        if isinstance(node, Concat):
            return all(self.nullable(item) for item in node.items)  # stops at the first that consumes
        if isinstance(node, (Alternation, BranchReset)):
            return self.any_nullable(node.branches)
        if isinstance(node, Repeat):
            return self.nullable(node.body) or node.min == 0
        if isinstance(node, Conditional):
            if isinstance(node.condition, Lookaround):
                self.nullable(node.condition)
            return self.any_nullable((node.yes, node.no))
        raise _Unbounded(type(node).__name__)

    def any_nullable(self, branches: tuple[Node, ...]) -> bool:
        """Whether some branch can match empty, with the first characters of every branch recorded
        (all are read: no short-circuit)."""
        return any([self.nullable(branch) for branch in branches])


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
