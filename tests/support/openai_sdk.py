"""What the official openai SDK makes of our chat-completion chunks."""

from __future__ import annotations

from typing import Any

from openai.lib.streaming.chat import ChatCompletionStreamState


def sdk_message(state: ChatCompletionStreamState[Any]) -> tuple[dict[str, Any], str]:
    """The message and finish reason the SDK accumulated from the chunks `state` was given."""
    choice = state.get_final_completion().choices[0]
    message = choice.message
    result: dict[str, Any] = {
        "role": message.role,
        "content": message.content,
        "reasoning_content": getattr(message, "reasoning_content", None),
    }
    if message.tool_calls:
        result["tool_calls"] = [
            {"id": c.id, "type": c.type, "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in message.tool_calls
        ]
    return result, choice.finish_reason
