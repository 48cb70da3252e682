"""The README's Python examples run as written, and do what their comments say.

Every ```python block of README.md is run by a test: the one under "Using a compiled parser" by
tests/tooling/test_packaging.py, all the others here. A block may use names the text around it explains
(`text`, `prompt`, `send`, ...); the test supplies them. The streaming workflow talks to the fake
completions server of examples/ on 127.0.0.1, through the official openai client.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessage

import rtcompile
from examples.fake_completions_server import FakeCompletionsServer
from tests.support.cli import errors_in, run
from tests.support.openai_sdk import sdk_message
from tests.support.paths import ROOT

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")

#: How many Python blocks each section holds, and which test runs them.
BLOCKS = {
    "Using a compiled parser": 1,  # tests/tooling/test_packaging.py::test_readme_streaming_example_renders_every_event
    "The command line": 1,  # tests/codegen/test_shared_runtime.py::test_the_readme_example_imports_a_thin_module
    "The Python API": 1,
    "Constraining output": 1,
    "The OpenAI-compatible workflow": 2,
    "Beyond the reference: captures, spans, recovery": 4,
}


def sections() -> dict[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return {part.split("\n", 1)[0]: part.split("\n", 1)[1] for part in text.split("\n## ")[1:]}


def python_blocks(section: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", sections()[section], re.DOTALL)


def run_block(block: str, **names: Any) -> dict[str, Any]:
    namespace: dict[str, Any] = dict(names)
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own documentation
    return namespace


@pytest.fixture(autouse=True)
def in_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # examples name files relative to the repository root


def test_every_python_block_is_run() -> None:
    counts = {name: len(python_blocks(name)) for name in sections()}
    assert {name: count for name, count in counts.items() if count} == BLOCKS


def test_python_api() -> None:
    (block,) = python_blocks("The Python API")
    path = ROOT / "templates" / "qwen3.json"
    messages = [{"role": "user", "content": "Hi"}]
    namespace = run_block(
        block,
        text="Hello!<|im_end|>",
        prompt="<|im_start|>assistant\n",
        path=path,
        data=path.read_bytes(),
        messages=messages,
        tools=None,
        message={"role": "assistant", "content": "Hello!"},
    )
    assert namespace["template"] == rtcompile.load_template("qwen3")
    assert namespace["source"] == rtcompile.compile_template(path, source_name="templates/qwen3.json")


# --------------------------------------------------------------------------- constraining output


@pytest.mark.parametrize("stack", ["vllm", "sglang"])
def test_forced_tool_call(stack: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The block as written (vLLM's field), and with the field its comment gives for SGLang: the fake
    server gets the block's grammar there, llguidance finds that it admits the reply, and the reply is
    one call."""
    (block,) = python_blocks("Constraining output")
    vllm_field, sglang_field = 'extra_body={"structured_outputs": {"grammar": lark}}', 'extra_body={"ebnf": lark}'
    assert block.count("http://127.0.0.1:8000/v1") == 1 and block.count(vllm_field) == 1
    assert f"SGLang's: {sglang_field}" in block
    if stack == "sglang":
        block = block.replace(f"max_tokens=1024, {vllm_field}", f"max_tokens=1024, {sglang_field}")
    for variable in PROXY_VARIABLES:  # the client must go straight to 127.0.0.1
        monkeypatch.delenv(variable, raising=False)
    fake = FakeCompletionsServer(seed=0)
    thread = threading.Thread(target=fake.serve, args=(120.0,), daemon=True)  # a bound for a hung test
    thread.start()
    try:
        namespace = run_block(block.replace("http://127.0.0.1:8000", fake.base_url))
    finally:
        fake.stop()
        thread.join(121.0)
    (constraint,) = fake.constraints
    assert constraint is not None and constraint.text == namespace["lark"] and constraint.format == "lark"
    assert constraint.field == ("ebnf" if stack == "sglang" else "structured_outputs.grammar")
    assert constraint.admits_reply is True
    reply = namespace["reply"]
    ChatCompletionMessage.model_validate(reply)
    assert [c["function"] for c in reply["tool_calls"]] == [{"name": "get_weather", "arguments": '{"city": "Paris"}'}]


# --------------------------------------------------------------------------- the OpenAI-compatible workflow


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCompletionsServer]:
    for variable in PROXY_VARIABLES:  # the client must go straight to 127.0.0.1
        monkeypatch.delenv(variable, raising=False)
    fake = FakeCompletionsServer(max_requests=1, seed=0)
    thread = threading.Thread(target=fake.serve, args=(120.0,), daemon=True)  # a bound for a hung test
    thread.start()
    yield fake
    fake.stop()
    thread.join(121.0)
    assert not thread.is_alive()


def without_ids(message: dict[str, Any]) -> dict[str, Any]:
    calls = [{k: v for k, v in call.items() if k != "id"} for call in message.get("tool_calls", [])]
    return {**message, "tool_calls": calls}


def test_streaming_workflow(server: FakeCompletionsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    block = python_blocks("The OpenAI-compatible workflow")[0]
    assert block.count("http://127.0.0.1:8000/v1") == 1
    monkeypatch.syspath_prepend(str(ROOT / "generated"))  # where `rtcompile qwen3 -o qwen3_parser.py` wrote it
    monkeypatch.delitem(sys.modules, "qwen3_parser", raising=False)
    chunks: list[dict[str, Any]] = []
    try:
        namespace = run_block(block.replace("http://127.0.0.1:8000", server.base_url), send=chunks.extend)
    finally:
        sys.modules.pop("qwen3_parser", None)
    assert server.prompts == [namespace["prompt"]]

    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    streamed, finish_reason = sdk_message(state)
    reply = namespace["reply"]
    ChatCompletionMessage.model_validate(reply)
    assert finish_reason == "tool_calls"
    assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    assert without_ids(streamed) == without_ids(reply)  # the README's comment: ids aside
    assert reply["reasoning_content"].startswith("The user wants the weather in Paris and in Tokyo.")
    assert [json.loads(call["function"]["arguments"]) for call in reply["tool_calls"]] == [
        {"city": "Paris", "unit": "celsius"},
        {"city": "Tokyo", "unit": "celsius"},
    ]


def test_whole_response() -> None:
    namespace = run_block(python_blocks("The OpenAI-compatible workflow")[1])
    assert os.getcwd() == str(ROOT)
    reply = namespace["reply"]
    assert reply["content"] is None
    assert reply["reasoning_content"] == "The user wants the weather."
    assert [c["function"] for c in reply["tool_calls"]] == [{"name": "get_weather", "arguments": '{"city": "Paris"}'}]
    assert re.fullmatch(r"call_[0-9a-f]{24}", reply["tool_calls"][0]["id"])
    ChatCompletionMessage.model_validate(reply)
    # The next turn renders the reply back: its reasoning is dropped, its call and arguments are kept.
    follow_up = rtcompile.render_prompt("qwen3", namespace["messages"], add_generation_prompt=False)
    assert follow_up.endswith(
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n'
    )


# --------------------------------------------------------------------------- the extension options


def extension_blocks() -> list[str]:
    return python_blocks("Beyond the reference: captures, spans, recovery")


def test_captures() -> None:
    namespace = run_block(extension_blocks()[0])
    assert namespace["opened"] == {"type": "region_open", "field": "tool_calls", "captures": {"name": "get_weather"}}


def test_spans() -> None:
    namespace = run_block(extension_blocks()[1])
    assert namespace["spans"] == [
        ("region_open", "reasoning_content", -8),
        ("region_close", "reasoning_content", 14),
        ("region_open", "content", 14),
        ("region_close", "content", 29),
    ]
    generation = "Easy.\n</think>\n\nHi!<|im_end|>"
    assert generation[:14].endswith("</think>") and len(generation) == 29


def test_recover() -> None:
    namespace = run_block(extension_blocks()[2])
    get_time = {"type": "function", "function": {"name": "get_time", "arguments": {}}}
    assert namespace["message"] == {"role": "assistant", "tool_calls": [get_time]}
    text = '\n{"name": "get_weather", "arguments": {"city": "Par'
    (malformed,) = namespace["events"]
    assert malformed == {
        "type": "region_malformed",
        "field": "tool_calls",
        "error": "ValueError",
        "message": malformed["message"],
        "text": text,
    }
    assert malformed["message"].startswith("json parser could not parse region as JSON.")
    assert namespace["parser"].malformed == [malformed]


def test_start_anchor_warning() -> None:
    with warnings.catch_warnings():
        namespace = run_block(extension_blocks()[3])
    assert namespace["message"] == {"role": "assistant", "content": "garbageHello!"}
    assert [w.category for w in namespace["caught"]] == [rtcompile.StartAnchorWarning]
    with warnings.catch_warnings():
        warnings.simplefilter("error", rtcompile.StartAnchorWarning)  # what the README says it does
        with pytest.raises(rtcompile.StartAnchorWarning):
            rtcompile.parse_response("Hello!", "qwen3", prefix="garbage")


#: The templates behind the warning lines of "Regexes that backtrack catastrophically", by file name.
BACKTRACKING_TEMPLATES = {
    "nested.json": "<(a+)+>",
    "tool_call.json": "<tool_call>\\s*\\s*\\s*\\{",
    "slow.json": "<.*a.*a.*a.*>",
}


@pytest.mark.slow  # rtcompile in subprocesses
def test_backtracking_warnings_are_what_the_compiler_prints(tmp_path: Path) -> None:
    blocks = re.findall(r"```\n(.*?)\n```", sections()["Regexes that backtrack catastrophically"], re.DOTALL)
    shown = [line for block in blocks for line in block.splitlines() if re.match(r"\S+\.json:", line)]
    printed = []
    for name, open_pattern in BACKTRACKING_TEMPLATES.items():
        template = {
            "start_anchor": "<|im_start|>assistant\n",
            "fields": {
                "tool_calls": {"open_pattern": open_pattern, "close": "}</tool_call>", "content": "json"},
                "content": {},
            },
        }
        (tmp_path / name).write_text(json.dumps(template, indent=2) + "\n", encoding="utf-8")
        result = run(name, "-o", name.replace(".json", "_parser.py"), cwd=tmp_path)
        assert result.returncode == 0 and (tmp_path / name.replace(".json", "_parser.py")).exists()
        printed += errors_in(result.stderr)
    assert shown == printed
