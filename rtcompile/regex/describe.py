"""Regex parts written back as a reader would write them (``.*``, ``\\s+``, ``[^>]*``): how warnings
name the repeats they are about (`rtcompile.regex.backtracking`, `rtcompile.regex.ambiguity`)."""

from __future__ import annotations

from typing import Final

from rtcompile.regex.ast import Chars, Concat, Group, Repeat
from rtcompile.regex.charsets import ALL, TABLES, complement

_CLASS_NAMES: Final = {TABLES["s"]: r"\s", TABLES["w"]: r"\w", TABLES["d"]: r"\d", ALL: "."}
_CLASS_NAMES_NEGATED: Final = {complement(ranges): name.upper() for ranges, name in list(_CLASS_NAMES.items())[:3]}


def describe_repeat(repeat: Repeat) -> str:
    """`repeat` as a pattern: its character or class (``(...)`` for anything longer) and quantifier."""
    body = repeat.body
    while isinstance(body, Group) or (isinstance(body, Concat) and len(body.items) == 1):
        body = body.body if isinstance(body, Group) else body.items[0]
    text = _describe_chars(body) if isinstance(body, Chars) else "(...)"
    quantifier = {0: "*", 1: "+"}.get(repeat.min, f"{{{repeat.min},}}")
    return text + quantifier + ("?" if repeat.lazy else "")


def _describe_chars(chars: Chars) -> str:
    named = _CLASS_NAMES.get(chars.ranges) or _CLASS_NAMES_NEGATED.get(chars.ranges)
    if named is not None:
        return named
    if chars.kind == "literal" and chars.literal is not None:
        return _escaped(chars.literal)
    if chars.kind == "negated_literal" and chars.literal is not None:
        return f"[^{_escaped(chars.literal)}]"
    if len(chars.ranges) <= 4:
        spelled = (
            _escaped(lo) + ("" if lo == hi else ("" if hi == lo + 1 else "-") + _escaped(hi)) for lo, hi in chars.ranges
        )
        return "[" + "".join(spelled) + "]"
    return "[...]"


def _escaped(cp: int) -> str:
    if chr(cp) in "\\^$.|?*+()[]{}-":
        return "\\" + chr(cp)
    if chr(cp).isprintable() and not chr(cp).isspace():
        return chr(cp)
    return {0x09: r"\t", 0x0A: r"\n", 0x0D: r"\r", 0x20: " "}.get(cp, f"\\x{{{cp:x}}}")
