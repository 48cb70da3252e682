"""Engines for the differential tests: transformers 5.24.0 (the oracle) and our interpreter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import transformers.utils.chat_parsing as reference

import rtcompile
from rtcompile.frontend.loader import build_template
from rtcompile.ir import Template
from rtcompile.tooling.observe import Make, Raised, normalise, observe
from tests.support.compiled import template_key

__all__ = ["Raised", "interpreter_engine", "observe", "one_shot", "reference_engine", "two_way_splits"]


def reference_engine(template: dict[str, Any]) -> Make:
    return lambda prefix, tools: reference.ResponseParser(template, prefix=prefix, tools=tools)


def interpreter_engine(template: dict[str, Any]) -> Make:
    """The interpreter's parser for `template`, built from one loaded template per session (a dict would be
    loaded and planned again for every parser: 150 ms for a template with a 10 KB delimiter). A template
    that does not load raises when a parser is made, as `ResponseParser(template_dict)` does."""

    def make(prefix: str, tools: Any) -> Any:
        return rtcompile.ResponseParser(loaded_template(template), prefix, tools=tools)

    return make


_LOADED: dict[str, Template] = {}


def loaded_template(template: dict[str, Any]) -> Template:
    """`template` as the interpreter loads a dict (no warnings), once per session."""
    key = template_key(template)
    if key not in _LOADED:
        _LOADED[key] = build_template(template)
    return _LOADED[key]


def one_shot(parse: Callable[..., Any], text: str, template: Any, prefix: str, tools: Any = None) -> Any:
    try:
        return normalise(parse(text, template, prefix=prefix, tools=tools))
    except Exception as exc:  # noqa: BLE001
        return Raised.of("parse", exc)


def two_way_splits(text: str) -> list[list[str]]:
    return [[text[:i], text[i:]] for i in range(len(text) + 1)]
