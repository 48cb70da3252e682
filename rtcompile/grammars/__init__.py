"""Grammars for constrained decoding, compiled from a response template (see `grammar`).

The template's fixed structure becomes a skeleton once (`rtcompile.grammars.skeleton`, checked against
the parser with `rtcompile.grammars.automata`); a request's tools and options are added by
`rtcompile.runtime.grammar`, the code every generated module carries as its `grammar()`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rtcompile.grammars.skeleton import grammar_skeleton
from rtcompile.ir import Template
from rtcompile.runtime.grammar import FORMATS, GrammarError, parser_grammar

__all__ = ["FORMATS", "GrammarError", "grammar", "grammar_skeleton"]


def grammar(
    template: Any,
    tools: Iterable[Any],
    *,
    prefix: str,
    tool_choice: Any = "auto",
    parallel_tool_calls: bool = True,
    format: str = "lark",
) -> str:
    """The grammar of `template`'s output for `tools`: llguidance Lark (`format="lark"`, argument
    schemas as `%json`), llama.cpp GBNF (`"gbnf"`) or an xgrammar structural tag (`"structural-tag"`,
    JSON). Every text it admits parses, with the template's parser, into a message whose tool calls
    name tools of `tools` with arguments valid for their schemas; `tool_choice` ("auto", "required",
    "none", a tool's name or `{"function": {"name": ...}}`) and `parallel_tool_calls` hold in it.

    `prefix` is the prompt (as for parsing: the grammar starts where the prompt left the parser, e.g.
    inside reasoning it opened). `template` is what `rtcompile.load_template` takes; `tools` are JSON
    schemas or Python functions. A template construct with no grammar form raises a located
    `TemplateError`; tools, options or a prompt the grammar cannot follow raise `GrammarError`
    (both ValueErrors)."""
    import warnings

    from rtcompile.api import ResponseParser, _read, locate
    from rtcompile.grammars.skeleton import refusal_error

    document = None
    if not isinstance(template, Template):
        template, document = _read(template)
    skeleton = grammar_skeleton(template)
    error = refusal_error(skeleton)
    if error is not None:
        raise locate(error, document)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a prompt without the start anchor is parsed whole, as in parsing
        parser = ResponseParser(template, prefix)
    return parser_grammar(
        parser,
        skeleton,
        tools,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
        format=format,
    )
