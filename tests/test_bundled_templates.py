"""The bundled templates (templates/*.json) against their recorded cases (tests/data/<model>/cases.json).

Each case is `{"name", "prefix", "text", "tools"?, "expected"}`, where `expected` is the message
transformers 5.24.0 produces, or `{"error": "<exception type name>"}` when it raises. For every case:

* transformers' `parse_response` still produces `expected` (the recorded behaviour is the reference's);
* `rtcompile.parse_response` on the template file produces the same;
* the compiled module produces the same;
* streaming the text one character at a time through `rtcompile.ResponseParser` ends in the same message.

templates/README.md says where each format comes from and what the templates cannot express.
"""

from __future__ import annotations

import json
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from transformers.utils.chat_parsing import ResponseParser as ReferenceParser
from transformers.utils.chat_parsing import parse_response as reference_parse

import rtcompile
from rtcompile.errors import TemplateWarning
from tests.bundled import template_file, template_of
from tests.compiled import compiled_module

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
DATA = Path(__file__).resolve().parent / "data"

MODELS = sorted(path.stem for path in TEMPLATES.glob("*.json"))
# Where a template must use a construct the portability lint flags, with the reason (see templates/README.md).
EXPECTED_WARNINGS = {
    "llama4": "lookaround",  # `^(?=\[)`: a bare `[f(a=1)]` call list is only recognised at the start of the turn
    "llama3_2": "lookaround",  # `^(?=\[)`: the Llama 3.2 pythonic call list, as for llama4
    "xlam": "lookaround",  # `^(?=\[)`: a bare `[{"name", "arguments"}]` JSON list, likewise
    # `(?<=</function>)` and `(?=<function=)`: bare `<function=...>` blocks end on the next one (the
    # lookbehind keeps `</function>` in the body, so a parameter without `</parameter>` ends there) ...
    "qwen3_coder": "lookaround",
    "step3": "lookaround",
    "nemotron": "lookaround",
    "mimo": "lookaround",
    "seed_oss": "lookaround",
    # ... and `\}(?=, {"name": ..., "arguments": ...)`: several calls in one `<tools>` tag.
    "qwen2_5_coder": "lookaround",
    # Real quadratic near misses (stdlib re on 1,000 -> 2,000 characters takes about 4x as long):
    # `.*?</arg_key>\s*<arg_value>.*?` on many `</arg_key><arg_value>` and no `</arg_value>`...
    "glm4_5": "backtrack polynomially (2 overlapping",
    "glm4_7": "backtrack polynomially (2 overlapping",
    "ling": "backtrack polynomially (2 overlapping",
    # ... `[^\s<]+(...)?[^<]*` on a long name with no `<|message|>`...
    "gpt_oss": "backtrack polynomially (2 overlapping",
    # ... `\}\s*(?:...|\n\s*\{)` on a long run of newlines with no `{`...
    "llama3_1": "backtrack polynomially (2 overlapping",
    "llama3_3": "backtrack polynomially (2 overlapping",
    # ... and `(?P<value>.*?)(...)?</[^>\s]+>` on a long run of `</`.
    "minimax_m3": "backtrack polynomially (2 overlapping",
}


@cache
def loaded(model: str) -> rtcompile.Template:
    """The rtcompile IR, loaded once; the warnings are checked by test_template_loads_and_compiles_in_rtcompile."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TemplateWarning)
        return rtcompile.load_template(template_file(model))


def cases_of(model: str) -> list[dict[str, Any]]:
    path = DATA / model / "cases.json"
    if not path.exists():
        return []
    cases: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return cases


CASES = [pytest.param(model, case, id=f"{model}/{case['name']}") for model in MODELS for case in cases_of(model)]


def outcome(call: Any) -> Any:
    """The parsed message, or `{"error": <exception type name>}` as the case files record it."""
    try:
        return call()
    except Exception as error:  # noqa: BLE001 - the case records which exception, if any
        return {"error": type(error).__name__}


def stream(parser: Any, text: str) -> Any:
    for char in text:
        parser.feed(char)
    message, _events = parser.finalize()
    return message


# --------------------------------------------------------------------------- the template files


def test_every_template_has_cases() -> None:
    assert MODELS, "no templates found"
    assert [m for m in MODELS if len(cases_of(m)) < 5] == []
    assert sorted(p.name for p in DATA.iterdir() if p.is_dir() and p.name in MODELS) == MODELS


@pytest.mark.parametrize("model", MODELS)
def test_template_file_shape(model: str) -> None:
    document = json.loads(template_file(model).read_text(encoding="utf-8"))
    assert set(document) <= {"response_template", "chat_template"}
    assert document["response_template"].get("defaults") == {"role": "assistant"}


@pytest.mark.parametrize("model", MODELS)
def test_template_loads_in_transformers(model: str) -> None:
    ReferenceParser(template_of(model), prefix="")


@pytest.mark.parametrize("model", MODELS)
def test_template_loads_and_compiles_in_rtcompile(model: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rtcompile.load_template(template_file(model))
    messages = [str(w.message) for w in caught if issubclass(w.category, TemplateWarning)]
    expected = EXPECTED_WARNINGS.get(model)
    assert all(expected and expected in m for m in messages), messages
    assert "class ResponseParser" in rtcompile.compile_template(template_file(model))


# --------------------------------------------------------------------------- the cases


@pytest.mark.parametrize(("model", "case"), CASES)
def test_transformers_matches_recorded(model: str, case: dict[str, Any]) -> None:
    got = outcome(
        lambda: reference_parse(case["text"], template_of(model), prefix=case["prefix"], tools=case.get("tools"))
    )
    assert got == case["expected"]


@pytest.mark.parametrize(("model", "case"), CASES)
def test_rtcompile_matches_recorded(model: str, case: dict[str, Any]) -> None:
    got = outcome(
        lambda: rtcompile.parse_response(
            case["text"], template_file(model), prefix=case["prefix"], tools=case.get("tools")
        )
    )
    assert got == case["expected"]


@pytest.mark.parametrize(("model", "case"), CASES)
def test_compiled_module_matches_recorded(model: str, case: dict[str, Any]) -> None:
    module = compiled_module(template_of(model))
    got = outcome(lambda: module.parse_response(case["text"], prefix=case["prefix"], tools=case.get("tools")))
    assert got == case["expected"]


@pytest.mark.parametrize(("model", "case"), CASES)
def test_streaming_one_char_at_a_time_matches_one_shot(model: str, case: dict[str, Any]) -> None:
    got = outcome(
        lambda: stream(rtcompile.ResponseParser(loaded(model), case["prefix"], tools=case.get("tools")), case["text"])
    )
    assert got == case["expected"]
