"""How deep a template may nest: where transformers 5.24.0 runs out of Python stack, and what we do there.

transformers walks templates recursively, so a deep enough `transform` or `defaults` exhausts
Python's stack (1,000 frames by default) and raises RecursionError. rtcompile walks them with explicit
stacks and so could go deeper, but it promises the reference's behaviour, failures included:

* loading a template copies `defaults` with `copy.deepcopy` (two frames per level) and checks every
  `transform` string (one frame per level); past :data:`MAX_DEFAULTS_LEVEL` or
  :data:`MAX_TRANSFORM_LOAD_LEVEL` the template does not load (:class:`TemplateRecursionError`);
* applying a transform takes two frames per level, so a transform deeper than
  :data:`MAX_TRANSFORM_APPLY_LEVEL` loads, but raises RecursionError whenever its field closes, at the
  node where the reference's recursion gives out (see `rtcompile.runtime.transform_data`).

The reference's limits depend on how deep the caller's own stack already is; ours are fixed, at the
deepest the reference manages (measured from a top-level caller with CPython 3.11's default limit:
`tests/test_deep_templates.py` checks them against transformers). A node's *level* counts containers
from the top: the `defaults` mapping itself and a transform's outermost value are level 0.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any, Final

from rtcompile.errors import TemplateError

MAX_DEFAULTS_LEVEL: Final = 497
MAX_TRANSFORM_LOAD_LEVEL: Final = 992
MAX_TRANSFORM_APPLY_LEVEL: Final = 496


class TemplateRecursionError(TemplateError, RecursionError):
    """A template nested deeper than transformers can load: a :class:`TemplateError` that is also the
    RecursionError the reference raises, so ``except RecursionError`` code keeps working."""


def levels(value: object) -> Iterator[tuple[object, int]]:
    """Every node of a JSON-like value with its level, depth first, members in order (no recursion)."""
    pending: list[tuple[object, int]] = [(value, 0)]
    while pending:
        node, level = pending.pop()
        yield node, level
        if isinstance(node, dict):
            pending.extend((member, level + 1) for member in reversed(list(node.values())))
        elif isinstance(node, (list, tuple)):
            pending.extend((member, level + 1) for member in reversed(node))


def deepest_level(value: object) -> int:
    return max(level for _, level in levels(value))


def copy_nested(value: object) -> object:
    """`copy.deepcopy(value)` for data nested too deep for it: dicts and lists are copied without recursion
    (sharing kept: a list that appears twice is copied once), anything else by `copy.deepcopy`."""
    memo: dict[int, Any] = {}
    pending: list[tuple[Any, Any]] = []

    def shell(node: object) -> Any:
        """The copy of `node`: an empty container to fill (queued), or a finished copy of anything else."""
        if id(node) in memo:
            return memo[id(node)]
        if not isinstance(node, (dict, list)):
            return copy.deepcopy(node, memo)
        empty: dict[Any, Any] | list[Any] = {} if isinstance(node, dict) else []
        memo[id(node)] = empty
        pending.append((node, empty))
        return empty

    root = shell(value)
    while pending:
        original, duplicate = pending.pop()
        if isinstance(original, dict):
            for key, member in original.items():
                duplicate[copy.deepcopy(key, memo)] = shell(member)
        else:
            duplicate.extend([shell(member) for member in original])
    return root
