"""The unseen set: random realistic templates (benchmarks/unseen_templates.py) and rewrites of the bundled
ones (benchmarks/rewrites.py) are what they claim to be, and compiled modules parse them as transformers does."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
import transformers.utils.chat_parsing as reference

from benchmarks.config import DATA
from benchmarks.rewrites import Rewrite, rewrites
from benchmarks.unseen_templates import COUNT, random_templates
from benchmarks.workloads import token_chunks
from rtcompile.tooling.observe import Raised, identical
from tests.support.bundled import template_of
from tests.support.compiled import compiled_engine, compiled_module
from tests.support.differential import observe, one_shot, reference_engine
from tests.support.linear_work import bundled_names

# What the random templates are drawn from (benchmarks.unseen_templates): each must occur.
CONSTRUCTS = [
    # how a delimiter is written
    "literal",
    "literal list",
    "regex literal",
    "(?:) wrapper",
    "alternation",
    "(?i)",
    "leading \\s*",
    "trailing \\s*",
    "|$ close",
    "|\\Z close",
    "$ close",
    "\\Z close",
    "nullable close",
    "lookahead close",
    "lookahead open",
    "start-anchored open",
    "pattern start anchor",
    # name captures in tool-call opens
    "name capture",
    "lazy name",
    "back-reference",
    "optional prefix",
    "indexed name",
    # tool-call formats and content parsers
    "json tool calls",
    "json named tool calls",
    "json list tool calls",
    "python list tool calls",
    "xml tool calls",
    "xml glm tool calls",
    "xml backref tool calls",
    "gemma tool calls",
    "kv tool calls",
    "int field",
    "float field",
    "bool field",
    # the content field
    "implicit content",
    "explicit content",
    "join",
    "optional: false",
]


def test_random_templates_are_many_distinct_and_drawn_from_every_construct() -> None:
    drawn = random_templates()
    assert len(drawn) == COUNT >= 100
    assert len({json.dumps(t.template) for t in drawn}) == COUNT
    assert [t.model for t in drawn] == [t.model for t in random_templates()]  # the same every time
    seen = {c for t in drawn for construct in t.constructs for c in construct.split(", ")}
    assert [c for c in CONSTRUCTS if c not in seen] == []


@pytest.mark.slow
def test_every_random_output_gives_the_regions_it_was_written_with() -> None:
    assert {t.model: problem for t in random_templates() if (problem := t.problem()) is not None} == {}


def test_an_output_grows_with_its_prose_and_keeps_its_delimiters() -> None:
    template = random_templates()[0]
    small, big = template.text(2048), template.text(65536)
    assert 0.8 * 2048 < len(small) < 1.2 * 2048 and 0.95 * 65536 < len(big) < 1.05 * 65536
    written = [p for p in template.pieces if isinstance(p, str)]
    assert all(piece in small and piece in big for piece in written)


def _agrees(template: dict[str, Any], text: str, prefix: str, tools: Any) -> None:
    """The compiled module's events and message (or error), streamed whole and in token chunks, and its
    one-shot message, are transformers'."""
    for chunks in ([text], token_chunks(text, 19)):
        ours = observe(compiled_engine(template), prefix, chunks, tools)
        assert identical(ours, observe(reference_engine(template), prefix, chunks, tools))
    module = compiled_module(template)
    ours_once = one_shot(lambda text, _, **kw: module.parse_response(text, **kw), text, template, prefix, tools)
    assert ours_once == one_shot(reference.parse_response, text, template, prefix, tools)


@pytest.mark.slow
@pytest.mark.parametrize("index", range(COUNT))
def test_compiled_random_templates_agree_with_transformers(index: int) -> None:
    drawn = random_templates()[index]
    _agrees(drawn.template, drawn.text(4096), drawn.prefix, drawn.tools)


def _rewrites() -> list[Rewrite]:
    return [r for model in bundled_names() for r in rewrites(model, template_of(model))]


def _cases(model: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads((DATA / model / "cases.json").read_text(encoding="utf-8"))
    return cases


def _message_or_error_class(outcome: Any) -> Any:
    return (outcome.step, outcome.type_name) if isinstance(outcome, Raised) else outcome


@pytest.mark.parametrize("rewrite", [r for r in _rewrites() if r.equivalent], ids=lambda r: r.model)
def test_equivalent_rewrites_give_the_original_message_in_transformers(rewrite: Rewrite) -> None:
    """The one-shot message, or the error's class (not its message, which quotes the region's text: a close
    that takes the whitespace before it leaves it out), on every recorded case. The events may differ too:
    a regex close is held back where a literal one is not."""
    for case, theirs in zip(_cases(rewrite.base), _original_outcomes(rewrite.base), strict=True):
        ours = one_shot(reference.parse_response, case["text"], rewrite.template, case["prefix"], case.get("tools"))
        assert _message_or_error_class(ours) == theirs, case["name"]


@functools.cache
def _original_outcomes(model: str) -> list[Any]:
    original = template_of(model)
    return [
        _message_or_error_class(one_shot(reference.parse_response, c["text"], original, c["prefix"], c.get("tools")))
        for c in _cases(model)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("rewrite", _rewrites(), ids=lambda r: r.model)
def test_compiled_rewrites_agree_with_transformers(rewrite: Rewrite) -> None:
    for case in _cases(rewrite.base):
        _agrees(rewrite.template, case["text"], case["prefix"], case.get("tools"))
