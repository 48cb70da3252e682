"""`--no-function-tools` / `compile_template(..., function_tools=False)`: a module without the code that turns
Python functions into tool schemas. It must still import and parse exactly with JSON-schema tools, refuse a
function with the one documented TypeError, record the option, and be fresh for `--check` given the option.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import rtcompile
from rtcompile.runtime.protocol import refuse_function_tool
from tests.support.cli import errors_in, run, run_here

TOOL_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}\n</tool_call>'
SCHEMA = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
    },
}
# What the module under test runs, under `python -I -S` (standard library only): a JSON-schema tool, then a
# function tool, then the module's record of the option.
PROBE = f"""
import json, sys
sys.path.insert(0, ".")
import qwen3_parser as m

def get_weather(city: str, days: int = 1) -> str:
    '''Get the weather.

    Args:
        city: where
        days: how many days
    '''
    return ""

print(json.dumps(m.parse_response({TOOL_CALL!r}, prefix="", tools=[json.loads({json.dumps(SCHEMA)!r})])))
try:
    print(json.dumps(m.parse_response({TOOL_CALL!r}, prefix="", tools=[get_weather])))
except TypeError as error:
    print("TypeError:", error)
print(m.FUNCTION_TOOLS)
"""
COERCED = {
    "role": "assistant",
    "tool_calls": [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}}
    ],
}


def probe(directory: Path) -> list[str]:
    result = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE], capture_output=True, text=True, cwd=directory)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def get_weather(city: str, days: int = 1) -> str:
    """Get the weather.

    Args:
        city: where
        days: how many days
    """
    return ""


def refusal() -> str:
    try:
        refuse_function_tool(get_weather)
    except TypeError as error:
        return str(error)
    raise AssertionError("refuse_function_tool returned")


@pytest.mark.slow  # rtcompile in subprocesses
def test_without_function_tools_json_schemas_work_and_a_function_raises_the_documented_error(tmp_path: Path) -> None:
    out = tmp_path / "qwen3_parser.py"
    result = run("qwen3", "-o", str(out), "--no-function-tools")
    assert result.returncode == 0 and errors_in(result.stderr) == []
    schema_tools, function_tools, recorded = probe(tmp_path)
    assert json.loads(schema_tools) == COERCED
    assert function_tools == f"TypeError: {refusal()}"
    assert "recompile the parser without --no-function-tools" in function_tools
    assert recorded == "False"
    code = out.read_text(encoding="utf-8")
    assert "def function_to_tool_schema" not in code and "_tool_parse_docstring" not in code
    assert "Compiled with --no-function-tools (see `FUNCTION_TOOLS`)" in code


@pytest.mark.slow  # rtcompile in subprocesses
def test_by_default_a_function_is_converted_as_the_reference_converts_it(tmp_path: Path) -> None:
    out = tmp_path / "qwen3_parser.py"
    assert run("qwen3", "-o", str(out)).returncode == 0
    schema_tools, function_tools, recorded = probe(tmp_path)
    assert json.loads(schema_tools) == json.loads(function_tools) == COERCED
    assert recorded == "True"
    assert "--no-function-tools" not in out.read_text(encoding="utf-8").split('"""')[1]  # not in the docstring


@pytest.mark.slow  # rtcompile in subprocesses
def test_the_api_keyword_gives_the_modules_the_cli_writes(tmp_path: Path) -> None:
    out = tmp_path / "qwen3_parser.py"
    assert run("qwen3", "-o", str(out), "--no-function-tools").returncode == 0
    name = "bundled template qwen3"
    assert out.read_text(encoding="utf-8") == rtcompile.compile_template(
        "qwen3", source_name=name, function_tools=False
    )
    with_functions = rtcompile.compile_template("qwen3", source_name=name)
    assert with_functions == rtcompile.compile_template("qwen3", source_name=name, function_tools=True)
    assert len(with_functions) > len(out.read_text(encoding="utf-8")) + 10_000


def test_check_honours_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    without = tmp_path / "without" / "qwen3_parser.py"
    default = tmp_path / "default" / "qwen3_parser.py"
    for out, options in ((without, ["--no-function-tools"]), (default, [])):
        out.parent.mkdir()
        assert run_here(capsys, "qwen3", "-o", str(out), *options).returncode == 0
    assert run_here(capsys, "qwen3", "-o", str(without), "--check", "--no-function-tools").returncode == 0
    assert run_here(capsys, "qwen3", "-o", str(default), "--check").returncode == 0
    stale = run_here(capsys, "qwen3", "-o", str(without), "--check")
    assert stale.returncode == 1
    assert stale.stderr.splitlines() == [
        f"{without}: stale (regenerate from qwen3; it was compiled with --no-function-tools: give --check that "
        "option too)"
    ]
    other_way = run_here(capsys, "qwen3", "-o", str(default), "--check", "--no-function-tools")
    assert other_way.returncode == 1
    assert other_way.stderr.splitlines() == [
        f"{default}: stale (regenerate from qwen3; it was compiled without --no-function-tools)"
    ]


@pytest.mark.slow  # verifies a module
def test_verify_checks_a_module_compiled_without_function_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "qwen3_parser.py"
    assert run_here(capsys, "qwen3", "-o", str(out), "--no-function-tools").returncode == 0
    result = run_here(capsys, "verify", "qwen3", "--module", str(out), "--cases", "3")
    assert result.returncode == 0, result.stderr
    assert "comparisons agree" in result.stdout
