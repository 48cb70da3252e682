"""Code-point sets: the ranges every character node matches, with membership asked of `regex` itself.

A set is a normalised tuple of inclusive ``(low, high)`` code-point ranges. `regex` and stdlib `re`
disagree on ``\\w \\d \\s``, case folding and set syntax, so nothing here re-derives `regex`'s rules: the
class tables come from `rtcompile.runtime.unicode_classes` (generated from `regex`), case variants from
`regex`'s own case table, and set membership from matching with `regex`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from itertools import pairwise
from typing import Final

import regex
from regex import _regex as _regex_engine

from rtcompile.runtime.unicode_classes import DIGIT_CLASS, SPACE_CLASS, WORD_CLASS

MAX_CODE_POINT: Final = 0x10FFFF

Ranges = tuple[tuple[int, int], ...]


def normalise(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sort and merge overlapping or adjacent ranges."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return tuple(merged)


def complement(ranges: Ranges) -> Ranges:
    """The code points not in `ranges` (which must be normalised)."""
    result: list[tuple[int, int]] = []
    next_lo = 0
    for lo, hi in ranges:
        if lo > next_lo:
            result.append((next_lo, lo - 1))
        next_lo = hi + 1
    if next_lo <= MAX_CODE_POINT:
        result.append((next_lo, MAX_CODE_POINT))
    return tuple(result)


def intersection(first: Ranges, second: Ranges) -> Ranges:
    """The code points in both `first` and `second` (both normalised)."""
    return complement(normalise([*complement(first), *complement(second)]))


def size(ranges: Ranges) -> int:
    """How many code points `ranges` holds."""
    return sum(hi - lo + 1 for lo, hi in ranges)


def characters(ranges: Ranges) -> str:
    """Every character of `ranges`, in order (for classes small enough to spell out)."""
    return "".join(chr(cp) for lo, hi in ranges for cp in range(lo, hi + 1))


def contains(ranges: Ranges, cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def _parse_class_body(body: str) -> Ranges:
    """Parse a generated table body (``\\u0030-\\u0039...``) back into ranges."""
    ranges = [
        (int(lo, 16), int(hi or lo, 16))
        for lo, hi in re.findall(r"\\[uU]([0-9a-fA-F]+)(?:-\\[uU]([0-9a-fA-F]+))?", body)
    ]
    return normalise(ranges)


# The class escapes by letter (``w`` for ``\w``): the generated table text, and its ranges.
TABLE_BODIES: Final = {"w": WORD_CLASS, "d": DIGIT_CLASS, "s": SPACE_CLASS}
TABLES: Final = {name: _parse_class_body(body) for name, body in TABLE_BODIES.items()}
ALL: Final[Ranges] = ((0, MAX_CODE_POINT),)
NEWLINE: Final[Ranges] = ((0x0A, 0x0A),)


# ---------------------------------------------------------------------------------------------------
# Case folding, asked of `regex` itself
# ---------------------------------------------------------------------------------------------------

CASE_FLAGS: Final = int(regex.IGNORECASE | regex.UNICODE)
# Code points that may have case variants; `cased_code_points` keeps those that really do.
_CASE_CANDIDATES: Final = regex.compile(r"[\p{Cased}\p{Changes_When_Casemapped}\p{Changes_When_Casefolded}]")


def all_cases(cp: int) -> list[int]:
    """The code points `regex` (V0, IGNORECASE) accepts for the literal `cp` (its engine's own table)."""
    cases: list[int] = _regex_engine.get_all_cases(CASE_FLAGS, cp)
    return cases


@functools.cache
def _every_code_point() -> str:
    return "".join(map(chr, range(MAX_CODE_POINT + 1)))


@functools.cache
def cased_code_points() -> tuple[int, ...]:
    """Every code point whose case-insensitive matching differs from exact matching.

    Only characters with a case property or case mapping can have case variants, so we ask `regex` for
    those (one scan of all code points) and keep the ones its case table actually relates.
    """
    candidates = (match.start() for match in _CASE_CANDIDATES.finditer(_every_code_point()))
    return tuple(cp for cp in candidates if len(all_cases(cp)) > 1)


@functools.lru_cache(maxsize=4096)
def literal_ranges(cp: int, ignore_case: bool) -> Ranges:
    """The code points a literal matches (with ``(?i)``: every case `regex` relates to it)."""
    if not ignore_case:
        return ((cp, cp),)
    return normalise((c, c) for c in {cp, *all_cases(cp)})


# ---------------------------------------------------------------------------------------------------
# Set membership, asked of `regex` itself
# ---------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def resolve_set(source: str, breakpoints: frozenset[int], ignore_case: bool) -> Ranges:
    """Ask `regex` which code points the character set `source` matches.

    Membership can only change at `breakpoints` (the item boundaries we parsed), so testing both ends
    of every interval between breakpoints is exact; with ``(?i)`` every cased code point becomes its
    own interval. Asking `regex` rather than re-deriving its rules sidesteps its quirks (for instance
    ``[^\\s\\S]`` matches every character in `regex`).
    """
    compiled = regex.compile(source, regex.V0 | (regex.IGNORECASE if ignore_case else 0))
    points = set(breakpoints) | {0, MAX_CODE_POINT + 1}
    if ignore_case:
        for cp in cased_code_points():
            points.update((cp, cp + 1))
    edges = sorted(p for p in points if 0 <= p <= MAX_CODE_POINT + 1)

    def member(cp: int) -> bool:
        return compiled.match(chr(cp)) is not None

    members: list[tuple[int, int]] = []
    for lo, nxt in pairwise(edges):
        hi = nxt - 1
        members.extend(_bisect_interval(member, lo, hi))
    return normalise(members)


def _bisect_interval(member: Callable[[int], bool], lo: int, hi: int) -> list[tuple[int, int]]:
    """Member sub-ranges of [lo, hi], assuming membership is constant unless the ends disagree."""
    first, last = member(lo), member(hi)
    if first == last:
        return [(lo, hi)] if first else []
    mid = (lo + hi) // 2
    return _bisect_interval(member, lo, mid) + _bisect_interval(member, mid + 1, hi)


@functools.lru_cache(maxsize=256)
def scan_class(source: str, ignore_case: bool, verbose: bool) -> Ranges:
    """The code points a one-character `regex` item (a Unicode property, a POSIX class) matches.

    Such items have no boundaries we could parse, so every code point is tried: one `finditer` over all
    of them (a few tens of milliseconds per distinct item). `verbose`: `source` is written under ``(?x)``.
    """
    flags = regex.V0 | (regex.IGNORECASE if ignore_case else 0) | (regex.VERBOSE if verbose else 0)
    compiled = regex.compile(f"(?:{source})+", flags)
    return normalise((match.start(), match.end() - 1) for match in compiled.finditer(_every_code_point()))
