"""Big data literals are laid out without black, exactly as black lays them out, so compile time stays linear.

black took minutes on a template with thousands of literal delimiters or an 800 KB `defaults` list. Now
`rtcompile.backends.codegen.preformat` lays out such literals itself; these tests check that its layout is
black's, byte for byte (for any JSON-like value, at module and class level, including values deep enough
to be built by `build_value`), and count the work: the text black is given no longer grows with the
number of literals in a template.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

import black
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtcompile
from benchmarks.compile_time import defaults_list, literal_delimiters
from rtcompile.backends.codegen import generate, preformat
from rtcompile.backends.codegen.writer import MAX_LITERAL_NESTING, literal

TEXT_PIECES = ["a", "'", '"', "\\", "\n", "日本", "é", "x" * 40, "x" * 117, " ", "{", "\u2028", "\x00", "\ud800"]
texts = st.lists(st.sampled_from(TEXT_PIECES), max_size=4).map("".join)
scalars = st.one_of(
    texts,
    st.integers(),
    st.floats(),  # NaN and infinities included: literal() writes them as float("...") calls
    st.booleans(),
    st.none(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(texts, inner, max_size=6),
    ),
    max_leaves=40,
)


def nested(depth: int, leaf: Any) -> Any:
    for number in range(depth):
        leaf = {"k" * (number % 5 + 1): leaf, "z": [number]} if number % 2 else [leaf, "x" * (number % 60)]
    return leaf


HEADS = ["TEMPLATE: Final[dict[str, Any]] = ", "class ResponseParser:\n    _defaults = "]


def _black(code: str) -> str:
    return black.format_str(code, mode=generate.BLACK_MODE)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=st.one_of(values, st.builds(nested, st.integers(MAX_LITERAL_NESTING, 40), values)),
    head=st.sampled_from(HEADS),
)
def test_a_big_literal_is_laid_out_exactly_as_black_would(value: Any, head: str) -> None:
    code = f"{head}{literal(value)}\n"
    with mock.patch.object(preformat, "BIG_STATEMENT", 0):  # lay out every literal here, however small
        assert preformat.format_with_big_literals_aside(code, _black) == _black(code)


def test_only_plain_data_is_taken_out_of_blacks_hands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preformat, "BIG_STATEMENT", 0)
    code = 'X = f(\n    1\n)\nY = "a" + "b" * 300\nZ = [1, g(2), *h]  # note\n'
    seen: list[str] = []

    def recording(text: str) -> str:
        seen.append(text)
        return _black(text)

    assert preformat.format_with_big_literals_aside(code, recording) == _black(code)
    assert seen == [code]


def _black_input(template: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """(characters black is given, characters of the module) for one compile with black's cache cleared."""
    given_to_black = [0]
    format_str = black.format_str

    def counting(code: str, *, mode: black.Mode) -> str:
        given_to_black[0] += len(code)
        return format_str(code, mode=mode)

    monkeypatch.setattr(black, "format_str", counting)
    generate._formatted.cache_clear()
    module = rtcompile.compile_template(template)
    monkeypatch.setattr(black, "format_str", format_str)
    return given_to_black[0], len(module)


@pytest.mark.parametrize("make", [literal_delimiters, defaults_list])
def test_what_black_reads_does_not_grow_with_the_number_of_literals(make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # 100 and 10,000 literals: both past the size where a state's literals are held back by a runtime
    # scan rather than a pattern, so the two modules differ in their data only.
    small_black, small_module = _black_input(make(100), monkeypatch)
    big_black, big_module = _black_input(make(10_000), monkeypatch)
    assert big_module - small_module > 9_900 * 5  # the literals are in the module (5+ characters each) ...
    assert big_black <= small_black + 1_000  # ... but black never reads them
