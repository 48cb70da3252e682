"""`rtcompile grammar`: a template's grammar for a tool list, as the serving stacks take it."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from rtcompile.runtime.grammar import GrammarError


class GrammarInputError(ValueError):
    """A tools or prompt file that cannot be read: one line naming the file (and line:col)."""


def read_tools(path: str) -> list[Any]:
    """The tools in a JSON file: a list of tools, or an object whose "tools" is one (a request body)."""
    text = _read(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise GrammarInputError(f"{path}:{error.lineno}:{error.colno}: not JSON: {error.msg}") from None
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    if not isinstance(data, list):
        raise GrammarInputError(f'{path}: expected a list of tools (or an object with a "tools" list)')
    return data


def read_prompt(path: str | None) -> str:
    return "" if path is None else _read(path)


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise GrammarInputError(f"{path}: {reason}") from None


def grammar_text(
    template: str, tools_path: str, *, tool_choice: str, parallel: bool, format: str, prefix_path: str | None
) -> str:
    """The grammar `rtcompile grammar` prints. Raises TemplateError (located), GrammarError, or
    GrammarInputError, each one line."""
    from rtcompile.grammars import grammar

    tools = read_tools(tools_path)
    prefix = read_prompt(prefix_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # template warnings are `rtcompile lint`'s business
        try:
            return grammar(
                template, tools, prefix=prefix, tool_choice=tool_choice, parallel_tool_calls=parallel, format=format
            )
        except GrammarError as error:
            if str(error).startswith("tools"):  # a tool's schema: name the file it came from
                raise GrammarError(f"{tools_path}: {error}") from None
            raise
