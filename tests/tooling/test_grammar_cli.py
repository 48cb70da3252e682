"""`rtcompile grammar`: the grammar on stdout, bad input as one line on stderr with exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rtcompile.tooling.cli import main
from tests.support.cli import run_here
from tests.support.grammar_walks import TOOL_SETS, accepts
from tests.support.paths import TEMPLATES


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": TOOL_SETS["weather"]}), encoding="utf-8")  # a request body
    return path


def test_prints_the_grammar_the_api_builds(
    capsys: pytest.CaptureFixture[str], tools_file: Path, tmp_path: Path
) -> None:
    import rtcompile

    prompt = tmp_path / "prompt.txt"
    prompt.write_text("<|im_start|>assistant\n<think>", encoding="utf-8")
    result = run_here(
        capsys,
        "grammar", "qwen3", "--tools", str(tools_file), "--tool-choice", "get_time", "--no-parallel",
        "--format", "gbnf", "--prefix-file", str(prompt),
    )  # fmt: skip
    assert (result.returncode, result.stderr) == (0, "")
    expected = rtcompile.grammar(
        TEMPLATES / "qwen3.json",
        TOOL_SETS["weather"],
        prefix="<|im_start|>assistant\n<think>",
        tool_choice="get_time",
        parallel_tool_calls=False,
        format="gbnf",
    )
    assert result.stdout == expected  # GBNF ends with a line break already: the command adds none
    # the prompt opened reasoning: the grammar starts inside it, and the named tool is required
    call = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    assert accepts(result.stdout, "hmm</think>" + call, "gbnf")
    assert not accepts(result.stdout, "hmm</think>" + call + call, "gbnf")  # --no-parallel
    assert not accepts(result.stdout, "hmm</think>" + call.replace("get_time", "get_weather"), "gbnf")
    assert not accepts(result.stdout, "hmm</think>no call", "gbnf")


def test_help_names_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_here(capsys, "help", "grammar")
    assert result.returncode == 0
    for option in ("--tools", "--tool-choice", "--no-parallel", "--format", "--prefix-file", "structural-tag"):
        assert option in result.stdout
    assert "%%" not in result.stdout


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    result = run_here(capsys, "grammar", *argv)
    lines = result.stderr.splitlines()
    assert (result.returncode, result.stdout, len(lines)) == (2, "", 1), result.stderr
    return lines[0]


def test_bad_input_is_one_line_with_exit_status_2(
    capsys: pytest.CaptureFixture[str], tools_file: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"type": ', encoding="utf-8")
    scalar = tmp_path / "scalar.json"
    scalar.write_text("3", encoding="utf-8")
    pattern = tmp_path / "pattern.json"
    properties = {"x": {"type": "string", "pattern": "a+"}}
    pattern.write_text(json.dumps([{"name": "a", "parameters": {"type": "object", "properties": properties}}]))
    prefix = "rtcompile grammar: error: "
    assert _error(capsys, "qwen3", "--tools", str(bad)) == f"{prefix}{bad}:1:11: not JSON: Expecting value"
    assert _error(capsys, "qwen3", "--tools", str(scalar)) == (
        f'{prefix}{scalar}: expected a list of tools (or an object with a "tools" list)'
    )
    assert _error(capsys, "qwen3", "--tools", str(tmp_path / "none.json")) == (
        f"{prefix}{tmp_path / 'none.json'}: No such file or directory"
    )
    assert _error(capsys, "qwen3", "--tools", str(pattern)) == (
        f"{prefix}{pattern}: tools.a.parameters.x: the schema keyword 'pattern' has no grammar form"
    )
    assert _error(capsys, "qwen3", "--tools", str(tools_file), "--tool-choice", "nosuch") == (
        f"{prefix}tool_choice 'nosuch' is not auto, required, none or a declared tool"
    )
    assert _error(capsys, "qwen3", "--tools", str(tools_file), "--prefix-file", str(tmp_path / "p.txt")) == (
        f"{prefix}{tmp_path / 'p.txt'}: No such file or directory"
    )
    # argparse's own usage error, as for every command
    assert main(["grammar", "qwen3", "--tools", str(tools_file), "--format", "xml"]) == 2
    assert capsys.readouterr().err.startswith(f"{prefix}argument --format: invalid choice: 'xml'")


def test_a_template_construct_without_grammar_is_located(capsys: pytest.CaptureFixture[str], tools_file: Path) -> None:
    line = _error(capsys, "mimo", "--tools", str(tools_file))
    assert line == (
        f"rtcompile grammar: error: {TEMPLATES / 'mimo.json'}:15:26: "
        "fields.tool_calls.close_pattern: lookbehind has no grammar form"
    )
