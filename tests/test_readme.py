"""The README's example of the OpenAI-compatible workflow runs, and does what its comments say."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def python_blocks(section: str) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, re.DOTALL)


def test_openai_workflow_example(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = python_blocks("The OpenAI-compatible workflow")
    assert len(blocks) == 1
    monkeypatch.chdir(ROOT)  # the example names files relative to the repository root
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)  # noqa: S102 - our own documentation
    assert os.getcwd() == str(ROOT)
    reply = namespace["reply"]
    assert reply["content"] is None
    assert reply["reasoning_content"] == "The user wants the weather."
    assert [c["function"] for c in reply["tool_calls"]] == [{"name": "get_weather", "arguments": '{"city": "Paris"}'}]
    assert re.fullmatch(r"call_[0-9a-f]{24}", reply["tool_calls"][0]["id"])
    chunks = namespace["chunks"]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant"}
    assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    # The next turn renders the reply back: its reasoning is dropped, its call and arguments are kept.
    import rtcompile

    follow_up = rtcompile.render_prompt("templates/qwen3.json", namespace["messages"], add_generation_prompt=False)
    assert follow_up.endswith(
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n'
    )
