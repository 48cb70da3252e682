"""examples/: the client-side workflow, run against the fake completions endpoint on 127.0.0.1.

The example renders the Qwen3 prompt, streams a completion from the fake server (split at random places,
several seeds), and prints chat-completion chunks and the final message. The official openai SDK
validates every chunk, its own stream accumulator must end in the printed message, and the message must
hold the reasoning and both tool calls. Anything short of a whole completion (an HTTP error, a stream
without `data: [DONE]`, no text) is a one-line error and exit status 1. The README's two commands, the
server in the background and the client, run several times in a row as separate processes (fifty in a
row were checked by hand with RTCOMPILE_EXAMPLE_RUNS=50). Loopback only; every wait is bounded by a
timeout.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessage

import rtcompile
from examples import completions_workflow
from examples.fake_completions_server import CANNED_OUTPUT, GENERATION_PROMPT, FakeCompletionsServer
from tests.support.openai_sdk import sdk_message
from tests.support.paths import ROOT

WAIT_SECONDS = 60  # how long a client waits for an answer (only a broken server makes it wait)
SERVE_SECONDS = 120.0  # the server's own bound, for a test that hangs: each test stops its server when done
SEEDS = [0, 1, 2]


@pytest.fixture
def server() -> Iterator[FakeCompletionsServer]:
    """The fake endpoint, serving in a thread; a test that fails early still stops it."""
    fake = FakeCompletionsServer(max_requests=len(SEEDS) + 2, seed=0)
    thread = threading.Thread(target=fake.serve, args=(SERVE_SECONDS,), daemon=True)
    thread.start()
    yield fake
    fake.stop()  # stop waiting for requests a test did not make
    thread.join(SERVE_SECONDS + 1)
    assert not thread.is_alive()


def run_example(
    base_url: str, capsys: pytest.CaptureFixture[str], timeout: float = WAIT_SECONDS
) -> tuple[int, str, str]:
    out = io.StringIO()
    status = completions_workflow.main(["--base-url", base_url, "--timeout", str(timeout)], out=out)
    captured = capsys.readouterr()
    return status, out.getvalue(), captured.err


def printed(output: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The chunks of the printed event stream, and the message printed after it."""
    events, message = output.split("data: [DONE]\n\n")
    chunks = []
    for event in events.split("\n\n")[:-1]:
        assert event.startswith("data: ") and "\n" not in event, event
        chunks.append(json.loads(event.removeprefix("data: ")))
    return chunks, json.loads(message)


def test_the_workflow_streams_chunks_that_add_up_to_the_message(
    server: FakeCompletionsServer, capsys: pytest.CaptureFixture[str]
) -> None:
    for seed in SEEDS:
        server.rng.seed(seed)  # a different split of the output each time
        status, output, errors = run_example(server.base_url, capsys)
        assert (status, errors) == (0, "")
        chunks, message = printed(output)

        state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
        for chunk in chunks:
            state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
        assert sdk_message(state) == (message, "tool_calls")
        ChatCompletionMessage.model_validate(message)

        assert message["role"] == "assistant" and message["content"] is None
        assert message["reasoning_content"] == (
            "The user wants the weather in Paris and in Tokyo. I will call get_weather once for each city."
        )
        calls = message["tool_calls"]
        assert [(c["type"], c["function"]["name"]) for c in calls] == [("function", "get_weather")] * 2
        assert [c["function"]["arguments"] for c in calls] == [
            '{"city": "Paris", "unit": "celsius"}',
            '{"city": "Tokyo", "unit": "celsius"}',
        ]
        assert len({c["id"] for c in calls}) == 2
        # What an OpenAI-compatible server sends: the role first, the reasoning as it streams, an empty
        # delta with the finish reason last.
        deltas = [chunk["choices"][0]["delta"] for chunk in chunks]
        assert deltas[0] == {"role": "assistant"}
        assert sum("reasoning_content" in delta for delta in deltas) > 1
        assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "tool_calls"}
        assert len({(chunk["id"], chunk["created"], chunk["model"]) for chunk in chunks}) == 1

    prompt = rtcompile.render_prompt("qwen3", completions_workflow.MESSAGES, tools=completions_workflow.TOOLS)
    assert server.prompts == [prompt] * len(SEEDS)
    assert prompt.endswith(GENERATION_PROMPT) and '"name": "get_weather"' in prompt


def test_the_server_streams_openai_completions_and_refuses_other_prompts(server: FakeCompletionsServer) -> None:
    def post(body: dict[str, Any]) -> urllib.request.Request:
        return urllib.request.Request(
            server.base_url + "/v1/completions", data=json.dumps(body).encode(), headers={"Content-Type": "x"}
        )

    request = post({"prompt": "hi" + GENERATION_PROMPT, "stream": True})
    with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as response:
        assert response.headers["Content-Type"] == "text/event-stream"
        events = list(completions_workflow.server_sent_events(response))
    assert events[-1] == "[DONE]"
    completions = [json.loads(event) for event in events[:-1]]
    assert {(c["object"], c["id"]) for c in completions} == {("text_completion", "cmpl-1")}
    assert [c["choices"][0]["finish_reason"] for c in completions] == [None] * (len(completions) - 1) + ["stop"]
    assert "".join(c["choices"][0]["text"] for c in completions) == CANNED_OUTPUT
    assert all(len(c["choices"][0]["text"]) <= 6 for c in completions)

    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(post({"prompt": "no generation prompt", "stream": True}), timeout=WAIT_SECONDS)
    assert refused.value.code == 400
    assert "generation prompt" in json.loads(refused.value.read())["error"]["message"]
    assert server.prompts == ["hi" + GENERATION_PROMPT]


def test_failures_are_one_line_errors(server: FakeCompletionsServer, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, errors = run_example(server.base_url + "/elsewhere", capsys)
    assert status == 1
    assert errors == (
        f"completions_workflow: {server.base_url}/elsewhere answered 404 Not Found: "
        '{"error": {"message": "no such endpoint: /elsewhere/v1/completions", "type": "invalid_request_error"}}\n'
    )
    closed = FakeCompletionsServer()
    closed.server_close()  # a port nothing listens on any more
    status, _, errors = run_example(closed.base_url, capsys, timeout=1)  # refused connections retried for 1 s
    assert status == 1
    assert errors.startswith(f"completions_workflow: cannot reach {closed.base_url}: ") and errors.count("\n") == 1


def test_a_stream_without_done_or_without_text_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    for fake, problem in (
        (FakeCompletionsServer(done=False), "the stream ended without data: [DONE]; the answer is incomplete"),
        (FakeCompletionsServer(output=""), "the completion has no text"),
    ):
        thread = threading.Thread(target=fake.serve, args=(SERVE_SECONDS,))
        thread.start()
        status, output, errors = run_example(fake.base_url, capsys)
        thread.join(SERVE_SECONDS + 1)
        assert (status, errors) == (1, f"completions_workflow: {fake.base_url}: {problem}\n")
        assert "[DONE]" not in output  # nothing printed claims the stream was whole


def test_the_server_exits_only_once_its_answer_is_sent() -> None:
    """`serve` returns after the last request's answer has been streamed to its end, not when the request
    was accepted (the process would then exit and cut the stream): here the request's body is held back
    until after the server has accepted its one request."""
    fake = FakeCompletionsServer(max_requests=1, seed=0)
    thread = threading.Thread(target=fake.serve, args=(SERVE_SECONDS,))
    thread.start()
    body = json.dumps({"prompt": "hi" + GENERATION_PROMPT, "stream": True}).encode()
    with socket.create_connection(("127.0.0.1", fake.server_address[1]), timeout=WAIT_SECONDS) as client:
        client.sendall(b"POST /v1/completions HTTP/1.0\r\nContent-Length: %d\r\n\r\n" % len(body))
        for _ in range(WAIT_SECONDS * 100):  # until the server has accepted the connection
            if fake.served:
                break
            time.sleep(0.01)
        thread.join(0.2)
        assert fake.served == 1 and thread.is_alive()  # the request is in, its answer is not
        client.sendall(body)
        response = b"".join(iter(lambda: client.recv(65536), b""))
    thread.join(SERVE_SECONDS)
    assert not thread.is_alive()
    assert response.startswith(b"HTTP/1.0 200 ") and response.endswith(b"data: [DONE]\n\n")


# How many times the README's commands run in a row here; RTCOMPILE_EXAMPLE_RUNS=50 for the long check.
README_RUNS = int(os.environ.get("RTCOMPILE_EXAMPLE_RUNS", "3"))


@pytest.mark.slow  # ~1.5 s of CPU a run (the client compiles the parser and renders the prompt)
def test_the_readme_commands_work_every_time() -> None:
    """The README's two commands as a user types them: the server started in the background, the client
    at once (it waits for the server to listen), the same port every time."""
    port = free_port()
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    server_command = [sys.executable, "examples/fake_completions_server.py", "--port", str(port)]
    client_command = [sys.executable, "examples/completions_workflow.py", "--base-url", f"http://127.0.0.1:{port}"]
    for run in range(README_RUNS):
        server = subprocess.Popen(server_command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, text=True)
        try:
            client = subprocess.run(
                client_command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
            )
            server_status = server.wait(timeout=60)
        finally:
            server.kill()  # only if a wait above gave up; a no-op on a process that has exited
            server.communicate()
        assert (client.returncode, client.stderr, server_status) == (0, "", 0), f"run {run + 1}"
        chunks, message = printed(client.stdout)
        assert [c["function"]["name"] for c in message["tool_calls"]] == ["get_weather", "get_weather"]
        assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
