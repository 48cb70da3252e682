"""Differential tests: rtcompile.runtime.tool_schema against transformers' get_json_schema (the reference).

Results must be equal including key order (schemas end up rendered into prompts), and failures must
raise exceptions of the same class name.
"""

import ast
import functools
import json
from collections.abc import Callable
from enum import Enum, IntEnum
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Tuple, Union  # noqa: UP035 - the old spellings are under test

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_template_utils import (
    _parse_type_hint,
    get_json_schema,
    parse_google_format_docstring,
)

from rtcompile.runtime import tool_schema
from rtcompile.runtime.tool_schema import (
    DocstringParsingException,
    TypeHintParsingException,
    function_to_tool_schema,
)
from tests.support.lanes import examples


class Color(Enum):
    RED = "red"
    ONE = 1
    NOTHING = None


class Size(IntEnum):
    SMALL = 1
    LARGE = 2


class Empty(Enum):
    pass


class Weird(Enum):
    LISTY = (1, 2)


class Custom:
    pass


# Names the generated functions' annotations may use.
NAMESPACE: dict[str, Any] = {
    "Any": Any,
    "Dict": Dict,  # noqa: UP006
    "List": List,  # noqa: UP006
    "Literal": Literal,
    "Optional": Optional,
    "Tuple": Tuple,  # noqa: UP006
    "Union": Union,
    "Color": Color,
    "Size": Size,
    "Empty": Empty,
    "Weird": Weird,
    "Custom": Custom,
}


def outcome(func: Any, convert: Any) -> tuple[str, str]:
    """("ok", schema as order-preserving JSON) or ("error", exception class name)."""
    try:
        return "ok", json.dumps(convert(func))
    except Exception as exc:  # noqa: BLE001 - any failure is compared by class name
        return "error", type(exc).__name__


def assert_same(func: Any) -> tuple[str, str]:
    expected = outcome(func, get_json_schema)
    assert outcome(func, function_to_tool_schema) == expected
    return expected


def make_function(source: str) -> Any:
    namespace = dict(NAMESPACE)
    exec(compile(source, "<generated>", "exec"), namespace)  # noqa: S102 - test input we generate
    return namespace["f"]


# -- examples -----------------------------------------------------------------------------------------


def test_documented_example() -> None:
    def multiply(x: float, y: float) -> float:
        """
        A function that multiplies two numbers

        Args:
            x: The first number to multiply
            y: The second number to multiply
        """
        return x * y

    assert function_to_tool_schema(multiply) == {
        "type": "function",
        "function": {
            "name": "multiply",
            "description": "A function that multiplies two numbers",
            "parameters": {
                "type": "object",
                "properties": {
                    "x": {"type": "number", "description": "The first number to multiply"},
                    "y": {"type": "number", "description": "The second number to multiply"},
                },
                "required": ["x", "y"],
            },
            "return": {"type": "number"},
        },
    }
    assert_same(multiply)


ANNOTATIONS = [
    "int",
    "float",
    "str",
    "bool",
    "None",
    "Any",
    "list",
    "dict",
    "tuple",
    "List",
    "Dict",
    "Tuple",
    "list[int]",
    "List[str]",
    "list[list[float]]",
    "dict[str, int]",
    "Dict[str, list[int]]",
    "dict[Custom, int]",
    "dict[str, Custom]",
    "dict[int]",
    "dict[str, int, float]",
    "tuple[int, str]",
    "Tuple[int, Optional[str], list[bool]]",
    "tuple[int]",
    "tuple[int, ...]",
    "tuple[()]",
    "Optional[int]",
    "int | None",
    "None | int",
    "Union[int, str]",
    "Union[int, str, None]",
    "int | str | float",
    "Union[list[int], dict[str, int]]",
    "Union[list, tuple]",
    "Optional[Any]",
    "Union[int, Any]",
    "Literal['a', 'b']",
    "Literal[1, 'a', True, None, 1.5]",
    "Optional[Literal['x']]",
    "Union[Literal['a'], int]",
    "Literal[Color.RED]",
    "Color",
    "Size",
    "Empty",
    "Weird",
    "Optional[Color]",
    "list[Color]",
    "Custom",
    "list[Custom]",
    "Optional[Custom]",
    "'int'",
    "'list[Optional[str]]'",
    "list['int']",
    "'Undefined'",
    "set[int]",
    "frozenset",
    "type",
    "bytes",
    "object",
]


@pytest.mark.parametrize("annotation", ANNOTATIONS)
def test_each_annotation(annotation: str) -> None:
    for default in ("", " = None", " = 3"):
        source = (
            f'def f(a: {annotation}{default}) -> {annotation}:\n    """Doc.\n\n    Args:\n        a: the a\n    """\n'
        )
        assert_same(make_function(source))


# String annotations are resolved by get_type_hints before conversion, so only runtime hints go in directly.
RUNTIME_HINTS = [annotation for annotation in ANNOTATIONS if not annotation.startswith("'")]


@pytest.mark.parametrize("annotation", RUNTIME_HINTS)
def test_each_hint_directly(annotation: str) -> None:
    hint = eval(annotation, dict(NAMESPACE))  # noqa: S307 - fixed test input
    expected = outcome(hint, _parse_type_hint)
    assert outcome(hint, tool_schema._tool_type_schema) == expected


def test_error_situations() -> None:
    def no_doc(a: int) -> None:
        pass

    def missing_description(a: int, b: str) -> None:
        """Doc.

        Args:
            a: described
        """

    def missing_hint(a, b: int) -> None:  # type: ignore[no-untyped-def]
        """Doc.

        Args:
            a: x
            b: y
        """

    def custom(a: Custom) -> None:
        """Doc.

        Args:
            a: x
        """

    cases: list[tuple[Callable[..., Any], type[Exception]]] = [
        (no_doc, DocstringParsingException),
        (missing_description, DocstringParsingException),
        (missing_hint, TypeHintParsingException),
        (custom, TypeHintParsingException),
    ]
    for func, exception in cases:
        assert assert_same(func) == ("error", exception.__name__)
        with pytest.raises(exception):
            function_to_tool_schema(func)


def test_messages_are_similar() -> None:
    def missing_description(a: int) -> None:
        """Doc."""

    with pytest.raises(DocstringParsingException, match="no description for the argument 'a'"):
        function_to_tool_schema(missing_description)

    def no_doc(a: int) -> None:
        pass

    with pytest.raises(DocstringParsingException, match="no_doc because it has no docstring"):
        function_to_tool_schema(no_doc)


def test_unusable_return_hint_is_dropped() -> None:
    def f(a: int) -> Custom:
        """Doc.

        Args:
            a: x

        Returns:
            something
        """
        return Custom()

    assert "return" not in function_to_tool_schema(f)["function"]
    assert_same(f)


def test_methods_skip_receiver() -> None:
    class Tools:
        def method(self, a: int) -> int:
            """Doc.

            Args:
                a: x
            """
            return a

        @classmethod
        def klass(cls, a: int) -> int:
            """Doc.

            Args:
                a: x
            """
            return a

    for func in (Tools().method, Tools.method, Tools.klass):
        assert assert_same(func)[0] == "ok"


def test_choices_and_args_variants() -> None:
    def f(a: str, b: int, c: Literal["x", "y"], d: str | None = None) -> None:
        """Pick things.   Args: inline mention is a cut too

        Args:
            a (str): one of (choices: ["tea ", " coffee"])
            b (int, optional): a number
                that wraps (CHOICES: [1, 2])
            c: overrides the literal enum (choices: ["z"])
            d:
                on the next line
        Returns:
            nothing
        Raises:
            ValueError: never
        """

    assert assert_same(f)[0] == "ok"


def test_callables_without_names() -> None:
    def base(a: int, b: str) -> None:
        """Doc.

        Args:
            a: x
            b: y
        """

    assert_same(functools.partial(base, 1))


# -- generated functions --------------------------------------------------------------------------------
# Half of the generated functions are "clean" (every hint convertible, every parameter described, no
# section headers inside descriptions) so that the successful path is compared in depth; the other
# half mixes in everything that makes either implementation raise.

clean_leaves = ["int", "float", "str", "bool", "None", "Any", "list", "dict", "tuple", "List", "Color", "Size"]
bad_leaves = ["Custom", "Empty", "Weird", "set[int]"]
clean_literals = ["'a'", "'b'", "1", "2.5", "True", "None"]


def make_type_expressions(clean: bool) -> st.SearchStrategy[str]:
    leaves = st.sampled_from(clean_leaves + ([] if clean else bad_leaves))
    literal_values = st.lists(
        st.sampled_from(clean_literals + ([] if clean else ["Color.RED"])), min_size=1, max_size=3
    )

    def compose(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        options = [
            children.map(lambda t: f"list[{t}]"),
            children.map(lambda t: f"List[{t}]"),
            children.map(lambda t: f"Optional[{t}]"),
            st.tuples(children, children).map(lambda ts: f"dict[{ts[0]}, {ts[1]}]"),
            st.tuples(children, children).map(lambda ts: f"tuple[{ts[0]}, {ts[1]}]"),
            st.tuples(children, children).map(lambda ts: f"Union[{ts[0]}, {ts[1]}]"),
            st.tuples(children, children).map(lambda ts: f"{ts[0]} | {ts[1]}"),
            literal_values.map(lambda vs: f"Literal[{', '.join(vs)}]"),
        ]
        if not clean:
            options += [children.map(lambda t: f"tuple[{t}]"), children.map(lambda t: f"tuple[{t}, ...]")]
        return st.one_of(options)

    return st.recursive(leaves, compose, max_leaves=4)


# Built once: constructing strategies inside every draw makes generation several times slower.
TYPE_EXPRESSIONS = {clean: make_type_expressions(clean) for clean in (True, False)}


identifiers = st.sampled_from(["a", "b", "x", "y", "value", "query", "n_items", "données", "Args"])
plain_words = ["the", "value", "é", "to", "use", "a", "x-y", "(int)", "1.5"]
tricky_words = ["Returns:", "Raises:", "Args:", "x:", ":"]
indents = st.sampled_from(["", " ", "    ", "\t", "  \t"])


DESCRIPTIONS = {
    clean: st.lists(
        st.sampled_from(plain_words + ([] if clean else tricky_words)), min_size=1 if clean else 0, max_size=5
    ).map(" ".join)
    for clean in (True, False)
}


@st.composite
def choices_suffix(draw: st.DrawFn) -> str:
    if not draw(st.booleans()):
        return ""
    values = draw(st.lists(st.sampled_from(['"tea"', '" coffee "', "1", "null", "true", "[1]"]), max_size=3))
    marker = draw(st.sampled_from(["(choices:", "(Choices: ", "(choices:  "]))
    return f" {marker}[{', '.join(values)}])"


@st.composite
def arg_entry(draw: st.DrawFn, name: str, clean: bool, indent: str) -> str:
    indent = indent if clean else draw(indents)  # clean: every entry at the same indentation
    type_part = draw(st.sampled_from(["", " (int)", "(str, optional)"] + ([] if clean else [" (a(b))"])))
    first = draw(DESCRIPTIONS[clean])
    lines = [f"{indent}{name}{type_part}:{' ' if first else ''}{first}"]
    for _ in range(draw(st.integers(0, 2))):
        deeper = draw(st.sampled_from(["  ", "    ", "\t"] + ([] if clean else [""])))
        lines.append(f"{indent}{deeper}{draw(DESCRIPTIONS[clean])}")
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "   "])))
    lines[-1] += draw(choices_suffix())
    return "\n".join(lines)


@st.composite
def docstrings(draw: st.DrawFn, names: list[str], clean: bool) -> str:
    parts = [("Summary. " if clean else "") + draw(DESCRIPTIONS[clean])]
    if clean or draw(st.integers(0, 9)) > 0:
        parts.append(draw(st.sampled_from(["Args:", "  Args:"] + ([] if clean else ["Args: ", "Arguments:"]))))
        described = [name for name in names if clean or draw(st.integers(0, 9)) > 0]
        extra = draw(st.lists(identifiers, max_size=1))
        indent = draw(indents)
        for name in draw(st.permutations(described + extra)):
            parts.append(draw(arg_entry(name, clean, indent)))
            if draw(st.booleans()):
                parts.append("")
    if draw(st.booleans()):
        parts += ["", draw(st.sampled_from(["Returns:", "  Returns:"])), "    " + draw(DESCRIPTIONS[clean])]
    if draw(st.booleans()):
        parts += ["Raises:", "    ValueError: " + draw(DESCRIPTIONS[clean])]
    body = "\n".join(parts)
    return draw(st.sampled_from(["", "\n", "\n    "])) + body.replace("\n", "\n" + draw(st.sampled_from(["", "    "])))


@st.composite
def function_sources(draw: st.DrawFn) -> str:
    clean = draw(st.booleans())
    names = draw(st.lists(identifiers, max_size=5, unique=True))
    receiver = draw(st.sampled_from([[], [], ["self"], ["cls"], ["self: int"]]))
    params = list(receiver)
    seen_default = False
    for name in names:
        annotation = draw(TYPE_EXPRESSIONS[clean]) if clean or draw(st.integers(0, 19)) > 0 else None
        if annotation is not None and draw(st.integers(0, 9)) == 0:
            annotation = repr(annotation)  # a string annotation, resolved by get_type_hints
        has_default = seen_default or draw(st.booleans())
        seen_default = seen_default or has_default
        text = name + (f": {annotation}" if annotation is not None else "")
        if has_default:
            text += " = None" if annotation is not None else "=None"
        params.append(text)
    returns = draw(st.one_of(st.none(), TYPE_EXPRESSIONS[clean]))
    doc = docstrings(names + [r.split(":")[0] for r in receiver if ":" in r], clean)
    docstring = draw(doc if clean else st.one_of(st.just(None), doc))
    head = f"def f({', '.join(params)})" + (f" -> {returns}" if returns else "") + ":\n"
    body = f"    {docstring!r}\n" if docstring is not None else ""
    return head + body + "    pass\n"


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=function_sources())
def test_generated_functions_match_reference(source: str) -> None:
    try:
        func = make_function(source)
    except (TypeError, SyntaxError):
        return  # e.g. `None | None` is rejected when the def runs; not our concern
    assert_same(func)


# -- the docstring parser on its own, with adversarial text ------------------------------------------------

fragments = st.sampled_from(
    [
        "Args:",
        "Returns:",
        "Raises:",
        "KwArgs:",
        "\n",
        "\n",
        "\n    ",
        " ",
        "\t",
        "x",
        "y_1",
        "é",
        ":",
        "(int)",
        "(",
        ")",
        " (choices: [1, 2])",
        "desc",
        "\x85",
        "\r",
        "\u2028",
    ]
)


doc_line = st.one_of(
    st.tuples(
        st.sampled_from(["", " ", "  ", "    ", "\t", "  \t", "      "]),
        st.sampled_from(["x", "y_1", "z", "é", "Args"]),
        st.sampled_from(["", " (int)", "(a, b)", " (a(b))", " (x) "]),
        st.sampled_from(
            ["", " ", " desc", " more text", " (choices: [1, 2])", " (CHOICES:\u00a0[1])", " Returns: x", "\x85"]
        ),
    ).map(lambda parts: f"{parts[0]}{parts[1]}{parts[2]}:{parts[3]}"),
    st.tuples(
        st.sampled_from(["", " ", "    ", "\t"]),
        st.sampled_from(["", "desc", "Args:", "Returns:", "Raises:", "Args: x", "KwArgs:", "   ", "\u2028", "a (b)"]),
    ).map("".join),
)
doc_texts = st.tuples(
    st.sampled_from(["Summary.", "", "Summary.\n", "Args: inline"]),
    st.sampled_from(["Args:", "  Args:", "Args: ", "Returns:"]),
    st.lists(doc_line, max_size=8),
).map(lambda parts: "\n".join([parts[0], parts[1], *parts[2]]))


@settings(max_examples=examples(1000), deadline=None)
@given(doc=st.one_of(st.lists(fragments, max_size=30).map("".join), doc_texts))
def test_docstring_parser_matches_reference(doc: str) -> None:
    for text in (doc, doc.strip()):
        assert tool_schema._tool_parse_docstring(text) == parse_google_format_docstring(text)


@settings(max_examples=examples(500), deadline=None)
@given(doc=st.one_of(st.lists(fragments, max_size=30).map("".join), doc_texts))
def test_adversarial_docstrings_on_functions(doc: str) -> None:
    def f(x: int, y_1: str | None = None, z: list[int] | None = None) -> int:
        return x

    f.__doc__ = doc if doc.startswith("Summary") else "Summary.\n\nArgs:\n" + doc
    assert_same(f)


@settings(max_examples=examples(400), deadline=None)
@given(
    parts=st.tuples(
        st.sampled_from(["", "desc ", "a (b) ", "(choices: [9]) then "]),
        st.sampled_from(["(choices:", "(CHOICES:", "(choiceſ:", "(choices :", "(choice:"]),
        st.sampled_from(["", " ", "\u00a0", "\u2028", "\t  "]),
        st.sampled_from(["[1, 2]", '["a ", " b"]', "", '{"k": 1}', '"ab"', "3", "[1", "null", "[[1], null]"]),
        st.sampled_from(["", ")", ") ", ")\u00a0", ") x", "))", ")\x85"]),
    )
)
def test_choices_suffixes(parts: tuple[str, ...]) -> None:
    def f(x: int) -> None:
        pass

    f.__doc__ = "Summary.\n\nArgs:\n    x: " + "".join(parts)
    assert_same(f)


def test_module_shape_is_liftable() -> None:
    """Everything at module level is a function, a constant, an import or one of the two exceptions."""
    tree = ast.parse(Path(tool_schema.__file__).read_text(encoding="utf-8"))
    classes = [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
    assert classes == ["TypeHintParsingException", "DocstringParsingException"]
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
            assert module is not None and module.split(".")[0] in {
                "inspect",
                "json",
                "re",
                "sys",
                "types",
                "collections",
                "enum",
                "typing",
            }
