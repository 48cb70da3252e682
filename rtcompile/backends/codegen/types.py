"""The message and event types of one template: TypedDicts with its exact keys and field names.

They exist for the type checker only (a generated module never imports `typing` at run time), so a
consumer running `mypy --strict` sees `message["tool_calls"][0]["function"]` typed as the template
says.
"""

from __future__ import annotations

from rtcompile.backends.codegen.layout import INDENT, lay_out
from rtcompile.backends.codegen.parts import ModuleParts
from rtcompile.backends.codegen.writer import literal
from rtcompile.ir import FailingParser, Field, TDict, Template, TList, TLiteral, TPlaceholder, Transform, unreachable

MAX_SHAPE_NESTING = 8  # transform dicts nested deeper than this are typed `Any`
_CONTENT_TYPES = {
    "text": "str",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "xml-inline": "dict[str, Any]",
    "kv-lines": "dict[str, Any]",
    "python-call-list": "list[dict[str, Any]]",
}


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


def _value_type(parts: ModuleParts, f: Field) -> str:
    base = "Any" if isinstance(f.parser, FailingParser) else _CONTENT_TYPES.get(f.content, "Any")
    if f.transform is not None:
        shape = _transform_type(parts, f.transform, base, f.name)
        base = f"list[{shape}]" if f.transform_each else shape
    if f.join is not None:
        return "str"
    return f"list[{base}]" if f.repeats else base


def _transform_type(parts: ModuleParts, transform: Transform, content_type: str, hint: str, nesting: int = 0) -> str:
    if nesting >= MAX_SHAPE_NESTING:
        return "Any"  # a TypedDict per level would be no help to a reader this deep (nor cheap to check)
    match transform:
        case TPlaceholder(root=root, keys=keys):
            return content_type if root == "content" and not keys else "Any"
        case TLiteral(value=value):
            if value is None:
                return "None"
            if isinstance(value, (bool, int, str)):
                return f"Literal[{literal(value)}]"
            return "float" if isinstance(value, float) else "Any"
        case TList():
            return "list[Any]"
        case TDict(items=items):
            if not all(isinstance(k, str) for k, _ in items):
                return "dict[Any, Any]"
            name = parts.names.new("Shape", hint)
            members = ", ".join(
                f"{literal(k)}: {_transform_type(parts, v, content_type, f'{hint} {k}', nesting + 1)}" for k, v in items
            )
            parts.shapes.append(f'{name} = TypedDict("{name}", {{{members}}})')
            return name
        case _:
            unreachable(transform)
