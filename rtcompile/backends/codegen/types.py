"""The message and event types of one template: TypedDicts with its exact keys and field names.

They exist for the type checker only (a generated module never imports `typing` at run time), so a
consumer running `mypy --strict` sees `message["tool_calls"][0]["function"]` typed as the template
says.
"""

from __future__ import annotations

from dataclasses import dataclass

from rtcompile.backends.codegen.layout import INDENT, lay_out
from rtcompile.backends.codegen.parts import ModuleParts
from rtcompile.backends.codegen.writer import literal
from rtcompile.ir import (
    KINDS,
    FailingParser,
    Field,
    TDict,
    Template,
    TList,
    TLiteral,
    TPlaceholder,
    Transform,
    unreachable,
)
from rtcompile.openai_roles import makes_tool_calls

MAX_SHAPE_NESTING = 8  # transform dicts nested deeper than this are typed `Any`


# The event types, the same in every module.
EVENT_TYPES = [
    'RegionOpen = TypedDict("RegionOpen", {"type": Literal["region_open"], "field": FieldName,'
    ' "captures": NotRequired[dict[str, str]], "start": NotRequired[int]})',
    'RegionChunk = TypedDict("RegionChunk", {"type": Literal["region_chunk"], "field": FieldName,'
    ' "text": str, "dirty": bool})',
    'RegionClose = TypedDict("RegionClose", {"type": Literal["region_close"], "field": FieldName,'
    ' "value": Any, "end": NotRequired[int]})',
    'RegionMalformed = TypedDict("RegionMalformed", {"type": Literal["region_malformed"],'
    ' "field": FieldName, "error": str, "message": str, "text": str, "end": NotRequired[int]})',
]


def message_types(parts: ModuleParts, template: Template) -> str:
    field_types = {f.name: _value_type(parts, f) for f in template.fields}
    entries = []
    for key, value in template.defaults.items():
        kind = "Any" if key in field_types or not isinstance(value, (str, int, float, bool)) else type(value).__name__
        entries.append(f"{literal(key)}: Required[{kind}]")
    entries += [
        f"{literal(name)}: NotRequired[{kind}]" for name, kind in field_types.items() if name not in template.defaults
    ]
    names = ", ".join(literal(f.name) for f in template.fields)
    declarations = [
        f"FieldName = Literal[{names}]",
        *parts.shapes,
        f'Message = TypedDict("Message", {{{", ".join(entries)}}})',
        "# captures, start, end and region_malformed appear only with the opt-in extensions.",
        *EVENT_TYPES,
    ]
    laid_out = "\n".join(line for d in declarations for line in lay_out(INDENT + d))
    # typing has NotRequired and Required from 3.11 on; generated modules support 3.10.
    extensions = "NotRequired, Required" if template.defaults else "NotRequired"
    return f"""if TYPE_CHECKING:
    from typing_extensions import {extensions}  # noqa: UP035

{laid_out}
    Event = RegionOpen | RegionChunk | RegionClose | RegionMalformed
else:
    FieldName = str
    Message = RegionOpen = RegionChunk = RegionClose = RegionMalformed = Event = dict"""


@dataclass(frozen=True)
class _Scope:
    """What a transform's placeholders are known to hold: `content` is the parsed content's type (None
    under `transform_each`, where each element brings its own keys), `captures` the named groups of the
    field's delimiters, always strings in a plain transform (the content wins over a group so named)."""

    content: str | None
    captures: frozenset[str]


def _value_type(parts: ModuleParts, f: Field) -> str:
    base = "Any" if isinstance(f.parser, FailingParser) else KINDS[f.content].value_type
    if f.transform is not None:
        if f.transform_each:
            scope = _Scope(None, frozenset())
        else:
            groups = (*(f.open.group_names if f.open else ()), *(f.close.group_names if f.close else ()))
            scope = _Scope(base, frozenset(groups) - {"content"})
        shape = _transform_type(parts, f.transform, scope, f.name)
        base = f"list[{shape}]" if f.transform_each else shape
    if f.join is not None:
        return "str"
    return f"list[{base}]" if f.repeats else base


def _transform_type(parts: ModuleParts, transform: Transform, scope: _Scope, hint: str, nesting: int = 0) -> str:
    if nesting >= MAX_SHAPE_NESTING:
        return "Any"  # a TypedDict per level would be no help to a reader this deep (nor cheap to check)
    match transform:
        case TPlaceholder(root=root, keys=()) if root == "content" and scope.content is not None:
            return scope.content
        case TPlaceholder(root=root, keys=()) if root in scope.captures:
            return "str"
        case TPlaceholder():
            return "Any"
        case TLiteral(value=value):
            if value is None:
                return "None"
            if isinstance(value, (bool, int, str)):
                return f"Literal[{literal(value)}]"
            return "float" if isinstance(value, float) else "Any"
        case TList():
            return "list[Any]"
        case TDict(items=items):
            if not _string_keys(transform):
                return "dict[Any, Any]"
            name = parts.names.new("Shape", hint)
            members = {
                str(k): _function_type(parts, v, scope, f"{hint} {k}", nesting + 1)
                if nesting == 0 and k == "function" and makes_tool_calls(transform)
                else _transform_type(parts, v, scope, f"{hint} {k}", nesting + 1)
                for k, v in items
            }
            return _shape(parts, name, members)
        case _:
            unreachable(transform)


def _function_type(parts: ModuleParts, transform: Transform, scope: _Scope, hint: str, nesting: int) -> str:
    """A tool call's `function`: its `name` is a string, as the OpenAI convention has it (`to_openai`
    refuses a call without one). Where the template leaves the whole function to the model (`"function":
    "{content}"` of parsed JSON), it is `{"name": str, "arguments": Any}` by that convention."""
    if isinstance(transform, TDict) and nesting < MAX_SHAPE_NESTING and _string_keys(transform):
        name = parts.names.new("Shape", hint)
        members = {
            str(k): "str" if k == "name" else _transform_type(parts, v, scope, f"{hint} {k}", nesting + 1)
            for k, v in transform.items
        }
        return _shape(parts, name, members)
    typed = _transform_type(parts, transform, scope, hint, nesting)
    if typed != "Any":
        return typed
    parts.shapes.append("# the function as the OpenAI convention has it: what the model writes is not checked")
    return _shape(parts, parts.names.new("Shape", hint), {"name": "str", "arguments": "Any"})


def _string_keys(transform: TDict) -> bool:
    return all(isinstance(k, str) for k, _ in transform.items)


def _shape(parts: ModuleParts, name: str, members: dict[str, str]) -> str:
    """Declare the TypedDict `name` with these keys and value types."""
    written = ", ".join(f"{literal(key)}: {kind}" for key, kind in members.items())
    parts.shapes.append(f'{name} = TypedDict("{name}", {{{written}}})')
    return name
