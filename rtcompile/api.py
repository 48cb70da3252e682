"""The public entry points: load a template, parse with the interpreter, compile to a module.

Every entry point that takes a template source loads it one way (`_read`): the reference's load rules
(`rtcompile.frontend.loader`), with errors and the template's warnings (`rtcompile.frontend.diagnostics`)
located in its file. The warnings reach the caller through one channel, `TemplateWarning`, from every
entry point that returns a template, a parser, a message or code (`load_template`, `parse_response`,
`ResponseParser`, `openai_roles`, `compile_template`); the two that return diagnostics
(`check_template`, and `compile_module` for the command line) return them instead. A `Template` has been
loaded already: it is used as it is, and does not warn again.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import EllipsisType
from typing import Any, TypeAlias

from rtcompile.backends.interpreter import Event, InterpretedParser, Message
from rtcompile.errors import Diagnostic, TemplateError, TemplateFileError, TemplateWarning
from rtcompile.frontend.diagnostics import template_warnings
from rtcompile.frontend.loader import build_template
from rtcompile.frontend.source import SourceDocument, TemplateText, read_template_source
from rtcompile.ir import Template
from rtcompile.openai_roles import openai_roles as template_roles
from rtcompile.runtime.engine import parse_texts
from rtcompile.runtime.openai import OpenAIRoles

TemplateSource: TypeAlias = "Template | Mapping[str, Any] | str | os.PathLike[str] | TemplateText"


def load_template(source: TemplateSource) -> Template:
    """Read and validate a response template.

    `source` is a `tokenizer_config.json` (its `"response_template"` key), a bare template JSON
    file, a model directory containing `tokenizer_config.json`, the name of a bundled template
    (`"qwen3"`; `rtcompile list` shows them; a file of that name wins), a template dict, or
    `TemplateText` (the bytes of a template file, e.g. from standard input). Raises
    `TemplateError` (a ValueError) naming the file, line:col and JSON path of what is wrong, and
    warns (`TemplateWarning`) about what loads but will probably misbehave.
    """
    return _load_warning(source)


def _load_warning(source: TemplateSource) -> Template:
    """`source` loaded, its warnings issued at the public entry point's caller (three frames up)."""
    if isinstance(source, Template):
        return source
    template, document = _read(source)
    for diagnostic in _located_warnings(template, document):
        warnings.warn(str(diagnostic), TemplateWarning, stacklevel=3)
    return template


def examine_template(source: TemplateSource) -> tuple[Template | None, SourceDocument | None, list[Diagnostic]]:
    """Load once and return the template (None if it does not load), its document and its diagnostics.
    A file that cannot be read at all raises `TemplateFileError`: it is no finding about a template."""
    try:
        template, document = _read(source) if not isinstance(source, Template) else (source, None)
    except TemplateFileError:
        raise
    except TemplateError as error:
        return None, None, [error.to_diagnostic()]
    return template, document, _located_warnings(template, document)


def _read(source: str | os.PathLike[str] | Mapping[str, Any] | TemplateText) -> tuple[Template, SourceDocument | None]:
    """The one way a template source becomes a `Template`: read, the load rules applied, errors located."""
    spec, document = read_template_source(source)
    try:
        return build_template(spec), document
    except TemplateError as error:
        raise locate(error, document) from None


def _located_warnings(template: Template, document: SourceDocument | None) -> list[Diagnostic]:
    return [_locate_diagnostic(d, document) for d in template_warnings(template)]


def _locate_diagnostic(diagnostic: Diagnostic, document: SourceDocument | None) -> Diagnostic:
    if document is None:
        return diagnostic
    line, col = document.locate_nearest(diagnostic.path) or (None, None)
    return dataclasses.replace(diagnostic, file=document.file, line=line, col=col)


def locate(error: TemplateError, document: SourceDocument | None) -> TemplateError:
    """`error` with the file and line:col of the value at its JSON path, where the document knows them:
    of the very character, for an error with an `offset` into a string (a regex's syntax error)."""
    if document is None:
        return error
    position = None if error.offset is None else document.locate_in_string(error.path, error.offset)
    line, col = position or document.locate_nearest(error.path) or (None, None)
    return type(error)(error.message, error.path, file=document.file, line=line, col=col, offset=error.offset)


# How a regex-fallback warning ends (the CLI's --stdlib-only error replaces it), and its code.
REGEX_FALLBACK_NOTE = ": the module imports the regex module for this pattern"
REGEX_FALLBACK = "regex-fallback"


@dataclass(frozen=True)
class CompiledModule:
    """A generated module's source, and one warning per pattern it matches with the `regex` module
    (no exact standard-library translation is known for it, or stdlib `re` would backtrack on it for
    longer); no warnings: the module is stdlib only.
    `template_warnings` are the template's own (what `load_template` warns about), located."""

    code: str
    regex_fallbacks: tuple[Diagnostic, ...]
    template_warnings: tuple[Diagnostic, ...] = ()

    @property
    def requires(self) -> tuple[str, ...]:
        """Third-party modules the generated module imports (its `REQUIRES` constant)."""
        return ("regex",) if self.regex_fallbacks else ()


def compile_template(
    source: TemplateSource,
    *,
    source_name: str | None = None,
    function_tools: bool = True,
    openai: bool = True,
    grammar: bool = True,
    shared_runtime: bool = False,
) -> str:
    """Compile a response template into the source of a standalone Python module.

    `source_name` is what the module's header says it was generated from (default: the file
    path as given, or "<dict>"). Raises `TemplateError` for invalid templates. A pattern with no
    exact standard-library translation makes the module import `regex` (see `compile_module`).
    `function_tools=False` (the CLI's `--no-function-tools`) leaves out the code that turns Python
    functions into tool schemas: the module's `tools` then takes JSON schemas only, and a function
    there raises TypeError (the module's `FUNCTION_TOOLS` is False). `openai=False` (`--no-openai`)
    leaves out `to_openai`, `DeltaStream` and the rest of the OpenAI adapter (`OPENAI` is False).
    `grammar=False` (`--no-grammar`) leaves out `grammar()` and the template's grammar skeleton
    (`GRAMMAR_FUNCTION` is False; `rtcompile.grammars.grammar` builds the same grammars).
    `shared_runtime=True` (`--shared-runtime`) gives a module that imports the runtime from the
    `rtcompile_runtime.py` beside it (`compile_shared_runtime()`), in a directory used as a package.
    Warns about the template as `load_template` does.
    """
    compiled = compile_module(
        source,
        source_name=source_name,
        function_tools=function_tools,
        openai=openai,
        grammar=grammar,
        shared_runtime=shared_runtime,
    )
    if not isinstance(source, Template):
        for diagnostic in compiled.template_warnings:
            warnings.warn(str(diagnostic), TemplateWarning, stacklevel=2)
    return compiled.code


def compile_shared_runtime() -> str:
    """The source of `rtcompile_runtime.py`, the runtime that modules compiled with `shared_runtime=True`
    import from beside them: the same for every template this version of rtcompile compiles."""
    from rtcompile.backends.codegen.generate import generate_shared_runtime

    return generate_shared_runtime()


def compile_module(
    source: TemplateSource,
    *,
    source_name: str | None = None,
    function_tools: bool = True,
    openai: bool = True,
    grammar: bool = True,
    shared_runtime: bool = False,
) -> CompiledModule:
    """`compile_template`, also telling which patterns need the `regex` module, as located warnings."""
    template, document = (source, None) if isinstance(source, Template) else _read(source)
    if source_name is None:
        source_name = document.file if document is not None and document.file else "<dict>"
    # libcst and jinja2 are heavy; parsing users never need them
    from rtcompile.backends.codegen.generate import generate_module
    from rtcompile.backends.codegen.options import ModuleOptions

    options = ModuleOptions(
        function_tools=function_tools, openai=openai, grammar=grammar, shared_runtime=shared_runtime
    )
    try:
        generated = generate_module(template, source_name=source_name, options=options)
    except TemplateError as error:
        raise locate(error, document) from None
    notes = tuple(
        _locate_diagnostic(
            Diagnostic("warning", fallback.summary + REGEX_FALLBACK_NOTE, fallback.where, code=REGEX_FALLBACK),
            document,
        )
        for fallback in generated.fallbacks
    )
    return CompiledModule(generated.code, notes, tuple(_located_warnings(template, document)))


def parse_response(
    text: str | Sequence[str],
    template: TemplateSource,
    *,
    prefix: str | Sequence[str] | None,
    tools: Iterable[Any] | None = None,
) -> Message | list[Message]:
    """Parse complete model output into a message dict (or a list of them for a list of texts).

    `prefix` is the prompt the model continued (required; pass "" to opt out). For a batch it is
    one string broadcast to every text, or one string per text, as the tokenizer method takes it.
    """
    ir = _load_warning(template)
    return parse_texts(lambda p: ResponseParser(ir, p, tools=tools), text, prefix)


class ResponseParser(InterpretedParser):
    """A streaming parser for one generation, run by the interpreter (`rtcompile.backends.interpreter`).

    `template` is anything `load_template` reads. Feed model text as it arrives; each call returns the
    events it caused. `initial_events` holds the events of the prompt's pre-written part of the message
    (after the last start anchor). `captures`, `spans` and `recover` turn on extensions beyond the
    reference (see `rtcompile.runtime.engine.StreamingParser`).
    """

    def __init__(
        self,
        template: TemplateSource,
        prefix: str | None = None,
        *,
        tools: Iterable[Any] | None = None,
        captures: bool = False,
        spans: bool = False,
        recover: bool = False,
    ) -> None:
        self.interpret(_load_warning(template))
        super().__init__(prefix, tools=tools, captures=captures, spans=spans, recover=recover)


def openai_roles(
    source: TemplateSource,
    *,
    content: str | None | EllipsisType = ...,
    reasoning: str | None | EllipsisType = ...,
    tool_calls: str | None | EllipsisType = ...,
) -> OpenAIRoles:
    """Which field of the template is the content, the reasoning and the tool calls, and how the parser
    builds each (`rtcompile.openai_roles.openai_roles`, which says how they are chosen); `source` is
    anything `load_template` reads."""
    return template_roles(_load_warning(source), content=content, reasoning=reasoning, tool_calls=tool_calls)


__all__ = [
    "Diagnostic",
    "Event",
    "Message",
    "ResponseParser",
    "TemplateSource",
    "TemplateText",
    "compile_shared_runtime",
    "compile_template",
    "load_template",
    "openai_roles",
    "parse_response",
]
