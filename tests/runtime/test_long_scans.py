"""Searches over long buffers (a one-shot `parse_response`, a long region held back): the runtime's
`find_literal`, `search_literals` and `search_from_starts` against `str.find` and `re` on texts where
the literals' first characters are absent, rare, dense or change density half way; and compiled
modules against the reference on one-shot outputs far longer than `LONG_SCAN`, full of near misses
of their delimiters."""

from __future__ import annotations

import json
import random
import re
from types import ModuleType
from typing import Any

import pytest
import transformers.utils.chat_parsing as reference

import rtcompile
from rtcompile.regex.analysis import start_literals
from rtcompile.regex.parser import parse_regex
from rtcompile.regex.translate import translate
from rtcompile.runtime.scanning import (
    LONG_SCAN,
    _candidates,
    find_literal,
    search_from_starts,
    search_literals,
)
from tests.support.compiled import compiled_module
from tests.support.differential import one_shot
from tests.support.lanes import pick
from tests.support.paths import DATA, TEMPLATES

LITERALS = ["</s>", "<|eot_id|>", "<<", "<a<b", "ab", "</think>", "[TOOL_CALLS]", "<｜DSML｜invoke", "😀x"]


def _text(rng: random.Random, pieces: list[str], length: int) -> str:
    out: list[str] = []
    written = 0
    while written < length:
        out.append(rng.choice(pieces))
        written += len(out[-1])
    return "".join(out)


def _texts(rng: random.Random, literal: str) -> list[str]:
    near = [literal[:k] for k in range(1, len(literal))] or [literal[0]]
    sparse = ["x" * 300, "é" * 40, "ｘ", *near]
    dense = [*near, literal[0], "y"]
    texts = [_text(rng, sparse, 5000), _text(rng, dense, 5000), "z" * 3000]
    texts.append(_text(rng, dense, 2500) + _text(rng, sparse, 2500))
    texts.append(_text(rng, sparse, 2500) + _text(rng, dense, 2500))
    return [t + tail for t in texts for tail in ("", literal, literal + t[:300])]


@pytest.mark.parametrize("literal", LITERALS)
def test_find_literal_is_str_find(literal: str) -> None:
    rng = random.Random(literal)
    for text in _texts(rng, literal):
        for pos in [0, 1, *rng.sample(range(len(text)), 20), len(text)]:
            assert find_literal(text, literal, pos) == text.find(literal, pos), (literal, pos)


# No literal contains another (a state whose literals nest searches them one by one).
APART = [lit for lit in LITERALS if not any(lit != other and lit in other for other in LITERALS)]


@pytest.mark.parametrize("count", [2, 3, 4])
def test_search_literals_is_the_alternations_search(count: int) -> None:
    rng = random.Random(count)
    for _ in range(pick(12, 1)):
        literals = rng.sample(APART, count)
        ordered = sorted(literals, key=lambda lit: (-len(lit), literals.index(lit)))
        pattern = re.compile("|".join(map(re.escape, ordered)), re.DOTALL)
        heads = "".join(sorted({lit[0] for lit in ordered}))
        for literal in literals:
            for text in _texts(rng, literal):
                text += rng.choice(literals)  # a later match of another literal
                for pos in [0, *rng.sample(range(len(text)), 10)]:
                    expected = pattern.search(text, pos)
                    found = search_literals(pattern, text, pos, heads, ordered, len(text))
                    assert (found and (found.span(), found.group())) == (
                        expected and (expected.span(), expected.group())
                    )
                    # A bound: a match starting no later is still found; past it, none or a later one.
                    last = rng.randint(pos, len(text))
                    found = search_literals(pattern, text, pos, heads, ordered, last)
                    if expected is not None and expected.start() <= last:
                        assert found is not None
                        assert (found.span(), found.group()) == (expected.span(), expected.group())
                    else:
                        assert found is None or found.start() > last


@pytest.mark.parametrize("shared_head", [True, False])
def test_search_literals_on_many_regions_of_one_long_buffer(shared_head: bool) -> None:
    # The scans of a one-shot parse: one search per match, each from the end of the previous one, in
    # a buffer where one literal never occurs and near misses of every literal are dense.
    literals = ["<|end|>", "<tool>", "<|absent|>"] if shared_head else ["</s>", "function call<|sep|>", "[ABSENT]"]
    ordered = sorted(literals, key=lambda lit: (-len(lit), literals.index(lit)))
    pattern = re.compile("|".join(map(re.escape, ordered)), re.DOTALL)
    heads = "".join(sorted({lit[0] for lit in ordered}))
    rng = random.Random(str(literals))
    near = [lit[:k] for lit in literals for k in range(1, len(lit))]
    pieces = [*near, "x" * 50, "é", " "]
    regions = pick(40, 8)
    text = "".join(_text(rng, pieces, rng.randint(0, 3 * LONG_SCAN)) + rng.choice(literals[:2]) for _ in range(regions))
    pos, spans = 0, []
    while (m := search_literals(pattern, text, pos, heads, ordered, len(text))) is not None:
        spans.append((m.span(), m.group()))
        pos = m.end()
    assert spans == [(m.span(), m.group()) for m in pattern.finditer(text)]
    assert len(spans) == regions


@pytest.mark.parametrize("dense", [True, False])
def test_search_from_starts_on_many_regions_of_one_long_buffer(dense: bool) -> None:
    # The same for a pattern with two start strings, one of which never occurs: near misses of the
    # other dense (then the rest is left to `re`) or sparse (then every candidate is tried).
    pattern = re.compile("(?:<\\|ch\\|>\\s+)?to=f\\.(?P<name>\\w+)|\\[ABSENT\\]x", re.DOTALL)
    starts = ("<|ch|>", "[ABSENT]", "to=f.")
    rng = random.Random(dense)
    pieces = ["to=", "to=f", "<|ch|>", "<|ch|> ", "[ABS"] if dense else ["x" * 300, "é" * 40, "to=", "<|c"]
    _assert_finds_every_region(pattern, starts, rng, pieces)


@pytest.mark.parametrize("layout", ["dense", "sparse", "dense, then sparse"])
def test_search_from_starts_sharing_their_first_character_on_many_regions_of_one_long_buffer(layout: str) -> None:
    # Start strings that begin alike are found by that character while it is rare, each checked
    # there; once it proves dense without starting any (a text full of `<`), string by string.
    pattern = re.compile("(?:<\\|ch\\|>|<\\|ABSENT\\|>)\\s*to=f\\.(?P<name>\\w+)", re.DOTALL)
    starts = ("<|ch|>", "<|ABSENT|>")
    rng = random.Random(layout)
    dense = ["<", "<|", "<|c", "<|ch|", "<|AB", "to=f", "x"]
    sparse = ["x" * 300, "é" * 40, "to=", "<|c", "<|ch|>"]
    head = _text(rng, dense, 4 * LONG_SCAN) if layout == "dense, then sparse" else ""
    _assert_finds_every_region(pattern, starts, rng, dense if layout == "dense" else sparse, head)


@pytest.mark.parametrize(
    "needles", [("<|ch|>", "<|AB|>"), ("<|ch|>", "<|c"), ("<|ch|>", "[AB]"), ("<a", "<|ch|>", "<")]
)
def test_candidates_are_every_position_where_a_needle_starts(needles: tuple[str, ...]) -> None:
    # The positions `search_from_starts` tries: by a shared first character while it is rare, then
    # (once it proves dense without starting a needle) or otherwise needle by needle in windows.
    rng = random.Random(str(needles))
    dense = ["<", "<|", "<|c", "<|A", "[A", "x", *needles]
    sparse = ["x" * 300, "é" * 40, *needles]
    for text in (
        _text(rng, dense, 3 * LONG_SCAN),
        _text(rng, sparse, 3 * LONG_SCAN),
        _text(rng, dense, LONG_SCAN) + _text(rng, sparse, 2 * LONG_SCAN),
        _text(rng, sparse, LONG_SCAN) + _text(rng, dense, 2 * LONG_SCAN),
    ):
        for pos in [0, *rng.sample(range(len(text)), 3)]:
            end = rng.randint(pos, len(text))
            expected = [i for i in range(pos, end) if text.startswith(needles, i)]
            assert list(_candidates(text, pos, end, needles)) == expected


def _assert_finds_every_region(
    pattern: re.Pattern[str], starts: tuple[str, ...], rng: random.Random, pieces: list[str], head: str = ""
) -> None:
    """`search_from_starts` from the end of each match on, over `head` and then regions of `pieces`
    each closed by a match, finds what `finditer` finds."""
    regions = pick(30, 6)
    text = head + "".join(
        _text(rng, pieces, rng.randint(0, 3 * LONG_SCAN)) + "<|ch|> to=f.get " for _ in range(regions)
    )
    pos, spans = 0, []
    while (m := search_from_starts(pattern, text, pos, starts)) is not None:
        spans.append((m.span(), m.groupdict()))
        pos = m.end()
    assert spans == [(m.span(), m.groupdict()) for m in pattern.finditer(text)]
    assert len(spans) >= regions


@pytest.mark.parametrize("starts", [("<|ch|>", "to=f."), ("<|ch|>",)])
def test_starts_cut_by_a_search_window_are_found(starts: tuple[str, ...]) -> None:
    # The searches go in windows of doubling width from the first (4,096 characters): a start string
    # that begins in one window and ends in the next is still the next candidate (one start string
    # has a loop of its own).
    pattern = re.compile(
        "<\\|ch\\|>\\s+to=f\\.(?P<name>\\w+)" if len(starts) == 1 else "(?:<\\|ch\\|>\\s+)?to=f\\.(?P<name>\\w+)"
    )
    for boundary in (4096, 4096 + 8192, 4096 + 8192 + 16384):
        for offset in range(-8, 3):
            text = "x" * (boundary + offset) + "<|ch|> to=f.get"
            found = search_from_starts(pattern, text, 0, starts)
            assert found is not None and found.span() == (boundary + offset, len(text)), (boundary, offset)
            text = "<|ch|>" * ((boundary + offset) // 6) + "<|ch|> to=f.get"
            found = search_from_starts(pattern, text, 0, starts)
            expected = pattern.search(text)
            assert found is not None and expected is not None and found.span() == expected.span()


def _near_misses(template: dict[str, Any]) -> list[str]:
    """The template's literal delimiters, their proper prefixes, and bits of JSON and markup."""
    found: list[str] = []

    def collect(value: Any) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            for item in value:
                collect(item)

    for field in template["fields"].values():
        for key in ("open", "close"):
            collect(field.get(key))
    pieces = [lit[:k] for lit in found for k in range(1, len(lit))]
    # Whole delimiters too, now and then, right after a near miss of one.
    pieces += [lit[:1] + lit for lit in found] + ["x" * 80] * len(found)
    return pieces + ["<", "[", "{", '"', " ", "\n", "é", "😀", "</", "<|"]


BUNDLED = sorted(path.stem for path in TEMPLATES.glob("*.json"))


@pytest.mark.parametrize("model", BUNDLED)
def test_one_shot_on_long_outputs_with_near_misses_matches_the_reference(model: str) -> None:
    # Against the interpreter (itself differential-tested against the reference) on every long text,
    # and against the reference on the first: transformers is quadratic on some of these near misses
    # (magistral's take seconds at 8 KB).
    template = json.loads((TEMPLATES / f"{model}.json").read_text(encoding="utf-8"))["response_template"]
    cases = json.loads((DATA / model / "cases.json").read_text(encoding="utf-8"))
    module = compiled_module(template)
    pieces = _near_misses(template)
    rng = random.Random(model)
    for index, case in enumerate(cases[: pick(6, 1)]):
        text, prefix, tools = case["text"], case["prefix"], case.get("tools")
        for attempt in range(pick(2, 1)):
            cut = rng.randint(0, len(text))
            filler = _text(rng, pieces, 2 * LONG_SCAN)
            long_text = text[:cut] + filler + text[cut:] + filler
            ours = one_shot(lambda t, _tpl, **kw: module.parse_response(t, **kw), long_text, template, prefix, tools)
            assert ours == one_shot(rtcompile.parse_response, long_text, template, prefix, tools), (case["name"], cut)
            if index == attempt == 0:
                short = text[:cut] + filler[: LONG_SCAN + 200] + text[cut:]
                ours = one_shot(lambda t, _tpl, **kw: module.parse_response(t, **kw), short, template, prefix, tools)
                assert ours == one_shot(reference.parse_response, short, template, prefix, tools), (case["name"], cut)


def _one_shot_agrees(module: ModuleType, template: dict[str, Any], text: str, tails: tuple[str, ...], end: str) -> None:
    """The compiled module's one-shot parse of `text` + each of `tails` is the interpreter's, and of
    its first 24 KB (plus `end`) the reference's: transformers is too slow on the whole of these."""
    for tail in tails:
        long_text = text + tail
        ours = one_shot(lambda t, _tpl, **kw: module.parse_response(t, **kw), long_text, template, "")
        assert ours == one_shot(rtcompile.parse_response, long_text, template, ""), tail
    short = text[: 3 * LONG_SCAN] + end
    ours = one_shot(lambda t, _tpl, **kw: module.parse_response(t, **kw), short, template, "")
    assert ours == one_shot(reference.parse_response, short, template, "")


# Several literal delimiters with different first characters in one state, next to a regex delimiter:
# the literal search stops at the regex's match (a close that never occurs is not searched for to the
# end at every tool call).
MIXED_TEMPLATE: dict[str, Any] = {
    "start_anchor": "<assistant>",
    "fields": {
        "tool_calls": {
            "open_pattern": '<call name="(?P<name>\\w+)">',
            "close": ["</call>"],
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "reasoning_content": {"open": ["function think<|sep|>\n", "[THINK]"], "close": ["[/THINK]"]},
        "content": {
            "close": ["</s>", "<|end|>", "function end<|sep|>"],
            "content": "text",
            "repeats": True,
            "join": "",
        },
    },
}


@pytest.mark.parametrize("seed", range(pick(4, 1)))
def test_one_shot_with_many_regions_and_absent_literals_matches_the_interpreter(seed: int) -> None:
    module = compiled_module(MIXED_TEMPLATE)
    rng = random.Random(seed)
    near = ["f", "fun", "function ", "function think<|", "function end<|se", "<", "</", "</s", "<|en", "[THI"]
    filler = [*near, "x" * 60, "é", "😀", "\n", " a < b "]
    regions = [
        lambda: '<call name="f">{"a": "' + _text(rng, ["y" * 40, "é"], rng.randint(0, 2 * LONG_SCAN)) + '"}</call>',
        lambda: "[THINK]" + _text(rng, filler, rng.randint(0, 2 * LONG_SCAN)) + "[/THINK]",
        lambda: _text(rng, filler, rng.randint(0, 3 * LONG_SCAN)),
    ]
    text = "".join(rng.choice(regions)() for _ in range(pick(30, 6)))
    tails = ("", "</s>", "<|end|>more", "function end<|sep|>", "function think<|sep|>\nlast")
    _one_shot_agrees(module, MIXED_TEMPLATE, text, tails, "</s>")


# A regex delimiter every match of which starts with the string it must contain: searched from where
# that string occurs, which near misses of the pattern (the string, then no match) put everywhere.
STARTS_WITH_REQUIRED: dict[str, Any] = {
    "start_anchor": "<assistant>",
    "fields": {
        "tool_calls": {
            "open_pattern": "<\\|call\\|>(?P<name>[a-z]+):",
            "close": ["</call>"],
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": ["<|end|>"], "content": "text", "repeats": True, "join": ""},
    },
}


@pytest.mark.parametrize("seed", range(3))
def test_one_shot_regex_searched_from_its_start_literal_matches_the_interpreter(seed: int) -> None:
    module = compiled_module(STARTS_WITH_REQUIRED)
    rng = random.Random(seed)
    filler = ["<|call|>", "<|call|>X:", "<|call|>ab", "<|call|>ab ", "<|cal", "<", "x" * 70, "é", " "]
    regions = [
        lambda: "<|call|>f" * rng.randint(1, 2) + ':{"a": "' + "y" * rng.randint(0, 3 * LONG_SCAN) + '"}</call>',
        lambda: _text(rng, filler, rng.randint(0, 3 * LONG_SCAN)),
    ]
    text = "".join(rng.choice(regions)() for _ in range(pick(24, 6)))
    tails = ("", "<|end|>", "<|call|>g:[1]</call>", "<|call|>")
    _one_shot_agrees(module, STARTS_WITH_REQUIRED, text, tails, "<|end|>")


# A close every match of which starts with one character ("}", and no string it must contain: `$`
# may end it), searched from where that character occurs; and one whose string comes after a run of
# a small class (`\\}\\s*\\]\\s*` before `<|end|>`), searched from the start of that run.
ONE_START_CLOSES = {  # open, close, how a call ends
    "one start": ('<call>{"args": ', "\\}\\s*(?:</call>|<\\|end\\|>|$)", "}<|end|>"),
    "lead class": ('<call>[{"args": ', "\\}\\s*\\]\\s*<\\|end\\|>", "} ]\n<|end|>"),
}


@pytest.mark.parametrize("close", sorted(ONE_START_CLOSES))
@pytest.mark.parametrize("seed", range(3))
def test_one_shot_regex_searched_from_where_it_can_start_matches_the_interpreter(close: str, seed: int) -> None:
    open_, close_pattern, ending = ONE_START_CLOSES[close]
    template: dict[str, Any] = {
        "start_anchor": "<assistant>",
        "fields": {
            "tool_calls": {"open": [open_], "close_pattern": close_pattern, "repeats": True, "content": "json"},
            "content": {"close": ["</s>"], "content": "text", "repeats": True, "join": ""},
        },
    }
    module = compiled_module(template)
    rng = random.Random(seed)
    near = ["}", "} ", "}\n ]", "} ]", "} ] <|en", "]", " ", "x" * 70, "é", "{", "<|end", "</call"]
    regions = [
        lambda: open_ + '{"a": "' + "y" * rng.randint(0, 3 * LONG_SCAN) + '", "b": {"c": 1}}' + ending,
        lambda: _text(rng, near, rng.randint(0, 3 * LONG_SCAN)),
    ]
    text = "".join(rng.choice(regions)() for _ in range(pick(24, 6)))
    _one_shot_agrees(module, template, text, ("", "</s>", open_ + '{"b": 1}', open_ + '{"b": 1}' + ending), "</s>")


@pytest.mark.parametrize(
    ("pattern", "starts"),
    [
        ("(?:<a>\\s+)?b=(?P<n>\\w+)", ("<a>", "b=")),
        ("<t>|\\{", ("<t>", "{")),
        ("(?:x|yz)?w", ("w", "xw", "yzw")),
        ("a(?i:b)", ("a",)),
        ("(?i)ab", None),
        ("a?", None),
        ("[ab]c", None),
        ("\\bab", None),
    ],
)
def test_start_literals_and_the_search_that_uses_them(pattern: str, starts: tuple[str, ...] | None) -> None:
    assert start_literals(parse_regex(pattern).root) == starts
    if starts is None:
        return
    compiled = re.compile(translate(pattern).full, re.DOTALL)
    rng = random.Random(pattern)
    pieces = [*starts, *(s[:1] for s in starts), "<a> \n b=c", "x", " ", "w", "é" * 30, "yz"]
    for _ in range(40):
        text = _text(rng, pieces, rng.randint(300, 3000))
        for pos in [0, *rng.sample(range(len(text)), 5)]:
            expected = compiled.search(text, pos)
            found = search_from_starts(compiled, text, pos, starts)
            ours = None if found is None else (found.span(), found.groupdict())
            assert ours == (None if expected is None else (expected.span(), expected.groupdict()))
