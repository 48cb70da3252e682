"""Casting parsed tool-call arguments to the types declared in the tools' JSON schemas.

Models often emit every argument as text (xml-inline tags, kv-lines), so when the caller
passes `tools`, string arguments are converted according to each parameter's schema, as
transformers' `ResponseParser` does: the first declared type that accepts the text wins,
and text no type accepts is kept unchanged.
"""

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any


def schema_types(schema: Any) -> tuple[str, ...]:
    """The type names a parameter schema allows, in declaration order, duplicates kept.

    Collects `type` (a string or list of strings), recursively the `anyOf`/`oneOf`
    choices, and `null` when the schema is `nullable` (how transformers'
    `get_json_schema` marks Optional parameters). A non-dict schema allows nothing. A
    truthy non-iterable union (e.g. `"anyOf": 1`) raises TypeError, as in the reference.
    """
    if not isinstance(schema, dict):
        return ()
    declared = schema.get("type")
    types: list[str] = []
    if isinstance(declared, str):
        types.append(declared)
    elif isinstance(declared, list):
        types.extend(name for name in declared if isinstance(name, str))
    for union_key in ("anyOf", "oneOf"):
        for choice in schema.get(union_key) or []:
            types.extend(schema_types(choice))
    if schema.get("nullable") and "null" not in types:
        types.append("null")
    return tuple(types)


def _as_integer(raw: str) -> int | None:
    """`int()` syntax, or a whole float such as "3.0" or "1e3" (JSON Schema integers);
    None otherwise."""
    try:
        return int(raw)
    except ValueError:
        number = float(raw)  # a ValueError here means "not this type" to the caller
    return int(number) if number.is_integer() else None


def _as_number(raw: str) -> int | float | None:
    """A finite float, given back as an int when it is whole and the text had no '.';
    None for nan/inf."""
    number = float(raw)
    if not math.isfinite(number):
        return None
    return int(number) if number.is_integer() and "." not in raw else number


def _coerce_as(raw: str, type_name: str) -> tuple[bool, Any]:
    """Try one schema type: (True, value) on success, (False, None) if the text does not
    fit it.

    May raise ValueError (from int/float/json parsing), which also means the text does
    not fit.
    """
    if type_name == "integer":
        integer = _as_integer(raw)
        return (integer is not None), integer
    if type_name == "number":
        number = _as_number(raw)
        return (number is not None), number
    if type_name == "boolean" and raw.strip().lower() in ("true", "1", "false", "0"):
        return True, raw.strip().lower() in ("true", "1")
    if type_name == "null" and raw.strip() in ("null", "None"):
        return True, None
    if type_name in ("object", "array"):
        decoded = json.loads(raw)
        if isinstance(decoded, dict if type_name == "object" else list):
            return True, decoded
    return False, None


def coerce_value(raw: str, types: tuple[str, ...]) -> Any:
    """Convert `raw` with the first of `types` that accepts it; otherwise return `raw`
    itself.

    `string`, unknown types and failed casts all keep the text. Only ValueError counts
    as "does not fit"; anything else (e.g. RecursionError from very deep JSON)
    propagates, as in the reference.
    """
    for type_name in types:
        try:
            accepted, value = _coerce_as(raw, type_name)
        except ValueError:
            continue
        if accepted:
            return value
    return raw


def tool_parameter_table(tools: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Map each tool's name to its parameter `properties` ({} when absent or malformed).

    Tools are schema dicts, either wrapped as `{"type": "function", "function": {...}}`
    or bare; entries without a string `name` (or that are not dicts at all) are ignored,
    and a later tool replaces an earlier one of the same name. Python functions must
    already have been converted to schemas by the caller.
    """
    table: dict[str, dict[str, Any]] = {}
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        parameters = function.get("parameters")
        properties = (
            parameters.get("properties") if isinstance(parameters, dict) else None
        )
        table[function["name"]] = properties if isinstance(properties, dict) else {}
    return table


def _coerce_arguments(arguments: dict[Any, Any], properties: Mapping[Any, Any]) -> None:
    """Cast, in place, the string arguments (and strings inside non-array list
    arguments) that have a schema.

    A list where the schema does not allow `array` is taken to be a key repeated under
    `merge_duplicates`, so each of its strings is cast on its own.
    """
    for key, argument in arguments.items():
        if key not in properties:
            continue
        types = schema_types(properties[key])
        if not types:
            continue
        if isinstance(argument, str):
            arguments[key] = coerce_value(argument, types)
        elif isinstance(argument, list) and "array" not in types:
            arguments[key] = [
                coerce_value(item, types) if isinstance(item, str) else item
                for item in argument
            ]


def coerce_tool_calls(value: Any, params: Mapping[str, Mapping[str, Any]]) -> Any:
    """Cast the arguments of tool calls shaped `{"function": {"name": str, "arguments":
    dict}}`.

    Lists are walked recursively and rebuilt as new lists; a tool call's `arguments`
    dict is modified in place and the same object is returned; anything else comes back
    untouched. Tools with no properties are skipped. Like the reference, only call this
    when the table is non-empty (else lists keep their identity).
    """
    if isinstance(value, list):
        return [coerce_tool_calls(item, params) for item in value]
    function = value.get("function") if isinstance(value, dict) else None
    if not isinstance(function, dict):
        return value
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return value
    properties = params.get(name)
    if properties:
        _coerce_arguments(arguments, properties)
    return value
