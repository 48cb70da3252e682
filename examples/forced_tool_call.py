"""A forced tool call, end to end: one Qwen3 template gives both the grammar that makes the model call a
tool and the parser that turns its reply into an OpenAI message.

1. Compile the bundled Qwen3 response template into a parser module and import it (a real client
   vendors the module: `rtcompile qwen3 -o qwen3_parser.py`, then `import qwen3_parser`).
2. Render the chat prompt, tools included, exactly as transformers' `apply_chat_template` would.
3. Build the grammar with the module's `grammar()`, `tool_choice="required"` and
   `parallel_tool_calls=False`: every text it admits parses into exactly one call of a given tool, with
   arguments valid for its schema (the model may still think first).
4. POST prompt and grammar to `/v1/completions`, in the field the serving stack reads there:

   vLLM (0.12.0 and later; its `guided_grammar` was removed in 0.12.0 and is now ignored):
     Lark, GBNF       "structured_outputs": {"grammar": GRAMMAR}
     structural tag   "response_format": TAG (the tag's JSON object; also
                      "structured_outputs": {"structural_tag": TAG as JSON text})
     Lark is llguidance's dialect, read by vLLM's `guidance` backend (`vllm serve ...
     --structured-outputs-config.backend guidance`); GBNF and structural tags by its default, xgrammar.
   SGLang:
     Lark, GBNF       "ebnf": GRAMMAR
     structural tag   "response_format": TAG (the tag's JSON object)
     Lark needs `--grammar-backend llguidance` (llguidance reads Lark or GBNF there); the default
     backend, xgrammar, reads GBNF and structural tags.

5. Parse `choices[0].text` with the module's `parse_response` and print the OpenAI assistant message
   (`to_openai`). A reply without exactly one call of a given tool is an error: the server did not follow
   the grammar (an unknown field is ignored, not refused, by vLLM).

Only the standard library talks to the server (`urllib.request`). A failure is one line on stderr and
exit status 1. Try it against the fake server, which checks a Lark grammar against its reply with
llguidance when that is installed:

    python examples/fake_completions_server.py --port 8000 &
    python -m examples.forced_tool_call --base-url http://127.0.0.1:8000 [--stack sglang] [--format gbnf]
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from typing import IO, Any

import rtcompile
from examples.completions_workflow import TEMPLATE, TOOLS, CompletionError, compile_parser, open_stream

MESSAGES = [{"role": "user", "content": "What is the weather like in Paris?"}]
STACKS = ("vllm", "sglang")
FORMATS = ("lark", "gbnf", "structural-tag")


def constraint_fields(stack: str, format: str, grammar: str) -> dict[str, Any]:
    """Step 4: the request fields that carry `grammar` (of `format`) to `stack`'s /v1/completions."""
    if format == "structural-tag":  # both stacks take xgrammar's tag as an OpenAI-style response format
        return {"response_format": json.loads(grammar)}
    if stack == "vllm":
        return {"structured_outputs": {"grammar": grammar}}
    return {"ebnf": grammar}


def field_path(fields: dict[str, Any]) -> str:
    """Where `constraint_fields` put the grammar, as a dotted path ("structured_outputs.grammar")."""
    ((key, value),) = fields.items()
    return f"{key}.{next(iter(value))}" if key == "structured_outputs" else key


def complete(base_url: str, body: dict[str, Any], *, timeout: float) -> str:
    """The text of the (not streamed) completion `body` asks for."""
    request = urllib.request.Request(
        base_url.rstrip("/") + "/v1/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with open_stream(request, timeout=timeout) as response:
        data = json.loads(response.read())
    choices = data.get("choices") if isinstance(data, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    text = first.get("text") if isinstance(first, dict) else None
    if not isinstance(text, str):
        raise CompletionError(f"the answer is not a completion: {json.dumps(data)[:200]}")
    if not text:
        raise CompletionError("the completion has no text")
    return text


def run(base_url: str, model: str, *, stack: str, format: str, timeout: float, out: IO[str]) -> dict[str, Any]:
    qwen3 = compile_parser(TEMPLATE)  # step 1
    prompt = rtcompile.render_prompt(TEMPLATE, MESSAGES, tools=TOOLS)  # step 2
    # Step 3: the grammar starts where the prompt leaves the parser (after Qwen3's generation prompt).
    grammar = qwen3.grammar(TOOLS, prefix=prompt, tool_choice="required", parallel_tool_calls=False, format=format)
    fields = constraint_fields(stack, format, grammar)
    body = {"model": model, "prompt": prompt, "max_tokens": 1024, **fields}  # step 4
    text = complete(base_url, body, timeout=timeout)

    message = qwen3.parse_response(text, prefix=prompt, tools=TOOLS)  # step 5
    reply: dict[str, Any] = qwen3.to_openai(message)
    calls = reply.get("tool_calls") or []
    names = {tool["function"]["name"] for tool in TOOLS}
    if len(calls) != 1 or calls[0]["function"]["name"] not in names:
        raise CompletionError(
            f"the reply is not one call of {', '.join(sorted(names))} (was the grammar ignored?): {text[:200]!r}"
        )
    out.write(f"# {stack}: {field_path(fields)} ({format}, {len(grammar)} characters)\n")
    out.write(json.dumps(reply, indent=2, ensure_ascii=False) + "\n")
    return reply


def main(argv: list[str] | None = None, out: IO[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    arguments.add_argument("--base-url", default="http://127.0.0.1:8000", help="the server (default: %(default)s)")
    arguments.add_argument("--model", default="Qwen/Qwen3-8B", help="the model name to send (default: %(default)s)")
    arguments.add_argument("--stack", choices=STACKS, default="vllm", help="whose request fields (default: vllm)")
    arguments.add_argument("--format", choices=FORMATS, default="lark", help="the grammar's format (default: lark)")
    arguments.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the server")
    args = arguments.parse_args(argv)
    try:
        run(
            args.base_url, args.model, stack=args.stack, format=args.format, timeout=args.timeout, out=out or sys.stdout
        )
    except urllib.error.HTTPError as error:
        detail = error.read().decode("utf-8", "replace").strip()
        print(f"forced_tool_call: {args.base_url} answered {error.code} {error.reason}: {detail}", file=sys.stderr)
        return 1
    except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
        reason = getattr(error, "reason", error)
        print(f"forced_tool_call: cannot reach {args.base_url}: {reason}", file=sys.stderr)
        return 1
    except CompletionError as error:
        print(f"forced_tool_call: {args.base_url}: {error}", file=sys.stderr)
        return 1
    except ValueError as error:  # the reply does not parse (a malformed tool call, say), or is not JSON
        print(f"forced_tool_call: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
