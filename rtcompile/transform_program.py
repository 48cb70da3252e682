"""Transforms and data values as flat programs for `rtcompile.runtime.transform_data.build_value`.

The interpreter applies every transform this way, and a generated module applies transforms too deep
to unroll into one expression this way (and builds data values too deep for a literal); see the runtime
module for the program format. Flattening walks the tree with an explicit stack.
"""

from __future__ import annotations

from typing import Any

from rtcompile.ir import TDict, TList, TLiteral, TPlaceholder, Transform
from rtcompile.nesting import MAX_TRANSFORM_APPLY_LEVEL
from rtcompile.runtime.transform_data import LOOKUP, MAKE_DICT, MAKE_LIST, MAKE_TUPLE, OVERFLOW, PUSH

Program = tuple[tuple[Any, ...], ...]


def transform_program(transform: Transform) -> Program:
    """The program that applies `transform`. Where transformers' recursion runs out of stack (below
    `MAX_TRANSFORM_APPLY_LEVEL`) the program raises RecursionError, after everything evaluated before."""
    steps: list[tuple[Any, ...]] = []
    pending: list[tuple[Transform, int, bool]] = [(transform, 0, False)]
    while pending:
        node, level, members_done = pending.pop()
        if level > MAX_TRANSFORM_APPLY_LEVEL:
            steps.append((OVERFLOW,))
            break  # nothing after the overflow runs
        match node:
            case TDict(items=items):
                if members_done:
                    steps.append((MAKE_DICT, tuple(key for key, _ in items)))
                else:
                    pending.append((node, level, True))
                    pending.extend((value, level + 1, False) for _, value in reversed(items))
            case TList(items=items):
                if members_done:
                    steps.append((MAKE_LIST, len(items)))
                else:
                    pending.append((node, level, True))
                    pending.extend((value, level + 1, False) for value in reversed(items))
            case TPlaceholder(path=path, root=root, keys=keys):
                steps.append((LOOKUP, path, root, keys))
            case TLiteral(value=value):
                steps.append((PUSH, value))
    return tuple(steps)


def data_program(value: object) -> Program:
    """The program that builds `value` (dicts, lists and tuples of anything else)."""
    steps: list[tuple[Any, ...]] = []
    pending: list[tuple[object, bool]] = [(value, False)]
    while pending:
        node, members_done = pending.pop()
        if isinstance(node, dict):
            if members_done:
                steps.append((MAKE_DICT, tuple(node)))
            else:
                pending.append((node, True))
                pending.extend((member, False) for member in reversed(list(node.values())))
        elif isinstance(node, (list, tuple)):
            if members_done:
                steps.append((MAKE_LIST if isinstance(node, list) else MAKE_TUPLE, len(node)))
            else:
                pending.append((node, True))
                pending.extend((member, False) for member in reversed(node))
        else:
            steps.append((PUSH, node))
    return tuple(steps)
