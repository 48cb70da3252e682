"""Mutants of the bundled templates, for the mutation fuzzer (tests/differential/test_mutation_fuzz.py).

A mutant is a bundled response template with one to three random edits: a value replaced or its type
swapped, a key deleted or duplicated under another name, a string or regex perturbed with the
characters and constructs that break parsers, a placeholder changed, a value nested deeper. Each
mutant is derived from its number alone (`mutant(n)`), so a failure is reproduced by its number.
"""

from __future__ import annotations

import copy
import json
import random
from dataclasses import dataclass, field
from typing import Any

from tests.support.paths import DATA
from tests.support.paths import TEMPLATES as TEMPLATES_DIR

TEMPLATES = {
    path.stem: json.loads(path.read_text(encoding="utf-8"))["response_template"]
    for path in sorted(TEMPLATES_DIR.glob("*.json"))
}
CASES = {
    model: json.loads(path.read_text(encoding="utf-8")) if (path := DATA / model / "cases.json").exists() else []
    for model in TEMPLATES
}

KEYS = [
    "open", "open_pattern", "close", "close_pattern", "content", "content_args", "repeats", "join", "optional",
    "transform", "transform_each", "version", "defaults", "fields", "start_anchor", "start_anchor_pattern",
    "strip", "unquoted_keys", "string_delims", "allow_non_json", "tag_pattern", "value_parser", "merge_duplicates",
    "line_sep", "kv_sep", "name", "args", "unknown_key",
]  # fmt: skip
CONTENT_NAMES = ["text", "int", "float", "bool", "json", "xml-inline", "kv-lines", "python-call-list", "yaml", ""]
TEXT_PIECES = [
    "<", ">", "/", "|", "\n", " ", "\\", '"', "'", "{", "}", "[", "]", "(", ")", ":", ",", "=", "é", "\u2028",
    "\x00", "<think>", "</think>", "<tool_call>", "{content}", "{name}", "\\n", "\\s*", "x",
]  # fmt: skip
REGEX_PIECES = [
    "(?P<extra>x)?", "(?<=a)", "(?<!b)", "\\b", "\\B", "(?i)", "(?s)", "a*+", "(?>a)", "\\p{L}", "[[:alpha:]]",
    "\\d", "\\w+", "\\s*", "$", "^", "|", "(", ")", ".*?", "{2}", "\\Z", "\\A", "(?=x)", "(?!x)", "\\1",
    "(?P=name)", "\\X", "\\G", "(?P<name>\\w+)", "[^>]+", "\\\\", "\\u00e9", "\\N{BULLET}", "(a+)+", "(?#c)",
    "[\\w-]", "\\h", "(?|a|b)", "(?V1)", "\\K", "x{,3}",
]  # fmt: skip
PLACEHOLDERS = [
    "{content}",
    "{name}",
    "{content.x}",
    "{unknown}",
    "a {content} b",
    "{content.function}",
    "{}",
    "{a.b.c}",
]


@dataclass
class Mutant:
    number: int
    model: str
    template: dict[str, Any]
    edits: list[str] = field(default_factory=list)  # what was done, for the failure report

    def streams(self) -> list[tuple[str, str]]:
        """(prefix, text) pairs to parse: the model's recorded outputs, and one built from the mutant's literals."""
        chosen = [(c.get("prefix", ""), c["text"][:300]) for c in CASES[self.model][:2]]
        pieces = []
        for spec in (self.template.get("fields") or {}).values() if isinstance(self.template, dict) else []:
            if isinstance(spec, dict):
                opens, closes = _literals(spec.get("open")), _literals(spec.get("close"))
                pieces.append("".join(opens[:1]) + ' body {"a": 1} 2 ' + "".join(closes[:1]))
        chosen.append(("", "lead " + "".join(pieces) + " tail"))
        return chosen


def _literals(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def mutant(number: int) -> Mutant:
    rnd = random.Random(f"rtcompile mutant {number}")
    model = rnd.choice(sorted(TEMPLATES))
    made = Mutant(number, model, copy.deepcopy(TEMPLATES[model]))
    for _ in range(rnd.choice([1, 1, 2, 3])):
        _mutate(rnd, made)
    return made


def _locations(tree: Any) -> list[tuple[Any, Any, tuple[Any, ...]]]:
    """Every (container, key or index, path) in the tree."""
    found = []
    pending: list[tuple[Any, tuple[Any, ...]]] = [(tree, ())]
    while pending:
        node, path = pending.pop()
        members = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in members:
            found.append((node, key, (*path, key)))
            pending.append((value, (*path, key)))
    return found


def _mutate(rnd: random.Random, made: Mutant) -> None:
    locations = _locations(made.template)
    if not locations:
        made.template = {"fields": {}}
        return
    parent, key, path = rnd.choice(locations)
    value = parent[key]
    operation = rnd.choice(
        ["replace", "delete", "duplicate", "retype", "string", "regex", "placeholder", "deepen", "content"]
    )
    made.edits.append(f"{operation} at {list(path)}")
    if operation == "replace":
        parent[key] = _random_value(rnd)
    elif operation == "delete":
        del parent[key]
    elif operation == "duplicate":
        if isinstance(parent, dict):
            parent[rnd.choice([*KEYS, f"{key}_copy"])] = copy.deepcopy(value)
        else:
            parent.insert(key, copy.deepcopy(value))
    elif operation == "retype":
        parent[key] = _retyped(rnd, value)
    elif operation == "string" and isinstance(value, str):
        parent[key] = _spliced(rnd, value, TEXT_PIECES)
    elif operation == "regex" and isinstance(value, str):
        parent[key] = _spliced(rnd, value, REGEX_PIECES)
    elif operation == "placeholder":
        parent[key] = rnd.choice(PLACEHOLDERS)
    elif operation == "deepen":
        for _ in range(rnd.randint(1, 3)):
            value = rnd.choice([[value], {"x": value}, {"nested": value, "content": "{content}"}])
        parent[key] = value
    elif operation == "content":
        fields = made.template.get("fields")
        if isinstance(fields, dict) and fields:
            spec = fields[rnd.choice(sorted(fields, key=str))]
            if isinstance(spec, dict):
                spec["content"] = rnd.choice(CONTENT_NAMES)


def _random_value(rnd: random.Random) -> Any:
    return rnd.choice(
        [
            "", "x", "<t>", "\n", "{content}", "(?P<name>\\w+)", 0, 1, -1, 2.5, True, False, None, [], {},
            ["<a>", "<b>"], {"name": "json"}, {"tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</\\w+>"}, [["'", "'"]],
            [1, 2],
        ]
    )  # fmt: skip


def _retyped(rnd: random.Random, value: Any) -> Any:
    if isinstance(value, str):
        return rnd.choice([[value], {value: value}, len(value), value == "", None])
    if isinstance(value, bool):
        return rnd.choice([int(value), str(value).lower(), [value]])
    if isinstance(value, (int, float)):
        return rnd.choice([str(value), [value], bool(value), float(value)])
    if isinstance(value, list):
        return rnd.choice([value[0] if value else "", {str(i): v for i, v in enumerate(value)}, len(value)])
    if isinstance(value, dict):
        return rnd.choice([list(value.values()), list(value), json.dumps(value)])
    return rnd.choice(["null", [], {}])


def _spliced(rnd: random.Random, text: str, pieces: list[str]) -> str:
    at = rnd.randint(0, len(text))
    if text and rnd.random() < 0.3:
        return text[:at] + text[at + 1 :]  # delete a character
    return text[:at] + rnd.choice(pieces) + text[at:]
