"""Character sets (``[...]``) of a `regex` (V0) pattern.

The parser only finds a set's extent and the boundaries of its items; which code points it holds is
asked of `regex` itself (`rtcompile.regex.charsets.resolve_set`), which sidesteps its quirks.
"""

from __future__ import annotations

import re
from typing import Final

from rtcompile.regex.ast import Chars, Untranslatable
from rtcompile.regex.charsets import ALL, resolve_set, scan_class
from rtcompile.regex.cursor import PatternCursor
from rtcompile.regex.escapes import parse_escape, skip_property_name

# How the translation has always recognised ``[:...:]`` (a little more often than `regex` does).
_LOOKS_LIKE_POSIX_CLASS: Final = re.compile(r"\^?[A-Za-z0-9 &_\-.]*(?:[:=][A-Za-z0-9 &_\-./]*)?:\]")
_POSIX_CLASS: Final = "POSIX character class"


def parse_set(cursor: PatternCursor, ignore_case: bool) -> Chars:
    """Parse the set whose ``[`` was just read."""
    return _SetReader(cursor).read(ignore_case)


class _SetReader:
    def __init__(self, cursor: PatternCursor) -> None:
        self.cursor = cursor
        # Code points where membership may change: both ends of every item.
        self.breakpoints: set[int] = set()
        self.untranslatable: Untranslatable | None = None

    def read(self, ignore_case: bool) -> Chars:
        cursor = self.cursor
        start = cursor.pos - 1
        saved_ignore = cursor.ignore_space
        cursor.ignore_space = False
        try:
            negated = cursor.match("^")
            members = [self.member()]
            while not cursor.match("]"):
                members.append(self.member())
        finally:
            cursor.ignore_space = saved_ignore
        text = cursor.text[start : cursor.pos]
        ranges = resolve_set(text, frozenset(self.breakpoints), ignore_case)
        untranslatable = self.untranslatable
        # Mirror what regex's parser turns small sets into: [x] is the character x, [^x] a negated
        # character, and a negated set that covers everything (such as [^\s\S]) becomes "any".
        if len(members) == 1 and members[0] is not None:
            kind = "negated_literal" if negated else "literal"
            return Chars(ranges, kind, members[0], ignore_case, untranslatable)
        if negated and ranges == ALL:
            return Chars(ranges, "any", None, ignore_case, untranslatable)
        return Chars(ranges, "set", None, ignore_case, untranslatable)

    def member(self) -> int | None:
        """Parse one member (a character, range or class); return its code point if it is one character."""
        cursor = self.cursor
        first = self.item()
        if first is None or not cursor.match("-"):
            return first
        saved = cursor.pos
        if cursor.match("]"):
            cursor.pos = saved
            self.breakpoints.update((0x2D, 0x2E))
            return None
        last = self.item()
        if last is None:
            self.breakpoints.update((0x2D, 0x2E))
            return None
        self.breakpoints.update((first, last + 1))
        return first if first == last else None

    def item(self) -> int | None:
        """Record an item's boundaries; return its code point if it is a single character."""
        cursor = self.cursor
        start = cursor.pos
        if cursor.match("\\"):
            item = parse_escape(cursor, in_set=True, ignore_case=False)
            if isinstance(item, int):
                self.breakpoints.update((item, item + 1))
                return item
            assert isinstance(item, Chars)
            self.note(item.untranslatable)
            if item.kind == "literal" and item.literal is not None:
                self.breakpoints.update((item.literal, item.literal + 1))
                return item.literal
            for lo, hi in item.ranges:
                self.breakpoints.update((lo, hi + 1))
            return None
        if cursor.text.startswith("[:", start) and _LOOKS_LIKE_POSIX_CLASS.match(cursor.text, start + 2):
            self.note(Untranslatable(_POSIX_CLASS, start))
            if self.posix_class():
                return None
        ch = cursor.get()
        self.breakpoints.update((ord(ch), ord(ch) + 1))
        return ord(ch)

    def posix_class(self) -> bool:
        """``[:name:]`` / ``[:^name:]`` as `regex` reads it (else the ``[`` is a literal): its members."""
        cursor = self.cursor
        start = cursor.pos
        cursor.pos += 2
        cursor.match("^")
        skip_property_name(cursor)
        if not cursor.match(":]"):
            cursor.pos = start
            return False
        for lo, hi in scan_class(f"[{cursor.text[start : cursor.pos]}]", False, False):
            self.breakpoints.update((lo, hi + 1))
        return True

    def note(self, untranslatable: Untranslatable | None) -> None:
        if self.untranslatable is None:
            self.untranslatable = untranslatable
