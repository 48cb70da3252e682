r"""The ``prefix`` pattern: where `regex`'s partial search reports a partial match.

How `regex` answers ``search(text, pos, partial=True)`` (read from its engine, then confirmed by
differential testing on several hundred thousand random cases):

1. It first runs an ordinary search; a full match wins.
2. Otherwise it tries start positions ``q = pos, pos + 1, ...``. At each one the backtracking matcher
   stops with "partial" as soon as any path tries to read a character at the end of the text -- also
   inside a lookahead, positive or negative. Since no full match exists anywhere, the answer at ``q``
   is "some path runs into the end", a regular property written down structurally by `_prefix`:
   ``P(XY) = P(X) | X P(Y)``, ``P(X|Y) = P(X) | P(Y)``, ``P(char) = \Z``; assertions and lookbehinds never
   read past the end.
3. Several engine shortcuts deviate from that and are mirrored: how each repeat opcode treats the end of
   the text (`_repeat_prefix`), skipping ahead after a failed attempt at a leading ``.*?``
   (`_skip_ahead_prefix`), and the first-character prefilter that decides what happens at
   ``q == len(text)`` (`_end_of_text_rule`).
4. Where its prefilters would hide partial matches that begin inside a lookahead, or its shortcuts for
   lazy single-character repeats report impossible ones, we refuse the construct instead
   (`check_lookarounds`, `check_repeats`).
"""

from __future__ import annotations

from typing import Final

from rtcompile.regex.ast import (
    Alternation,
    Assertion,
    Chars,
    Concat,
    Group,
    Lookaround,
    Node,
    Repeat,
    children,
    flat_items,
    flatten_alternation,
    unwrap,
    walk,
    width,
)
from rtcompile.regex.charsets import ALL, Ranges, normalise
from rtcompile.regex.errors import UnsupportedRegex
from rtcompile.regex.optimiser import (
    first_test,
    firstset,
    has_simple_start,
    is_single_character,
    leading_test,
    start_test,
)
from rtcompile.regex.stdlib import either, plain, plain_atom, quantifier


def partial_prefix(root: Node) -> str:
    """The complete ``prefix`` pattern: structural hits, plus `regex`'s search-loop effects."""
    prefix = either(_prefix(_mandatory_tail(root)), _skip_ahead_prefix(root))
    end_rule = _end_of_text_rule(root)
    if end_rule == "always" and not (prefix == "\\Z" or (prefix or "").startswith("(?:\\Z|")):
        prefix = either(prefix, "\\Z")
    elif end_rule == "anchored" and prefix is not None:
        prefix = "\\A" + prefix
    return "(?!)" if prefix is None else prefix


# ---------------------------------------------------------------------------------------------------
# Where some path reads past the end of the text
# ---------------------------------------------------------------------------------------------------


def _prefix(node: Node) -> str | None:
    """A pattern matching at ``p`` iff some path of `node` from ``p`` tries to read past the end.

    ``None`` means no path ever does (zero-width nodes). The result is a sequence item.
    """
    if isinstance(node, Chars):
        return "\\Z"
    if isinstance(node, Assertion):
        return None
    if isinstance(node, Group):
        return _prefix(node.body)
    if isinstance(node, Concat):
        return _sequence_prefix(list(node.items))
    if isinstance(node, Alternation):
        result: str | None = None
        for branch in reversed(node.branches):
            result = either(_prefix(branch), result)
        return result
    if isinstance(node, Repeat):
        return _repeat_prefix(node)
    if not isinstance(node, Lookaround):
        raise AssertionError(f"{type(node).__name__} reached the prefix builder; the translation refuses it")
    if node.behind:
        return None
    # A lookahead's body reading past the end makes regex report a partial match immediately,
    # whether the lookahead is positive or negative.
    return _prefix(node.body)


# Characters of a literal run handled per level of nesting in the prefix pattern; stdlib `re` parses
# groups recursively, so one level per character would overflow on long delimiters.
_RUN_CHUNK: Final = 8


def _sequence_prefix(items: list[Node]) -> str | None:
    """``P(x1 x2 ... xn) = P(x1) | x1 P(x2 ... xn)``, with runs of single characters flattened into
    alternations (``\\Z | a\\Z | ab\\Z | abc P(rest)``) to keep the nesting shallow."""
    result: str | None = None
    index = len(items)
    while index > 0:
        start = index - 1
        if not isinstance(items[start], Chars):
            continued = None if result is None else plain(items[start]) + result
            result = either(_prefix(items[start]), continued)
            index = start
            continue
        while start > 0 and isinstance(items[start - 1], Chars):
            start -= 1
        atoms = [plain(item) for item in items[start:index]]
        for chunk_start in reversed(range(0, len(atoms), _RUN_CHUNK)):
            chunk = atoms[chunk_start : chunk_start + _RUN_CHUNK]
            options = ["".join(chunk[:length]) + "\\Z" for length in range(len(chunk))]
            if result is not None:
                options.append("".join(chunk) + result)
            result = options[0] if len(options) == 1 else f"(?:{'|'.join(options)})"
        index = start
    return result


def _repeat_prefix(node: Repeat) -> str | None:
    """Paths through a repeat that read past the end, as `regex`'s three repeat opcodes see them.

    A hit in iteration ``j + 1`` (after ``j`` complete iterations) counts, except that

    * a lazy single-character repeat reads at the end of the text only while matching its ``min``
      mandatory characters, or right after them (its extension loop stops one short of the end), and
    * a general greedy repeat ignores a new iteration that would start exactly at the end once more
      than ``min`` iterations are done, if the body starts by reading a character (its look-ahead test
      says "partial" and is overruled).
    """
    body_prefix = _prefix(node.body)
    if body_prefix is None or node.max == 0:
        return None
    body = plain_atom(node.body)
    if is_single_character(node.body):
        if node.lazy:
            # The mandatory characters may run into the end; after that, the lazy loop reads one more
            # character only when those end exactly at the end of the text.
            extra = 1 if node.max is None or node.max > node.min else 0
            return _iterations(body, 0, node.min + extra) + body_prefix
        return _iterations(body, 0, node.max) + body_prefix
    if node.lazy or first_test(node.body) == "other":
        return _iterations(body, 0, node.max) + body_prefix
    # regex compiles X{m,n} as m copies of X followed by X{0,n-m}; only iterations after the first
    # one of that remaining repeat are subject to the end-of-text rule.
    first = node.min + 1
    if node.max is not None and node.max <= first:
        return _iterations(body, 0, node.max) + body_prefix
    early = _iterations(body, 0, first) + body_prefix
    late = _iterations(body, first, node.max) + "(?!\\Z)" + body_prefix
    return f"(?:{early}|{late})"


def _iterations(body: str, low: int, high: int | None) -> str:
    """`body` repeated between `low` and ``high - 1`` times (``high=None``: unbounded), spelled simply."""
    last = None if high is None else high - 1
    if last == 0:
        return ""
    if (low, last) == (1, 1):
        return body
    return body + quantifier(low, last, False)


# ---------------------------------------------------------------------------------------------------
# Effects of `regex`'s search loop
# ---------------------------------------------------------------------------------------------------


def _end_of_text_rule(root: Node) -> str:
    """How `regex` treats start positions in a partial search: "always" partial at ``len(text)``,
    "natural" (the pattern is evaluated at the end like anywhere else) or "anchored" (only position 0
    is ever tried).

    `regex` searches with a prefilter on the first character when the pattern starts with one (or when
    it can compute the set of possible first characters); scanning for it runs into the end of the
    text, which counts as partial before any leading assertion or lookbehind is evaluated. A pattern
    whose start test is the string start (``^``/``\\A``) is only tried at position 0.
    """
    if has_simple_start(root):
        return "always" if start_test(root) == "char" else "natural"
    if firstset(root) is not None:
        items = flat_items(root)
        anchored = bool(items) and isinstance(items[0], Assertion) and items[0].kind == "string_start"
        return "anchored" if anchored else "always"
    leading = leading_test(root)
    return {"char": "always", "anchored": "anchored"}.get(leading or "", "natural")


def _skip_ahead_prefix(root: Node) -> str | None:
    """The extra partial matches caused by `regex` skipping ahead after a failed attempt.

    When a pattern starts with a lazy single-character repeat (``.*?``), a failed attempt at ``q``
    makes `regex` skip the characters that repeat could have consumed; they run to the end of the text,
    so it skips past the end, which its search loop reports as a partial match starting at ``q``.
    (Lazy single-character repeats other than an unbounded one of every character are refused.)
    """
    items = flat_items(root)
    first = items[0] if items else None
    starts_lazily = isinstance(first, Repeat) and first.lazy and (first.min, first.max) == (0, None)
    if starts_lazily and isinstance(first, Repeat) and is_single_character(first.body):
        return "(?!\\Z)"
    return None


# ---------------------------------------------------------------------------------------------------
# Partial-match behaviour we cannot reproduce
# ---------------------------------------------------------------------------------------------------


def _reads_ahead(node: Node) -> bool:
    """Whether `node` consumes characters or looks ahead (either can run into the end of the text)."""
    if isinstance(node, (Chars, Lookaround)):
        return isinstance(node, Chars) or not node.behind
    if isinstance(node, Repeat) and node.max == 0:
        return False
    return any(_reads_ahead(child) for child in children(node))


def check_lookarounds(node: Node, followed: bool) -> None:
    """Refuse the lookarounds whose partial-match behaviour in regex we cannot reproduce.

    `followed` says whether something that reads ahead may come after `node` on some path.
    """
    if isinstance(node, Lookaround):
        _check_lookaround(node, followed)
        return
    if isinstance(node, Concat):
        for item in reversed(node.items):
            check_lookarounds(item, followed)
            followed = followed or _reads_ahead(item)
        return
    if isinstance(node, Repeat):
        again = node.max is None or node.max > 1
        check_lookarounds(node.body, followed or (again and _reads_ahead(node.body)))
        return
    for child in children(node):
        check_lookarounds(child, followed)


def _check_lookaround(node: Lookaround, followed: bool) -> None:
    if any(isinstance(inner, Lookaround) for inner in walk(node.body)):
        raise UnsupportedRegex("nested lookaround", "regex's partial matching inside nested lookarounds differs")
    if node.behind:
        low, high = width(node.body)
        if low != high:
            raise UnsupportedRegex("variable-width lookbehind", "stdlib re only supports fixed-width lookbehind")
        if any(isinstance(inner, Group) for inner in walk(node.body)):
            raise UnsupportedRegex(
                "capture group in lookbehind", "regex matches lookbehinds right to left, so captures can differ"
            )
        return
    if followed:
        raise UnsupportedRegex(
            "lookahead followed by more pattern",
            "regex's partial search skips start positions using prefilters that ignore lookahead bodies",
        )
    low, high = width(node.body)
    if low != high and not node.positive:
        # A positive lookahead with nothing after it reports partial exactly when some path of its body
        # reads past the end (checked against regex on ~10M cases); a negative one does not.
        raise UnsupportedRegex(
            "variable-width negative lookahead",
            "regex reports the first lookahead path in backtracking order to hit the end, which re cannot express",
        )


def _tail_lazy_repeat(root: Node) -> Repeat | None:
    """The lazy one-character repeat that ends the pattern (at its top level), if there is one."""
    items = flat_items(root)
    last = items[-1] if items else None
    if isinstance(last, Repeat) and last.lazy and not last.possessive and is_single_character(last.body):
        return last
    return None


def _mandatory_tail(root: Node) -> Node:
    """`root` with a lazy one-character repeat that ends it cut down to its mandatory characters, for
    the structural prefix: with nothing after it, `regex`'s lazy loop never reads past its `min`
    characters at the end of the text (checked against regex on every text up to length 3 and random
    longer ones, ~260k cases)."""
    tail = _tail_lazy_repeat(root)
    if tail is None:
        return root
    items = flat_items(root)
    return Concat((*items[:-1], Repeat(tail.body, tail.min, tail.min, False)))


def check_repeats(root: Node) -> None:
    """Refuse repeats whose partial-match behaviour in `regex` depends on shortcuts we do not mirror."""
    tail = _tail_lazy_repeat(root)
    for node in walk(root):
        if not isinstance(node, Repeat) or node.max == 0 or node is tail:
            continue
        if node.lazy and is_single_character(node.body):
            body = unwrap(node.body)
            full_set = node.max is None and (
                (isinstance(body, Chars) and body.ranges == ALL)
                or (isinstance(body, Alternation) and _union_ranges(body) == ALL)
            )
            if not full_set:
                raise UnsupportedRegex(
                    "lazy single-character repeat",
                    "regex's partial search takes shortcuts for lazy repeats of one character (other than an "
                    "unbounded '.*?') and reports partial matches that cannot occur",
                )
        elif _greedy_iteration_test_is_unknown(node) and _prefix(node.body) is not None:
            raise UnsupportedRegex(
                "repeated alternation",
                "whether regex's partial search can start a new iteration at the end of the text depends "
                "on how its optimiser factors this alternation",
            )


def _greedy_iteration_test_is_unknown(node: Repeat) -> bool:
    return not node.lazy and not is_single_character(node.body) and first_test(node.body) == "unknown"


def _union_ranges(node: Alternation) -> Ranges:
    ranges: list[tuple[int, int]] = []
    for branch in flatten_alternation(node):
        inner = unwrap(branch)
        if isinstance(inner, Chars):
            ranges.extend(inner.ranges)
    return normalise(ranges)
