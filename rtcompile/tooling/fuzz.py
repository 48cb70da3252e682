"""Random model output for a template, for `rtcompile verify` and `rtcompile lint`.

Streams are made mostly of what makes parsers go wrong: the template's own delimiters, their
truncations (near misses that must be held back and then released), bodies that parse, Unicode
that `regex` and `re` classify differently, and plain text. Regex delimiters are instantiated
by walking the pattern's tree (`rtcompile.regex.parser`) and drawing a string, kept when the
reference's `regex` matches it.
"""

from __future__ import annotations

import functools
import random

import regex

from rtcompile.ir import Template
from rtcompile.regex.ast import (
    Alternation,
    Atomic,
    Backreference,
    BranchReset,
    Chars,
    Concat,
    Conditional,
    Fuzzy,
    Group,
    Node,
    Repeat,
)
from rtcompile.regex.charsets import Ranges, contains, size
from rtcompile.regex.parser import parse_regex

UNICODE_TRAPS = [
    "\u0301",
    "\u00b2",
    "\u0663",
    "\u001c",
    "\u2028",
    "\u3000",
    "\u00a0",
    "é",
    "日本",
    "\U0001f600",
    "\x00",
]
PLAIN = ["hello", " ", "\n", "x", "42", "3.5", "true", "{", "}", '"', ":", ",", "a-b", "<", ">", "/", "|", "\t"]
BODIES = [
    '{"name": "get_weather", "arguments": {"city": "Paris"}}',
    '{"name": "f", "parameters": {"a": 1}}',
    "[1, 2]",
    "[get(a=1, b='x')]",
    "k: v\nn: 2",
    "<parameter=city>London</parameter>",
    '{city: "v"}',
    " 12 ",
    "True",
]
MAX_REPEAT = 3


# Characters drawn for `.` and, when they belong to it, for large classes such as \w or [^<].
ANY_CHARS = "ab \n<"
COMMON_CHARS = "ab _.-éZ9<>\n"
LARGE_CLASS = 512


_EXAMPLE_TIMEOUT = 1.0  # seconds `regex` may take to check one drawn example


def delimiter_examples(pattern: str, rng: random.Random, count: int = 4) -> list[str]:
    """Strings that the delimiter regex matches (as many as could be drawn in a few tries)."""
    try:
        tree = parse_regex(pattern).root
        compiled = regex.compile(pattern, regex.DOTALL)
    except (ValueError, RecursionError):
        return []
    found: list[str] = []
    for _ in range(count * 4):
        text = _Drawing(rng).draw(tree)
        try:
            # A hostile pattern (nested fuzzy constraints, say) can make `regex` run for minutes or
            # exhaust memory on one drawn text: that text is not an example, the next one may be.
            matched = compiled.fullmatch(text, timeout=_EXAMPLE_TIMEOUT) is not None
        except (TimeoutError, MemoryError):
            continue
        if matched and text not in found:
            found.append(text)
        if len(found) >= count:
            break
    return found


class _Drawing:
    """One random walk through a pattern's tree; remembers what each group captured, for backreferences."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.captured: dict[str, str] = {}

    def draw(self, node: Node) -> str:
        rng = self.rng
        if isinstance(node, Chars):
            return self.draw_char(node)
        if isinstance(node, Group):
            text = self.draw(node.body)
            self.captured[str(node.index)] = text
            if node.name is not None:
                self.captured[node.name] = text
            return text
        if isinstance(node, Concat):
            return "".join(self.draw(item) for item in node.items)
        if isinstance(node, (Alternation, BranchReset)):
            return self.draw(rng.choice(node.branches))
        if isinstance(node, Repeat):
            top = node.min + MAX_REPEAT if node.max is None else min(node.max, node.min + MAX_REPEAT)
            return "".join(self.draw(node.body) for _ in range(rng.randint(node.min, top)))
        if isinstance(node, (Atomic, Fuzzy)):
            return self.draw(node.body)
        if isinstance(node, Conditional):
            if isinstance(node.condition, str):
                return self.draw(node.yes if node.condition in self.captured else node.no)
            return self.draw(rng.choice((node.yes, node.no)))
        if isinstance(node, Backreference):
            return self.captured.get(node.group, "")
        return ""  # assertions, lookarounds and opaque constructs; the reference's fullmatch filters misses

    def draw_char(self, node: Chars) -> str:
        if node.kind == "literal" and node.literal is not None:
            if node.ignore_case and size(node.ranges) > 1:  # the written case, or now and then another
                variants = [chr(cp) for low, high in node.ranges for cp in range(low, high + 1)]
                return self.rng.choice([chr(node.literal), chr(node.literal), *variants])
            return chr(node.literal)
        if node.kind == "any":
            return self.rng.choice(ANY_CHARS)
        return self.rng.choice(_char_choices(node.ranges, self.rng))


def _char_choices(ranges: Ranges, rng: random.Random) -> list[str]:
    """Both ends and a random member of each range; for large classes, common characters they hold."""
    if not ranges:
        return [""]
    if size(ranges) > LARGE_CLASS:
        low, high = rng.choice(ranges)
        return [*_common_members(ranges), chr(rng.randint(low, high))]
    choices: list[str] = []
    for low, high in ranges:
        choices += [chr(low)] if low == high else [chr(low), chr(high), chr(rng.randint(low, high))]
    return choices


@functools.lru_cache(maxsize=256)
def _common_members(ranges: Ranges) -> tuple[str, ...]:
    """The common characters a large class holds (asked once per class: a class such as \\w has
    hundreds of ranges, and a long fuzz run draws from it thousands of times)."""
    return tuple(ch for ch in COMMON_CHARS if contains(ranges, ord(ch)))


def delimiter_texts(template: Template, rng: random.Random) -> list[str]:
    texts: list[str] = []
    for f in template.fields:
        for delimiter in (f.open, f.close):
            if delimiter is None:
                continue
            if delimiter.literals is not None:
                texts += delimiter.literals
            else:
                texts += delimiter_examples(delimiter.pattern, rng)
    return texts or ["<>"]


def random_stream(template: Template, rng: random.Random, delimiters: list[str], max_pieces: int = 14) -> str:
    pieces = []
    for _ in range(rng.randint(0, max_pieces)):
        kind = rng.random()
        if kind < 0.35:
            pieces.append(rng.choice(delimiters))
        elif kind < 0.5:
            d = rng.choice(delimiters)
            pieces.append(d[: rng.randint(1, max(1, len(d) - 1))])
        elif kind < 0.7:
            pieces.append(rng.choice(BODIES))
        elif kind < 0.8:
            pieces.append(rng.choice(UNICODE_TRAPS))
        else:
            pieces.append(rng.choice(PLAIN))
    return "".join(pieces)


def random_chunking(text: str, rng: random.Random) -> list[str]:
    """Token-like chunks of 1-6 characters, with the odd empty chunk and speculative-decoding burst."""
    chunks: list[str] = []
    i = 0
    while i < len(text):
        size = rng.choice([0, 1, 1, 2, 3, 4, 5, 6, 6, 20])
        chunks.append(text[i : i + size])
        i += size
    return chunks


def random_prefix(template: Template, rng: random.Random, delimiters: list[str]) -> str:
    anchors = list(template.start_anchor.literals or delimiter_examples(template.start_anchor.pattern, rng))
    anchor = rng.choice(anchors) if anchors else ""
    return rng.choice(["", anchor, f"history{anchor}old turn{anchor}", anchor + rng.choice(delimiters)])
