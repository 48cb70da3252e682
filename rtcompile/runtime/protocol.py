"""Pieces of the parser protocol shared by the interpreter and every generated module.

The scanning loop itself is written twice on purpose (generically in the interpreter,
specialised per state in generated code); what does not depend on the template lives
here once.
"""

from collections.abc import Callable, Iterable, Sequence
from types import FunctionType, MethodType
from typing import Any, Final, TypeAlias

from rtcompile.runtime.coercion import tool_parameter_table

# Turns a tool given as a Python function into its JSON schema
# (`tool_schema.function_to_tool_schema`, or, in a module compiled without that code,
# `refuse_function_tool`). (A string: generated modules import `typing` for the type
# checker only.)
FunctionSchema: TypeAlias = "Callable[[Callable[..., Any]], dict[str, Any]]"

PREFIX_REQUIRED: Final = (
    "`ResponseParser`/`parse_response` requires `prefix` (the chat prompt sent to the "
    "model before generation), "
    "because chat templates often pre-write part of the assistant message (e.g. an "
    "opening `<think>` tag) that "
    "the parser must see to parse the output correctly. If the generation already "
    "contains the complete message, "
    'pass `prefix=""` to opt out explicitly.'
)


def is_empty(value: object) -> bool:
    """Fields left empty are dropped from the final message (unless they have a
    default)."""
    return value is None or (isinstance(value, (list, dict, str)) and not value)


def tool_parameters(
    tools: Iterable[Any] | None, function_schema: FunctionSchema
) -> dict[str, dict[str, Any]]:
    """Tool name -> JSON-schema `properties`, for tools given as schema dicts or Python
    functions (converted by `function_schema`)."""
    return tool_parameter_table(tool_schemas(tools, function_schema))


def tool_schemas(
    tools: Iterable[Any] | None, function_schema: FunctionSchema
) -> list[Any]:
    """The tools as JSON schemas: Python functions converted by `function_schema`."""
    # isinstance checks are what inspect.isfunction/ismethod do, without importing
    # inspect.
    return [
        function_schema(tool) if isinstance(tool, (FunctionType, MethodType)) else tool
        for tool in tools or []
    ]


def refuse_function_tool(function: Callable[..., Any]) -> dict[str, Any]:
    """The `function_schema` of a module compiled with `--no-function-tools`
    (`function_tools=False`), which leaves out the code that turns Python functions into
    JSON schemas."""
    raise TypeError(
        f"tools: {getattr(function, '__name__', function)!r} is a Python function, but "
        "this parser was "
        "compiled with --no-function-tools, without the code that turns functions into "
        "JSON schemas; "
        "pass the tool's JSON schema (a dict, e.g. from "
        "transformers.utils.get_json_schema), or recompile "
        "the parser without --no-function-tools"
    )


def batch_prefixes(count: int, prefix: str | Sequence[str] | None) -> list[Any]:
    """One prefix per text of a batch: a single prefix is broadcast; an empty list means
    "" for all."""
    if prefix is None or isinstance(prefix, str):
        return [prefix] * count
    if not prefix:
        return [""] * count
    prefixes = list(prefix)
    if len(prefixes) != count:
        raise ValueError(
            f"Got {count} response(s) but {len(prefixes)} prefix(es); `prefix` must be "
            "a single "
            "sequence (broadcast to every response), or one prefix per response."
        )
    return prefixes


def join_value(name: str, previous: Any, value: Any, separator: str) -> str:
    """The new value of a `join` field after one more region closed with `value`."""
    if not isinstance(value, str):
        # ValueError, not TypeError: the reference raises ValueError.
        raise ValueError(  # noqa: TRY004
            f"Field '{name}': 'join' requires each match to parse to a string, got "
            f"{type(value).__name__}."
        )
    return value if previous is None else previous + separator + value
