"""`--no-openai` / `compile_template(..., openai=False)`: a module without the OpenAI-compatible adapter.

It parses exactly as the default module does, has none of the adapter's names, records the option
(`OPENAI = False`), carries nothing it does not run, and is fresh for `--check` only given the option.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import rtcompile
from tests.support.cli import run_here
from tests.support.compiled import import_file
from tests.support.reachability import unreached

ADAPTER = ["OPENAI_ROLES", "ChatCompletionChunks", "DeltaStream", "call_id_factory", "to_openai"]
OUTPUT = '<think>\nhm\n</think>\n\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>'


def test_a_module_without_the_adapter_parses_as_the_default_one(tmp_path: Path) -> None:
    default_code = rtcompile.compile_template("qwen3")
    code = rtcompile.compile_template("qwen3", openai=False)
    (tmp_path / "without.py").write_text(code, encoding="utf-8")
    (tmp_path / "default.py").write_text(default_code, encoding="utf-8")
    without = import_file(tmp_path / "without.py", "rtcompile_test_no_openai")
    default = import_file(tmp_path / "default.py", "rtcompile_test_with_openai")
    assert without.OPENAI is False and default.OPENAI is True
    assert [name for name in ADAPTER if hasattr(without, name)] == []
    assert without.__all__ == [n for n in default.__all__ if n not in ADAPTER]
    assert without.parse_response(OUTPUT, prefix="") == default.parse_response(OUTPUT, prefix="")
    parser, reference = without.ResponseParser(prefix=""), default.ResponseParser(prefix="")
    assert [parser.feed(c) for c in OUTPUT] == [reference.feed(c) for c in OUTPUT]
    assert parser.finalize() == reference.finalize()
    assert unreached(code) == []
    assert without.__doc__ is not None and "--no-openai" in without.__doc__
    assert code.count("\n") < default_code.count("\n") - 500  # the adapter is most of 700 lines


def test_the_module_passes_ruff_with_its_defaults() -> None:
    code = rtcompile.compile_template("qwen3", openai=False, function_tools=False)
    for command in (["check", "--isolated", "-"], ["format", "--isolated", "--check", "-"]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--stdin-filename", "m.py"],
            input=code,
            text=True,
            capture_output=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_check_honours_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    without = tmp_path / "without" / "qwen3_parser.py"
    default = tmp_path / "default" / "qwen3_parser.py"
    for out, options in ((without, ["--no-openai"]), (default, [])):
        out.parent.mkdir()
        assert run_here(capsys, "qwen3", "-o", str(out), *options).returncode == 0
    assert run_here(capsys, "qwen3", "-o", str(without), "--check", "--no-openai").returncode == 0
    stale = run_here(capsys, "qwen3", "-o", str(without), "--check")
    assert stale.returncode == 1
    assert stale.stderr.splitlines() == [
        f"{without}: stale (regenerate from qwen3; it was compiled with --no-openai: give --check that option too)"
    ]
    other_way = run_here(capsys, "qwen3", "-o", str(default), "--check", "--no-openai")
    assert other_way.returncode == 1
    assert other_way.stderr.splitlines() == [
        f"{default}: stale (regenerate from qwen3; it was compiled without --no-openai)"
    ]
