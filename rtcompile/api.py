"""The public entry points: load a template, parse with the interpreter, compile to a module."""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from rtcompile.backends.interpreter import Event, Message, ResponseParser
from rtcompile.frontend.diagnostics import template_warnings
from rtcompile.frontend.errors import Diagnostic, TemplateError, TemplateWarning
from rtcompile.frontend.loader import build_template
from rtcompile.frontend.source import SourceDocument, TemplateText, read_template_source
from rtcompile.ir import Template
from rtcompile.runtime.engine import parse_texts

TemplateSource: TypeAlias = "Template | Mapping[str, Any] | str | os.PathLike[str] | TemplateText"


def load_template(source: TemplateSource) -> Template:
    """Read and validate a response template.

    `source` is a `tokenizer_config.json` (its `"response_template"` key), a bare template JSON
    file, a model directory containing `tokenizer_config.json`, the name of a bundled template
    (`"qwen3"`; `rtcompile list` shows them; a file of that name wins), a template dict, or
    `TemplateText` (the bytes of a template file, e.g. from standard input). Raises
    `TemplateError` (a ValueError) naming the file, line:col and JSON path of what is wrong.
    """
    if isinstance(source, Template):
        return source
    template, document = _load(source)
    for diagnostic in template_warnings(template):
        warnings.warn(str(_locate_diagnostic(diagnostic, document)), TemplateWarning, stacklevel=2)
    return template


def examine_template(source: TemplateSource) -> tuple[Template | None, SourceDocument | None, list[Diagnostic]]:
    """Load once and return the template (None if it does not load), its document and its diagnostics."""
    try:
        template, document = _load(source) if not isinstance(source, Template) else (source, None)
    except TemplateError as error:
        return None, None, [error.to_diagnostic()]
    return template, document, [_locate_diagnostic(d, document) for d in template_warnings(template)]


def _load(source: str | os.PathLike[str] | Mapping[str, Any] | TemplateText) -> tuple[Template, SourceDocument | None]:
    spec, document = read_template_source(source)
    try:
        return build_template(spec), document
    except TemplateError as error:
        raise locate(error, document) from None


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
    (no exact standard-library translation is known for it); no warnings: the module is stdlib only.
    `template_warnings` are the template's own (what `load_template` warns about), located."""

    code: str
    regex_fallbacks: tuple[Diagnostic, ...]
    template_warnings: tuple[Diagnostic, ...] = ()

    @property
    def requires(self) -> tuple[str, ...]:
        """Third-party modules the generated module imports (its `REQUIRES` constant)."""
        return ("regex",) if self.regex_fallbacks else ()


def compile_template(source: TemplateSource, *, source_name: str | None = None, function_tools: bool = True) -> str:
    """Compile a response template into the source of a standalone Python module.

    `source_name` is what the module's header says it was generated from (default: the file
    path as given, or "<dict>"). Raises `TemplateError` for invalid templates. A pattern with no
    exact standard-library translation makes the module import `regex` (see `compile_module`).
    `function_tools=False` (the CLI's `--no-function-tools`) leaves out the code that turns Python
    functions into tool schemas: the module's `tools` then takes JSON schemas only, and a function
    there raises TypeError (the module's `FUNCTION_TOOLS` is False).
    """
    return compile_module(source, source_name=source_name, function_tools=function_tools).code


def compile_module(
    source: TemplateSource, *, source_name: str | None = None, function_tools: bool = True
) -> CompiledModule:
    """`compile_template`, also telling which patterns need the `regex` module, as located warnings."""
    template, document = (source, None) if isinstance(source, Template) else _load(source)
    if source_name is None:
        source_name = document.file if document is not None and document.file else "<dict>"
    from rtcompile.backends.codegen.generate import (
        generate_module,  # libcst and jinja2 are heavy; parsing users never need them
    )

    try:
        generated = generate_module(template, source_name=source_name, function_tools=function_tools)
    except TemplateError as error:
        raise locate(error, document) from None
    notes = tuple(
        _locate_diagnostic(
            Diagnostic(
                "warning",
                f"{fallback.construct} has no exact standard-library translation ({fallback.reason})"
                + REGEX_FALLBACK_NOTE,
                fallback.where,
                code=REGEX_FALLBACK,
            ),
            document,
        )
        for fallback in generated.fallbacks
    )
    found = tuple(_locate_diagnostic(d, document) for d in template_warnings(template))
    return CompiledModule(generated.code, notes, found)


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
    ir = template if isinstance(template, Template) else _load(template)[0]
    return parse_texts(lambda p: ResponseParser(ir, p, tools=tools), text, prefix)


__all__ = [
    "Diagnostic",
    "Event",
    "Message",
    "ResponseParser",
    "TemplateSource",
    "TemplateText",
    "compile_template",
    "load_template",
    "parse_response",
]
