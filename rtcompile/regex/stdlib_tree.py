"""A stdlib `re` pattern as `re` itself parses it, in this package's node types.

The backtracking analysis (`rtcompile.regex.ambiguity`) must look at the program `re` runs, not at the
template's pattern: the translation rewrites repeats, and the partial-match ("prefix") patterns exist
only as stdlib text. `re`'s own parser reads them exactly (and fast: the spelled-out Unicode classes
make some translations long); its tree is private API, so anything unexpected in it raises
`UnreadablePattern` and the caller treats the pattern as unanalysable.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Final

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
    evaluate_postorder,
)
from rtcompile.regex.charsets import ALL, complement, normalise

try:  # re's parser: `re._parser` since Python 3.11, `sre_parse` before
    sre_parse: Any = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - Python 3.10
    sre_parse = importlib.import_module("sre_parse")


class UnreadablePattern(Exception):
    """`re`'s tree holds something this conversion does not know."""


_ASSERTIONS: Final = {
    "AT_BEGINNING": "string_start",
    "AT_BEGINNING_STRING": "string_start",
    "AT_BEGINNING_LINE": "line_start",
    "AT_END": "string_end_line",
    "AT_END_STRING": "string_end",
    "AT_END_LINE": "line_end",
    "AT_BOUNDARY": "boundary",
    "AT_NON_BOUNDARY": "non_boundary",
    "AT_UNI_BOUNDARY": "boundary",
    "AT_UNI_NON_BOUNDARY": "non_boundary",
}


def stdlib_tree(pattern: str) -> Node:
    """The tree of `pattern` compiled with ``re.DOTALL``; raises `UnreadablePattern`."""
    try:
        parsed = sre_parse.parse(pattern, re.DOTALL)
    except (re.error, RecursionError, OverflowError) as error:
        raise UnreadablePattern(str(error)) from error
    # Items are ("sequence", items) or one of re's (op, argument) pairs; converted children first.
    return evaluate_postorder(("sequence", parsed), _children, _node)


def _children(item: tuple[Any, Any]) -> list[tuple[Any, Any]]:
    op, argument = item
    name = str(op)
    if name == "sequence":
        return list(argument)
    if name in ("MAX_REPEAT", "MIN_REPEAT"):
        return [("sequence", argument[2])]
    if name == "SUBPATTERN":
        return [("sequence", argument[3])]
    if name == "BRANCH":
        return [("sequence", branch) for branch in argument[1]]
    if name in ("ASSERT", "ASSERT_NOT"):
        return [("sequence", argument[1])]
    return []


def _node(item: tuple[Any, Any], parts: list[Node]) -> Node:
    op, argument = item
    name = str(op)
    if name == "sequence":
        return parts[0] if len(parts) == 1 else Concat(tuple(parts))
    if name == "LITERAL":
        return Chars(((argument, argument),), "literal", literal=argument)
    if name == "NOT_LITERAL":
        return Chars(complement(((argument, argument),)), "negated_literal", literal=argument)
    if name == "ANY":
        return Chars(ALL, "any")  # under DOTALL
    if name == "IN":
        return Chars(_set(argument), "set")
    if name in ("MAX_REPEAT", "MIN_REPEAT"):
        low, high, _ = argument
        top = None if high == sre_parse.MAXREPEAT else high
        return Repeat(parts[0], low, top, lazy=name == "MIN_REPEAT")
    if name == "SUBPATTERN":
        group = argument[0]
        return Concat((parts[0],)) if group is None else Group(parts[0], group, None)
    if name == "BRANCH":
        return Alternation(tuple(parts))
    if name in ("ASSERT", "ASSERT_NOT"):
        return Lookaround(parts[0], behind=argument[0] < 0, positive=name == "ASSERT")
    if name == "AT":
        kind = _ASSERTIONS.get(str(argument))
        if kind is None:
            raise UnreadablePattern(str(argument))
        return Assertion(kind)
    if name == "GROUPREF":
        return Backreference(str(argument), ignore_case=False, position=-1)
    raise UnreadablePattern(name)


def _set(items: Any) -> tuple[tuple[int, int], ...]:
    ranges: list[tuple[int, int]] = []
    negated = category = False
    for op, argument in items:
        name = str(op)
        if name == "LITERAL":
            ranges.append((argument, argument))
        elif name == "RANGE":
            ranges.append(argument)
        elif name == "NEGATE":
            negated = True
        elif name == "CATEGORY":
            category = True  # never in a translation (classes are spelled out)
        else:
            raise UnreadablePattern(name)
    if category:
        if negated:
            raise UnreadablePattern("negated category")
        return ALL  # more characters than the class: more paths, which is safe for a bound
    merged = normalise(ranges)
    return complement(merged) if negated else merged
