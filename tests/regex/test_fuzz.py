"""The random-regex fuzzer (tests/support/regex_fuzz.py) on a fixed budget: compiled module, interpreter and
transformers agree on templates whose delimiters are random patterns from the whole `regex` syntax,
and the compiler only ever refuses such a template with a located TemplateError.

The long run is `python -m tests.support.regex_fuzz --templates 20000` (see README.md).
"""

from __future__ import annotations

import contextlib
import random

import pytest
import regex

import rtcompile
from rtcompile.regex.translate import InvalidRegex, UnsupportedRegex, translate, translate_complete
from rtcompile.tooling.fuzz import delimiter_examples
from tests.support.regex_fuzz import (
    POSITIONS,
    accepted_by_reference,
    fuzz,
    fuzz_templates,
    random_pattern,
    random_stream,
)
from tests.support.regex_matching import assert_same_partial, our_partial, regex_partial

# Seeds and budgets are fixed: the same templates and streams on every run.


def test_a_small_budget_finds_no_divergence() -> None:
    tally = fuzz(seed=24, accepted=12)
    assert tally.accepted == 12
    assert [d.describe() for d in tally.divergences] == []
    assert tally.compiler_exceptions == []


@pytest.mark.slow  # ~25 s
def test_a_larger_budget_finds_no_divergence_in_any_position() -> None:
    tally = fuzz(seed=2400, accepted=150)
    assert set(tally.by_position) == set(POSITIONS)
    assert tally.runs > 5000
    assert [d.describe() for d in tally.divergences] == []
    assert tally.compiler_exceptions == []


@pytest.mark.slow  # ~8 s
def test_the_compiler_raises_nothing_but_located_template_errors() -> None:
    compiled = 0
    for case in fuzz_templates(seed=7, count=1000):
        if not accepted_by_reference(case.template):
            continue
        try:
            rtcompile.compile_template(case.template)
        except rtcompile.TemplateError as error:
            assert error.path, (case.template, error)
        compiled += 1
    assert compiled > 500


def test_the_translators_raise_nothing_but_their_refusals() -> None:
    """What the compiler's fallback rests on: a pattern `regex` accepts is translated, or refused with
    `UnsupportedRegex` (then matched with `regex`); one it rejects raises `InvalidRegex`."""
    rng = random.Random(2024)
    for _ in range(200):
        pattern = random_pattern(rng)
        for translator in (translate, translate_complete):
            with contextlib.suppress(UnsupportedRegex, InvalidRegex):
                translator(pattern)


@pytest.mark.slow  # ~3 s
def test_partial_search_of_random_patterns_equals_regex() -> None:
    """The translation's partial search against `regex`'s, pattern by pattern: from every position of
    texts made of what the pattern matches, its truncations and the subtle characters."""
    rng = random.Random(2025)
    translated = 0
    while translated < 150:
        pattern = random_pattern(rng)
        try:
            expected = regex.compile(pattern, regex.DOTALL)
            result = translate(pattern)
        except (regex.error, UnsupportedRegex, InvalidRegex):
            continue
        translated += 1
        examples = delimiter_examples(pattern, rng)
        for text in [random_stream(rng, examples, 4) for _ in range(6)]:
            for pos in range(len(text) + 1):
                ours, theirs = our_partial(result, text, pos), regex_partial(expected, text, pos)
                if result.duplicates:  # renamed groups: the spans are what a caller reads
                    ours, theirs = (o if o is None or o[0] == "partial" else o[:2] for o in (ours, theirs))
                assert_same_partial(ours, theirs, len(text), (pattern, text, pos))
