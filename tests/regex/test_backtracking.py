r"""Polynomial backtracking (`rtcompile.regex.backtracking`): the degrees it reports, what it leaves alone,
and, against a backtracking matcher that counts its steps, that a pattern it calls linear really does
linear work on near misses."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rtcompile.regex.analysis import nested_unbounded_repeat
from rtcompile.regex.ast import Alternation, Chars, Concat, Group, Node, Repeat
from rtcompile.regex.backtracking import polynomial_backtracking
from rtcompile.regex.charsets import contains
from rtcompile.regex.parser import parse_regex
from tests.support.lanes import examples


def degree(pattern: str) -> int:
    found = polynomial_backtracking(parse_regex(pattern).root)
    return 1 if found is None else found.degree


@pytest.mark.parametrize(
    ("pattern", "expected", "example"),
    [
        (r"<tool_call>\s*\s*\s*\{", 3, r"\s*\s*\s*"),
        (r"\s*\n*\s*x", 3, r"\s*\n*\s*"),
        (r"a*[ab]*a*$", 3, "a*[ab]*a*"),
        (r".*\s*x", 2, r".*\s*"),
        (r"a+?a{2,}!", 2, "a+?a{2,}"),
        (r"a*b?a*!", 2, "a*a*"),  # separated only by an optional piece
        (r"a*b*a*!", 2, "a*a*"),  # b* matches nothing on a run of a: the a* around it share the run
        (r"\s*\n\s*!", 2, r"\s*\s*"),  # on a run of newlines the \n can be any of them
        (r"[ab]*ab[ab]*!", 2, "[ab]*[ab]*"),
        (r"(?:ab)*(?:ab)*!", 2, "(...)*(...)*"),
        (r"a*(?:x|a+)b", 2, "a*a+"),  # through one branch of an alternative
        (r"(?:a*b?){3}c", 3, "a*a*a*"),  # a bounded repeat is its copies in a row
        (r"(?i)K+k*!", 2, "K+k*"),
        (r"(?=a*a*b)", 2, "a*a*"),  # a lookahead backtracks inside itself
        (r"x(?>a*a*b)", 2, "a*a*"),  # ... so does an atomic group
        (r"(a*)(a*)!", 2, "a*a*"),  # capture groups change nothing
    ],
)
def test_overlapping_repeats_in_a_row(pattern: str, expected: int, example: str) -> None:
    found = polynomial_backtracking(parse_regex(pattern).root)
    assert found is not None and (found.degree, found.example()) == (expected, example)


@pytest.mark.parametrize(
    "pattern",
    [
        r"a*",
        r"<tool_call>\s*\{",  # a single repeat
        r"\s*\w+!",  # disjoint characters
        r"\s*,\s*",  # something their set excludes between them
        r"a*ba*!",
        r'[^"]*"*x',
        r"\s*\n*\s*",  # nothing after them can fail: the first, greedy try matches
        r"a*a*b?",
        r"a*+a*b",  # a possessive repeat gives nothing back
        r"(?>a*)a*b",  # nor does an atomic group
        r"(?:a{1,5}){2}b",  # bounded repeats: constant work per position
        r"(a+)+b",  # nested: the exponential warning's business, not this one's
    ],
)
def test_what_cannot_backtrack_polynomially(pattern: str) -> None:
    assert degree(pattern) == 1, pattern


# ---------------------------------------------------------------------------------------------------
# A backtracking matcher that counts its steps
# ---------------------------------------------------------------------------------------------------


class StepLimit(Exception):
    pass


class Matcher:
    """Backtracks over the tree like `re` does (every way to match, in priority order), counting the
    attempts it makes: the work a backtracking engine does, without timing anything."""

    def __init__(self, text: str, limit: int) -> None:
        self.text, self.limit, self.steps = text, limit, 0

    def ends(self, node: Node, pos: int) -> Iterator[int]:
        self.steps += 1
        if self.steps > self.limit:
            raise StepLimit
        if isinstance(node, Chars):
            if pos < len(self.text) and contains(node.ranges, ord(self.text[pos])):
                yield pos + 1
        elif isinstance(node, Group):
            yield from self.ends(node.body, pos)
        elif isinstance(node, Concat):
            yield from self.sequence(node.items, pos)
        elif isinstance(node, Alternation):
            for branch in node.branches:
                yield from self.ends(branch, pos)
        else:
            assert isinstance(node, Repeat)
            yield from self.repeat(node, pos, 0)

    def sequence(self, items: tuple[Node, ...], pos: int) -> Iterator[int]:
        if not items:
            yield pos
            return
        for middle in self.ends(items[0], pos):
            yield from self.sequence(items[1:], middle)

    def repeat(self, node: Repeat, pos: int, count: int) -> Iterator[int]:
        more = node.max is None or count < node.max
        if count >= node.min and node.lazy:
            yield pos
        if more:
            for middle in self.ends(node.body, pos):
                if middle != pos:  # an empty iteration ends the repeat, as in `re`
                    yield from self.repeat(node, middle, count + 1)
        if count >= node.min and not node.lazy:
            yield pos

    def matches(self, root: Node) -> bool:
        return next(iter(self.ends(root, 0)), None) is not None


def steps(root: Node, text: str, limit: int = 300_000) -> int:
    matcher = Matcher(text, limit)
    try:
        matcher.matches(root)
    except StepLimit:
        return limit
    return matcher.steps


def test_the_matcher_agrees_with_re_and_counts_the_known_costs() -> None:
    for pattern, text in [("a*b?a*!", "aaa!"), ("a*b?a*!", "aab"), ("(?:ab|a)*?b!", "abab!"), ("a{2,3}b", "ab")]:
        assert Matcher(text, 10_000).matches(parse_regex(pattern).root) is (re.match(pattern, text) is not None)
    cubic, linear = parse_regex(r"<\s*\s*\s*\{").root, parse_regex(r"<\s*\{").root
    assert steps(cubic, "<" + " " * 40) > 6 * steps(cubic, "<" + " " * 20)  # 2^3 = 8
    assert steps(linear, "<" + " " * 40) < 2.5 * steps(linear, "<" + " " * 20)


# Small patterns over "a" and "b", ending in "!", which no text below contains (so every text is a near
# miss). Unbounded repeats repeat one character or a short word: alternatives inside them (`(?:a|aa)*`)
# are exponential, a shape neither analysis claims to find.
ATOMS = ["a", "b", "[ab]"]
WORDS = ["a", "b", "[ab]", "ab", "ba", "a[ab]"]
QUANTIFIERS = ["*", "+", "*?", "+?", "{2,}"]
BOUNDED = ["?", "??", "{0,2}", "{1,2}"]


@st.composite
def pieces(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(
        st.sampled_from(["atom", "unbounded", "bounded", "alternation"] if depth < 2 else ["atom", "unbounded"])
    )
    if kind == "atom":
        return draw(st.sampled_from(ATOMS))
    if kind == "unbounded":
        word = draw(st.sampled_from(WORDS))
        return (word if len(word) == 1 or word == "[ab]" else f"(?:{word})") + draw(st.sampled_from(QUANTIFIERS))
    if kind == "bounded":
        return f"(?:{draw(sequences(depth + 1))}){draw(st.sampled_from(BOUNDED))}"
    return f"(?:{draw(sequences(depth + 1))}|{draw(sequences(depth + 1))})"


def sequences(depth: int) -> st.SearchStrategy[str]:
    return st.lists(pieces(depth), min_size=1, max_size=4).map("".join)


PREFIXES = ["", "a", "b", "ab", "ba", "bb"]
RUNS = ["a", "b", "ab", "ba", "aab", "abb"]


def growth(root: Node, small: int = 10, large: int = 40) -> float:
    """The worst ratio, over texts `u + w * n`, of the steps at n = `large` to those at n = `small`."""
    return max(
        steps(root, prefix + run * large) / steps(root, prefix + run * small) for prefix in PREFIXES for run in RUNS
    )


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequences(0))
@example("b*(?:bbb(?:b){0,2}){0,2}")
def test_patterns_called_linear_do_linear_work_on_near_misses(body: str) -> None:
    root = parse_regex(body + "!").root
    if nested_unbounded_repeat(root) or polynomial_backtracking(root) is not None:
        return
    # Four times the text: linear work grows about 4x; quadratic, 16x. The texts are well past the
    # counted repeats, whose combinations add work only until the text outgrows them: on 10 and 40
    # characters, `b*(?:bbb(?:b){0,2}){0,2}` (linear: 4.3x from 48 to 192) grew 6.3x.
    counted = sum(int(count) for braces in re.findall(r"\{[\d,]*\}", body) for count in re.findall(r"\d+", braces))
    small = max(10, 2 * counted + 8)
    assert growth(root, small, 4 * small) < 6, body


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequences(0))
def test_patterns_called_polynomial_do_superlinear_work_on_some_near_miss(body: str) -> None:
    """Where every unbounded repeat repeats one character. (A repeated word is reported whenever its
    characters fit: `[ab]*a(?:ab)*` is, though the word never lines up with the cut.)"""
    if re.search(r"\)(?:\*|\+|\{2,\})", body):
        return
    root = parse_regex(body + "!").root
    found = polynomial_backtracking(root)
    if nested_unbounded_repeat(root) or found is None:
        return
    assert growth(root) > 6, body
