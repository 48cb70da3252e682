"""`to_openai` and `openai_roles`: parsed messages as OpenAI assistant messages, checked by the official SDK."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessage

from rtcompile.openai_roles import openai_roles
from rtcompile.runtime.openai import (
    OpenAIField,
    OpenAIRoles,
    call_id_factory,
    random_call_id,
    to_openai,
)
from rtcompile.runtime.openai_stream import DeltaStream
from tests.test_bundled_templates import MODELS, cases_of, loaded

# What each bundled template's fields are, by the derivation's rules: (reasoning, tool calls, content).
EXPECTED_ROLES = {
    "cohere_command_a": ("tool_plan", "tool_calls", "content"),
    "gpt_oss": ("thinking", "tool_calls", "content"),
    "deepseek_v4": ("reasoning", "tool_calls", "content"),  # the V4 encoder reads `reasoning`
    "phi4_reasoning": ("reasoning_content", None, "content"),  # no tool-call format
    **{
        model: (None, "tool_calls", "content")
        for model in (
            "deepseek_v3",
            "functiongemma",
            "gigachat3",
            "granite_20b_fc",
            "hermes2_pro",
            "jamba",
            "llama3_1",
            "llama3_2",
            "llama3_3",
            "llama4",
            "mistral_pre_v11",
            "phi4_mini",
            "qwen2_5_coder",
            "xlam",
        )
    },
}


@pytest.mark.parametrize("model", MODELS)
def test_roles_of_every_bundled_template(model: str) -> None:
    roles = openai_roles(loaded(model))
    names = tuple(None if f is None else f.name for f in (roles.reasoning, roles.tool_calls, roles.content))
    assert names == EXPECTED_ROLES.get(model, ("reasoning_content", "tool_calls", "content"))


def test_roles_carry_the_rules_the_parser_builds_values_by() -> None:
    qwen3 = openai_roles(loaded("qwen3"))
    assert qwen3.content == OpenAIField("content", repeats=True, join="", region_text="stripped")
    assert qwen3.reasoning == OpenAIField("reasoning_content", region_text="stripped")
    assert qwen3.tool_calls == OpenAIField("tool_calls", repeats=True)
    cohere = openai_roles(loaded("cohere_command_a"))
    assert cohere.tool_calls == OpenAIField("tool_calls")  # transform_each, one region holds every call


def test_role_overrides() -> None:
    template = loaded("qwen3")
    roles = openai_roles(template, reasoning=None, content="reasoning_content", tool_calls=None)
    assert (roles.reasoning, roles.tool_calls) == (None, None)
    assert roles.content is not None and roles.content.name == "reasoning_content"
    with pytest.raises(ValueError, match="no field 'answer'"):
        openai_roles(template, content="answer")
    with pytest.raises(ValueError, match="different message fields"):
        OpenAIRoles(content=OpenAIField("x"), reasoning=OpenAIField("x"))


MESSAGE_CASES = [(model, case) for model in MODELS for case in cases_of(model) if "error" not in case["expected"]]


@pytest.mark.parametrize(("model", "case"), MESSAGE_CASES, ids=[f"{m}/{c['name']}" for m, c in MESSAGE_CASES])
def test_every_recorded_message_is_a_valid_openai_message(model: str, case: dict[str, Any]) -> None:
    parsed = case["expected"]
    roles = openai_roles(loaded(model))
    message = to_openai(parsed, roles=roles, id_factory=call_id_factory(0))
    validated = ChatCompletionMessage.model_validate(message)
    assert validated.model_dump(exclude_none=True, exclude={"reasoning_content"}) == {
        k: v for k, v in message.items() if v is not None and k != "reasoning_content"
    }
    reasoning = parsed.get(roles.reasoning.name) if roles.reasoning is not None else None
    assert message["reasoning_content"] == (reasoning or None)
    assert message["content"] == (parsed.get("content") or None)
    calls = parsed.get("tool_calls", [])

    # Arguments are the parsed value as JSON, or the model's own string as it is (granite4 writes JSON in a string).
    def decoded(arguments: str, parsed: Any) -> Any:
        return arguments if isinstance(parsed, str) else json.loads(arguments)

    sent = [c["function"] for c in message.get("tool_calls", [])]
    recorded = [(c["function"]["name"], c["function"].get("arguments", {})) for c in calls]
    assert [(f["name"], decoded(f["arguments"], args)) for f, (_, args) in zip(sent, recorded, strict=True)] == recorded
    # vLLM's key, and both keys at once: the same message otherwise, and still a valid SDK message.
    both = to_openai(
        parsed, roles=roles, id_factory=call_id_factory(0), reasoning_key=("reasoning_content", "reasoning")
    )
    assert both == {**message, "reasoning": message["reasoning_content"]}
    assert list(both) == [
        "role",
        "content",
        "reasoning_content",
        "reasoning",
        *(["tool_calls"] * ("tool_calls" in both)),
    ]
    vllm = to_openai(parsed, roles=roles, id_factory=call_id_factory(0), reasoning_key="reasoning")
    assert vllm == {k: v for k, v in both.items() if k != "reasoning_content"}
    assert ChatCompletionMessage.model_validate(both).model_dump()["reasoning"] == both["reasoning"]


def call(name: str, arguments: Any = None, **extra: Any) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name}
    if arguments is not None:
        function["arguments"] = arguments
    return {"type": "function", "function": function, **extra}


def test_arguments_are_serialised_as_the_api_does() -> None:
    message = {
        "content": "",
        "tool_calls": [
            call("weather", {"city": "Zürich", "days": [1, 2]}),
            call("raw", '{"already": "a string"}'),
            call("none"),
        ],
    }
    result = to_openai(message, id_factory=call_id_factory(0))
    assert [c["function"]["arguments"] for c in result["tool_calls"]] == [
        '{"city": "Zürich", "days": [1, 2]}',
        '{"already": "a string"}',
        "{}",
    ]
    assert result["content"] is None


def test_ids_written_by_the_model_are_kept_others_generated() -> None:
    message = {"tool_calls": [call("a", {}, id="functions.a:0"), call("b", {})]}
    first = to_openai(message, id_factory=call_id_factory(7))
    again = to_openai(message, id_factory=call_id_factory(7))
    assert first == again
    ids = [c["id"] for c in first["tool_calls"]]
    assert ids[0] == "functions.a:0"
    assert re.fullmatch(r"call_[0-9a-f]{24}", ids[1])
    assert re.fullmatch(r"call_[0-9a-f]{24}", random_call_id())
    assert random_call_id() != random_call_id()
    assert call_id_factory() is random_call_id


def test_message_shapes() -> None:
    assert to_openai({"role": "assistant", "content": "hi", "extra": 1}) == {
        "role": "assistant",
        "content": "hi",
        "reasoning_content": None,
    }
    # Bare calls, and one list of calls per region (repeats + transform_each), are accepted.
    nested = to_openai({"tool_calls": [[call("a", {})], [call("b", {}), {"name": "c", "arguments": {"x": 1}}]]})
    assert [c["function"]["name"] for c in nested["tool_calls"]] == ["a", "b", "c"]
    single = to_openai({"tool_calls": call("a", {})})
    assert [c["function"]["name"] for c in single["tool_calls"]] == ["a"]
    # A value that is not text (another content parser) is sent as JSON.
    assert to_openai({"content": {"answer": 42}})["content"] == '{"answer": 42}'
    roles = OpenAIRoles(content=OpenAIField("answer"), reasoning=OpenAIField("thinking"), tool_calls=None)
    assert to_openai({"answer": "A", "thinking": "T", "tool_calls": "ignored"}, roles=roles) == {
        "role": "assistant",
        "content": "A",
        "reasoning_content": "T",
    }


@pytest.mark.parametrize("reasoning_key", ["thinking", "", (), ("reasoning", "reasoning")])
def test_unknown_reasoning_keys_raise_value_error(reasoning_key: Any) -> None:
    with pytest.raises(ValueError, match="reasoning_key must be one of"):
        to_openai({"reasoning_content": "r"}, reasoning_key=reasoning_key)
    with pytest.raises(ValueError, match="reasoning_key must be one of"):
        DeltaStream(OpenAIRoles(), reasoning_key=reasoning_key)


@pytest.mark.parametrize(
    ("tool_calls", "error"),
    [
        ("text", "must be a list of calls, got str"),
        ([7], "tool call 0 is int, not an object"),
        ([call("a", {}), {"type": "function", "function": "f()"}], "tool call 1: 'function' is str"),
        (
            [{"type": "function", "function": {"arguments": {}}}],
            r"tool call 0 has no function name \(keys: \['arguments'\]\)",
        ),
    ],
)
def test_malformed_tool_calls_raise_value_error(tool_calls: Any, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        to_openai({"tool_calls": tool_calls})
