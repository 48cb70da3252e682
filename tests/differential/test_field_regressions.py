"""Parser bugs serving stacks keep hitting, one test per class for every bundled template.

Each stream is built from the template's own recorded cases (tests/data/<model>/cases.json), and
the compiled module, the interpreter and transformers 5.24.0 must agree on it:

* delimiters split across chunks (every 2-way split);
* many tokens in one chunk (speculative decoding: bursts of 20-200 characters);
* a tool-call tag quoted inside prose, and inside reasoning;
* an opening tag already written by the prompt;
* non-ASCII arguments;
* streaming and one-shot giving different results.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from rtcompile.tooling.observe import Raised, agrees_with_reference, identical
from tests.support.bundled import template_of
from tests.support.compiled import compiled_engine
from tests.support.differential import interpreter_engine, observe, reference_engine
from tests.support.lanes import pick
from tests.support.paths import ROOT

MODELS = sorted(p.stem for p in (ROOT / "templates").glob("*.json"))


def cases_of(model: str) -> list[dict[str, Any]]:
    path = ROOT / "tests" / "data" / model / "cases.json"
    return list(json.loads(path.read_text(encoding="utf-8")))


def tool_call_case(model: str) -> dict[str, Any]:
    """The recorded case that best shows a tool call (the longest one with a tool call in it)."""
    cases = [c for c in cases_of(model) if isinstance(c["expected"], dict) and c["expected"].get("tool_calls")]
    return max(cases or cases_of(model), key=lambda c: len(c["text"]))


def agree(template: dict[str, Any], prefix: str, chunks: list[str], tools: Any = None) -> None:
    ours = observe(compiled_engine(template), prefix, chunks, tools)
    assert identical(ours, observe(interpreter_engine(template), prefix, chunks, tools)), chunks
    assert agrees_with_reference(ours, observe(reference_engine(template), prefix, chunks, tools)), chunks


@pytest.mark.parametrize("model", MODELS)
def test_delimiters_split_across_chunks(model: str) -> None:
    case = tool_call_case(model)
    text = case["text"]
    for i in range(0, len(text) + 1, pick(1, 9)):  # every split; in the fast lane, every ninth
        agree(template_of(model), case["prefix"], [text[:i], text[i:]], case.get("tools"))


@pytest.mark.parametrize("model", MODELS)
def test_many_tokens_in_one_chunk(model: str) -> None:
    rng = random.Random(model)
    case = tool_call_case(model)
    text = case["text"] * 3
    for _ in range(5):
        chunks, i = [], 0
        while i < len(text):
            size = rng.choice([1, 3, 20, 75, 200])
            chunks.append(text[i : i + size])
            i += size
        agree(template_of(model), case["prefix"], chunks, case.get("tools"))


def _opens(template: dict[str, Any]) -> list[str]:
    return [
        v
        for f in template["fields"].values()
        for v in ([f["open"]] if isinstance(f.get("open"), str) else f.get("open", []))
    ]


@pytest.mark.parametrize("model", MODELS)
def test_tool_call_tag_quoted_in_prose_and_in_reasoning(model: str) -> None:
    template = template_of(model)
    case = tool_call_case(model)
    for tag in _opens(template)[:3]:
        prose = f"To call a tool, models write {tag} followed by JSON. " + case["text"]
        agree(template, case["prefix"], [prose])
        agree(template, case["prefix"], list(prose))
    reasoning = [
        c for c in cases_of(model) if isinstance(c["expected"], dict) and c["expected"].get("reasoning_content")
    ]
    for c in reasoning[:1]:
        quoted = c["text"].replace("\n", " I could emit <tool_call> here.\n", 1)
        agree(template, c["prefix"], [quoted])
        agree(template, c["prefix"], list(quoted))


@pytest.mark.parametrize("model", MODELS)
def test_opening_tag_already_written_by_the_prompt(model: str) -> None:
    template = template_of(model)
    for case in cases_of(model):
        if case["prefix"]:
            agree(template, case["prefix"], list(case["text"]), case.get("tools"))


@pytest.mark.parametrize("model", MODELS)
def test_non_ascii_arguments(model: str) -> None:
    template = template_of(model)
    case = tool_call_case(model)
    for word in ("Paris", "London", "city", "Bogota", "weather"):
        if word in case["text"]:
            text = case["text"].replace(word, "Zürich 東京 \u0301\u00b2 😀", 1)
            break
    else:
        text = case["text"] + " Zürich 東京 😀"
    agree(template, case["prefix"], [text], case.get("tools"))
    agree(template, case["prefix"], list(text), case.get("tools"))


@pytest.mark.parametrize("model", MODELS)
def test_streaming_equals_one_shot(model: str) -> None:
    """For every recorded case, character-by-character streaming ends where one-shot parsing does."""
    module_engine = compiled_engine(template_of(model))
    for case in cases_of(model):
        args = (case["prefix"], case.get("tools"))
        one_shot = outcome(observe(module_engine, args[0], [case["text"]], args[1]))
        assert outcome(observe(module_engine, args[0], list(case["text"]), args[1])) == one_shot, case["name"]


def outcome(record: list[Any]) -> Any:
    """The message, or the type of exception wherever it was raised (streaming raises earlier)."""
    last = record[-1]
    return ("raises", last.builtin_types[0]) if isinstance(last, Raised) else last
