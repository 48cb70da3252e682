"""Tests for rtcompile.frontend.source (reading template sources with positions) and rtcompile.errors."""

from __future__ import annotations

import json
import math
import os
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtcompile.errors import Diagnostic, TemplateError, TemplateTypeError, format_path, render_message
from rtcompile.frontend.source import (
    MAX_NESTING_DEPTH,
    MAX_SOURCE_BYTES,
    SourceDocument,
    parse_json_document,
    read_template_source,
)

TEMPLATE = {"version": 1, "start_anchor": "<a>", "fields": {"content": {"content": "text"}}}


def write(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8", newline="")
    else:
        path.write_bytes(content)
    return str(path)


def read_error(source: Any) -> TemplateError:
    with pytest.raises(TemplateError) as info:
        read_template_source(source)
    return info.value


def offset_of(text: str, line: int, col: int) -> int:
    """Inverse of the documented position convention: lines end at "\\n", columns count characters."""
    lines = text.split("\n")
    return sum(len(previous) + 1 for previous in lines[: line - 1]) + col - 1


# -- errors.py ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "rendered"),
    [
        ((), ""),
        (("fields", "tool_calls", "open_pattern"), "fields.tool_calls.open_pattern"),
        (("fields", "a b", "open"), "fields['a b'].open"),
        (("fields", "x", "content_args", "string_delims", 0, 1), "fields.x.content_args.string_delims[0][1]"),
        ((0, "a"), "[0].a"),
        (("", "a.b", "ok"), "['']['a.b'].ok"),
        (("class", "ключ"), "class.ключ"),
    ],
)
def test_format_path(path: tuple[str | int, ...], rendered: str) -> None:
    assert format_path(path) == rendered


def test_error_rendering_omits_unknown_parts() -> None:
    path = ("fields", "tool_calls", "open_pattern")
    full = TemplateError("bad regex", path, file="cfg.json", line=3, col=7)
    assert str(full) == "cfg.json:3:7: fields.tool_calls.open_pattern: bad regex"
    assert str(TemplateError("bad regex", path)) == "fields.tool_calls.open_pattern: bad regex"
    assert str(TemplateError("bad", file="cfg.json")) == "cfg.json: bad"
    assert str(TemplateError("bad", file="cfg.json", col=4)) == "cfg.json: bad"  # a column alone means nothing
    assert str(TemplateError("bad", line=2, col=4)) == "2:4: bad"
    assert full.message == "bad regex" and full.path == path
    assert (full.file, full.line, full.col) == ("cfg.json", 3, 7)
    assert isinstance(full, ValueError)


def test_template_type_error_is_both() -> None:
    error = TemplateTypeError("must be a string", ("fields", "x", "content"))
    assert isinstance(error, TemplateError) and isinstance(error, TypeError) and isinstance(error, ValueError)


def test_error_survives_pickling() -> None:
    error = TemplateTypeError("m", ("a", 0), file="f", line=1, col=2)
    clone = pickle.loads(pickle.dumps(error))
    assert type(clone) is TemplateTypeError and str(clone) == str(error) and clone.path == ("a", 0)


def test_diagnostic_renders_like_error() -> None:
    diagnostic = Diagnostic("warning", "unused", ("fields", "x"), "f.json", 2, 5)
    assert (
        str(diagnostic) == "f.json:2:5: fields.x: unused" == render_message("unused", ("fields", "x"), "f.json", 2, 5)
    )
    assert str(diagnostic.to_error()) == str(diagnostic)
    assert TemplateError("unused", ("fields", "x"), file="f.json", line=2, col=5).to_diagnostic().severity == "error"


# -- the kinds of source -------------------------------------------------------------------------


def test_tokenizer_config(tmp_path: Path) -> None:
    text = json.dumps({"model_max_length": 10, "response_template": TEMPLATE}, indent=2)
    path = write(tmp_path, "tokenizer_config.json", text)
    template, document = read_template_source(path)
    assert template == TEMPLATE
    assert document is not None and document.file == path and document.prefix == ("response_template",)
    line, col = document.locate(("fields", "content", "content")) or (0, 0)
    assert text.splitlines()[line - 1][col - 1 :] == '"text"'
    assert document.locate(()) == (3, 24)  # paths are relative to the template
    assert document.locate(("nope",)) is None


def test_any_file_with_response_template_is_a_config(tmp_path: Path) -> None:
    path = write(tmp_path, "my_model.json", json.dumps({"response_template": TEMPLATE}))
    template, document = read_template_source(Path(path))  # PathLike works too
    assert template == TEMPLATE and document is not None and document.prefix == ("response_template",)


def test_bare_template(tmp_path: Path) -> None:
    path = write(tmp_path, "template.json", json.dumps(TEMPLATE, indent=4))
    template, document = read_template_source(path)
    assert template == TEMPLATE
    assert document is not None and document.prefix == () and document.value == TEMPLATE
    assert document.locate(("fields", "content", "content")) == (6, 24)
    assert document.locate_key(("fields", "content", "content")) == (6, 13)


def test_model_directory(tmp_path: Path) -> None:
    write(tmp_path, "tokenizer_config.json", json.dumps({"response_template": TEMPLATE}))
    template, document = read_template_source(tmp_path)
    assert template == TEMPLATE
    assert document is not None and document.file == os.path.join(str(tmp_path), "tokenizer_config.json")


def test_mapping_is_returned_as_is() -> None:
    template = dict(TEMPLATE)
    assert read_template_source(template) == (template, None)
    assert read_template_source(template)[0] is template


# -- file-level errors ----------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    path = str(tmp_path / "nope.json")
    error = read_error(path)
    assert error.file == path and "no such file" in error.message and str(error).startswith(path + ": ")


def test_directory_without_config(tmp_path: Path) -> None:
    error = read_error(tmp_path)
    assert error.file == str(tmp_path) and "no tokenizer_config.json" in error.message


def test_config_without_response_template(tmp_path: Path) -> None:
    path = write(tmp_path, "tokenizer_config.json", '{"model_max_length": 10}')
    error = read_error(path)
    assert error.file == path
    assert f'{path} has no "response_template" key' in error.message
    assert "add a" in error.message  # and says what to do


def test_object_that_is_neither(tmp_path: Path) -> None:
    path = write(tmp_path, "other.json", '{"model_max_length": 10}')
    error = read_error(path)
    assert "neither a tokenizer config" in error.message and error.file == path


@pytest.mark.parametrize("content", ["", "  \n\r\n\t"])
def test_empty_file(tmp_path: Path, content: str) -> None:
    error = read_error(write(tmp_path, "t.json", content))
    assert "file is empty" in error.message and (error.line, error.col) == (1, 1)


def test_invalid_json_position(tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", '{\n  "fields": {\n    "a": 1\n    "b": 2\n  }\n}')
    error = read_error(path)
    assert (error.file, error.line, error.col, error.path) == (path, 4, 5, ("fields",))
    assert "expected ',' or '}', found '\"'" in error.message


def test_top_level_array(tmp_path: Path) -> None:
    error = read_error(write(tmp_path, "t.json", "\n  [1, 2]"))
    assert "found an array" in error.message and (error.line, error.col) == (2, 3)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("null", "is null, so this model has no response template"), ("[]", "found an array"), ('"x"', "found a string")],
)
def test_response_template_not_an_object(tmp_path: Path, value: str, expected: str) -> None:
    path = write(tmp_path, "tokenizer_config.json", '{"a": 1,\n "response_template": ' + value + "}")
    error = read_error(path)
    assert expected in error.message and (error.file, error.line, error.col) == (path, 2, 23)


def test_non_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", b'{"fields":\n  {"a": "caf\xe9"}}')
    error = read_error(path)
    assert "byte 0xe9 at byte offset 23" in error.message and "UTF-8" in error.message
    assert (error.line, error.col) == (2, 13)


def test_utf8_bom_is_rejected_with_a_fix(tmp_path: Path) -> None:
    text = json.dumps({"response_template": TEMPLATE})
    error = read_error(write(tmp_path, "t.json", b"\xef\xbb\xbf" + text.encode()))
    assert "byte-order mark" in error.message and "without BOM" in error.message
    assert (error.line, error.col) == (1, 1)


def test_undecodable_byte_is_located(tmp_path: Path) -> None:
    error = read_error(write(tmp_path, "v.json", b'{"fields": "\xff"}'))
    assert "byte offset 12" in error.message and (error.line, error.col) == (1, 13)


def test_utf16_is_rejected(tmp_path: Path) -> None:
    error = read_error(write(tmp_path, "t.json", json.dumps(TEMPLATE).encode("utf-16")))
    assert "UTF-16" in error.message and "UTF-8" in error.message


def test_utf16_without_bom_gets_a_hint(tmp_path: Path) -> None:
    error = read_error(write(tmp_path, "t.json", json.dumps(TEMPLATE).encode("utf-16-le")))
    assert "UTF-16" in error.message and (error.line, error.col) == (1, 2)


def test_huge_file_is_refused_without_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with open(path, "wb") as handle:
        handle.truncate(MAX_SOURCE_BYTES + 1)  # sparse: costs no disk or time
    error = read_error(str(path))
    assert "larger than 64 MiB" in error.message and error.file == str(path)


# -- nesting ----------------------------------------------------------------------------------------


def test_absurd_nesting_is_a_clean_error(tmp_path: Path) -> None:
    error = read_error(write(tmp_path, "t.json", "[" * 100_000))
    assert f"deeper than {MAX_NESTING_DEPTH}" in error.message
    assert (error.line, error.col) == (1, MAX_NESTING_DEPTH + 1)
    assert len(error.path) <= 8  # not a path of hundreds of [0]s


@pytest.mark.parametrize("where", ["template", "elsewhere"])
def test_absurd_nesting_inside_a_config(tmp_path: Path, where: str) -> None:
    deep = "[" * 100_000
    text = '{"response_template": ' + deep if where == "template" else '{"other": ' + deep
    error = read_error(write(tmp_path, "tokenizer_config.json", text))
    assert f"deeper than {MAX_NESTING_DEPTH}" in error.message


@pytest.mark.parametrize("where", ["template", "elsewhere"])
def test_nesting_limit_is_exact(where: str) -> None:
    def config(depth: int) -> str:
        inner = "[" * (depth - 2) + "]" * (depth - 2)  # inside two objects: depth levels in all
        if where == "template":
            return '{"response_template": {"x": ' + inner + "}}"
        return '{"response_template": {}, "other": {"x": ' + inner + "}}"

    parse_json_document(config(MAX_NESTING_DEPTH), prefix=("response_template",), strict_outside_prefix=False)
    with pytest.raises(TemplateError, match="deeper than"):
        parse_json_document(config(MAX_NESTING_DEPTH + 1), prefix=("response_template",), strict_outside_prefix=False)


# -- strictness -------------------------------------------------------------------------------------


def test_duplicate_key_in_template(tmp_path: Path) -> None:
    text = '{"response_template": {"fields": {\n  "a": {},\n  "b": {},\n  "a": {"content": "json"}}}}'
    path = write(tmp_path, "tokenizer_config.json", text)
    error = read_error(path)
    assert (error.file, error.line, error.col, error.path) == (path, 4, 3, ("fields", "a"))
    assert "duplicate key 'a'" in error.message and "2:3" in error.message and "4:3" in error.message


def test_duplicate_response_template_key(tmp_path: Path) -> None:
    text = '{"response_template": {"fields": {}},\n"response_template": {"fields": {"a": {}}}}'
    error = read_error(write(tmp_path, "tokenizer_config.json", text))
    assert "duplicate key 'response_template'" in error.message and (error.line, error.col) == (2, 1)
    assert error.path == ()


def test_duplicate_key_outside_template_is_read_like_transformers(tmp_path: Path) -> None:
    text = '{"extra": {"k": 1, "k": 2}, "pad": NaN, "response_template": {"fields": {}}}'
    template, document = read_template_source(write(tmp_path, "tokenizer_config.json", text))
    assert template == {"fields": {}} and document is not None
    assert isinstance(document.value, dict)
    assert document.value["extra"] == {"k": 2} == json.loads(text)["extra"]
    assert math.isnan(document.value["pad"])


def test_duplicate_key_anywhere_in_bare_template(tmp_path: Path) -> None:
    error = read_error(write(tmp_path, "t.json", '{"fields": {}, "defaults": {"x": 1, "x": 1}}'))
    assert error.path == ("defaults", "x") and (error.line, error.col) == (1, 37)


def test_parse_json_document_is_strict_everywhere_by_default() -> None:
    text = '{"other": {"k": 1, "k": 2}, "response_template": {}}'
    with pytest.raises(TemplateError, match="duplicate key 'k'") as info:
        parse_json_document(text, prefix=("response_template",))
    assert info.value.path == ()  # outside the template: no template path to give
    document = parse_json_document(text, prefix=("response_template",), strict_outside_prefix=False)
    assert document.value == {"other": {"k": 2}, "response_template": {}}


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_in_template(tmp_path: Path, literal: str) -> None:
    path = write(tmp_path, "t.json", '{"fields": {},\n "defaults": {"n": ' + literal + "}}")
    error = read_error(path)
    assert f"{literal} is not valid JSON" in error.message
    assert (error.line, error.col, error.path) == (2, 20, ("defaults", "n"))


@pytest.mark.parametrize(
    ("text", "message", "position"),
    [
        ('{"fields": {"a": 1,}}', "trailing comma before '}'", (1, 19)),
        ('{"fields": [1, 2,\n]}', "trailing comma before ']'", (1, 17)),
        ('{"fields": "abc', "unterminated string", (1, 12)),
        ('{"fields": "a\tb"}', "control character U+0009 must be escaped", (1, 14)),
        ('{"fields": "a\\qb"}', 'invalid escape "\\q"', (1, 14)),
        ('{"fields": "\\u12x4"}', 'invalid escape "\\u12x4"', (1, 13)),
        ('{"fields": tru}', "expected a value, found 'tru'", (1, 12)),
        ('{"fields": None}', "expected a value, found 'None'", (1, 12)),
        ("{'fields': 1}", 'expected a double-quoted key, found "\'"', (1, 2)),
        ('{"fields" 1}', "expected ':' after the key", (1, 11)),
        ('{"fields": {}} {}', "unexpected '{' after the end", (1, 16)),
        ('{"fields": 01}', "expected ',' or '}', found '1'", (1, 13)),
        ('{"fields": {}', "expected ',' or '}', found end of file", (1, 14)),
    ],
)
def test_syntax_errors(tmp_path: Path, text: str, message: str, position: tuple[int, int]) -> None:
    error = read_error(write(tmp_path, "t.json", text))
    assert message in error.message
    assert (error.line, error.col) == position


def test_syntax_error_paths_are_relative_to_the_template(tmp_path: Path) -> None:
    text = '{"response_template": {"fields": {"x": {"open": "a" "b"}}}}'
    error = read_error(write(tmp_path, "tokenizer_config.json", text))
    assert error.path == ("fields", "x") and str(error).split(": ")[1] == "fields.x"
    # in a bare template the path is root-relative
    error = read_error(write(tmp_path, "t.json", '{"fields": {"x": {"open": "a" "b"}}}'))
    assert error.path == ("fields", "x")
    # outside the template of a config there is no template path to give
    error = read_error(write(tmp_path, "tokenizer_config.json", '{"other": {"a": 1 2}, "response_template": {}}'))
    assert error.path == () and (error.line, error.col) == (1, 19)


def test_huge_integer_is_a_clean_error() -> None:
    with pytest.raises(TemplateError, match="number cannot be read"):
        parse_json_document('{"n": 1' + "0" * 5000 + "}")


# -- positions ----------------------------------------------------------------------------------------


def test_tricky_positions() -> None:
    text = '\ufeff{"ключ": "значение",\r\n\t"k\\"ey": [1, {"\\u00e9\\n": null}],\r\n "😀": "😀x"}'
    document = parse_json_document(text, file="f.json")
    body = text[1:]
    assert document.text == body
    assert document.locate(("ключ",)) == (1, 10)  # columns count characters, not bytes
    assert document.locate(('k"ey',)) == (2, 11)
    assert document.locate_key(('k"ey',)) == (2, 2)
    assert document.locate(('k"ey', 1, "é\n")) == (2, 28)
    assert document.locate(("😀",)) == (3, 7)
    for path in [("ключ",), ('k"ey',), ('k"ey', 0), ('k"ey', 1), ('k"ey', 1, "é\n"), ("😀",)]:
        line, col = document.locate(path) or (0, 0)
        value: Any = document.value
        for part in path:
            value = value[part]
        assert json.JSONDecoder().raw_decode(body, offset_of(body, line, col))[0] == value


def test_document_helpers_fall_back_to_the_nearest_value() -> None:
    document = parse_json_document('{\n  "fields": {\n    "a": {}\n  }\n}', file="t.json")
    assert document.locate_nearest(("fields", "a", "open")) == (3, 10)
    error = document.error("missing 'open'", ("fields", "a", "open"))
    assert str(error) == "t.json:3:10: fields.a.open: missing 'open'"
    warning = document.diagnostic("warning", "odd", ("fields", "zzz"))
    assert str(warning) == "t.json:2:13: fields.zzz: odd" and warning.severity == "warning"
    assert isinstance(document, SourceDocument)


# -- property: every located value decodes back to itself ---------------------------------------------

json_keys = st.text(
    alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from('"\\\n\t\x00\u2028😀é')), max_size=8
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    json_keys,
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(json_keys, children, max_size=4)),
    max_leaves=25,
)


def all_paths(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], Any]]:
    found = [(path, value)]
    if isinstance(value, dict):
        for key, child in value.items():
            found += all_paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += all_paths(child, (*path, index))
    return found


@settings(max_examples=300, deadline=None)
@given(
    value=json_values,
    indent=st.sampled_from([None, 0, 1, 2, 4, "\t", " \t"]),
    separators=st.sampled_from([None, (",", ":"), (" , ", " :  "), (",\n", ": ")]),
    ensure_ascii=st.booleans(),
    crlf=st.booleans(),
    bom=st.booleans(),
    padding=st.sampled_from(["", " ", "\n\n  ", "\r\n\t"]),
)
def test_locate_points_at_every_value(
    value: Any,
    indent: int | str | None,
    separators: tuple[str, str] | None,
    ensure_ascii: bool,
    crlf: bool,
    bom: bool,
    padding: str,
) -> None:
    text = padding + json.dumps(value, indent=indent, separators=separators, ensure_ascii=ensure_ascii) + padding
    if crlf:
        text = text.replace("\n", "\r\n")  # strings have their newlines escaped, so only layout changes
    document = parse_json_document(("\ufeff" if bom else "") + text)
    assert document.text == text
    assert document.value == json.loads(text)
    decoder = json.JSONDecoder()
    for path, expected in all_paths(value):
        position = document.locate(path)
        assert position is not None, path
        assert decoder.raw_decode(text, offset_of(text, *position))[0] == expected
        if path and isinstance(path[-1], str):
            key_position = document.locate_key(path)
            assert key_position is not None
            assert decoder.raw_decode(text, offset_of(text, *key_position))[0] == path[-1]
