"""`--no-grammar` / `compile_template(..., grammar=False)`: a module without `grammar()`.

It parses exactly as the default module does, has neither `grammar`, `GrammarError` nor the `GRAMMAR`
skeleton, records the option (`GRAMMAR_FUNCTION = False`), carries nothing it does not run, and is
fresh for `--check` only given the option.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import rtcompile
from tests.support.cli import run_here
from tests.support.compiled import import_file
from tests.support.reachability import unreached

GRAMMAR_NAMES = ["GRAMMAR", "GrammarError", "grammar"]
OUTPUT = '<think>\nhm\n</think>\n\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>'


def test_a_module_without_grammar_parses_as_the_default_one(tmp_path: Path) -> None:
    default_code = rtcompile.compile_template("qwen3")
    code = rtcompile.compile_template("qwen3", grammar=False)
    (tmp_path / "without.py").write_text(code, encoding="utf-8")
    (tmp_path / "default.py").write_text(default_code, encoding="utf-8")
    without = import_file(tmp_path / "without.py", "rtcompile_test_no_grammar")
    default = import_file(tmp_path / "default.py", "rtcompile_test_with_grammar")
    assert without.GRAMMAR_FUNCTION is False and default.GRAMMAR_FUNCTION is True
    assert [name for name in GRAMMAR_NAMES if hasattr(without, name)] == []
    assert [name for name in GRAMMAR_NAMES if not hasattr(default, name)] == []
    assert without.__all__ == [n for n in default.__all__ if n not in GRAMMAR_NAMES]
    assert without.parse_response(OUTPUT, prefix="") == default.parse_response(OUTPUT, prefix="")
    parser, reference = without.ResponseParser(prefix=""), default.ResponseParser(prefix="")
    assert [parser.feed(c) for c in OUTPUT] == [reference.feed(c) for c in OUTPUT]
    assert parser.finalize() == reference.finalize()
    assert unreached(code) == []
    assert without.__doc__ is not None and "--no-grammar" in without.__doc__
    assert code.count("\n") < default_code.count("\n") - 1000  # the grammar builder is most of 1,900 lines


def test_check_honours_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    without = tmp_path / "without" / "qwen3_parser.py"
    default = tmp_path / "default" / "qwen3_parser.py"
    for out, options in ((without, ["--no-grammar"]), (default, [])):
        out.parent.mkdir()
        assert run_here(capsys, "qwen3", "-o", str(out), *options).returncode == 0
    assert run_here(capsys, "qwen3", "-o", str(without), "--check", "--no-grammar").returncode == 0
    stale = run_here(capsys, "qwen3", "-o", str(without), "--check")
    assert stale.returncode == 1
    assert stale.stderr.splitlines() == [
        f"{without}: stale (regenerate from qwen3; it was compiled with --no-grammar: give --check that option too)"
    ]
    other_way = run_here(capsys, "qwen3", "-o", str(default), "--check", "--no-grammar")
    assert other_way.returncode == 1
    assert other_way.stderr.splitlines() == [
        f"{default}: stale (regenerate from qwen3; it was compiled without --no-grammar)"
    ]
