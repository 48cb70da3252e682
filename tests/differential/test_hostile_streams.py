"""Hostile streams: huge outputs, pathological near-delimiters, empty chunks, lone surrogates, misuse.

Linearity is checked structurally, not with timers: after long streams the parsers hold only the
pending text (a few characters), so each feed costs the same whatever came before. The benchmarks
(benchmarks/run.py) measure the time.
"""

from __future__ import annotations

from typing import Any

import pytest
import transformers.utils.chat_parsing as reference
from transformers.utils.chat_parsing.response_templates import load_response_template

import rtcompile
from rtcompile.tooling.observe import agrees_with_reference, identical
from tests.support.bundled import template_of
from tests.support.compiled import compiled_engine, compiled_module
from tests.support.differential import interpreter_engine, observe, one_shot, reference_engine, two_way_splits


def parsers(model: str) -> list[Any]:
    template = template_of(model)
    return [compiled_module(template).ResponseParser(""), rtcompile.ResponseParser(template, "")]


def held(parser: Any) -> int:
    """Characters the parser keeps in its buffer (both engines name it `_buffer`)."""
    return len(parser._buffer)


CONTENT_OPENER = {"gpt_oss": "<|channel|>final<|message|>"}  # harmony has no implicit content field


@pytest.mark.parametrize("model", ["smollm3", "qwen3", "gpt_oss", "deepseek_v3_1"])
def test_ten_megabytes_of_content_stream_with_a_small_buffer(model: str) -> None:
    block = "The quick brown fox < jumps over the lazy dog, ünïcödé 😀 [x]. " * 16  # ~1 KB, no delimiters
    for parser in parsers(model):
        parser.feed(CONTENT_OPENER.get(model, ""))
        max_held = 0
        for _ in range(10 * 1024):
            parser.feed(block)
            max_held = max(max_held, held(parser))
        message, _ = parser.finalize()
        assert max_held < 64
        content = message.get("content")
        assert isinstance(content, str) and len(content) > 10_000_000 - 2_000


@pytest.mark.parametrize(
    ("model", "unit"),
    [
        ("smollm3", "<"),
        ("smollm3", "<tool_cal"),
        ("qwen3", "</think"),
        ("gpt_oss", "<|channel|>commentary to="),
        ("deepseek_v3_1", "<｜tool▁calls▁begin"),
    ],
)
def test_near_delimiters_fed_one_character_at_a_time(model: str, unit: str) -> None:
    text = unit * (50_000 // len(unit))
    template = template_of(model)
    results = []
    for parser in parsers(model):
        max_held = 0
        for char in text:
            parser.feed(char)
            max_held = max(max_held, held(parser))
        assert max_held <= 2 * len(unit) + 64, f"{type(parser).__module__} held {max_held} characters"
        results.append(parser.finalize()[0])
    assert results[0] == results[1]
    small = text[: 40 * len(unit)]
    assert agrees_with_reference(
        observe(interpreter_engine(template), "", list(small)), observe(reference_engine(template), "", list(small))
    )


@pytest.mark.parametrize("model", ["smollm3", "gpt_oss", "qwen3_coder"])
def test_empty_chunks_and_lone_surrogates(model: str) -> None:
    template = template_of(model)
    text = "\ud800<think>\udfff</think>x\ud83d" if model != "gpt_oss" else "<|channel|>final<|message|>\ud800x"
    chunks = ["", *[c for char in text for c in (char, "")], ""]
    module = compiled_module(template)
    ours = observe(lambda p, t: module.ResponseParser(p, tools=t), "", chunks)
    assert identical(ours, observe(interpreter_engine(template), "", chunks))
    assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks))


# gpt_oss and cohere_command_a drop text outside regions on their fast path: finalized, they must not
@pytest.mark.parametrize("model", ["smollm3", "gpt_oss", "cohere_command_a"])
def test_feed_or_finalize_after_finalize_is_a_runtime_error(model: str) -> None:
    for parser in parsers(model):
        parser.feed("hello")
        parser.finalize()
        with pytest.raises(RuntimeError, match="already finalized"):
            parser.feed("more")
        with pytest.raises(RuntimeError, match="already finalized"):
            parser.finalize()


class CountingPattern:
    """Stands in for one of a module's compiled patterns, counting the characters offered to it (from the
    search position to the end): a module that rescans what it holds on every feed offers the square."""

    def __init__(self, pattern: Any, counter: list[int]) -> None:
        self.pattern, self.counter = pattern, counter

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.pattern, name)
        if name not in ("search", "match", "fullmatch", "finditer", "findall"):
            return method

        def counted(text: str, pos: int = 0, *rest: Any, **options: Any) -> Any:  # `regex`: partial=True
            self.counter[0] += len(text) - pos
            return method(text, pos, *rest, **options)

        return counted


def characters_offered(module: Any, chunks: list[str]) -> tuple[int, Any]:
    """Characters the module's patterns were offered while parsing `chunks`, and the observation."""
    counter = [0]
    module.ResponseParser("").feed("x")  # compiles the patterns (on first use)
    saved = {name: value for name, value in vars(module).items() if name.startswith("_RE_")}
    for name, value in saved.items():
        setattr(module, name, CountingPattern(value, counter))
    try:
        observed = observe(lambda p, t: module.ResponseParser(p, tools=t), "", chunks)
    finally:
        for name, value in saved.items():
            setattr(module, name, value)
    return counter[0], observed


def run_without_spaces(n: int) -> str:
    unit = "aGVsbG8vd29ybGQ+PT0=https://example.com/a?b=c&d=e;function(x){return x*2}"  # base64, URL, code
    return (unit * (n // len(unit) + 1))[:n]


@pytest.mark.parametrize("split", ["chars", "halves"])
def test_mistral_v11_on_a_run_without_spaces_agrees_and_stays_linear(split: str) -> None:
    """The tool-call open `[^\\s\\[\\]]+\\[ARGS\\]` used to cost the square of such a run on every feed."""
    template = template_of("mistral_v11")
    module = compiled_module(template)

    def chunked(text: str) -> list[str]:
        return list(text) if split == "chars" else [text[: len(text) // 2], text[len(text) // 2 :]]

    offered = {}
    for n in (500, 2000):
        chunks = chunked(run_without_spaces(n))
        offered[n], ours = characters_offered(module, chunks)
        assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks))
        assert identical(ours, observe(interpreter_engine(template), "", chunks))
    assert 0 < offered[2000] <= 2 * 4 * offered[500], offered  # four times the text: linear work is about 4x


# Delimiters whose unbounded repeats can share one run of whitespace (the polynomial-backtracking warning),
# each with the whitespace of the run that nearly opens it: `<tool_call>`, the run, then `x`.
POLYNOMIAL_DELIMITERS = [
    pytest.param("<tool_call>\\s*\\s*\\s*\\{", " ", id="three-repeats-on-spaces"),
    pytest.param("<tool_call>\\s*\\n*\\s*\\[", "\n", id="s-n-s-on-newlines"),  # all three share newlines
    pytest.param("<tool_call>\\s*\\n*\\s*\\[", " ", id="s-n-s-on-spaces"),  # only the two \s* share spaces
]


def polynomial_template(open_pattern: str) -> dict[str, Any]:
    return {
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "tool_calls": {"open_pattern": open_pattern, "close": "</tool_call>", "content": "json", "repeats": True},
            "content": {},
        },
    }


def near_miss(fill: str, n: int) -> str:
    return "<tool_call>" + fill * n + "x"


def reference_characters_offered(template: dict[str, Any], chunks: list[str]) -> tuple[int, Any]:
    """Characters transformers' delimiter patterns were offered while parsing `chunks`, and the observation."""
    counter = [0]
    spec = load_response_template(template)
    for field in spec.fields.values():
        for name in ("open_re", "close_re"):
            if getattr(field, name) is not None:
                setattr(field, name, CountingPattern(getattr(field, name), counter))
    observed = observe(lambda p, t: reference.ResponseParser(spec, prefix=p, tools=t), "", chunks)
    return counter[0], observed


@pytest.mark.parametrize(("open_pattern", "fill"), POLYNOMIAL_DELIMITERS)
def test_polynomial_delimiter_on_a_long_whitespace_run_agrees_with_transformers(open_pattern: str, fill: str) -> None:
    """A run that never completes the delimiter, and the same run completing it: one shot
    (`parse_response`, and one feed), one character at a time, and split in two at every position."""
    template = polynomial_template(open_pattern)
    module = compiled_module(template)
    closer = "{" if open_pattern.endswith("{") else "["
    texts = [near_miss(fill, 40), "<tool_call>" + fill * 40 + closer + '"name": "f"}</tool_call>tail']
    for text in texts:
        ours = one_shot(lambda t, _template, **kw: module.parse_response(t, **kw), text, template, "")
        assert agrees_with_reference(ours, one_shot(reference.parse_response, text, template, ""))
        assert ours == one_shot(rtcompile.parse_response, text, template, "")
        for chunks in [[text], list(text), *two_way_splits(text)]:
            observed = observe(compiled_engine(template), "", chunks)
            assert agrees_with_reference(observed, observe(reference_engine(template), "", chunks)), chunks
            assert identical(observed, observe(interpreter_engine(template), "", chunks)), chunks


@pytest.mark.parametrize("split", ["one-shot", "chars", "halves"])
@pytest.mark.parametrize(("open_pattern", "fill"), POLYNOMIAL_DELIMITERS)
def test_polynomial_delimiter_near_miss_offers_text_growing_like_the_reference(
    open_pattern: str, fill: str, split: str
) -> None:
    """Characters offered to the delimiter patterns, compiled module against transformers, on runs of 50
    and 200: the module may rescan no more than the reference does (linear in one shot and in halves,
    quadratic one character at a time, for both).

    What this does not count: the backtracking inside one search. On `\\s*\\s*\\s*\\{` stdlib `re`
    tries about n^3 / 6 ways to cut a run of n spaces for each failed search, where `regex` (the
    reference's engine) needs about n^2 steps; that is measured with timers, outside the tests.
    """
    template = polynomial_template(open_pattern)
    module = compiled_module(template)

    def chunked(text: str) -> list[str]:
        if split == "one-shot":
            return [text]
        return list(text) if split == "chars" else [text[: len(text) // 2], text[len(text) // 2 :]]

    ours, theirs = {}, {}
    for n in (50, 200):
        chunks = chunked(near_miss(fill, n))
        ours[n], observed = characters_offered(module, chunks)
        theirs[n], reference_observed = reference_characters_offered(template, chunks)
        assert agrees_with_reference(observed, reference_observed)
    assert 0 < ours[200] * theirs[50] <= 1.25 * theirs[200] * ours[50], (ours, theirs)
