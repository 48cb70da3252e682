"""How much committed text a parser keeps: read off each pattern's tree, whether `re` or `regex` runs it.

A pattern without an exact stdlib translation (a lazy one-character repeat, a backreference) is matched
with the `regex` module, but it looks back exactly as far as its tree says: it must not make the parser
keep the whole stream (every feed would copy it: quadratic).
"""

from __future__ import annotations

import types

import pytest

import rtcompile
from rtcompile.plan import pattern_history, plan_parser


@pytest.mark.parametrize(
    ("pattern", "reach"),
    [
        (r"<function=([^<\n]+?)>", 0),  # lazy one-character repeat: matched with `regex`
        (r"<(\w+)>.*?</\1>", 0),  # backreference: matched with `regex`
        (r"(?<=\n)<tool>", 1),
        (r"(?<=ab|c)<t>", 2),
        (r"\b<t>", 1),
        (r"^<t>", 1),  # tests for the text's start: one character keeps a later position from looking like it
        (r"(?<=a+)<t>", None),  # unbounded lookbehind
    ],
)
def test_history_comes_from_the_tree(pattern: str, reach: int | None) -> None:
    assert pattern_history(pattern) == reach


def test_a_regex_module_pattern_keeps_the_buffer_bounded() -> None:
    template = {
        "start_anchor": "<s>",
        "fields": {
            "tool_calls": {"open_pattern": r"<function=([^<\n]+?)>", "close": "</function>", "repeats": True},
            "content": {},
        },
    }
    assert plan_parser(rtcompile.load_template(template)).history == 0
    module = types.ModuleType("fallback_parser")
    exec(compile(rtcompile.compile_template(template), "fallback_parser", "exec"), module.__dict__)  # noqa: S102
    assert module.REQUIRES == ("regex",)
    for parser in (module.ResponseParser(prefix=""), rtcompile.ResponseParser(template, "")):
        longest = 0
        for _ in range(2000):
            parser.feed("some prose < and <function=get_weather>{}</function> more ")
            longest = max(longest, len(parser._buffer))
        assert longest < 60  # the pending text only, never the stream
        message, _ = parser.finalize()
        assert len(message["tool_calls"]) == 2000
