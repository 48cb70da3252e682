"""What the field handlers of a generated module hold: runtime helpers lifted by what the fields' parsers use
(not by what the helpers could reach), called with keywords that differ from the reference's defaults, and
one function for each distinct piece of handler code, however many fields share it."""

from __future__ import annotations

import ast
from typing import Any

import pytest
from transformers.utils.chat_parsing import ResponseParser as Reference

import rtcompile
from tests.support.compiled import compiled_module


def template(fields: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"start_anchor": "^", "fields": {"content": {"content": "text"}, **fields}}


def functions(code: str) -> dict[str, str]:
    """Top-level function name -> its body's source, of a generated module."""
    tree = ast.parse(code)
    return {
        node.name: "\n".join(ast.unparse(statement) for statement in node.body)
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


def handler_calls(code: str) -> list[str]:
    """The runtime calls in the handlers and the functions they use, as written."""
    return sorted(
        body for name, body in functions(code).items() if name.startswith(("_handle", "_parse_value", "_fail"))
    )


def handler_table(code: str) -> list[str]:
    """The `handlers` of the module's `ParserProgram`: the handler of each field, by name."""
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.keyword) and node.arg == "handlers":
            assert isinstance(node.value, ast.Tuple)
            return [ast.unparse(element) for element in node.value.elts]
    raise AssertionError("no handlers table")


KV_NUMBERS = {"content": "kv-lines", "content_args": {"kv_sep": "=", "value_parser": {"name": "int"}}}
LENIENT_JSON = {"content": "json", "content_args": {"allow_non_json": True, "strip": False}}


def test_fields_that_parse_alike_share_one_handler_and_its_helpers() -> None:
    code = rtcompile.compile_template(
        template(
            {
                "a": {"open": "<a>", "close": "</a>", **KV_NUMBERS},
                "b": {"open": "<b>", "close": "</b>", **KV_NUMBERS},
                "c": {"open": "<c>", "close": "</c>", "content": "json", "content_args": {"unquoted_keys": True}},
                "d": {"open": "<d>", "close": "</d>", "content": "json", "content_args": {"unquoted_keys": True}},
                "e": {"open": "<e>", "close": "</e>", **LENIENT_JSON},
                "f": {"open": "<f>", "close": "</f>", "content": "json", "content_args": []},  # fails like the ref
                "g": {"open": "<g>", "close": "</g>", "content": "json", "content_args": []},
            }
        )
    )
    assert handler_calls(code) == sorted(
        [
            "return parse_text(body)",
            "return parse_kv_lines(body, kv_sep='=', value_parser=_parse_value_a)",
            "return parse_int(raw)",
            "return parse_json(body, dialect=json_quote_bare_keys)",
            "return parse_json(body, allow_non_json=True, strip=False)",
            "raise AttributeError(\"'list' object has no attribute 'get'\")",
            "return _fail_f(body)",
        ]
    )
    assert handler_table(code) == [
        "_handle_content",
        "_handle_kv_lines",
        "_handle_kv_lines",
        "_handle_json",
        "_handle_json",
        "_handle_e",
        "_handle_json_2",
        "_handle_json_2",
    ]


def test_json_rewrites_are_lifted_only_for_the_fields_that_ask_for_them() -> None:
    plain = rtcompile.compile_template(template({"t": {"open": "<t>", "close": "</t>", "content": "json"}}))
    assert "WORD_CLASS" not in plain and "json_quote_bare_keys" not in plain and "_JSON_MARK_OPEN" not in plain
    delimited = rtcompile.compile_template(
        template(
            {
                "t": {
                    "open": "<t>",
                    "close": "</t>",
                    "content": "json",
                    "content_args": {"string_delims": [["<<", ">>"]]},
                }
            }
        )
    )
    assert "WORD_CLASS" not in delimited and "json_quote_bare_keys" not in delimited
    assert functions(delimited)["_handle_t"] == "return parse_json_delimited(body, string_delims=(('<<', '>>'),))"
    both = rtcompile.compile_template(
        template(
            {
                "t": {
                    "open": "<t>",
                    "close": "</t>",
                    "content": "json",
                    "content_args": {"string_delims": [["<<", ">>"]], "unquoted_keys": True},
                }
            }
        )
    )
    assert "WORD_CLASS" in both
    assert functions(both)["_handle_t"] == (
        "return parse_json_delimited(body, string_delims=(('<<', '>>'),), quote_keys=json_quote_bare_keys)"
    )


@pytest.mark.parametrize(
    "text",
    [
        "<a>x=1\ny=2</a><b>z=3</b>",
        '<c>{k: 1, "s": "v: w"}</c><e> not json </e>',
        '<t>{k: <<a "b">>, n: 2}</t>',
        "<t>{k: \x01}</t>",
        "<f>[]</f>",
    ],
)
def test_shared_and_specialised_handlers_parse_as_the_reference(text: str) -> None:
    spec = template(
        {
            "a": {"open": "<a>", "close": "</a>", **KV_NUMBERS},
            "b": {"open": "<b>", "close": "</b>", **KV_NUMBERS},
            "c": {"open": "<c>", "close": "</c>", "content": "json", "content_args": {"unquoted_keys": True}},
            "e": {"open": "<e>", "close": "</e>", **LENIENT_JSON},
            "f": {"open": "<f>", "close": "</f>", "content": "json", "content_args": []},
            "t": {
                "open": "<t>",
                "close": "</t>",
                "content": "json",
                "content_args": {"string_delims": [["<<", ">>"]], "unquoted_keys": True},
            },
        }
    )
    module = compiled_module(spec)

    def outcome(parse: Any) -> Any:
        try:
            return parse()
        except Exception as error:  # the exception type and message are what we compare
            return (type(error).__name__, str(error))

    def reference() -> Any:
        parser = Reference(spec, prefix="")
        parser.feed(text)
        return parser.finalize()[0]

    assert outcome(lambda: module.parse_response(text, prefix="")) == outcome(reference)
