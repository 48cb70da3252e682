r"""The partial-match pattern as a streaming scan searches it: written so that `re` can skip to where a
partial match can start.

`rtcompile.regex.partial` builds ``prefix``, which matches at ``q`` exactly where `regex` reports a
partial match starting at ``q``, as nested alternations: ``(?:(?:\Z|<\Z|<t\Z|...)|(?:\Z|<\Z|...))``.
`re` skips ahead by a first character only when a pattern opens with a literal, or with one
alternation whose every branch does; a nested group, or a ``\Z`` branch, makes it try the whole
pattern at every position of the text, which on a long held-back text (all that a wait kept, say)
costs some twenty times the skipping search. A scan only asks where the first partial match starts
(`rtcompile.runtime.partial.partial_search`), and a partial match at the very end of the text holds
nothing back, the same as none. So the searched pattern may leave out what matches only there, and
may write the same alternatives flat:

* a branch that is ``\Z`` alone matches only at the end of the text: it is left out;
* a branch that is one non-capturing group is replaced by the group's branches;
* a branch that opens with a non-capturing group followed by more (``(?:A|B)R``) becomes ``AR|BR``,
  and one that opens with an optional group (``(?:A)?R``, lazy or not, but not possessive) becomes
  ``AR|R`` (for a group of a few branches, each at most `MAX_DISTRIBUTED` characters with ``R``, where
  every branch then opens with a character, and a pattern at most `MAX_GROWTH` times as long as it
  was).

Each keeps the set of positions before the end of the text where some branch matches; the order of
branches only decides which match `re` reports at a position, never whether there is one. Then `re`
factors a character every branch opens with out of the alternation, and skips by it.
"""

from __future__ import annotations

from typing import Final

__all__ = ["searched_prefix"]

MAX_BRANCHES: Final = 16  # a leading group with more branches than this is kept as it is
MAX_DISTRIBUTED: Final = 4096  # characters one distributed branch may have
MAX_GROWTH: Final = 4  # a searched pattern longer than this many times the written one is not used

_QUANTIFIERS: Final = frozenset("*+?{")


def searched_prefix(prefix: str) -> str:
    """`prefix` (a partial-match pattern) as a streaming scan searches it (see the module docstring):
    the same start positions before the end of the text; `(?!)` if it matches only at the end."""
    branches = _flat_branches(prefix)
    if not branches:
        return "(?!)"
    searched = "|".join(branches)
    return searched if len(searched) <= MAX_GROWTH * len(prefix) else prefix


def _flat_branches(pattern: str) -> list[str]:
    """The branches of `pattern`, flattened and without the ones that match only at the end."""
    flat: list[str] = []
    for branch in _branches(pattern):
        if branch == "\\Z":
            continue
        end = _group_end(branch) if branch.startswith("(?:") else -1
        if end == len(branch):
            flat += _flat_branches(branch[3:-1])
            continue
        rest = branch[end:] if end > 0 else ""
        optional = rest[:1] == "?" and rest[1:2] != "+"
        if optional:
            rest = rest[2:] if rest[1:2] == "?" else rest[1:]
        if end > 0 and (optional or rest[:1] not in _QUANTIFIERS):
            inner = _flat_branches(branch[3 : end - 1])
            tails = _flat_branches(rest) if optional else []  # (an empty one matches everywhere)
            fits = all(len(b) + len(rest) <= MAX_DISTRIBUTED for b in inner)
            # (only where every branch then opens with a character: else `re` tries every position anyway,
            # and writing what follows the group once per branch only makes the pattern longer)
            if len(inner) <= MAX_BRANCHES and fits and all(map(_opens_with_a_character, inner + tails)):
                flat += [b + rest for b in inner] + tails
                continue
        flat.append(branch)
    return flat


def _opens_with_a_character(branch: str) -> bool:
    """Whether `branch` opens with one plain or escaped character (`<`, `\\|`), not a class, a group or
    an anchor."""
    if not branch or branch[0] in "([.^$":
        return False
    return branch[0] != "\\" or not branch[1:2].isalnum()


def _branches(pattern: str) -> list[str]:
    """The top-level branches of `pattern` (split at each `|` outside groups and classes)."""
    branches: list[str] = []
    depth = 0
    start = 0
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            index = _class_end(pattern, index)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            branches.append(pattern[start:index])
            start = index + 1
        index += 1
    branches.append(pattern[start:])
    return branches


def _group_end(pattern: str) -> int:
    """The index just past the `)` that closes the group `pattern` opens with."""
    depth = 0
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            index = _class_end(pattern, index)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    raise ValueError(f"unbalanced group in {pattern!r}")


def _class_end(pattern: str, start: int) -> int:
    """The index just past the `]` that closes the character class at `start` (a `]` right after `[`
    or `[^` is a member, as `re` reads it)."""
    index = start + 1
    if index < len(pattern) and pattern[index] == "^":
        index += 1
    if index < len(pattern) and pattern[index] == "]":
        index += 1
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "]":
            return index + 1
        index += 1
    raise ValueError(f"unclosed character class in {pattern!r}")
