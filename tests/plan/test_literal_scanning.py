"""Literal delimiters in generated modules: one search per state, one hold-back per state, nesting literals.

Generated scanners find all literal delimiters of a state with one alternation search and hold back
text with one trie search for the whole state, except where one literal contains another (then they
go delimiter by delimiter, as the reference's rules require). These tests draw literal sets over a
three-letter alphabet, so that prefixes, containment and shared literals between fields are common,
and compare the compiled module with the interpreter and with transformers on every two-way split,
one character at a time, and at the end of the buffer exactly at a delimiter's first character.
"""

from __future__ import annotations

from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtcompile.tooling.observe import identical, observe
from tests.support.compiled import compiled_engine
from tests.support.differential import interpreter_engine, reference_engine, two_way_splits
from tests.support.lanes import examples

pytestmark = pytest.mark.slow  # every example compiles and imports a module

LETTERS = "ab<"
LITERAL = st.text(alphabet=LETTERS, min_size=1, max_size=4)


@st.composite
def literal_templates(draw: st.DrawFn) -> dict[str, Any]:
    """Two or three fields with literal opens/closes (single literals or lists), maybe an implicit field.
    Now and then a delimiter's literals are written as a pattern instead, in any order (`(?:a<|b)`):
    the plan searches those as literals too, where none is a prefix of another
    (`rtcompile.plan.scanned_delimiter`)."""
    names = draw(st.lists(st.sampled_from(["x", "y", "z"]), min_size=2, max_size=3, unique=True))
    implicit = draw(st.sampled_from([None, names[-1]]))
    fields: dict[str, Any] = {}
    for name in names:
        field: dict[str, Any] = {"content": "text"}
        if name != implicit:
            _write(
                draw, field, "open", draw(st.one_of(LITERAL, st.lists(LITERAL, min_size=2, max_size=3, unique=True)))
            )
        if draw(st.integers(0, 3)) > 0:
            _write(
                draw, field, "close", draw(st.one_of(LITERAL, st.lists(LITERAL, min_size=2, max_size=3, unique=True)))
            )
        if draw(st.booleans()):
            field["repeats"] = True
        fields[name] = field
    return {"start_anchor": "<|assistant|>", "fields": fields}


def _write(draw: st.DrawFn, field: dict[str, Any], key: str, value: str | list[str]) -> None:
    """`value` as `key`, or as a pattern of its literals (kept under `_literals` for the streams)."""
    literals = [value] if isinstance(value, str) else value
    field.setdefault("_literals", []).extend(literals)
    if not draw(st.integers(0, 2)):
        order = draw(st.permutations(literals))
        alternation = "|".join(regex.escape(lit) for lit in order)
        field[f"{key}_pattern"] = draw(st.sampled_from([alternation, f"(?:{alternation})", f"({alternation})"]))
    else:
        field[key] = value


def without_notes(template: dict[str, Any]) -> dict[str, Any]:
    fields = {name: {k: v for k, v in f.items() if k != "_literals"} for name, f in template["fields"].items()}
    return {**template, "fields": fields}


@st.composite
def literal_streams(draw: st.DrawFn, template: dict[str, Any]) -> str:
    literals = [lit for field in template["fields"].values() for lit in field.get("_literals", [])]
    piece = st.one_of(st.sampled_from(literals), st.text(alphabet=LETTERS + "c", max_size=3))
    return "".join(draw(st.lists(piece, max_size=10)))


SETTINGS = settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(literal_templates(), st.data())
def test_every_split_and_char_by_char_match_interpreter_and_reference(
    written: dict[str, Any], data: st.DataObject
) -> None:
    template = without_notes(written)
    for _ in range(3):
        text = data.draw(literal_streams(written), label="text")
        for chunks in [*two_way_splits(text), list(text), [text]]:
            ours = observe(compiled_engine(template), "", chunks)
            assert identical(ours, observe(interpreter_engine(template), "", chunks)), chunks
        assert ours == observe(reference_engine(template), "", [text])
        assert observe(compiled_engine(template), "", list(text)) == observe(reference_engine(template), "", list(text))
