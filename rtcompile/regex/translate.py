r"""Translate `regex`-module patterns into exact standard-library `re` equivalents.

Response templates are written for the third-party `regex` module: the reference engine compiles every
delimiter with ``regex.compile(pattern, regex.DOTALL)`` (version V0) and streams with
``search(text, pos, partial=True)``. Generated parsers may only import the standard library, so each
pattern is translated here, at compile time, into two stdlib patterns (compile both with ``re.DOTALL``):

* ``full`` behaves exactly like the `regex` pattern for ``search``/``match``/``finditer``: same spans,
  groups and group names. The engines disagree on ``\w \d \s \b`` (tens of thousands of code points),
  case-insensitive matching, set syntax and many escapes, so the pattern is parsed with `regex`'s own V0
  grammar (`rtcompile.regex.parser`) and re-emitted from the tree (`rtcompile.regex.stdlib`), with every
  character class spelled out as code-point ranges that `regex` itself confirmed.
* ``prefix`` matches at ``q`` exactly when `regex`'s partial search would report a partial match
  starting at ``q`` (`rtcompile.regex.partial`); `rtcompile.runtime.partial.partial_search` combines the
  two.

Constructs we cannot reproduce exactly raise `UnsupportedRegex`; patterns `regex` rejects raise
`InvalidRegex`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from rtcompile.regex.analysis import history, opens_with_lazy_any, reads_ahead
from rtcompile.regex.ast import (
    Alternation,
    Node,
    end_kind,
    flatten_alternation,
    unwrap,
)
from rtcompile.regex.errors import InvalidRegex, UnsupportedRegex
from rtcompile.regex.linear_repeats import linearise_repeats
from rtcompile.regex.nested_repeats import tame_nested_repeats
from rtcompile.regex.optimiser import merge_character_branches
from rtcompile.regex.parser import parse_regex
from rtcompile.regex.partial import check_lookarounds, check_repeats, partial_prefix
from rtcompile.regex.stdlib import full_pattern, full_pattern_and_copies, refuse_untranslatable
from rtcompile.regex.stdlib_prefix import hoist_leading_character

__all__ = [
    "BeforeEnd",
    "InvalidRegex",
    "StdlibRegex",
    "UnsupportedRegex",
    "translate",
    "translate_before_end",
    "translate_complete",
]


@dataclass(frozen=True)
class StdlibRegex:
    r"""A `regex` pattern translated for stdlib `re` (compile both patterns with ``re.DOTALL``).

    * ``source``: the original `regex` pattern.
    * ``full``: behaves exactly like ``regex.compile(source, regex.DOTALL)`` for search/match/finditer.
    * ``prefix``: matches at ``q`` iff `regex`'s partial search would report a partial match at ``q``
      (given that there is no full match); see `rtcompile.runtime.partial.partial_search`.
    * ``history``: how many characters before the search position the pattern may inspect
      (`rtcompile.regex.analysis.history`: lookbehind windows, and one more character for ``\b``,
      ``\B``, ``\m``, ``\M``, ``^`` at a window's far edge or at the match start); ``None`` if unbounded.
    * ``duplicates``: for each group name the pattern uses more than once, the stdlib names of its
      occurrences in ``full`` (the first keeps the name); `rtcompile.runtime.partial.merged_groupdict`
      turns a stdlib match's groups back into `regex`'s.
    * ``match_only``: the pattern can match at a later start only if it matches where the search
      begins (it opens with an unbounded lazy ``.*?``, or is one lookahead opening so), so
      ``match(text, pos)`` answers ``search(text, pos)`` in one attempt instead of one per position
      (stdlib ``search`` is quadratic on such a pattern without a match; `regex` skips ahead).
    """

    source: str
    full: str
    prefix: str
    history: int | None
    duplicates: tuple[tuple[str, tuple[str, ...]], ...] = ()
    match_only: bool = False


def translate(pattern: str) -> StdlibRegex:
    """Translate a `regex` (V0, DOTALL) pattern into exact stdlib `re` patterns.

    Raises `InvalidRegex` if `regex` rejects the pattern and `UnsupportedRegex` if it cannot be
    reproduced exactly.
    """
    return _translate(pattern)


@functools.lru_cache(maxsize=512)
def _translate(pattern: str) -> StdlibRegex:
    parsed = parse_regex(pattern)
    refuse_untranslatable(parsed, duplicates=True)
    root = tame_nested_repeats(merge_character_branches(parsed.root))
    check_lookarounds(root, followed=False)
    check_repeats(root)
    full, duplicates = full_pattern_and_copies(hoist_leading_character(root), parsed.group_names)
    result = StdlibRegex(
        source=pattern,
        full=full,
        prefix=partial_prefix(root),
        history=history(root),
        duplicates=duplicates,
        match_only=_match_only(root),
    )
    for generated in (result.full, result.prefix):
        try:
            re.compile(generated, re.DOTALL)
        except (re.error, RecursionError, OverflowError) as exc:
            raise UnsupportedRegex("pattern too complex", f"stdlib re cannot compile the translation: {exc}") from exc
    return result


def translate_complete(pattern: str, *, captures: bool = True) -> str:
    """The exact stdlib translation of a pattern that is only ever matched against complete text
    (`search`/`finditer`, never partial matching): an xml-inline `tag_pattern`, the start anchor.

    Partial matching is what makes lookaheads and lazy repeats hard (see `rtcompile.regex.partial`);
    without it they translate directly, and backreferences, atomic groups and possessive repeats
    have exact spellings too, and repeats `re` would run one character at a time are rewritten into
    tight loops (`rtcompile.regex.linear_repeats`: exact for `search`/`finditer`, whose match ends where
    the pattern does, not for `fullmatch`). Without `captures` (only spans are read, as for the start anchor),
    duplicate group names are simply renamed. Raises `InvalidRegex` / `UnsupportedRegex` like
    `translate`.
    """
    return _translate_complete(pattern, captures)


@functools.lru_cache(maxsize=512)
def _translate_complete(pattern: str, captures: bool) -> str:
    parsed = parse_regex(pattern)
    refuse_untranslatable(parsed, complete=True, duplicates=not captures)
    root = linearise_repeats(tame_nested_repeats(merge_character_branches(parsed.root)))
    full = full_pattern(hoist_leading_character(root), parsed.group_names)
    try:
        re.compile(full, re.DOTALL)
    except (re.error, RecursionError, OverflowError) as exc:
        raise UnsupportedRegex("pattern too complex", f"stdlib re cannot compile the translation: {exc}") from exc
    return full


def _match_only(root: Node) -> bool:
    """Whether a match starting later than `pos` implies one starting at `pos` (see `StdlibRegex`)."""
    return opens_with_lazy_any(reads_ahead(root))


@dataclass(frozen=True)
class BeforeEnd:
    """A pattern whose top-level alternation has branches that only match at the end of the text
    (`</think>|$`), split for a one-shot search: `branches`, the stdlib translation of the other
    branches in their order (None if there are none); `final_newline`, whether an end branch is `$`
    (which also matches before a newline that ends the text) rather than only `\\Z`."""

    branches: str | None
    final_newline: bool


def translate_before_end(pattern: str) -> BeforeEnd | None:
    """The split of `pattern` (see `BeforeEnd`), or None when it has no such branch, or when the split
    could change what a match reports (a group in an end branch, a group name used twice).

    `re` runs an end branch (`$` becomes `(?=\\n?\\Z)`) at every position of a search, which makes a
    one-shot search of a long output cost far more than `regex`'s, which jumps to the end. Before the
    first position where an end branch can match, the other branches alone decide, in their order;
    there, the whole pattern does (`rtcompile.runtime.scanning.search_before_end`)."""
    parsed = parse_regex(pattern)
    if parsed.inline_flags or len(set(parsed.group_names)) != len(parsed.group_names):
        return None
    root = unwrap(parsed.root)
    alone = end_kind(root)
    if alone is not None:
        return BeforeEnd(None, alone == "string_end_line")
    if not isinstance(root, Alternation):
        return None
    kept: list[Node] = []
    kinds: set[str] = set()
    for branch in flatten_alternation(root):
        kind = end_kind(branch)
        if kind is not None:
            kinds.add(kind)
        else:
            kept.append(branch)
    if not kinds:
        return None
    if not kept:
        return BeforeEnd(None, "string_end_line" in kinds)
    rest = kept[0] if len(kept) == 1 else Alternation(tuple(kept))
    try:
        refuse_untranslatable(parsed, duplicates=True)
        branches = full_pattern(tame_nested_repeats(merge_character_branches(rest)), parsed.group_names)
        re.compile(branches, re.DOTALL)
    except (UnsupportedRegex, re.error, RecursionError, OverflowError):
        return None
    return BeforeEnd(branches, "string_end_line" in kinds)
