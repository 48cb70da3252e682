"""Grammars for constrained decoding, compiled from a response template (see `grammar`)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

from rtcompile.frontend.errors import TemplateError
from rtcompile.ir import Template
from rtcompile.runtime.engine import StreamingParser
from rtcompile.runtime.grammar import GrammarError, build_grammar

__all__ = ["GrammarError", "grammar", "grammar_start", "skeleton_of"]

_SKELETONS: dict[int, tuple[Template, dict[str, Any]]] = {}


def skeleton_of(template: Template) -> dict[str, Any]:
    """The template's grammar skeleton (built once per template object)."""
    from rtcompile.grammar.skeleton import build_skeleton

    cached = _SKELETONS.get(id(template))
    if cached is None or cached[0] is not template:
        cached = _SKELETONS[id(template)] = (template, build_skeleton(template))
    return cached[1]


def grammar_start(parser: StreamingParser, prefix: str) -> tuple[int, bool]:
    """Where the grammar starts after `prefix`: the parser state, and whether the message is empty.
    A prompt that ends with text a delimiter may still claim has no grammar."""
    if parser._pos != len(parser._buffer):
        raise GrammarError(
            f"the prompt ends in what may be the start of a delimiter: {parser._buffer[parser._pos :]!r}"
        )
    after = parser._after_anchor(prefix)
    return parser._state, not (prefix if after is None else after)


def grammar(
    template: Any,
    tools: Iterable[Any],
    *,
    tool_choice: Any = "auto",
    parallel_tool_calls: bool = True,
    prefix: str = "",
    format: str = "lark",
) -> str:
    """The grammar of `template`'s output for `tools` (Lark for llguidance, or GBNF).

    A template construct with no grammar form raises a located `TemplateError`; tools, options or a
    prompt the grammar cannot follow raise `GrammarError` (a ValueError)."""
    from rtcompile.api import _load, locate
    from rtcompile.backends.interpreter import ResponseParser
    from rtcompile.grammar.skeleton import refusal_error

    document = None
    if not isinstance(template, Template):
        template, document = _load(template)
    skeleton = skeleton_of(template)
    error = refusal_error(skeleton)
    if error is not None:
        raise locate(error, document)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parser = ResponseParser(template, prefix)
    return build_grammar(
        skeleton,
        tools,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
        start=grammar_start(parser, prefix),
        format=format,
    )


# TemplateError is raised by `grammar` for refused templates
_ = TemplateError
