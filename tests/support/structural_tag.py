"""xgrammar's structural tag, as its documentation defines it: what `grammar(..., format="structural-tag")`
must write, checked without xgrammar (it requires torch, and triton on Linux: the tests do not install it).

The table below is read from xgrammar's own definition of the format (python/xgrammar/structural_tag.py,
the pydantic models behind `Grammar.from_structural_tag`, with the optional, plus, star, repeat, grammar
and regex formats): `{"type": "structural_tag", "format": F}`, where F is a discriminated union on
"type", each kind with its fields. xgrammar's models ignore a key they do not declare; here it is a
problem all the same (what was meant by it would be lost).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Check = Callable[[Any, str], list[str]]


def _string(value: Any, where: str) -> list[str]:
    return [] if isinstance(value, str) else [f"{where}: not a string"]


def _boolean(value: Any, where: str) -> list[str]:
    return [] if isinstance(value, bool) else [f"{where}: not a boolean"]


def _integer(value: Any, where: str) -> list[str]:
    return [] if isinstance(value, int) and not isinstance(value, bool) else [f"{where}: not an integer"]


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list):
        return [f"{where}: not a list"]
    return [p for i, item in enumerate(value) for p in _string(item, f"{where}[{i}]")]


def _schema(value: Any, where: str) -> list[str]:
    return [] if isinstance(value, (bool, dict)) else [f"{where}: not a JSON schema (an object or a boolean)"]


def _ebnf(value: Any, where: str) -> list[str]:
    """xgrammar reads a `grammar` format's text as EBNF whose start rule is `root`."""
    if not isinstance(value, str):
        return [f"{where}: not a string"]
    return [] if value.startswith("root ::= ") else [f"{where}: an EBNF grammar whose first rule is not root"]


def _ends(value: Any, where: str) -> list[str]:
    return _string(value, where) if not isinstance(value, list) else _strings(value, where)


def _format(value: Any, where: str) -> list[str]:
    return format_problems(value, where)


def _formats(value: Any, where: str) -> list[str]:
    if not isinstance(value, list):
        return [f"{where}: not a list"]
    return [p for i, item in enumerate(value) for p in format_problems(item, f"{where}[{i}]")]


def _tags(value: Any, where: str) -> list[str]:
    if not isinstance(value, list):
        return [f"{where}: not a list"]
    problems = [p for i, item in enumerate(value) for p in format_problems(item, f"{where}[{i}]")]
    kinds = [item.get("type") if isinstance(item, dict) else None for item in value]
    return problems + [f"{where}[{i}]: not a tag" for i, kind in enumerate(kinds) if kind != "tag"]


# type -> (required fields, optional fields), each field with its check
FORMATS: dict[str, tuple[dict[str, Check], dict[str, Check]]] = {
    "any_text": ({}, {"excludes": _strings}),
    "const_string": ({"value": _string}, {}),
    "json_schema": ({"json_schema": _schema}, {"style": _string}),
    "grammar": ({"grammar": _ebnf}, {}),
    "regex": ({"pattern": _string}, {"excludes": _strings}),
    "sequence": ({"elements": _formats}, {}),
    "or": ({"elements": _formats}, {}),
    "tag": ({"begin": _string, "content": _format, "end": _ends}, {}),
    "triggered_tags": (
        {"triggers": _strings, "tags": _tags},
        {"at_least_one": _boolean, "stop_after_first": _boolean, "excludes": _strings},
    ),
    "tags_with_separator": (
        {"tags": _tags, "separator": _string},
        {"at_least_one": _boolean, "stop_after_first": _boolean},
    ),
    "optional": ({"content": _format}, {}),
    "plus": ({"content": _format}, {}),
    "star": ({"content": _format}, {}),
    "repeat": ({"min": _integer, "max": _integer, "content": _format}, {}),
}


def problems(tag: Any) -> list[str]:
    """What keeps `tag` (parsed JSON) from being a structural tag as xgrammar documents it ([] if nothing)."""
    if not isinstance(tag, dict):
        return ["the structural tag is not an object"]
    found = [f"{key}: not a key of a structural tag" for key in tag if key not in ("type", "format")]
    if tag.get("type") != "structural_tag":
        found.append('type: not "structural_tag"')
    if "format" not in tag:
        return [*found, "format: missing"]
    return found + format_problems(tag["format"], "format")


def format_problems(node: Any, where: str) -> list[str]:
    """What keeps `node` from being one of the documented formats, each problem at its JSON path."""
    if not isinstance(node, dict):
        return [f"{where}: a format is an object"]
    kind = node.get("type")
    if kind not in FORMATS:
        return [f"{where}.type: {kind!r} is not a documented format"]
    required, optional = FORMATS[kind]
    found = [f"{where}.{key}: missing" for key in required if key not in node]
    found += [f"{where}.{key}: not a field of {kind}" for key in node if key not in (*required, *optional, "type")]
    for key, check in (*required.items(), *optional.items()):
        if key in node:
            found += check(node[key], f"{where}.{key}")
    if kind == "repeat" and not found and not (0 <= node["min"] and (node["max"] == -1 or node["min"] <= node["max"])):
        found.append(f"{where}: min {node['min']}, max {node['max']} (min at least 0, max -1 or at least min)")
    return found
