"""The client-side workflow, end to end: render a Qwen3 prompt yourself, send it to a plain completions
endpoint, and stream back what the Chat Completions API would have sent.

1. Compile the bundled Qwen3 response template into a parser module and import it (a real client
   vendors the module: `rtcompile qwen3 -o qwen3_parser.py`, then `import qwen3_parser`).
2. Render the chat prompt, tools included, exactly as transformers' `apply_chat_template` would.
3. POST it to `/v1/completions` with `stream: true` and read the server-sent events.
4. Feed each piece of text to the parser and turn its events into `chat.completion.chunk`s, printed as
   they arrive, as `data:` lines: what an OpenAI-compatible proxy would forward to its client.
5. At the end, print the whole OpenAI assistant message (`to_openai`), the one the chunks add up to.

Only the standard library talks to the server (`urllib.request`). Anything short of a whole completion
is an error (one line on stderr, exit status 1): an HTTP error, a stream that ends without
`data: [DONE]`, a completion with no text. Try it against the fake server:

    python examples/fake_completions_server.py --port 8000 &
    python examples/completions_workflow.py --base-url http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import IO, Any

import rtcompile

TEMPLATE = "qwen3"  # a bundled template: its response template and its model's chat template
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    }
]
MESSAGES = [{"role": "user", "content": "What is the weather like in Paris and in Tokyo?"}]
RETRY_SECONDS = 0.1  # how soon a refused connection is tried again


@functools.cache
def compile_parser(name: str) -> ModuleType:
    """Step 1: the template's generated parser module, written to a temporary file and imported (once)."""
    with tempfile.TemporaryDirectory(prefix="rtcompile-example-") as directory:
        path = Path(directory) / f"{name}_parser.py"
        path.write_text(rtcompile.compile_template(name), encoding="utf-8")
        spec = importlib.util.spec_from_file_location(f"{name}_parser", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def server_sent_events(lines: Iterable[bytes]) -> Iterator[str]:
    """The `data` of each server-sent event (its `data:` lines joined by newlines; other fields ignored)."""
    data: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[len("data:") :].removeprefix(" "))
        elif not line and data:  # a blank line ends the event
            yield "\n".join(data)
            data = []
    if data:
        yield "\n".join(data)


class CompletionError(Exception):
    """The endpoint answered, but not with a whole completion: the stream broke off before `data: [DONE]`,
    an event was an error or not a completion, or there was no text at all."""


def open_stream(request: urllib.request.Request, *, timeout: float) -> Any:
    """The response to `request`; a server that refuses the connection is asked again until `timeout`
    seconds have passed (one started in the background a moment ago may not listen yet)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return urllib.request.urlopen(request, timeout=timeout)
        except urllib.error.URLError as error:
            refused = isinstance(error.reason, ConnectionRefusedError)
            if not refused or time.monotonic() + RETRY_SECONDS > deadline:
                raise
        time.sleep(RETRY_SECONDS)


def stream_completion(base_url: str, model: str, prompt: str, *, timeout: float) -> Iterator[tuple[str, str | None]]:
    """Step 3: the completion's text pieces as the endpoint streams them, each with its `finish_reason`.

    Raises `CompletionError` when the stream ends without `data: [DONE]` (the server or the connection
    died: what arrived is not the whole answer) or carries something other than completions."""
    body = {"model": model, "prompt": prompt, "stream": True, "max_tokens": 1024}
    request = urllib.request.Request(
        base_url.rstrip("/") + "/v1/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
    )
    with open_stream(request, timeout=timeout) as response:
        for data in server_sent_events(response):
            if data == "[DONE]":
                return
            event = json.loads(data)
            if not isinstance(event, dict) or not event.get("choices"):
                raise CompletionError(f"the stream sent something other than a completion: {data[:200]}")
            choice = event["choices"][0]
            yield choice.get("text") or "", choice.get("finish_reason")
    raise CompletionError("the stream ended without data: [DONE]; the answer is incomplete")


def forward(chunks: list[dict[str, Any]], out: IO[str]) -> None:
    """Step 4's output: each chunk as the `data:` line of a server-sent event."""
    for chunk in chunks:
        out.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n")
    out.flush()


def run(base_url: str, model: str, *, timeout: float, out: IO[str]) -> dict[str, Any]:
    qwen3 = compile_parser(TEMPLATE)
    prompt = rtcompile.render_prompt(TEMPLATE, MESSAGES, tools=TOOLS)  # step 2

    # Step 4. captures=True: where the open delimiter names the call (Kimi's `functions.NAME:0`), its id
    # and name go out as soon as it opens. Qwen3 writes the name inside the JSON, so each call goes out
    # whole when its </tool_call> arrives; reasoning and content stream as they come.
    parser = qwen3.ResponseParser(prefix=prompt, tools=TOOLS, captures=True)
    # One seed for the stream and the final message, so both give each tool call the same (random) id.
    seed = int.from_bytes(os.urandom(8), "big")
    deltas = qwen3.DeltaStream(qwen3.OPENAI_ROLES, id_factory=qwen3.call_id_factory(seed))
    writer = qwen3.ChatCompletionChunks(deltas, model=model)
    forward(writer.feed(parser.initial_events), out)
    finish_reason = None
    received = 0
    for text, reason in stream_completion(base_url, model, prompt, timeout=timeout):
        forward(writer.feed(parser.feed(text)), out)
        finish_reason = reason or finish_reason
        received += len(text)
    if not received:
        raise CompletionError("the completion has no text")
    message, events = parser.finalize()
    forward(writer.finish(events, truncated=finish_reason == "length"), out)
    out.write("data: [DONE]\n\n")

    reply: dict[str, Any] = qwen3.to_openai(message, id_factory=qwen3.call_id_factory(seed))  # step 5
    out.write(json.dumps(reply, indent=2, ensure_ascii=False) + "\n")
    return reply


def main(argv: list[str] | None = None, out: IO[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    arguments.add_argument("--base-url", default="http://127.0.0.1:8000", help="the server (default: %(default)s)")
    arguments.add_argument("--model", default="Qwen/Qwen3-8B", help="the model name to send (default: %(default)s)")
    arguments.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the server")
    args = arguments.parse_args(argv)
    try:
        run(args.base_url, args.model, timeout=args.timeout, out=out or sys.stdout)
    except urllib.error.HTTPError as error:
        detail = error.read().decode("utf-8", "replace").strip()
        print(f"completions_workflow: {args.base_url} answered {error.code} {error.reason}: {detail}", file=sys.stderr)
        return 1
    except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
        reason = getattr(error, "reason", error)
        print(f"completions_workflow: cannot reach {args.base_url}: {reason}", file=sys.stderr)
        return 1
    except CompletionError as error:
        print(f"completions_workflow: {args.base_url}: {error}", file=sys.stderr)
        return 1
    except ValueError as error:  # the output does not parse (a malformed tool call, say), or a bad event
        print(f"completions_workflow: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
