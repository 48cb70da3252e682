r"""Translate `regex`-module patterns into exact standard-library `re` equivalents.

Response templates are written for the third-party `regex` module: the reference engine compiles every
delimiter with ``regex.compile(pattern, regex.DOTALL)`` (version V0) and streams with
``search(text, pos, partial=True)``. Generated parsers may only import the standard library, so each
pattern is translated here, at compile time, into two stdlib patterns (compile both with ``re.DOTALL``):

* ``full`` behaves exactly like the `regex` pattern for ``search``/``match``/``finditer``: same spans,
  groups and group names. The engines disagree on ``\w \d \s \b`` (tens of thousands of code points),
  case-insensitive matching, set syntax and many escapes, so the pattern is parsed with `regex`'s own V0
  grammar (a small recursive-descent mirror of it) and re-emitted from our AST, with every character
  class spelled out as code-point ranges that `regex` itself confirmed.
* ``prefix`` matches at ``q`` exactly when `regex`'s partial search would report a partial match
  starting at ``q``; `rtcompile.runtime.partial.partial_search` combines the two.

Constructs we cannot reproduce exactly raise `UnsupportedRegex`; patterns `regex` rejects raise
`InvalidRegex`.

How `regex` answers ``search(text, pos, partial=True)`` (read from its engine, then confirmed by
differential testing on several hundred thousand random cases):

1. It first runs an ordinary search; a full match wins.
2. Otherwise it tries start positions ``q = pos, pos + 1, ...``. At each one the backtracking matcher
   stops with "partial" as soon as any path tries to read a character at the end of the text -- also
   inside a lookahead, positive or negative. Since no full match exists anywhere, the answer at ``q``
   is "some path runs into the end", a regular property written down structurally by `_prefix`:
   ``P(XY) = P(X) | X P(Y)``, ``P(X|Y) = P(X) | P(Y)``, ``P(char) = \Z``; assertions and lookbehinds never
   read past the end.
3. Several engine shortcuts deviate from that and are mirrored: how each repeat opcode treats the end of
   the text (`_repeat_prefix`), skipping ahead after a failed attempt at a leading ``.*?``
   (`_skip_ahead_prefix`), and the first-character prefilter that decides what happens at
   ``q == len(text)`` (`_end_of_text_rule`).
4. Where its prefilters would hide partial matches that begin inside a lookahead, or its shortcuts for
   lazy single-character repeats report impossible ones, we refuse the construct instead.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

import regex
from regex import _regex as _regex_engine

from rtcompile.runtime.unicode_classes import DIGIT_CLASS, SPACE_CLASS, WORD_CLASS

__all__ = ["InvalidRegex", "StdlibRegex", "UnsupportedRegex", "translate"]
_MAX_CODE_POINT: Final = 0x10FFFF


class InvalidRegex(ValueError):
    """The `regex` module itself rejects the pattern (the message is `regex`'s own)."""


class UnsupportedRegex(ValueError):
    """The pattern is valid for `regex` but cannot be reproduced exactly with stdlib `re`.

    `construct` names the offending construct briefly (e.g. ``"possessive quantifier"``) so callers can
    report it without parsing the message.
    """

    def __init__(self, construct: str, reason: str) -> None:
        super().__init__(f"unsupported regex construct: {construct} ({reason})")
        self.construct = construct


@dataclass(frozen=True)
class StdlibRegex:
    r"""A `regex` pattern translated for stdlib `re` (compile both patterns with ``re.DOTALL``).

    * ``source``: the original `regex` pattern.
    * ``full``: behaves exactly like ``regex.compile(source, regex.DOTALL)`` for search/match/finditer.
    * ``prefix``: matches at ``q`` iff `regex`'s partial search would report a partial match at ``q``
      (given that there is no full match); see `rtcompile.runtime.partial.partial_search`.
    * ``history``: how many characters before the search position the pattern may inspect
      (lookbehind width, 1 for ``\b``/``\B``/multiline ``^``); ``None`` if unbounded.
    * ``anchored_start``: the pattern contains ``^`` or ``\A`` (string start) somewhere.
    """

    source: str
    full: str
    prefix: str
    history: int | None
    anchored_start: bool


def translate(pattern: str) -> StdlibRegex:
    """Translate a `regex` (V0, DOTALL) pattern into exact stdlib `re` patterns.

    Raises `InvalidRegex` if `regex` rejects the pattern and `UnsupportedRegex` if it cannot be
    reproduced exactly.
    """
    return _translate(pattern)


@functools.lru_cache(maxsize=512)
def _translate(pattern: str) -> StdlibRegex:
    try:
        regex.compile(pattern, regex.DOTALL)
    except regex.error as exc:
        raise InvalidRegex(str(exc)) from exc
    root = _Parser(pattern).parse()
    _check_lookarounds(root, followed=False)
    _check_repeats(root)
    result = StdlibRegex(
        source=pattern,
        full=_full(root),
        prefix=_partial_prefix(root),
        history=_history(root),
        anchored_start=any(isinstance(n, Assertion) and n.kind == "string_start" for n in _walk(root)),
    )
    for generated in (result.full, result.prefix):
        try:
            re.compile(generated, re.DOTALL)
        except (re.error, RecursionError, OverflowError) as exc:
            raise UnsupportedRegex("pattern too complex", f"stdlib re cannot compile the translation: {exc}") from exc
    return result


def _partial_prefix(root: Node) -> str:
    """The complete ``prefix`` pattern: structural hits, plus `regex`'s search-loop effects."""
    prefix = _either(_prefix(root), _skip_ahead_prefix(root))
    end_rule = _end_of_text_rule(root)
    if end_rule == "always" and not (prefix == "\\Z" or (prefix or "").startswith("(?:\\Z|")):
        prefix = _either(prefix, "\\Z")
    elif end_rule == "anchored" and prefix is not None:
        prefix = "\\A" + prefix
    return "(?!)" if prefix is None else prefix


# ---------------------------------------------------------------------------------------------------
# Code-point sets
# ---------------------------------------------------------------------------------------------------

Ranges = tuple[tuple[int, int], ...]


def _normalise(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sort and merge overlapping or adjacent ranges."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return tuple(merged)


def _complement(ranges: Ranges) -> Ranges:
    """The code points not in `ranges` (which must be normalised)."""
    result: list[tuple[int, int]] = []
    next_lo = 0
    for lo, hi in ranges:
        if lo > next_lo:
            result.append((next_lo, lo - 1))
        next_lo = hi + 1
    if next_lo <= _MAX_CODE_POINT:
        result.append((next_lo, _MAX_CODE_POINT))
    return tuple(result)


def _parse_class_body(body: str) -> Ranges:
    """Parse a generated table body (``\\u0030-\\u0039...``) back into ranges."""
    ranges = [
        (int(lo, 16), int(hi or lo, 16))
        for lo, hi in re.findall(r"\\[uU]([0-9a-fA-F]+)(?:-\\[uU]([0-9a-fA-F]+))?", body)
    ]
    return _normalise(ranges)


_TABLE_BODIES: Final = {"w": WORD_CLASS, "d": DIGIT_CLASS, "s": SPACE_CLASS}
_TABLES: Final = {name: _parse_class_body(body) for name, body in _TABLE_BODIES.items()}
_ALL: Final[Ranges] = ((0, _MAX_CODE_POINT),)
_NEWLINE: Final[Ranges] = ((0x0A, 0x0A),)


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
    for name, table in _TABLES.items():
        if ranges == table:
            return _TABLE_BODIES[name]
    parts = []
    for lo, hi in ranges:
        if lo == hi:
            parts.append(_escape_code_point(lo, True))
        elif hi == lo + 1:
            parts.append(_escape_code_point(lo, True) + _escape_code_point(hi, True))
        else:
            parts.append(f"{_escape_code_point(lo, True)}-{_escape_code_point(hi, True)}")
    return "".join(parts)


def _emit_ranges(ranges: Ranges) -> str:
    """A stdlib atom matching exactly one code point from `ranges` (patterns are compiled DOTALL)."""
    if ranges == _ALL:
        return "."
    if not ranges:
        return "[^\\u0000-\\U0010ffff]"
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _escape_code_point(ranges[0][0], False)
    complement = _complement(ranges)
    if len(complement) < len(ranges) or any(complement == table for table in _TABLES.values()):
        return f"[^{_class_body(complement)}]"
    return f"[{_class_body(ranges)}]"


# ---------------------------------------------------------------------------------------------------
# Character sets and case folding, asked of `regex` itself
# ---------------------------------------------------------------------------------------------------

_CASE_FLAGS: Final = int(regex.IGNORECASE | regex.UNICODE)
# Code points that may have case variants; `_cased_code_points` keeps those that really do.
_CASE_CANDIDATES: Final = regex.compile(r"[\p{Cased}\p{Changes_When_Casemapped}\p{Changes_When_Casefolded}]")


def _all_cases(cp: int) -> list[int]:
    """The code points `regex` (V0, IGNORECASE) accepts for the literal `cp` (its engine's own table)."""
    cases: list[int] = _regex_engine.get_all_cases(_CASE_FLAGS, cp)
    return cases


@functools.cache
def _cased_code_points() -> tuple[int, ...]:
    """Every code point whose case-insensitive matching differs from exact matching.

    Only characters with a case property or case mapping can have case variants, so we ask `regex` for
    those (one scan of all code points) and keep the ones its case table actually relates.
    """
    everything = "".join(map(chr, range(_MAX_CODE_POINT + 1)))
    candidates = (match.start() for match in _CASE_CANDIDATES.finditer(everything))
    return tuple(cp for cp in candidates if len(_all_cases(cp)) > 1)


@functools.lru_cache(maxsize=4096)
def _literal_ranges(cp: int, ignore_case: bool) -> Ranges:
    """The code points a literal matches (with ``(?i)``: every case `regex` relates to it)."""
    if not ignore_case:
        return ((cp, cp),)
    return _normalise((c, c) for c in {cp, *_all_cases(cp)})


@functools.lru_cache(maxsize=1024)
def _resolve_set(source: str, breakpoints: frozenset[int], ignore_case: bool) -> Ranges:
    """Ask `regex` which code points the character set `source` matches.

    Membership can only change at `breakpoints` (the item boundaries we parsed), so testing both ends
    of every interval between breakpoints is exact; with ``(?i)`` every cased code point becomes its
    own interval. Asking `regex` rather than re-deriving its rules sidesteps its quirks (for instance
    ``[^\\s\\S]`` matches every character in `regex`).
    """
    compiled = regex.compile(source, regex.V0 | (regex.IGNORECASE if ignore_case else 0))
    points = set(breakpoints) | {0, _MAX_CODE_POINT + 1}
    if ignore_case:
        for cp in _cased_code_points():
            points.update((cp, cp + 1))
    edges = sorted(p for p in points if 0 <= p <= _MAX_CODE_POINT + 1)

    def member(cp: int) -> bool:
        return compiled.match(chr(cp)) is not None

    members: list[tuple[int, int]] = []
    for lo, nxt in pairwise(edges):
        hi = nxt - 1
        members.extend(_bisect_interval(member, lo, hi))
    return _normalise(members)


def _bisect_interval(member: Callable[[int], bool], lo: int, hi: int) -> list[tuple[int, int]]:
    """Member sub-ranges of [lo, hi], assuming membership is constant unless the ends disagree."""
    first, last = member(lo), member(hi)
    if first == last:
        return [(lo, hi)] if first else []
    mid = (lo + hi) // 2
    return _bisect_interval(member, lo, mid) + _bisect_interval(member, mid + 1, hi)


# ---------------------------------------------------------------------------------------------------
# AST
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chars:
    """Consumes one code point from `ranges`.

    The other fields remember what `regex` itself would build, because its optimiser (and therefore its
    partial-match shortcuts) depends on it: `kind` is "literal", "set" or "any"; `literal` is the code
    point written in the pattern; `ignore_case` is the node's case flag as `regex` records it.
    """

    ranges: Ranges
    kind: str
    literal: int | None = None
    ignore_case: bool = False


@dataclass(frozen=True)
class Assertion:
    """A zero-width test: string_start, string_end, string_end_line ($), line_start, line_end,
    boundary, non_boundary."""

    kind: str


@dataclass(frozen=True)
class Group:
    body: Node
    index: int
    name: str | None


@dataclass(frozen=True)
class Concat:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alternation:
    branches: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    body: Node
    min: int
    max: int | None
    lazy: bool


@dataclass(frozen=True)
class Lookaround:
    body: Node
    behind: bool
    positive: bool


Node = Chars | Assertion | Group | Concat | Alternation | Repeat | Lookaround


# ---------------------------------------------------------------------------------------------------
# Parser: `regex`'s V0 grammar (mirrors regex/_regex_core.py for the subset we translate)
# ---------------------------------------------------------------------------------------------------

_ALPHA: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS: Final = frozenset("0123456789")
_OCT_DIGITS: Final = frozenset("01234567")
_HEX_ESCAPES: Final = {"x": 2, "u": 4, "U": 8}
_CHARACTER_ESCAPES: Final = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}
_NAMED_CHAR_PART: Final = _ALPHA | _DIGITS | frozenset(" -")
# V0 is the default version; every other flag changes semantics we do not reproduce.
_SUPPORTED_FLAGS: Final = frozenset(("i", "m", "s", "x", "V0"))
_FLAG_NAMES: Final = frozenset((*"abefiLmprsuwx", "V0", "V1"))
_REFUSED_ESCAPES: Final = {
    "G": "\\G search anchor",
    "K": "\\K keep",
    "X": "\\X grapheme cluster",
    "R": "\\R line break",
    "L": "\\L named list",
    "m": "\\m word start",
    "M": "\\M word end",
    "h": "\\h horizontal space",
}


class _Source:
    """Cursor over the pattern; in verbose mode `get` skips whitespace and ``#`` comments, like regex."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.ignore_space = False

    def _skip(self, pos: int) -> int:
        text = self.text
        while pos < len(text):
            if text[pos].isspace():
                pos += 1
            elif text[pos] == "#":
                newline = text.find("\n", pos)
                pos = len(text) if newline < 0 else newline
            else:
                break
        return pos

    def get(self, override_ignore: bool = False) -> str:
        pos = self._skip(self.pos) if self.ignore_space and not override_ignore else self.pos
        if pos >= len(self.text):
            self.pos = pos
            return ""
        self.pos = pos + 1
        return self.text[pos]

    def peek(self) -> str:
        pos = self._skip(self.pos) if self.ignore_space else self.pos
        return self.text[pos] if pos < len(self.text) else ""

    def match(self, literal: str) -> bool:
        saved = self.pos
        for expected in literal:
            if self.get() != expected:
                self.pos = saved
                return False
        return True

    def get_while(self, allowed: frozenset[str], keep_spaces: bool = False) -> str:
        chars: list[str] = []
        while True:
            saved = self.pos
            ch = self.get(override_ignore=keep_spaces)
            if not ch or ch not in allowed:
                self.pos = saved
                return "".join(chars)
            chars.append(ch)

    def get_until(self, stops: frozenset[str]) -> str:
        chars: list[str] = []
        while True:
            saved = self.pos
            ch = self.get()
            if not ch or ch in stops:
                self.pos = saved
                return "".join(chars)
            chars.append(ch)


@dataclass
class _Flags:
    ignore_case: bool = False
    multiline: bool = False
    dotall: bool = True
    verbose: bool = False

    def copy(self) -> _Flags:
        return _Flags(self.ignore_case, self.multiline, self.dotall, self.verbose)


class _Parser:
    """Recursive-descent parser following `regex`'s V0 grammar.

    The pattern has already been accepted by `regex`, so syntax errors cannot occur; every branch
    either builds a node or raises `UnsupportedRegex`.
    """

    def __init__(self, pattern: str) -> None:
        self.source = _Source(pattern)
        self.flags = _Flags()
        self.group_count = 0
        self.group_names: dict[str, int] = {}

    # -- structure ------------------------------------------------------------------------------

    def parse(self) -> Node:
        node = self.parse_alternation()
        if self.source.get():
            raise UnsupportedRegex("unbalanced parenthesis", "regex accepted text this parser does not")
        return node

    def parse_alternation(self) -> Node:
        branches = [self.parse_sequence()]
        while self.source.match("|"):
            branches.append(self.parse_sequence())
        return branches[0] if len(branches) == 1 else Alternation(tuple(branches))

    def parse_sequence(self) -> Node:
        # `None` marks "nothing to repeat here" exactly like regex's parser, which lets a quantifier after
        # an inline flag group or comment apply to the element before it.
        items: list[Node | None] = [None]
        source = self.source
        while True:
            saved = source.pos
            ch = source.get()
            if ch in ("", ")", "|"):
                source.pos = saved
                break
            if ch == "\\":
                escaped = self.parse_escape(in_set=False)
                items.append(self.literal(escaped) if isinstance(escaped, int) else escaped)
            elif ch == "(":
                element = self.parse_paren()
                if element is not None:
                    items.append(element)
            elif ch == ".":
                items.append(Chars(_ALL if self.flags.dotall else _complement(_NEWLINE), "any"))
            elif ch == "[":
                items.append(self.parse_set())
            elif ch == "^":
                items.append(Assertion("line_start" if self.flags.multiline else "string_start"))
            elif ch == "$":
                items.append(Assertion("line_end" if self.flags.multiline else "string_end_line"))
            elif ch in "?*+{":
                counts = self.parse_quantifier(ch)
                if counts is None:
                    self.check_not_fuzzy(ch)
                    items.append(self.literal(ord(ch)))
                else:
                    self.apply_quantifier(items, counts)
                    items.append(None)
            else:
                items.append(self.literal(ord(ch)))
        return Concat(tuple(item for item in items if item is not None))

    def parse_quantifier(self, ch: str) -> tuple[int, int | None] | None:
        simple = {"?": (0, 1), "*": (0, None), "+": (1, None)}
        if ch in simple:
            return simple[ch]
        saved = self.source.pos
        low = self.source.get_while(_DIGITS)
        if self.source.match(","):
            high = self.source.get_while(_DIGITS)
            counts: tuple[int, int | None] = (int(low or 0), int(high) if high else None)
        elif low:
            counts = (int(low), int(low))
        else:
            self.source.pos = saved
            return None
        if not self.source.match("}"):
            self.source.pos = saved
            return None
        return counts

    def check_not_fuzzy(self, ch: str) -> None:
        """Refuse ``{...}`` that `regex` reads as a fuzzy-matching constraint rather than literal text."""
        if ch != "{":
            return
        saved = self.source.pos
        try:
            fuzzy = _fuzzy_constraint_follows(self.source)
        finally:
            self.source.pos = saved
        if fuzzy:
            raise UnsupportedRegex("fuzzy matching", "regex reads this {...} as an approximate-match constraint")

    def apply_quantifier(self, items: list[Node | None], counts: tuple[int, int | None]) -> None:
        element = items.pop()
        assert element is not None  # regex would have raised "nothing to repeat"
        saved = self.source.pos
        suffix = self.source.get()
        lazy = suffix == "?"
        if suffix == "+":
            raise UnsupportedRegex("possessive quantifier", "stdlib re before Python 3.11 has no possessive repeats")
        if not lazy:
            self.source.pos = saved
        low, high = counts
        # regex drops quantifiers on empty items and on {1,1}; keeping that keeps group numbering and
        # partial-match structure identical.
        if not _is_empty(element) and (low != 1 or high != 1):
            element = Repeat(element, low, high, lazy)
        items.append(element)

    # -- parentheses ----------------------------------------------------------------------------

    def parse_paren(self) -> Node | None:
        source = self.source
        saved = source.pos
        ch = source.get(override_ignore=True)
        if ch == "?":
            saved_2 = source.pos
            ch = source.get(override_ignore=True)
            if ch == "<":
                saved_3 = source.pos
                ch = source.get()
                if ch in ("=", "!"):
                    return self.parse_lookaround(behind=True, positive=ch == "=")
                source.pos = saved_3
                name = self.parse_name()
                source.match(">")
                return self.parse_group(name)
            if ch in ("=", "!"):
                return self.parse_lookaround(behind=False, positive=ch == "=")
            if ch == "P":
                return self.parse_extension()
            if ch == "#":
                self.skip_comment()
                return None
            refused = {
                "(": ("conditional group", "stdlib conditionals differ from regex's"),
                ">": ("atomic group", "stdlib re before Python 3.11 has no atomic groups"),
                "|": ("branch reset group", "stdlib re has no branch reset"),
                "R": ("recursion", "stdlib re cannot recurse"),
                "&": ("group call", "stdlib re cannot call groups"),
            }
            if ch in refused:
                raise UnsupportedRegex(*refused[ch])
            if ch.isdigit() or (ch in "+-" and source.peek().isdigit()):
                raise UnsupportedRegex("group call", "stdlib re cannot call groups")
            source.pos = saved_2
            return self.parse_flags_group()
        if ch == "*":
            raise UnsupportedRegex("control verb", "stdlib re has no backtracking control verbs")
        source.pos = saved
        return self.parse_group(None)

    def parse_name(self) -> str:
        name = self.source.get_until(frozenset(")>"))
        if name.isdigit() or not name.isidentifier():
            raise UnsupportedRegex("group name", f"{name!r} is not a valid stdlib group name")
        return name

    def parse_group(self, name: str | None) -> Node:
        self.group_count += 1
        index = self.group_count
        if name is not None:
            if name in self.group_names:
                raise UnsupportedRegex("duplicate group name", "stdlib re requires unique group names")
            self.group_names[name] = index
        body = self.parse_scoped(self.flags.copy())
        return Group(body, index, name)

    def parse_scoped(self, flags: _Flags) -> Node:
        """Parse up to the closing parenthesis with `flags`, restoring the outer flags afterwards."""
        saved = self.flags
        self.flags = flags
        self.source.ignore_space = flags.verbose
        try:
            body = self.parse_alternation()
            if not self.source.match(")"):
                raise UnsupportedRegex("unbalanced parenthesis", "regex accepted text this parser does not")
        finally:
            self.flags = saved
            self.source.ignore_space = saved.verbose
        return body

    def parse_lookaround(self, behind: bool, positive: bool) -> Node:
        return Lookaround(self.parse_scoped(self.flags.copy()), behind, positive)

    def parse_extension(self) -> Node:
        ch = self.source.get()
        if ch == "<":
            name = self.parse_name()
            self.source.match(">")
            return self.parse_group(name)
        if ch == "=":
            raise UnsupportedRegex("backreference", "partial matching of backreferences cannot be reproduced")
        raise UnsupportedRegex("group call", "stdlib re cannot call groups")

    def skip_comment(self) -> None:
        source = self.source
        while True:
            saved = source.pos
            ch = source.get(override_ignore=True)
            if not ch or ch == ")":
                break
            if ch == "\\":
                source.get(override_ignore=True)
        source.pos = saved
        source.match(")")

    def parse_flags_group(self) -> Node | None:
        """``(?flags)`` (positional, for the rest of the enclosing group) or ``(?flags:...)`` (scoped)."""
        on = self.parse_flag_letters()
        off = self.parse_flag_letters() if self.source.match("-") else []
        for letter in on + off:
            if letter not in _SUPPORTED_FLAGS:
                raise UnsupportedRegex(
                    f"(?{letter}) flag", "only the i, m, s, x and V0 inline flags can be translated exactly"
                )
        flags = self.flags.copy()
        for letter, value in [(letter, True) for letter in on] + [(letter, False) for letter in off]:
            if letter == "i":
                flags.ignore_case = value
            elif letter == "m":
                flags.multiline = value
            elif letter == "s":
                flags.dotall = value
            elif letter == "x":
                flags.verbose = value
        if self.source.match(":"):
            return self.parse_scoped(flags)
        self.source.match(")")
        self.flags = flags
        self.source.ignore_space = flags.verbose
        return None

    def parse_flag_letters(self) -> list[str]:
        letters: list[str] = []
        while True:
            saved = self.source.pos
            ch = self.source.get()
            if ch == "V":
                ch += self.source.get()
            if ch not in _FLAG_NAMES:
                self.source.pos = saved
                return letters
            letters.append(ch)

    # -- escapes --------------------------------------------------------------------------------

    def parse_escape(self, in_set: bool) -> int | Node:
        """Parse what follows a backslash: a code point for character escapes, else a node."""
        source = self.source
        saved_ignore = source.ignore_space
        source.ignore_space = False
        ch = source.get()
        source.ignore_space = saved_ignore
        if ch in _HEX_ESCAPES:
            return int("".join(source.get() for _ in range(_HEX_ESCAPES[ch])), 16)
        if ch == "g" and not in_set:
            if source.peek() == "<":
                raise UnsupportedRegex("backreference", "partial matching of backreferences cannot be reproduced")
            return ord("g")
        if ch == "N":
            return self.parse_named_char()
        if ch in ("p", "P"):
            saved = source.pos
            nxt = source.get()
            if nxt == "{" or (nxt and nxt in "CLMNPSZ"):
                raise UnsupportedRegex("\\p{...} property", "Unicode properties are not translated")
            source.pos = saved
            return ord(ch)
        if ch in _ALPHA:
            return self.parse_alpha_escape(ch, in_set)
        if ch in _DIGITS:
            return self.parse_numeric_escape(ch, in_set)
        return ord(ch)

    def parse_alpha_escape(self, ch: str, in_set: bool) -> int | Node:
        if not in_set:
            positions = {
                "A": "string_start",
                "Z": "string_end",
                "z": "string_end",
                "b": "boundary",
                "B": "non_boundary",
            }
            if ch in positions:
                return Assertion(positions[ch])
        if ch in _REFUSED_ESCAPES:
            raise UnsupportedRegex(_REFUSED_ESCAPES[ch], "no exact stdlib equivalent")
        if ch.lower() in _TABLES:
            table = _TABLES[ch.lower()]
            return Chars(table if ch.islower() else _complement(table), "set")
        return _CHARACTER_ESCAPES[ch]

    def parse_numeric_escape(self, ch: str, in_set: bool) -> int:
        source = self.source
        if in_set or ch == "0":
            digits = ch
            while len(digits) < 3:
                saved = source.pos
                nxt = source.get()
                if not nxt or nxt not in _OCT_DIGITS:
                    source.pos = saved
                    break
                digits += nxt
            return int(digits, 8)
        second = source.get()
        if second and second in _DIGITS:
            third = source.get()
            if third and third in _OCT_DIGITS and ch in _OCT_DIGITS and second in _OCT_DIGITS:
                return int(ch + second + third, 8) & 0x1FF
        raise UnsupportedRegex("backreference", "partial matching of backreferences cannot be reproduced")

    def parse_named_char(self) -> int:
        source = self.source
        saved = source.pos
        if source.match("{"):
            name = source.get_while(_NAMED_CHAR_PART, keep_spaces=True)
            if source.match("}"):
                return ord(unicodedata.lookup(name))
        source.pos = saved
        return ord("N")

    def literal(self, cp: int) -> Chars:
        ignore_case = self.flags.ignore_case
        return Chars(_literal_ranges(cp, ignore_case), "literal", cp, ignore_case)

    # -- sets -----------------------------------------------------------------------------------

    def parse_set(self) -> Chars:
        """Parse ``[...]`` to find its extent and item boundaries, then ask `regex` for its members."""
        source = self.source
        start = source.pos - 1
        saved_ignore = source.ignore_space
        source.ignore_space = False
        breakpoints: set[int] = set()
        try:
            negated = source.match("^")
            members = [self.parse_set_member(breakpoints)]
            while not source.match("]"):
                members.append(self.parse_set_member(breakpoints))
        finally:
            source.ignore_space = saved_ignore
        text = source.text[start : source.pos]
        ignore_case = self.flags.ignore_case
        ranges = _resolve_set(text, frozenset(breakpoints), ignore_case)
        # Mirror what regex's parser turns small sets into: [x] is the character x, [^x] a negated
        # character, and a negated set that covers everything (such as [^\s\S]) becomes "any".
        if len(members) == 1 and members[0] is not None:
            return Chars(ranges, "negated_literal" if negated else "literal", members[0], ignore_case)
        if negated and ranges == _ALL:
            return Chars(ranges, "any", None, ignore_case)
        return Chars(ranges, "set", None, ignore_case)

    def parse_set_member(self, breakpoints: set[int]) -> int | None:
        """Parse one member (a character, range or class); return its code point if it is one character."""
        first = self.parse_set_item(breakpoints)
        if first is None or not self.source.match("-"):
            return first
        saved = self.source.pos
        if self.source.match("]"):
            self.source.pos = saved
            breakpoints.update((0x2D, 0x2E))
            return None
        last = self.parse_set_item(breakpoints)
        if last is None:
            breakpoints.update((0x2D, 0x2E))
            return None
        breakpoints.update((first, last + 1))
        return first if first == last else None

    def parse_set_item(self, breakpoints: set[int]) -> int | None:
        """Record an item's boundaries; return its code point if it is a single character."""
        source = self.source
        if source.match("\\"):
            item = self.parse_escape(in_set=True)
            if isinstance(item, int):
                breakpoints.update((item, item + 1))
                return item
            assert isinstance(item, Chars)
            for lo, hi in item.ranges:
                breakpoints.update((lo, hi + 1))
            return None
        if source.text.startswith("[:", source.pos) and _posix_class_follows(source.text, source.pos + 2):
            raise UnsupportedRegex("POSIX character class", "[[:name:]] is a property in regex but literal in re")
        ch = source.get()
        breakpoints.update((ord(ch), ord(ch) + 1))
        return ord(ch)


def _posix_class_follows(text: str, pos: int) -> bool:
    """Whether regex would read ``[:...:]`` at `pos` as a POSIX class (conservatively: a ``:]`` follows)."""
    match = re.compile(r"\^?[A-Za-z0-9 &_\-.]*(?:[:=][A-Za-z0-9 &_\-./]*)?:\]").match(text, pos)
    return match is not None


class _NotFuzzy(Exception):
    """regex's internal ParseError: the text is not a fuzzy constraint after all."""


def _fuzzy_constraint_follows(source: _Source) -> bool:
    """Mirror regex's `parse_fuzzy`: is the text after ``{`` a list of fuzzy-matching constraints?"""
    try:
        _fuzzy_item(source)
        while source.match(","):
            _fuzzy_item(source)
    except _NotFuzzy:
        return False
    return True


def _fuzzy_item(source: _Source) -> None:
    saved = source.pos
    try:
        _fuzzy_cost_constraint(source)
    except _NotFuzzy:
        source.pos = saved
        _fuzzy_cost_equation(source)


def _fuzzy_compare(source: _Source) -> bool:
    return source.match("<=") or source.match("<")


def _fuzzy_cost_constraint(source: _Source) -> None:
    saved = source.pos
    ch = source.get()
    if ch and ch in _ALPHA:
        if ch not in "deis":
            raise _NotFuzzy
        if _fuzzy_compare(source):
            source.get_while(_DIGITS)
        return
    if ch and ch in _DIGITS:
        source.pos = saved
        source.get_while(_DIGITS)
        if not _fuzzy_compare(source) or source.get() not in tuple("deis") or not _fuzzy_compare(source):
            raise _NotFuzzy
        source.get_while(_DIGITS)
        return
    raise _NotFuzzy


def _fuzzy_cost_equation(source: _Source) -> None:
    while True:
        source.get_while(_DIGITS)
        if source.get() not in tuple("dis"):
            raise _NotFuzzy
        if not source.match("+"):
            break
    if not _fuzzy_compare(source):
        raise _NotFuzzy
    source.get_while(_DIGITS)


def _is_empty(node: Node) -> bool:
    """regex's `is_empty`: an empty sequence, or a positive lookaround / sequence of such."""
    if isinstance(node, Concat):
        return all(_is_empty(item) for item in node.items)
    if isinstance(node, Lookaround):
        return node.positive and _is_empty(node.body)
    if isinstance(node, Repeat):
        return _is_empty(node.body)
    return False


# ---------------------------------------------------------------------------------------------------
# Emitting stdlib syntax
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
}


# Emitted fragments carry how tightly they bind, so we only add (?:...) where stdlib needs it.
_ATOM, _SEQUENCE, _ALTERNATION = 0, 1, 2


def _quantifier(low: int, high: int | None, lazy: bool) -> str:
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


def _emit(node: Node, captures: bool) -> tuple[str, int]:
    """Stdlib syntax for `node`; without `captures`, groups become non-capturing."""
    if isinstance(node, Chars):
        return _emit_ranges(node.ranges), _ATOM
    if isinstance(node, Assertion):
        return _ASSERTIONS[node.kind], _SEQUENCE
    if isinstance(node, Group):
        body = _emit(node.body, captures)[0]
        if not captures:
            return f"(?:{body})", _ATOM
        return (f"(?P<{node.name}>{body})" if node.name else f"({body})"), _ATOM
    if isinstance(node, Concat):
        if len(node.items) == 1:
            return _emit(node.items[0], captures)
        return "".join(_as_sequence_item(_emit(item, captures)) for item in node.items), _SEQUENCE
    if isinstance(node, Alternation):
        return "|".join(_emit(branch, captures)[0] for branch in node.branches), _ALTERNATION
    if isinstance(node, Repeat):
        body = _as_atom(_emit(node.body, captures))
        return body + _quantifier(node.min, node.max, node.lazy), _SEQUENCE
    opener = "(?" + ("<" if node.behind else "") + ("=" if node.positive else "!")
    return f"{opener}{_emit(node.body, captures)[0]})", _SEQUENCE


def _full(node: Node) -> str:
    return _emit(node, captures=True)[0]


def _plain(node: Node) -> str:
    """The node as a sequence item without capture groups (used inside the prefix pattern)."""
    return _as_sequence_item(_emit(node, captures=False))


def _either(first: str | None, second: str | None) -> str | None:
    """Alternation of two optional sequence items (``None`` matches nothing)."""
    if first is None:
        return second
    if second is None or second == first:
        return first
    return f"(?:{first}|{second})"


# ---------------------------------------------------------------------------------------------------
# Partial matches: where some path reads past the end of the text
# ---------------------------------------------------------------------------------------------------


def _prefix(node: Node) -> str | None:
    """A pattern matching at ``p`` iff some path of `node` from ``p`` tries to read past the end.

    ``None`` means no path ever does (zero-width nodes). The result is a sequence item.
    """
    if isinstance(node, Chars):
        return "\\Z"
    if isinstance(node, Assertion):
        return None
    if isinstance(node, Group):
        return _prefix(node.body)
    if isinstance(node, Concat):
        return _sequence_prefix(list(node.items))
    if isinstance(node, Alternation):
        result: str | None = None
        for branch in reversed(node.branches):
            result = _either(_prefix(branch), result)
        return result
    if isinstance(node, Repeat):
        return _repeat_prefix(node)
    if node.behind:
        return None
    # A lookahead's body reading past the end makes regex report a partial match immediately,
    # whether the lookahead is positive or negative.
    return _prefix(node.body)


# Characters of a literal run handled per level of nesting in the prefix pattern; stdlib `re` parses
# groups recursively, so one level per character would overflow on long delimiters.
_RUN_CHUNK: Final = 8


def _sequence_prefix(items: list[Node]) -> str | None:
    """``P(x1 x2 ... xn) = P(x1) | x1 P(x2 ... xn)``, with runs of single characters flattened into
    alternations (``\\Z | a\\Z | ab\\Z | abc P(rest)``) to keep the nesting shallow."""
    result: str | None = None
    index = len(items)
    while index > 0:
        start = index - 1
        if not isinstance(items[start], Chars):
            continued = None if result is None else _plain(items[start]) + result
            result = _either(_prefix(items[start]), continued)
            index = start
            continue
        while start > 0 and isinstance(items[start - 1], Chars):
            start -= 1
        atoms = [_plain(item) for item in items[start:index]]
        for chunk_start in reversed(range(0, len(atoms), _RUN_CHUNK)):
            chunk = atoms[chunk_start : chunk_start + _RUN_CHUNK]
            options = ["".join(chunk[:length]) + "\\Z" for length in range(len(chunk))]
            if result is not None:
                options.append("".join(chunk) + result)
            result = options[0] if len(options) == 1 else f"(?:{'|'.join(options)})"
        index = start
    return result


def _repeat_prefix(node: Repeat) -> str | None:
    """Paths through a repeat that read past the end, as `regex`'s three repeat opcodes see them.

    A hit in iteration ``j + 1`` (after ``j`` complete iterations) counts, except that

    * a lazy single-character repeat reads at the end of the text only while matching its ``min``
      mandatory characters, or right after them (its extension loop stops one short of the end), and
    * a general greedy repeat ignores a new iteration that would start exactly at the end once more
      than ``min`` iterations are done, if the body starts by reading a character (its look-ahead test
      says "partial" and is overruled).
    """
    body_prefix = _prefix(node.body)
    if body_prefix is None or node.max == 0:
        return None
    body = _as_atom(_emit(node.body, captures=False))
    if _is_single_character(node.body):
        if node.lazy:
            # The mandatory characters may run into the end; after that, the lazy loop reads one more
            # character only when those end exactly at the end of the text.
            extra = 1 if node.max is None or node.max > node.min else 0
            return _iterations(body, 0, node.min + extra) + body_prefix
        return _iterations(body, 0, node.max) + body_prefix
    if node.lazy or _first_test(node.body) == "other":
        return _iterations(body, 0, node.max) + body_prefix
    # regex compiles X{m,n} as m copies of X followed by X{0,n-m}; only iterations after the first
    # one of that remaining repeat are subject to the end-of-text rule.
    first = node.min + 1
    if node.max is not None and node.max <= first:
        return _iterations(body, 0, node.max) + body_prefix
    early = _iterations(body, 0, first) + body_prefix
    late = _iterations(body, first, node.max) + "(?!\\Z)" + body_prefix
    return f"(?:{early}|{late})"


def _iterations(body: str, low: int, high: int | None) -> str:
    """`body` repeated between `low` and ``high - 1`` times (``high=None``: unbounded), spelled simply."""
    last = None if high is None else high - 1
    if last == 0:
        return ""
    if (low, last) == (1, 1):
        return body
    return body + _quantifier(low, last, False)


# ---------------------------------------------------------------------------------------------------
# What `regex` compiles a node into (its optimiser decides which engine shortcuts apply)
# ---------------------------------------------------------------------------------------------------


def _is_single_character(node: Node) -> bool:
    """Whether `regex` compiles `node` to a single-character node (so a repeat of it is a *_REPEAT_ONE).

    Its optimiser unwraps one-item sequences and merges an alternation of single characters with the
    same case flag into one set.
    """
    if isinstance(node, Chars):
        return True
    if isinstance(node, Concat):
        return len(node.items) == 1 and _is_single_character(node.items[0])
    if isinstance(node, Alternation):
        branches = [_unwrap(branch) for branch in _flatten_alternation(node)]
        if not all(isinstance(b, Chars) and b.kind != "any" for b in branches):
            return False
        return len({b.ignore_case for b in branches if isinstance(b, Chars)}) == 1
    return False


def _unwrap(node: Node) -> Node:
    while isinstance(node, Concat) and len(node.items) == 1:
        node = node.items[0]
    return node


def _flatten_alternation(node: Alternation) -> list[Node]:
    branches: list[Node] = []
    for branch in node.branches:
        inner = _unwrap(branch)
        branches.extend(_flatten_alternation(inner) if isinstance(inner, Alternation) else [branch])
    return branches


def _flat_items(node: Node) -> list[Node]:
    """The items of a sequence after `regex` flattens nested non-capturing sequences."""
    if isinstance(node, Concat):
        return [item for child in node.items for item in _flat_items(child)]
    return [node]


def _linear_items(node: Node) -> list[Node]:
    """Sequence items with capture groups opened up, as regex's test search walks past group markers."""
    if isinstance(node, Concat):
        return [item for child in node.items for item in _linear_items(child)]
    if isinstance(node, Group):
        return _linear_items(node.body)
    return [node]


def _first_test(node: Node) -> str:
    """What `regex`'s look-ahead test at the start of `node` is: "consume" (reads a character, so it
    reports partial at the end), "other" (a zero-width or opaque node) or "unknown" (depends on
    optimisations we do not mirror)."""
    items = _flat_items(node)
    if not items:
        return "other"
    first = items[0]
    if isinstance(first, Chars):
        return "consume"
    if isinstance(first, Group):
        return _first_test(first.body)
    if isinstance(first, Repeat):
        # regex emits the `min` mandatory iterations as plain copies before the repeat node itself.
        return "other" if first.min == 0 else _first_test(first.body)
    if isinstance(first, Alternation):
        return _alternation_test(first)
    return "other"


def _alternation_test(node: Alternation) -> str:
    if _is_single_character(node):
        return "consume"
    heads = [_flat_items(branch) for branch in _flatten_alternation(node)]
    if any(not head for head in heads):
        return "other"  # an empty branch: no common prefix can be split off
    firsts = [head[0] for head in heads]
    literals = [(f.literal, f.ignore_case) if isinstance(f, Chars) and f.kind == "literal" else None for f in firsts]
    if None not in literals:
        # regex moves a common leading literal out of the alternation; distinct literals stay a BRANCH.
        return "consume" if len(set(literals)) == 1 else "other"
    if not all(isinstance(f, Chars) for f in firsts):
        # A common leading item that is not a character is zero-width or opaque to the test either way.
        return "other"
    chars = [f for f in firsts if isinstance(f, Chars)]
    if len({(f.ranges, f.ignore_case) for f in chars}) > 1:
        return "other"  # the leading sets differ, so nothing is factored out
    return "unknown"  # equal sets: factored out only if regex considers the nodes equal


# ---------------------------------------------------------------------------------------------------
# Partial matches: effects of `regex`'s search loop
# ---------------------------------------------------------------------------------------------------


def _end_of_text_rule(root: Node) -> str:
    """How `regex` treats start positions in a partial search: "always" partial at ``len(text)``,
    "natural" (the pattern is evaluated at the end like anywhere else) or "anchored" (only position 0
    is ever tried).

    `regex` searches with a prefilter on the first character when the pattern starts with one (or when
    it can compute the set of possible first characters); scanning for it runs into the end of the
    text, which counts as partial before any leading assertion or lookbehind is evaluated. A pattern
    whose start test is the string start (``^``/``\\A``) is only tried at position 0.
    """
    if _has_simple_start(root):
        return "always" if _start_test(root) == "char" else "natural"
    if _firstset(root) is not None:
        items = _flat_items(root)
        anchored = bool(items) and isinstance(items[0], Assertion) and items[0].kind == "string_start"
        return "anchored" if anchored else "always"
    leading = _leading_test(root)
    return {"char": "always", "anchored": "anchored"}.get(leading or "", "natural")


def _skip_ahead_prefix(root: Node) -> str | None:
    """The extra partial matches caused by `regex` skipping ahead after a failed attempt.

    When a pattern starts with a lazy single-character repeat (``.*?``), a failed attempt at ``q``
    makes `regex` skip the characters that repeat could have consumed; they run to the end of the text,
    so it skips past the end, which its search loop reports as a partial match starting at ``q``.
    (Lazy single-character repeats other than an unbounded one of every character are refused.)
    """
    items = _flat_items(root)
    first = items[0] if items else None
    starts_lazily = isinstance(first, Repeat) and first.lazy and (first.min, first.max) == (0, None)
    if starts_lazily and isinstance(first, Repeat) and _is_single_character(first.body):
        return "(?!\\Z)"
    return None


def _start_is_dotall_dot(root: Node) -> bool:
    """Whether the pattern's first node is a DOTALL ``.``.

    At ``q == len(text)`` `regex` then reads an uninitialised position and returns partial, no match,
    or a malformed full match depending on stack contents; no translation can reproduce that.
    """
    items = _flat_items(root)
    return bool(items) and isinstance(items[0], Chars) and items[0].kind == "any"


def _has_simple_start(node: Node) -> bool:
    items = _flat_items(node)
    if not items:
        return False
    first = items[0]
    if isinstance(first, Chars):
        return True
    if isinstance(first, Group):
        return _has_simple_start(first.body)
    if isinstance(first, Alternation):
        return _alternation_test(first) == "consume"
    return False


def _start_test(node: Node) -> str | None:
    """The start test of a pattern with a "simple start" (a first node that reads one character)."""
    if not _has_simple_start(node):
        return None
    items = _flat_items(node)
    first = items[0]
    while isinstance(first, Group):
        first = _flat_items(first.body)[0]
    return "any" if isinstance(first, Chars) and first.kind == "any" else "char"


def _firstset(node: Node) -> list[Chars] | None:
    """regex's `get_firstset` + `_check_firstset`: the possible first characters, if it builds them."""
    members = _firstset_members(node)
    if None in members:
        return None
    chars = [member for member in members if member is not None]
    if not chars or any(member.kind in ("negated_literal", "any") for member in chars):
        return None
    return chars


def _firstset_members(node: Node) -> list[Chars | None]:
    if isinstance(node, Chars):
        return [node]
    if isinstance(node, Assertion):
        return [None]
    if isinstance(node, Lookaround):
        return _firstset_members(node.body) if node.positive and not node.behind else [None]
    if isinstance(node, Group):
        return _firstset_members(node.body)
    if isinstance(node, Repeat):
        members = _firstset_members(node.body)
        return members + [None] if node.min == 0 else members
    if isinstance(node, Alternation):
        union = [member for branch in node.branches for member in _firstset_members(branch)]
        return union or [None]
    collected: list[Chars | None] = []
    for item in node.items:
        collected.extend(_firstset_members(item))
        if None not in collected:
            return collected
        collected = [member for member in collected if member is not None]
    return collected + [None]


def _leading_test(node: Node) -> str | None:
    """Without a first-character set, regex's start test is the first node past group boundaries,
    lookarounds and mandatory repeats: "char" (scans to the end of the text and reports partial),
    "any", "anchored" (the string start) or None (anything else)."""
    for item in _linear_items(node):
        if isinstance(item, Lookaround):
            continue
        if isinstance(item, Repeat) and item.min > 0:
            if _is_single_character(item.body):
                body = _unwrap(item.body)
                return "any" if isinstance(body, Chars) and body.kind == "any" else "char"
            return _leading_test(item.body)
        if isinstance(item, Chars):
            return "any" if item.kind == "any" else "char"
        if isinstance(item, Assertion) and item.kind == "string_start":
            return "anchored"
        return None
    return None


# ---------------------------------------------------------------------------------------------------
# Structural checks and metadata
# ---------------------------------------------------------------------------------------------------


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, (Group, Repeat, Lookaround)):
        return (node.body,)
    if isinstance(node, Concat):
        return node.items
    if isinstance(node, Alternation):
        return node.branches
    return ()


def _walk(node: Node) -> Iterator[Node]:
    yield node
    for child in _children(node):
        yield from _walk(child)


def _width(node: Node) -> tuple[int, int | None]:
    """Minimum and maximum number of characters `node` consumes (``None``: unbounded)."""
    if isinstance(node, Chars):
        return 1, 1
    if isinstance(node, (Assertion, Lookaround)):
        return 0, 0
    if isinstance(node, Group):
        return _width(node.body)
    if isinstance(node, Repeat):
        low, high = _width(node.body)
        if node.max is None:
            return low * node.min, None if high != 0 else 0
        return low * node.min, None if high is None else high * node.max
    widths = [_width(child) for child in _children(node)]
    if isinstance(node, Concat):
        total_high: int | None = 0
        for _, high in widths:
            total_high = None if total_high is None or high is None else total_high + high
        return sum(low for low, _ in widths), total_high
    lows = [low for low, _ in widths]
    highs = [high for _, high in widths]
    return min(lows), None if None in highs else max(h for h in highs if h is not None)


def _reads_ahead(node: Node) -> bool:
    """Whether `node` consumes characters or looks ahead (either can run into the end of the text)."""
    if isinstance(node, (Chars, Lookaround)):
        return isinstance(node, Chars) or not node.behind
    if isinstance(node, Repeat) and node.max == 0:
        return False
    return any(_reads_ahead(child) for child in _children(node))


def _check_lookarounds(node: Node, followed: bool) -> None:
    """Refuse the lookarounds whose partial-match behaviour in regex we cannot reproduce.

    `followed` says whether something that reads ahead may come after `node` on some path.
    """
    if isinstance(node, Lookaround):
        _check_lookaround(node, followed)
        return
    if isinstance(node, Concat):
        for item in reversed(node.items):
            _check_lookarounds(item, followed)
            followed = followed or _reads_ahead(item)
        return
    if isinstance(node, Repeat):
        again = node.max is None or node.max > 1
        _check_lookarounds(node.body, followed or (again and _reads_ahead(node.body)))
        return
    for child in _children(node):
        _check_lookarounds(child, followed)


def _check_lookaround(node: Lookaround, followed: bool) -> None:
    if any(isinstance(inner, Lookaround) for inner in _walk(node.body)):
        raise UnsupportedRegex("nested lookaround", "regex's partial matching inside nested lookarounds differs")
    if node.behind:
        low, high = _width(node.body)
        if low != high:
            raise UnsupportedRegex("variable-width lookbehind", "stdlib re only supports fixed-width lookbehind")
        if any(isinstance(inner, Group) for inner in _walk(node.body)):
            raise UnsupportedRegex(
                "capture group in lookbehind", "regex matches lookbehinds right to left, so captures can differ"
            )
        return
    if followed:
        raise UnsupportedRegex(
            "lookahead followed by more pattern",
            "regex's partial search skips start positions using prefilters that ignore lookahead bodies",
        )
    low, high = _width(node.body)
    if low != high:
        raise UnsupportedRegex(
            "variable-width lookahead",
            "regex reports the first lookahead path in backtracking order to hit the end, which re cannot express",
        )


def _check_repeats(root: Node) -> None:
    """Refuse repeats whose partial-match behaviour in `regex` depends on shortcuts we do not mirror."""
    for node in _walk(root):
        if not isinstance(node, Repeat) or node.max == 0:
            continue
        if node.lazy and _is_single_character(node.body):
            body = _unwrap(node.body)
            full_set = node.max is None and (
                (isinstance(body, Chars) and body.ranges == _ALL)
                or (isinstance(body, Alternation) and _union_ranges(body) == _ALL)
            )
            if not full_set:
                raise UnsupportedRegex(
                    "lazy single-character repeat",
                    "regex's partial search takes shortcuts for lazy repeats of one character (other than an "
                    "unbounded '.*?') and reports partial matches that cannot occur",
                )
        elif _greedy_iteration_test_is_unknown(node) and _prefix(node.body) is not None:
            raise UnsupportedRegex(
                "repeated alternation",
                "whether regex's partial search can start a new iteration at the end of the text depends "
                "on how its optimiser factors this alternation",
            )


def _greedy_iteration_test_is_unknown(node: Repeat) -> bool:
    return not node.lazy and not _is_single_character(node.body) and _first_test(node.body) == "unknown"


def _union_ranges(node: Alternation) -> Ranges:
    ranges: list[tuple[int, int]] = []
    for branch in _flatten_alternation(node):
        inner = _unwrap(branch)
        if isinstance(inner, Chars):
            ranges.extend(inner.ranges)
    return _normalise(ranges)


def _history(root: Node) -> int | None:
    history = 0
    for node in _walk(root):
        if isinstance(node, Assertion) and node.kind in ("boundary", "non_boundary", "line_start"):
            history = max(history, 1)
        elif isinstance(node, Lookaround) and node.behind:
            width = _width(node.body)[1]
            if width is None:
                return None
            history = max(history, width)
    return history
