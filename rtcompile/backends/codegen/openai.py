"""The OpenAI-compatible side of a generated module: this template's roles, `to_openai`, the delta stream.

The runtime (`rtcompile.runtime.openai`, `openai_stream`) is lifted as it is; what is generated is the
`OPENAI_ROLES` constant (which field is the content, the reasoning and the tool calls, read off the
template by `rtcompile.openai_roles`) and a `to_openai` whose default roles are those.
"""

from __future__ import annotations

from rtcompile.backends.codegen.parts import ModuleParts
from rtcompile.backends.codegen.writer import CodeWriter, literal
from rtcompile.ir import Template
from rtcompile.openai_roles import openai_roles
from rtcompile.runtime.openai import OpenAIField

LIFTED = [
    ("openai", "OpenAIField"),
    ("openai", "OpenAIRoles"),
    ("openai", "openai_message"),
    ("openai", "call_id_factory"),
    ("openai_stream", "DeltaStream"),
    ("openai_stream", "ChatCompletionChunks"),
]
# What the section adds to the module's `__all__`.
EXPORTED = ["OPENAI_ROLES", "ChatCompletionChunks", "DeltaStream", "call_id_factory", "to_openai"]


def openai_section(parts: ModuleParts, template: Template) -> str:
    for module, name in LIFTED:
        parts.need(module, name)
    roles = openai_roles(template)
    out = CodeWriter()
    out.line("OPENAI_ROLES: Final = OpenAIRoles(")
    out.line(f"    content={_field(roles.content)},")
    out.line(f"    reasoning={_field(roles.reasoning)},")
    out.line(f"    tool_calls={_field(roles.tool_calls)},")
    out.line(")")
    out.line()
    out.line()
    with out.block(
        "def to_openai(message: Message, *, roles: OpenAIRoles = OPENAI_ROLES, "
        "id_factory: Callable[[], str] | None = None, "
        'reasoning_key: str | tuple[str, ...] = "reasoning_content") -> dict[str, Any]:'
    ):
        out.line('"""`message` as an OpenAI chat-completion assistant message: `content`, `reasoning_content` and')
        out.line("`tool_calls` with ids and JSON-string arguments. Ids the model wrote are kept; others come from")
        out.line("`id_factory` (random by default; `call_id_factory(seed)` for reproducible ones). The")
        out.line('reasoning goes under `reasoning_key`: "reasoning_content", "reasoning" as vLLM\'s')
        out.line('server sends it, or both as a tuple."""')
        out.line("return openai_message(message, roles, id_factory, reasoning_key)")
    return out.code()


def _field(field: OpenAIField | None) -> str:
    if field is None:
        return "None"
    arguments = [literal(field.name)]
    defaults = OpenAIField(field.name)
    for name in OpenAIField.__slots__[1:]:
        value = getattr(field, name)
        if value != getattr(defaults, name):
            arguments.append(f"{name}={literal(value)}")
    return f"OpenAIField({', '.join(arguments)})"
