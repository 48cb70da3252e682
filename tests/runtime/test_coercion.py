"""Differential tests: rtcompile.runtime.coercion against transformers' tool-argument casting.

Our functions and the reference's (`_schema_types`, `_coerce`, `ResponseParser`'s tool table and
`_coerce_tool_calls`) get the same random schemas, raw strings, tool lists and parsed values, and must
return the same values (types included), raise the same exceptions, and mutate their input the same way.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import response_parser as ref

from rtcompile.runtime.coercion import coerce_tool_calls, coerce_value, schema_types, tool_parameter_table
from tests.support.lanes import examples

SETTINGS = settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
TEMPLATE = {"start_anchor": "<s>", "fields": {"content": {}}}


def typed(value: Any) -> Any:
    """A comparable form that tells apart bool/int/float, -0.0 and nan, and keeps dict order."""
    if isinstance(value, dict):
        return ("dict", tuple((typed(k), typed(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(typed(v) for v in value))
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else repr(value))
    return (type(value).__name__, value)


def outcome(call: Callable[[], Any]) -> Any:
    try:
        return ("ok", typed(call()))
    except Exception as error:  # the exception type and message are what we compare
        return ("error", type(error).__name__, str(error))


def reference_parser(tools: list[Any]) -> Any:
    return ref.ResponseParser(TEMPLATE, prefix="", tools=tools)


# --- schemas ----------------------------------------------------------------------------------------------------

# Ordered so that the simplest draws (which Hypothesis favours) already cast something.
TYPE_NAMES = ["integer", "number", "boolean", "null", "object", "array", "string", "foo", "Integer"]
NON_DICT: st.SearchStrategy[Any] = st.one_of(st.none(), st.integers(-1, 2), st.sampled_from(TYPE_NAMES), st.just([]))
SCHEMAS = st.recursive(
    st.one_of(
        NON_DICT,
        st.fixed_dictionaries(
            {},
            optional={
                "type": st.one_of(
                    st.sampled_from(TYPE_NAMES),
                    st.lists(st.one_of(st.sampled_from(TYPE_NAMES), st.none(), st.integers(0, 1)), max_size=3),
                    st.integers(0, 1),
                ),
                "nullable": st.one_of(st.booleans(), st.none(), st.integers(0, 1), st.just("no")),
                "description": st.just("ignored"),
            },
        ),
    ),
    lambda inner: st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(TYPE_NAMES),
            "anyOf": st.one_of(st.lists(inner, max_size=3), st.sampled_from([None, 0, "", "ab", {"type": "x"}, 1])),
            "oneOf": st.lists(inner, max_size=3),
            "nullable": st.booleans(),
        },
    ),
    max_leaves=8,
)


@SETTINGS
@given(SCHEMAS)
def test_schema_types_matches_reference(schema: Any) -> None:
    assert outcome(lambda: schema_types(schema)) == outcome(lambda: ref._schema_types(schema))


def test_schema_types_examples() -> None:
    assert schema_types({"type": ["integer", "null"]}) == ("integer", "null")
    assert schema_types({"anyOf": [{"type": "number"}, {"type": "string"}], "nullable": True}) == (
        "number",
        "string",
        "null",
    )
    assert schema_types({"type": "null", "nullable": True}) == ("null",)
    assert schema_types("integer") == ()


# --- single values ----------------------------------------------------------------------------------------------

RAW_SAMPLES = [
    "3", "3.0", "3.5", " 3 ", "+3", "-0", "-0.0", "1e3", "1E400", "1e400", "-1e400", "nan", "NaN", "inf", "-Infinity",
    "1_000", "\u0663", "\u00b2", "0x10", "true", " TRUE ", "1", "0", "false", "yes", "None", "null", " null ", "Null",
    '{"a": 1}', "[1, 2]", "[1, NaN]", "{}", "[]", '"text"', "{a: 1}", "", " ", "\u3000", "1" * 5000, "9" * 400,
    "1" * 400 + ".0", "123456789012345678901234567890", "4.000000000000001", "\u0663.5",
]  # fmt: skip
RAWS = st.one_of(
    st.sampled_from(RAW_SAMPLES),
    st.integers().map(str),
    st.floats().map(repr),
    st.text(alphabet="0123456789.eE+-_ nainfINFtrueTRUE", max_size=8),
)
TYPES = st.lists(st.sampled_from(TYPE_NAMES), max_size=4).map(tuple)


@settings(max_examples=examples(1500), deadline=None)
@given(RAWS, TYPES)
def test_coerce_value_matches_reference(raw: str, types: tuple[str, ...]) -> None:
    assert outcome(lambda: coerce_value(raw, types)) == outcome(lambda: ref._coerce(raw, types))


def test_coerce_value_examples() -> None:
    assert coerce_value("3.0", ("integer",)) == 3 and isinstance(coerce_value("3.0", ("integer",)), int)
    assert coerce_value("3.5", ("integer",)) == "3.5"
    assert coerce_value("3.5", ("integer", "number")) == 3.5
    assert coerce_value("1e3", ("number",)) == 1000 and isinstance(coerce_value("1e3", ("number",)), int)
    assert coerce_value("1e400", ("number",)) == "1e400"
    assert coerce_value("nan", ("number", "string")) == "nan"
    assert coerce_value(" true ", ("boolean",)) is True
    assert coerce_value("None", ("null",)) is None
    assert coerce_value('{"a": 1}', ("array", "object")) == {"a": 1}
    assert coerce_value("[1]", ("object",)) == "[1]"
    assert coerce_value("1" * 5000, ("integer",)) == "1" * 5000  # int() refuses, float() overflows to inf


def test_coerce_value_lets_recursion_errors_through() -> None:
    # Only ValueError means "does not fit"; json's RecursionError on absurd nesting escapes, in both.
    deep = "[" * 200_000
    casts: list[Callable[[], Any]] = [
        lambda: coerce_value(deep, ("array", "string")),
        lambda: ref._coerce(deep, ("array", "string")),
    ]
    for cast in casts:
        try:
            cast()
        except RecursionError:
            continue
        raise AssertionError("expected RecursionError")


# --- tool tables ------------------------------------------------------------------------------------------------

NAMES = ["f", "get_weather", "search", ""]
PROPERTIES = st.one_of(
    st.dictionaries(st.sampled_from(["city", "days", "flag", "tags", "opts", "x"]), SCHEMAS, max_size=4),
    st.sampled_from([None, [], "props", 0]),
)
FUNCTIONS = st.fixed_dictionaries(
    {},
    optional={
        "name": st.one_of(st.sampled_from(NAMES), st.none(), st.integers(0, 1)),
        "parameters": st.one_of(
            st.fixed_dictionaries({"type": st.just("object")}, optional={"properties": PROPERTIES}),
            st.sampled_from([None, "params", []]),
        ),
        "description": st.just("d"),
    },
)
TOOLS = st.lists(
    st.one_of(
        FUNCTIONS.map(lambda f: {"type": "function", "function": f}),
        FUNCTIONS,
        st.sampled_from([None, "tool", 3, [], {"function": None}, {"function": "f"}, {"type": "function"}]),
    ),
    max_size=4,
)


@SETTINGS
@given(TOOLS)
def test_tool_parameter_table_matches_reference(tools: list[Any]) -> None:
    assert typed(tool_parameter_table(tools)) == typed(reference_parser(tools)._tool_params)


def test_tool_parameter_table_examples() -> None:
    wrapped = {"type": "function", "function": {"name": "a", "parameters": {"properties": {"x": {"type": "integer"}}}}}
    bare = {"name": "b", "parameters": {"type": "object"}}
    expected = {"a": {"x": {"type": "integer"}}, "b": {}}
    assert tool_parameter_table([wrapped, bare, "junk", {"function": None}]) == expected


# --- tool calls -------------------------------------------------------------------------------------------------

ARGUMENT_VALUES = st.one_of(
    st.sampled_from(RAW_SAMPLES[:45]),
    st.lists(st.one_of(st.sampled_from(RAW_SAMPLES[:45]), st.integers(), st.none()), max_size=3),
    st.integers(),
    st.dictionaries(st.just("k"), st.just("3"), max_size=1),
)
ARGUMENT_NAMES = ["x", "city", "days", "flag", "tags", "opts"]
SIMPLE_SCHEMAS = st.one_of(
    st.builds(lambda t: {"type": t}, st.sampled_from(TYPE_NAMES)),
    st.builds(lambda ts: {"type": ts}, st.lists(st.sampled_from(TYPE_NAMES), min_size=1, max_size=3)),
    st.builds(lambda ts: {"anyOf": [{"type": t} for t in ts], "nullable": True}, st.lists(st.sampled_from(TYPE_NAMES))),
    SCHEMAS,
)
# Tools that the generated calls refer to, with properties for the generated argument names.
USEFUL_TOOLS = st.lists(
    st.builds(
        lambda name, props: {"type": "function", "function": {"name": name, "parameters": {"properties": props}}},
        st.sampled_from(NAMES),
        st.dictionaries(st.sampled_from(ARGUMENT_NAMES), SIMPLE_SCHEMAS, min_size=1, max_size=5),
    ),
    min_size=1,
    max_size=3,
)


@st.composite
def tool_call(draw: st.DrawFn, table: dict[str, dict[str, Any]]) -> Any:
    """A well-formed call (usually to a tool in `table`, with its arguments), or a shape casting leaves alone."""
    names = [name for name in table if name]
    name = draw(st.sampled_from(names)) if names and draw(st.integers(0, 4)) < 4 else draw(st.sampled_from(NAMES))
    keys = [*table.get(name, {})] * 4 + ["x", "y"]
    arguments = draw(st.dictionaries(st.sampled_from(keys), ARGUMENT_VALUES, min_size=1))
    shape = draw(st.sampled_from(["wrapped", "wrapped", "wrapped", "no-name", "string-args", "bare", "junk"]))
    if shape == "wrapped":
        return {"type": "function", "function": {"name": name, "arguments": arguments}}
    if shape == "no-name":
        return {"function": {"name": None, "arguments": arguments}}
    if shape == "string-args":
        return {"function": {"name": name, "arguments": "{}"}}
    if shape == "bare":
        return {"name": name, "arguments": arguments}
    return draw(st.sampled_from([None, "text", 5, {"function": "f"}]))


@st.composite
def tools_and_value(draw: st.DrawFn) -> tuple[list[Any], Any]:
    tools = draw(USEFUL_TOOLS) if draw(st.integers(0, 3)) < 3 else draw(TOOLS)
    table = tool_parameter_table(tools)
    value = draw(st.recursive(tool_call(table), lambda inner: st.lists(inner, min_size=1, max_size=3), max_leaves=5))
    return tools, value


@SETTINGS
@given(tools_and_value())
def test_coerce_tool_calls_matches_reference(case: tuple[list[Any], Any]) -> None:
    tools, value = case
    table = tool_parameter_table(tools)
    parser = reference_parser(tools)
    mine, theirs = copy.deepcopy(value), copy.deepcopy(value)
    got = outcome(lambda: coerce_tool_calls(mine, table))
    assert got == outcome(lambda: parser._coerce_tool_calls(theirs))
    assert typed(mine) == typed(theirs)  # the same in-place changes to the input


def test_coerce_tool_calls_mutates_arguments_in_place() -> None:
    table = {"f": {"n": {"type": "integer"}, "tags": {"type": "integer"}, "raw": {"type": "array"}}}
    arguments = {"n": "3", "tags": ["1", 2, "x"], "raw": ["1"], "other": "4"}
    call = {"type": "function", "function": {"name": "f", "arguments": arguments}}
    assert coerce_tool_calls(call, table) is call
    assert arguments == {"n": 3, "tags": [1, 2, "x"], "raw": ["1"], "other": "4"}
    calls = [call, call]  # the same dict twice: cast once, then left alone
    result = coerce_tool_calls(calls, table)
    assert result is not calls and result[0] is call and result[1] is call


def test_coerce_tool_calls_aliasing_matches_reference() -> None:
    tools = [{"name": "f", "parameters": {"properties": {"a": {"type": ["integer", "string"]}}}}]
    shared = {"function": {"name": "f", "arguments": {"a": ["1", "b"]}}}
    mine, theirs = copy.deepcopy([shared, [shared]]), copy.deepcopy([shared, [shared]])
    assert typed(coerce_tool_calls(mine, tool_parameter_table(tools))) == typed(
        reference_parser(tools)._coerce_tool_calls(theirs)
    )
    assert typed(mine) == typed(theirs)
