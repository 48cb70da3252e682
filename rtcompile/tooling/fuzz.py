"""Random model output for a template, for `rtcompile verify` and `rtcompile lint`.

Streams are made mostly of what makes parsers go wrong: the template's own delimiters, their
truncations (near misses that must be held back and then released), bodies that parse, Unicode
that `regex` and `re` classify differently, and plain text. Regex delimiters are instantiated
by walking the pattern's structure and drawing a matching string.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

from rtcompile.ir import Template
from rtcompile.regex.sre import sre_constants, sre_parse
from rtcompile.regex.translate import UnsupportedRegex, translate

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


def delimiter_examples(pattern: str, rng: random.Random, count: int = 4) -> list[str]:
    """Strings that the delimiter regex matches (as many as could be drawn in a few tries)."""
    try:
        compiled = re.compile(translate(pattern).full, re.DOTALL)
        tree = sre_parse.parse(compiled.pattern, re.DOTALL)
    except (UnsupportedRegex, ValueError, re.error):
        return []
    found: list[str] = []
    for _ in range(count * 4):
        text = "".join(_draw(tree, rng))
        if compiled.fullmatch(text) is not None and text not in found:
            found.append(text)
        if len(found) >= count:
            break
    return found


def _draw(items: Any, rng: random.Random) -> Iterator[str]:
    for op, arg in items:
        if op == sre_constants.LITERAL:
            yield chr(arg)
        elif op == sre_constants.ANY:
            yield rng.choice("ab \n<")
        elif op == sre_constants.IN:
            yield _draw_in(arg, rng)
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            low, high, body = arg
            top = min(high, low + MAX_REPEAT)
            for _ in range(rng.randint(low, max(low, top))):
                yield from _draw(body, rng)
        elif op == sre_constants.SUBPATTERN:
            yield from _draw(arg[-1], rng)
        elif op == sre_constants.BRANCH:
            yield from _draw(rng.choice(arg[1]), rng)
        # assertions, anchors and group references contribute nothing; the full match filters misses


def _draw_in(items: Any, rng: random.Random) -> str:
    choices: list[str] = []
    negated = False
    for op, arg in items:
        if op == sre_constants.NEGATE:
            negated = True
        elif op == sre_constants.LITERAL:
            choices.append(chr(arg))
        elif op == sre_constants.RANGE:
            low, high = arg
            choices += [chr(low), chr(high), chr(rng.randint(low, high))]
    if negated or not choices:
        return rng.choice("ab _.-éZ9")
    return rng.choice(choices)


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
