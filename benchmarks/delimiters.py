"""What kind of delimiters a template has, read from its JSON (templates/<model>.json, `response_template`).

A field's delimiters are literal (`open`, `close`: strings or lists of strings) or regular expressions
(`open_pattern`, `close_pattern`); an xml-inline content parser has a `tag_pattern` (in `content_args`); a
start anchor is `start_anchor` or `start_anchor_pattern`. The start anchor only cuts the prompt (`prefix`),
never the streamed output, so it does not count for "literal-delimited".

* literal-delimited: no key ending in `_pattern` anywhere under `fields` (delimiters and content
  parsers alike): every delimiter the stream is scanned for is a literal;
* the delimiter kind: which of those pattern keys a template has, e.g. "regex open + close + tag_pattern";
  the subsets of templates measured where a stage cannot run on all of them take one template per kind.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from benchmarks.config import TEMPLATES

LITERAL = "literal"


def response_template(model: str) -> dict[str, Any]:
    template: dict[str, Any] = json.loads((TEMPLATES / f"{model}.json").read_text(encoding="utf-8"))[
        "response_template"
    ]
    return template


def _pattern_keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key.endswith("_pattern"):
                yield key
            yield from _pattern_keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _pattern_keys(inner)


def field_pattern_keys(template: dict[str, Any]) -> set[str]:
    """The `*_pattern` keys anywhere under `fields` (open_pattern, close_pattern, tag_pattern)."""
    return set(_pattern_keys(template.get("fields", {})))


def is_literal_delimited(template: dict[str, Any]) -> bool:
    return not field_pattern_keys(template)


def delimiter_kind(template: dict[str, Any]) -> str:
    """`literal`, or the regex keys the template has: `regex open + close + tag_pattern`, `regex start anchor + ...`."""
    keys = field_pattern_keys(template)
    parts = []
    if "start_anchor_pattern" in template:
        parts.append("start anchor")
    parts += [name for name in ("open", "close") if f"{name}_pattern" in keys]
    parts += sorted(k for k in keys if k not in ("open_pattern", "close_pattern"))
    if not keys:
        return LITERAL if not parts else "literal fields, regex " + " + ".join(parts)
    return "regex " + " + ".join(parts)


def one_per_kind(kinds: dict[str, str], cost: dict[str, float], always: tuple[str, ...] = ()) -> list[str]:
    """One template per delimiter kind: the one with the highest `cost` (the worst case of its kind), plus
    those in `always` that are measured; sorted by name."""
    chosen = {m for m in always if m in kinds}
    for kind in set(kinds.values()):
        of_kind = [m for m, k in kinds.items() if k == kind]
        chosen.add(max(of_kind, key=lambda m: (cost.get(m, 0.0), m)))
    return sorted(chosen)
