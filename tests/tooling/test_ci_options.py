"""The command line in CI: `--check --diff`, `-q`, `--disable`, one diagnostic format for compile and lint
(`file:line:col: severity[code]: path: message`) and its JSON form, errors located at the character of a
pattern, chat-template errors as input errors, verify's note when transformers is missing, lint's
progress. Each through `python -m rtcompile` in a subprocess, as CI runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rtcompile.tooling.codes import CODES
from tests.support.cli import errors_in, run
from tests.support.paths import ROOT, TEMPLATES

SMOLLM3 = TEMPLATES / "smollm3.json"
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# Loads, with one load-time warning (two overlapping repeats in a row) and no implicit field (lint warns).
WARNS: dict[str, Any] = {
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {"tool_calls": {"open_pattern": "<tool_call>\\s*\\s*\\{", "close": "}</tool_call>", "content": "json"}},
}


def write(path: Path, template: dict[str, Any], **extra: Any) -> Path:
    path.write_text(json.dumps({"response_template": template, **extra}, indent=2), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- --check --diff


@pytest.mark.slow  # rtcompile in subprocesses
def test_check_with_diff_prints_the_diff_and_fails(tmp_path: Path) -> None:
    out = tmp_path / "smollm3_parser.py"
    assert run(str(SMOLLM3), "-o", str(out)).returncode == 0
    fresh = out.read_text(encoding="utf-8")
    assert (run(str(SMOLLM3), "-o", str(out), "--check", "--diff").returncode, fresh) == (0, fresh)
    out.write_text(fresh.replace("RTCOMPILE_VERSION", "EDITED_VERSION", 1), encoding="utf-8")
    checked = run(str(SMOLLM3), "-o", str(out), "--check", "--diff")
    assert checked.returncode == 1
    assert checked.stdout.startswith(f"--- {out} (current)\n+++ {out} (from {SMOLLM3})\n")
    assert "\n-EDITED_VERSION" in checked.stdout and "\n+RTCOMPILE_VERSION" in checked.stdout
    shown = run(str(SMOLLM3), "-o", str(out), "--diff")  # --diff alone shows, and does not fail
    assert (shown.returncode, shown.stdout) == (0, checked.stdout)
    assert "EDITED_VERSION" in out.read_text(encoding="utf-8")  # neither wrote anything


# --------------------------------------------------------------------------- -q and --disable


@pytest.mark.slow  # rtcompile in subprocesses
def test_quiet_and_disable_silence_warnings(tmp_path: Path) -> None:
    path = write(tmp_path / "warns.json", WARNS)
    out = str(tmp_path / "warns_parser.py")
    (warning,) = errors_in(run(str(path), "-o", out).stderr)
    assert warning.startswith(f"{path}:6:25: warning[polynomial-backtracking]: fields.tool_calls.open_pattern: ")
    assert errors_in(run(str(path), "-o", out, "-q").stderr) == []
    for disable in ("polynomial-backtracking", "warns:polynomial-backtracking", "warns.json:polynomial-backtracking"):
        result = run(str(path), "-o", out, "--disable", disable)
        assert (result.returncode, errors_in(result.stderr)) == (0, []), disable
    other = run(str(path), "-o", out, "--disable", "qwen3:polynomial-backtracking")  # another template's
    assert errors_in(other.stderr) == [warning]


@pytest.mark.slow  # rtcompile in subprocesses
def test_disable_names_only_codes_that_exist_and_never_an_error(tmp_path: Path) -> None:
    unknown = run(str(SMOLLM3), "-o", str(tmp_path / "x.py"), "--disable", "polynomial-backtrack")
    assert unknown.returncode == 2 and not (tmp_path / "x.py").exists()
    assert errors_in(unknown.stderr) == [
        "rtcompile: error: --disable polynomial-backtrack: no such code 'polynomial-backtrack'; did you mean "
        "'polynomial-backtracking'? (docs/template-language.md lists them)"
    ]
    error = run("lint", str(SMOLLM3), "--disable", "stream-divergence")
    assert error.returncode == 2
    assert "'stream-divergence' is an error, which cannot be silenced" in error.stderr


@pytest.mark.slow  # rtcompile in subprocesses
def test_lint_quiet_prints_only_what_fails(tmp_path: Path) -> None:
    path = write(tmp_path / "warns.json", WARNS, chat_template=CHAT_TEMPLATE)
    loud = run("lint", str(path), "--cases", "20")
    assert loud.returncode == 0
    assert [line.split(": ")[1] for line in loud.stdout.splitlines() if not line.startswith(" ")] == [
        "warning[polynomial-backtracking]",
        "warning[no-implicit-field]",
        "info[generation-prompt]",
        "info[generation-prompt]",
        "info[generation-prompt]",
        "warning[field-not-rendered]",  # the chat template renders content only, not tool calls
    ]
    assert errors_in(loud.stderr) == [f"{path}: 0 error(s), 3 warning(s)"]
    quiet = run("lint", str(path), "--cases", "20", "-q")
    assert (quiet.returncode, quiet.stdout, errors_in(quiet.stderr)) == (0, "", [])
    strict = run("lint", str(path), "--cases", "20", "-q", "--strict", "--disable", "no-implicit-field")
    assert strict.returncode == 1
    assert [line.split(": ")[1] for line in strict.stdout.splitlines()] == [
        "warning[polynomial-backtracking]",
        "warning[field-not-rendered]",
    ]
    silenced = run("lint", str(path), "--cases", "20", "--disable", "no-implicit-field")
    assert errors_in(silenced.stderr) == [f"{path}: 0 error(s), 2 warning(s), 1 silenced"]


@pytest.mark.slow  # rtcompile in subprocesses
def test_verify_quiet_prints_nothing_when_all_agree() -> None:
    result = run("verify", str(SMOLLM3), "--cases", "5", "-q")
    assert (result.returncode, result.stdout, errors_in(result.stderr)) == (0, "", [])


# --------------------------------------------------------------------------- one format, and JSON


@pytest.mark.slow  # rtcompile in subprocesses
def test_compile_and_lint_print_one_format_and_the_same_json(tmp_path: Path) -> None:
    path = write(tmp_path / "warns.json", WARNS)
    compiled = run(str(path), "-o", str(tmp_path / "p.py"), "--output-format", "json")
    assert compiled.returncode == 0
    (warning,) = json.loads(compiled.stderr[compiled.stderr.index("[") :])
    assert warning == {
        "file": str(path),
        "line": 6,
        "col": 25,
        "severity": "warning",
        "code": "polynomial-backtracking",
        "path": "fields.tool_calls.open_pattern",
        "json_path": ["fields", "tool_calls", "open_pattern"],
        "message": "pattern can backtrack polynomially (2 overlapping unbounded repeats in a row, like \\s*\\s*): a "
        "long near-miss costs time growing like n^2 on every scan",
        "example": None,
    }
    linted = json.loads(run("lint", str(path), "--cases", "20", "--output-format", "json").stdout)
    assert linted[0] == warning
    assert [(d["code"], d["path"], d["example"]) for d in linted[1:]] == [
        ("no-implicit-field", "fields", "'plain answer text'")
    ]
    text = run("lint", str(path), "--cases", "20").stdout.splitlines()
    assert text == [
        f"{path}:6:25: warning[polynomial-backtracking]: fields.tool_calls.open_pattern: {warning['message']}",
        f"{path}:4:15: warning[no-implicit-field]: fields: {linted[1]['message']}",
        "    input: 'plain answer text'",
    ]


def test_an_error_in_json_is_the_array_with_the_error(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", {"start_anchor": "a", "fields": {"x": {"join": 1, "repeats": True}}})
    result = run(str(path), "-o", "-", "--output-format", "json")
    assert result.returncode == 2 and result.stdout == ""
    (error,) = json.loads(result.stderr[result.stderr.index("[") :])
    assert (error["severity"], error["code"], error["path"], error["line"]) == (
        "error",
        "load-error",
        "fields.x.join",
        6,
    )


def test_every_code_has_one_severity_and_names_what_it_finds() -> None:
    assert all(code == code.lower() and " " not in code for code in CODES)
    assert CODES["load-error"] == "error" and CODES["generation-prompt"] == "info"


# --------------------------------------------------------------------------- errors at the character


@pytest.mark.slow  # rtcompile in subprocesses
@pytest.mark.parametrize(
    ("written", "at"),
    [
        # The JSON text of the pattern, and where in that text the character `regex` reports is (the '>'
        # closing the bad group name: character 9 of "<a(?P<x-y>b)").
        ('"<a(?P<x-y>b)"', 9),
        ('"\\\\n\\u00e9(?P<x-y>b)"', 16),  # \\n and \u00e9: two characters of the pattern, eight of the text
        ('"\\ud83d\\ude00(?P<x-y>b)"', 19),  # a surrogate pair: one character of the pattern, twelve of the text
        ('"😀(?P<x-y>b)"', 8),  # columns count characters, not bytes
    ],
)
def test_a_regex_error_points_at_its_character(tmp_path: Path, written: str, at: int) -> None:
    path = tmp_path / "t.json"
    before = '"fields": {"x": {"open_pattern": '
    path.write_text('{"response_template": {"start_anchor": "a",\n' + before + written + "}}}}\n", encoding="utf-8")
    (line,) = errors_in(run(str(path), "-o", "-").stderr)
    column = len(before) + 1 + 1 + at  # the opening quote, then the pattern's text
    assert line.startswith(f"{path}:2:{column}: error[load-error]: fields.x.open_pattern: "), line
    assert "bad character in group name" in line


# --------------------------------------------------------------------------- lint --chat-template


@pytest.mark.slow  # rtcompile in subprocesses
def test_a_chat_template_that_cannot_be_read_compiled_or_rendered_is_bad_input(tmp_path: Path) -> None:
    missing = run("lint", str(SMOLLM3), "--chat-template", str(tmp_path / "none.jinja"))
    assert (missing.returncode, errors_in(missing.stderr)) == (
        2,
        [f"{tmp_path / 'none.jinja'}: error[load-error]: no such file"],
    )
    syntax = tmp_path / "syntax.jinja"
    syntax.write_text("{% for m in messages %}\n{{ m.content }\n{% endfor %}\n", encoding="utf-8")
    result = run("lint", str(SMOLLM3), "--chat-template", str(syntax))
    assert (result.returncode, result.stdout) == (2, "")
    assert errors_in(result.stderr) == [f"{syntax}:2: error[load-error]: Jinja syntax error: unexpected '}}'"]
    raises = tmp_path / "raises.jinja"
    raises.write_text("{% if messages %}\n{{ raise_exception('no system turn') }}\n{% endif %}\n", encoding="utf-8")
    result = run("lint", str(SMOLLM3), "--chat-template", str(raises))
    assert result.returncode == 2
    assert errors_in(result.stderr) == [
        f"{raises}:2: error[load-error]: the chat template does not render (no tools): TemplateError: no system turn"
    ]


def test_a_config_chat_template_error_is_located_in_the_config(tmp_path: Path) -> None:
    template = json.loads(SMOLLM3.read_text(encoding="utf-8"))["response_template"]
    config = tmp_path / "tokenizer_config.json"
    config.write_text(
        json.dumps({"chat_template": "{% for m in messages %}\n  {{ m.content }\n{% endfor %}"})[:-1]
        + ', "response_template": '
        + json.dumps(template)
        + "}",
        encoding="utf-8",
    )
    result = run("lint", str(config))
    # line 2 of the Jinja source starts after the \n escape: column 19 (the string) + 23 + 2 + 1
    assert errors_in(result.stderr) == [
        f"{config}:1:45: error[load-error]: chat_template: Jinja syntax error: unexpected '}}'"
    ]
    assert result.returncode == 2


def test_a_chat_template_failing_only_with_tools_is_a_warning(tmp_path: Path) -> None:
    chat_template = tmp_path / "no_tools.jinja"
    chat_template.write_text(
        "{% if tools %}{{ raise_exception('tools are not supported') }}{% endif %}" + CHAT_TEMPLATE, encoding="utf-8"
    )
    result = run("lint", str(SMOLLM3), "--chat-template", str(chat_template), "--cases", "5")
    assert result.returncode == 0
    assert (
        f"{chat_template}:1: warning[chat-template-render]: the chat template does not render (with tools): "
        "TemplateError: tools are not supported"
    ) in result.stdout.splitlines()


# --------------------------------------------------------------------------- verify without the reference


@pytest.mark.slow  # rtcompile in subprocesses
def test_verify_says_when_the_comparison_with_transformers_is_off(tmp_path: Path) -> None:
    hidden = tmp_path / "hide" / "transformers"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('hidden by the test')\n", encoding="utf-8")
    result = run("verify", str(SMOLLM3), "--cases", "3", PYTHONPATH=f"{hidden.parent}{os.pathsep}{ROOT}")
    assert result.returncode == 0
    assert result.stdout.splitlines()[1:] == [
        "note: the comparison with transformers is off: it is not installed, so only the compiled module and the "
        "interpreter were compared; to compare with the reference too: pip install 'transformers==5.24.0'",
        f"all {result.stdout.split(' comparisons ')[0].rsplit(' ', 1)[1]} comparisons agree",
    ]
    assert "(compiled module vs interpreter)" in result.stdout.splitlines()[0]


def test_verify_says_when_transformers_is_another_release(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import transformers

    from rtcompile.tooling.cli import main

    monkeypatch.setattr(transformers, "__version__", "5.0.0")
    assert main(["verify", str(SMOLLM3), "--cases", "3"]) == 0
    assert (
        "note: transformers 5.0.0 is installed, but rtcompile reproduces 5.24.0: a divergence from it may be the "
        "version's; pip install 'transformers==5.24.0' to compare with the reference"
    ) in capsys.readouterr().out.splitlines()


# --------------------------------------------------------------------------- lint progress

# The real command line, with a clock on which each reading is ten seconds after the last.
TEN_SECOND_CLOCK = (
    "import itertools, sys, time\n"
    "ticks = itertools.count(0, 10)\n"
    "time.monotonic = lambda: float(next(ticks))\n"
    "from rtcompile.tooling.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


@pytest.mark.slow  # rtcompile in subprocesses
def test_a_long_lint_shows_its_progress(tmp_path: Path) -> None:
    script = tmp_path / "slow_clock.py"
    script.write_text(TEN_SECOND_CLOCK, encoding="utf-8")

    def lint(*options: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, str(script), "lint", str(SMOLLM3), "--cases", "4", *options]
        return subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})

    result = lint()
    assert result.returncode == 0, result.stderr
    assert errors_in(result.stderr) == [
        "  1/4 cases, 10 s elapsed, about 30 s left",
        "  2/4 cases, 20 s elapsed, about 20 s left",
        "  3/4 cases, 30 s elapsed, about 10 s left",
        f"{SMOLLM3}: 0 error(s), 0 warning(s)",
    ]
    quiet = lint("-q")
    assert (quiet.returncode, errors_in(quiet.stderr)) == (0, [])
