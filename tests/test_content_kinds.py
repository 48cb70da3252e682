"""The content-parser records (`rtcompile.ir.KINDS`) against the reference, and what reads them.

Each record says which `content_args` a kind reads and what an absent one means; both are observed on
transformers' own content parsers here, not restated. The runtime functions take the same defaults,
which is what lets a generated handler leave them out (`codegen/handlers._call`).
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from transformers.utils.chat_parsing import content_parsers as reference

import rtcompile
from rtcompile.content_calls import Nested, TagRegex, Value, runtime_call
from rtcompile.ir import KINDS, CallingParser, FailingParser
from rtcompile.runtime import content

TAGS = r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"

# Per kind: content_args that every sample sets, texts to parse, and for some keys a value other than the
# default that changes what a sample parses to (proof that the samples see the key at all).
SAMPLES: dict[str, tuple[dict[str, Any], list[str], dict[str, object]]] = {
    "text": ({}, [" a ", ""], {"strip": False}),
    "int": ({}, [" 1 ", "x"], {}),  # int() strips by itself: no sample tells strip apart
    "float": ({}, [" 1.5 ", "x"], {}),
    "bool": ({}, [" true ", "0"], {"strip": False}),
    "json": (
        {},
        [' {"a": 1} ', "{a: 1}", '{"k": <<v>>}', " not json "],
        {"unquoted_keys": True, "string_delims": [["<<", ">>"]], "allow_non_json": True},
    ),
    "xml-inline": (
        {"tag_pattern": TAGS},
        ["<a> 1 </a><a>2</a>"],
        {"value_parser": {"name": "int"}, "merge_duplicates": True},
    ),
    "kv-lines": (
        {},
        ["a: 1\nb = 2 ; c : 3"],
        {"line_sep": ";", "kv_sep": "=", "strip": False, "value_parser": {"name": "int"}},
    ),
    "python-call-list": ({}, ["[f(a=1)]", "[f(a=)]"], {}),
}


def outcome(name: str, text: str, args: dict[str, Any]) -> tuple[str, object]:
    try:
        return "value", reference.parse_content(text, name, args)
    except Exception as error:  # the type and message are what we compare
        return type(error).__name__, str(error)


class Recording(dict[str, Any]):
    """content_args that note every key the reference reads."""

    def __init__(self, data: dict[str, Any], read: set[str]) -> None:
        super().__init__(data)
        self.read = read

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)


def test_the_kinds_are_the_references() -> None:
    assert sorted(KINDS) == sorted(reference.CONTENT_PARSERS)
    assert {name for name, kind in KINDS.items() if kind.streamable} == reference.STREAMABLE_PARSERS
    assert all(kind.name == name for name, kind in KINDS.items())


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_kind_reads_the_arguments_its_record_lists(name: str) -> None:
    """Every key of the record, and no other, is read by the reference for some sample (with the other
    values set, so that the paths that read the rest are taken too)."""
    base, texts, others = SAMPLES[name]
    read: set[str] = set()
    for args in (base, {**base, **others}, {**base, "allow_non_json": True}):
        for text in texts:
            outcome(name, text, Recording(args, read))
    assert read == set(KINDS[name].arguments)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_an_absent_argument_means_the_records_default(name: str) -> None:
    base, texts, others = SAMPLES[name]
    for key, default in KINDS[name].arguments.items():
        absent = {k: v for k, v in base.items() if k != key}
        assert [outcome(name, text, {**absent, key: default}) for text in texts] == [
            outcome(name, text, absent) for text in texts
        ], key
        if key in others:
            changed = [outcome(name, text, {**absent, key: others[key]}) for text in texts]
            assert changed != [outcome(name, text, absent) for text in texts], f"no sample shows {key}"


def loaded_parser(name: str, args: dict[str, Any]) -> CallingParser:
    spec = {"start_anchor": "^", "fields": {"f": {"open": "<f>", "content": name, "content_args": args}}}
    parser = rtcompile.load_template(spec).fields[0].parser
    assert not isinstance(parser, FailingParser)
    return parser


@pytest.mark.parametrize("name", sorted(KINDS))
def test_the_runtime_functions_default_to_the_references_defaults(name: str) -> None:
    """What the loader builds from absent content_args is passed to the runtime function as its own
    defaults, so a generated handler writes none of them; only what has no default is passed."""
    base = {"tag_pattern": TAGS} if name == "xml-inline" else {}
    call = runtime_call(loaded_parser(name, base))
    parameters = inspect.signature(getattr(content, call.function)).parameters
    passed = []
    for key, argument in call.arguments:
        default = parameters[key].default
        if default is inspect.Parameter.empty:
            passed.append(key)
            continue
        if isinstance(argument, Nested):
            assert (argument.parser, default) == (None, None), key
        else:
            assert isinstance(argument, Value), key
            assert argument.value == default, key
    assert passed == (["tag_re", "tag_pattern"] if name == "xml-inline" else [])
    assert [(key, argument) for key, argument in call.arguments if isinstance(argument, TagRegex)] == (
        [("tag_re", TagRegex(TAGS, ("tag_pattern",)))] if name == "xml-inline" else []
    )


def test_the_json_call_holds_the_rewrites_asked_for_and_no_others() -> None:
    calls = {
        (unquoted, delims): runtime_call(
            loaded_parser("json", {"unquoted_keys": unquoted, "string_delims": [["<", ">"]] * delims})
        )
        for unquoted in (False, True)
        for delims in (False, True)
    }
    assert {key: (call.function, [name for name, _ in call.arguments]) for key, call in calls.items()} == {
        (False, False): ("parse_json", ["dialect", "allow_non_json", "strip"]),
        (True, False): ("parse_json", ["dialect", "allow_non_json", "strip"]),
        (False, True): ("parse_json_delimited", ["string_delims", "quote_keys", "allow_non_json", "strip"]),
        (True, True): ("parse_json_delimited", ["string_delims", "quote_keys", "allow_non_json", "strip"]),
    }
    rewrites = {
        key: dict(call.arguments).get("dialect", dict(call.arguments).get("quote_keys")) for key, call in calls.items()
    }
    assert {key: repr(rewrite) for key, rewrite in rewrites.items()} == {
        (False, False): "Value(value=None)",
        (True, False): "RuntimeFunction(name='json_quote_bare_keys')",
        (False, True): "Value(value=None)",
        (True, True): "RuntimeFunction(name='json_quote_bare_keys')",
    }
