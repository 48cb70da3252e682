"""The types of a generated module catch misuse: code that reads a key a template does not have, passes a
wrong event to a consumer, or takes a tool call's name for something other than a string fails
`mypy --strict`, with the errors written below (one mypy run over all the files, against two of the
bundled modules in generated/, which test_generated keeps fresh).

Each file marks the lines mypy must reject with `# E: <name>`, the name of the error in `ERRORS`;
every other line must pass.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import rtcompile

ROOT = Path(__file__).resolve().parent.parent
MODULES = ["qwen3_parser", "qwen3_coder_parser"]

FILES = {
    "right_use.py": """
from typing import Any

import qwen3_coder_parser
import qwen3_parser

message = qwen3_parser.parse_response("x", prefix="")
for call in message.get("tool_calls", []):
    name: str = call["function"]["name"]
    arguments: Any = call["function"]["arguments"]
coder = qwen3_coder_parser.parse_response("x", prefix="")
for coded in coder.get("tool_calls", []):
    named: str = coded["function"]["name"]
    keyed: dict[str, Any] = coded["function"]["arguments"]
parser = qwen3_parser.ResponseParser(prefix="", captures=True)
stream = qwen3_parser.DeltaStream(qwen3_parser.OPENAI_ROLES)
for event in parser.feed("x"):
    if event["type"] == "region_chunk":
        text: str = event["text"]
    elif event["type"] == "region_open":
        captured: dict[str, str] = event.get("captures", {})
    if event["field"] == "tool_calls":
        stream.feed([event])
final, events = parser.finalize()
reply = qwen3_parser.to_openai(final)
""",
    "wrong_keys.py": """
import qwen3_coder_parser
import qwen3_parser

message = qwen3_parser.parse_response("x", prefix="")
message["reasoning"]  # E: no_reasoning
call = message["tool_calls"][0]
call["function"]["nmae"]  # E: no_nmae
call["id"]  # E: no_id
count: int = call["function"]["name"]  # E: name_is_str
coded = qwen3_coder_parser.parse_response("x", prefix="")["tool_calls"][0]
listed: list[str] = coded["function"]["arguments"]  # E: arguments_are_a_dict
""",
    "wrong_events.py": """
import qwen3_parser


def show(chunk: qwen3_parser.RegionChunk) -> str:
    return chunk["text"]


parser = qwen3_parser.ResponseParser(prefix="")
for event in parser.feed("x"):
    show(event)  # E: not_a_chunk
    if event["field"] == "answer":  # E: no_such_field
        pass
    if event["type"] == "region_close":
        event["text"]  # E: no_text_at_close
""",
}

# What mypy says about each marked line.
ERRORS = {
    "no_reasoning": 'TypedDict "Message" has no key "reasoning"  [typeddict-item]',
    "no_nmae": 'TypedDict "Shape_tool_calls_function" has no key "nmae"  [typeddict-item]',
    "no_id": 'TypedDict "Shape_tool_calls" has no key "id"  [typeddict-item]',
    "name_is_str": 'Incompatible types in assignment (expression has type "str", variable has type "int")'
    "  [assignment]",
    "arguments_are_a_dict": "Incompatible types in assignment"
    ' (expression has type "dict[str, Any]", variable has type "list[str]")  [assignment]',
    "not_a_chunk": 'Argument 1 to "show" has incompatible type'
    ' "RegionOpen | RegionChunk | RegionClose | RegionMalformed"; expected "RegionChunk"  [arg-type]',
    "no_such_field": "Non-overlapping equality check (left operand type:"
    " \"Literal['reasoning_content', 'tool_calls', 'content']\", right operand type: \"Literal['answer']\")"
    "  [comparison-overlap]",
    "no_text_at_close": 'TypedDict "RegionClose" has no key "text"  [typeddict-item]',
}

MARK = re.compile(r"  # E: (\w+)$")


def expected_errors() -> list[str]:
    expected = []
    for name, source in FILES.items():
        for number, line in enumerate(source.splitlines(), start=1):
            mark = MARK.search(line)
            if mark:
                expected.append(f"{name}:{number}: error: {ERRORS[mark.group(1)]}")
    return sorted(expected)


def test_mypy_rejects_exactly_the_marked_lines(tmp_path: Path) -> None:
    for module in MODULES:
        shutil.copy(ROOT / "generated" / f"{module}.py", tmp_path)
    for name, source in FILES.items():
        (tmp_path / name).write_text(source, encoding="utf-8")
    result = subprocess.run(
        [
            *(sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-version", "3.10"),
            *("--no-error-summary", "--hide-error-context", "--no-pretty", "--show-error-codes"),
            *FILES,
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.stderr == ""
    assert sorted(result.stdout.splitlines()) == expected_errors()


def declared_types(code: str) -> dict[str, str]:
    """The template's own TypedDicts in a generated module (its shapes and `Message`; the events are the
    same in every module): name -> its keys and types."""
    block = next(
        node for node in ast.parse(code).body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    return {
        ast.unparse(node.targets[0]): ast.unparse(node.value.args[1])
        for node in block.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func) == "TypedDict"
        and not ast.unparse(node.targets[0]).startswith("Region")
    }


def field_types(**field: object) -> dict[str, str]:
    """The shapes and message a template declares with one field `f` (opened by `<f` and a named group `name`)."""
    spec = {"start_anchor": "^", "fields": {"f": {"open_pattern": "<f (?P<name>\\w+)>", "close": "</f>", **field}}}
    return declared_types(rtcompile.compile_template(spec))


def test_a_named_group_is_a_string_in_a_plain_transform_and_unknown_under_transform_each() -> None:
    assert field_types(transform={"n": "{name}", "c": "{content}", "deep": "{name.x}"}) == {
        "Message": "{'f': NotRequired[Shape_f]}",
        "Shape_f": "{'n': str, 'c': str, 'deep': Any}",
    }
    # Under transform_each each element's keys come first: neither a group nor `content` is known.
    each = field_types(content="json", transform={"n": "{name}", "c": "{content}"}, transform_each=True)
    assert each["Shape_f"] == "{'n': Any, 'c': Any}"


def test_a_tool_calls_function_has_a_string_name() -> None:
    call = {"type": "function", "function": {"name": "{content.name}", "arguments": "{content.arguments}"}}
    assert field_types(content="json", transform=call) == {
        "Message": "{'f': NotRequired[Shape_f]}",
        "Shape_f_function": "{'name': str, 'arguments': Any}",
        "Shape_f": "{'type': Literal['function'], 'function': Shape_f_function}",
    }
    # The whole function from parsed JSON: the convention's keys.
    whole = field_types(content="json", transform={"type": "function", "function": "{content}"})
    assert whole["Shape_f_function"] == "{'name': str, 'arguments': Any}"
    # A function the template types otherwise (here: text) keeps that type; a dict that is not a tool
    # call keeps its `name` as the transform says.
    assert field_types(transform={"type": "function", "function": "{content}"})["Shape_f"] == (
        "{'type': Literal['function'], 'function': str}"
    )
    assert field_types(content="json", transform={"type": "call", "function": {"name": "{content}"}}) == {
        "Message": "{'f': NotRequired[Shape_f]}",
        "Shape_f_function": "{'name': Any}",
        "Shape_f": "{'type': Literal['call'], 'function': Shape_f_function}",
    }
