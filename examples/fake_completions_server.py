"""A stand-in for a plain completions endpoint (vLLM, SGLang, llama.cpp, TGI all serve one), for trying
`completions_workflow.py` and `forced_tool_call.py` and for testing them without a model.

It answers `POST /v1/completions` with a canned Qwen3 generation (reasoning, then two tool calls),
streamed as the OpenAI completions API streams: server-sent events whose `data:` lines are
`text_completion` objects carrying the next piece of text, split at random places, then `data: [DONE]`
(or as one `text_completion` without `"stream": true`). It checks that the prompt it got ends with
Qwen3's generation prompt, as a prompt rendered with `add_generation_prompt=True` does, and answers 400
otherwise.

A request may carry a grammar in the fields vLLM and SGLang read on this endpoint (see
`forced_tool_call.py`): `"structured_outputs": {"grammar": ...}` or `{"structural_tag": ...}` (vLLM),
`"ebnf": ...` (SGLang), `"response_format": {"type": "structural_tag", ...}` (both). Then the reply is
what Qwen3 writes when the grammar forces a single tool call (`FORCED_OUTPUT`), and the server records
the grammar (`FakeCompletionsServer.constraints`). A Lark grammar is also checked against that reply
with llguidance when llguidance is installed (it is optional here): a grammar that does not admit the
reply, or that llguidance refuses, is answered with 400, as no constrained model could have written it.
Fields that would constrain the output in another way (a regex, a JSON schema), more than one of them,
or vLLM's `guided_*` fields (removed in vLLM 0.12.0, which now ignores them) are answered with 400 too:
a fake that ignored them would hide the mistake a real server would punish with unconstrained output.

It listens on 127.0.0.1 only (port 0: any free port), from the moment it prints its address; it
accepts at most `max_requests` requests (stopping sooner once `timeout` seconds have passed), answers
each of them completely, and exits only when every answer has been sent:

    python examples/fake_completions_server.py --port 8000 &
    python examples/completions_workflow.py --base-url http://127.0.0.1:8000

or, with a grammar that forces a tool call:

    python examples/fake_completions_server.py --port 8000 &
    python -m examples.forced_tool_call --base-url http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import IO, Any

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

#: What Qwen3 writes under a grammar that forces one tool call (tool_choice="required",
#: parallel_tool_calls=False) when asked for the weather in Paris. It ends at the call: the model's next
#: token is its end of turn, a special token that a server leaves out of the text. Only `city` is given,
#: so a get_weather that has no `unit` (the README's) admits it too.
FORCED_OUTPUT = (
    "<think>\nThe user wants the weather in Paris, and I have to answer with a tool call: get_weather.\n"
    "</think>\n\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)

# Request fields that constrain the output other than by a grammar this server follows. vLLM (0.12.0 and
# later) reads `structured_outputs.{json,regex,choice,json_object}`; SGLang reads `json_schema` and `regex`.
OTHER_STRUCTURED_OUTPUTS = ("json", "regex", "choice", "json_object")
OTHER_SGLANG_FIELDS = ("json_schema", "regex")
GBNF_RULE = re.compile(r"^\s*[A-Za-z][\w-]*\s*::=", re.MULTILINE)  # `root ::= ...`: no Lark rule looks so


class RequestError(ValueError):
    """A request this server answers with 400 (the message says why)."""


@dataclass
class Constraint:
    """The grammar a request carried: where (`field`, e.g. "structured_outputs.grammar" or "ebnf"), its
    format ("lark", "gbnf" or "structural-tag"), its text (a structural tag as JSON text), and whether it
    admits the reply (None: not checked, for a format other than Lark or without llguidance)."""

    field: str
    format: str
    text: str
    admits_reply: bool | None = None


def request_constraint(request: dict[str, Any]) -> Constraint | None:
    """The grammar `request` carries, if any. Raises `RequestError` for a constraint this server would
    not follow (see the module's docstring)."""
    removed = sorted(key for key in request if key.startswith("guided_"))
    if removed:
        raise RequestError(
            f"{removed[0]} was removed in vLLM 0.12.0, which ignores it: send "
            '"structured_outputs": {"grammar": ...} (vLLM) or "ebnf": ... (SGLang)'
        )
    found: list[Constraint] = []
    outputs = request.get("structured_outputs")
    if outputs is not None:
        if not isinstance(outputs, dict):
            raise RequestError("structured_outputs must be an object")
        other = [key for key in OTHER_STRUCTURED_OUTPUTS if outputs.get(key) is not None]
        if other:
            raise RequestError(f"this fake server follows grammars only, not structured_outputs.{other[0]}")
        if outputs.get("grammar") is not None:
            found.append(_grammar("structured_outputs.grammar", outputs["grammar"]))
        if outputs.get("structural_tag") is not None:
            text = outputs["structural_tag"]
            if not isinstance(text, str):  # vLLM's StructuredOutputsParams.structural_tag is a string
                raise RequestError("structured_outputs.structural_tag must be a string (the tag as JSON text)")
            found.append(Constraint("structured_outputs.structural_tag", "structural-tag", text))
    other = [key for key in OTHER_SGLANG_FIELDS if request.get(key) is not None]
    if other:
        raise RequestError(f"this fake server follows grammars only, not {other[0]}")
    if request.get("ebnf") is not None:
        found.append(_grammar("ebnf", request["ebnf"]))
    response_format = request.get("response_format")
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind == "structural_tag":
        found.append(Constraint("response_format", "structural-tag", json.dumps(response_format)))
    elif response_format is not None and kind != "text":  # {"type": "text"} constrains nothing
        raise RequestError("this fake server follows grammars only: response_format must be a structural tag")
    if len(found) > 1:
        raise RequestError(f"one constraint at a time: the request has {' and '.join(c.field for c in found)}")
    return found[0] if found else None


def _grammar(field: str, text: Any) -> Constraint:
    if not isinstance(text, str) or not text.strip():
        raise RequestError(f"{field} must be a grammar's text")
    return Constraint(field, "gbnf" if GBNF_RULE.search(text) else "lark", text)


def lark_admits(grammar: str, text: str) -> bool | None:
    """Whether the Lark grammar admits `text` whole, read byte by byte by llguidance (the library vLLM's
    and SGLang's llguidance backends run); None when llguidance is not installed. Raises `RequestError`
    for a grammar llguidance refuses."""
    try:
        import llguidance
    except ImportError:
        return None
    tokenizer = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()), slices=[])
    compiled = llguidance.LLMatcher.grammar_from_lark(grammar)
    error = llguidance.LLMatcher.validate_grammar(compiled, tokenizer)
    if error:
        raise RequestError(f"llguidance refuses the grammar: {error}")
    matcher = llguidance.LLMatcher(tokenizer, compiled, log_level=0)
    return matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()


class _ByteTokenizer:
    """A vocabulary of the 256 bytes and an end token: every text is one token per byte, so a grammar
    admits a text exactly when it admits its bytes (a model's tokenizer would only group them)."""

    eos_token_id = 256
    bos_token_id = None
    tokens = [bytes([byte]) for byte in range(256)] + [b"<eos>"]
    special_token_ids = [256]

    def __call__(self, text: bytes) -> list[int]:
        return list(text)


def text_pieces(text: str, rng: random.Random, longest: int = 6) -> Iterator[str]:
    """`text` in pieces of 1 to `longest` characters, as a server sends tokens (a piece may split a delimiter)."""
    at = 0
    while at < len(text):
        size = rng.randint(1, longest)
        yield text[at : at + size]
        at += size


class FakeCompletionsServer(ThreadingHTTPServer):
    """The server: what it streams, and the prompts it was sent (`prompts`, in the order they came) with
    the grammar each carried (`constraints`, None for none).

    `output` answers a request without a grammar, `forced_output` one with a grammar. `follow_grammars=False`
    ignores the grammar fields, as a server that does not know them does (vLLM logs a warning and
    generates unconstrained). `done=False` leaves out the closing `data: [DONE]`, as a server that dies
    mid-answer would (for testing that a client notices). `log` gets a line for each grammar received."""

    # Handler threads are joined when the server closes (ThreadingHTTPServer makes them daemons, which
    # `server_close` does not wait for: the process would exit, and cut the stream, while one is writing).
    daemon_threads = False

    def __init__(
        self,
        port: int = 0,
        *,
        output: str = CANNED_OUTPUT,
        forced_output: str = FORCED_OUTPUT,
        follow_grammars: bool = True,
        max_requests: int = 1,
        seed: int | None = None,
        done: bool = True,
        log: IO[str] | None = None,
    ) -> None:
        super().__init__((LOOPBACK, port), CompletionsHandler)
        self.output = output
        self.forced_output = forced_output
        self.follow_grammars = follow_grammars
        self.done = done
        self.log = log
        self.max_requests = max_requests
        self.rng = random.Random(seed)
        self.prompts: list[str] = []
        self.constraints: list[Constraint | None] = []
        self.served = 0  # connections accepted
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def split_output(self, output: str) -> list[str]:
        with self._lock:  # requests are handled in threads; one Random is not thread-safe
            return list(text_pieces(output, self.rng))

    def record(self, prompt: str, constraint: Constraint | None) -> int:
        """Keep what a request carried; its number, from 1."""
        with self._lock:  # both lists in step, whatever the order the handler threads come in
            self.prompts.append(prompt)
            self.constraints.append(constraint)
            return len(self.prompts)

    def reply_to(self, request: dict[str, Any]) -> tuple[str, Constraint | None]:
        """The text that answers `request`, and the grammar it carried (checked against that text where
        it can be). Raises `RequestError` for a constraint this server will not follow, and for a grammar
        that does not admit the text."""
        constraint = request_constraint(request) if self.follow_grammars else None
        if constraint is None:
            return self.output, None
        if constraint.format == "lark":
            constraint.admits_reply = lark_admits(constraint.text, self.forced_output)
            if constraint.admits_reply is False:
                raise RequestError(
                    f"the grammar in {constraint.field} does not admit this server's one reply to a grammar "
                    f"(checked with llguidance): {self.forced_output!r}"
                )
        if self.log is not None:
            checked = {True: "admits the reply (llguidance)", None: "not checked"}[constraint.admits_reply]
            print(
                f"{constraint.field}: {constraint.format}, {len(constraint.text)} characters, {checked}",
                file=self.log,
                flush=True,
            )
        return self.forced_output, constraint

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
        try:
            output, constraint = self.server.reply_to(request)
        except RequestError as error:
            self._json(400, {"error": {"message": str(error), "type": "invalid_request_error"}})
            return
        completion_id = f"cmpl-{self.server.record(prompt, constraint)}"
        model = str(request.get("model", "qwen3"))
        created = int(time.time())
        pieces = self.server.split_output(output)
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
        server = FakeCompletionsServer(args.port, max_requests=args.max_requests, seed=args.seed, log=sys.stdout)
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
