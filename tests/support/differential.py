"""Engines for the differential tests: transformers 5.24.0 (the oracle) and our interpreter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import transformers.utils.chat_parsing as reference

import rtcompile
from rtcompile.tooling.observe import Make, Raised, normalise, observe

__all__ = ["Raised", "interpreter_engine", "observe", "one_shot", "reference_engine", "two_way_splits"]


def reference_engine(template: dict[str, Any]) -> Make:
    return lambda prefix, tools: reference.ResponseParser(template, prefix=prefix, tools=tools)


def interpreter_engine(template: dict[str, Any]) -> Make:
    return lambda prefix, tools: rtcompile.ResponseParser(template, prefix, tools=tools)


def one_shot(parse: Callable[..., Any], text: str, template: Any, prefix: str, tools: Any = None) -> Any:
    try:
        return normalise(parse(text, template, prefix=prefix, tools=tools))
    except Exception as exc:  # noqa: BLE001
        return Raised.of("parse", exc)


def two_way_splits(text: str) -> list[list[str]]:
    return [[text[:i], text[i:]] for i in range(len(text) + 1)]
