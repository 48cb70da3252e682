"""One way to load a template: every public entry point that takes a template source applies the
reference's load rules and reports the template's warnings the same way (`rtcompile.api`'s docstring).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import rtcompile

# Loads, parses, and warns twice: an unknown content_args key, and a lookaround in a pattern.
WARNING = {
    "start_anchor": "<a>",
    "fields": {
        "tool_calls": {"open_pattern": "<t(?=\\{)", "close": "</t>", "content": "json", "content_args": {"strict": 1}},
        "content": {},
    },
}
EXPECTED = [
    "fields.tool_calls.content_args.strict: 'json' ignores content_args key 'strict' (did you mean 'strip'?)",
    "fields.tool_calls.open_pattern: pattern uses a lookaround, which the spec asks templates to avoid (not portable)",
]

ENTRY_POINTS: dict[str, Callable[[Any], object]] = {
    "load_template": rtcompile.load_template,
    "parse_response": lambda source: rtcompile.parse_response('<t{"a": 1}</t>', source, prefix=""),
    "ResponseParser": lambda source: rtcompile.ResponseParser(source, ""),
    "openai_roles": rtcompile.openai_roles,
    "compile_template": rtcompile.compile_template,
}


def warned(call: Callable[[], object]) -> list[tuple[str, str, int]]:
    """The TemplateWarnings `call` issues: (message, file, line) each."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [(str(w.message), w.filename, w.lineno) for w in caught if issubclass(w.category, rtcompile.TemplateWarning)]


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_every_entry_point_warns_about_a_dict_once_per_problem_where_it_was_called(entry: str) -> None:
    found = warned(lambda: ENTRY_POINTS[entry](WARNING))
    assert [message for message, _, _ in found] == EXPECTED
    assert {file for _, file, _ in found} == {__file__}  # the caller's line, not one inside rtcompile


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_every_entry_point_locates_the_warnings_of_a_file(entry: str, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"response_template": WARNING}, indent=2), encoding="utf-8")
    found = warned(lambda: ENTRY_POINTS[entry](path))
    # located as `check_template` locates them (tested with the diagnostics): file:line:col, then the message
    located = [str(diagnostic) for diagnostic in rtcompile.check_template(path)]
    assert [message for message, _, _ in found] == located
    assert [
        message.startswith(f"{path}:") and message.endswith(expected)
        for message, expected in zip(located, EXPECTED, strict=True)
    ] == [True, True]


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_a_loaded_template_does_not_warn_again(entry: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        template = rtcompile.load_template(WARNING)
    assert warned(lambda: ENTRY_POINTS[entry](template)) == []


def test_the_diagnostic_entry_points_return_the_warnings_instead() -> None:
    assert warned(lambda: rtcompile.check_template(WARNING)) == []
    assert [str(d) for d in rtcompile.check_template(WARNING)] == EXPECTED
    compiled: list[rtcompile.CompiledModule] = []
    assert warned(lambda: compiled.append(rtcompile.compile_module(WARNING))) == []
    assert [str(d) for d in compiled[0].template_warnings] == EXPECTED


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_every_entry_point_applies_the_load_rules(entry: str) -> None:
    """A field name the reference rejects at load time, whichever entry point is given the template."""
    invalid = {"start_anchor": "<a>", "fields": {"x": {"open": "<x>", "join": ","}}}
    with pytest.raises(rtcompile.TemplateError, match=r"^fields\.x\.join: Field 'x': 'join' requires 'repeats': true$"):
        ENTRY_POINTS[entry](invalid)
