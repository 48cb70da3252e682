"""Emitting stdlib `re` syntax from the tree, and deciding which constructs it cannot express.

Every character node is spelled as explicit code points or ranges (``\\w``, case folding and sets mean
different things to the two engines), assertions as the stdlib equivalents of `regex`'s definitions.
`refuse_untranslatable` is where "stdlib cannot do this" is decided: the parser builds nodes for
everything `regex` accepts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from rtcompile.regex.ast import (
    Alternation,
    Assertion,
    Atomic,
    Backreference,
    BranchReset,
    Chars,
    Concat,
    Conditional,
    Fuzzy,
    Group,
    Lookaround,
    Node,
    Opaque,
    ParsedRegex,
    Repeat,
    children,
    walk,
    width,
)
from rtcompile.regex.charsets import ALL, TABLE_BODIES, TABLES, Ranges, complement
from rtcompile.regex.errors import UnsupportedRegex
from rtcompile.runtime.unicode_classes import WORD_CLASS

# ---------------------------------------------------------------------------------------------------
# What stdlib cannot express
# ---------------------------------------------------------------------------------------------------

# V0 is the default version; every other flag changes semantics we do not reproduce.
# (?u) is a no-op for str patterns (regex is Unicode by default, and (?-u) does not turn that off).
_SUPPORTED_FLAGS: Final = frozenset(("i", "m", "s", "x", "u", "V0"))
_FUZZY_ONLY_FLAGS: Final = frozenset(("b", "e"))
_NO_EQUIVALENT: Final = "no exact stdlib equivalent"
_BACKREFERENCE: Final = "partial matching of backreferences cannot be reproduced"
_REASONS: Final = {
    "\\p{...} property": "Unicode properties are not translated",
    "POSIX character class": "[[:name:]] is a property in regex but literal in re",
    "fuzzy matching": "regex reads this {...} as an approximate-match constraint",
    "backreference": _BACKREFERENCE,
    "control verb": "stdlib re has no backtracking control verbs",
    "recursion": "stdlib re cannot recurse",
    "group call": "stdlib re cannot call groups",
}
# regex's \R: "\r\n" or one line-break character, atomically (\R\n does not match "\r\n").
_LINE_BREAK: Final = "\\R line break"
_LINE_BREAK_BODY: Final = r"\r\n|[\n\x0b\x0c\r\x85\u2028\u2029]"
_ASSERTION_CONSTRUCTS: Final = {
    "search_anchor": "\\G search anchor",
}


def refuse_untranslatable(parsed: ParsedRegex, *, complete: bool = False, duplicates: bool = False) -> None:
    """Raise `UnsupportedRegex` for the first construct (in pattern order) stdlib `re` cannot express.

    With `complete`, the pattern is only ever matched against complete text (a `tag_pattern`, the
    start anchor), never asked for partial matches: then backreferences outside repeats, atomic groups
    and possessive repeats have exact stdlib spellings too (see `_emit`). With `duplicates`, the caller
    merges the captures of renamed duplicate group names (`merged_groupdict`), which is exact under
    the conditions `_duplicate_limits` checks.
    """
    found = sorted(_untranslatable(parsed, complete, duplicates), key=lambda item: item[0])
    if found:
        _position, construct, reason = found[0]
        raise UnsupportedRegex(construct, reason)


def _untranslatable(parsed: ParsedRegex, complete: bool, duplicates: bool) -> Iterator[tuple[int, str, str]]:
    if complete:
        yield from _complete_match_limits(parsed)
    if duplicates:
        yield from _duplicate_limits(parsed)
    folds = any(isinstance(n, (Chars, Backreference)) and n.ignore_case for n in walk(parsed.root))
    for flag in parsed.inline_flags:
        # (?b) and (?e) only change fuzzy matching (refused on its own); (?f) only case-insensitive
        # matching. Without those they are no-ops, partial matching included (checked against regex).
        if flag.letter in _FUZZY_ONLY_FLAGS or (flag.letter == "f" and not folds):
            continue
        if flag.letter not in _SUPPORTED_FLAGS:
            reason = "only the i, m, s, x, u and V0 inline flags (and b, e, f where they change nothing) translate"
            yield flag.position, f"(?{flag.letter}) flag", reason
    named: set[str] = set()
    for node in walk(parsed.root):
        # Character nodes' code points (Unicode properties, POSIX classes and \h included) were asked of
        # `regex` itself, so the emitted class is exact; except that under (?i) a property inside a set
        # can gain members between the boundaries the set parser knows (regex's (?i)[[:upper:]] takes
        # U+00AA), so those stay with regex.
        if isinstance(node, Chars) and node.untranslatable is not None and node.ignore_case:
            construct = node.untranslatable.construct
            yield node.untranslatable.position, construct, "case-insensitive properties are not translated"
        elif isinstance(node, Assertion) and node.kind in _ASSERTION_CONSTRUCTS:
            yield node.position, _ASSERTION_CONSTRUCTS[node.kind], _NO_EQUIVALENT
        elif isinstance(node, Group) and node.name is not None:
            if node.name.isdigit() or not node.name.isidentifier():
                yield node.position, "group name", f"{node.name!r} is not a valid stdlib group name"
            if node.name in named and not duplicates:
                yield node.position, "duplicate group name", "stdlib re requires unique group names"
            named.add(node.name)
        elif isinstance(node, Repeat) and node.possessive and not complete:
            yield node.position, "possessive quantifier", "stdlib re before Python 3.11 has no possessive repeats"
        elif isinstance(node, Atomic) and not complete:
            yield node.position, "atomic group", "stdlib re before Python 3.11 has no atomic groups"
        elif isinstance(node, BranchReset):
            yield node.position, "branch reset group", "stdlib re has no branch reset"
        elif isinstance(node, Conditional):
            yield node.position, "conditional group", "stdlib conditionals differ from regex's"
        elif isinstance(node, Backreference) and not complete:
            yield node.position, "backreference", _BACKREFERENCE
        elif isinstance(node, Fuzzy):
            yield node.position, "fuzzy matching", _REASONS["fuzzy matching"]
        elif isinstance(node, Opaque) and not (complete and node.construct == _LINE_BREAK):
            yield node.position, node.construct, _REASONS.get(node.construct, _NO_EQUIVALENT)


def _complete_match_limits(parsed: ParsedRegex) -> Iterator[tuple[int, str, str]]:
    """What stays untranslatable in complete matching: `regex`'s repeat guards skip retries that `re`
    makes when a backreference or its group sits inside a repeat, and case-insensitive backreferences
    compare by `regex`'s folding; lookbehinds must be fixed-width and capture-free (`regex` matches
    them right to left)."""
    referenced = {group_index(parsed, node.group) for node in walk(parsed.root) if isinstance(node, Backreference)}

    def visit(node: Node, repeated: bool) -> Iterator[tuple[int, str, str]]:
        if isinstance(node, Backreference):
            if node.ignore_case:
                yield node.position, "case-insensitive backreference", "regex and re fold case differently"
            elif repeated:
                yield node.position, "backreference in a repeat", "regex's repeat guards skip retries that re makes"
        elif isinstance(node, Group) and repeated and node.index in referenced:
            yield node.position, "backreference to a repeated group", "regex's repeat guards skip retries re makes"
        elif isinstance(node, Lookaround) and node.behind:
            low, high = width(node.body)
            if low != high or any(isinstance(inner, (Group, Backreference, Atomic)) for inner in walk(node.body)):
                reason = "stdlib re needs fixed-width lookbehinds, and regex captures in them right to left"
                yield 0, "lookbehind", reason
        inner_repeated = repeated or (isinstance(node, Repeat) and node.max != 1)
        for child in children(node):
            yield from visit(child, inner_repeated)

    yield from visit(parsed.root, repeated=False)


def _duplicate_limits(parsed: ParsedRegex) -> Iterator[tuple[int, str, str]]:
    """When renaming a duplicate group name and reporting the occurrence that ends last is exact: regex
    reports the capture that completed last, which is the one with the greatest end as long as no
    occurrence can be empty, none lies inside another or inside a lookaround, and nothing refers back
    to the name."""
    occurrences: dict[str, list[Group]] = {}
    for node in walk(parsed.root):
        if isinstance(node, Group) and node.name is not None:
            occurrences.setdefault(node.name, []).append(node)
    duplicated = {name: groups for name, groups in occurrences.items() if len(groups) > 1}
    if not duplicated:
        return
    reason = "which capture regex reports for a duplicate name is not modelled here"
    referenced = {group_index(parsed, n.group) for n in walk(parsed.root) if isinstance(n, Backreference)}
    for name, groups in duplicated.items():
        # Named where the name is met again, as a reader would notice the duplicate.
        inner = any(isinstance(g, Group) and g.name == name for group in groups for g in walk(group.body))
        if inner or groups[0].index in referenced or any(width(group)[0] == 0 for group in groups):
            yield groups[1].position, "duplicate group name", reason
    for node in walk(parsed.root):
        if isinstance(node, Lookaround):
            for group in walk(node.body):
                if isinstance(group, Group) and group.name in duplicated:
                    yield duplicated[group.name][1].position, "duplicate group name", reason


def group_index(parsed: ParsedRegex, reference: str) -> int:
    """The group a backreference names (by number or by name); -1 for one `regex` leaves unresolved."""
    if reference.isdigit():
        return int(reference)
    return parsed.group_names.get(reference, -1)


# ---------------------------------------------------------------------------------------------------
# Code points
# ---------------------------------------------------------------------------------------------------


def _escape_code_point(cp: int, in_class: bool) -> str:
    """Spell one code point for a stdlib pattern: printable ASCII as itself, the rest as escapes."""
    ch = chr(cp)
    if ch.isascii() and ch.isalnum():
        return ch
    if 0x20 <= cp < 0x7F:
        return "\\" + ch if (in_class and ch in "\\]^-[") or (not in_class and ch in ".^$*+?{}[]\\|()") else ch
    return f"\\U{cp:08x}" if cp > 0xFFFF else f"\\u{cp:04x}"


def _class_body(ranges: Ranges) -> str:
    """The inside of ``[...]``; the shared table text is reused verbatim for ``\\w``/``\\d``/``\\s``."""
    for name, table in TABLES.items():
        if ranges == table:
            return TABLE_BODIES[name]
    parts = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(_escape_code_point(lo, True))
        elif hi == lo + 1:
            parts.append(_escape_code_point(lo, True) + _escape_code_point(hi, True))
        else:
            parts.append(f"{_escape_code_point(lo, True)}-{_escape_code_point(hi, True)}")
    return "".join(parts)


def emit_ranges(ranges: Ranges) -> str:
    """A stdlib atom matching exactly one code point from `ranges` (patterns are compiled DOTALL)."""
    if ranges == ALL:
        return "."
    if not ranges:
        return "[^\\u0000-\\U0010ffff]"
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _escape_code_point(ranges[0][0], False)
    inverse = complement(ranges)
    if len(inverse) < len(ranges) or any(inverse == table for table in TABLES.values()):
        return f"[^{_class_body(inverse)}]"
    return f"[{_class_body(ranges)}]"


# ---------------------------------------------------------------------------------------------------
# Nodes
# ---------------------------------------------------------------------------------------------------

_WORD: Final = f"[{WORD_CLASS}]"
_ASSERTIONS: Final = {
    "string_start": "\\A",
    "string_end": "\\Z",
    # regex's `$` (no MULTILINE): at the end, or before a newline that ends the string.
    "string_end_line": "(?=\\n?\\Z)",
    # MULTILINE: at the start or after "\n" / at the end or before "\n".
    "line_start": "(?<![^\\n])",
    "line_end": "(?![^\\n])",
    # regex's Unicode word boundary is defined by its own \w table.
    "boundary": f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))",
    "non_boundary": f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))",
    # regex's \m and \M: the start and the end of a word, by the same table.
    "word_start": f"(?<!{_WORD})(?={_WORD})",
    "word_end": f"(?<={_WORD})(?!{_WORD})",
}


# Emitted fragments carry how tightly they bind, so we only add (?:...) where stdlib needs it.
_ATOM, _SEQUENCE, _ALTERNATION = 0, 1, 2


def quantifier(low: int, high: int | None, lazy: bool) -> str:
    if (low, high) == (0, None):
        text = "*"
    elif (low, high) == (1, None):
        text = "+"
    elif (low, high) == (0, 1):
        text = "?"
    elif high is None:
        text = f"{{{low},}}"
    elif low == high:
        text = f"{{{low}}}"
    else:
        text = f"{{{low},{high}}}"
    return text + ("?" if lazy else "")


def _as_atom(fragment: tuple[str, int]) -> str:
    text, level = fragment
    return text if level == _ATOM else f"(?:{text})"


def _as_sequence_item(fragment: tuple[str, int]) -> str:
    text, level = fragment
    return f"(?:{text})" if level == _ALTERNATION else text


class _Emission:
    """State while emitting one pattern: whether groups capture, and how `regex`'s group numbers map
    to the stdlib pattern's (atomic groups are spelled with a capture group of their own)."""

    def __init__(self, captures: bool, group_names: Mapping[str, int] | None = None) -> None:
        self.captures = captures
        self.group_names = group_names or {}
        self.numbers: dict[int, int] = {}
        self.count = 0
        self.copies: dict[str, list[str]] = {}  # group name -> the stdlib names of its occurrences

    def stdlib_name(self, name: str) -> str:
        """`name` for its first occurrence; a fresh name, unused by the pattern, for each later one."""
        copies = self.copies.setdefault(name, [])
        if copies:
            taken = set(self.group_names) | {copy for names in self.copies.values() for copy in names}
            candidate = f"_{len(copies) + 1}_{name}"
            while candidate in taken:
                candidate = f"_{candidate}"
            name = candidate
        copies.append(name)
        return name

    def new_group(self) -> int:
        self.count += 1
        return self.count


def _emit(node: Node, out: _Emission) -> tuple[str, int]:
    """Stdlib syntax for `node`; without `out.captures`, groups become non-capturing."""
    if isinstance(node, Chars):
        return emit_ranges(node.ranges), _ATOM
    if isinstance(node, Assertion):
        return _ASSERTIONS[node.kind], _SEQUENCE
    if isinstance(node, Group):
        if not out.captures:
            return f"(?:{_emit(node.body, out)[0]})", _ATOM
        out.numbers[node.index] = out.new_group()
        name = None if node.name is None else out.stdlib_name(node.name)
        body = _emit(node.body, out)[0]
        return (f"(?P<{name}>{body})" if name else f"({body})"), _ATOM
    if isinstance(node, Concat):
        if len(node.items) == 1:
            return _emit(node.items[0], out)
        return "".join(_as_sequence_item(_emit(item, out)) for item in node.items), _SEQUENCE
    if isinstance(node, Alternation):
        return "|".join(_emit(branch, out)[0] for branch in node.branches), _ALTERNATION
    if isinstance(node, Repeat):
        number = out.new_group() if node.possessive and out.captures else 0  # X*+ is (?>X*)
        repeat = _as_atom(_emit(node.body, out)) + quantifier(node.min, node.max, node.lazy)
        return (_atomic_with(number, repeat) if number else repeat), _SEQUENCE
    if isinstance(node, Lookaround):
        opener = "(?" + ("<" if node.behind else "") + ("=" if node.positive else "!")
        return f"{opener}{_emit(node.body, out)[0]})", _SEQUENCE
    if isinstance(node, Atomic) and out.captures:
        number = out.new_group()
        return _atomic_with(number, _emit(node.body, out)[0]), _SEQUENCE
    if isinstance(node, Opaque) and node.construct == _LINE_BREAK and out.captures:
        return _atomic_with(out.new_group(), _LINE_BREAK_BODY), _SEQUENCE
    if isinstance(node, Backreference) and out.captures:
        target = int(node.group) if node.group.isdigit() else out.group_names[node.group]
        if target not in out.numbers:
            # A forward reference (`\\1(a)`): its group comes later in the pattern. Outside repeats (the
            # only backreferences emitted, see `_complete_match_limits`) the group has not been set
            # when the reference is tried, and `regex` fails a reference to an unset group; stdlib `re`
            # rejects forward references, so it is spelled as what never matches.
            return "(?!)", _SEQUENCE
        return f"(?:\\{out.numbers[target]})", _ATOM
    raise AssertionError(f"{type(node).__name__} reached the emitter; refuse_untranslatable lets none through")


def _atomic_with(number: int, body: str) -> str:
    # A lookahead is atomic in re: once it matched, backtracking never re-enters it; the capture then
    # consumes exactly what it matched. Exact for complete matching (re before 3.11 has no (?>...)).
    return f"(?=({body}))(?:\\{number})"


def full_pattern(root: Node, group_names: Mapping[str, int] | None = None) -> str:
    """The stdlib pattern that behaves like `root` for search/match/finditer, groups included."""
    return full_pattern_and_copies(root, group_names)[0]


def full_pattern_and_copies(
    root: Node, group_names: Mapping[str, int] | None = None
) -> tuple[str, tuple[tuple[str, tuple[str, ...]], ...]]:
    """`full_pattern`, and for each duplicated group name the stdlib names of its occurrences."""
    out = _Emission(True, group_names)
    text = _emit(root, out)[0]
    return text, tuple((name, tuple(copies)) for name, copies in out.copies.items() if len(copies) > 1)


def plain(node: Node) -> str:
    """The node as a sequence item without capture groups (used inside the prefix pattern)."""
    return _as_sequence_item(_emit(node, _Emission(False)))


def plain_atom(node: Node) -> str:
    """The node as an atom (ready for a quantifier) without capture groups."""
    return _as_atom(_emit(node, _Emission(False)))


def either(first: str | None, second: str | None) -> str | None:
    """Alternation of two optional sequence items (``None`` matches nothing)."""
    if first is None:
        return second
    if second is None or second == first:
        return first
    return f"(?:{first}|{second})"
