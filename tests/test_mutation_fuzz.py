"""The mutation fuzzer: edited bundled templates (tests/mutation.py), loaded, compiled and run three ways.

For each mutant:
* transformers accepts it exactly when `rtcompile.load_template` does, and when both reject it they
  raise the same exception type (the deliberate load-time rejections listed in the README excepted);
* when both accept it, `compile_template` either succeeds, or fails with one TemplateError naming a
  construct the standard library cannot reproduce (counted: the coverage work shrinks that set);
  never another exception;
* a compiled module imports, and agrees with the interpreter (exactly) and with transformers on the
  mutant's streams, one-shot and one character at a time.

CI runs a small, fixed set of mutants; `RTCOMPILE_MUTANTS=3000 pytest tests/test_mutation_fuzz.py -s`
runs more and prints how many mutants ended how. A failure names its mutant's number and edits:
`tests.mutation.mutant(number)` rebuilds it.
"""

from __future__ import annotations

import collections
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest
from transformers.utils.chat_parsing.response_templates import load_response_template

import rtcompile
from rtcompile.errors import TemplateError
from rtcompile.tooling.observe import Raised, agrees_with_reference, identical
from tests.compiled import import_file
from tests.differential import interpreter_engine, observe, reference_engine
from tests.mutation import Mutant, mutant
from tests.strategies import TOOLS

pytestmark = pytest.mark.slow  # ~25 s: four in ten mutants are compiled, imported and run three ways

MUTANTS = int(os.environ.get("RTCOMPILE_MUTANTS", "120"))
# Mutants that found bugs, examined on every run whatever the budget:
# 372: a value_parser `name` that is a list was rejected at load; transformers fails only when a value is parsed.
REGRESSIONS = [372]
DIRECTORY = Path(tempfile.mkdtemp(prefix="rtcompile-mutants-"))
# Load-time rejections of values the reference only reads when a region closes (README, "Differences
# from transformers"): the reference accepts the template and fails at parse time instead.
DOCUMENTED = {"kv_sep", "string_delims", "tag_pattern"}
UNSUPPORTED = "the generated module must run on the standard library alone"


def _loading(load: Any, template: dict[str, Any]) -> BaseException | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            load(template)
    except Exception as exc:  # noqa: BLE001 - which exception is what we compare
        return exc
    return None


def examine(m: Mutant) -> tuple[str, str | None]:
    """(how the mutant ended, a description of what went wrong or None)."""
    template = m.template
    theirs, ours = _loading(load_response_template, template), _loading(rtcompile.load_template, template)
    if theirs is not None or ours is not None:
        if theirs is not None and ours is not None:
            # Our TemplateError is a ValueError (TemplateTypeError a TypeError), like the reference's
            # errors: caught by the same `except` clauses, with messages of our own.
            if Raised.of("load", ours).caught_alike(Raised.of("load", theirs)):
                return "both reject", None
            return "reject", f"transformers raises {theirs!r}, we raise {ours!r}"
        if isinstance(ours, TemplateError) and ours.path and ours.path[-1] in DOCUMENTED:
            return "rejected at load, as documented", None
        return "reject", f"transformers: {theirs!r}; rtcompile: {ours!r}"
    try:
        code = rtcompile.compile_template(template)
    except TemplateError as error:
        if UNSUPPORTED in error.message and "\n" not in str(error):
            return "refused: unsupported construct", None
        return "compile", f"compile_template raised {error!r}"
    except Exception as exc:  # noqa: BLE001
        return "compile", f"compile_template crashed: {exc!r}"
    path = DIRECTORY / f"mutant_{m.number}.py"
    path.write_text(code, encoding="utf-8")
    try:
        module = import_file(path, f"rtcompile_mutant_{m.number}")
    except Exception as exc:  # noqa: BLE001
        return "import", f"the module does not import: {exc!r}"
    compiled = lambda prefix, tools: module.ResponseParser(prefix, tools=tools)  # noqa: E731
    for prefix, text in m.streams():
        for chunks, tools in (([text], TOOLS), (list(text), None)):  # tool schemas coerce arguments
            expected = observe(reference_engine(template), prefix, chunks, tools)
            interpreted = observe(interpreter_engine(template), prefix, chunks, tools)
            if not agrees_with_reference(interpreted, expected):
                return "diverge", f"interpreter {interpreted!r} != transformers {expected!r} on {chunks!r}"
            ours_record = observe(compiled, prefix, chunks, tools)
            if not identical(ours_record, interpreted):
                return "diverge", f"compiled {ours_record!r} != interpreter {interpreted!r} on {chunks!r}"
    return "compiled, agrees", None


def test_mutants_of_the_bundled_templates_load_compile_and_parse_like_transformers() -> None:
    outcomes: collections.Counter[str] = collections.Counter()
    failures = []
    for number in [*REGRESSIONS, *range(MUTANTS)]:
        m = mutant(number)
        outcome, failure = examine(m)
        outcomes[outcome] += 1
        if failure is not None:
            failures.append(f"mutant {number} ({m.model}: {'; '.join(m.edits)}): {failure}"[:2000])
    print(
        f"\n{sum(outcomes.values())} mutants: " + ", ".join(f"{count} {name}" for name, count in outcomes.most_common())
    )
    assert not failures, f"{len(failures)} of {sum(outcomes.values())} mutants went wrong:\n" + "\n".join(failures[:10])
