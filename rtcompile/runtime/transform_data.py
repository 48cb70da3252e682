"""Values built from flat programs: deep transforms, and data nested too deep to write
as a literal.

A transform template is a tree. transformers applies it recursively, one Python frame
per level (two with the comprehension), and a generated module that unrolls it into one
expression needs one bracket per level, which CPython's parser caps at 200. Data has the
same problem: a `defaults` value or a transform nested 400 levels deep cannot be a
Python literal. So such a tree is flattened ahead of time (by
`rtcompile.transform_program` and the code generator) into a postfix *program*: its
leaves in the order transformers reaches them, each container right after its members.
`build_value` replays the program with a list for a stack, in constant Python stack
depth.

A program is a sequence of steps, each a tuple whose first item is its opcode:

    (PUSH, value)               a leaf, as it is (LOOKUP, path, root, keys)  a transform
    `{placeholder}`, resolved against the scope (MAKE_DICT, keys)           the last
    len(keys) results become a dict with these keys, in order (MAKE_LIST, n)
    the last n results become a list (MAKE_TUPLE, n)             ... a tuple (data only:
    a template given as a Python dict may hold one) (OVERFLOW,)
    transformers exhausts Python's stack reaching this node

Evaluation order is exactly transformers' (members left to right, depth first), so of
two failing placeholders the same one raises; OVERFLOW stands where transformers'
recursion would fail, after everything it evaluates first.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Final

from rtcompile.runtime.transform import resolve_placeholder

PUSH: Final = 0
LOOKUP: Final = 1
MAKE_DICT: Final = 2
MAKE_LIST: Final = 3
MAKE_TUPLE: Final = 4
OVERFLOW: Final = 5
NO_SCOPE: Final[Mapping[str, Any]] = {}
# What CPython says when a recursion runs out of stack (transformers' transform walk is
# such a recursion).
STACK_EXHAUSTED: Final = "maximum recursion depth exceeded"


def build_value(
    program: Sequence[tuple[Any, ...]], scope: Mapping[str, Any] = NO_SCOPE
) -> Any:
    """The value `program` describes (see `rtcompile.runtime.transform_data`),
    placeholders from `scope`."""
    stack: list[Any] = []
    for step in program:
        op = step[0]
        if op == PUSH:
            stack.append(step[1])
        elif op == LOOKUP:
            stack.append(resolve_placeholder(scope, step[1], step[2], step[3]))
        elif op == OVERFLOW:
            raise RecursionError(STACK_EXHAUSTED)
        else:
            size = len(step[1]) if op == MAKE_DICT else step[1]
            start = len(stack) - size
            members = stack[start:]
            del stack[start:]
            if op == MAKE_DICT:
                stack.append(dict(zip(step[1], members, strict=True)))
            elif op == MAKE_LIST:
                stack.append(members)
            else:
                stack.append(tuple(members))
    return stack[0]
