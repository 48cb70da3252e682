"""Parsed messages as OpenAI-compatible assistant messages.

A parsed message carries the template's own keys (`thinking`, `tool_plan`, tool calls whose `arguments`
are dicts); a client that sent a rendered prompt to a plain completions endpoint needs what the Chat
Completions API would have returned: `content`, `reasoning_content` and `tool_calls` with `id`s and
`arguments` as a JSON string. `OpenAIRoles` says which message field plays which part (derive it from a
template with `rtcompile.openai_roles`); `to_openai` converts. Nothing here changes parsing.

Lifted into generated modules, so it uses the standard library only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias

OpenAIRegionText: TypeAlias = "Literal['verbatim', 'stripped']"  # a string: see below
# The key (or keys) a message's reasoning is sent under: clients disagree. DeepSeek's API, LiteLLM and the
# Vercel AI SDK read `reasoning_content`; vLLM's OpenAI server sends `reasoning`. A tuple sends it under both.
ReasoningKey: TypeAlias = "str | tuple[str, ...]"  # a string: see above

#: The reasoning keys `reasoning_key` may name.
OPENAI_REASONING_KEYS: tuple[str, ...] = ("reasoning_content", "reasoning")


class _OpenAIRecord:
    """Value semantics (equality, hash, repr) for the small records below, from their `__slots__`: what a
    frozen dataclass gives, without importing `dataclasses`, which would double a generated module's
    import time."""

    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _OpenAIRecord)
            and type(other) is type(self)
            and self._values() == other._values()
        )

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={value!r}"
            for name, value in zip(self.__slots__, self._values(), strict=True)
        )
        return f"{type(self).__name__}({fields})"


class OpenAIField(_OpenAIRecord):
    """One message field that the OpenAI message reads, and how the parser builds its value.

    `to_openai` needs only `name`. The streaming adapter (`openai_stream.DeltaStream`) needs the rest to know,
    while a region is still open, which text the final value is certain to contain:

    * `repeats` / `join`: each region's value is appended to a list, or to a string after `join`
      (the template's `repeats` and `join`); otherwise a later region replaces the value.
    * `region_text`: a region's value is its text, `"verbatim"` or `"stripped"` (str.strip at close);
      None when only the close knows it (another content parser, or a transform).
    * `has_default` / `default`: the template's `defaults` entry for the field, if it has one.
    * `name_capture` / `id_capture` (tool calls only): the open delimiter's capture groups that become a
      call's function name and id, when each region is one call. With the parser's `captures` option the
      stream then announces a call (id, type, name) as soon as its region opens.
    """

    # In the constructor's order, which repr() follows: not sorted.
    __slots__ = (  # noqa: RUF023
        "name",
        "repeats",
        "join",
        "region_text",
        "has_default",
        "default",
        "name_capture",
        "id_capture",
    )

    def __init__(
        self,
        name: str,
        repeats: bool = False,
        join: str | None = None,
        region_text: OpenAIRegionText | None = None,
        has_default: bool = False,
        default: Any = None,
        name_capture: str | None = None,
        id_capture: str | None = None,
    ) -> None:
        self.name = name
        self.repeats = repeats
        self.join = join
        self.region_text = region_text
        self.has_default = has_default
        self.default = default
        self.name_capture = name_capture
        self.id_capture = id_capture


class OpenAIRoles(_OpenAIRecord):
    """Which message field is the content, which the reasoning and which the tool calls (None: no such field)."""

    __slots__ = ("content", "reasoning", "tool_calls")

    def __init__(
        self,
        content: OpenAIField | None = OpenAIField("content"),  # noqa: B008 - records are never changed
        reasoning: OpenAIField | None = OpenAIField("reasoning_content"),  # noqa: B008
        tool_calls: OpenAIField | None = OpenAIField("tool_calls"),  # noqa: B008
    ) -> None:
        names = [
            field.name
            for field in (content, reasoning, tool_calls)
            if field is not None
        ]
        if len(set(names)) != len(names):
            raise ValueError(
                f"content, reasoning and tool calls must be different message fields, got {names}"
            )
        self.content = content
        self.reasoning = reasoning
        self.tool_calls = tool_calls


def openai_reasoning_keys(reasoning_key: ReasoningKey) -> tuple[str, ...]:
    """The keys the reasoning is sent under: `reasoning_key` as a tuple, checked."""
    keys = (reasoning_key,) if isinstance(reasoning_key, str) else tuple(reasoning_key)
    if (
        not keys
        or len(set(keys)) != len(keys)
        or any(k not in OPENAI_REASONING_KEYS for k in keys)
    ):
        raise ValueError(
            f"reasoning_key must be one of {OPENAI_REASONING_KEYS} or a tuple of them, "
            f"got {reasoning_key!r}"
        )
    return keys


def random_call_id() -> str:
    """A fresh tool-call id shaped like the API's: `call_` and 24 random hex digits."""
    return "call_" + os.urandom(12).hex()


def call_id_factory(seed: int | None = None) -> Callable[[], str]:
    """Tool-call ids: random ones, or with `seed` the same sequence every time (tests, reproducible logs)."""
    if seed is None:
        return random_call_id
    import random  # only for reproducible ids: most callers never pay for the import

    rng = random.Random(seed)
    return lambda: f"call_{rng.getrandbits(96):024x}"


def openai_text(value: Any) -> str | None:
    """A content or reasoning value as the API carries it: text, or None when there is none.

    An empty string is None too (the API sends `content: null` rather than `""` beside tool calls); a value
    that is not text (a field with another content parser, or repeating without `join`) is sent as JSON.
    """
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def openai_arguments(arguments: Any) -> str:
    """Tool-call arguments as the API sends them: a JSON string (a string from the model stays as it is)."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def openai_call_items(value: Any) -> list[Any]:
    """The tool calls in a tool-call field's value: a list of calls, one call, or None.

    A field with `repeats` and `transform_each` holds one list of calls per region; those are flattened.
    """
    if value is None:
        return []
    if isinstance(value, dict):
        return [value]
    if not isinstance(value, list):
        # ValueError, not TypeError: to_openai's documented error for a malformed message.
        raise ValueError(  # noqa: TRY004
            f"tool calls must be a list of calls, got {type(value).__name__}"
        )
    items: list[Any] = []
    for item in value:
        items.extend(item if isinstance(item, list) else [item])
    return items


def openai_tool_call(
    call: Any, index: int, new_id: Callable[[], str]
) -> dict[str, Any]:
    """One parsed tool call (`{"type": "function", "function": {"name", "arguments"}}`, or a bare
    `{"name", "arguments"}`) as an API tool call. Its `id` is the one the model wrote, if the template
    captured one, else `new_id()`."""
    if not isinstance(call, dict):
        # ValueError, not TypeError: to_openai's documented error for a malformed message.
        raise ValueError(f"tool call {index} is {type(call).__name__}, not an object")  # noqa: TRY004
    function = call.get("function", call)
    if not isinstance(function, dict):
        # ValueError, not TypeError: to_openai's documented error for a malformed message.
        raise ValueError(  # noqa: TRY004
            f"tool call {index}: 'function' is {type(function).__name__}, not an object"
        )
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(
            f"tool call {index} has no function name (keys: {sorted(map(str, function))})"
        )
    arguments = (
        openai_arguments(function["arguments"]) if "arguments" in function else "{}"
    )
    captured = call.get("id")
    call_id = captured if isinstance(captured, str) and captured else new_id()
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def to_openai(
    message: Mapping[str, Any],
    *,
    roles: OpenAIRoles = OpenAIRoles(),  # noqa: B008 - never changed, so one shared default is safe
    id_factory: Callable[[], str] | None = None,
    reasoning_key: ReasoningKey = "reasoning_content",
) -> dict[str, Any]:
    """A parsed message as an OpenAI chat-completion assistant message.

    Returns `{"role": "assistant", "content", "reasoning_content", "tool_calls"}`: the texts are str or None,
    `tool_calls` (left out when there are none, as the API does) are `{"id", "type": "function",
    "function": {"name", "arguments"}}` with `arguments` a JSON string. Ids the model wrote are kept;
    the others come from `id_factory` (default: random `call_...` ids). Other message keys are dropped.
    `roles` says which field is which (`rtcompile.openai_roles(template)`; a generated module's default is
    its template's). `reasoning_key` names the key the reasoning goes under: `"reasoning_content"`,
    `"reasoning"` (vLLM's server), or both as a tuple; the template's own field (`thinking`, `tool_plan`,
    ...) is read whatever its name.

    Raises:
        ValueError: a tool call that is not an object or has no function name; an unknown `reasoning_key`.
    """
    return openai_message(message, roles, id_factory, reasoning_key)


def openai_message(
    message: Mapping[str, Any],
    roles: OpenAIRoles,
    id_factory: Callable[[], str] | None,
    reasoning_key: ReasoningKey,
) -> dict[str, Any]:
    """`to_openai` without defaults (what a generated module's own `to_openai` calls)."""
    keys = openai_reasoning_keys(reasoning_key)
    new_id = id_factory if id_factory is not None else random_call_id
    content = (
        None if roles.content is None else openai_text(message.get(roles.content.name))
    )
    reasoning = (
        None
        if roles.reasoning is None
        else openai_text(message.get(roles.reasoning.name))
    )
    result: dict[str, Any] = {"role": "assistant", "content": content}
    for key in keys:
        result[key] = reasoning
    if roles.tool_calls is not None:
        items = openai_call_items(message.get(roles.tool_calls.name))
        calls = [
            openai_tool_call(call, index, new_id) for index, call in enumerate(items)
        ]
        if calls:
            result["tool_calls"] = calls
    return result
