"""Parser events as OpenAI chat-completion chunk deltas.

`DeltaStream` turns the parser's region events into `choices[0].delta` objects: the role first, then
reasoning (`reasoning_content`, `reasoning` or both: `reasoning_key`) and `content` text pieces, and each
tool call (`index`, `id`, `type`, `function`) when its region closes. Accumulated the way OpenAI clients
do (strings concatenated, tool calls merged by index), the deltas give exactly `to_openai(final_message)`,
for any chunking of the model output.

The parser only settles a value when its region closes, so text is sent as soon as the final message
is certain to contain it, and not before:

* a `"stripped"` region's leading whitespace is dropped and its trailing whitespace held back until
  more text follows (the close-time `str.strip` may remove it);
* a `join` field's separator is sent when the next region opens (the region will close and be joined);
* a region whose value only its close knows (another content parser, a transform) is sent at close;
  a list-valued (repeating, no `join`) text field is sent when the stream finishes.

A field that does not repeat is replaced by a later region of the same field. By default its first
region streams live anyway, since that is what models nearly always write and what users want to see
while the model thinks; if a later region then replaces text already sent, the deltas cannot follow
(there is no retraction in the protocol) and the field is listed in `DeltaStream.diverged`. With
`hold_replaceable=True` such fields are sent only when the stream finishes, and the deltas always
add up to the final message.

Lifted into generated modules, so it uses the standard library only.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypeAlias

from rtcompile.runtime.openai import (
    OpenAIField,
    OpenAIRoles,
    ReasoningKey,
    openai_call_items,
    openai_reasoning_keys,
    openai_text,
    openai_tool_call,
    random_call_id,
)

FinishReason: TypeAlias = (
    "Literal['stop', 'tool_calls', 'length']"  # a string, like OpenAIRegionText
)


class _OpenAIFieldValue:
    """A field's value as the parser builds it from region_close events (its `_store` rule)."""

    def __init__(self, field: OpenAIField) -> None:
        self.field = field
        self.present = field.has_default
        self.value: Any = copy.deepcopy(field.default) if field.has_default else None
        self.regions = 0  # regions of this field opened so far
        self.open = False

    def store(self, value: Any) -> None:
        field = self.field
        if field.join is not None:
            # What join_value does; a non-string makes the parser raise, so it never reaches a message.
            previous = self.value if self.present else None
            self.value = value if previous is None else previous + field.join + value
        elif field.repeats:
            if not self.present:
                self.value = []
            self.value.append(value)
        else:
            self.value = value
        self.present = True

    def final(self) -> Any:
        """The value in the final message (the parser drops empty values of fields without a default)."""
        if not self.present:
            return None
        value = self.value
        if not self.field.has_default and (
            value is None or (isinstance(value, (list, dict, str)) and not value)
        ):
            return None
        return value


class _OpenAITextDeltas:
    """The deltas of one text: `content`, or the reasoning under each of its keys (the same text)."""

    def __init__(
        self, keys: tuple[str, ...], field: OpenAIField, hold_replaceable: bool
    ) -> None:
        self.keys = keys
        self.state = _OpenAIFieldValue(field)
        self.hold_replaceable = hold_replaceable
        self.sent: list[str] = []
        self.in_sync = True  # what was sent is a prefix of everything certain so far
        self.streaming = False  # the open region's text is being sent as it arrives
        # a "stripped" region has seen its first non-whitespace character
        self.region_started = False
        self.region_pending = ""  # trailing whitespace of the open region, held back

    def _sent_text(self) -> str:
        if len(self.sent) > 1:
            self.sent = ["".join(self.sent)]
        return self.sent[0] if self.sent else ""

    def _send(self, text: str, deltas: list[dict[str, Any]]) -> None:
        if text:
            self.sent.append(text)
            deltas.append(dict.fromkeys(self.keys, text))

    def _certain(self) -> str | None:
        """The text the final message is certain to start with, up to the open region; None: not known yet."""
        state, field = self.state, self.state.field
        if field.join is not None:
            if state.present and not isinstance(state.value, str):
                return None  # a non-text default: the parser raises when it joins
            base = state.value if state.present else None
            if state.open:  # the region will close and be joined
                return "" if base is None else base + field.join
            return base or ""
        if (
            field.repeats
            or self.hold_replaceable
            or state.regions > 1
            or (state.regions == 0 and state.present)
        ):
            return None  # a list (sent as JSON at the end), or a value a region may still replace
        if state.regions == 0 or state.open:
            return ""
        return openai_text(state.final()) or ""

    def _region_streams(self) -> bool:
        """Whether the open region's text is certain to be in the final value as it arrives."""
        field = self.state.field
        if field.region_text is None:
            return False
        # A join field's every region; a replacing field's first one, unless replacement is held back.
        return field.join is not None or not (
            field.repeats or self.hold_replaceable or self.state.regions > 1
        )

    def _sync(self, deltas: list[dict[str, Any]]) -> None:
        """Send whatever more is certain now (after an open or a close)."""
        certain = self._certain()
        if certain is None or not self.in_sync:
            return
        sent = self._sent_text()
        if certain.startswith(sent):
            self._send(certain[len(sent) :], deltas)
        else:
            self.in_sync = False  # only with roles that do not describe the template; finish() reports it

    def start(self, deltas: list[dict[str, Any]]) -> None:
        self._sync(deltas)  # a join field's default is certain from the start

    def open(self, deltas: list[dict[str, Any]]) -> None:
        self.state.open = True
        self.state.regions += 1
        self.region_started, self.region_pending = False, ""
        self._sync(deltas)
        self.streaming = (
            self.in_sync and self._certain() is not None and self._region_streams()
        )

    def chunk(self, text: str, deltas: list[dict[str, Any]]) -> None:
        if not self.streaming:
            return
        if self.state.field.region_text == "stripped":
            if not self.region_started:
                text = text.lstrip()
                if not text:
                    return
                self.region_started = True
            held = self.region_pending + text
            text = held.rstrip()
            self.region_pending = held[len(text) :]
        self._send(text, deltas)

    def close(self, value: Any, deltas: list[dict[str, Any]]) -> None:
        self.state.store(value)
        self.state.open = False
        self.streaming = False
        self._sync(deltas)

    def finish(self, deltas: list[dict[str, Any]]) -> bool:
        """Send the rest of the final text; False if what was sent is not a prefix of it."""
        final = openai_text(self.state.final()) or ""
        sent = self._sent_text()
        if not final.startswith(sent):
            return False
        self._send(final[len(sent) :], deltas)
        return True


class _OpenAICallDeltas:
    """The deltas of the tool calls: each call whole, once its region has closed and it is certain; or, when
    the parser reports open-delimiter captures that name the call, its id, type and name when its region
    opens and its arguments when it closes. Either way the first delta of every index carries `id`, `type`
    and `function.name`: clients such as the Vercel AI SDK drop a call whose first delta has no name."""

    def __init__(
        self, field: OpenAIField, hold_replaceable: bool, new_id: Callable[[], str]
    ) -> None:
        self.state = _OpenAIFieldValue(field)
        self.hold_replaceable = hold_replaceable
        self.new_id = new_id
        self.sent: list[Any] = []  # the parsed calls sent, in order
        self.in_sync = True
        # (index, id, name) of a call sent before its close
        self.announced: tuple[int, str, str] | None = None

    def _certain(self) -> list[Any] | None:
        """The calls the final message is certain to start with; None: not known yet."""
        state, field = self.state, self.state.field
        if field.join is not None:
            return None  # joining needs strings: the parser raises before there is a message
        if field.repeats:
            return openai_call_items(state.final())
        if (
            self.hold_replaceable
            or state.regions > 1
            or (state.regions == 0 and state.present)
        ):
            return None
        return (
            [] if state.regions == 0 or state.open else openai_call_items(state.final())
        )

    def _send_from(self, calls: list[Any], deltas: list[dict[str, Any]]) -> None:
        for index in range(len(self.sent), len(calls)):
            announced = self.announced
            if announced is not None and announced[0] == index:
                self.announced = None
                _, announced_id, announced_name = announced
                call = openai_tool_call(calls[index], index, lambda: announced_id)  # noqa: B023 - called right here
                if (call["id"], call["function"]["name"]) != (
                    announced_id,
                    announced_name,
                ):
                    self.in_sync = False  # a close-delimiter capture renamed the call: finish() reports it
                    return
                arguments = {"arguments": call["function"]["arguments"]}
                deltas.append({"tool_calls": [{"index": index, "function": arguments}]})
            else:
                call = openai_tool_call(calls[index], index, self.new_id)
                deltas.append({"tool_calls": [{"index": index, **call}]})
            self.sent.append(calls[index])

    def _announce(
        self, captures: Mapping[str, Any], deltas: list[dict[str, Any]]
    ) -> None:
        """Send the call a region is opening, if its captures name it and every earlier call has been sent."""
        field = self.state.field
        name = (
            captures.get(field.name_capture) if field.name_capture is not None else None
        )
        if not isinstance(name, str) or not name or not self.in_sync:
            return
        if len(self.sent) != len(openai_call_items(self.state.final())):
            return  # earlier calls are not all sent yet: this one's index is not settled
        index = len(self.sent)
        captured_id = (
            captures.get(field.id_capture) if field.id_capture is not None else None
        )
        call_id = (
            captured_id
            if isinstance(captured_id, str) and captured_id
            else self.new_id()
        )
        self.announced = (index, call_id, name)
        header = {"name": name, "arguments": ""}
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call_id,
                        "type": "function",
                        "function": header,
                    }
                ]
            }
        )

    def _sync(self, deltas: list[dict[str, Any]]) -> None:
        calls = self._certain()
        if calls is None or not self.in_sync:
            return
        if calls[: len(self.sent)] != self.sent:
            self.in_sync = False
            return
        try:
            self._send_from(calls, deltas)
        except ValueError:
            if self.state.field.repeats:
                raise  # appended calls stay in the message, so to_openai fails on it too
            # A value a later region may still replace with well-formed calls: finish() decides.

    def start(self, deltas: list[dict[str, Any]]) -> None:
        # a repeating field's default calls are certain from the start
        self._sync(deltas)

    def open(
        self, captures: Mapping[str, Any] | None, deltas: list[dict[str, Any]]
    ) -> None:
        self.state.open = True
        self.state.regions += 1
        self._sync(deltas)
        if captures is not None and self.state.field.repeats:
            self._announce(captures, deltas)

    def close(self, value: Any, deltas: list[dict[str, Any]]) -> None:
        self.state.store(value)
        self.state.open = False
        self._sync(deltas)

    def malformed(self) -> None:
        """A region that failed to parse (the parser's `recover` option): it adds no call."""
        self.state.open = False
        if self.announced is not None:
            self.in_sync = False  # the announced call will not be in the message: finish() reports it

    def finish(self, deltas: list[dict[str, Any]]) -> bool:
        calls = openai_call_items(self.state.final())
        if calls[: len(self.sent)] != self.sent or not self.in_sync:
            return False
        self._send_from(calls, deltas)
        return self.in_sync


class DeltaStream:
    """Chat-completion chunk deltas from a parser's events.

    Feed it the events the parser returns (its `initial_events` first, then those of every `feed`), and
    at the end those of `finalize`, with `finish`. Each call returns the deltas the events caused; once
    finished, `finish_reason` is `"tool_calls"` if a tool call was sent, `"length"` if the caller says the
    generation was cut (`truncated=True`), else `"stop"`. `roles` must describe the template (build it
    with `rtcompile.openai_roles`); tool-call ids the model did not write come from `id_factory`. The
    reasoning goes under `reasoning_key`: `"reasoning_content"`, `"reasoning"`, or both as a tuple (each
    reasoning delta then carries the same text under both keys).
    """

    def __init__(
        self,
        roles: OpenAIRoles,
        *,
        id_factory: Callable[[], str] | None = None,
        hold_replaceable: bool = False,
        reasoning_key: ReasoningKey = "reasoning_content",
    ) -> None:
        self._texts = {
            field.name: _OpenAITextDeltas(keys, field, hold_replaceable)
            for keys, field in (
                (openai_reasoning_keys(reasoning_key), roles.reasoning),
                (("content",), roles.content),
            )
            if field is not None
        }
        self._calls = (
            None
            if roles.tool_calls is None
            else _OpenAICallDeltas(
                roles.tool_calls, hold_replaceable, id_factory or random_call_id
            )
        )
        self._started = False
        self.finished = False
        self.finish_reason: FinishReason | None = None
        # keys whose deltas do not add up to the final message
        self.diverged: list[str] = []

    def feed(self, events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        if self.finished:
            raise RuntimeError("DeltaStream already finished")
        deltas: list[dict[str, Any]] = []
        if not self._started:
            self._started = True
            deltas.append({"role": "assistant"})
            for text in self._texts.values():
                text.start(deltas)
            if self._calls is not None:
                self._calls.start(deltas)
        for event in events:
            self._handle(event, deltas)
        return deltas

    def _handle(self, event: Mapping[str, Any], deltas: list[dict[str, Any]]) -> None:
        name = event.get("field")
        kind = event.get("type")
        target: _OpenAITextDeltas | _OpenAICallDeltas | None = (
            self._texts.get(name) if isinstance(name, str) else None
        )
        if (
            target is None
            and self._calls is not None
            and name == self._calls.state.field.name
        ):
            target = self._calls
        if target is None:
            return
        if kind == "region_open":
            if isinstance(target, _OpenAICallDeltas):
                target.open(event.get("captures"), deltas)
            else:
                target.open(deltas)
        elif kind == "region_close":
            target.close(event.get("value"), deltas)
        elif kind == "region_chunk" and isinstance(target, _OpenAITextDeltas):
            target.chunk(str(event.get("text", "")), deltas)
        elif kind == "region_malformed":
            if isinstance(target, _OpenAICallDeltas):
                target.malformed()
            else:
                target.state.open = target.streaming = False
                # text already sent will not be in it
                target.in_sync = target.in_sync and not target.sent

    def finish(
        self, final_events: Iterable[Mapping[str, Any]] = (), *, truncated: bool = False
    ) -> list[dict[str, Any]]:
        """The deltas of `finalize`'s events and whatever the final message still adds."""
        deltas = self.feed(final_events)
        for text in self._texts.values():
            if not text.finish(deltas):
                self.diverged.extend(text.keys)
        calls_sent = False
        if self._calls is not None:
            if not self._calls.finish(deltas):
                self.diverged.append("tool_calls")
            calls_sent = bool(self._calls.sent)
        self.finished = True
        self.finish_reason = (
            "length" if truncated else "tool_calls" if calls_sent else "stop"
        )
        return deltas


def chat_completion_chunk(
    delta: Mapping[str, Any],
    *,
    completion_id: str,
    created: int,
    model: str,
    finish_reason: str | None = None,
) -> dict[str, Any]:
    """One `chat.completion.chunk` object around a delta (choice 0)."""
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish_reason}],
    }


class ChatCompletionChunks:
    """`DeltaStream` wrapped into full `chat.completion.chunk` dicts, as an OpenAI-compatible server sends them.

    Every delta becomes one chunk; `finish` ends with a chunk whose delta is empty and whose
    `finish_reason` is set. `completion_id` defaults to a random `chatcmpl-...`, `created` to now.
    """

    def __init__(
        self,
        stream: DeltaStream,
        *,
        model: str,
        completion_id: str | None = None,
        created: int | None = None,
    ) -> None:
        self.stream = stream
        self.model = model
        self.completion_id = (
            completion_id
            if completion_id is not None
            else "chatcmpl-" + os.urandom(12).hex()
        )
        self.created = created if created is not None else int(time.time())

    def _chunk(
        self, delta: Mapping[str, Any], finish_reason: str | None = None
    ) -> dict[str, Any]:
        return chat_completion_chunk(
            delta,
            completion_id=self.completion_id,
            created=self.created,
            model=self.model,
            finish_reason=finish_reason,
        )

    def feed(self, events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return [self._chunk(delta) for delta in self.stream.feed(events)]

    def finish(
        self, final_events: Iterable[Mapping[str, Any]] = (), *, truncated: bool = False
    ) -> list[dict[str, Any]]:
        chunks = [
            self._chunk(delta)
            for delta in self.stream.finish(final_events, truncated=truncated)
        ]
        chunks.append(self._chunk({}, self.stream.finish_reason))
        return chunks
