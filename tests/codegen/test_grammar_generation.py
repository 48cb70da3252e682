"""Grammars by execution: strings generated under a template's grammar (random walks of llguidance's
token masks over a byte tokenizer) parse with the template's compiled module into calls of declared
tools, with arguments valid for their schemas, and with tool_choice and parallelism honoured.

Counts (grammars, strings, calls, refusals) are printed with `-s`.
"""

from __future__ import annotations

import functools
import json
import random
import re
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rtcompile
from rtcompile.api import load_template
from rtcompile.errors import TemplateError
from rtcompile.grammars import FORMATS, GrammarError, grammar, grammar_skeleton
from rtcompile.grammars.skeleton import MAX_DELIMITER_LITERALS, MAX_DELIMITER_SPAN
from tests.support import grammar_walks as gw
from tests.support import lanes, structural_tag
from tests.support.bundled import NO_GRAMMAR, template_file
from tests.support.compiled import import_file
from tests.support.paths import DATA, GENERATED, TEMPLATES
from tests.support.strategies import grammar_prompts, grammar_templates, templates

MODELS = sorted(path.stem for path in TEMPLATES.glob("*.json"))

# What a request may be refused for (exact messages): a tool or choice the template cannot write.
REQUEST_REFUSALS = {
    "the value 3 would not read back from the template's tags",  # enum ["a", "b", 3] in text-valued tags
    "an object value cannot be written in the template's tags",
    "tool_choice needs a call, but the template has no tool-call field or no tool is given",
}
# (tool set, tool_choice, parallel_tool_calls): every mode, nested objects, enums, optional parameters.
MODES = [
    ("weather", "auto", True),
    ("nested", "required", False),
    ("scalars", "choose", True),
    ("weather", "none", True),
    ("scalars", "required", True),
]


def generated_module(model: str) -> ModuleType:
    """The committed module of a bundled template (generated/, fresh: test_generated checks it)."""
    if model not in _GENERATED:
        _GENERATED[model] = import_file(GENERATED / f"{model}_parser.py", f"rtcompile_grammar_test_{model}")
    return _GENERATED[model]


_GENERATED: dict[str, ModuleType] = {}


def _case_tools(model: str) -> list[Any]:
    """The tools of the model's first recorded case with tools (the weather set if none has)."""
    path = DATA / model / "cases.json"
    cases = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    return next((case["tools"] for case in cases if case.get("tools")), gw.TOOL_SETS["weather"])


def _skeleton(model: str) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return grammar_skeleton(load_template(template_file(model)))


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_every_bundled_template_has_a_grammar_in_every_format_or_a_named_refusal(model: str) -> None:
    tools = _case_tools(model)
    for format in FORMATS:
        if model in NO_GRAMMAR:
            with pytest.raises(TemplateError) as refusal:
                grammar(template_file(model), tools, prefix="", format=format)
            assert str(refusal.value).split(": ", 1)[1] == NO_GRAMMAR[model]  # after file:line:col
            continue
        text = grammar(template_file(model), tools, prefix="", format=format)
        if format == "lark":  # (the walks below have llguidance read every format, for other tools)
            gw.matcher(text, format)
        if format == "structural-tag":  # xgrammar's documented shape (test_grammar_structural_tag.py)
            assert structural_tag.problems(json.loads(text)) == []


def _walk_model(model: str, walks: int, tally: gw.Tally) -> list[str]:
    """Walks under every mode and format; the problems found ([] when none)."""
    module = generated_module(model)
    skeleton = _skeleton(model)
    field = skeleton["fields"][skeleton["call"]["field"]] if skeleton["call"] else None
    problems = []
    for format in FORMATS:
        for tool_set, choice, parallel in MODES:
            tools = gw.TOOL_SETS[tool_set]
            try:
                text = module.grammar(tools, prefix="", tool_choice=choice, parallel_tool_calls=parallel, format=format)
            except ValueError as error:  # the module's own GrammarError (it imports nothing of rtcompile)
                assert (type(error).__name__, str(error) in REQUEST_REFUSALS) == ("GrammarError", True), error
                tally.refused(str(error))
                continue
            tally.grammars += 1
            rng = random.Random(f"{model} {format} {tool_set} {choice} {parallel}")
            hints = gw.hints(skeleton, tools, rng)
            fresh = gw.matcher(text, format)
            parse = functools.partial(module.parse_response, prefix="", tools=tools)
            for _ in range(walks):
                result = gw.generate_and_check(
                    fresh.deep_copy(), rng, hints, parse, field, tools, choice, parallel, tally
                )
                if result is not None:
                    generated, found = result
                    problems += [f"{format} {tool_set} {choice} {parallel}: {p} in {generated!r}" for p in found]
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("model", [m for m in MODELS if m not in NO_GRAMMAR])
def test_strings_generated_from_every_bundled_grammar_parse_into_allowed_calls(model: str) -> None:
    tally = gw.Tally()
    problems = _walk_model(model, 1, tally)
    print(model, tally)
    assert problems == []
    assert tally.strings > 0


def test_strings_generated_for_qwen3_parse_into_allowed_calls() -> None:
    """The fast lane's share: one template, every format and mode."""
    tally = gw.Tally()
    assert _walk_model("qwen3", 1, tally) == []
    assert (tally.grammars, tally.strings + tally.unfinished) == (15, 15)
    assert tally.calls > 0


QWEN3_CALL = '<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'


def _qwen3_call(name: str, arguments: str = "{}") -> str:
    return QWEN3_CALL.format(name=name, arguments=arguments)


@pytest.mark.parametrize("format", FORMATS)
def test_tool_choice_and_parallelism_decide_which_texts_are_accepted(format: str) -> None:
    tools = gw.TOOL_SETS["weather"]
    weather = _qwen3_call("get_weather", '{"city": "Paris"}')
    time = _qwen3_call("get_time")
    texts = {
        "none": "It is sunny.",
        "one": "Let me look." + weather,
        "two": weather + "\n" + time,
        "other": time,
        "bad arguments": _qwen3_call("get_weather", '{"days": 2}'),  # city is required
        "undeclared": _qwen3_call("get_news"),
    }
    expected = {
        ("auto", True): {"none", "one", "two", "other"},
        ("auto", False): {"none", "one", "other"},
        ("required", True): {"one", "two", "other"},
        ("none", True): {"none"},
        ("get_weather", True): {"one"},
        ("get_weather", False): {"one"},
    }
    for (choice, parallel), accepted in expected.items():
        text = grammar(
            template_file("qwen3"), tools, prefix="", tool_choice=choice, parallel_tool_calls=parallel, format=format
        )
        samples = gw.accepted(text, texts.values(), format)
        assert {name for name, sample in texts.items() if sample in samples} == accepted, (choice, parallel)


def test_the_prompt_decides_where_the_grammar_starts() -> None:
    tools = gw.TOOL_SETS["weather"]
    inside, outside = (
        grammar(template_file("qwen3"), tools, prefix=prefix, tool_choice="required")
        for prefix in ("<|im_start|>assistant\n<think>", "<|im_start|>assistant\n")
    )
    call = _qwen3_call("get_time")
    # after a prompt that opened <think>, a call written before </think> is reasoning text
    parsed = rtcompile.parse_response(call, template_file("qwen3"), prefix="<|im_start|>assistant\n<think>")
    assert parsed == {"role": "assistant", "reasoning_content": call}
    assert not gw.accepts(inside, call)
    assert gw.accepts(inside, "a plan</think>" + call)
    assert gw.accepts(outside, call)


@pytest.mark.parametrize("format", ["lark", "gbnf"])
def test_text_that_keeps_beginning_a_delimiter_is_admitted_at_any_length(format: str) -> None:
    """Free text spelled out from its DFA was a rule per state, and every character that left a
    state and came back to it was one rule call deeper: each `<` in glm4_5's content (`<t` could
    begin `<think>` or `<tool_call>`), each `<e` in functiongemma's `<escape>` strings. llguidance's
    Earley rows grew with the text (its masks took seconds a byte inside a call), and at 2,000 items
    a row it refused these texts, 7.6 s into reading them. Now the texts are repeats: rows stay
    small, and the texts are admitted, read as written."""
    string = "<e" * 1500
    call = f"<start_function_call>call:get_weather{{city:<escape>{string}<escape>}}<end_function_call>"
    content = "<t" * 1500
    for model, text in (("glm4_5", content), ("functiongemma", call)):
        built = grammar(template_file(model), gw.TOOL_SETS["weather"], prefix="", format=format)
        assert gw.accepts(built, text, format), model
    assert _parsed("glm4_5", [content]) == [{"role": "assistant", "content": content}]
    arguments = _parsed("functiongemma", [call])[0]["tool_calls"][0]["function"]["arguments"]
    assert arguments == {"city": string}


@pytest.mark.parametrize("format", FORMATS)
def test_a_delimiter_may_come_right_after_one_that_bans_what_follows_it(format: str) -> None:
    """Text after a delimiter that bans some next characters is written non-empty, so that its first
    character is checked; a delimiter, or the end, right there was missing. llama3_2 opens a call with
    `<\\|python_tag\\|>|^(?=\\[)`: `[` may not start the message as text, and `<|python_tag|>` could not
    start it at all (a recorded case). minimax_m1 closes a call with `\\}\\s*(?:</tool_calls>|...)`:
    the message could not end right after `</tool_calls>`, the model had to write more text."""
    tools = gw.TOOL_SETS["weather"]
    llama = grammar(template_file("llama3_2"), tools, prefix="", format=format)
    tagged = ['<|python_tag|>[get_weather(city="Paris")]<|eom_id|>', "<|python_tag|>[get_time()]"]
    bare = '[get_weather(city="Paris")]<|eot_id|>'
    assert gw.accepted(llama, [*tagged, bare, "[not a call"], format) == [*tagged, bare]
    minimax = grammar(template_file("minimax_m1"), tools, prefix="", tool_choice="required", format=format)
    call = '<tool_calls>\n{"name": "get_time", "arguments": {}}\n</tool_calls>'
    assert gw.accepted(minimax, [call, call + "Done."], format) == [call, call + "Done."]
    # what they now admit is read as the call written
    names = [[c["function"]["name"] for c in m["tool_calls"]] for m in _parsed("llama3_2", tagged)]
    assert names == [["get_weather"], ["get_time"]]
    assert _parsed("minimax_m1", [call])[0]["tool_calls"][0]["function"]["name"] == "get_time"


@pytest.mark.parametrize("format", FORMATS)
def test_what_may_follow_a_delimiter_is_known_per_ending(format: str) -> None:
    """minimax_m1 closes a call with `\\}\\s*(?:</tool_calls>|<end_of_sentence>|\\n|$)`. After `}\\n`,
    `<` and whitespace may not come next (`<end_of_sentence>` or more space would go on the match), but
    after `}\\n</tool_calls>` anything may: the model's own `</tool_calls><end_of_sentence>` (a recorded
    case) was refused while the ban was the whole close's."""
    tools = gw.TOOL_SETS["weather"]
    text = grammar(template_file("minimax_m1"), tools, prefix="", tool_choice="required", format=format)
    call = '<tool_calls>\n{"name": "get_time", "arguments": {}}\n'
    closed = [call + "</tool_calls><end_of_sentence>", call + "</tool_calls>\n<think>x</think>"]
    ended = call + "<end_of_sentence>"
    assert gw.accepted(text, [*closed, ended], format) == [*closed, ended]
    messages = _parsed("minimax_m1", closed)
    assert [m["tool_calls"][0]["function"]["name"] for m in messages] == ["get_time", "get_time"]
    assert messages[1]["reasoning_content"] == "x"


def _parsed(model: str, texts: list[str]) -> list[dict[str, Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # llama3_2's lookahead: a lint warning, beside the point here
        parsed = rtcompile.parse_response(texts, template_file(model), prefix="")
    assert isinstance(parsed, list)
    return parsed


@pytest.mark.parametrize("format", FORMATS)
def test_optional_parameters_are_written_in_order_and_the_grammar_grows_linearly(format: str) -> None:
    """A Python call's keywords (llama3_2) and a JSON object in GBNF or a structural tag (qwen3) are
    members in the schema's order, the optional ones left out at will. The grammar doubled per optional
    parameter (83 MB of Lark for 16 of them); now Lark and GBNF grow linearly with them."""
    tool = gw.tool("f", {f"p{i}": {"type": "string"} for i in range(6)}, ["p2"])
    calls = {
        "required only": {"p2": "a"},
        "some": {"p0": "a", "p2": "b", "p5": "c"},
        "all": {f"p{i}": "v" for i in range(6)},
        "missing the required": {"p0": "a"},
        "out of order": {"p3": "a", "p2": "b"},
    }
    written: dict[str, Callable[[dict[str, str]], str]] = {
        "llama3_2": lambda args: "[f(" + ", ".join(f"{k}={json.dumps(v)}" for k, v in args.items()) + ")]",
        "qwen3": lambda args: _qwen3_call("f", json.dumps(args)),
    }
    for model, write in written.items():
        text = grammar(template_file(model), [tool], prefix="", format=format)
        samples = {name: write(args) for name, args in calls.items()}
        accepted = gw.accepted(text, samples.values(), format)
        assert [name for name, sample in samples.items() if sample in accepted] == ["required only", "some", "all"]
    if format == "structural-tag":
        return  # (no references in a structural tag: it grows with the square of the members)
    for model in written:
        sizes = [
            len(
                grammar(
                    template_file(model),
                    [gw.tool("f", {f"p{i}": {"type": "string"} for i in range(n)})],
                    prefix="",
                    format=format,
                )
            )
            for n in (16, 64)
        ]
        assert sizes[1] < 5 * sizes[0] < 500_000, (model, sizes)


@pytest.mark.parametrize("format", FORMATS)
def test_a_separator_keeps_apart_tags_the_next_one_could_go_on(format: str) -> None:
    """olmo3 and minicpm write a call's arguments as `key=value` tags; a bare value is
    `[^,\\s)"'\\[\\]{}]+`, which takes on the next key when nothing parts them: `days=8unit="celsius"`
    reads days as "8unit=" (a random walk of olmo3's grammar wrote it). Between two tags at least one
    separator character now comes; after the last, none need."""
    tools = gw.TOOL_SETS["weather"]
    for model, (open_, close) in {
        "olmo3": ("<function_calls>", ")</function_calls>"),
        "minicpm": ("<|tool_call_start|>\n```python\n", ")```"),
    }.items():
        text = grammar(template_file(model), tools, prefix="", tool_choice="required", format=format)
        apart = [f'{open_}get_weather(city="a"{sep}days=8{sep}unit="celsius"{close}' for sep in (", ", " ", ",")]
        run_on = f'{open_}get_weather(city="a", days=8unit="celsius"{close}'
        assert gw.accepted(text, [*apart, run_on], format) == apart, model
        for message in _parsed(model, apart):
            assert message["tool_calls"][0]["function"]["arguments"] == {"city": "a", "days": 8, "unit": "celsius"}
        assert _parsed(model, [run_on])[0]["tool_calls"][0]["function"]["arguments"]["days"] == "8unit="


def test_a_generated_module_builds_the_packages_grammar() -> None:
    module = generated_module("gpt_oss")
    tools = gw.TOOL_SETS["nested"]
    for format in FORMATS:
        assert module.grammar(tools, prefix="", tool_choice="required", format=format) == grammar(
            template_file("gpt_oss"), tools, prefix="", tool_choice="required", format=format
        )


RANDOM_TALLY = gw.Tally()


@pytest.mark.slow
@settings(max_examples=40)
@given(template=templates(compilable=True), modes=st.sampled_from(MODES), seed=st.integers(0, 2**16))
def test_strings_generated_from_random_templates_parse_into_allowed_calls(
    template: dict[str, Any], modes: tuple[str, str, bool], seed: int
) -> None:
    tool_set, choice, parallel = modes
    tools = gw.TOOL_SETS[tool_set]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ir = load_template(template)
        try:
            text = grammar(ir, tools, prefix="", tool_choice=choice, parallel_tool_calls=parallel)
        except (TemplateError, GrammarError) as refusal:
            assert str(refusal)  # a message naming what has no grammar
            RANDOM_TALLY.refused(str(refusal).split(": ", 1)[-1])
            print("random templates:", RANDOM_TALLY)
            return
        RANDOM_TALLY.grammars += 1
        skeleton = grammar_skeleton(ir)
        field = skeleton["fields"][skeleton["call"]["field"]] if skeleton["call"] else None
        rng = random.Random(seed)
        hints = gw.hints(skeleton, tools, rng)
        parse = functools.partial(rtcompile.parse_response, template=ir, prefix="", tools=tools)
        for _ in range(2):
            result = gw.generate_and_check(
                gw.matcher(text), rng, hints, parse, field, tools, choice, parallel, RANDOM_TALLY
            )
            assert result is None or result[1] == [], result
    print("random templates:", RANDOM_TALLY)


# Templates drawn by `grammar_templates()`: how many have a grammar, and why the others have none.
REALISTIC: dict[str, int] = {}
# What the builder may refuse of them, by design: an open ending in `\s*` before arguments that may start
# with whitespace (`<invoke name="f">\s*` and a `\s*</function>` close). Any other refusal fails: the
# strategy draws what the grammar follows (300 draws: 299 with a grammar).
REALISTIC_REFUSALS = {"a tool call's body would continue its open delimiter's match"}
REALISTIC_TALLY = gw.Tally()
# every tool_choice mode ("named": one of the tools by name), and at most one call
CHOICES = [("auto", True), ("required", True), ("none", True), ("named", True), ("auto", False)]


@settings(max_examples=lanes.examples(25))
@given(data=st.data(), template=grammar_templates(), tool_set=st.sampled_from(sorted(gw.TOOL_SETS)))
def test_strings_generated_from_realistic_random_templates_parse_into_allowed_calls(
    data: st.DataObject, template: dict[str, Any], tool_set: str
) -> None:
    """Random templates that real chat templates resemble (tests/support/strategies.py
    `grammar_templates`: OpenAI-shaped calls in JSON, Python call lists, named opens with JSON or tag
    arguments, reasoning, start anchors) have a grammar, and under every tool_choice the strings it
    admits parse into allowed calls. Counts are printed with `-s`."""
    tools = gw.TOOL_SETS[tool_set]
    prefix = data.draw(grammar_prompts(template), label="prompt")
    rng = random.Random(data.draw(st.integers(0, 2**16), label="seed"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ir = load_template(template)
        skeleton = grammar_skeleton(ir)
        if skeleton["refused"]:
            # a refusal names the field (fields.<name>...) and what has no grammar form
            assert skeleton["refused"]["path"][0] == "fields", skeleton["refused"]
            reason = skeleton["refused"]["message"]
            assert reason in REALISTIC_REFUSALS, skeleton["refused"]
            REALISTIC[reason] = REALISTIC.get(reason, 0) + 1
            print("realistic templates:", REALISTIC)
            return
        REALISTIC["with a grammar"] = REALISTIC.get("with a grammar", 0) + 1
        field = skeleton["fields"][skeleton["call"]["field"]]
        hints = gw.hints(skeleton, tools, rng)
        for choice, parallel in CHOICES:
            if choice == "named":
                choice = rng.choice(tools)["function"]["name"]
            try:
                text = grammar(ir, tools, prefix=prefix, tool_choice=choice, parallel_tool_calls=parallel)
            except GrammarError as refusal:  # a tool these tags cannot write (see REQUEST_REFUSALS)
                assert str(refusal) in REQUEST_REFUSALS, refusal
                REALISTIC_TALLY.refused(str(refusal))
                continue
            REALISTIC_TALLY.grammars += 1
            parse = functools.partial(rtcompile.parse_response, template=ir, prefix=prefix, tools=tools)
            result = gw.generate_and_check(
                gw.matcher(text), rng, hints, parse, field, tools, choice, parallel, REALISTIC_TALLY, length=80
            )
            assert result is None or result[1] == [], (choice, parallel, result)
    print("realistic templates:", REALISTIC, REALISTIC_TALLY)


@pytest.mark.parametrize("format", FORMATS)
def test_nothing_the_name_group_would_take_follows_a_tool_name(format: str) -> None:
    """ling names a call with <tool_call>(?P<name>[^\\s<\\\\]+) and separates its tags with
    whitespace or commas: a comma right after the name would be read as part of it."""
    tools = gw.TOOL_SETS["weather"]
    text = grammar(template_file("ling"), tools, prefix="", tool_choice="required", format=format)
    tag = "<arg_key>city</arg_key><arg_value>Paris</arg_value>"
    samples = [f"<tool_call>get_weather{sep}{tag}</tool_call>" for sep in ("", "\n", ",", "\n,")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ling's tag pattern backtracks: a lint warning, beside the point here
        parsed = rtcompile.parse_response(samples, template_file("ling"), prefix="", tools=tools)
    assert isinstance(parsed, list)
    names = [message["tool_calls"][0]["function"]["name"] for message in parsed]
    assert names == ["get_weather", "get_weather", "get_weather,", "get_weather"]
    assert gw.accepted(text, samples, format) == [samples[0], samples[1], samples[3]]


def test_a_pattern_the_skeleton_cannot_spell_compiles_and_grammar_refuses() -> None:
    """Found by the fuzzer: `${1,3}` in a close made compiling raise GrammarError. The template still
    compiles; only `grammar()` refuses it, saying why."""
    close = "(?s)𐐀|${1,3}[^ſ\\]\\b]>x"
    template = {"start_anchor": "<s>", "fields": {"tc": {"close_pattern": close, "open": "<"}, "content": {}}}
    assert "def grammar(" in rtcompile.compile_template(template)
    with pytest.raises(TemplateError, match="^no grammar can follow this template: no regex form for 'end'"):
        grammar(template, [], prefix="<s>")


def test_a_delimiter_too_long_for_the_automata_is_refused_before_they_are_built() -> None:
    """Building the automata for a 3,000-character literal took minutes (the refinement is quadratic in
    a delimiter's length): such a delimiter is refused up front, with the limit, and the template
    compiles as fast as any other. One at the limit still gets a grammar."""
    for length, refused in ((MAX_DELIMITER_SPAN - 2, False), (MAX_DELIMITER_SPAN - 1, True), (3000, True)):
        template = {"start_anchor": "<s>", "fields": {"r": {"open": "<" + "x" * length + ">", "close": "</r>"}}}
        assert "def grammar(" in rtcompile.compile_template(template)
        if not refused:
            assert "x" * length in grammar(template, [], prefix="<s>")
            continue
        message = f"delimiter spelling {length + 2} characters in a row is too long for a grammar (at most 256)"
        with pytest.raises(TemplateError, match=re.escape(message)):
            grammar(template, [], prefix="<s>")


def test_too_many_literal_delimiters_are_refused_before_the_automata_are_built() -> None:
    """Keeping n literal delimiters out of about n free texts grew faster than the square of n (1,000
    literals: minutes to compile, 10,000: hours): past `MAX_DELIMITER_LITERALS` the grammar is refused,
    at the field with the most, and the template compiles fast. At the limit it still has a grammar."""

    def template(count: int) -> dict[str, Any]:
        opens, closes = [f"<t{i}>" for i in range(count)], [f"</t{i}>" for i in range(count)]
        return {"start_anchor": "<s>", "fields": {"content": {}, "tagged": {"open": opens, "close": closes}}}

    at_limit = template(MAX_DELIMITER_LITERALS // 2)
    assert "<t0>" in grammar(at_limit, [], prefix="<s>")
    too_many = template(MAX_DELIMITER_LITERALS // 2 + 1)
    message = f"the template's delimiters are {MAX_DELIMITER_LITERALS + 2} literals, too many for a grammar"
    with pytest.raises(TemplateError, match=re.escape(message)) as refused:
        grammar(too_many, [], prefix="<s>")
    assert refused.value.path == ("fields", "tagged", "open")
    thousands = template(5000)
    assert "def grammar(" in rtcompile.compile_template(thousands)  # (the refusal is the module's too)


def test_a_tag_end_that_can_spell_the_close_is_refused() -> None:
    """minimax_m3's grammar admitted `<invoke name="get_weather">…<city>Paris…</invoke>…</invoke>`:
    its tag end `</[^>\\s]+>` may be `</invoke>`, which closes the call inside the tag (`get_weather({})`,
    `city` required). A tag end that can spell the close is refused; one that cannot keeps its grammar."""

    def template(tag_end: str) -> dict[str, Any]:
        tag = f"<(?P<key>[^>/\\s]+)>(?P<value>.*?){tag_end}"
        call = {
            "open_pattern": '<invoke name="(?P<name>[^"]+)">',
            "close": "</invoke>",
            "content": "xml-inline",
            "content_args": {"tag_pattern": tag},
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        }
        return {"start_anchor": "<s>", "fields": {"tool_calls": call, "content": {}}}

    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    with pytest.raises(TemplateError, match="a tag's end can spell the close delimiter"):
        grammar(template("</[^>\\s]+>"), tools, prefix="<s>")
    assert "get_weather" in grammar(template("</[a-z]+_>"), tools, prefix="<s>")
