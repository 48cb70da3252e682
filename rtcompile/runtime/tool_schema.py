"""Python functions as tool schemas, built the way transformers' ``get_json_schema``
builds them.

Users may pass ``tools=[some_function]`` to a parser. The reference engine (transformers
5.24.0) turns each function into a JSON schema with
``transformers.utils.get_json_schema`` and later uses each parameter's ``type`` /
``anyOf`` / ``oneOf`` / ``nullable`` to coerce the arguments the model wrote. Generated
parser modules must run on the standard library alone, so this is an independent
implementation of that conversion. It reproduces the reference's output dict exactly
(including key order, which matters once a schema is rendered into a prompt) and raises
exceptions with the same class names in the same situations, because users' ``except``
clauses are written against those.

This module is lifted into generated modules (all but those compiled with
``--no-function-tools``, which refuse function tools instead: see
``protocol.refuse_function_tool``): it holds only top-level functions, constants and the
two exception classes, is fully typed, and imports nothing outside the standard library.
"""

import json
import re
import sys
import types
from collections.abc import Callable
from typing import Any, Final


class TypeHintParsingException(Exception):
    """A parameter's type hint is missing or cannot be expressed as a JSON schema."""


class DocstringParsingException(Exception):
    """The function's docstring is missing or does not describe every parameter."""


# JSON schema type names of the Python values that can be written as JSON scalars (and
# so can appear in an "enum"). Looked up by exact type: an IntEnum member is not an int
# here, as in the reference.
TOOL_SCHEMA_SCALAR_TYPES: Final[dict[object, str]] = {
    int: "integer",
    float: "number",
    str: "string",
    bool: "boolean",
    type(None): "null",
}

# Bare classes with a fixed schema type. `Any` (no constraint at all) is handled
# separately.
TOOL_SCHEMA_BASIC_TYPES: Final[dict[object, str]] = {
    **TOOL_SCHEMA_SCALAR_TYPES,
    list: "array",
    tuple: "array",
    dict: "object",
}

# Google-style docstring section headers, as the reference recognises them.
_TOOL_DOC_HEADERS: Final = ("Args:", "Returns:", "Raises:")

# The head of one entry in an "Args:" block: indentation, a name, an optional "(type)",
# a colon.
_TOOL_ARG_HEAD: Final = re.compile(
    r"(?P<indent>[ \t]*)(?P<name>\w+)(?:[ \t]*\([^()]*\))?:"
)

# Where an argument description's trailing "(choices: [...])" starts; the reference
# matches it case-insensitively, which in Unicode mode also lets e.g. "ſ" stand for "s".
_TOOL_CHOICES_MARKER: Final = re.compile(re.escape("(choices:"), re.IGNORECASE)


def _tool_media_type(hint: object) -> str | None:
    """The schema type of PIL images and torch tensors, which the reference maps when
    those libraries exist.

    We cannot import them (standard library only), but a function annotated with one of
    these classes has necessarily imported its module already, so looking in
    ``sys.modules`` is enough.
    """
    pil_image = sys.modules.get("PIL.Image")
    if pil_image is not None and hint is getattr(pil_image, "Image", None):
        return "image"
    torch = sys.modules.get("torch")
    if torch is not None and hint is getattr(torch, "Tensor", None):
        return "audio"
    return None


def _tool_enum_schema(values: list[Any]) -> dict[str, Any]:
    """``{"type": ..., "enum": values}``; the type lists each JSON type present once, in
    first-seen order."""
    names = list(
        dict.fromkeys(TOOL_SCHEMA_SCALAR_TYPES[type(value)] for value in values)
    )
    return {"type": names[0] if len(names) == 1 else names, "enum": values}


def _tool_bare_class_schema(hint: Any) -> dict[str, Any]:
    """Schema of a hint that is not a parameterised generic: an Enum, a basic type, Any,
    or an error."""
    # Imported where used: generated modules then import quickly (they import typing's
    # names for the type checker only).
    from enum import Enum
    from typing import Any as any_hint

    if isinstance(hint, type) and issubclass(hint, Enum):
        # The model has to write one of the member values, so those are the enum.
        values = [member.value for member in hint]
        if not values:
            raise TypeHintParsingException(
                f"The Enum {hint.__name__} has no members, so no value could ever "
                "match it."
            )
        if any(type(value) not in TOOL_SCHEMA_SCALAR_TYPES for value in values):
            raise TypeHintParsingException(
                f"The Enum {hint.__name__} has member values that are not JSON "
                f"scalars: {values}. "
                "Member values must be int, float, str, bool or None."
            )
        return _tool_enum_schema(values)
    # a dict lookup, so an unhashable hint is a TypeError here too
    basic = TOOL_SCHEMA_BASIC_TYPES.get(hint)
    if basic is not None:
        return {"type": basic}
    if hint is any_hint:
        return {}
    media = _tool_media_type(hint)
    if media is not None:
        return {"type": media}
    raise TypeHintParsingException(
        f"Couldn't convert the type hint {hint!r} to a JSON schema; it is probably a "
        "custom class. Supported "
        "hints are int, float, str, bool, None, Any, Enum classes, Literal, and list, "
        "tuple, dict and Union "
        "types made of those. For anything else, write the tool's JSON schema by hand "
        "and pass that instead."
    )


def _tool_type_schema(hint: Any) -> dict[str, Any]:
    """The JSON schema fragment for one type hint (already resolved by
    ``get_type_hints``)."""
    from typing import Literal, Union, get_args, get_origin

    origin = get_origin(hint)
    args = get_args(hint)
    if origin is None:
        return _tool_bare_class_schema(hint)
    if origin is Union or origin is types.UnionType:
        # None is expressed with "nullable" rather than as a member of the union.
        members = [_tool_type_schema(arg) for arg in args if arg is not type(None)]
        schema: dict[str, Any]
        if len(members) == 1:
            schema = members[0]
        elif all(
            member.keys() == {"type"} and isinstance(member["type"], str)
            for member in members
        ):
            # Plain types collapse into a sorted list of names; anything carrying more
            # (items, enum, ...) would lose information that way and goes through anyOf
            # below.
            names = sorted({member["type"] for member in members})
            schema = {"type": names[0] if len(names) == 1 else names}
        else:
            schema = {"anyOf": members}
        if type(None) in args:
            schema["nullable"] = True
        return schema
    if origin is Literal and args:
        if any(type(arg) not in TOOL_SCHEMA_SCALAR_TYPES for arg in args):
            raise TypeHintParsingException(
                "Only int, float, str, bool and None values can be listed in Literal."
            )
        return _tool_enum_schema(list(args))
    if origin is list:
        return (
            {"type": "array", "items": _tool_type_schema(args[0])}
            if args
            else {"type": "array"}
        )
    if origin is tuple:
        if not args:
            return {"type": "array"}
        if len(args) == 1:
            raise TypeHintParsingException(
                f"The type hint {str(hint).replace('typing.', '')} is a tuple with a "
                "single element, which is not "
                "converted to a JSON schema. Use list[...] if it can hold several "
                "values, or drop the tuple "
                "wrapper if it really is a single value."
            )
        if ... in args:
            raise TypeHintParsingException(
                "Tuple type hints with '...' are not converted to a JSON schema; use "
                "list[...] for "
                "variable-length input."
            )
        return {
            "type": "array",
            "prefixItems": [_tool_type_schema(arg) for arg in args],
        }
    if origin is dict:
        # JSON object keys are always strings, so only the value type can be described.
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = _tool_type_schema(args[1])
        return schema
    raise TypeHintParsingException(
        f"Couldn't parse the type hint {hint!r}; it is probably a custom class or "
        "object."
    )


def _tool_parameters_schema(
    func: Callable[..., Any], name: str
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The ``parameters`` object of the schema, and the return value's schema (None if
    unusable)."""
    # Imported here: they are slow to import, and only tools given as Python functions
    # need them.
    import inspect
    from typing import get_type_hints

    hints = get_type_hints(func)
    parameters = inspect.signature(func).parameters
    # A leading, unannotated self/cls is a method's receiver, never an argument the
    # model writes.
    first = next(iter(parameters), None)
    receiver = None
    if (
        first in ("self", "cls")
        and parameters[first].annotation == inspect.Parameter.empty
    ):
        receiver = first
    # `==` rather than `is` against Parameter.empty, as the reference does: a default
    # with an unusual __eq__ must be judged the same way by both.
    required: list[str] = []
    for param_name, param in parameters.items():
        if param_name == receiver:
            continue
        if param.annotation == inspect.Parameter.empty:
            raise TypeHintParsingException(
                f"Argument {param_name} is missing a type hint in function {name}"
            )
        if param.default == inspect.Parameter.empty:
            required.append(param_name)
    properties: dict[str, Any] = {}
    returns: dict[str, Any] | None = None
    for hint_name, hint in hints.items():
        if hint_name == receiver:
            continue
        if hint_name != "return":
            properties[hint_name] = _tool_type_schema(hint)
            continue
        # The model never writes the return value, so a return hint we cannot express
        # just stays out.
        try:
            returns = _tool_type_schema(hint)
        except TypeHintParsingException:
            returns = None
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema, returns


def _tool_doc_section(doc: str, header: str) -> int | None:
    """Where the body of a section starts: just past the first ``header`` that ends its
    line and starts one.

    "Starts a line" allows indentation before the header, but not other text on the same
    line.
    """
    marker = header + "\n"
    index = doc.find(marker)
    while index >= 0:
        before = doc[:index]
        if "\n" in before[len(before.rstrip()) :]:
            return index + len(marker)
        index = doc.find(marker, index + 1)
    return None


def _tool_doc_cut(doc: str, start: int, stops: tuple[str, ...]) -> int:
    """Index of the first of ``stops`` found at or after ``start`` anywhere in the text,
    else the end."""
    found = [index for index in (doc.find(stop, start) for stop in stops) if index >= 0]
    return min(found, default=len(doc))


def _tool_is_arg_boundary(line: str, indent: str) -> bool:
    """Whether ``line`` starts a new argument entry, ending the description of one
    indented by ``indent``.

    A line that looks like ``name: ...`` but is indented deeper than the current entry
    is part of its description (a nested list, say), not a new argument.
    """
    deeper = line.startswith(indent) and line[len(indent) : len(indent) + 1] in (
        " ",
        "\t",
    )
    return not deeper and _TOOL_ARG_HEAD.match(line) is not None


def _tool_parse_args_block(block: str) -> dict[str, str]:
    """Argument name -> description (lines joined with single spaces) from the body of
    an "Args:" section."""
    lines = [line for line in block.split("\n") if line.strip()]
    descriptions: dict[str, str] = {}
    index = 0
    while index < len(lines):
        head = _TOOL_ARG_HEAD.match(lines[index])
        if head is None:  # prose before the first entry
            index += 1
            continue
        rest = lines[index][head.end() :]
        if rest.strip():
            pieces, index = [rest], index + 1
        else:
            # Nothing after the colon: the description starts on the next line, whatever
            # that line looks like (even "other: ..." at the same indentation).
            pieces, index = lines[index + 1 : index + 2], index + 2
        while index < len(lines) and not _tool_is_arg_boundary(
            lines[index], head.group("indent")
        ):
            pieces.append(lines[index])
            index += 1
        descriptions[head.group("name")] = " ".join(piece.strip() for piece in pieces)
    return descriptions


def _tool_parse_docstring(doc: str) -> tuple[str, dict[str, str], str | None]:
    """Split a Google-style docstring into description, argument descriptions and the
    Returns text.

    The description is everything before the first section header, wherever it appears.
    The Args block runs until a "Returns:" or "Raises:" appears anywhere after it;
    Returns runs until "Raises:".
    """
    description = doc[: _tool_doc_cut(doc, 0, _TOOL_DOC_HEADERS)].strip()
    args_start = _tool_doc_section(doc, "Args:")
    arguments: dict[str, str] = {}
    if args_start is not None:
        block = doc[
            args_start : _tool_doc_cut(doc, args_start, ("Returns:", "Raises:"))
        ].rstrip()
        arguments = _tool_parse_args_block(block)
    returns_start = _tool_doc_section(doc, "Returns:")
    returns = None
    if returns_start is not None:
        returns = doc[
            returns_start : _tool_doc_cut(doc, returns_start, ("Raises:",))
        ].strip()
    return description, arguments, returns


def _tool_split_choices(description: str) -> tuple[str, list[Any] | None]:
    """Separate a trailing ``(choices: [...])`` (a JSON list) from an argument
    description."""
    body = description.rstrip()
    marker = _TOOL_CHOICES_MARKER.search(body)
    if marker is None or not body.endswith(")"):
        return description, None
    choices = json.loads(body[marker.end() : -1].lstrip())
    return description[: marker.start()].strip(), [
        c.strip() if isinstance(c, str) else c for c in choices
    ]


def function_to_tool_schema(func: Callable[..., Any]) -> dict[str, Any]:
    """The tool schema of a Python function, identical to transformers'
    ``get_json_schema(func)``.

    The function needs a Google-style docstring describing every parameter, and a type
    hint on every parameter (a method's unannotated ``self``/``cls`` is skipped). A
    parameter description may end with ``(choices: [...])`` to restrict its values.

    Returns: ``{"type": "function", "function": {"name", "description", "parameters"[,
    "return"]}}``.

    Raises: DocstringParsingException: no docstring, or a parameter without a
    description. TypeHintParsingException: a parameter without a type hint, or a hint
    with no JSON equivalent.
    """
    import inspect  # see _tool_parameters_schema

    name = getattr(func, "__name__", "operation")
    doc = inspect.getdoc(func)
    if not doc:
        raise DocstringParsingException(
            f"Cannot generate JSON schema for {name} because it has no docstring!"
        )
    description, arguments, returns_text = _tool_parse_docstring(doc.strip())
    parameters, returns = _tool_parameters_schema(func, name)
    if returns is not None and returns_text is not None:
        returns["description"] = returns_text
    for argument, schema in parameters["properties"].items():
        if argument not in arguments:
            raise DocstringParsingException(
                f"Cannot generate JSON schema for {name} because the docstring has no "
                "description for the "
                f"argument '{argument}'"
            )
        text, choices = _tool_split_choices(arguments[argument])
        if choices is not None:
            schema["enum"] = choices
        schema["description"] = text
    function: dict[str, Any] = {
        "name": name,
        "description": description,
        "parameters": parameters,
    }
    if returns is not None:
        function["return"] = returns
    return {"type": "function", "function": function}
