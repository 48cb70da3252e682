"""Grammars run by execution: llguidance matchers over a byte-level tokenizer, random walks of their
token masks, and the checks every generated text must pass once parsed.

A walk generates a text the grammar admits: at each step it takes one of the bytes the mask allows,
now and then pushing a *hint* (a delimiter of the template, a tool name, a key, a JSON fragment) as
far as the grammar lets it, so that walks reach tool calls and region changes, not only free text.
"""

from __future__ import annotations

import functools
import json
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import llguidance
from llguidance.gbnf_to_lark import any_to_lark

from tests.support import structural_tag

EOS = 256


class _ByteTokenizer:
    """The 256 bytes, one token each, and an end token."""

    eos_token_id = EOS
    bos_token_id = None
    tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
    special_token_ids = [EOS]

    def __call__(self, text: str | bytes) -> list[int]:
        return list(text.encode() if isinstance(text, str) else text)


TOKENIZER = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()), slices=[])


def compiled(grammar: str, format: str) -> str:
    """The grammar as llguidance takes it: Lark as it is, GBNF through llguidance's converter, a
    structural tag through `structural_to_llguidance`."""
    if format == "gbnf":
        return str(llguidance.LLMatcher.grammar_from_lark(gbnf_to_lark(grammar)))
    if format == "structural-tag":
        return structural_to_llguidance(json.loads(grammar))
    return str(llguidance.LLMatcher.grammar_from_lark(grammar))


@functools.lru_cache(maxsize=4096)
def gbnf_to_lark(grammar: str) -> str:
    """llguidance's GBNF converter, around its one slip: it strips the leading zeros of a \\uXXXX
    escape (\\u0660 becomes \\u660, which its regex reader refuses), so such characters go in raw
    (llama.cpp reads either; none of U+0100..U+0FFF is special to GBNF)."""
    raw = re.sub(r"\\u0([0-9A-F]{3})", lambda m: chr(int(m.group(1), 16)), grammar)
    return str(any_to_lark(raw))


def matcher(grammar: str, format: str = "lark") -> llguidance.LLMatcher:
    # A grammar llguidance refuses gives a matcher in its error state (checked here rather than with
    # `validate_grammar`, which compiles the grammar a second time: a sixth of the walks' time).
    m = llguidance.LLMatcher(TOKENIZER, compiled(grammar, format), log_level=0)
    assert not m.is_error(), m.get_error()
    return m


def accepts(grammar: str, text: str, format: str = "lark") -> bool:
    return accepted(grammar, [text], format) == [text]


def accepted(grammar: str, texts: Iterable[str], format: str = "lark") -> list[str]:
    """The texts the grammar accepts whole (one matcher, copied for each text)."""
    fresh = matcher(grammar, format)
    out = []
    for text in texts:
        m = fresh.deep_copy()
        if m.consume_tokens(list(text.encode())) and m.is_accepting():
            out.append(text)
    return out


# The bits set in each byte value, lowest first: a mask is read a byte at a time, not a bit at a time
# (the walks read one per generated character: it was a fifth of their time).
_BITS = [[bit for bit in range(8) if value >> bit & 1] for value in range(256)]


def _allowed(m: llguidance.LLMatcher) -> list[int]:
    """The tokens (bytes, and EOS) the matcher allows next, in order."""
    mask = m.compute_bitmask()
    allowed = [8 * index + bit for index, value in enumerate(mask[: EOS // 8 + 1]) if value for bit in _BITS[value]]
    return allowed if not allowed or allowed[-1] <= EOS else [t for t in allowed if t <= EOS]


def walk(m: llguidance.LLMatcher, rng: random.Random, hints: Sequence[bytes], *, length: int = 160) -> bytes | None:
    """A random text `m` accepts (None if the walk did not finish within its budget)."""
    out = bytearray()
    for _ in range(length * 8):
        allowed = _allowed(m)
        assert not m.is_error(), m.get_error()[:300]  # a serving stack would stop the model here
        if not allowed:
            return None
        if EOS in allowed and (len(out) >= length or rng.random() < 0.01):
            return bytes(out)
        if hints and rng.random() < (0.6 if len(out) >= length else 0.3):
            hint = rng.choice(hints)
            if hint[0] in allowed:
                for byte in hint:
                    if byte not in _allowed(m):
                        break
                    assert m.consume_token(byte), m.get_error()[:300]
                    out.append(byte)
                continue
        choices = [t for t in allowed if t != EOS]
        if not choices:
            return bytes(out)
        plain = [t for t in choices if 32 <= t < 127 or t == 10]
        token = rng.choice(plain if plain and rng.random() < 0.9 else choices)
        assert m.consume_token(token), m.get_error()[:300]
        out.append(token)
    return None


# --------------------------------------------------------------------------- tools


def tool(name: str, properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": list(required)}
    return {"type": "function", "function": {"name": name, "description": name, "parameters": parameters}}


TOOL_SETS: dict[str, list[dict[str, Any]]] = {
    "weather": [
        tool(
            "get_weather",
            {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            ["city"],
        ),
        tool("get_time", {}),
    ],
    "nested": [
        tool(
            "create_event",
            {
                "title": {"type": "string"},
                "when": {
                    "type": "object",
                    "properties": {"date": {"type": "string"}, "all_day": {"type": "boolean"}},
                    "required": ["date"],
                },
                "attendees": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
                "priority": {"type": "number"},
                "note": {"type": ["string", "null"]},
            },
            ["title", "when"],
        ),
    ],
    "scalars": [
        tool("set_level", {"level": {"type": "integer"}, "on": {"type": "boolean"}}, ["level", "on"]),
        tool("choose", {"option": {"enum": ["a", "b", 3]}}, ["option"]),
        tool("noop", {}),
    ],
}


# --------------------------------------------------------------------------- checks


def valid(value: Any, schema: Any) -> bool:
    """JSON Schema validation, for the keywords tools here use (annotations ignored)."""
    if not isinstance(schema, dict):
        return True
    if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
        return False
    if "const" in schema and not _same(value, schema["const"]):
        return False
    if "anyOf" in schema and not any(valid(value, s) for s in schema["anyOf"]):
        return False
    declared = schema.get("type")
    if declared is not None:
        types = [declared] if isinstance(declared, str) else list(declared)
        if schema.get("nullable"):
            types.append("null")
        if not any(_is(value, t) for t in types):
            return False
    if isinstance(value, dict):
        props = schema.get("properties", {})
        if any(key not in value for key in schema.get("required", [])):
            return False
        if schema.get("additionalProperties") is False and any(key not in props for key in value):
            return False
        return all(valid(v, props[k]) for k, v in value.items() if k in props)
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            return False
        return all(valid(item, schema.get("items", {})) for item in value)
    return True


def _same(value: Any, option: Any) -> bool:
    return (
        type(value) is type(option)
        and value == option
        or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == option)
    )


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or isinstance(value, float) and value.is_integer()
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    python = {"string": str, "boolean": bool, "null": type(None), "object": dict, "array": list}
    return isinstance(value, python[kind])


def generate_and_check(
    matcher: llguidance.LLMatcher,
    rng: random.Random,
    hints: Sequence[bytes],
    parse: Callable[[str], Any],
    field: str | None,
    tools: list[dict[str, Any]],
    tool_choice: Any,
    parallel: bool,
    tally: Tally,
    *,
    length: int = 160,
) -> tuple[str, list[str]] | None:
    """One walk of `matcher` (which it consumes), the text parsed with `parse` and its calls checked:
    the text and what is wrong with its calls ([] when nothing), counted in `tally`; None (counted too)
    when the walk did not finish."""
    out = walk(matcher, rng, hints, length=length)
    if out is None:
        tally.unfinished += 1
        return None
    text = out.decode("utf-8")
    tally.strings += 1
    message = parse(text)
    assert isinstance(message, dict)
    calls = calls_of(message, field)
    tally.calls += len(calls)
    return text, check_calls(calls, tools, tool_choice, parallel)


def calls_of(message: dict[str, Any], field: str | None) -> list[Any]:
    """The tool calls a parsed message holds, whatever the field's shape (one call, or a list)."""
    value = message.get(field) if field is not None else None
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def check_calls(calls: list[Any], tools: Iterable[dict[str, Any]], tool_choice: Any, parallel: bool) -> list[str]:
    """What is wrong with the calls of a message generated under the grammar ([] when nothing)."""
    schemas = {t["function"]["name"]: t["function"].get("parameters") or {} for t in tools}
    problems = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or call.get("type") != "function":
            problems.append(f"not a call: {call!r}")
            continue
        name, arguments = function.get("name"), function.get("arguments")
        if name not in schemas:
            problems.append(f"undeclared tool {name!r}")
        elif not isinstance(arguments, dict) or not valid(arguments, schemas[name]):
            problems.append(f"arguments of {name!r} do not fit its schema: {arguments!r}")
    if tool_choice == "none" and calls:
        problems.append("a call under tool_choice='none'")
    if tool_choice not in ("none", "auto") and not calls:
        problems.append(f"no call under tool_choice={tool_choice!r}")
    if tool_choice not in ("none", "auto", "required") and any(
        isinstance(c, dict) and c.get("function", {}).get("name") != tool_choice for c in calls
    ):
        problems.append(f"a call to another tool than {tool_choice!r}")
    if not parallel and len(calls) > 1:
        problems.append(f"{len(calls)} calls without parallel_tool_calls")
    return problems


@dataclass
class Tally:
    """Counts for a run of walks, reported at the end of a test."""

    grammars: int = 0
    strings: int = 0
    calls: int = 0
    unfinished: int = 0
    refusals: dict[str, int] = field(default_factory=dict)

    def refused(self, reason: str) -> None:
        self.refusals[reason] = self.refusals.get(reason, 0) + 1

    def __str__(self) -> str:
        refusals = ", ".join(f"{n} x {reason}" for reason, n in sorted(self.refusals.items(), key=lambda r: -r[1]))
        return (
            f"{self.grammars} grammars, {self.strings} strings generated, {self.calls} calls checked, "
            f"{self.unfinished} walks unfinished; refusals: {refusals or 'none'}"
        )


# --------------------------------------------------------------------------- hints


def sample(node: Any, rng: random.Random, slots: dict[str, str]) -> str:
    """A random text of a skeleton regex (slots filled from `slots`, END left out)."""
    kind = node[0]
    if kind == "lit":
        return str(node[1])
    if kind == "set":
        assert node[1], "a delimiter the grammar can never write"
        lo, hi = rng.choice(node[1])
        if lo <= 127:  # prefer readable characters
            hi = min(hi, 127)
        return chr(rng.randint(lo, hi))
    if kind == "seq":
        return "".join(sample(item, rng, slots) for item in node[1])
    if kind == "alt":
        return sample(rng.choice(node[1]), rng, slots)
    if kind == "rep":
        high = node[2] + 2 if node[3] is None else node[3]
        return "".join(sample(node[1], rng, slots) for _ in range(rng.randint(node[2], min(high, node[2] + 2))))
    if kind == "slot":
        return slots.get(node[1], "x")
    return ""


def hints(skeleton: dict[str, Any], tools: Sequence[dict[str, Any]], rng: random.Random) -> list[bytes]:
    """Texts worth pushing during a walk: delimiters, tool names, keys, values, JSON punctuation."""
    names = [t["function"]["name"] for t in tools] or ["x"]
    out: list[str] = ['{"', '": ', '"}', "}", "]", ", ", '"', "\n", "1", "true", "null"]
    for state in skeleton.get("states", []):
        for exit_ in state["exits"]:
            for variant in exit_["variants"]:
                for name in names:
                    text = sample(variant["written"], rng, {"name": name})
                    out += [text, " " + text, "\n" + text]  # after a space, the text before may end
    for t in tools:
        function = t["function"]
        out.append(function["name"])
        out.append(json.dumps(function["name"]))
        for key, schema in (function.get("parameters") or {}).get("properties", {}).items():
            out += [key, json.dumps(key), f"{key}=", f'"{key}": ']
            out += [json.dumps(v) for v in schema.get("enum", [])]
    return [text.encode() for text in out if text]


# --------------------------------------------------------------------------- structural tags


def structural_to_llguidance(tag: dict[str, Any]) -> str:
    """An xgrammar structural tag as an llguidance grammar (JSON, one Lark grammar per `grammar`
    node, referenced as @gN): the test's own reading of xgrammar's documented format (xgrammar requires
    torch, and is not installed), so that structural tags are checked by execution like the other formats.
    Raises AssertionError for a tag that is not of the documented shape (`structural_tag.problems`),
    or of a kind the grammar builder never writes."""
    assert structural_tag.problems(tag) == [], structural_tag.problems(tag)
    rules: list[str] = []  # a rule per node: one expression would nest too deep for llguidance
    grammars: list[dict[str, str]] = []

    def rule(body: str) -> str:
        rules.append(f"r{len(rules)}: {body}")
        return f"r{len(rules) - 1}"

    def convert(node: dict[str, Any]) -> str:
        kind = node["type"]
        if kind == "const_string":
            return json.dumps(node["value"]) if node["value"] else '""'
        if kind == "json_schema":
            return rule("%json " + json.dumps(node["json_schema"]))
        if kind == "grammar":
            name = f"g{len(grammars)}"
            grammars.append({"name": name, "lark_grammar": gbnf_to_lark(node["grammar"])})
            return f"@{name}"
        if kind in ("sequence", "or"):
            assert node["elements"], node
            items = [convert(e) for e in node["elements"]]
            return rule((" " if kind == "sequence" else " | ").join(items))
        quantifiers = {"star": "*", "plus": "+", "optional": "?"}
        if kind in quantifiers:
            return rule(f"({convert(node['content'])}){quantifiers[kind]}")
        if kind == "repeat":
            high = "" if node["max"] == -1 else str(node["max"])
            return rule(f"({convert(node['content'])}){{{node['min']},{high}}}")
        raise AssertionError(f"a structural-tag format the grammar builder does not write: {kind!r}")

    start = convert(tag["format"])
    main = "\n".join(["%llguidance {}", f"start: {start}", *rules]) + "\n"
    return json.dumps({"grammars": [{"name": "main", "lark_grammar": main}, *grammars]})
