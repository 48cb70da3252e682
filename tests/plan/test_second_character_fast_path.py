"""The fast path's second look at a delimiter's first character (`_second_looks` in
rtcompile.backends.codegen.fast_path): a "<" followed by a character no delimiter has second stays
region text without a scan, a "<" ending a chunk is held back. Events and messages must be exactly
the reference's for any chunking, in particular chunks that end at a first character, at a first
and second character, and near misses like "<t" and "</" that are not delimiters.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtcompile.tooling.fuzz import delimiter_examples
from rtcompile.tooling.observe import agrees_with_reference, identical
from tests.support.bundled import template_of
from tests.support.compiled import compiled_engine, compiled_module, scanned_chunks
from tests.support.differential import interpreter_engine, observe, reference_engine
from tests.support.lanes import examples
from tests.support.strategies import chunkings

MODELS = ["qwen3", "smollm3", "lfm2", "granite4", "minimax_m2", "hermes2_pro", "gpt_oss", "granite3"]
# Second looks at the start of regex delimiters (`rtcompile.regex.second_chars`)
MODELS += ["kimi_k3", "deepseek_v3", "glm4_5", "minicpm", "apertus", "functiongemma", "olmo3", "step3"]
# Text outside any region dropped on the fast path (no implicit field): gpt_oss above, and
MODELS += ["cohere_command_a", "llama3_1", "mistral_v11"]
# A close with an alternative that is a lookahead alone (`...|(?=<function=)`): the lookahead's body is
# where such a zero-width match begins
MODELS += ["qwen3_coder"]
# Delimiters matched with the `regex` module (no exact stdlib translation of their partial matches), whose
# second look is their leading characters (`Strategy.leads`, where their scanners start searching): a lazy name
# and a back-reference, after case-insensitive literals (which no literal test can look for)
_CALL = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
REGEX_MODULE: dict[str, dict[str, Any]] = {
    "lazy name, (?i)": {
        "start_anchor": "<start_of_turn>model\n",
        "fields": {
            "reasoning_content": {"open_pattern": "(?i)<seed:think>", "close_pattern": "</seed:think>"},
            "tool_calls": {
                "open_pattern": r"(?i)<seed:tool_call>\s*<function=(?P<name>[^<\n]+?)>",
                "close": "</seed:tool_call>",
                "content": "json",
                "transform": _CALL,
                "repeats": True,
            },
            "content": {"close_pattern": r"<\|im_end\|>|$", "repeats": True, "join": ""},
        },
    },
    "back-reference, (?i)": {
        "start_anchor": "<s>",
        "fields": {
            "tool_calls": {
                "open_pattern": r"(?i)<invoke name=([\"'])(?P<name>[^\"'\n]+)\1>",
                "close": "</invoke>",
                "content": "json",
                "transform": _CALL,
                "repeats": True,
            },
            "content": {"close": "<|end|>"},
        },
    },
}
NEAR_MISSES = ["<", "</", "<t", "<th", "<|", "|", "a < b", "<div>", "</div>", "x<", "<\n", "a", " ", "{", "}"]


def template_named(name: str) -> dict[str, Any]:
    return REGEX_MODULE[name] if name in REGEX_MODULE else template_of(name)


def delimiters_of(template: dict[str, Any]) -> list[str]:
    """The literal delimiters, and texts each delimiter pattern matches (drawn from its tree)."""
    found = []
    for spec in template["fields"].values():
        for key in ("open", "close"):
            value = spec.get(key)
            found += [value] if isinstance(value, str) else list(value or [])
        for key in ("open_pattern", "close_pattern"):
            if key in spec:
                examples = delimiter_examples(spec[key], random.Random(key), count=3)
                found += examples + [example[:cut] for example in examples for cut in (2, 3)]
    return found


@pytest.mark.parametrize("model", [*MODELS, *REGEX_MODULE])
def test_these_modules_take_the_second_look(model: str) -> None:
    module = compiled_module(template_named(model))
    assert module.__file__ is not None
    code = Path(module.__file__).read_text(encoding="utf-8")
    module.ResponseParser("")  # compiles the module's patterns
    # a pattern giving first characters a second look ("<" then "|" or the end) ...
    looks = {
        name: value.pattern
        for name, value in vars(module).items()
        if re.fullmatch(r"_RE_\w*STARTS", name) and isinstance(value, re.Pattern)
    }
    narrowing = {name for name, source in looks.items() if "(?:[" in source and "|\\Z)" in source}
    assert narrowing
    # ... searched in `feed` for the chunk
    assert any(f"{name}.search(text) is not None" in code for name in narrowing)


@pytest.mark.parametrize("model", [*MODELS, *REGEX_MODULE])
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streams_full_of_near_misses_match_the_reference(model: str, data: st.DataObject) -> None:
    template = template_named(model)
    pieces = NEAR_MISSES + delimiters_of(template)
    text = "".join(data.draw(st.lists(st.sampled_from(pieces), max_size=30)))
    chunks = data.draw(chunkings(text))
    ours = observe(compiled_engine(template), "", chunks)
    assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks))
    assert identical(ours, observe(interpreter_engine(template), "", chunks))


@pytest.mark.parametrize("model", [*MODELS, *REGEX_MODULE])
def test_code_fed_one_character_at_a_time_matches_the_reference(model: str) -> None:
    template = template_named(model)
    for text in ["if a < b and c <d: return x<y", "<div>x</div> < </ <t <th", "a <" * 40]:
        chunks = list(text)
        ours = observe(compiled_engine(template), "", chunks)
        assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks)), text


@pytest.mark.parametrize("name", sorted(REGEX_MODULE))
def test_prose_with_a_stray_lt_stays_on_the_fast_path_beside_a_regex_module_open(name: str) -> None:
    """The content's second look includes the open's leading characters (`<s`, `<i`), which the `regex`
    module's partial matches begin with too: `<b` and `<y>` in prose are region text, not scanned (only the
    first chunk is: no region is open before it)."""
    template = REGEX_MODULE[name]
    chunks = ["Hi", " a <b and c", " x <y> z", " <", "b"]
    assert scanned_chunks(template, chunks) == 1
    ours = observe(compiled_engine(template), "", chunks)
    assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks))
    assert identical(ours, observe(interpreter_engine(template), "", chunks))
