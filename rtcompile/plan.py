"""How much already-committed text a delimiter pattern can still look at.

The streaming engines drop committed text to stay linear, but a lookbehind or `\\b` at the scan
position inspects characters before it. This module answers, per delimiter, how many of them.
"""

from __future__ import annotations

import functools

from rtcompile.ir import Delimiter, Template
from rtcompile.regex.translate import UnsupportedRegex, translate


def delimiter_history(delimiter: Delimiter) -> int | None:
    """Characters before the search position the delimiter can inspect; None if unbounded or unknown."""
    if delimiter.is_literal:
        return 0
    return pattern_history(delimiter.pattern)


@functools.lru_cache(maxsize=512)
def pattern_history(pattern: str) -> int | None:
    try:
        return translate(pattern).history
    except (UnsupportedRegex, ValueError):
        return None  # a pattern we cannot analyse keeps the whole buffer: slower, never wrong


def template_history(template: Template) -> int | None:
    """How many committed characters the streaming engines must keep for `template`'s delimiters.

    At least one, so that `^`/`\\A` can never match at a position we dropped text before.
    None when some delimiter can look back without bound: then nothing is dropped.
    """
    delimiters: list[Delimiter] = []  # the start anchor is only searched in the prompt, never streamed
    for f in template.fields:
        delimiters += [d for d in (f.open, f.close) if d is not None]
    needed = 1
    for delimiter in delimiters:
        width = delimiter_history(delimiter)
        if width is None:
            return None
        needed = max(needed, width)
    return needed
