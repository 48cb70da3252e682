"""The public entry points: load a template, parse with the interpreter, compile to a module."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from rtcompile.codegen import generate
from rtcompile.errors import TemplateError
from rtcompile.interpreter import Event, Message, ResponseParser
from rtcompile.ir import Template
from rtcompile.loader import build_template
from rtcompile.runtime.protocol import batch_prefixes
from rtcompile.source import SourceDocument, read_template_source

TemplateSource: TypeAlias = "Template | Mapping[str, Any] | str | os.PathLike[str]"


def load_template(source: TemplateSource) -> Template:
    """Read and validate a response template.

    `source` is a `tokenizer_config.json` (its `"response_template"` key), a bare template JSON
    file, a model directory containing `tokenizer_config.json`, or a template dict. Raises
    `TemplateError` (a ValueError) naming the file, line:col and JSON path of what is wrong.
    """
    if isinstance(source, Template):
        return source
    spec, document = read_template_source(source)
    try:
        return build_template(spec)
    except TemplateError as error:
        raise locate(error, document) from None


def locate(error: TemplateError, document: SourceDocument | None) -> TemplateError:
    """`error` with the file and line:col of the value at its JSON path, where the document knows them."""
    if document is None:
        return error
    line, col = document.locate_nearest(error.path) or (None, None)
    return type(error)(error.message, error.path, file=document.file, line=line, col=col)


def compile_template(source: TemplateSource, *, source_name: str | None = None) -> str:
    """Compile a response template into the source of a standalone Python module.

    `source_name` is what the module's header says it was generated from (default: the file
    path as given, or "<dict>"). Raises `TemplateError` for invalid templates and for regexes
    that the standard library cannot reproduce exactly.
    """
    if isinstance(source, Template):
        template, document = source, None
    else:
        spec, document = read_template_source(source)
        try:
            template = build_template(spec)
        except TemplateError as error:
            raise locate(error, document) from None
    if source_name is None:
        source_name = document.file if document is not None and document.file else "<dict>"
    try:
        return generate(template, source_name=source_name)
    except TemplateError as error:
        raise locate(error, document) from None


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
    ir = load_template(template)
    if isinstance(text, str):
        return _parse_one(text, ir, prefix, tools)
    texts = list(text)
    prefixes = batch_prefixes(len(texts), prefix)
    return [_parse_one(t, ir, p, tools) for t, p in zip(texts, prefixes)]


def _parse_one(text: str, template: Template, prefix: str | None, tools: Iterable[Any] | None) -> Message:
    parser = ResponseParser(template, prefix, tools=tools)
    parser.feed(text)
    message, _ = parser.finalize()
    return message


__all__ = ["Event", "Message", "ResponseParser", "compile_template", "load_template", "parse_response"]
