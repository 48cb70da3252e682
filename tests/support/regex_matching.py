"""Random patterns and texts for comparing our stdlib translation with `regex`, and the two partial
searches side by side: `regex`'s own (`regex_partial`) and the translation's (`our_partial`).

Patterns come from a grammar covering the supported subset; texts are biased towards the pattern's own
characters plus Unicode traps (combining marks, superscript and Arabic-Indic digits, U+001C-U+001F,
U+2028, case-folding oddities).
"""

from __future__ import annotations

import re
from typing import Any

import regex
from hypothesis import assume
from hypothesis import strategies as st

from rtcompile.regex.translate import StdlibRegex, UnsupportedRegex, translate
from rtcompile.runtime.partial import partial_search

LITERALS = [
    "a", "b", "k", "K", "s", "x", "_", "-", "1", " ", "#", "<", ">", "/", "=", '"', "{", "}",
    "\\.", "\\|", "\\*", "\\(", "\\)", "\\[", "\\]", "\\{", "\\\\", "\\^", "\\$", "\\?", "\\+",
    "\\n", "\\t", "\\x41", "\\u00e9", "\\0", "\\101", "\\N{LATIN SMALL LETTER A}",
    "é", "e\u0301", "\u0301", "\u00b2", "\u0663", "\u2028", "\u001c", "\u001f", "\\u001e", "\u00a0",
    "ß", "\u1e9e", "\u0130", "\u0131", "\u017f", "\u212a", "\U0001f600",
    "<think>", "</think>", "tool_call", "assistant",
]  # fmt: skip
CLASSES = [
    "\\w", "\\W", "\\d", "\\D", "\\s", "\\S", ".", "[ab]", "[^ab]", "[a-c]", "[^\\w]", "[\\d_]",
    "[^\\s\\d]", "[\\W\\d]", "[^\\S]", "[.]", "[-a]", "[a\\-z]", "[\\]x]", "[^x\\n]", "[\u00b2\u0663]",
    "[A-Z]", "[k]", "[^k]", "[\\s\\S]", "[^\\s\\S]", "[^<]", "[\\w-]", "[]a]", "[^]a]", "[\\b]",
    "[\\x41-\\x5a]", "[\u00c0-\u00ff]", "[[]", "[\\u2028\\n]", "[\\w\\u0301]",
]  # fmt: skip
ASSERTIONS = ["^", "$", "\\A", "\\Z", "\\z", "\\b", "\\B"]
LOOKBEHINDS = ["(?<=a)", "(?<!a)", "(?<=\\w)", "(?<!\\s)", "(?<=ab|xy)", "(?<=[<>])", "(?<!\\d.)"]
LOOKAHEADS = ["(?=a)", "(?!b)", "(?=\\s)", "(?!\\w\\w)", "(?=ab|cd)", "(?=</)", "(?!\\n)", "(?=\\Z)"]
QUANTIFIERS = ["*", "+", "?", "{2}", "{1,2}", "{0,3}", "{2,}", "{,2}"]
GROUP_OPENERS = ["(", "(?:", "(?i:", "(?-i:", "(?s:", "(?-s:"]
TRAPS = [
    "\n", "\u0301", "\u00b2", "\u0663", "\u2028", "\u001c", "\u001d", "\u001e", "\u001f", " ", "\u00a0",
    "k", "K", "\u212a", "s", "S", "\u017f", "ß", "\u1e9e", "i", "I", "\u0130", "\u0131", "é", "x", "<",
]  # fmt: skip
FRAGMENTS = ["<think>", "</think>", "</th", "<to", "<tool_call>", "assistant", "assist", "\n\n", "  "]


@st.composite
def patterns(draw: st.DrawFn, depth: int = 0) -> str:
    """A random pattern: a sequence or alternation of items, optionally ending in a lookahead."""

    def item() -> str:
        kind = draw(st.sampled_from(["lit", "lit", "lit", "class", "class", "assert", "group", "behind"]))
        if kind == "group" and depth < 2:
            opener = draw(st.sampled_from([*GROUP_OPENERS, f"(?P<g{draw(st.integers(0, 99))}x>"]))
            return opener + draw(patterns(depth + 1)) + ")"
        if kind == "class":
            return draw(st.sampled_from(CLASSES))
        if kind == "assert":
            return draw(st.sampled_from(ASSERTIONS))
        if kind == "behind":
            return draw(st.sampled_from(LOOKBEHINDS))
        return draw(st.sampled_from(LITERALS))

    def quantified() -> str:
        text = item()
        if text in ASSERTIONS or text in LOOKBEHINDS or draw(st.integers(0, 9)) < 6:
            return text
        lazy = "?" if draw(st.integers(0, 4)) == 0 else ""
        return text + draw(st.sampled_from(QUANTIFIERS)) + lazy

    def sequence() -> str:
        return "".join(quantified() for _ in range(draw(st.integers(0 if depth else 1, 4))))

    pattern = "|".join(sequence() for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))))
    if depth == 0:
        ending = draw(st.sampled_from(["", "", "", "lookahead", "lazy_dot", "lead"]))
        if ending == "lookahead":
            pattern = f"(?:{pattern}){draw(st.sampled_from(LOOKAHEADS))}"
        elif ending == "lazy_dot":
            pattern = f"{pattern}.*?{draw(st.sampled_from(LITERALS))}"
        elif ending == "lead":
            pattern = draw(st.sampled_from(["\\s*", "\\s+", "[^<]*", ".*?"])) + pattern
        pattern = draw(st.sampled_from(["", "", "", "", "(?i)", "(?m)"])) + pattern
    return pattern


def texts_for(pattern: str) -> st.SearchStrategy[str]:
    own = sorted({ch for ch in pattern if ch not in "\\()[]?*+{}|^$"}) or ["a"]
    piece = st.one_of(st.sampled_from(own), st.sampled_from(TRAPS), st.sampled_from(FRAGMENTS))
    return st.lists(piece, max_size=10).map("".join)


def translated(pattern: str) -> tuple[Any, StdlibRegex]:
    """Compile with `regex` and translate; patterns `regex` rejects or we refuse are skipped."""
    try:
        compiled = regex.compile(pattern, regex.DOTALL)
    except regex.error:
        assume(False)
    try:
        result = translate(pattern)
    except UnsupportedRegex:
        assume(False)
    return compiled, result


def summary(match: Any) -> tuple[Any, ...] | None:
    return None if match is None else (match.span(), match.groups(), match.groupdict())


def regex_partial(compiled: Any, text: str, pos: int) -> tuple[Any, ...] | None:
    """`regex`'s partial search as (kind, details), with its one known malformed answer removed.

    For a pattern that starts with a DOTALL ``.``, a partial search starting at ``len(text)`` reads an
    uninitialised position inside `regex` and can return a "full" match the ordinary search does not
    find (sometimes with ``end < start``). Such results are reported as no match.
    """
    match = compiled.search(text, pos, partial=True)
    if match is None:
        return None
    if match.partial:
        return ("partial", match.start())
    if compiled.search(text, pos) is None:
        return None
    return ("full", match.span(), match.groups())


def our_partial(result: StdlibRegex, text: str, pos: int) -> tuple[Any, ...] | None:
    full = re.compile(result.full, re.DOTALL)
    prefix = re.compile(result.prefix, re.DOTALL)
    match, start = partial_search(full, prefix, text, pos)
    if match is not None:
        return ("full", match.span(), match.groups())
    return None if start is None else ("partial", start)


def assert_same_partial(
    ours: tuple[Any, ...] | None, theirs: tuple[Any, ...] | None, end: int, context: object = None
) -> None:
    """Exact equality, except that "nothing before the end" has two equivalent spellings.

    Whether `regex` says "partial at len(text)" or "no match" when nothing earlier is pending depends
    on its search prefilters (and, in rare cases, on search-position caches); a hold position of
    ``len(text)`` holds nothing back, so the reference parser cannot tell the two apart. `context`
    (the pattern, the text...) is shown when they differ.
    """
    nothing = (None, ("partial", end))
    if ours in nothing and theirs in nothing:
        return
    assert ours == theirs, context
