"""Structural tags have the shape xgrammar documents (`tests/support/structural_tag.py`, read from
xgrammar's definition of the format: xgrammar itself, which requires torch, is not installed).
Every bundled template's tag for its recorded cases' tools is checked in test_grammar_generation's
`test_every_bundled_template_has_a_grammar_in_every_format_or_a_named_refusal`, and every tag a walk
reads is checked before llguidance runs it (`grammar_walks.structural_to_llguidance`); here, the fast
lane's share and the checker's own test: a malformed tag is caught, at its JSON path."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from rtcompile.grammars import grammar
from tests.support import grammar_walks as gw
from tests.support.bundled import template_file
from tests.support.structural_tag import problems

MODES = [("weather", "auto", True), ("nested", "required", False), ("scalars", "none", True)]


@pytest.mark.parametrize("model", ["qwen3", "gemma4", "gpt_oss"])
def test_structural_tags_have_the_documented_shape(model: str) -> None:
    """A JSON-argument template, a custom-delimited one and one with channels, in several modes."""
    for tool_set, choice, parallel in MODES:
        tools = gw.TOOL_SETS[tool_set]
        text = grammar(
            template_file(model),
            tools,
            prefix="",
            tool_choice=choice,
            parallel_tool_calls=parallel,
            format="structural-tag",
        )
        assert problems(json.loads(text)) == [], (tool_set, choice)


def _qwen3_tag() -> dict[str, Any]:
    text = grammar(template_file("qwen3"), gw.TOOL_SETS["weather"], prefix="", format="structural-tag")
    tag = json.loads(text)
    assert isinstance(tag, dict)
    return tag


def _first(node: Any, kind: str, path: str = "format") -> tuple[dict[str, Any], str] | None:
    """The first format of `kind` in `node` (depth first, schemas left out), and its JSON path."""
    if isinstance(node, dict):
        if node.get("type") == kind:
            return node, path
        for key, value in node.items():
            found = _first(value, kind, f"{path}.{key}") if key != "json_schema" else None
            if found is not None:
                return found
    if isinstance(node, list):
        for index, item in enumerate(node):
            found = _first(item, kind, f"{path}[{index}]")
            if found is not None:
                return found
    return None


SMALL: list[tuple[dict[str, Any], list[str]]] = [
    ({"type": "structural_tag"}, ["format: missing"]),
    ({"type": "structural_tags", "format": {"type": "any_text"}}, ['type: not "structural_tag"']),
    (
        {"type": "structural_tag", "format": {"type": "any_text"}, "triggers": []},
        ["triggers: not a key of a structural tag"],
    ),
    ({"type": "structural_tag", "format": {"type": "text"}}, ["format.type: 'text' is not a documented format"]),
    ({"type": "structural_tag", "format": "any_text"}, ["format: a format is an object"]),
    (
        {"type": "structural_tag", "format": {"type": "const_string", "text": "a"}},
        ["format.value: missing", "format.text: not a field of const_string"],
    ),
    (
        {"type": "structural_tag", "format": {"type": "json_schema", "json_schema": '{"type": "object"}'}},
        ["format.json_schema: not a JSON schema (an object or a boolean)"],
    ),
    (
        {"type": "structural_tag", "format": {"type": "grammar", "grammar": 'start ::= "a"'}},
        ["format.grammar: an EBNF grammar whose first rule is not root"],
    ),
    (
        {"type": "structural_tag", "format": {"type": "sequence", "elements": {"type": "any_text"}}},
        ["format.elements: not a list"],
    ),
    (
        {"type": "structural_tag", "format": {"type": "repeat", "min": 1, "content": {"type": "any_text"}}},
        ["format.max: missing"],
    ),
    (
        {"type": "structural_tag", "format": {"type": "repeat", "min": 3, "max": 2, "content": {"type": "any_text"}}},
        ["format: min 3, max 2 (min at least 0, max -1 or at least min)"],
    ),
    (
        {"type": "structural_tag", "format": {"type": "star", "content": {"type": "or", "elements": [1]}}},
        ["format.content.elements[0]: a format is an object"],
    ),
    (
        {
            "type": "structural_tag",
            "format": {"type": "triggered_tags", "triggers": ["<f"], "tags": [{"type": "any_text"}]},
        },
        ["format.tags[0]: not a tag"],
    ),
]


@pytest.mark.parametrize(("tag", "expected"), SMALL)
def test_a_malformed_structural_tag_is_caught_at_its_path(tag: dict[str, Any], expected: list[str]) -> None:
    assert problems(tag) == expected
    with pytest.raises(AssertionError):
        gw.structural_to_llguidance(tag)  # what the walks read a tag through


def test_a_malformed_part_deep_in_a_real_tag_is_caught_at_its_path() -> None:
    tag = _qwen3_tag()
    assert problems(tag) == []
    for kind, key, value, problem in [
        ("grammar", "grammar", {"root": "x"}, "not a string"),
        ("json_schema", "json_schema", [], "not a JSON schema (an object or a boolean)"),
        ("or", "elements", {"type": "any_text"}, "not a list"),
        ("sequence", "elements", "[]", "not a list"),
    ]:
        broken = copy.deepcopy(tag)
        found = _first(broken["format"], kind)
        assert found is not None, kind
        node, path = found
        node[key] = value
        assert problems(broken) == [f"{path}.{key}: {problem}"], kind
