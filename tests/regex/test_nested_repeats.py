"""Nested unbounded repeats: exact rewrites into one repeat (same matches, captures and partial matches
as `regex`), the regex fallback for the rest, and growth on near misses that stays polynomial."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
import regex

import rtcompile
from rtcompile.regex.translate import UnsupportedRegex, translate, translate_complete
from tests.support.compiled import compiled_module, import_file
from tests.support.lanes import pick
from tests.support.paths import GENERATED
from tests.support.regex_matching import assert_same_partial, our_partial, regex_partial

# The parser and opcode names of the running `re` (private, but it is the program `re` executes).
sre_parse = re._parser  # type: ignore[attr-defined]
sre_constants = re._constants  # type: ignore[attr-defined]

REWRITTEN = ["(?:(?:S+)+)+", "(?:S+)+", "(S+)+", "(?:S*)*", "(?:S+)*", "(S+)*", "(?:S*)+", "(?:S+?)+", "(?:S+?)+?"]
# Adjacent runs, merged where one class holds the other (S is `a` or `[ab]`, so both ways are tried),
# and some that must not be merged (both with a minimum, the held run first with a minimum, or lazy and
# first: `regex`'s partial matches depend on it).
ADJACENT = ["S*a*", "a*S*", "S+a*", "a*S+", "S*S*S*", "S+S+", "a+S*", "S*?a*?", "S*a*?", "a*?S+?", "a*?S*?"]
# Rewrites that keep a part's ends and the order it tries them (issue 25): non-capturing groups opened
# before merging, counted runs added up, parts that read only a greedy run's class absorbed into it,
# repeats of "one character then a run" made one iteration, repeated optional runs counted.
ENDS_KEPT = [
    "(?:S*)(?:S+)",
    "S*(?:aS*)*",
    "(?:aS*)*",
    "(?:aS*)+",
    "(?:aS+)*",
    "(?:S?){3}S{2}",
    "(?:S{1,2}){2,3}",
    "(?:S{0,2})+",
    "S{1,2}S{2,3}",
    "(?:a|b)?S+",
    "S+(?:a|b)?",
]
LEFT_TO_REGEX = ["(S*)*", "(S*)+", "(?:S+)+?", "(S+?)+?", "(?:S+|b)+", "(?:S+b?)*"]
CONTEXTS = [("", ""), ("<", ">"), ("(", ")"), ("b", "a"), ("(?P<x>b?)", "(?P<y>a*)"), ("", "a"), ("a", "")]
CLASSES = ["a", "[ab]"]


def _cases(forms: list[str]) -> list[str]:
    return [
        f"{before}{form.replace('S', cls)}{after}" for form in forms for cls in CLASSES for before, after in CONTEXTS
    ]


def _texts() -> list[str]:
    return ["".join(t) for n in range(pick(7, 5)) for t in itertools.product("ab<>", repeat=n)]


@pytest.mark.parametrize("pattern", _cases(REWRITTEN + ADJACENT))
def test_rewritten_nested_repeats_match_regex_fully_and_partially(pattern: str) -> None:
    try:
        expected = regex.compile(pattern, regex.DOTALL)
    except regex.error:
        return
    complete = re.compile(translate_complete(pattern), re.DOTALL)
    try:
        result = translate(pattern)
    except UnsupportedRegex as error:  # a lazy one-character repeat: partial matching is left to regex
        assert error.construct == "lazy single-character repeat"
        result = None
    for text in _texts()[:: 3 if len(pattern) > 8 else 1]:
        theirs = [(m.span(), m.groups(), m.groupdict()) for m in expected.finditer(text)]
        assert [(m.span(), m.groups(), m.groupdict()) for m in complete.finditer(text)] == theirs, text
        if result is None:
            continue
        full = re.compile(result.full, re.DOTALL)
        assert [(m.span(), m.groups(), m.groupdict()) for m in full.finditer(text)] == theirs, text
        for pos in range(len(text) + 1):
            assert_same_partial(our_partial(result, text, pos), regex_partial(expected, text, pos), len(text))


@pytest.mark.parametrize(
    "pattern",
    [
        f"{before}{form.replace('S', cls)}{after}"
        for form in ENDS_KEPT
        for cls in CLASSES
        for before, after in CONTEXTS[:3]
    ],
)
def test_rewrites_that_keep_the_ends_match_regex_fully_and_partially(pattern: str) -> None:
    test_rewritten_nested_repeats_match_regex_fully_and_partially(pattern)


def test_the_shapes_of_issue_25_become_single_runs() -> None:
    assert translate(r"<[^>]*(?:a[^>]*)*>").full == "<[^>]*>"
    assert translate(r"<(?:.*)(?:.*)(?:.*)(?:.*)>").full == "<.*>"
    assert translate(r"<(?:a?){25}a{25}>").full == "<a{25,50}>"
    assert translate(r"<(?:a[ab]*)*>").full == "<(?:a[ab]*)?>"
    assert translate(r"<(?:ab*)*>").full == "<(?:ab*)*>"  # a second iteration starts with a, which b* cannot take
    assert translate(r"<(?:a|b)?[ab]+(?:a)?>").full == "<[ab]+>"


def test_adjacent_runs_that_share_text_become_one_run() -> None:
    assert translate(r"<t>\s*\s*\s*\{").full.count("]*") == 1
    assert translate("x[ab]*a*y").full == "x[ab]*y"
    assert translate("xa*[ab]+y").full == "x[ab]+y"
    assert translate("xa+[ab]*y").full == "xa+[ab]*y"  # the held run has a minimum: both stay


@pytest.mark.parametrize("pattern", [f.replace("S", "a") for f in LEFT_TO_REGEX])
def test_other_nested_repeats_are_left_to_regex(pattern: str) -> None:
    with pytest.raises(UnsupportedRegex) as info:
        translate(pattern)
    assert info.value.construct == "nested repeat"


def test_unambiguous_repeats_of_sequences_stay_stdlib() -> None:
    assert translate(r"(?:\s*,\s*\w+)*").full
    assert translate(r"(?:ab+)+").full


def _nested_unbounded_repeat(pattern: str) -> bool:
    """Whether stdlib `re` reads `pattern` with an unbounded repeat whose iteration is itself (apart
    from parts that may match nothing) an unbounded repeat: what backtracks exponentially on near
    misses. The growth that matters, read from the program `re` runs rather than from a clock."""
    unbounded = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT)

    def splits(items: Any) -> bool:
        """One iteration of `items` can be an unbounded repeat."""
        solid = [item for item in items if sre_parse.SubPattern(items.state, [item]).getwidth()[0] > 0]
        for op, argument in solid if len(solid) == 1 else (items if not solid else []):
            if op in unbounded and (argument[1] == sre_constants.MAXREPEAT or splits(argument[2])):
                return True
            if op == sre_constants.SUBPATTERN and splits(argument[-1]):
                return True
            if op == sre_constants.BRANCH and any(splits(branch) for branch in argument[1]):
                return True
        return False

    def walk(items: Any) -> bool:
        for op, argument in items:
            if op in unbounded:
                if argument[1] == sre_constants.MAXREPEAT and splits(argument[2]):
                    return True
                if walk(argument[2]):
                    return True
            elif op == sre_constants.SUBPATTERN or op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
                if walk(argument[-1]):
                    return True
            elif op == sre_constants.BRANCH and any(walk(branch) for branch in argument[1]):
                return True
        return False

    return walk(sre_parse.parse(pattern, re.DOTALL))


def _module_patterns(module: Any) -> list[str]:
    module._PROGRAM.prepare()  # patterns are compiled on first use
    return [value.pattern for value in vars(module).values() if isinstance(value, re.Pattern)]


def test_nested_repeats_reach_the_module_without_exponential_backtracking() -> None:
    # The detector sees the problem in the patterns as written, and not in unambiguous repeats.
    assert all(map(_nested_unbounded_repeat, ["<(a+)+>", "<(?:a*)*x>", "([^=]+)+=(x)", "(?:a+|b)+", "(?:a+b?)*"]))
    assert not any(map(_nested_unbounded_repeat, ["(?:[-.][a-z]+)*", "(?:ab+)+", r"(?:\s*,\s*\w+)*"]))
    for pattern in ["<(a+)+>", "<(?:a*)*x>", "([^=]+)+=(x)"]:
        template = {
            "start_anchor": "<A>",
            "fields": {"reasoning_content": {"open_pattern": pattern, "close": "</r>"}, "content": {}},
        }
        module = compiled_module(template)
        assert module.REQUIRES == ()
        assert not any(_nested_unbounded_repeat(p) for p in _module_patterns(module)), pattern
        for n in range(0, 30, 3):
            text = "<" + "a" * n + "x</r>b"
            assert module.parse_response(text, prefix="") == rtcompile.parse_response(text, template, prefix="")


def test_no_bundled_module_has_a_nested_unbounded_repeat() -> None:
    for path in sorted(GENERATED.glob("*_parser.py")):
        module = import_file(path, f"nested_check_{path.stem}")
        assert not any(_nested_unbounded_repeat(p) for p in _module_patterns(module)), path.name
