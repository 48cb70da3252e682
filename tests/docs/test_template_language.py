"""docs/template-language.md: every example runs as written and gives what it says, with rtcompile and,
where it uses only what transformers has too, with transformers 5.24.0; and the reference lists every
key, content parser, argument and diagnostic code there is, no more."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest

import rtcompile
from rtcompile.frontend.loader import FIELD_KEYS, TOP_LEVEL_KEYS
from rtcompile.ir import KINDS
from rtcompile.tooling.codes import CODES
from tests.support import doc_examples
from tests.support.paths import ROOT

DOCUMENT = ROOT / "docs" / "template-language.md"
TEXT = DOCUMENT.read_text(encoding="utf-8")
EXAMPLES = [block for block in doc_examples.runnable(TEXT) if block.language == "python"]


def test_the_reference_has_examples_and_the_readme_links_it() -> None:
    assert len(EXAMPLES) == 21
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/template-language.md)" in readme and "(docs/fine-tune-guide.md)" in readme


@pytest.mark.parametrize("block", EXAMPLES, ids=[block.where for block in EXAMPLES])
def test_an_example_gives_what_the_reference_says(block: doc_examples.Block, monkeypatch: pytest.MonkeyPatch) -> None:
    doc_examples.run_python(block, {})
    if doc_examples.uses_only_the_reference(block.code):
        calls: list[str] = []
        reference = doc_examples.reference_module(calls)
        monkeypatch.setitem(sys.modules, "rtcompile", reference)
        doc_examples.run_python(block, {})  # transformers' own parser: the language, not our reading of it
        assert calls, "the example ran without the reference"


def table(heading: str) -> list[list[str]]:
    """The rows of the first table under `heading`, as cells with their backquotes removed."""
    section = TEXT.split(f"\n{heading}\n", 1)[1]
    rows = re.findall(r"^\|(.*)\|$", section.split("\n## ", 1)[0], re.MULTILINE)
    return [[cell.strip().replace("`", "") for cell in row.split("|")] for row in rows[2:]]


def first_column(heading: str) -> list[str]:
    return [row[0] for row in table(heading)]


def test_every_key_is_in_the_reference() -> None:
    assert sorted(first_column("## Top-level keys")) == sorted(TOP_LEVEL_KEYS)
    field_section = TEXT.split("\n## Field keys\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `(\w+)` \|", field_section, re.MULTILINE)
    assert sorted(listed) == sorted(FIELD_KEYS)


def test_every_content_parser_and_argument_is_in_the_reference() -> None:
    rows = table("## Content parsers")
    assert [row[0] for row in rows] == list(KINDS)
    for name, arguments, *_ in rows:
        listed = set(re.findall(r"(\w+) \(", arguments))  # `argument` (default) or (required)/(none)
        assert listed == set(KINDS[name].arguments), name


def test_every_diagnostic_code_is_in_the_reference_with_its_severity() -> None:
    rows = table("## Diagnostic codes")
    assert {row[0]: row[1] for row in rows} == CODES


def test_the_reference_shows_each_parser_as_transformers_parses_it() -> None:
    """The content-parser table's defaults are the reference's: a region parsed with no content_args
    gives what the table says (a spot check of the defaults the examples above do not show)."""
    template: dict[str, Any] = {
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {"kv": {"open": "<kv>", "close": "</kv>", "content": "kv-lines"}},
    }
    assert rtcompile.parse_response("<kv> a : 1 \nb:2</kv>", template, prefix="") == {"kv": {"a": "1", "b": "2"}}
