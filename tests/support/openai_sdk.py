"""What the official openai SDK makes of our chat-completion chunks."""

from __future__ import annotations

from typing import Any

from openai.lib.streaming.chat import ChatCompletionStreamState


def sdk_message(
    state: ChatCompletionStreamState[Any], reasoning_keys: tuple[str, ...] = ("reasoning_content",)
) -> tuple[dict[str, Any], str]:
    """The message and finish reason the SDK accumulated from the chunks `state` was given, with the
    reasoning under each of `reasoning_keys`."""
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
