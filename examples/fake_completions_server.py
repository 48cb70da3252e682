"""A stand-in for a plain completions endpoint (vLLM, SGLang, llama.cpp, TGI all serve one), for trying
`completions_workflow.py` and for testing it without a model.

It answers `POST /v1/completions` with a canned Qwen3 generation (reasoning, then two tool calls),
streamed as the OpenAI completions API streams: server-sent events whose `data:` lines are
`text_completion` objects carrying the next piece of text, split at random places, then `data: [DONE]`.
It checks that the prompt it got ends with Qwen3's generation prompt, as a prompt rendered with
`add_generation_prompt=True` does, and answers 400 otherwise.

It listens on 127.0.0.1 only (port 0: any free port), from the moment it prints its address; it
accepts at most `max_requests` requests (stopping sooner once `timeout` seconds have passed), answers
each of them completely, and exits only when every answer has been sent:

    python examples/fake_completions_server.py --port 8000 &
    python examples/completions_workflow.py --base-url http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOOPBACK = "127.0.0.1"
GENERATION_PROMPT = "<|im_start|>assistant\n"  # what Qwen3's chat template ends the prompt with
POLL_SECONDS = 0.05  # how often `serve` looks whether it should stop

#: What Qwen3 writes when asked for the weather in two cities: it thinks, then calls a tool twice.
CANNED_OUTPUT = (
    "<think>\nThe user wants the weather in Paris and in Tokyo. I will call get_weather once for each city.\n"
    "</think>\n\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo", "unit": "celsius"}}\n</tool_call>'
    "<|im_end|>"
)


def text_pieces(text: str, rng: random.Random, longest: int = 6) -> Iterator[str]:
    """`text` in pieces of 1 to `longest` characters, as a server sends tokens (a piece may split a delimiter)."""
    at = 0
    while at < len(text):
        size = rng.randint(1, longest)
        yield text[at : at + size]
        at += size


class FakeCompletionsServer(ThreadingHTTPServer):
    """The server: what it streams, and the prompts it was sent (`prompts`, in the order they came).

    `done=False` leaves out the closing `data: [DONE]`, as a server that dies mid-answer would (for
    testing that a client notices)."""

    # Handler threads are joined when the server closes (ThreadingHTTPServer makes them daemons, which
    # `server_close` does not wait for: the process would exit, and cut the stream, while one is writing).
    daemon_threads = False

    def __init__(
        self,
        port: int = 0,
        *,
        output: str = CANNED_OUTPUT,
        max_requests: int = 1,
        seed: int | None = None,
        done: bool = True,
    ) -> None:
        super().__init__((LOOPBACK, port), CompletionsHandler)
        self.output = output
        self.done = done
        self.max_requests = max_requests
        self.rng = random.Random(seed)
        self.prompts: list[str] = []
        self.served = 0  # connections accepted
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def split_output(self) -> list[str]:
        with self._lock:  # requests are handled in threads; one Random is not thread-safe
            return list(text_pieces(self.output, self.rng))

    def serve(self, timeout: float) -> None:
        """Accept requests until `max_requests` have come, `timeout` seconds have passed or `stop()` is
        called; then close, which waits until every answer has been streamed to its end."""
        deadline = time.monotonic() + timeout
        try:
            while self.served < self.max_requests and not self._stopping.is_set():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self.timeout = min(remaining, POLL_SECONDS)  # how long handle_request waits for a connection
                self.handle_request()
        finally:
            self.server_close()

    def stop(self) -> None:
        """Make `serve` return within `POLL_SECONDS` (from another thread)."""
        self._stopping.set()

    def process_request(self, request: Any, client_address: Any) -> None:
        self.served += 1
        super().process_request(request, client_address)


class CompletionsHandler(BaseHTTPRequestHandler):
    server: FakeCompletionsServer
    timeout = 10  # seconds a client may stall reading or writing before its connection is dropped

    def do_POST(self) -> None:  # noqa: N802 - the name http.server dispatches to
        if self.path != "/v1/completions":
            self._json(404, {"error": {"message": f"no such endpoint: {self.path}", "type": "invalid_request_error"}})
            return
        try:
            request = json.loads(self.rfile.read(max(0, int(self.headers.get("Content-Length", "0")))))
        except (ValueError, UnicodeDecodeError):
            self._json(400, {"error": {"message": "the body is not JSON", "type": "invalid_request_error"}})
            return
        prompt = request.get("prompt") if isinstance(request, dict) else None
        if not isinstance(prompt, str) or not prompt.endswith(GENERATION_PROMPT):
            message = f"the prompt must be a string ending with the generation prompt {GENERATION_PROMPT!r}"
            self._json(400, {"error": {"message": message, "type": "invalid_request_error"}})
            return
        self.server.prompts.append(prompt)
        model = str(request.get("model", "qwen3"))
        completion_id = f"cmpl-{len(self.server.prompts)}"
        created = int(time.time())
        pieces = self.server.split_output()
        if not request.get("stream"):
            choice = {"text": "".join(pieces), "index": 0, "logprobs": None, "finish_reason": "stop"}
            self._json(200, _completion(completion_id, created, model, choice))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()  # HTTP/1.0: the stream ends when the connection closes
        for piece in pieces:
            choice = {"text": piece, "index": 0, "logprobs": None, "finish_reason": None}
            self._event(json.dumps(_completion(completion_id, created, model, choice)))
        last = {"text": "", "index": 0, "logprobs": None, "finish_reason": "stop"}  # as OpenAI ends a stream
        self._event(json.dumps(_completion(completion_id, created, model, last)))
        if self.server.done:
            self._event("[DONE]")

    def do_GET(self) -> None:  # noqa: N802
        self._json(404, {"error": {"message": "POST /v1/completions is all there is", "type": "invalid_request_error"}})

    def _event(self, data: str) -> None:
        self.wfile.write(f"data: {data}\n\n".encode())
        self.wfile.flush()

    def _json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        pass  # quiet: the client prints what matters


def _completion(completion_id: str, created: int, model: str, choice: dict[str, Any]) -> dict[str, Any]:
    return {"id": completion_id, "object": "text_completion", "created": created, "model": model, "choices": [choice]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    parser.add_argument("--max-requests", type=int, default=1, help="requests to serve before stopping (default 1)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to serve at most (default 60)")
    parser.add_argument("--seed", type=int, default=None, help="seed for where the output is split")
    args = parser.parse_args(argv)
    try:
        server = FakeCompletionsServer(args.port, max_requests=args.max_requests, seed=args.seed)
    except OSError as error:
        print(f"fake_completions_server: cannot listen on {LOOPBACK}:{args.port}: {error.strerror}", file=sys.stderr)
        return 1
    print(f"serving {server.base_url}/v1/completions", flush=True)
    try:
        server.serve(args.timeout)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
