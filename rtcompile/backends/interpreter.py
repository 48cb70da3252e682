"""The interpreter: executes a `Template` IR on a stream of model text.

This is the executable specification that compiled modules must equal. Its behaviour is that
of transformers 5.24.0's `ResponseParser` (every message, event and exception); its cost is not:
committed text is dropped from the buffer as soon as no pattern can look at it again, and region
bodies are collected as chunk lists, so a long stream costs time linear in its length.

How the stream is cut into regions (the reference's rules, restated):

* At any moment the parser is inside one region: an explicit field that was opened by its open
  delimiter, or the implicit field (the one without an open delimiter), or, when the template has
  no implicit field, a null sink that drops text.
* Inside an explicit field it watches that field's close delimiter; elsewhere it watches every
  explicit field's open delimiter and the implicit field's close delimiter.
* A delimiter match is committed only when more input cannot change it: a partial match at the
  end of the buffer, or a complete one that could still grow, holds back the text from its start.
* Of the committable matches the earliest wins; then the longest; then opens before closes; then
  the field name.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import regex

from rtcompile.frontend.loader import build_template
from rtcompile.ir import (
    ContentParser,
    Delimiter,
    FailingParser,
    Field,
    JsonParser,
    KvLinesParser,
    PythonCallListParser,
    ScalarParser,
    TDict,
    Template,
    TList,
    TLiteral,
    TPlaceholder,
    Transform,
    XmlInlineParser,
)
from rtcompile.plan import template_history
from rtcompile.runtime import content as parsers
from rtcompile.runtime.coercion import coerce_tool_calls
from rtcompile.runtime.protocol import PREFIX_REQUIRED, is_empty, join_value, tool_parameters
from rtcompile.runtime.scanning import regex_can_grow
from rtcompile.runtime.transform import content_scope, each_item_scope, require_each_list, resolve_placeholder

Event = dict[str, Any]
BLOCK_CHUNKS = 256  # chunks joined into one string at a time
Message = dict[str, Any]

_ERRORS: dict[str, type[Exception]] = {
    "ValueError": ValueError,
    "KeyError": KeyError,
    "TypeError": TypeError,
    "AttributeError": AttributeError,
}


def _compile(delimiter: Delimiter) -> Any:
    return regex.compile(delimiter.pattern, regex.DOTALL)


class _Watch:
    """One delimiter the parser is watching: the field it belongs to and whether it opens or closes."""

    __slots__ = ("field", "is_open", "pattern", "literal", "can_extend", "rank")

    def __init__(self, field: Field, is_open: bool, delimiter: Delimiter) -> None:
        self.field = field
        self.is_open = is_open
        self.pattern = _compile(delimiter)
        self.literal = delimiter.is_literal
        self.can_extend = delimiter.can_extend
        self.rank = 0 if is_open else 1


class _CompiledTemplate:
    """Everything derived from the IR once per template: compiled patterns and watch lists."""

    def __init__(self, template: Template) -> None:
        self.template = template
        self.implicit = template.implicit
        self.anchor = _compile(template.start_anchor)
        opens = [_Watch(f, True, f.open) for f in template.fields if f.open is not None]
        implicit_close = (
            [_Watch(self.implicit, False, self.implicit.close)]
            if self.implicit is not None and self.implicit.close is not None
            else []
        )
        # What to watch while the implicit field (or the null sink) is current...
        self.outside_watch: list[_Watch] = opens + implicit_close
        # ...and while an explicit field is open.
        self.inside_watch: dict[str, list[_Watch]] = {
            f.name: ([_Watch(f, False, f.close)] if f.close is not None else [])
            for f in template.fields
            if f.open is not None
        }
        self.history = template_history(template)
        self.value_parsers = {f.name: _content_function(f.parser) for f in template.fields}


# --------------------------------------------------------------------------- content parsers and transforms


def _content_function(parser: ContentParser) -> Callable[[Any], Any]:
    """A callable that parses one region body (or one nested value) with `parser`."""
    if isinstance(parser, ScalarParser):
        scalar = {
            "text": parsers.parse_text,
            "int": parsers.parse_int,
            "float": parsers.parse_float,
            "bool": parsers.parse_bool,
        }[parser.kind]
        return lambda text: scalar(text, parser.strip)
    if isinstance(parser, JsonParser):
        return lambda text: parsers.parse_json(
            text, parser.unquoted_keys, parser.string_delims, parser.allow_non_json, parser.strip
        )
    if isinstance(parser, XmlInlineParser):
        tag_re = regex.compile(parser.tag_pattern, regex.DOTALL)
        nested = None if parser.value_parser is None else _content_function(parser.value_parser)
        return lambda text: parsers.parse_xml_inline(text, tag_re, parser.tag_pattern, nested, parser.merge_duplicates)
    if isinstance(parser, KvLinesParser):
        nested = None if parser.value_parser is None else _content_function(parser.value_parser)
        return lambda text: parsers.parse_kv_lines(text, parser.line_sep, parser.kv_sep, parser.strip, nested)
    if isinstance(parser, PythonCallListParser):
        return parsers.parse_python_call_list
    return _failing(parser)


def _failing(parser: FailingParser) -> Callable[[Any], Any]:
    def fail(text: Any) -> Any:
        raise _ERRORS[parser.error](parser.message)

    return fail


def apply_transform(transform: Transform, scope: Mapping[str, Any]) -> Any:
    if isinstance(transform, TPlaceholder):
        return resolve_placeholder(scope, transform.path, transform.root, transform.keys)
    if isinstance(transform, TDict):
        return {key: apply_transform(value, scope) for key, value in transform.items}
    if isinstance(transform, TList):
        return [apply_transform(value, scope) for value in transform.items]
    assert isinstance(transform, TLiteral)
    return transform.value


def field_value(field: Field, parse: Callable[[str], Any], body: str, captures: Mapping[str, str]) -> Any:
    """Parse a closed region's body and reshape it with the field's transform."""
    value = parse(body)
    if field.transform is None:
        return value
    if not field.transform_each:
        return apply_transform(field.transform, content_scope(captures, value))
    return [
        apply_transform(field.transform, each_item_scope(field.name, captures, item))
        for item in require_each_list(field.name, value)
    ]


def after_last_anchor(anchor: Any, prefix: str) -> str | None:
    """The prompt after the last (non-overlapping) match of the start anchor; None if it never matches."""
    last_end = None
    for m in anchor.finditer(prefix):
        last_end = m.end()
    return None if last_end is None else prefix[last_end:]


def anchor_pattern(template: Template) -> Any:
    return _compile(template.start_anchor)


# --------------------------------------------------------------------------- the streaming parser


class ResponseParser:
    """A streaming parser for one generation.

    `template` is a `Template` (from `rtcompile.load_template`) or a response-template dict.
    Feed model text as it arrives; each call returns the events it caused. `initial_events` holds
    the events of the prompt's pre-written part of the message (after the last start anchor).
    """

    def __init__(
        self, template: Template | Mapping[str, Any], prefix: str | None = None, *, tools: Iterable[Any] | None = None
    ) -> None:
        self._t = _CompiledTemplate(template if isinstance(template, Template) else build_template(template))
        if prefix is None:
            raise ValueError(PREFIX_REQUIRED)
        self._tool_params = tool_parameters(tools)
        self._buffer = ""
        self._pos = 0
        self._output: Message = copy.deepcopy(dict(self._t.template.defaults))
        self._current: Field | None = self._t.implicit
        self._captures: dict[str, str] = {}
        # The current region's text: recent chunks plus blocks of joined chunks, so a long region
        # costs about its text in memory rather than a list entry per token.
        self._body: list[str] = []
        self._blocks: list[str] = []
        self._opened = False
        self._finalized = False
        self.initial_events: list[Event] = []
        if prefix:
            self._consume_prefix(prefix)

    # -- public protocol

    def feed(self, text: str) -> list[Event]:
        if self._finalized:
            raise RuntimeError("ResponseParser already finalized")
        if text:
            self._buffer += text
        events: list[Event] = []
        self._process(events, eos=False)
        self._drop_committed()
        return events

    def finalize(self) -> tuple[Message, list[Event]]:
        if self._finalized:
            raise RuntimeError("ResponseParser already finalized")
        events: list[Event] = []
        self._process(events, eos=True)
        missing = [f.name for f in self._t.template.fields if not f.optional and f.name not in self._output]
        if missing:
            raise ValueError(f"Required response_template fields missing from parsed output: {missing}")
        defaults = self._t.template.defaults
        self._output = {k: v for k, v in self._output.items() if k in defaults or not is_empty(v)}
        self._finalized = True
        return self._output, events

    # -- prefix

    def _consume_prefix(self, prefix: str) -> None:
        """Run the part of the prompt after the last start anchor through the parser."""
        after = after_last_anchor(self._t.anchor, prefix)
        truncated = prefix if after is None else after
        if truncated:
            self._buffer = truncated
            self._process(self.initial_events, eos=False)
            self._drop_committed()

    # -- the scanning loop

    def _process(self, events: list[Event], eos: bool) -> None:
        while True:
            best, hold = self._scan(eos)
            if best is not None:
                watch, m = best
                start, end = m.span()
                if start > self._pos:
                    self._accumulate(events, self._buffer[self._pos : start])
                self._pos = end
                if watch.is_open:
                    self._close_current(events)
                    self._open(events, watch.field, m)
                    continue
                had_content = self._opened
                # Close-pattern captures join (and override) the open-pattern captures.
                self._captures.update({k: v for k, v in m.groupdict().items() if v is not None})
                self._close_current(events)
                if not had_content and start == end:
                    break  # a zero-width close of an empty region would fire forever
                continue
            if eos:
                if self._pos < len(self._buffer):
                    self._accumulate(events, self._buffer[self._pos :])
                    self._pos = len(self._buffer)
                self._close_current(events)
                break
            if hold > self._pos:
                self._accumulate(events, self._buffer[self._pos : hold])
                self._pos = hold
            break

    def _watchlist(self) -> list[_Watch]:
        current = self._current
        if current is not None and current is not self._t.implicit:
            return self._t.inside_watch[current.name]
        return self._t.outside_watch

    def _scan(self, eos: bool) -> tuple[tuple[_Watch, Any] | None, int]:
        """The earliest committable delimiter match, and where held-back text starts."""
        buffer, pos = self._buffer, self._pos
        hold = len(buffer)
        best: tuple[_Watch, Any] | None = None
        best_key: tuple[int, int, int, str] | None = None
        for watch in self._watchlist():
            # At the end of the stream nothing can grow, so only complete matches count.
            m = watch.pattern.search(buffer, pos) if eos else watch.pattern.search(buffer, pos, partial=True)
            if m is None:
                continue
            if not eos and (m.partial or self._can_grow(watch, m)):
                hold = min(hold, m.start())
                continue
            key = (m.start(), m.start() - m.end(), watch.rank, watch.field.name)
            if best_key is None or key < best_key:
                best_key, best = key, (watch, m)
        if best is not None and best[1].start() >= hold:
            best = None  # a pending delimiter starts no later and may turn out to be the real one
        return best, hold

    def _can_grow(self, watch: _Watch, m: Any) -> bool:
        """Whether a complete match could still change when more text arrives."""
        if watch.literal:
            # A literal match is final once its last character is in, unless a longer literal of
            # the same set could still complete from the same start.
            return m.end() == len(self._buffer) and watch.can_extend
        return regex_can_grow(watch.pattern, self._buffer, m)

    def _drop_committed(self) -> None:
        """Forget committed text that no pattern can look at any more (what keeps streaming linear)."""
        history = self._t.history
        if history is None:
            return
        cut = self._pos - history
        if cut > 0:
            self._buffer = self._buffer[cut:]
            self._pos -= cut

    # -- regions

    def _accumulate(self, events: list[Event], text: str) -> None:
        field = self._current
        if not text or field is None:
            return  # no implicit field: text outside explicit regions is dropped
        if not self._opened:
            events.append({"type": "region_open", "field": field.name})
            self._opened = True
        self._body.append(text)
        if len(self._body) >= BLOCK_CHUNKS:
            self._blocks.append("".join(self._body))
            self._body = []
        events.append({"type": "region_chunk", "field": field.name, "text": text, "dirty": field.dirty})

    def _open(self, events: list[Event], field: Field, m: Any) -> None:
        self._current = field
        self._captures = {k: v for k, v in m.groupdict().items() if v is not None}
        self._body = []
        self._blocks = []
        self._opened = True
        events.append({"type": "region_open", "field": field.name})

    def _close_current(self, events: list[Event]) -> None:
        field = self._current
        if field is None or not self._opened:
            self._reset()
            return  # a region that never opened closes silently
        body = "".join(self._blocks) + "".join(self._body)
        value = field_value(field, self._t.value_parsers[field.name], body, self._captures)
        if self._tool_params:
            value = coerce_tool_calls(value, self._tool_params)
        self._store(field, value)
        events.append({"type": "region_close", "field": field.name, "value": value})
        self._reset()

    def _store(self, field: Field, value: Any) -> None:
        if field.join is not None:
            self._output[field.name] = join_value(field.name, self._output.get(field.name), value, field.join)
        elif field.repeats:
            self._output.setdefault(field.name, []).append(value)
        else:
            self._output[field.name] = value

    def _reset(self) -> None:
        self._current = self._t.implicit
        self._captures = {}
        self._body = []
        self._blocks = []
        self._opened = False
