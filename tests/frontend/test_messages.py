"""Error messages quote template text safely, and say what was probably meant.

Template text (field names, keys, literals) and file names reach error messages. Printed raw, a
`\\r` or an escape sequence would let a template overwrite its own error on the terminal, and a line
or paragraph separator would break the one-line error that editors and CI logs parse.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from transformers.utils.chat_parsing import ResponseParser as Reference

import rtcompile
from rtcompile.errors import Diagnostic, TemplateError, printable, render_message
from tests.support.paths import ROOT

HOSTILE_NAMES = [
    "x\rrtcompile: ok, wrote parser.py\x1b[K",  # returns to the line start and erases the real error
    "a\u2028b",  # LINE SEPARATOR: a line break to str.splitlines and to many log viewers
    "a\x85b",  # NEXT LINE (C1)
    "a\x0cb",  # form feed
    "a\u202eb",  # RIGHT-TO-LEFT OVERRIDE: reorders what follows on screen
    "a\x00b\tc\x7f",
]


def compile_from_cli(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rtcompile", str(path), "-o", "-"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "PyTorch was not found" not in line]


@pytest.mark.slow  # rtcompile in subprocesses
@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_field_name_cannot_break_or_forge_the_error_line(tmp_path: Path, name: str) -> None:
    path = tmp_path / "t.json"
    template = {"start_anchor": "a", "fields": {name: {"content": "yaml"}}}
    path.write_text(json.dumps({"response_template": template}), encoding="utf-8")
    result = compile_from_cli(path)
    assert result.returncode == 2
    (line,) = error_lines(result.stderr)  # str.splitlines splits on \r, \x0c, \x85 and \u2028 too
    assert line.isprintable() and line.startswith(f"{path}:1:") and ": error[load-error]: " in line
    assert f"Field {name!r}: unknown content parser 'yaml'" in line  # quoted as a Python literal


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_every_rendered_diagnostic_is_one_printable_line(name: str) -> None:
    """Whatever a message says, its rendering escapes what a terminal would act on."""
    for rendered in (
        str(TemplateError(f"bad {name}", ("fields", name), file=f"{name}.json", line=1, col=2)),
        str(Diagnostic("warning", f"odd {name}", ("fields", name, 0), file=name)),
        Diagnostic("warning", f"odd {name}", ("fields", name, 0), file=name, code="shadowed-open").render(),
        render_message(name),
    ):
        assert rendered.isprintable(), rendered
        assert len(rendered.splitlines()) == 1


def test_printable_escapes_only_what_it_must() -> None:
    assert printable(r"regex \w+ 'quoted' <｜tool▁sep｜> café") == r"regex \w+ 'quoted' <｜tool▁sep｜> café"
    assert printable("a\rb\x1b[Kc\u2028d") == r"a\rb\x1b[Kc\u2028d"


def test_a_missing_file_with_escapes_in_its_name(tmp_path: Path) -> None:
    path = tmp_path / "t\x1b[2J.json"
    result = compile_from_cli(path)
    (line,) = error_lines(result.stderr)
    assert result.returncode == 2 and "\x1b" not in line and "t\\x1b[2J.json: error[load-error]: no such file" in line


def load_error(template: dict[str, Any]) -> TemplateError:
    with pytest.raises(TemplateError) as info:
        rtcompile.load_template(template)
    with pytest.raises(ValueError):  # the reference rejects it too, with the same exception type
        Reference(template, prefix="")
    assert type(info.value) is TemplateError
    return info.value


@pytest.mark.parametrize(
    ("field", "message"),
    [
        (
            {"clsoe": "</b>"},
            "Field 'x': unknown key 'clsoe' (did you mean 'close'?); allowed keys: close, close_pattern, content, "
            "content_args, join, open, open_pattern, optional, repeats, transform, transform_each",
        ),
        ({"repeat": True}, "Field 'x': unknown key 'repeat' (did you mean 'repeats'?); allowed keys: close, "),
        ({"start_anchor": "a"}, "Field 'x': unknown key 'start_anchor' (it belongs at the top level, next to fields)"),
        ({"zzz": 1, "opne": "<"}, "Field 'x': unknown keys 'opne' (did you mean 'open'?), 'zzz'; allowed keys: "),
    ],
)
def test_unknown_field_keys_get_a_suggestion_and_the_allowed_keys(field: dict[str, Any], message: str) -> None:
    error = load_error({"start_anchor": "a", "fields": {"x": field}})
    assert error.message.startswith(message), error.message
    assert error.path == ("fields", "x", min(field))


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("start_ancor", "response_template: unknown key 'start_ancor' (did you mean 'start_anchor'?); allowed keys: "),
        ("repeats", "response_template: unknown key 'repeats' (it belongs inside a field); allowed keys: "),
        ("repeat", "response_template: unknown key 'repeat' (did you mean 'repeats'? It belongs inside a field)"),
    ],
)
def test_unknown_top_level_keys_get_a_suggestion(key: str, message: str) -> None:
    error = load_error({"start_anchor": "a", "fields": {"x": {}}, key: 1})
    assert error.message.startswith(message), error.message
    assert error.message.endswith("allowed keys: defaults, fields, start_anchor, start_anchor_pattern, version")
    assert error.path == (key,)


def test_unknown_content_parser_gets_a_suggestion() -> None:
    error = load_error({"start_anchor": "a", "fields": {"x": {"content": "jsno"}}})
    assert error.message.startswith("Field 'x': unknown content parser 'jsno' (did you mean 'json'?). Available: ")


@pytest.mark.parametrize("outer", [{"chat_template": "{{ messages }}"}, {}])
def test_a_tokenizer_config_passed_as_the_template_says_which_value_to_pass(outer: dict[str, Any]) -> None:
    inner = {"start_anchor": "a", "fields": {"x": {}}}
    error = load_error({**outer, "response_template": inner})
    assert error.path == ("response_template",)
    assert "pass its 'response_template' value, or the file's path" in error.message
    # A key of that name holding anything else is an unknown key like any other.
    other = load_error({**inner, "response_template": "x"})
    assert other.message.startswith("response_template: unknown key 'response_template'; allowed keys: ")
