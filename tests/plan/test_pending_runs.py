"""Held-back runs: where a pattern starts with a run that can only grow into a match (mistral's
`[^\\s\\[\\]]+\\[ARGS\\]`), a compiled module takes text that only lengthens the held-back run without
scanning (`rtcompile.plan.pending_run`). Events and messages must be exactly the reference's for any
chunking, in particular chunks inside words, words cut anywhere, and runs that turn into the delimiter.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtcompile
from rtcompile.plan import plan_parser
from rtcompile.tooling.observe import agrees_with_reference, identical
from tests.support.bundled import template_of
from tests.support.compiled import compiled_engine, compiled_module, scanned_chunks
from tests.support.differential import interpreter_engine, observe, reference_engine
from tests.support.lanes import examples, pick
from tests.support.paths import ROOT
from tests.support.strategies import chunkings

# A template of the same shape without the bundled ones' other delimiters: a lower-case word before
# "(" opens a call, ")" closes it.
CALLS = {
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {
            "open_pattern": "(?:<call>)?(?P<name>[a-z]+)\\(",
            "close": ")",
            "repeats": True,
            "transform": {"name": "{name}", "arguments": "{content}"},
        },
        "content": {"close": "<|end|>"},
    },
}


# Runs that may be empty: the whitespace a close may start with (`\s*</tool_call>`), held back at the
# end of a chunk until what follows shows whether the close came.
SPACED = {
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {"open": "<tool_call>", "close_pattern": "\\s*</tool_call>", "repeats": True},
        "content": {"close_pattern": "\\s*<\\|end\\|>"},
    },
}


# A run beside another branch that starts elsewhere: calls close at `<end_of_turn>` after any
# whitespace, or just before the next call's `<start_of_tool>`.
BESIDE = {
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {
            "open_pattern": "^\\s*(?=\\[)",
            "close_pattern": "\\s*<end_of_turn>|(?=<start_of_tool>)",
            "content": "json",
        },
        "content": {"close": "<end_of_turn>"},
    },
}


# Runs where a delimiter looks back three characters, across a run: a run that ends keeps them
# before what it holds back (`^` in BESIDE keeps one).
LOOKING_BACK = {
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {"open_pattern": "(?<=a\\sb)<tool_call>", "close_pattern": "\\s*</tool_call>", "repeats": True},
        "content": {"close_pattern": "\\s*<\\|end\\|>"},
    },
}


TEMPLATES = {
    "mistral_v11": template_of("mistral_v11"),
    "magistral": template_of("magistral"),
    "calls": CALLS,
    "spaced": SPACED,
    "beside": BESIDE,
    "looking_back": LOOKING_BACK,
}
PIECES = {
    "mistral_v11": ["get", "_weather", "x", " ", "\n", "[", "]", "[ARGS]", "[TOOL_CALLS]", "</s>", "<", '{"a": 1}'],
    "magistral": ["get", "x", " ", "[THINK]", "[/THINK]", "[ARGS]", "[TOOL_CALLS]", "</s>", "<", '{"a": 1}', "]"],
    "calls": ["get", "abc", "x", " ", "(", ")", "<call>", "<", "<|end|>", "Z", "1"],
    "spaced": ["word", " ", "  ", "\n", "\t", "<tool_call>", "</tool_call>", "<|end|>", "<", "</tool", "x y"]
    + ["</p>", "a<b", " <", "\n</", "<|e", " <tool"],
    "beside": ['[{"a": "x y', " ", "\n", "z", '"}]', "<end_of_turn>", "<start_of_tool>", "<", "<end", "[", "1"],
    "looking_back": ["a", " ", "b", "\n", "a b", "x a", "<tool_call>", "</tool_call>", "<|end|>", "<", "a b", "\t"],
}


def test_the_plan_finds_the_runs_of_these_templates_and_no_others() -> None:
    found = []
    for path in sorted((ROOT / "templates").glob("*.json")):
        plan = plan_parser(rtcompile.load_template(str(path)))
        found += [path.stem for state in plan.states if state.pending_run is not None]
    assert found == ["magistral", "mistral_v11"]
    run = plan_parser(rtcompile.load_template(CALLS)).states[0].pending_run
    assert run is not None and run.run == ((97, 122),)
    # what may begin the optional `<call>`, the `(` after the run, or the content's close `<|end|>`
    assert run.busy == ((ord("("), ord("(")), (ord("<"), ord("<")))
    assert run.begins is None  # a match may begin with `<call>` or with the run: not known


def test_where_every_match_begins_with_a_literal_after_the_run_the_plan_lists_them() -> None:
    outside, inside = (state.pending_run for state in plan_parser(rtcompile.load_template(SPACED)).states)
    assert outside is not None and inside is not None
    assert outside.begins == ("<tool_call>", "<|end|>")  # the open, and the content's close after its run
    assert inside.begins == ("</tool_call>",)
    beside = plan_parser(rtcompile.load_template(BESIDE)).states[1].pending_run
    assert beside is not None and beside.begins == ("<end_of_turn>", "<start_of_tool>")
    # a lookbehind reads before the scan position: text alone does not tell
    looking_back = plan_parser(rtcompile.load_template(LOOKING_BACK)).states[0].pending_run
    assert looking_back is not None and looking_back.begins is None


@pytest.mark.parametrize("model", sorted(TEMPLATES))
def test_the_module_takes_the_shortcut(model: str) -> None:
    module = compiled_module(TEMPLATES[model])
    assert module.__file__ is not None
    assert "def _settle(self) -> None:" in Path(module.__file__).read_text(encoding="utf-8")


@pytest.mark.parametrize("model", sorted(TEMPLATES))
@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streams_through_held_back_runs_match_the_reference(model: str, data: st.DataObject) -> None:
    template = TEMPLATES[model]
    text = "".join(data.draw(st.lists(st.sampled_from(PIECES[model]), max_size=30)))
    chunks = data.draw(chunkings(text))
    ours = observe(compiled_engine(template), "", chunks)
    assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks))
    assert identical(ours, observe(interpreter_engine(template), "", chunks))


@pytest.mark.parametrize("model", sorted(TEMPLATES))
def test_words_fed_one_character_at_a_time_match_the_reference(model: str) -> None:
    template = TEMPLATES[model]
    opener = "[TOOL_CALLS]" if model != "calls" else "<call>"
    middle = "[ARGS]" if model != "calls" else "("
    for text in [
        "a long sentence of words fed in tokens",
        f"see {opener}get_weather{middle}" + ('{"city": "Paris"}' if model != "calls" else "x)"),
        "word" * pick(300, 30) + " end",
        "x" * 50 + "[" + "y" * 50,
        '[{"name": "f", "arguments": {"a": "x  y"}}]  \n <start_of_tool>more',
        '[{"a": 1}] \t<end_of_turn>after',
    ]:
        chunks = list(text)
        ours = observe(compiled_engine(template), "", chunks)
        assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks)), text


def test_a_run_that_ends_keeps_what_a_lookbehind_reads_across_it() -> None:
    # "b" ends the run " ": the call opens only if "a" is still kept two characters back.
    for chunks in (["a", " ", "b", "<tool_call>x</tool_call>"], ["xa", " \t", "b<", "tool_call>y"], ["a ", "b"]):
        ours = observe(compiled_engine(LOOKING_BACK), "", chunks)
        assert agrees_with_reference(ours, observe(reference_engine(LOOKING_BACK), "", chunks)), chunks
    ours = observe(compiled_engine(LOOKING_BACK), "", ["a", " ", "b", "<tool_call>x</tool_call>"])
    assert "tool_calls" in ours[-1], "the lookbehind sees `a b`: the call opens"


def test_a_run_and_the_start_of_a_literal_after_it_are_held_back_without_a_scan() -> None:
    # Where every match begins with a known literal, after the owner's run or not, a chunk in which the
    # start of one ends is held back from the run before it, by the run's lane, as scanning would hold it;
    # a run held back before the chunk is part of it, and so is a match that reaches the end of the text
    # (more text could lengthen it). Scanned: the first chunk (no lane yet), and the one after such a
    # match, which takes it up.
    for chunks, scanned in [
        (["<tool_call>", "a", " </", "tool_call>", "after"], 2),
        (["x", "  ", "\n<|e", "nd|>"], 1),
        (["x", " \t", "<|en", "d and", " more <", "/p>", "<|end|>"], 1),
    ]:
        ours = observe(compiled_engine(SPACED), "", chunks)
        assert agrees_with_reference(ours, observe(reference_engine(SPACED), "", chunks)), chunks
        assert identical(ours, observe(interpreter_engine(SPACED), "", chunks)), chunks
        assert scanned_chunks(SPACED, chunks) == scanned, chunks


def test_every_run_character_ends_a_chunk_held_back() -> None:
    # A chunk ending in any one of the run's characters holds it back (the module strips the run off with
    # `str.rstrip` and the characters it was given: one left out there would be region text here).
    states = plan_parser(rtcompile.load_template(SPACED)).states
    runs = [state.pending_run for state in states]
    assert all(run is not None for run in runs)
    characters = {chr(c) for run in runs if run is not None for lo, hi in run.run for c in range(lo, hi + 1)}
    assert len(characters) == 25  # `\s`: every Unicode whitespace character
    for c in sorted(characters):
        for chunks in (["x", f"word{c}", "<|end|>"], ["<tool_call>", "a", f"b{c}{c}", " </tool_call>", "y"]):
            ours = observe(compiled_engine(SPACED), "", chunks)
            assert agrees_with_reference(ours, observe(reference_engine(SPACED), "", chunks)), chunks
