"""Which field of a template plays which part in an OpenAI message, read off the template IR.

The mapping type (`OpenAIRoles`) lives in the runtime, where generated modules can use it; deciding it
needs the IR, so that happens here.
"""

from __future__ import annotations

from types import EllipsisType

from rtcompile.ir import Field, ScalarParser, TDict, Template, TLiteral, TPlaceholder, Transform
from rtcompile.runtime.openai import OpenAIField, OpenAIRegionText, OpenAIRoles

#: Field names that hold reasoning, in order of preference (gpt-oss calls it `thinking`, Cohere `tool_plan`).
REASONING_FIELD_NAMES = ("reasoning_content", "thinking", "tool_plan", "reasoning")


def openai_roles(
    template: Template,
    *,
    content: str | None | EllipsisType = ...,
    reasoning: str | None | EllipsisType = ...,
    tool_calls: str | None | EllipsisType = ...,
) -> OpenAIRoles:
    """The roles of `template`'s fields, each with the rules by which the parser builds its value.

    By default: the reasoning is the field named reasoning_content, thinking, tool_plan or reasoning (the
    first that exists); the tool calls are the field whose transform makes `{"type": "function",
    "function": ...}` (else one named tool_calls); the content is the implicit field (else one named
    content). Pass a field name to choose another field, or None for "no such field". The package's
    `rtcompile.openai_roles` (in `rtcompile.api`) takes anything `load_template` reads.
    """
    by_name = {f.name: f for f in template.fields}

    def chosen(override: str | None | EllipsisType, derived: Field | None) -> Field | None:
        if override is ...:
            return derived
        if override is None:
            return None
        if override not in by_name:
            raise ValueError(f"the template has no field {override!r}; its fields are {sorted(by_name)}")
        return by_name[override]

    calls_field = chosen(tool_calls, _tool_call_field(template))
    taken = {calls_field.name} if calls_field is not None else set()
    named = (by_name[n] for n in REASONING_FIELD_NAMES if n in by_name and n not in taken)
    reasoning_field = chosen(reasoning, next(named, None))
    taken |= {reasoning_field.name} if reasoning_field is not None else set()
    candidates = (template.implicit, by_name.get("content"))
    content_field = chosen(content, next((f for f in candidates if f is not None and f.name not in taken), None))
    return OpenAIRoles(
        content=_rules(content_field, template),
        reasoning=_rules(reasoning_field, template),
        tool_calls=_call_rules(calls_field, template),
    )


def _tool_call_field(template: Template) -> Field | None:
    for f in template.fields:
        if makes_tool_calls(f.transform):
            return f
    return next((f for f in template.fields if f.name == "tool_calls"), None)


def makes_tool_calls(transform: Transform | None) -> bool:
    """Whether a transform makes OpenAI-style tool calls: `{"type": "function", "function": ...}`."""
    if not isinstance(transform, TDict):
        return False
    items = dict(transform.items)
    return items.get("type") == TLiteral("function") and "function" in items


def _rules(field: Field | None, template: Template) -> OpenAIField | None:
    if field is None:
        return None
    region_text: OpenAIRegionText | None = None
    if isinstance(field.parser, ScalarParser) and field.parser.kind == "text" and field.transform is None:
        region_text = "stripped" if field.parser.strip else "verbatim"
    has_default = field.name in template.defaults
    return OpenAIField(
        name=field.name,
        repeats=field.repeats,
        join=field.join,
        region_text=region_text,
        has_default=has_default,
        default=template.defaults[field.name] if has_default else None,
    )


def _call_rules(field: Field | None, template: Template) -> OpenAIField | None:
    """The tool-call field's rules, with the captures that name a call before its arguments are parsed."""
    rules = _rules(field, template)
    if field is None or rules is None:
        return rules
    captures = _announcing_captures(field)
    if captures is None:
        return rules
    name_capture, id_capture = captures
    return OpenAIField(
        name=rules.name,
        repeats=rules.repeats,
        join=rules.join,
        region_text=rules.region_text,
        has_default=rules.has_default,
        default=rules.default,
        name_capture=name_capture,
        id_capture=id_capture,
    )


def _announcing_captures(field: Field) -> tuple[str, str | None] | None:
    """(name capture, id capture or None) when every region of `field` is one call whose function name is an
    open-delimiter capture (`"name": "{name}"`) and whose id is a capture too or generated; else None."""
    if not field.repeats or field.join is not None or field.transform_each or not isinstance(field.transform, TDict):
        return None
    items = dict(field.transform.items)
    function = items.get("function")
    if not isinstance(function, TDict):
        return None
    name = dict(function.items).get("name")
    if not _is_capture(name):
        return None
    call_id = items.get("id")
    if call_id is not None and not _is_capture(call_id):
        return None  # an id from the content is known only at close
    assert isinstance(name, TPlaceholder)
    return name.root, call_id.root if isinstance(call_id, TPlaceholder) else None


def _is_capture(transform: object) -> bool:
    return isinstance(transform, TPlaceholder) and transform.root != "content" and not transform.keys
