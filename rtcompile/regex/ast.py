"""The syntax tree of a `regex` (V0) pattern, and the structural helpers every analysis shares.

The tree has a node for every construct `regex` accepts, including the ones stdlib `re` cannot
reproduce (backreferences, possessive repeats, atomic groups, Unicode properties...): deciding what
can be translated is the stdlib emitter's business (`rtcompile.regex.stdlib`), and the analyses
(`rtcompile.regex.analysis`) work on every pattern the reference accepts. Nodes that stdlib cannot
reproduce carry `position`, the offset in the pattern where the parser met them, so that the emitter
names the first one like a left-to-right reader would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from rtcompile.regex.charsets import Ranges


@dataclass(frozen=True)
class Untranslatable:
    """Why stdlib `re` cannot spell a character node, by the name `UnsupportedRegex.construct` reports,
    and where that starts in the pattern: a Unicode property, a POSIX class or ``\\h`` in it; or
    text `regex` reads literally but that looks so much like a property, POSIX class or group
    reference that the translation has always refused it (``\\p{L``, ``[[:a=:]]``, ``\\g<1``)."""

    construct: str
    position: int


@dataclass(frozen=True)
class Chars:
    """Consumes one code point from `ranges` (exact: case variants included under ``(?i)``).

    The other fields remember what `regex` itself would build, because its optimiser (and therefore its
    partial-match shortcuts) depends on it: `kind` is "literal", "negated_literal", "set" or "any";
    `literal` is the code point written in the pattern; `ignore_case` is the node's case flag as `regex`
    records it. `untranslatable` is the first reason stdlib cannot spell it, if any.
    """

    ranges: Ranges
    kind: str
    literal: int | None = None
    ignore_case: bool = False
    untranslatable: Untranslatable | None = None


@dataclass(frozen=True)
class Assertion:
    """A zero-width test: string_start, string_end, string_end_line ($), line_start, line_end,
    boundary, non_boundary; and `regex`'s search_anchor (``\\G``), word_start (``\\m``) and
    word_end (``\\M``), which carry their `position`."""

    kind: str
    position: int = -1


@dataclass(frozen=True)
class Group:
    """A capture group; `position` is its opening parenthesis (a duplicate name reuses the index)."""

    body: Node
    index: int
    name: str | None
    position: int = -1


@dataclass(frozen=True)
class Concat:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alternation:
    branches: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    """`body` repeated `min`..`max` times (None: unbounded); `position` is the quantifier's possessive
    ``+`` suffix when `possessive`."""

    body: Node
    min: int
    max: int | None
    lazy: bool
    possessive: bool = False
    position: int = -1


@dataclass(frozen=True)
class Lookaround:
    body: Node
    behind: bool
    positive: bool


@dataclass(frozen=True)
class Atomic:
    """``(?>...)``: once `body` matched, backtracking never re-enters it."""

    body: Node
    position: int


@dataclass(frozen=True)
class BranchReset:
    """``(?|...|...)``: an alternation whose branches number their capture groups from the same index."""

    branches: tuple[Node, ...]
    position: int


@dataclass(frozen=True)
class Conditional:
    """``(?(group)yes|no)`` or ``(?(?=...)yes|no)``: `condition` is a group name/number or a lookaround."""

    condition: str | Lookaround
    yes: Node
    no: Node
    position: int


@dataclass(frozen=True)
class Backreference:
    """``\\1``, ``\\g<name>``, ``(?P=name)``: the text group `group` (a number or a name) captured."""

    group: str
    ignore_case: bool
    position: int


@dataclass(frozen=True)
class Fuzzy:
    """`body` under an approximate-matching constraint (``{e<=1}``)."""

    body: Node
    position: int


@dataclass(frozen=True)
class Opaque:
    """A construct whose matching no analysis models, named as `UnsupportedRegex.construct` reports it:
    ``\\K``, ``\\X``, ``\\R``, ``\\L<...>``, control verbs, group calls and recursion. `min_width` and
    `max_width` (None: unbounded) bound how many characters it consumes."""

    construct: str
    position: int
    min_width: int
    max_width: int | None


Node = (
    Chars
    | Assertion
    | Group
    | Concat
    | Alternation
    | Repeat
    | Lookaround
    | Atomic
    | BranchReset
    | Conditional
    | Backreference
    | Fuzzy
    | Opaque
)


@dataclass(frozen=True)
class InlineFlag:
    """An inline flag letter (``i``, ``V1``...) turned on or off at `position`."""

    letter: str
    on: bool
    position: int


@dataclass(frozen=True)
class ParsedRegex:
    """A pattern as `regex` (V0, DOTALL) reads it.

    `group_names` maps each group name to its index; `inline_flags` lists every inline flag in pattern
    order (the tree reflects i, m, s and x; the others change semantics it does not model).
    """

    source: str
    root: Node
    group_count: int
    group_names: Mapping[str, int]
    inline_flags: tuple[InlineFlag, ...]


# ---------------------------------------------------------------------------------------------------
# Structure
# ---------------------------------------------------------------------------------------------------


def children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, (Group, Repeat, Lookaround, Atomic, Fuzzy)):
        return (node.body,)
    if isinstance(node, Concat):
        return node.items
    if isinstance(node, (Alternation, BranchReset)):
        return node.branches
    if isinstance(node, Conditional):
        if isinstance(node.condition, Lookaround):
            return (node.condition, node.yes, node.no)
        return (node.yes, node.no)
    return ()


def walk(node: Node) -> Iterator[Node]:
    """`node` and everything below it, parents before children, in pattern order."""
    yield node
    for child in children(node):
        yield from walk(child)


def width(node: Node) -> tuple[int, int | None]:
    """Minimum and maximum number of characters `node` consumes (``None``: unbounded)."""
    if isinstance(node, Chars):
        return 1, 1
    if isinstance(node, (Assertion, Lookaround)):
        return 0, 0
    if isinstance(node, Opaque):
        return node.min_width, node.max_width
    if isinstance(node, (Backreference, Fuzzy)):
        return 0, None  # fuzzy matching may delete or insert characters
    if isinstance(node, (Group, Atomic)):
        return width(node.body)
    if isinstance(node, Repeat):
        low, high = width(node.body)
        if node.max is None:
            return low * node.min, None if high != 0 else 0
        return low * node.min, None if high is None else high * node.max
    if isinstance(node, Conditional):
        widths = [width(node.yes), width(node.no)]
    else:
        widths = [width(child) for child in children(node)]
    if isinstance(node, Concat):
        total_high: int | None = 0
        for _, high in widths:
            total_high = None if total_high is None or high is None else total_high + high
        return sum(low for low, _ in widths), total_high
    lows = [low for low, _ in widths]
    highs = [high for _, high in widths]
    return min(lows), None if None in highs else max(h for h in highs if h is not None)


def is_empty(node: Node) -> bool:
    """regex's `is_empty` (a quantifier on such an item is dropped): an empty sequence, a positive
    lookaround of one, or a repeat, atomic group, fuzzy item or conditional made only of such.

    An alternation of empty branches (``(?:|)*``) is empty to `regex` too, but this has always said
    no for it, and the translation keeps that repeat (the stdlib pattern matches the same either way).
    """
    if isinstance(node, Concat):
        return all(is_empty(item) for item in node.items)
    if isinstance(node, Lookaround):
        return node.positive and is_empty(node.body)
    if isinstance(node, (Repeat, Atomic, Fuzzy)):
        return is_empty(node.body)
    if isinstance(node, Conditional):
        return is_empty(node.yes) and is_empty(node.no)
    if isinstance(node, BranchReset):
        return all(is_empty(branch) for branch in node.branches)
    return False


def unwrap(node: Node) -> Node:
    """The node inside one-item sequences."""
    while isinstance(node, Concat) and len(node.items) == 1:
        node = node.items[0]
    return node


def flatten_alternation(node: Alternation) -> list[Node]:
    """The branches of `node`, with directly nested alternations opened up."""
    branches: list[Node] = []
    for branch in node.branches:
        inner = unwrap(branch)
        branches.extend(flatten_alternation(inner) if isinstance(inner, Alternation) else [branch])
    return branches


def flat_items(node: Node) -> list[Node]:
    """The items of a sequence after `regex` flattens nested non-capturing sequences."""
    if isinstance(node, Concat):
        return [item for child in node.items for item in flat_items(child)]
    return [node]


def linear_items(node: Node) -> list[Node]:
    """Sequence items with capture groups opened up: the items every match of `node` goes through in
    order (regex's test search walks past group markers the same way)."""
    if isinstance(node, Concat):
        return [item for child in node.items for item in linear_items(child)]
    if isinstance(node, Group):
        return linear_items(node.body)
    return [node]


Item = TypeVar("Item")
Value = TypeVar("Value")


def evaluate_postorder(
    root: Item, expand: Callable[[Item], list[Item]], combine: Callable[[Item, list[Value]], Value]
) -> Value:
    """`combine(item, values of its children)` for every item below `root`, children first and in
    order, without recursion: a partial-match translation nests one level per item of a sequence, far
    deeper than Python's stack. `expand(item)` gives an item's children (it is called before any of
    them is combined, `combine` after all of them)."""
    stack: list[tuple[Item, list[Item], list[Value]]] = [(root, expand(root)[::-1], [])]
    while True:
        item, pending, values = stack[-1]
        if pending:
            child = pending.pop()
            stack.append((child, expand(child)[::-1], []))
            continue
        stack.pop()
        value = combine(item, values)
        if not stack:
            return value
        stack[-1][2].append(value)


def end_kind(node: Node) -> str | None:
    """The kind of assertion `node` is, when it is `$` or `\\Z` alone: it matches only at the very end
    of the text (or, `$`, before a newline that ends it); else None."""
    items = flat_items(node)
    if len(items) == 1 and isinstance(items[0], Assertion) and items[0].kind in ("string_end", "string_end_line"):
        return items[0].kind
    return None


def lookahead_body(node: Node) -> Node | None:
    """The body of a positive lookahead (what it reads of the text ahead); None for any other node."""
    if isinstance(node, Lookaround) and node.positive and not node.behind:
        return node.body
    return None
