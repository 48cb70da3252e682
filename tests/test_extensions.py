"""The opt-in extensions (captures, spans, recover) and the start-anchor warning.

Each extension adds to what the reference reports and changes nothing else: with the extension keys
removed, an extended run is exactly the default run, which the differential suites tie to
transformers. The compiled module must report the extensions exactly like the interpreter.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtcompile
from rtcompile.errors import TemplateWarning
from rtcompile.tooling.observe import Raised, identical, observe
from tests.compiled import compiled_module
from tests.strategies import TOOLS, chunkings, prefixes, streams, templates

ROOT = Path(__file__).resolve().parent.parent
EXTENSION_KEYS = ("captures", "start", "end")
ALL_ON = {"captures": True, "spans": True, "recover": True}


def interpreter(template: Any, **options: bool) -> Any:
    return lambda prefix, tools: rtcompile.ResponseParser(template, prefix, tools=tools, **options)


def compiled(template: dict[str, Any], **options: bool) -> Any:
    module = compiled_module(template)
    return lambda prefix, tools: module.ResponseParser(prefix, tools=tools, **options)


def without_extensions(record: list[Any]) -> list[Any]:
    """The record with the extension keys dropped from every event (what the reference would report)."""

    def strip(value: Any) -> Any:
        if isinstance(value, list):
            return [strip(v) for v in value]
        if isinstance(value, dict) and value.get("type") in ("region_open", "region_close"):
            return {k: v for k, v in value.items() if k not in EXTENSION_KEYS}
        return value

    return [strip(step) for step in record]


def events_of(record: list[Any]) -> list[dict[str, Any]]:
    """Every event of a record, in order (the final message is not an event)."""
    steps = record[:-1] if record and isinstance(record[-1], dict) else record
    return [event for step in steps if isinstance(step, list) for event in step]


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(templates(), st.data())
def test_captures_and_spans_only_add_keys(template: dict[str, Any], data: st.DataObject) -> None:
    text = data.draw(streams(template), label="text")
    chunks = data.draw(chunkings(text), label="chunks")
    prefix = data.draw(prefixes(template), label="prefix")
    tools = data.draw(st.sampled_from([None, TOOLS]), label="tools")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rtcompile.StartAnchorWarning)
        default = observe(interpreter(template), prefix, chunks, tools)
        extended = observe(interpreter(template, captures=True, spans=True), prefix, chunks, tools)
    assert identical(without_extensions(extended), default)


@SETTINGS
@given(templates(), st.data())
def test_recover_equals_default_until_a_region_fails_and_never_raises_for_it(
    template: dict[str, Any], data: st.DataObject
) -> None:
    text = data.draw(streams(template), label="text")
    chunks = data.draw(chunkings(text), label="chunks")
    prefix = data.draw(prefixes(template), label="prefix")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rtcompile.StartAnchorWarning)
        default = observe(interpreter(template), prefix, chunks)
        recovered = observe(interpreter(template, recover=True), prefix, chunks)
    malformed = [e for e in events_of(recovered) if e.get("type") == "region_malformed"]
    failure = next((i for i, step in enumerate(default) if isinstance(step, Raised)), None)
    if failure is None:
        assert identical(recovered, default)
        assert malformed == []
        return
    assert identical(recovered[:failure], default[:failure])
    if default[failure].step == "init":
        return  # the template or prefix itself is rejected: nothing to recover from
    # Only a failure the parser cannot attribute to one region may still raise: a required field missing.
    raised = [step for step in recovered if isinstance(step, Raised)]
    assert all(r.step == "finalize" and "Required response_template fields" in r.message for r in raised), raised
    if not raised:
        assert malformed, (default, recovered)
        for event in malformed:
            assert set(event) == {"type", "field", "error", "message", "text"}


@SETTINGS
@given(templates(), st.data())
def test_spans_enclose_each_region_of_the_generation(template: dict[str, Any], data: st.DataObject) -> None:
    text = data.draw(streams(template), label="text")
    chunks = data.draw(chunkings(text), label="chunks")
    record = observe(interpreter(template, spans=True, recover=True), "", chunks)
    previous_end = 0
    region: dict[str, Any] | None = None
    pieces: list[str] = []
    for event in events_of(record):
        if event["type"] == "region_open":
            region, pieces = event, []
            assert previous_end <= event["start"] <= len(text), (event, previous_end)
        elif event["type"] == "region_chunk":
            pieces.append(event["text"])
        else:
            assert region is not None and region["field"] == event["field"]
            assert region["start"] <= event["end"] <= len(text)
            assert "".join(pieces) in text[region["start"] : event["end"]]
            previous_end, region = event["end"], None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(templates(compilable=True), st.data())
@pytest.mark.slow
def test_compiled_modules_report_extensions_like_the_interpreter(template: dict[str, Any], data: st.DataObject) -> None:
    for _ in range(6):
        text = data.draw(streams(template), label="text")
        chunks = data.draw(chunkings(text), label="chunks")
        prefix = data.draw(prefixes(template), label="prefix")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rtcompile.StartAnchorWarning)
            ours = observe(compiled(template, **ALL_ON), prefix, chunks)
            theirs = observe(interpreter(template, **ALL_ON), prefix, chunks)
        assert identical(ours, theirs), (ours, theirs)


def bundled_cases() -> list[Any]:
    params = []
    for path in sorted((ROOT / "tests" / "data").glob("*/cases.json")):
        model = path.parent.name
        for case in json.loads(path.read_text(encoding="utf-8")):
            params.append(pytest.param(model, case, id=f"{model}/{case['name']}"))
    return params


@pytest.mark.parametrize(("model", "case"), bundled_cases())
def test_bundled_cases_with_every_extension_on(model: str, case: dict[str, Any]) -> None:
    """One character at a time with every extension on: the default run plus extension keys; each
    tool call's open delimiter reports its captures; a case the reference rejects while parsing a
    region is recovered into region_malformed events instead."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TemplateWarning)  # test_bundled_templates checks the warnings
        template = rtcompile.load_template(ROOT / "templates" / f"{model}.json")
    chunks = list(case["text"])
    default = observe(interpreter(template), case["prefix"], chunks, case.get("tools"))
    extended = observe(interpreter(template, **ALL_ON), case["prefix"], chunks, case.get("tools"))
    if "error" not in case["expected"]:
        assert identical(without_extensions(extended), default)
        assert extended[-1] == case["expected"]
    else:
        assert not any(isinstance(step, Raised) and step.step.startswith("feed") for step in extended)
    opens = [e for e in events_of(extended) if e["type"] == "region_open" and e["field"] == "tool_calls"]
    assert all(isinstance(e.get("captures"), dict) for e in opens)


def test_a_tool_name_is_known_when_its_region_opens() -> None:
    parser = rtcompile.ResponseParser(rtcompile.load_template(ROOT / "templates" / "kimi_k2.json"), "", captures=True)
    text = '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"ci'
    opened = [e for e in parser.feed(text) if e["type"] == "region_open"]
    assert opened == [{"type": "region_open", "field": "tool_calls", "captures": {"name": "get_weather"}}]


def test_recover_keeps_what_parsed_and_the_parser_stays_usable() -> None:
    module = compiled_module(json.loads((ROOT / "templates" / "qwen3.json").read_text())["response_template"])
    text = '<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b", "argu'
    parser = module.ResponseParser("", recover=True)
    parser.feed(text)
    message, events = parser.finalize()
    assert message["tool_calls"] == [{"type": "function", "function": {"name": "a", "arguments": {}}}]
    assert [e["type"] for e in events] == ["region_malformed"]
    assert parser.malformed == events and parser.malformed[0]["text"] == '{"name": "b", "argu'
    with pytest.raises(ValueError):
        module.parse_response(text, prefix="")  # the default is the reference's: the whole message fails


@pytest.mark.parametrize("engine", ["interpreter", "compiled"])
def test_a_prefix_without_the_start_anchor_warns(engine: str) -> None:
    template = json.loads((ROOT / "templates" / "qwen3.json").read_text())["response_template"]
    if engine == "interpreter":
        make, category = interpreter(template), rtcompile.StartAnchorWarning
    else:
        make, category = compiled(template), compiled_module(template).StartAnchorWarning
    with pytest.warns(category, match="start anchor does not occur"):
        make("garbage", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make("", None)
        make("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", None)


@pytest.mark.parametrize("engine", ["interpreter", "compiled"])
def test_the_start_anchor_warning_points_at_the_callers_line(engine: str) -> None:
    template = json.loads((ROOT / "templates" / "qwen3.json").read_text())["response_template"]
    module = compiled_module(template)
    calls = (
        [
            lambda: rtcompile.ResponseParser(template, "garbage"),
            lambda: rtcompile.parse_response("x", template, prefix="garbage"),
        ]
        if engine == "interpreter"
        else [lambda: module.ResponseParser("garbage"), lambda: module.parse_response("x", prefix="garbage")]
    )
    for call in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert [Path(w.filename).name for w in caught] == [Path(__file__).name]
