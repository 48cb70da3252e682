"""The random-regex fuzzer (tests/regex_fuzz.py) on a fixed budget: compiled module, interpreter and
transformers agree on templates whose delimiters are random patterns from the whole `regex` syntax,
and the compiler only ever refuses such a template with a located TemplateError.

The long run is `python -m tests.regex_fuzz --templates 20000` (see README.md).
"""

from __future__ import annotations

import contextlib
import random

import pytest

import rtcompile
from rtcompile.regex.translate import InvalidRegex, UnsupportedRegex, translate, translate_complete
from tests.regex_fuzz import POSITIONS, accepted_by_reference, fuzz, fuzz_templates, random_pattern

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


@pytest.mark.slow  # ~10 s
def test_the_compiler_raises_nothing_but_located_template_errors() -> None:
    compiled = 0
    for case in fuzz_templates(seed=7, count=400):
        if not accepted_by_reference(case.template):
            continue
        try:
            rtcompile.compile_template(case.template)
        except rtcompile.TemplateError as error:
            assert error.path, (case.template, error)
        compiled += 1
    assert compiled > 200


def test_the_translators_raise_nothing_but_their_refusals() -> None:
    """What the compiler's fallback rests on: a pattern `regex` accepts is translated, or refused with
    `UnsupportedRegex` (then matched with `regex`); one it rejects raises `InvalidRegex`."""
    rng = random.Random(2024)
    for _ in range(200):
        pattern = random_pattern(rng)
        for translator in (translate, translate_complete):
            with contextlib.suppress(UnsupportedRegex, InvalidRegex):
                translator(pattern)
