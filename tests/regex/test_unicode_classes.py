"""rtcompile/runtime/unicode_classes.py is exactly what tools/gen_unicode_classes.py makes from the installed `regex`.

The tables spell out which code points `regex` matches with `\\w`, `\\d` and `\\s`; they come from one
`regex` version (pinned in pyproject.toml). A different `regex` may classify code points differently,
and then the generated parsers would no longer match the reference: regenerate the tables
(`python tools/gen_unicode_classes.py > rtcompile/runtime/unicode_classes.py`) and `generated/`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import regex

from rtcompile.runtime import unicode_classes
from rtcompile.runtime.unicode_classes import DIGIT_CLASS, SPACE_CLASS, WORD_CLASS
from tools.gen_unicode_classes import render_module


def test_tables_were_generated_from_the_installed_regex_version() -> None:
    assert unicode_classes.REGEX_VERSION == regex.__version__


@pytest.mark.slow  # every code point, three times: ~1 s of CPU
def test_tables_are_what_the_generator_makes_from_the_installed_regex() -> None:
    committed = Path(unicode_classes.__file__).read_text(encoding="utf-8")
    assert committed == render_module()


@pytest.mark.slow  # every code point: ~1 s of CPU each
@pytest.mark.parametrize(
    ("table", "escape"),
    [(WORD_CLASS, r"\w"), (DIGIT_CLASS, r"\d"), (SPACE_CLASS, r"\s")],
    ids=["word", "digit", "space"],
)
def test_each_table_read_by_re_matches_what_regex_matches(table: str, escape: str) -> None:
    """Every code point: `[table]` in stdlib `re` matches exactly where `regex` matches the escape."""
    everything = "".join(map(chr, range(sys.maxunicode + 1)))
    ours = [m.start() for m in re.finditer(f"[{table}]", everything)]
    theirs = [m.start() for m in regex.finditer(escape, everything)]
    assert ours == theirs
