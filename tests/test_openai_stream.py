"""`DeltaStream`: chat-completion deltas from parser events that add up to `to_openai(final message)`.

Accumulated with the rules OpenAI clients use (text concatenated; tool calls merged by `index`, their
`arguments` concatenated), the deltas of every recorded case of every bundled template, in any chunking,
equal `to_openai` of the final message, ids included, whatever key the reasoning goes under. The first
delta of every tool-call index carries its `id`, `type` and `function.name` (clients such as the Vercel AI
SDK drop a call whose first delta has no name). The official SDK validates every chunk, and its own stream
accumulator ends in the same message.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

import rtcompile
from rtcompile.api import ResponseParser
from rtcompile.openai_roles import openai_roles
from rtcompile.runtime.openai import OpenAIRoles, ReasoningKey, call_id_factory, to_openai
from rtcompile.runtime.openai_stream import ChatCompletionChunks, DeltaStream, chat_completion_chunk
from tests.bundled import template_of
from tests.compiled import compiled_module
from tests.strategies import TOOLS, chunkings, prefixes, streams, templates
from tests.test_bundled_templates import MODELS, cases_of, loaded

MESSAGE_CASES = [(model, case) for model in MODELS for case in cases_of(model) if "error" not in case["expected"]]
CASE_IDS = [f"{model}/{case['name']}" for model, case in MESSAGE_CASES]


REASONING_KEYS: list[ReasoningKey] = ["reasoning_content", "reasoning", ("reasoning_content", "reasoning")]


def accumulate(deltas: list[dict[str, Any]], reasoning_key: ReasoningKey = "reasoning_content") -> dict[str, Any]:
    """What an OpenAI client builds from the deltas; a call whose first delta lacks its id, type or name
    fails here, as it fails in clients that take the name from the first delta only."""
    reasoning_keys = (reasoning_key,) if isinstance(reasoning_key, str) else reasoning_key
    message: dict[str, Any] = {"role": None, "content": None, **dict.fromkeys(reasoning_keys)}
    calls: dict[int, dict[str, Any]] = {}
    for delta in deltas:
        if set(delta) & set(reasoning_keys):
            assert set(delta) == set(reasoning_keys), delta  # every key carries the same piece
        for key, value in delta.items():
            if key == "role":
                message["role"] = message["role"] or value
            elif key == "content" or key in reasoning_keys:
                assert isinstance(value, str) and value, delta  # no empty pieces
                message[key] = (message[key] or "") + value
            else:
                assert key == "tool_calls", delta
                for piece in value:
                    function = piece.get("function", {})
                    if piece["index"] not in calls:
                        assert piece.get("id") and piece.get("type") == "function" and function.get("name"), piece
                        calls[piece["index"]] = {"id": piece["id"], "type": "function", "function": {**function}}
                        continue
                    entry = calls[piece["index"]]
                    assert "name" not in function and "id" not in piece, piece  # named once, in the first delta
                    entry["function"]["arguments"] += function.get("arguments", "")
    if calls:
        assert sorted(calls) == list(range(len(calls)))
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return message


def run(
    template: rtcompile.Template,
    prefix: str,
    chunks: list[str],
    *,
    tools: Any = None,
    roles: OpenAIRoles | None = None,
    hold_replaceable: bool = False,
    truncated: bool = False,
    captures: bool = False,
    reasoning_key: ReasoningKey = "reasoning_content",
) -> tuple[DeltaStream, list[dict[str, Any]], dict[str, Any]]:
    """Parse `chunks` and stream the events: the stream, its deltas and the final message. With `captures`
    the parser reports open-delimiter captures, and calls named by them are announced when they open."""
    parser = ResponseParser(template, prefix, tools=tools, captures=captures)
    stream = DeltaStream(
        roles or openai_roles(template),
        id_factory=call_id_factory(0),
        hold_replaceable=hold_replaceable,
        reasoning_key=reasoning_key,
    )
    deltas = stream.feed(parser.initial_events)
    for chunk in chunks:
        deltas += stream.feed(parser.feed(chunk))
    message, final_events = parser.finalize()
    deltas += stream.finish(final_events, truncated=truncated)
    return stream, deltas, message


def expected(
    template: rtcompile.Template,
    message: dict[str, Any],
    roles: OpenAIRoles | None = None,
    reasoning_key: ReasoningKey = "reasoning_content",
) -> Any:
    return to_openai(
        message, roles=roles or openai_roles(template), id_factory=call_id_factory(0), reasoning_key=reasoning_key
    )


# --------------------------------------------------------------------------- the property


@st.composite
def recorded_case_chunkings(draw: st.DrawFn) -> tuple[str, dict[str, Any], list[str], bool, bool, ReasoningKey]:
    model, case = draw(st.sampled_from(MESSAGE_CASES))
    reasoning_key = draw(st.sampled_from(REASONING_KEYS))
    return model, case, draw(chunkings(case["text"])), draw(st.booleans()), draw(st.booleans()), reasoning_key


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recorded_case_chunkings())
def test_deltas_add_up_to_the_final_message(
    case: tuple[str, dict[str, Any], list[str], bool, bool, ReasoningKey],
) -> None:
    model, recorded, chunks, hold, captures, reasoning_key = case
    template = loaded(model)
    stream, deltas, message = run(
        template,
        recorded["prefix"],
        chunks,
        tools=recorded.get("tools"),
        hold_replaceable=hold,
        captures=captures,
        reasoning_key=reasoning_key,
    )
    assert message == recorded["expected"]
    assert accumulate(deltas, reasoning_key) == expected(template, message, reasoning_key=reasoning_key)
    assert deltas[0] == {"role": "assistant"}
    assert stream.diverged == []


@pytest.mark.parametrize("captures", [False, True], ids=["whole_calls", "announced_calls"])
@pytest.mark.parametrize(("model", "case"), MESSAGE_CASES, ids=CASE_IDS)
def test_one_character_at_a_time(model: str, case: dict[str, Any], captures: bool) -> None:
    template = loaded(model)
    stream, deltas, message = run(
        template, case["prefix"], list(case["text"]), tools=case.get("tools"), captures=captures
    )
    assert accumulate(deltas) == expected(template, message)
    assert stream.finish_reason == ("tool_calls" if message.get("tool_calls") else "stop")


def test_a_call_named_by_its_open_delimiter_is_announced_when_it_opens() -> None:
    template = loaded("kimi_k2")
    parser = ResponseParser(template, "", captures=True)
    stream = DeltaStream(openai_roles(template), id_factory=call_id_factory(0))
    opening = '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"ci'
    deltas = stream.feed(parser.feed(opening))
    first_id = call_id_factory(0)()
    announced = {"index": 0, "id": first_id, "type": "function", "function": {"name": "get_weather", "arguments": ""}}
    assert deltas == [{"role": "assistant"}, {"tool_calls": [announced]}]
    deltas = stream.feed(parser.feed('ty": "Paris"}<|tool_call_end|>'))
    assert deltas == [{"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Paris"}'}}]}]


@st.composite
def random_template_cases(draw: st.DrawFn) -> tuple[dict[str, Any], str, list[str], Any]:
    template = draw(templates())
    if draw(st.booleans()):
        # Defaults make join fields start from a value and keep empty values in the message.
        name = draw(st.sampled_from(sorted(template["fields"])))
        template["defaults"] = {"role": "assistant", name: draw(st.sampled_from(["D", "", []]))}
    text = draw(streams(template))
    return template, draw(prefixes(template)), draw(chunkings(text)), draw(st.sampled_from([None, TOOLS]))


def outcome(call: Any) -> Any:
    try:
        return call()
    except ValueError:
        return ValueError


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_template_cases())
def test_random_templates(case: tuple[dict[str, Any], str, list[str], Any]) -> None:
    """Any template, any text: held back, the deltas always add up; streamed live, they do unless a
    region replaced text already sent, and then `diverged` says so."""
    spec, prefix, chunks, tools = case
    template = rtcompile.load_template(spec)
    try:
        parser = ResponseParser(template, prefix, tools=tools)
        for chunk in chunks:
            parser.feed(chunk)
        message, events = parser.finalize()
    except (ValueError, KeyError, TypeError, AttributeError):
        assume(False)  # no message to stream
        return
    roles = openai_roles(template)
    want = outcome(lambda: expected(template, message, roles))
    held = outcome(lambda: run(template, prefix, chunks, tools=tools, hold_replaceable=True))
    live = outcome(lambda: run(template, prefix, chunks, tools=tools))
    if want is ValueError:
        assert held is ValueError and live is ValueError
        return
    assert held is not ValueError and live is not ValueError
    assert held[0].diverged == []
    assert accumulate(held[1]) == want
    replaced = replaced_keys(template, roles, prefix, chunks, tools)
    assert set(live[0].diverged) <= replaced
    if not live[0].diverged:
        assert accumulate(live[1]) == want


def replaced_keys(
    template: rtcompile.Template, roles: OpenAIRoles, prefix: str, chunks: list[str], tools: Any
) -> set[str]:
    """The OpenAI keys whose field does not repeat and had more than one region."""
    parser = ResponseParser(template, prefix, tools=tools)
    events = list(parser.initial_events)
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.finalize()[1]
    keys = set()
    for key, field in (
        ("content", roles.content),
        ("reasoning_content", roles.reasoning),
        ("tool_calls", roles.tool_calls),
    ):
        opened = sum(1 for e in events if e["type"] == "region_open" and field is not None and e["field"] == field.name)
        if field is not None and not field.repeats and field.join is None and opened > 1:
            keys.add(key)
    return keys


# --------------------------------------------------------------------------- what is sent when


def deltas_of(model: str, prefix: str, chunks: list[str], **options: Any) -> list[list[dict[str, Any]]]:
    """The deltas of each feed, then of finish."""
    template = loaded(model)
    parser = ResponseParser(template, prefix)
    stream = DeltaStream(openai_roles(template), id_factory=call_id_factory(0), **options)
    batches = [stream.feed(parser.initial_events)]
    batches += [stream.feed(parser.feed(chunk)) for chunk in chunks]
    batches.append(stream.finish(parser.finalize()[1]))
    return batches


def test_reasoning_streams_live_with_whitespace_held_back() -> None:
    batches = deltas_of(
        "qwen3", "<|im_start|>assistant\n", ["<think>\n", "Let me ", "see", ".\n", "</think>\n\n", "Hi"]
    )
    assert batches == [
        [{"role": "assistant"}],
        [],  # the open tag, and the leading newline the close-time strip removes
        [{"reasoning_content": "Let me"}],  # the trailing space may still be stripped
        [{"reasoning_content": " see"}],
        [{"reasoning_content": "."}],
        [],
        [{"content": "Hi"}],
        [],
    ]


def test_join_separator_is_sent_when_the_next_region_opens() -> None:
    prefix = "<|start|>assistant"
    chunks = ["<|channel|>final<|message|>A<|end|>", "<|start|>assistant<|channel|>final<|message|>", "B", "<|return|>"]
    batches = deltas_of("gpt_oss", prefix, chunks)
    assert batches[1:] == [[{"content": "A"}], [{"content": "\n"}], [{"content": "B"}], [], []]


def test_a_replacing_region_is_reported_or_held_back() -> None:
    prefix = "<|im_start|>assistant\n"
    chunks = ["<think>first</think>", "<think>second</think>", "answer"]
    live = deltas_of("qwen3", prefix, chunks)
    assert live[1] == [{"reasoning_content": "first"}]
    template = loaded("qwen3")
    stream, deltas, message = run(template, prefix, chunks)
    assert message["reasoning_content"] == "second"
    assert stream.diverged == ["reasoning_content"]
    stream, deltas, message = run(template, prefix, chunks, hold_replaceable=True)
    assert stream.diverged == []
    assert accumulate(deltas) == expected(template, message)
    held = deltas_of("qwen3", prefix, chunks, hold_replaceable=True)
    assert held[1:] == [[], [], [{"content": "answer"}], [{"reasoning_content": "second"}]]


def test_tool_calls_are_sent_when_their_region_closes() -> None:
    prefix = "<|im_start|>assistant\n"
    chunks = ['<tool_call>\n{"name": "f", "arguments": {"a": ', "1}}\n</tool_call", ">"]
    batches = deltas_of("qwen3", prefix, chunks)
    call = {
        "index": 0,
        "id": call_id_factory(0)(),
        "type": "function",
        "function": {"name": "f", "arguments": '{"a": 1}'},
    }
    assert batches[1:] == [[], [], [{"tool_calls": [call]}], []]


def test_finish_reasons() -> None:
    template = loaded("qwen3")
    prefix = "<|im_start|>assistant\n"
    assert run(template, prefix, ["Hi"])[0].finish_reason == "stop"
    assert run(template, prefix, ['<tool_call>{"name": "f"}</tool_call>'])[0].finish_reason == "tool_calls"
    assert run(template, prefix, ['<tool_call>{"name": "f"}</tool_call>'], truncated=True)[0].finish_reason == "length"


def test_feeding_a_finished_stream_is_an_error() -> None:
    stream = DeltaStream(openai_roles(loaded("qwen3")))
    assert stream.finish([]) == [{"role": "assistant"}]
    with pytest.raises(RuntimeError, match="already finished"):
        stream.feed([])


# --------------------------------------------------------------------------- the official SDK


def sdk_message(
    state: ChatCompletionStreamState[Any], reasoning_keys: tuple[str, ...] = ("reasoning_content",)
) -> tuple[dict[str, Any], str]:
    choice = state.get_final_completion().choices[0]
    message = choice.message
    result: dict[str, Any] = {"role": message.role, "content": message.content}
    result.update({key: getattr(message, key, None) for key in reasoning_keys})
    if message.tool_calls:
        result["tool_calls"] = [
            {"id": c.id, "type": c.type, "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in message.tool_calls
        ]
    return result, choice.finish_reason


@pytest.mark.parametrize(("model", "case"), MESSAGE_CASES, ids=CASE_IDS)
def test_sdk_accepts_the_chunks_and_accumulates_the_same_message(model: str, case: dict[str, Any]) -> None:
    """With the reasoning under both keys; every other case with calls announced when they open."""
    template = loaded(model)
    captures = MESSAGE_CASES.index((model, case)) % 2 == 1
    parser = ResponseParser(template, case["prefix"], tools=case.get("tools"), captures=captures)
    both = ("reasoning_content", "reasoning")
    stream = DeltaStream(openai_roles(template), id_factory=call_id_factory(0), reasoning_key=both)
    writer = ChatCompletionChunks(stream, model=model, completion_id="chatcmpl-test", created=1700000000)
    chunks = writer.feed(parser.initial_events)
    for char in case["text"]:
        chunks += writer.feed(parser.feed(char))
    message, final_events = parser.finalize()
    chunks += writer.finish(final_events)
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    want = expected(template, message, reasoning_key=both)
    assert sdk_message(state, both) == (want, "tool_calls" if "tool_calls" in want else "stop")
    assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": stream.finish_reason}


def test_chunk_shape() -> None:
    chunk = chat_completion_chunk({"content": "x"}, completion_id="chatcmpl-1", created=5, model="m")
    assert chunk == {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 5,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": None}],
    }
    writer = ChatCompletionChunks(DeltaStream(OpenAIRoles()), model="m")
    assert writer.completion_id.startswith("chatcmpl-") and isinstance(writer.created, int)


# --------------------------------------------------------------------------- inside a generated module


@pytest.mark.parametrize(("model", "case"), MESSAGE_CASES, ids=CASE_IDS)
def test_a_generated_module_streams_the_same_deltas(model: str, case: dict[str, Any]) -> None:
    """The module's own `to_openai`, `OPENAI_ROLES` and `DeltaStream` (lifted from the same runtime) give
    what rtcompile gives: the same roles, the same message, the same deltas, one character at a time."""
    module = compiled_module(template_of(model))
    template = loaded(model)
    assert repr(module.OPENAI_ROLES) == repr(openai_roles(template))
    parser = module.ResponseParser(case["prefix"], tools=case.get("tools"), captures=True)
    stream = module.DeltaStream(module.OPENAI_ROLES, id_factory=module.call_id_factory(0))
    deltas = stream.feed(parser.initial_events)
    for char in case["text"]:
        deltas += stream.feed(parser.feed(char))
    message, final_events = parser.finalize()
    deltas += stream.finish(final_events)
    assert module.to_openai(message, id_factory=module.call_id_factory(0)) == expected(template, message)
    _, ours, _ = run(template, case["prefix"], list(case["text"]), tools=case.get("tools"), captures=True)
    assert deltas == ours
    assert accumulate(deltas) == expected(template, message)
