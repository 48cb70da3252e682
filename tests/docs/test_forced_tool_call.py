"""examples/forced_tool_call.py: a grammar forces one tool call, the parser of the same template reads it.

The example runs as a user runs it (`python -m examples.forced_tool_call`, a process per run, several in
a row) against the fake completions server on 127.0.0.1, here serving in a thread so that the test can
read what each request carried. Each run must print one call of the required tool with arguments valid
for its schema; the grammar the server received must be the template's grammar for the example's tools
and options, in the stack's field, admit the text the server sent, and refuse replies without a call
(read by llguidance, as vLLM's and SGLang's llguidance backends read it; GBNF and structural tags through
the suite's converters). The server's own checks, and the example's one-line errors, are tested too.
Every wait is bounded by a timeout.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessage

import rtcompile
from examples import forced_tool_call
from examples.completions_workflow import TOOLS
from examples.fake_completions_server import (
    CANNED_OUTPUT,
    FORCED_OUTPUT,
    GENERATION_PROMPT,
    FakeCompletionsServer,
)
from rtcompile.grammars import grammar
from tests.support.grammar_walks import accepted, valid
from tests.support.paths import ROOT

SERVE_SECONDS = 120.0  # the server's own bound, for a test that hangs: each test stops its server when done
WAIT_SECONDS = 60  # how long a client waits for an answer (only a broken server makes it wait)
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")

#: Replies no grammar of the example may admit: no call at all (after reasoning, or bare), two calls.
WITHOUT_ONE_CALL = [
    "<think>\nThe user wants the weather in Paris.\n</think>\n\nIt is sunny in Paris today.",
    "It is sunny in Paris today.",
    CANNED_OUTPUT,
]
#: Each command-line run: its options, and the field and format the grammar must arrive in.
RUNS = [
    ([], "structured_outputs.grammar", "lark"),
    (["--stack", "sglang"], "ebnf", "lark"),
    (["--format", "structural-tag"], "response_format", "structural-tag"),
]


@contextmanager
def serving(**options: Any) -> Iterator[FakeCompletionsServer]:
    """The fake endpoint, serving in a thread; stopped however the test ends."""
    fake = FakeCompletionsServer(seed=0, **options)
    thread = threading.Thread(target=fake.serve, args=(SERVE_SECONDS,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.stop()  # stop waiting for requests a test did not make
        thread.join(SERVE_SECONDS + 1)
    assert not thread.is_alive()


def expected_grammar(format: str) -> str:
    """The grammar the example must send: the template's, for its prompt, tools and options."""
    prompt = rtcompile.render_prompt("qwen3", forced_tool_call.MESSAGES, tools=TOOLS)
    return grammar("qwen3", TOOLS, prefix=prompt, tool_choice="required", parallel_tool_calls=False, format=format)


def check_one_call(message: dict[str, Any]) -> None:
    """`message` is an OpenAI assistant message with exactly one call of the tool, its arguments valid."""
    ChatCompletionMessage.model_validate(message)
    (call,) = message["tool_calls"]
    assert call["type"] == "function" and call["function"]["name"] == "get_weather"
    arguments = json.loads(call["function"]["arguments"])
    assert valid(arguments, TOOLS[0]["function"]["parameters"]), arguments
    assert arguments == {"city": "Paris"}  # what the fake server's reply says
    assert message["content"] is None and message["reasoning_content"].startswith("The user wants the weather")


def test_the_command_prints_one_call_and_the_grammar_admits_only_one() -> None:
    """Each run: one call printed; the server got the template's grammar in the stack's field, and that
    grammar admits the text it sent but no reply without exactly one call."""
    environment = {key: value for key, value in os.environ.items() if key not in PROXY_VARIABLES}
    environment["PYTHONPATH"] = str(ROOT)
    log = io.StringIO()
    with serving(max_requests=len(RUNS), log=log) as server:
        for options, field, format in RUNS:
            command = [sys.executable, "-m", "examples.forced_tool_call", "--base-url", server.base_url, *options]
            run = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120)
            assert (run.returncode, run.stderr) == (0, ""), options
            header, message = run.stdout.split("\n", 1)
            sent = expected_grammar(format)
            stack = "sglang" if "sglang" in options else "vllm"
            assert header == f"# {stack}: {field} ({format}, {len(sent)} characters)"
            check_one_call(json.loads(message))

    prompt = rtcompile.render_prompt("qwen3", forced_tool_call.MESSAGES, tools=TOOLS)
    assert server.prompts == [prompt] * len(RUNS) and prompt.endswith(GENERATION_PROMPT)
    logged = log.getvalue().splitlines()
    for (_, field, format), received, line in zip(RUNS, server.constraints, logged, strict=True):
        assert received is not None and (received.field, received.format) == (field, format)
        text = received.text
        if format == "structural-tag":  # the server keeps the response_format as JSON text
            assert json.loads(text) == json.loads(expected_grammar(format))
        else:
            assert text == expected_grammar(format)
        # The server checked a Lark grammar against its reply itself (llguidance is installed here).
        assert received.admits_reply is (True if format == "lark" else None)
        checked = "admits the reply (llguidance)" if format == "lark" else "not checked"
        assert line == f"{field}: {format}, {len(text)} characters, {checked}"
        assert accepted(text, [FORCED_OUTPUT, *WITHOUT_ONE_CALL], format) == [FORCED_OUTPUT]


@pytest.mark.parametrize("stack", forced_tool_call.STACKS)
@pytest.mark.parametrize("format", forced_tool_call.FORMATS)
def test_each_stack_and_format_puts_the_grammar_where_the_stack_reads_it(stack: str, format: str) -> None:
    sent = expected_grammar(format)
    fields = forced_tool_call.constraint_fields(stack, format, sent)
    if format == "structural-tag":  # both take xgrammar's tag as a response format, as a JSON object
        assert fields == {"response_format": json.loads(sent)} and fields["response_format"]["type"] == "structural_tag"
    elif stack == "vllm":
        assert fields == {"structured_outputs": {"grammar": sent}}
    else:
        assert fields == {"ebnf": sent}


def run_in_process(base_url: str, capsys: pytest.CaptureFixture[str], *options: str) -> tuple[int, str, str]:
    out = io.StringIO()
    status = forced_tool_call.main(["--base-url", base_url, "--timeout", str(WAIT_SECONDS), *options], out=out)
    return status, out.getvalue(), capsys.readouterr().err


def test_every_format_gives_one_call_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    """The formats the command-line runs leave out (GBNF for both stacks, the structural tag for SGLang)."""
    runs = [("vllm", "gbnf"), ("sglang", "gbnf"), ("sglang", "structural-tag")]
    with serving(max_requests=len(runs)) as server:
        for stack, format in runs:
            status, output, errors = run_in_process(server.base_url, capsys, "--stack", stack, "--format", format)
            assert (status, errors) == (0, "")
            check_one_call(json.loads(output.split("\n", 1)[1]))
    assert [(c.field, c.format) for c in server.constraints if c is not None] == [
        ("structured_outputs.grammar", "gbnf"),
        ("ebnf", "gbnf"),
        ("response_format", "structural-tag"),
    ]


def test_a_server_that_ignores_the_grammar_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    """A server that does not know the field generates unconstrained (vLLM only logs that it ignored it):
    the example says so instead of printing a message without the required call."""
    reply = WITHOUT_ONE_CALL[0]
    with serving(output=reply, follow_grammars=False) as server:
        status, output, errors = run_in_process(server.base_url, capsys)
    assert (status, output) == (1, "")
    assert errors == (
        f"forced_tool_call: {server.base_url}: the reply is not one call of get_weather "
        f"(was the grammar ignored?): {reply!r}\n"
    )
    assert server.constraints == [None]


def test_a_refused_grammar_and_an_empty_completion_are_one_line_errors(capsys: pytest.CaptureFixture[str]) -> None:
    # A server whose one reply to a grammar is two calls: the grammar (parallel_tool_calls=False) refuses
    # it, so the server answers 400, and the example passes the server's reason on.
    with serving(forced_output=CANNED_OUTPUT) as server:
        status, output, errors = run_in_process(server.base_url, capsys)
    assert (status, output) == (1, "") and errors.count("\n") == 1
    assert errors.startswith(f"forced_tool_call: {server.base_url} answered 400 Bad Request: ")
    assert "does not admit this server's one reply to a grammar (checked with llguidance)" in errors
    with serving(output="", follow_grammars=False) as server:  # a required call admits no empty reply
        status, output, errors = run_in_process(server.base_url, capsys)
    assert (status, output, errors) == (1, "", f"forced_tool_call: {server.base_url}: the completion has no text\n")


def post(base_url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        base_url + "/v1/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_server_refuses_a_constraint_it_would_not_follow() -> None:
    prompt = "hi" + GENERATION_PROMPT
    lark = expected_grammar("lark")
    no_calls = grammar("qwen3", TOOLS, prefix=GENERATION_PROMPT, tool_choice="none")
    refused: dict[str, dict[str, Any]] = {
        "guided_grammar was removed in vLLM 0.12.0": {"guided_grammar": lark},
        "not structured_outputs.json": {"structured_outputs": {"json": {"type": "object"}}},
        "not regex": {"regex": "a+"},
        "one constraint at a time: the request has structured_outputs.grammar and ebnf": {
            "structured_outputs": {"grammar": lark},
            "ebnf": lark,
        },
        "does not admit this server's one reply": {"structured_outputs": {"grammar": no_calls}},
        "llguidance refuses the grammar": {"ebnf": "start: undefined_rule"},
        "ebnf must be a grammar's text": {"ebnf": "  "},
    }
    with serving(max_requests=len(refused) + 1) as server:
        for reason, fields in refused.items():
            status, body = post(server.base_url, {"prompt": prompt, **fields})
            assert status == 400 and reason in body["error"]["message"], (reason, body)
        status, body = post(server.base_url, {"prompt": prompt, "response_format": {"type": "text"}})
    assert status == 200 and body["choices"][0]["text"] == CANNED_OUTPUT  # a text format constrains nothing
    assert server.prompts == [prompt] and server.constraints == [None]  # a refused request is not recorded


def test_without_llguidance_the_server_records_the_grammar_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The examples run on the standard library and rtcompile alone: there the server cannot read a Lark
    grammar, so it answers and records it unchecked (even one that does not admit its reply)."""
    monkeypatch.setitem(sys.modules, "llguidance", None)  # `import llguidance` raises ImportError
    no_calls = grammar("qwen3", TOOLS, prefix=GENERATION_PROMPT, tool_choice="none")
    with serving() as server:
        status, body = post(server.base_url, {"prompt": "hi" + GENERATION_PROMPT, "ebnf": no_calls})
    assert status == 200 and body["choices"][0]["text"] == FORCED_OUTPUT
    (constraint,) = server.constraints
    assert constraint is not None and (constraint.field, constraint.format, constraint.text) == (
        "ebnf",
        "lark",
        no_calls,
    )
    assert constraint.admits_reply is None
