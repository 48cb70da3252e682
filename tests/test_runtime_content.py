"""Differential tests: rtcompile.runtime.content / transform against transformers' content parsers.

Every property runs the same input through our function and the reference and requires the same value
(types included) or the same exception type and message. Inputs come from small grammars plus random
mutations, so both valid and malformed text is exercised, with the Unicode characters on which the `regex`
module and the standard library disagree (U+0301, U+00B2, U+001C-U+001F, U+2028, U+3000, ...).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any
from unittest import mock

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import content_parsers as ref

from rtcompile.backends.interpreter import content_function
from rtcompile.ir import JsonParser
from rtcompile.runtime import content as ours
from rtcompile.runtime.transform import content_scope, each_item_scope, require_each_list, resolve_placeholder
from rtcompile.runtime.unicode_classes import DIGIT_CLASS, SPACE_CLASS, WORD_CLASS

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def typed(value: Any) -> Any:
    """A comparable form that tells apart bool/int/float, -0.0 and nan, and keeps dict order."""
    if isinstance(value, dict):
        return ("dict", tuple((typed(k), typed(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("list", tuple(typed(v) for v in value))
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else repr(value))
    return (type(value).__name__, value)


def outcome(call: Callable[[], Any]) -> Any:
    try:
        return ("ok", typed(call()))
    except Exception as error:  # the exception type and message are what we compare
        return ("error", type(error).__name__, str(error))


def assert_same(mine: Callable[[], Any], reference: Callable[[], Any]) -> Any:
    got, expected = outcome(mine), outcome(reference)
    assert got == expected
    return got


def weighted(common: list[str], rare: list[str], rare_share: float = 0.1) -> st.SearchStrategy[str]:
    """Pick from `common`, and from `rare` (the pieces that break the input) about `rare_share` of the time."""
    repeat = max(1, round(len(rare) * (1 - rare_share) / (rare_share * len(common))))
    return st.sampled_from(common * repeat + rare)


# Characters where `regex` and `re` (or str.strip and `regex`) disagree, plus plain ones.
JSON_SPACES = [" ", "", "", "\t", "\n", "\r"]
ODD_SPACES = ["\u3000", "\u2028", "\x1c", "\x1f", "\u00a0", "\u0085", "\x0b"]
SPACES = JSON_SPACES + ODD_SPACES
WORDS = ["a", "key_1", "é", "e\u0301", "x\u00b2", "\u0663", "名前", "_", "a-b", "1", "\u00aa", "a b", "\u2160"]

# --- scalar parsers ---------------------------------------------------------------------------------------------

SCALAR_ALPHABET = st.sampled_from(
    [*SPACES, "0", "1", "7", "\u0663", "\u00b2", "+", "-", ".", "_", "e", "E", "inf", "nan", "true", "TRUE", "x", "é"]
)


@FAST
@given(st.lists(SCALAR_ALPHABET, max_size=8).map("".join), st.booleans())
def test_scalar_parsers_match_reference(text: str, strip: bool) -> None:
    args = {"strip": strip}
    assert_same(lambda: ours.parse_text(text, strip), lambda: ref._text(text, args))
    assert_same(lambda: ours.parse_int(text, strip), lambda: ref._int(text, args))
    assert_same(lambda: ours.parse_float(text, strip), lambda: ref._float(text, args))
    assert_same(lambda: ours.parse_bool(text, strip), lambda: ref._bool(text, args))


def test_scalar_examples() -> None:
    assert ours.parse_text("  hi \u3000", True) == "hi"
    assert ours.parse_text("  hi ", False) == "  hi "
    assert ours.parse_int(" 4_2 ", True) == 42
    assert ours.parse_float("1e3", True) == 1000.0
    assert ours.parse_bool(" TRUE ", True) is True
    assert ours.parse_bool("yes", True) is False
    with pytest.raises(ValueError):
        ours.parse_int("4 2", True)


# --- json -------------------------------------------------------------------------------------------------------

DELIMS = [("<<", ">>"), ("«", "»"), ("'", "'"), ("`", "`"), ("<|", "|>"), ("$", ""), ("", ""), ("\x01", "\x02")]
JSON_ATOMS = ["0", "-1", "1.5", "1e400", "NaN", "Infinity", "01", "1" * 30, "true", "false", "null", "True", "x"]
STRING_BODIES = [
    "a",
    "é",
    '\\"',
    "\\\\",
    "\\n",
    "\\u00e9",
    "\\u0001",
    "key: 1",
    "{a: 1}",
    ",b:",
    "\n",
    "'",
    "«",
    "<<",
    "\\",
]


@st.composite
def json_value(draw: st.DrawFn, delims: list[tuple[str, str]], depth: int = 0) -> str:

    def ws() -> str:
        return draw(weighted(JSON_SPACES, ODD_SPACES, 0.15))

    kind = draw(st.sampled_from(["atom", "string", "delimited", "object", "array"] if depth < 3 else ["atom"]))
    if kind == "atom":
        return draw(st.sampled_from(JSON_ATOMS))
    if kind == "string":
        return '"' + "".join(draw(st.lists(st.sampled_from(STRING_BODIES), max_size=3))) + '"'
    if kind == "delimited":
        opener, closer = draw(st.sampled_from(delims)) if delims else ('"', '"')
        return opener + "".join(draw(st.lists(st.sampled_from(STRING_BODIES), max_size=3))) + closer
    if kind == "array":
        items = draw(st.lists(json_value(delims, depth + 1), max_size=3))
        return "[" + ws() + ",".join(ws() + item + ws() for item in items) + "]"
    entries = []
    for _ in range(draw(st.integers(0, 3))):
        opener, closer = draw(st.sampled_from(delims)) if delims else ('"', '"')
        word = draw(st.sampled_from(WORDS))
        # bare, quoted, or delimited (restored, it can collide with another key)
        key = draw(st.sampled_from([word, f'"{word}"', f"{opener}{word}{closer}"]))
        entries.append(ws() + key + ws() + ":" + ws() + draw(json_value(delims, depth + 1)) + ws())
    return "{" + ",".join(entries) + "}"


MUTATION_JUNK = ["{", "}", "[", "]", ",", ":", '"', "'", "\\", "\x01", "\x02", "a", " ", "\u3000", "<<", "»", "\n"]


@st.composite
def mutated(draw: st.DrawFn, source: str, junk: list[str]) -> str:
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2, 3]))):
        at = draw(st.integers(0, len(source)))
        operation = draw(st.sampled_from(["insert", "delete", "truncate", "duplicate"]))
        if operation == "insert":
            source = source[:at] + draw(st.sampled_from(junk)) + source[at:]
        elif operation == "delete":
            source = source[:at] + source[at + 1 :]
        elif operation == "truncate":
            source = source[:at]
        else:
            end = draw(st.integers(at, len(source)))
            source = source[:end] + source[at:end] + source[end:]
    return source


JsonCase = tuple[str, list[tuple[str, str]]]


@st.composite
def json_case(draw: st.DrawFn) -> JsonCase:
    delims = draw(st.lists(st.sampled_from(DELIMS), max_size=2))
    text = draw(st.sampled_from(SPACES)) + draw(json_value(delims)) + draw(st.sampled_from(JSON_SPACES))
    return draw(mutated(text, MUTATION_JUNK)), delims


def json_function(
    unquoted: bool, delims: tuple[tuple[str, str], ...], lenient: bool = False, strip: bool = True
) -> Callable[[str], Any]:
    """The json parser for `content_args` as the loader normalises them, as the interpreter runs it (the
    runtime function and rewrites `rtcompile.content_calls` picks)."""
    return content_function(JsonParser(unquoted, delims, lenient, strip))


def our_json(text: str, unquoted: bool, delims: tuple[tuple[str, str], ...], lenient: bool, strip: bool) -> Any:
    return json_function(unquoted, delims, lenient, strip)(text)


@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_case(), st.booleans(), st.booleans(), st.booleans())
def test_json_matches_reference(case: JsonCase, unquoted: bool, lenient: bool, strip: bool) -> None:
    text, delims = case
    args = {"unquoted_keys": unquoted, "string_delims": [list(d) for d in delims], "allow_non_json": lenient}
    args["strip"] = strip
    assert_same(
        lambda: our_json(text, unquoted, tuple(delims), lenient, strip),
        lambda: ref._json(text, args),
    )


@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_case(), st.booleans(), st.booleans(), st.booleans())
def test_json_with_delimited_strings_decoded_in_place_matches_reference(
    case: JsonCase, unquoted: bool, lenient: bool, strip: bool
) -> None:
    # `parse_json_delimited` decodes long delimited strings in place (not written out as JSON and
    # decoded again); with the length threshold at 0 it does so for every text.
    text, delims = case
    args = {"unquoted_keys": unquoted, "string_delims": [list(d) for d in delims], "allow_non_json": lenient}
    args["strip"] = strip
    with mock.patch.object(ours, "_LONG_DELIMITED", 0):
        assert_same(
            lambda: our_json(text, unquoted, tuple(delims), lenient, strip),
            lambda: ref._json(text, args),
        )


@pytest.mark.parametrize(
    "text",
    [
        '{"k": 1, <<k>>: 2, "k": 3}',  # a restored key meets another: the last value wins
        "{<<k>>: 1, <<k>>: 2}",
        '{"a": "x<<b>>y"}',  # a delimited string inside a string: the reference's text is broken JSON
        '{"a": "\\u0001' + '0\\u0002", "b": <<long>>}',  # an escaped sentinel is not a marker
        "[" * 3000 + "<<x>>" + "]" * 3000,  # deeper than the walk back through the value may go
        '{"a": <<' + "x" * 2000 + ">>, 1: 2}",  # invalid JSON around a long string
        '{"a": <<' + "x" * 2000 + '>>, "n": ' + "9" * 5000 + "}",  # an integer past the digits limit
    ],
)
@pytest.mark.parametrize("lenient", [False, True])
def test_json_with_delimited_strings_where_decoding_in_place_would_differ(text: str, lenient: bool) -> None:
    args = {"unquoted_keys": False, "string_delims": [["<<", ">>"]], "allow_non_json": lenient, "strip": True}
    for threshold in (0, 1024):
        with mock.patch.object(ours, "_LONG_DELIMITED", threshold):
            assert_same(lambda: our_json(text, False, (("<<", ">>"),), lenient, True), lambda: ref._json(text, args))


@FAST
@given(
    st.text(alphabet="<>ab{}", max_size=24),
    st.lists(st.tuples(st.text(alphabet="<>a", max_size=2), st.text(alphabet="<>b", max_size=2)), max_size=2),
)
def test_delimited_strings_are_extracted_as_the_regex_substitution_would(
    text: str, delims: list[tuple[str, str]]
) -> None:
    """The str.find extraction of custom string delimiters equals `re.sub(open(.*?)close)`, pair by pair."""

    def by_regex(found: list[str]) -> str:
        rewritten = text
        for opener, closer in delims:

            def marker(match: Any) -> str:
                found.append(match.group(1))
                return f"\x01{len(found) - 1}\x02"

            rewritten = re.sub(re.escape(opener) + "(.*?)" + re.escape(closer), marker, rewritten, flags=re.DOTALL)
        return rewritten

    ours_found: list[str] = []
    theirs_found: list[str] = []
    assert ours._json_extract_delimited(text, delims, ours_found) == by_regex(theirs_found)
    assert ours_found == theirs_found


RAW_KEY_TEXT = st.lists(st.sampled_from([*'{,:"\\aé', *SPACES, "\u0301", "\u00b2"]), max_size=20).map("".join)


@FAST
@given(RAW_KEY_TEXT)
def test_json_unquoted_keys_on_raw_text(text: str) -> None:
    # No grammar at all: exercises the bare-key rewrite's character classes and lookbehind directly.
    assert_same(lambda: our_json(text, True, (), False, True), lambda: ref._json(text, {"unquoted_keys": True}))


def test_json_examples() -> None:
    assert our_json('{name: "foo", "n:x": 1}', True, (), False, True) == {"name": "foo", "n:x": 1}
    # `regex`'s \w (used by the reference) has combining marks but not U+00B2, unlike stdlib `re`'s.
    assert our_json("{e\u0301: 2}", True, (), False, True) == {"e\u0301": 2}
    with pytest.raises(ValueError, match="could not parse region as JSON"):  # nothing was rewritten
        our_json("{x\u00b2: 1}", True, (), False, True)
    assert our_json('{"a": <<he said "hi">>}', False, (("<<", ">>"),), False, True) == {"a": 'he said "hi"'}
    assert our_json("  plain text ", False, (), True, True) == "plain text"
    assert our_json("  plain text ", False, (), True, False) == "  plain text "
    with pytest.raises(ValueError, match="reserved sentinel"):
        our_json("\x01", False, (("<", ">"),), True, True)
    with pytest.raises(ValueError, match="after dialect transforms"):
        our_json("{a: }", True, (), False, True)


@FAST
@given(st.lists(st.sampled_from([*SPACES, *WORDS, *'{}[]":,=1']), max_size=10).map("".join))
def test_defaults_are_the_references_content_args_defaults(text: str) -> None:
    """Generated handlers pass only the arguments that differ from the defaults: they must be the reference's."""
    assert_same(lambda: ours.parse_text(text), lambda: ref._text(text, {}))
    assert_same(lambda: ours.parse_int(text), lambda: ref._int(text, {}))
    assert_same(lambda: ours.parse_float(text), lambda: ref._float(text, {}))
    assert_same(lambda: ours.parse_bool(text), lambda: ref._bool(text, {}))
    assert_same(lambda: ours.parse_json(text), lambda: ref._json(text, {}))
    assert_same(lambda: ours.parse_kv_lines(text), lambda: ref._kv_lines(text, {}))
    tag = re.compile(r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", re.DOTALL)
    xml_args = {"tag_pattern": tag.pattern}
    assert_same(lambda: ours.parse_xml_inline(text, tag, tag.pattern), lambda: ref._xml_inline(text, xml_args))


def test_json_parser_takes_only_the_rewrites_asked_for() -> None:
    text = '{a: <<x: "y">>}'
    assert json_function(False, ())('{"a": 1}') == {"a": 1}
    assert json_function(True, ())("{a: 1}") == {"a": 1}
    with pytest.raises(ValueError, match="could not parse"):
        json_function(False, ())("{a: 1}")
    assert json_function(True, (("<<", ">>"),))(text) == {"a": 'x: "y"'}
    with pytest.raises(ValueError, match="after dialect transforms"):
        json_function(False, (("<<", ">>"),))(text)
    assert ours.json_delimited_strings(text, (("<<", ">>"),), ours.json_quote_bare_keys) == '{"a": "x: \\"y\\""}'


def test_json_errors_that_bypass_allow_non_json() -> None:
    # The int-digit limit is a plain ValueError, not a JSONDecodeError, so the text fallback does not apply.
    digits = "1" * 5000
    got = assert_same(
        lambda: our_json(digits, False, (), True, True), lambda: ref._json(digits, {"allow_non_json": True})
    )
    assert got[0] == "error" and got[1] == "ValueError"


@pytest.mark.parametrize("delims, unquoted", [((), False), ((("<", ">"),), False), ((), True)])
def test_json_of_none_fails_like_reference(delims: tuple[tuple[str, str], ...], unquoted: bool) -> None:
    # A None body (from a non-participating xml-inline value group) raises TypeError on every path; the message
    # differs only where the reference's `regex` call and our `re` call word it differently.
    none: Any = None
    args = {"string_delims": [list(d) for d in delims], "unquoted_keys": unquoted}
    got = outcome(lambda: our_json(none, unquoted, delims, False, True))
    assert got[:2] == outcome(lambda: ref._json(none, args))[:2] == ("error", "TypeError")


# --- xml-inline -------------------------------------------------------------------------------------------------


CLASS_BODIES = {r"\w": WORD_CLASS, r"\s": SPACE_CLASS, r"\d": DIGIT_CLASS}


def translate(source: str) -> str:
    """A stdlib translation of a `regex` pattern: its \\w, \\s and \\d spelled out (also inside [...])."""
    out, index, in_class = [], 0, False
    while index < len(source):
        pair = source[index : index + 2]
        if pair in CLASS_BODIES:
            out.append(CLASS_BODIES[pair] if in_class else f"[{CLASS_BODIES[pair]}]")
        elif pair.startswith("\\"):
            out.append(pair)
        else:
            if pair[0] in "[]":  # the test patterns have no nested or escaped-bracket classes
                in_class = pair[0] == "["
            out.append(pair[0])
            index += 1
            continue
        index += 2
    return "".join(out)


def test_translate() -> None:
    assert translate(r"<(?P<key>[^>\s]*)\>\w") == "<(?P<key>[^>" + SPACE_CLASS + r"]*)\>[" + WORD_CLASS + "]"


KEY_SAMPLES = [*WORDS, "12", "\u0663", "", "#"]
VALUE_SAMPLES = ["", "1", " 12 ", "-3", "true", "x y", '{"a": 1}', "é\u0301", "\u3000", "\x1c", "a\nb", "~", "\u0663"]
# Pattern pieces in `regex` syntax, each with texts it is meant to match: a pattern is one piece from each slot,
# and its test text is mostly made of items built from the same pieces' samples, so that most patterns match.
XML_SLOTS: list[list[tuple[str, list[str]]]] = [
    [("<", ["<"]), ("", [""]), (r"\[", ["["])],
    [
        (r"(?P<key>\w+)", KEY_SAMPLES),
        (r"(?P<key>[^>=:\s]*)", KEY_SAMPLES),
        (r"(?:(?P<key>\w+)|#)", KEY_SAMPLES),
        (r"(?P<key>\d+)", KEY_SAMPLES),
        ("", [""]),
    ],
    [(">", [">"]), ("=", ["="]), (r":\s*", [":", ": ", ":\u3000", ":\x1c", ":\n"])],
    [
        (r"(?P<value>.*?)", VALUE_SAMPLES),
        (r"(?P<value>[^<;]*)", VALUE_SAMPLES),
        (r"(?:(?P<value>\w+)|~)", VALUE_SAMPLES),
        (r"(?P<value>\s*\d*\s*)", VALUE_SAMPLES),
        ("", [""]),
    ],
    [(r"</\w*>", ["</a>", "</", "</é\u0301>", "</a b>"]), (";", [";"]), (r"(?:;|$)", [";", ""]), (r"\]", ["]"])],
]
XML_NOISE = ["<", ">", "</", "=", ":", ";", "\n", "[", "]", "~", "#", *SPACES, *WORDS, "12", "-3", "true"]


@st.composite
def xml_case(draw: st.DrawFn) -> tuple[str, str]:
    """A tag pattern (`regex` syntax) and a text made of items shaped like it, plus noise."""
    pieces = [draw(st.sampled_from(slot)) for slot in XML_SLOTS]
    item = st.tuples(*(st.sampled_from(samples) for _, samples in pieces)).map("".join)
    text = "".join(draw(st.lists(st.one_of(item, item, item, st.sampled_from(XML_NOISE)), min_size=1, max_size=6)))
    return "".join(source for source, _ in pieces), text


def nested_parsers() -> list[tuple[dict[str, Any] | None, Callable[[str], Any] | None]]:
    """The same nested value parser, as a reference `value_parser` dict and as our callable."""
    return [
        (None, None),
        ({"name": "text"}, lambda s: ours.parse_text(s, True)),
        ({"name": "text", "args": {"strip": False}}, lambda s: ours.parse_text(s, False)),
        ({"name": "int"}, lambda s: ours.parse_int(s, True)),
        ({"name": "int", "args": {"strip": False}}, lambda s: ours.parse_int(s, False)),
        ({"name": "bool"}, lambda s: ours.parse_bool(s, True)),
        ({"name": "json", "args": {"allow_non_json": True}}, lambda s: our_json(s, False, (), True, True)),
        ({"name": "json"}, lambda s: our_json(s, False, (), False, True)),
        ({"name": "kv-lines", "args": {"kv_sep": "="}}, lambda s: ours.parse_kv_lines(s, "\n", "=", True, None)),
    ]


NESTED = nested_parsers()


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(xml_case(), st.sampled_from(range(len(NESTED))), st.booleans())
def test_xml_inline_matches_reference(case: tuple[str, str], nested_index: int, merge: bool) -> None:
    source, text = case
    ref_nested, our_nested = NESTED[nested_index]
    args: dict[str, Any] = {"tag_pattern": source, "merge_duplicates": merge}
    if ref_nested is not None:
        args["value_parser"] = ref_nested
    expected = outcome(lambda: ref._xml_inline(text, args))
    stdlib_re = re.compile(translate(source), re.DOTALL)
    assert outcome(lambda: ours.parse_xml_inline(text, stdlib_re, source, our_nested, merge)) == expected
    regex_re = regex.compile(source, regex.DOTALL)
    assert outcome(lambda: ours.parse_xml_inline(text, regex_re, source, our_nested, merge)) == expected


def test_xml_inline_examples() -> None:
    tag = re.compile(r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", re.DOTALL)
    text = "<a>1</a><b> x </b><a>2</a>"
    assert ours.parse_xml_inline(text, tag, tag.pattern, None, False) == {"a": "2", "b": " x "}
    assert ours.parse_xml_inline(text, tag, tag.pattern, None, True) == {"a": ["1", "2"], "b": " x "}
    no_value = re.compile(r"<(?P<key>\w+)/>")
    assert ours.parse_xml_inline("<a/><b/>", no_value, no_value.pattern, None, False) == {"a": "", "b": ""}
    optional = re.compile(r"<(?P<key>\w+)(?:=(?P<value>\w+))?>")
    assert ours.parse_xml_inline("<a=1><b>", optional, optional.pattern, None, False) == {"a": "1", "b": None}
    with pytest.raises(AttributeError):  # a None value reaches str.strip, as in the reference
        ours.parse_xml_inline("<b>", optional, optional.pattern, lambda s: ours.parse_text(s, True), False)
    keyless = re.compile(r"<(?P<name>\w+)>")
    with pytest.raises(ValueError, match="must have a named group 'key'"):
        ours.parse_xml_inline("<a>", keyless, keyless.pattern, None, False)
    assert ours.parse_xml_inline("no tags", keyless, keyless.pattern, None, False) == {}


# --- kv-lines ---------------------------------------------------------------------------------------------------

LINE_SEPS = ["\n", ";", "", "\r\n", "||", None]
KV_SEPS = [":", "=", "", ": ", "::"]
KV_PIECES = ["\n", ";", "|", ":", "=", "\r", *SPACES, *WORDS, "12", "true"]
KV_TEXT = st.lists(st.sampled_from(KV_PIECES), max_size=14).map("".join)


@settings(max_examples=600, deadline=None)
@given(
    KV_TEXT, st.sampled_from(LINE_SEPS), st.sampled_from(KV_SEPS), st.booleans(), st.sampled_from(range(len(NESTED)))
)
def test_kv_lines_matches_reference(text: str, line_sep: str | None, kv_sep: str, strip: bool, nested: int) -> None:
    ref_nested, our_nested = NESTED[nested]
    args: dict[str, Any] = {"line_sep": line_sep, "kv_sep": kv_sep, "strip": strip}
    if ref_nested is not None:
        args["value_parser"] = ref_nested
    assert_same(
        lambda: ours.parse_kv_lines(text, line_sep, kv_sep, strip, our_nested),
        lambda: ref._kv_lines(text, args),
    )


def test_kv_lines_examples() -> None:
    assert ours.parse_kv_lines("a: 1\n\nnoise\nb : x: y ", "\n", ":", True, None) == {"a": "1", "b": "x: y"}
    assert ours.parse_kv_lines("a=1;b=2", ";", "=", True, lambda s: ours.parse_int(s, True)) == {"a": 1, "b": 2}
    assert ours.parse_kv_lines("a:1  b:2", None, ":", True, None) == {"a": "1", "b": "2"}
    assert ours.parse_kv_lines("", "\n", "", True, None) == {}  # no non-empty line, so the empty kv_sep is never used
    with pytest.raises(ValueError, match="empty separator"):
        ours.parse_kv_lines("a:1", "", ":", True, None)
    with pytest.raises(ValueError, match="empty separator"):
        ours.parse_kv_lines("a:1", "\n", "", True, None)


# --- python-call-list -------------------------------------------------------------------------------------------

# Each pool: pieces the grammar accepts, then (drawn rarely) pieces that make the input invalid.
CALL_SPACES = weighted(["", "", "", " ", "\t", "\n", "\r\n", "  "], ["\u3000", "\x0b", "\x0c", "\u00a0"], 0.02)
STRING_GOOD = [
    "a", "é", "名", " ", "\u2028", "😀", "\\n", "\\t", "\\\\", "\\'", '\\"', "\\/", "\\b", "\\f", "\\r",
    "\\u00e9", "\\u00E9", "\\ud83d\\ude00", "\\uD83D\\uDE00", "\\udbff\\udfff", "\\u0000",
]  # fmt: skip
STRING_BAD = [
    "\\ud83d", "\\ude00", "\\ud83d\\u0041", "\\x41", "\\a", "\\u12", "\\U0001F600", "\\\n", "'", '"', "\n", "\r",
    "\ud800", "\\ud83d\\ud83d\\ude00", "\\0",
]  # fmt: skip
STRING_PIECES = weighted(STRING_GOOD, STRING_BAD, 0.06)
NUMBERS = weighted(
    [
        "0", "-0", "1", "-12", "9007199254740991", "-9007199254740991", "1.5", "-0.0", "1e3", "1E+3", "2.5e-3",
        "1e-400", "1" * 400 + ".0", "0.000",
    ],
    [
        "9007199254740992", "-9007199254740992", "12345678901234567890", "1" * 400, "1e400", "-1e400", "01", "1.",
        ".5", "1e", "0x10", "+1", "1_000", "-", "--1",
    ],
    0.15,
)  # fmt: skip
CONSTANTS = weighted(["True", "true", "False", "false", "None", "null"], ["TRUE", "none", "True.x", "true-1", "nan"])
ARG_NAMES = weighted(["a", "b", "x_1", "foo.bar", "a-b", "_", "True"], ["1a", "a.", "a b", "a", "b"], 0.15)
FUNCTION_NAMES = weighted(["f", "get_weather", "ns.tool", "a-b.c", "_x", "f1"], ["f.", "-f", "1f", "f--g", ""], 0.05)
KEYS = weighted(["'a'", '"a"', "'b'", '"c"', '"\\u00e9"'], ["a", "1", "'\\q'", "'a'", '"a"'], 0.15)


CALL_JUNK = [*"()[]{},=:'\"\\ x1-.e", "\ud800", "\u3000"]


@st.composite
def call_value(draw: st.DrawFn, depth: int = 0) -> str:

    def ws() -> str:
        return draw(CALL_SPACES)

    kinds = ["string", "number", "integer", "float", "constant"] + (["list", "dict"] if depth < 3 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "string":
        quote = draw(st.sampled_from(["'", '"']))
        return quote + "".join(draw(st.lists(STRING_PIECES, max_size=4))) + quote
    if kind == "number":
        return draw(NUMBERS)
    if kind == "integer":
        return str(draw(st.integers(-(2**54), 2**54)))
    if kind == "float":
        return repr(draw(st.floats(allow_nan=False, allow_infinity=False)))
    if kind == "constant":
        return draw(CONSTANTS)
    if kind == "list":
        items = draw(st.lists(call_value(depth + 1), max_size=3))
        return "[" + ",".join(ws() + item + ws() for item in items) + ws() + "]"
    entries = [
        ws() + draw(KEYS) + ws() + ":" + ws() + draw(call_value(depth + 1)) + ws()
        for _ in range(draw(st.integers(0, 3)))
    ]
    return "{" + ",".join(entries) + ws() + "}"


@st.composite
def call_source(draw: st.DrawFn) -> str:

    def ws() -> str:
        return draw(CALL_SPACES)

    calls = []
    for _ in range(draw(st.integers(0, 3))):
        arguments = [
            ws() + draw(ARG_NAMES) + ws() + "=" + ws() + draw(call_value()) + ws()
            for _ in range(draw(st.integers(0, 3)))
        ]
        calls.append(ws() + draw(FUNCTION_NAMES) + ws() + "(" + ",".join(arguments) + ws() + ")" + ws())
    source = ws() + "[" + ",".join(calls) + ws() + "]" + ws()
    return draw(mutated(source, CALL_JUNK))


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call_source())
def test_python_call_list_matches_reference(source: str) -> None:
    assert_same(lambda: ours.parse_python_call_list(source), lambda: ref._python_call_list(source, {}))


@FAST
@given(st.lists(st.sampled_from(STRING_GOOD + STRING_BAD), max_size=4), st.sampled_from(["'", '"']))
def test_python_call_list_strings_match_reference(pieces: list[str], quote: str) -> None:
    source = f"[f(s={quote}{''.join(pieces)}{quote})]"
    assert_same(lambda: ours.parse_python_call_list(source), lambda: ref._python_call_list(source, {}))


@pytest.mark.parametrize("levels", [1, 99, 100, 101, 150])
@pytest.mark.parametrize("shape", ["list", "dict", "mixed"])
def test_python_call_list_depth_limit(levels: int, shape: str) -> None:
    opens = {"list": ["["], "dict": ['{"k":'], "mixed": ["[", '{"k":']}[shape]
    closes = {"[": "]", '{"k":': "}"}
    stack = [opens[i % len(opens)] for i in range(levels)]
    source = "[f(a=" + "".join(stack) + "1" + "".join(closes[o] for o in reversed(stack)) + ")]"
    got = assert_same(lambda: ours.parse_python_call_list(source), lambda: ref._python_call_list(source, {}))
    assert (got[0] == "ok") == (levels <= 100)


def test_python_call_list_examples() -> None:
    source = """[get_weather(city='Paris', days=3, units=None), ns.tool-x(opts={"a": [1.5, true]})]"""
    assert ours.parse_python_call_list(source) == [
        {"name": "get_weather", "arguments": {"city": "Paris", "days": 3, "units": None}},
        {"name": "ns.tool-x", "arguments": {"opts": {"a": [1.5, True]}}},
    ]
    emoji = [{"name": "f", "arguments": {"s": "😀\n"}}]
    assert ours.parse_python_call_list(' [ f ( s = "\\ud83d\\ude00\\n" ) ] ') == emoji
    for bad, message in [
        ("[f(a=1, a=2)]", "repeated name 'a' at position 12"),
        ("[f(1)]", "expected a keyword argument"),
        ("[f(a=9007199254740992)]", "integer outside the range"),
        ('[f(a="\\ud83d")]', "lone surrogate escape in the string starting at position 5"),
        ("[f(a=1)] x", "unexpected content after the closing ']' at position 9"),
    ]:
        with pytest.raises(ValueError, match=re.escape(message)):
            ours.parse_python_call_list(bad)


# --- transform --------------------------------------------------------------------------------------------------

SCOPE_KEYS = ["content", "name", "args", "x", "名", "e\u0301"]
LEAVES = st.one_of(st.integers(), st.text(max_size=3), st.none(), st.lists(st.integers(), max_size=2))
SCOPES = st.dictionaries(
    st.sampled_from(SCOPE_KEYS),
    st.recursive(LEAVES, lambda inner: st.dictionaries(st.sampled_from(SCOPE_KEYS), inner, max_size=3), max_leaves=6),
    max_size=4,
)


@FAST
@given(SCOPES, st.lists(st.sampled_from(SCOPE_KEYS), min_size=1, max_size=4))
def test_placeholder_matches_reference(scope: dict[str, Any], parts: list[str]) -> None:
    path = ".".join(parts)
    assert_same(
        lambda: resolve_placeholder(scope, path, parts[0], tuple(parts[1:])),
        lambda: ref._apply_transform("{" + path + "}", scope),
    )


def test_placeholder_keeps_identity() -> None:
    inner = {"k": [1]}
    assert resolve_placeholder({"content": inner}, "content", "content", ()) is inner
    assert resolve_placeholder({"content": inner}, "content.k", "content", ("k",)) is inner["k"]


EACH_BODIES = ['[{"name": "f"}, {"name": "g", "extra": 1}]', '{"name": "f"}', '[{"name": "f"}, 3]', "[1]", "[]",
               '[{"other": 1}, 2]', '"text"', '[{"name": {"deep": 1}}, {"name": "x"}]']  # fmt: skip


@pytest.mark.parametrize("body", EACH_BODIES)
@pytest.mark.parametrize("placeholder", ["{name}", "{name.deep}", "{cap}"])
def test_transform_each_matches_reference(body: str, placeholder: str) -> None:
    captures = {"cap": "captured", "name": "from-capture"}
    field = SimpleNamespace(name="calls", content="json", content_args={}, transform_each=True)
    field.transform = {"function": {"name": placeholder}}

    def mine() -> list[Any]:
        items = require_each_list("calls", our_json(body, False, (), False, True))
        out = []
        for item in items:
            scope = each_item_scope("calls", captures, item)
            path = placeholder[1:-1]
            root, *keys = path.split(".")
            out.append({"function": {"name": resolve_placeholder(scope, path, root, tuple(keys))}})
        return out

    assert_same(mine, lambda: ref.process_field(body, field, captures))


def test_content_scope_prefers_content() -> None:
    assert content_scope({"content": "capture", "a": "b"}, 5) == {"content": 5, "a": "b"}
