"""`regex`'s V0 grammar -> `rtcompile.regex.ast`: the one reader of `regex`-dialect pattern text.

`parse_regex` mirrors `regex/_regex_core.py` (sequences, quantifiers, groups and inline flags here;
escapes, sets and fuzzy constraints in their own modules) and builds a node for every construct
`regex` accepts. Everything else in the package -- the stdlib translation, first characters,
diagnostics, lint, the fuzzer -- reads the resulting tree.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Final

import regex

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
    InlineFlag,
    Lookaround,
    Node,
    Opaque,
    ParsedRegex,
    Repeat,
    Untranslatable,
    is_empty,
)
from rtcompile.regex.charsets import ALL, NEWLINE, complement, literal_ranges
from rtcompile.regex.cursor import PatternCursor
from rtcompile.regex.errors import InvalidRegex, UnsupportedRegex
from rtcompile.regex.escapes import DIGITS, parse_escape
from rtcompile.regex.fuzzy import is_actually_fuzzy, looks_fuzzy, read_fuzzy_constraint
from rtcompile.regex.sets import parse_set

__all__ = ["parse_regex"]

_FLAG_NAMES: Final = frozenset((*"abefiLmprsuwx", "V0", "V1"))
_VERBS: Final = frozenset(("FAIL", "F", "PRUNE", "SKIP"))


@functools.lru_cache(maxsize=1024)
def parse_regex(pattern: str) -> ParsedRegex:
    """Parse a pattern as ``regex.compile(pattern, regex.DOTALL)`` reads it.

    Raises `InvalidRegex` if `regex` rejects the pattern, and `UnsupportedRegex` in the (unknown)
    cases where this mirror of its grammar cannot follow text `regex` accepted.
    """
    try:
        regex.compile(pattern, regex.DOTALL)
    except regex.error as exc:
        raise InvalidRegex(str(exc)) from exc
    return _Parser(pattern).parse()


@dataclass
class _Flags:
    """The scoped flags the tree reflects (the others are recorded in `ParsedRegex.inline_flags`)."""

    ignore_case: bool = False
    multiline: bool = False
    dotall: bool = True
    verbose: bool = False

    def copy(self) -> _Flags:
        return _Flags(self.ignore_case, self.multiline, self.dotall, self.verbose)


class _Parser:
    """Recursive-descent parser following `regex`'s V0 grammar.

    The pattern has already been accepted by `regex`, so syntax errors cannot occur.
    """

    def __init__(self, pattern: str) -> None:
        self.source = PatternCursor(pattern)
        self.flags = _Flags()
        self.group_count = 0
        self.group_names: dict[str, int] = {}
        self.inline_flags: list[InlineFlag] = []

    def parse(self) -> ParsedRegex:
        root = self.parse_alternation()
        if self.source.get():
            raise UnsupportedRegex("unbalanced parenthesis", "regex accepted text this parser does not")
        text = self.source.text
        return ParsedRegex(text, root, self.group_count, dict(self.group_names), tuple(self.inline_flags))

    # -- sequences and quantifiers ------------------------------------------------------------------

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
                escaped = parse_escape(source, in_set=False, ignore_case=self.flags.ignore_case)
                items.append(self.literal(escaped) if isinstance(escaped, int) else escaped)
            elif ch == "(":
                element = self.parse_paren()
                if element is not None:
                    items.append(element)
            elif ch == ".":
                items.append(Chars(ALL if self.flags.dotall else complement(NEWLINE), "any"))
            elif ch == "[":
                items.append(parse_set(source, self.flags.ignore_case))
            elif ch == "^":
                items.append(Assertion("line_start" if self.flags.multiline else "string_start"))
            elif ch == "$":
                items.append(Assertion("line_end" if self.flags.multiline else "string_end_line"))
            elif ch in "?*+{":
                counts = self.parse_quantifier(ch)
                if counts is not None:
                    self.apply_quantifier(items, counts)
                    items.append(None)
                elif ch == "{" and looks_fuzzy(source):
                    self.apply_fuzzy_constraint(items, source.pos - 1)
                else:
                    items.append(self.literal(ord(ch)))
            else:
                items.append(self.literal(ord(ch)))
        return Concat(tuple(item for item in items if item is not None))

    def parse_quantifier(self, ch: str) -> tuple[int, int | None] | None:
        simple = {"?": (0, 1), "*": (0, None), "+": (1, None)}
        if ch in simple:
            return simple[ch]
        saved = self.source.pos
        low = self.source.get_while(DIGITS)
        if self.source.match(","):
            high = self.source.get_while(DIGITS)
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

    def apply_quantifier(self, items: list[Node | None], counts: tuple[int, int | None]) -> None:
        element = items.pop()
        assert element is not None  # regex would have raised "nothing to repeat"
        saved = self.source.pos
        suffix = self.source.get()
        lazy = suffix == "?"
        possessive = suffix == "+"
        if not (lazy or possessive):
            self.source.pos = saved
        low, high = counts
        # regex drops quantifiers on empty items and on {1,1}; keeping that keeps group numbering and
        # partial-match structure identical.
        if not is_empty(element) and (low != 1 or high != 1):
            element = Repeat(element, low, high, lazy, possessive, saved if possessive else -1)
        elif possessive:
            # Nothing is repeated, but the translation has always refused the spelling.
            element = Repeat(element, 1, 1, False, True, saved)
        items.append(element)

    def apply_fuzzy_constraint(self, items: list[Node | None], position: int) -> None:
        """``{...}`` after an item, which reads like a fuzzy constraint: wrap the item as `regex` does
        (inside a group's parentheses), or keep the ``{`` literal if `regex` reads it so."""
        constraints = read_fuzzy_constraint(self.source, self.flags.ignore_case)
        if constraints is None:
            # `regex` reads it literally (a letter constrained twice); the translation has always refused it.
            items.append(replace(self.literal(ord("{")), untranslatable=Untranslatable("fuzzy matching", position)))
            return
        element = items.pop() or Concat(())
        if isinstance(element, Group):
            element = Group(Fuzzy(element.body, position), element.index, element.name, element.position)
        else:
            element = Fuzzy(element, position)
        items.append(element)
        if is_actually_fuzzy(constraints):
            items.append(None)  # `regex` drops constraints that allow no error, and a quantifier may follow

    def literal(self, cp: int) -> Chars:
        ignore_case = self.flags.ignore_case
        return Chars(literal_ranges(cp, ignore_case), "literal", cp, ignore_case)

    # -- parentheses --------------------------------------------------------------------------------

    def parse_paren(self) -> Node | None:
        source = self.source
        start = source.pos - 1
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
                return self.parse_group(name, start)
            if ch in ("=", "!"):
                return self.parse_lookaround(behind=False, positive=ch == "=")
            if ch == "P":
                return self.parse_extension(start)
            if ch == "#":
                self.skip_comment()
                return None
            if ch == "(":
                return self.parse_conditional(start)
            if ch == ">":
                return Atomic(self.parse_scoped(self.flags.copy()), start)
            if ch == "|":
                return self.parse_branch_reset(start)
            if ch == "R" or ch.isdigit():
                return self.parse_group_call(ch, start)
            if ch == "&" or (ch in "+-" and source.peek().isdigit()):
                return self.parse_group_call(ch, start)
            source.pos = saved_2
            return self.parse_flags_group(start)
        if ch == "*":
            verb = source.get_until(frozenset(")>"))
            if verb in _VERBS:
                source.match(")")
                return Opaque("control verb", start, 0, 0)
        source.pos = saved
        return self.parse_group(None, start)

    def parse_name(self) -> str:
        return self.source.get_until(frozenset(")>"))

    def parse_group(self, name: str | None, position: int) -> Node:
        if name is not None and name in self.group_names:
            index = self.group_names[name]  # regex gives every group of one name the same index
        else:
            self.group_count += 1
            index = self.group_count
            if name is not None:
                self.group_names[name] = index
        body = self.parse_scoped(self.flags.copy())
        return Group(body, index, name, position)

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

    def parse_lookaround(self, behind: bool, positive: bool) -> Lookaround:
        return Lookaround(self.parse_scoped(self.flags.copy()), behind, positive)

    def parse_extension(self, position: int) -> Node:
        """``(?P<name>...)``, ``(?P=name)`` (a backreference) or ``(?P>name)`` (a group call)."""
        ch = self.source.get()
        if ch == "<":
            name = self.parse_name()
            self.source.match(">")
            return self.parse_group(name, position)
        name = self.parse_name()
        self.source.match(")")
        if ch == "=":
            return Backreference(name, self.flags.ignore_case, position)
        return Opaque("group call", position, 0, None)

    def parse_group_call(self, ch: str, position: int) -> Node:
        """``(?R)``, ``(?1)``, ``(?+1)``, ``(?&name)``: matching a group's pattern again."""
        self.source.get_until(frozenset(")"))
        self.source.match(")")
        return Opaque("recursion" if ch == "R" else "group call", position, 0, None)

    def parse_conditional(self, position: int) -> Node:
        """``(?(group)yes|no)`` or ``(?(?=...)yes|no)`` (the ``(?(`` has been read)."""
        source = self.source
        condition: str | Lookaround
        saved = source.pos
        if source.match("?"):
            behind = source.match("<")
            ch = source.get()
            condition = self.parse_lookaround(behind, positive=ch == "=")
        else:
            source.pos = saved
            condition = self.parse_name()
            source.match(")")
        saved_flags = self.flags.copy()
        try:
            yes = self.parse_sequence()
            no = self.parse_sequence() if source.match("|") else Concat(())
            source.match(")")
        finally:
            self.flags = saved_flags
            source.ignore_space = saved_flags.verbose
        return Conditional(condition, yes, no, position)

    def parse_branch_reset(self, position: int) -> Node:
        """``(?|...|...)``: every branch numbers its groups from the same index (regex's parse_common)."""
        initial = self.group_count
        branches = [self.parse_sequence()]
        final = self.group_count
        while self.source.match("|"):
            self.group_count = initial
            branches.append(self.parse_sequence())
            final = max(final, self.group_count)
        self.group_count = final
        self.source.match(")")
        return BranchReset(tuple(branches), position)

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

    # -- inline flags -------------------------------------------------------------------------------

    def parse_flags_group(self, position: int) -> Node | None:
        """``(?flags)`` (positional, for the rest of the enclosing group) or ``(?flags:...)`` (scoped)."""
        on = self.parse_flag_letters(on=True)
        off = self.parse_flag_letters(on=False) if self.source.match("-") else []
        self.inline_flags.extend(on + off)
        flags = self.flags.copy()
        for flag in on + off:
            if flag.letter == "i":
                flags.ignore_case = flag.on
            elif flag.letter == "m":
                flags.multiline = flag.on
            elif flag.letter == "s":
                flags.dotall = flag.on
            elif flag.letter == "x":
                flags.verbose = flag.on
        if self.source.match(":"):
            return self.parse_scoped(flags)
        self.source.match(")")
        self.flags = flags
        self.source.ignore_space = flags.verbose
        return None

    def parse_flag_letters(self, on: bool) -> list[InlineFlag]:
        letters: list[InlineFlag] = []
        while True:
            saved = self.source.pos
            ch = self.source.get()
            if ch == "V":
                ch += self.source.get()
            if ch not in _FLAG_NAMES:
                self.source.pos = saved
                return letters
            letters.append(InlineFlag(ch, on, self.source.pos - len(ch)))
