"""Runtime pieces of `transform` templates: placeholder lookup and the `transform_each`
checks.

The template tree is walked (interpreter) or unrolled (generated code) elsewhere, and
whole-string `{placeholder}`s are found at load time; what is left for run time is
resolving a placeholder against the scope and raising the reference's errors, word for
word, when the parsed data does not fit.
"""

from collections.abc import Mapping
from typing import Any


def resolve_placeholder(
    scope: Mapping[str, Any], path: str, root: str, keys: tuple[str, ...]
) -> Any:
    """Look up `{root.key1.key2}` (spelled `path`): KeyError for an unknown root,
    ValueError for a bad step.

    Only real dicts can be indexed into (a list or string is an error, not an index
    target), and the value is returned as is, so the result keeps its type and identity.
    """
    if root not in scope:
        raise KeyError(
            f"transform placeholder '{{{path}}}' is not defined. Available: "
            f"{sorted(scope)}"
        )
    value = scope[root]
    for key in keys:
        if not isinstance(value, dict):
            # ValueError, not TypeError: the reference raises ValueError.
            raise ValueError(  # noqa: TRY004
                f"transform placeholder '{{{path}}}' cannot index into "
                f"{type(value).__name__} at '{key}'"
            )
        if key not in value:
            raise ValueError(
                f"transform placeholder '{{{path}}}' is missing key '{key}'. "
                f"Available: {sorted(value)}"
            )
        value = value[key]
    return value


def require_each_list(field_name: str, value: Any) -> list[Any]:
    """`transform_each` maps over a parsed list; anything else (even a tuple or dict) is
    a ValueError."""
    if not isinstance(value, list):
        # ValueError, not TypeError: the reference raises ValueError.
        raise ValueError(  # noqa: TRY004
            f"Field '{field_name}': transform_each requires the parsed content to be a "
            "list, "
            f"got {type(value).__name__}."
        )
    return value


def each_item_scope(
    field_name: str, captures: Mapping[str, Any], item: Any
) -> dict[str, Any]:
    """The scope for one `transform_each` element: the captures overlaid by the
    element's own keys.

    The element must be a dict. Call this per element, right before transforming it,
    because the reference transforms earlier elements (and may fail on them) before it
    looks at later ones.
    """
    if not isinstance(item, dict):
        # ValueError, not TypeError: the reference raises ValueError.
        raise ValueError(  # noqa: TRY004
            f"Field '{field_name}': transform_each requires each list element to be a "
            f"dict, got {type(item).__name__}."
        )
    return {**captures, **item}


def content_scope(captures: Mapping[str, Any], content: Any) -> dict[str, Any]:
    """The scope for a plain `transform`: the captures plus `content`, which wins over a
    capture so named."""
    return {**captures, "content": content}
