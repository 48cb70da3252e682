"""rtcompile: compile Hugging Face response templates into standalone, typed Python parsers.

Pipeline: `load_template` (read + validate) -> IR (`rtcompile.ir`) -> either the interpreter
(`parse_response`, `ResponseParser`) or the code generator (`compile_template`).

The client-side workflow around it: `render_prompt` (the chat prompt, as transformers renders it),
`to_openai` (a parsed message as an OpenAI assistant message) and `DeltaStream` /
`ChatCompletionChunks` (parser events as chat-completion chunks), with `openai_roles` saying which
template field is which; `grammar` (a grammar for constrained decoding, for a template and tools).
"""

from typing import TYPE_CHECKING, Any

from rtcompile.api import (
    CompiledModule,
    Diagnostic,
    Event,
    Message,
    ResponseParser,
    TemplateText,
    compile_module,
    compile_shared_runtime,
    compile_template,
    load_template,
    openai_roles,
    parse_response,
)
from rtcompile.errors import TemplateError, TemplateWarning
from rtcompile.grammars import GrammarError, grammar
from rtcompile.ir import Template
from rtcompile.runtime.engine import StartAnchorWarning
from rtcompile.runtime.openai import OpenAIField, OpenAIRoles, call_id_factory, to_openai
from rtcompile.runtime.openai_stream import ChatCompletionChunks, DeltaStream
from rtcompile.version import VERSION

if TYPE_CHECKING:
    from rtcompile.prompt import render_prompt
    from rtcompile.tooling.lint import check_template

__version__ = VERSION


def __getattr__(name: str) -> Any:
    # Rendering needs jinja2, which doubles the import time of a package most users import only to parse;
    # checking a template is `rtcompile lint`, which renders chat templates.
    if name == "render_prompt":
        from rtcompile.prompt import render_prompt

        return render_prompt
    if name == "check_template":
        from rtcompile.tooling.lint import check_template

        return check_template
    raise AttributeError(f"module 'rtcompile' has no attribute {name!r}")


__all__ = [
    "ChatCompletionChunks",
    "CompiledModule",
    "DeltaStream",
    "Diagnostic",
    "Event",
    "GrammarError",
    "Message",
    "OpenAIField",
    "OpenAIRoles",
    "ResponseParser",
    "StartAnchorWarning",
    "Template",
    "TemplateError",
    "TemplateWarning",
    "TemplateText",
    "__version__",
    "call_id_factory",
    "check_template",
    "compile_module",
    "compile_shared_runtime",
    "compile_template",
    "grammar",
    "load_template",
    "openai_roles",
    "parse_response",
    "render_prompt",
    "to_openai",
]
