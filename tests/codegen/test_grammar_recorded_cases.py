"""Grammars are complete on real outputs: every recorded case with tools (tests/data/<model>/cases.json) of
a template that has a grammar is admitted by the grammar built for the case's tools and prompt (Lark,
tool_choice "auto"), checked byte by byte with llguidance -- except the cases of `REFUSED`, each with why,
where the grammar stops it, and, where a small edit is all it takes, the edit after which it is admitted.

A refusal is either the output's (not well-formed for its tools: a value of the wrong type the parser
coerces, an undeclared tool or argument, an output cut off mid-call, text the template itself misreads)
or a deliberate restriction of the grammar (arguments in the schema's order, only the keys the call's
transform reads). The table is checked both ways: a case it lists must still be refused as it says, so a
fix that admits one fails here until its entry goes.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass
from typing import Any

import pytest

import rtcompile
from rtcompile.grammars import GrammarError, grammar
from tests.support import grammar_walks as gw
from tests.support.bundled import MODELS, NO_GRAMMAR, cases_of, loaded


@dataclass(frozen=True)
class Refused:
    """Why a recorded output is not in the grammar for its tools, and how that shows: `at` or `cut`, or
    `request` (no grammar for the case's tools), and then `at`, `cut` or nothing for the grammar of the
    tools without the parameter `without`."""

    why: str
    at: str | None = None  # the output from the byte the grammar refuses on
    cut: bool = False  # the output stops mid-call: admitted as a beginning, not as a whole
    request: str | None = None  # GrammarError's message for the case's tools
    without: str = ""  # the parameter that makes the request refused
    repaired: tuple[tuple[str, str], ...] = ()  # edits (old, new) after which the grammar admits it


COERCED = (
    "not well-formed: a string where the tool's schema wants an integer or a boolean; the parser coerces it"
    " by the schema, the grammar writes schema-valid values only"
)
CUT = "not well-formed: the output stops in the middle of a call (a token limit), not a whole message"
ALARM_TYPED = (('"hour": "7"', '"hour": 7'), ('"enabled": "true"', '"enabled": true'))
DAYS_TYPED = (('"days": "2"', '"days": 2'),)


def coerced(at: str, repaired: tuple[tuple[str, str], ...] = ALARM_TYPED) -> Refused:
    return Refused(COERCED, at=at, repaired=repaired)


REFUSED: dict[tuple[str, str], Refused] = {
    # -- the output's own faults
    ("apertus", "typed_by_tools"): coerced('"7", "enabled"'),
    ("exaone4", "typed_by_tools"): coerced('"7", "enabled"'),
    ("gigachat3", "typed_by_tools"): coerced('"7", "enabled"'),
    ("hunyuan_a13b", "string_typed_by_tools"): coerced('"7", "enabled"'),
    ("internlm2", "intern_s1_reasoning_then_call"): coerced('"2"}}', DAYS_TYPED),
    ("jamba", "typed_by_tools"): coerced('"7", "enabled"'),
    ("lfm2", "typed_by_tools"): coerced('"7", enabled=True', (('hour="7"', "hour=7"),)),
    ("llama3_1", "string_arguments_typed_by_tools"): coerced('"7", "enabled"'),
    ("llama3_1", "parallel_calls_newline_separated"): coerced('"2"}}', DAYS_TYPED),
    ("llama3_2", "typed_by_tools"): coerced('"7", enabled=True', (('hour="7"', "hour=7"),)),
    ("llama3_3", "string_arguments_typed_by_tools"): coerced('"7", "enabled"'),
    ("llama3_3", "parallel_calls_newline_separated"): coerced('"2"}}', DAYS_TYPED),
    ("llama_nemotron_nano_v2", "typed_by_tools"): coerced('"7", "enabled"'),
    ("longcat", "typed_by_tools"): coerced('"7", "enabled"'),
    ("qwen3", "string_arguments_typed_by_tools"): coerced('"7", "enabled"'),
    ("xlam", "typed_by_tools"): coerced('"7", "enabled"'),
    ("deepseek_v3_2", "cut_off_mid_call"): Refused(CUT, cut=True),
    ("deepseek_v4", "cut_off_mid_call"): Refused(CUT, cut=True),
    ("jamba", "cut_off_mid_call"): Refused(CUT, cut=True),
    ("lfm2", "cut_off_mid_call"): Refused(CUT, cut=True),
    ("llama_nemotron_nano_v2", "cut_off_mid_call"): Refused(CUT, cut=True),
    ("minimax_m2", "cut_off_mid_call"): Refused(CUT, cut=True),
    ("granite4", "limit_arguments_as_json_encoded_string"): Refused(
        "not well-formed: the arguments are a JSON-encoded string, not an object (the template keeps the string)",
        at='"{\\"city\\"',
        repaired=(('"{\\"city\\": \\"Paris\\", \\"days\\": 3}"', '{"city": "Paris", "days": 3}'),),
    ),
    ("minicpm5", "calls_with_text_between"): Refused(
        "not well-formed: it calls get_weather, which is not among the case's tools (only sum_values is)",
        at='get_weather"><param',
        repaired=(('<function name="get_weather"><param name="city">北京</param></function>', ""),),
    ),
    # -- restrictions of the grammar
    ("apertus", "content_then_call_nested_args"): Refused(
        "restriction: the grammar writes only declared arguments (as if additionalProperties were false);"
        " 'filters' is not among search.web-v2's properties",
        at='filters": {"range"',
        repaired=(('"filters": {"range": {"from": 1, "to": 2}}, ', ""),),
    ),
    ("cohere_command_a", "one_tool_call"): Refused(
        "restriction: a call object holds only the keys the template's transform reads (tool_name, parameters);"
        " Command A's own tool_call_id has no place in it",
        at='call_id": "0"',
        repaired=(('"tool_call_id": "0", ', ""),),
    ),
    ("kimi_k3", "array_and_code_arguments"): Refused(
        "restriction: arguments are written in the schema's order; 'tags' comes before 'label' here, after it"
        " in set_alarm's properties",
        at='open|>argument key="label"',
        repaired=(
            (
                '<|open|>argument key="tags" type="array"<|sep|>["a", "ü"]<|close|>argument<|sep|>',
                "",
            ),
            (
                "return 1\n<|close|>argument<|sep|>",
                'return 1\n<|close|>argument<|sep|><|open|>argument key="tags" type="array"<|sep|>["a", "ü"]'
                "<|close|>argument<|sep|>",
            ),
        ),
    ),
    ("minicpm", "typed_by_tools"): Refused(
        "restriction: set_alarm has an array parameter (tags), and key=value tags whose values end at the first"
        " `]` get no arrays from the grammar; without it, the output's own fault: `enabled=True` is not JSON,"
        " the parser coerces the text by the schema, the grammar writes `true`",
        request="an array value cannot be written in the template's tags",
        without="tags",
        at="True, zip",
        repaired=(("enabled=True", "enabled=true"),),
    ),
    ("olmo3", "json_literals_and_list"): Refused(
        "restriction: set_alarm has an array parameter (tags), and key=value tags whose values end at the first"
        " `]` get no arrays from the grammar (the output writes one)",
        request="an array value cannot be written in the template's tags",
        without="tags",
        at='tags=["daily"',
        repaired=((', tags=["daily", "work"]', ""),),
    ),
}


# (test_grammar_generation checks that exactly these have none, with the reason)
GRAMMAR_MODELS = [model for model in MODELS if model not in NO_GRAMMAR]
# The fast lane's share: a plain template, and the two whose recorded cases found grammar bugs.
FAST = {"qwen3", "llama3_2", "minimax_m1"}


def _verdict(text: str, output: str) -> tuple[str, bytes]:
    """("admitted", b"") | ("refused", the output from the refused byte) | ("cut", b"")."""
    matcher = gw.matcher(text)
    data = output.encode()
    for index, byte in enumerate(data):
        if not matcher.consume_token(byte):
            return "refused", data[index:]
    return ("admitted", b"") if matcher.is_accepting() else ("cut", b"")


def _calls(model: str, output: str, case: dict[str, Any]) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        message = rtcompile.parse_response(output, loaded(model), prefix=case["prefix"], tools=case["tools"])
    assert isinstance(message, dict)
    return list(message.get("tool_calls") or [])


@pytest.mark.parametrize(
    "model", [model if model in FAST else pytest.param(model, marks=pytest.mark.slow) for model in GRAMMAR_MODELS]
)
def test_recorded_outputs_are_admitted_by_the_grammar_for_their_tools(model: str) -> None:
    for case in cases_of(model):
        if not case.get("tools"):
            continue
        name, refused = case["name"], REFUSED.get((model, case["name"]))
        tools = case["tools"]
        try:
            text = grammar(loaded(model), tools, prefix=case["prefix"])
        except GrammarError as error:
            assert refused is not None and refused.request == str(error), (name, str(error))
            tools = _without(tools, refused.without)
            text = grammar(loaded(model), tools, prefix=case["prefix"])
        else:
            assert refused is None or refused.request is None, (name, "has a grammar now")
        verdict = _verdict(text, case["text"])
        if refused is None or (refused.at is None and not refused.cut):
            assert verdict == ("admitted", b""), (name, verdict)
            continue
        if refused.cut:
            assert verdict == ("cut", b""), (name, verdict)
            continue
        assert refused.at is not None
        assert verdict[0] == "refused" and verdict[1].startswith(refused.at.encode()), (name, verdict)
        # the edit the reason names is all it takes, and what it gives is calls of the tools
        output = case["text"]
        for old, new in refused.repaired:
            assert old in output, (name, old)
            output = output.replace(old, new)
        assert _verdict(text, output) == ("admitted", b""), (name, output)
        assert gw.check_calls(_calls(model, output, case), tools, "auto", True) == [], name


def _without(tools: list[Any], parameter: str) -> list[Any]:
    """The tools with `parameter` taken out of every one."""
    out = copy.deepcopy(tools)
    for tool in out:
        schema = tool["function"]["parameters"]
        schema["properties"].pop(parameter, None)
        schema["required"] = [key for key in schema.get("required", []) if key != parameter]
    return out


def test_every_refusal_listed_names_a_recorded_case_with_tools_and_one_way_it_shows() -> None:
    cases = {(model, case["name"]): case for model in GRAMMAR_MODELS for case in cases_of(model) if case.get("tools")}
    assert set(REFUSED) <= set(cases)
    for key, refused in REFUSED.items():
        assert [refused.at is not None, refused.cut, refused.request is not None].count(True) >= 1, key
        assert refused.at is None or not refused.cut, key
        assert bool(refused.request) == bool(refused.without), key
        assert refused.repaired == () or refused.at is not None, key
        assert refused.why.startswith(("not well-formed", "restriction: ")), key
    # the counts README.md ("Constraining output") gives: 46 templates with a grammar, 125 recorded cases
    # with tools of theirs, 29 of them refused (24 not well-formed, 5 restrictions)
    faults = [key for key, refused in REFUSED.items() if refused.why.startswith("not well-formed")]
    assert (len(GRAMMAR_MODELS), len(cases), len(REFUSED), len(faults)) == (46, 125, 29, 24)
