r"""Stdlib `re` on the patterns compiled modules run: the backtracking analysis
(`rtcompile.regex.ambiguity`), the decision to match a pattern with `regex` instead
(`rtcompile.regex.backtracking.refuse_slow_backtracking`) and the rewrites that keep patterns on the
standard library (`rtcompile.regex.nested_repeats`). Work is counted with a backtracker that explores
patterns as `re` does (`tests/support/backtracker.py`), never timed."""

from __future__ import annotations

import itertools
import math
import re
import timeit
from collections.abc import Callable
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import rtcompile
from rtcompile.frontend.catalog import bundled_names
from rtcompile.regex.ambiguity import backtracking_cost, regex_is_superlinear
from rtcompile.regex.backtracking import attempts_are_bounded, refuse_slow_backtracking
from rtcompile.regex.errors import SlowOnStdlib
from rtcompile.regex.parser import parse_regex
from rtcompile.regex.searched_prefix import searched_prefix
from rtcompile.regex.stdlib_tree import stdlib_tree
from rtcompile.regex.translate import UnsupportedRegex, translate, translate_complete
from rtcompile.tooling.observe import identical, observe
from tests.support.backtracker import attempt, steps
from tests.support.compiled import bundled_compiled, compiled_engine, compiled_module
from tests.support.differential import interpreter_engine


def growth_of(pattern: str) -> str:
    """What one attempt of a backtracking matcher costs on `pattern` as written."""
    return backtracking_cost(parse_regex(pattern).root).growth()


# ---------------------------------------------------------------------------------------------------
# The counting backtracker is `re`
# ---------------------------------------------------------------------------------------------------

AGREEMENT_PATTERNS = [
    r"<[^>]*(?:a[^>]*)*>",
    r"a*b*a*!",
    r"(?:ab|a)*?b!",
    r"\bab$",
    r"(?<=a)b",
    r"(?:a|ab|b)*c",
    r"(?:a?){3}a{3}",
    r"<.*a.*a.*>",
]


@pytest.mark.parametrize(
    "stdlib",
    [t for p in AGREEMENT_PATTERNS for t in (translate(p).full, translate(p).prefix)]
    + [translate_complete(p) for p in [r"(a)(?=b)\1?", r"(a++)b", r"<(\w+)>.*?</\1>"]],
)
def test_the_counting_backtracker_matches_what_re_matches(stdlib: str) -> None:
    compiled, root = re.compile(stdlib, re.DOTALL), stdlib_tree(stdlib)
    for size in range(5):
        for text in map("".join, itertools.product("ab<>/!", repeat=size)):
            expected = compiled.match(text)
            assert attempt(root, text)[0] == (None if expected is None else expected.end()), text


# ---------------------------------------------------------------------------------------------------
# The analysis on named shapes
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "growth"),
    [
        (r"<\s*\{", "n"),
        (r"\s*,\s*\w+", "n"),  # separated by a character neither run takes
        (r"a*a*b", "n^2"),  # adjacent runs sharing text
        (r"\s*\n\s*!", "n^2"),
        (r"<.*a.*a.*a.*>", "n^4"),
        (r"(?:a|a)*b", "exponential"),  # alternatives that overlap, repeated
        (r"(?:a|ab|b)*c", "exponential"),
        (r"(?:a|ab)*c", "n"),  # overlapping branches that never split one text two ways
        (r"<[^>]*(?:a[^>]*)*>", "exponential"),  # a nested run sharing text with the one before
        (r"<(?:a*)*>", "exponential"),
        (r"(?:a?){25}a{25}", "too many paths"),  # optional runs before a forced run
        (r"(?:a?){3}a{3}", "n"),  # ... with few enough ways
        (r".*.*\Z", "n"),  # the first try from the first .* succeeds: nothing is backtracked into
        (r"<a*(?!b).*x", "n^2"),
        (r"x(?:(?!</a>).)*</a>", "n"),  # a bounded lookahead at every character
        (r"x(?:(?!.*</a>).)*y", "n^2"),  # one that reads on, at every character
    ],
)
def test_the_cost_of_one_attempt(pattern: str, growth: str) -> None:
    assert growth_of(pattern) == growth


def test_regex_is_superlinear_only_where_no_assertion_takes_part() -> None:
    assert regex_is_superlinear(parse_regex(r"a*a*b").root)
    assert regex_is_superlinear(parse_regex(r"<.*a.*a.*a.*>").root)
    assert not regex_is_superlinear(parse_regex(r"\s*\b\s*x").root)  # \b never holds inside a run of spaces
    assert not regex_is_superlinear(parse_regex(r"<\s*\{").root)
    assert not regex_is_superlinear(parse_regex(r"(?:a?){25}a{25}").root)  # many ways, but no more with n


# ---------------------------------------------------------------------------------------------------
# The patterns of issue 25: growth on a near miss, as work
# ---------------------------------------------------------------------------------------------------


def _template(pattern: str) -> dict[str, Any]:
    return {
        "start_anchor": "<A>",
        "fields": {"reasoning_content": {"open_pattern": pattern, "close": "</r>"}, "content": {}},
    }


def _work(stdlib: str, near_miss: Callable[[int], str], sizes: tuple[int, ...]) -> list[int]:
    root = stdlib_tree(stdlib)
    return [steps(root, near_miss(n), limit=50_000_000) for n in sizes]


def _module_sources(module: Any) -> set[str]:
    module.ResponseParser._program.prepare()  # the patterns are compiled before the first parser
    return {value.pattern for value in vars(module).values() if isinstance(value, re.Pattern)}


# (pattern, what the module runs it with) -- each ran for seconds on a near miss of a few dozen
# characters before: 2^n, 2^n, n^4, n^4 and C(50, 25) paths.
TABLE = [
    (r"<[^>]*(?:a[^>]*)*>", "stdlib"),
    (r"<(?:a\w*)*>", "stdlib"),
    (r"<(?:.*)(?:.*)(?:.*)(?:.*)>", "stdlib"),
    (r"<.*a.*a.*a.*>", "regex"),
    (r"<(?:a?){25}a{25}>", "stdlib"),
]


@pytest.mark.parametrize(("pattern", "engine"), TABLE)
def test_no_pattern_of_the_table_makes_a_module_backtrack(pattern: str, engine: str) -> None:
    def near_miss(n: int) -> str:
        return "<" + "a" * n

    template = _template(pattern)
    compiled = rtcompile.compile_module(template)
    translated = translate(pattern)
    if engine == "stdlib":
        assert compiled.requires == ()
        searched = searched_prefix(translated.prefix)  # the partial matches' pattern, as the module searches it
        assert {translated.full, searched} <= _module_sources(compiled_module(template))
        for stdlib in (translated.full, translated.prefix, searched):
            small, large = _work(stdlib, near_miss, (100, 400))
            assert large <= 6 * small and large <= 20 * 400, stdlib  # linear: 4x the text, about 4x the work
    else:
        assert compiled.requires == ("regex",)
        (warning,) = compiled.regex_fallbacks
        assert "stdlib re would backtrack on this pattern" in warning.message and "n^4" in warning.message
        small, large = _work(translated.full, near_miss, (10, 40))
        assert large > 4**3 * small  # what the module would have cost on stdlib
    # And the module still parses exactly like the interpreter, in one piece and a character at a time.
    for text in [near_miss(30) + "</r>b", near_miss(30) + ">x</r>y", "<A>" + near_miss(3) + ">"]:
        for chunks in ([text], list(text)):
            assert identical(
                observe(compiled_engine(template), "", chunks), observe(interpreter_engine(template), "", chunks)
            )


# ---------------------------------------------------------------------------------------------------
# Random patterns of those shapes: what the decision keeps on stdlib does the work it claims
# ---------------------------------------------------------------------------------------------------

ATOMS = ["a", "b", "[ab]", ".", "[^>]"]
QUANTIFIERS = ["*", "+", "*?", "+?", "{2,}"]


@st.composite
def pieces(draw: st.DrawFn, depth: int = 0) -> str:
    shapes = ["atom", "run", "nested", "optional runs", "alternation", "bounded"] if depth < 2 else ["atom", "run"]
    shape = draw(st.sampled_from(shapes))
    if shape == "atom":
        return draw(st.sampled_from(ATOMS))
    if shape == "run":
        return draw(st.sampled_from(ATOMS)) + draw(st.sampled_from(QUANTIFIERS))
    if shape == "nested":  # a repeat of something holding repeats: they may share text
        return f"(?:{draw(sequences(depth + 1))}){draw(st.sampled_from(QUANTIFIERS))}"
    if shape == "optional runs":  # optional runs before a forced run
        atom, count = draw(st.sampled_from(["a", "[ab]"])), draw(st.integers(2, 4))
        return f"(?:{atom}?){{{count}}}{atom}{{{count}}}"
    if shape == "alternation":  # branches that may overlap
        return f"(?:{draw(sequences(depth + 1))}|{draw(sequences(depth + 1))})"
    return f"(?:{draw(sequences(depth + 1))}){draw(st.sampled_from(['?', '{0,2}', '{1,2}']))}"


def sequences(depth: int) -> st.SearchStrategy[str]:
    return st.lists(pieces(depth), min_size=1, max_size=3).map("".join)


WORDS = ["a", "b", "ab", "aab"]


def _within_claim(pattern: str) -> None:
    """If the module would run `pattern` on stdlib, each of its stdlib patterns does at most the work
    the analysis claims on near misses `<` + w * n + tail: doubling n multiplies the steps by about
    2 ** exponent at most. (The sizes are well past the counted repeats, where their combinations stop
    adding to the growth, and multiples of 12, so that periodic texts line up with the pattern alike.)"""
    try:
        translated = translate(pattern)
        refuse_slow_backtracking(pattern, (translated.full, translated.prefix))
    except UnsupportedRegex:
        return  # matched with regex: not re's work
    counted = sum(int(count) for count in re.findall(r"\{(\d+)", pattern))
    size = 24 * math.ceil((2 * counted + 8) / 12)
    for stdlib in (translated.full, translated.prefix):
        # A pattern kept for its bounded attempts is claimed linear: each attempt costs a constant.
        exponent = 1 if attempts_are_bounded(pattern) else backtracking_cost(stdlib_tree(stdlib)).exponent
        assert exponent is not None and exponent <= 2
        for word, tail in itertools.product(WORDS, ["", "b"]):
            root = stdlib_tree(stdlib)
            small, large = (steps(root, "<" + word * n + tail, limit=50_000_000) for n in (size, 2 * size))
            assert large <= 1.75 * 2**exponent * small, (stdlib, word, tail)


@settings(max_examples=15, deadline=None)
@given(sequences(0))
def test_patterns_kept_on_stdlib_do_the_work_claimed(body: str) -> None:
    _within_claim(f"<{body}>")


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(sequences(0))
def test_patterns_kept_on_stdlib_do_the_work_claimed_many(body: str) -> None:
    _within_claim(f"<{body}>")


# ---------------------------------------------------------------------------------------------------
# Bundled templates
# ---------------------------------------------------------------------------------------------------


def test_the_decision_keeps_quadratic_patterns_only_where_regex_is_quadratic_too() -> None:
    gpt_oss_open = (
        r"(?:<\|channel\|>commentary\s+)?to=functions\.(?P<name>[^\s<]+)(?:\s*<\|channel\|>commentary)?"
        r"[^<]*(?:<\|constrain\|>[^<]*)?<\|message\|>"
    )
    translated = translate(gpt_oss_open)
    assert backtracking_cost(stdlib_tree(translated.full)).growth() == "n^2"
    refuse_slow_backtracking(gpt_oss_open, (translated.full, translated.prefix))  # regex: n^2 as well
    # The same cost where regex's own work would stay linear goes to regex.
    lookahead = r"x(?:(?!.*</a>).)*y"
    assert not regex_is_superlinear(parse_regex(lookahead).root)
    with pytest.raises(SlowOnStdlib):
        refuse_slow_backtracking(lookahead, (translate_complete(lookahead),))


def test_no_bundled_template_needs_regex() -> None:
    for name in bundled_names():  # each compiled once per test run, as generated/ is checked
        assert bundled_compiled(name).requires == (), name


# The bundled patterns stdlib re runs in quadratic time, with the near misses that show it, and sizes.
BUNDLED_QUADRATIC = [
    (
        "glm4_5",
        r"<arg_key>(?P<key>.*?)</arg_key>\s*<arg_value>(?P<value>.*?)</arg_value>",
        lambda n: "<arg_key>" + "x</arg_key><arg_value>" * n,
        800,
    ),
    (
        "gpt_oss",
        r"(?:<\|channel\|>commentary\s+)?to=functions\.(?P<name>[^\s<]+)(?:\s*<\|channel\|>commentary)?"
        r"[^<]*(?:<\|constrain\|>[^<]*)?<\|message\|>",
        lambda n: "to=functions." + "a" * n + "<x",
        1000,
    ),
    ("llama3_1", r"\}\s*(?:;|<\|eot_id\|>|<\|eom_id\|>|$|\n\s*\{)", lambda n: "}" + "\n" * n + "x", 1000),
    (
        "minimax_m3",
        r"\]<\]minimax\[>\[<(?P<key>[^>/\s]+)>(?P<value>.*?)(?:\]<\]minimax\[>\[)?</[^>\s]+>",
        lambda n: "]<]minimax[>[<k>" + "</aaaa" * n,
        200,
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "pattern", "near_miss", "size"), BUNDLED_QUADRATIC)
def test_regex_is_quadratic_too_where_bundled_patterns_stay_quadratic_on_stdlib(
    name: str, pattern: str, near_miss: Callable[[int], str], size: int
) -> None:
    """The one timed test here: it measures the reference's engine, whose steps cannot be counted.
    Four times the text costs `regex` about 16 times the time (linear would be 4)."""
    compiled = regex.compile(pattern, regex.DOTALL)

    def best(text: str) -> float:
        return min(timeit.repeat(lambda: compiled.search(text), number=1, repeat=5))

    assert best(near_miss(4 * size)) > 8 * best(near_miss(size)), name
    assert regex_is_superlinear(parse_regex(pattern).root)


def test_a_long_alternation_stays_on_stdlib() -> None:
    """Its partial-match translation nests one level per character (deeper than Python's stack, were it
    walked recursively) and holds thousands of character nodes: still analysed, and linear."""
    names = "|".join(f"tool_number_{i:03d}" for i in range(150))
    pattern = f'<call name="(?:{names})">'
    translated = translate(pattern)
    assert growth_of(pattern) == "n"
    assert [backtracking_cost(stdlib_tree(t)).growth() for t in (translated.full, translated.prefix)] == ["n", "n"]
    refuse_slow_backtracking(pattern, (translated.full, translated.prefix))


def test_a_pattern_without_unbounded_repeats_stays_on_stdlib_however_long() -> None:
    """Too large to analyse, but each attempt reads a bounded stretch: a 10,000-character literal (as a
    start anchor or an xml-inline tag_pattern, matched whole) and an alternation of 2,000 names with a
    bounded repeat."""
    for pattern in ("<" + "x" * 10_000 + ">", "<(?:" + "|".join(f"t{i}" for i in range(2_000)) + r")(?:\s?){1,3}>"):
        complete = translate_complete(pattern)
        refuse_slow_backtracking(pattern, (complete,))  # raises SlowOnStdlib if not


def test_bounded_repeats_with_too_many_ways_are_still_analysed() -> None:
    """Bounded repeats alone do not make an attempt cheap: ``(?:a?b?){25}`` reads at most 50 characters
    but may try 2 ** 50 ways, so it gets the analysis (and regex). A few hundred ways keep the shortcut:
    the pattern a CI run drew, whose attempts the analysis could not bound, costs `re` linear work."""
    many = r"<(?:a?b?){25}c>"
    assert not attempts_are_bounded(many)
    with pytest.raises(SlowOnStdlib):
        refuse_slow_backtracking(many, (translate_complete(many),))
    _within_claim("<(?:a?){4}a{4}(?:a[ab](?:[ab]?){4}[ab]{4}){0,2}>")
