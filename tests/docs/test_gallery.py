"""templates/GALLERY.md is exactly what tools/gen_gallery.py writes, and it shows every bundled template.

The page is generated from templates/*.json, tests/data/<model>/cases.json and the Models table of
templates/README.md. When one of them changes, regenerate it: `python -m tools.gen_gallery`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from tools.gen_gallery import (
    FAMILIES,
    GALLERY,
    TEMPLATES,
    GalleryError,
    Model,
    code,
    example_case,
    load_models,
    models_table,
    raw_block_text,
    readme_mentions,
    render_gallery,
    sections,
    shortened_example,
    table,
    visible,
)

MODELS = load_models()


def test_committed_gallery_is_what_the_generator_writes() -> None:
    committed = GALLERY.read_text(encoding="utf-8")
    generated = render_gallery(MODELS)
    if committed != generated:
        pairs = zip(committed.splitlines(keepends=True), generated.splitlines(keepends=True), strict=False)
        line = next((number for number, (old, new) in enumerate(pairs, 1) if old != new), None)
        where = f"first difference at line {line}" if line else "one is a prefix of the other"
        pytest.fail(f"templates/GALLERY.md is stale ({where}): run `python -m tools.gen_gallery`")


def test_every_template_has_a_contents_row_and_a_heading() -> None:
    page = GALLERY.read_text(encoding="utf-8")
    names = sorted(path.stem for path in TEMPLATES.glob("*.json"))
    rows = dict(re.findall(r"^\| \[(\w+)\]\(#\1\) \| [^|]+ \| .+ \| (\d+) \|$", page, re.M))
    headings = set(re.findall(r"^#{2,3} (\w+)$", page, re.M)) - {"Contents"}  # what the contents rows link to
    assert sorted(rows) == names
    assert {name: int(count) for name, count in rows.items()} == {model.name: len(model.cases) for model in MODELS}
    assert sorted(headings) == names


def test_every_template_has_a_family_and_every_family_entry_a_template() -> None:
    assert sorted(FAMILIES) == sorted(model.name for model in MODELS)


def test_a_template_missing_from_the_readme_is_named() -> None:
    readme = "## Models\n\n| template | x |\n| --- | --- |\n| `qwen3` | y |\n"
    with pytest.raises(GalleryError, match=r"names no row for .*smollm3"):
        sections(MODELS, readme)


def test_models_table_rows_name_templates_before_the_parenthesis() -> None:
    readme = (
        "## Models\n\n| template | source |\n| --- | --- |\n"
        "| `llama3_1`, `llama3_3` | trl `llama3_template` |\n"
        "| `xlam` (Salesforce xLAM-2 `-fc-r`: on `llama3_1` prompts) | x |\n"
        "\n## Other\n\n| model | x |\n| --- | --- |\n| `qwen3` | y |\n"
    )
    rows = models_table(readme, ["llama3_1", "llama3_3", "xlam", "qwen3"])
    assert [(row.models, row.covers) for row in rows] == [
        (("llama3_1", "llama3_3"), None),
        (("xlam",), "Salesforce xLAM-2 `-fc-r`: on `llama3_1` prompts"),
    ]


def test_readme_mentions_come_from_body_rows_only() -> None:
    readme = (
        "## Limits\n\n| model | x |\n| --- | --- |\n| `qwen3` | y |\n\n"
        "| `smollm3` as a header | x |\n| --- | --- |\n| existing `xlam.json` | y |\n"
    )
    assert readme_mentions(readme, ["qwen3", "smollm3", "xlam"]) == {"Limits": {"qwen3", "xlam"}}


def _model(name: str, cases: Sequence[Mapping[str, Any]]) -> Model:
    base = next(model for model in MODELS if model.name == name)
    return Model(name, base.spec, base.template, cases)


def _case(name: str, prefix: str, expected: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": name, "prefix": prefix, "text": "", "expected": expected}


def test_prompt_ending_is_what_follows_the_last_anchor() -> None:
    qwen3 = _model("qwen3", [])
    prompt = "<|im_start|>assistant\nold<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    assert qwen3.after_anchor(_case("c", prompt, {})) == "<think>\n"
    assert qwen3.after_anchor(_case("c", "no anchor here", {})) is None


def test_example_is_the_case_with_the_most_kinds_of_region() -> None:
    cases = [
        _case("error", "", {"error": "ValueError"}),
        _case("one_kind", "", {"role": "assistant", "content": "a"}),
        _case("limit_two_kinds", "", {"role": "assistant", "content": "a", "reasoning_content": "r"}),
        _case("two_kinds", "", {"role": "assistant", "content": "a", "reasoning_content": "r"}),
        _case("three_values", "", {"role": "assistant", "content": "a", "tool_calls": [1, 2]}),
    ]
    chosen = example_case(_model("qwen3", cases))
    assert chosen is not None and chosen["name"] == "three_values"
    assert example_case(_model("qwen3", cases[:4])) == cases[3]  # a documented limit only where nothing else ties
    assert example_case(_model("qwen3", cases[:1])) is None


def test_inline_code_holds_backticks_and_edge_spaces() -> None:
    assert code("<think>") == "`<think>`"
    assert code("```json") == "```` ```json ````"
    assert code(" ASSISTANT:") == "`  ASSISTANT: `"
    assert code("") == "*(empty)*"


def test_table_cells_escape_every_pipe() -> None:
    assert table(["a"], [["`<|im_end|>` \\| x"]]) == ["| a |", "| --- |", "| `<\\|im_end\\|>` \\\\| x |"]


def test_visible_escapes_control_characters() -> None:
    assert visible("a\nb\t\r\u200b\\", literal=True) == "a\\nb\\t\\r\\u200b\\\\"
    assert visible("\\s+\n", literal=False) == "\\s+\\n"


def test_raw_text_marks_newlines_and_trailing_spaces() -> None:
    assert raw_block_text("Assistant: \nhi\n\n") == "Assistant:␣↵\nhi↵\n↵\n"
    assert raw_block_text("a\tb↵") == "a⟨U+0009⟩b⟨U+21B5⟩"


def test_long_examples_keep_their_start_and_end() -> None:
    text = "a" * 1000 + "b" * 500 + "c" * 400
    assert shortened_example(text) == "a" * 1000 + "\n[… 500 characters omitted …]\n" + "c" * 400
    assert shortened_example("short") == "short"
