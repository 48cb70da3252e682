r"""What follows a backslash in a `regex` (V0) pattern, read as `regex`'s `parse_escape` reads it.

Character escapes give a code point (the caller builds the literal, or uses it as a set bound);
everything else gives a node: class escapes (``\w``, ``\p{L}``, ``\h``), positions (``\b``, ``\G``),
backreferences and the constructs no analysis models (``\X``, ``\R``, ``\K``).
"""

from __future__ import annotations

import unicodedata
from typing import Final

from rtcompile.regex.ast import Assertion, Backreference, Chars, Node, Opaque, Untranslatable
from rtcompile.regex.charsets import TABLES, complement, literal_ranges, scan_class
from rtcompile.regex.cursor import PatternCursor

ALPHA: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
DIGITS: Final = frozenset("0123456789")
OCT_DIGITS: Final = frozenset("01234567")
_HEX_ESCAPES: Final = {"x": 2, "u": 4, "U": 8}
_CHARACTER_ESCAPES: Final = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}
_NAMED_CHAR_PART: Final = ALPHA | DIGITS | frozenset(" -")
_PROPERTY_NAME_PART: Final = ALPHA | DIGITS | frozenset(" &_-.")
_PROPERTY_VALUE_PART: Final = ALPHA | DIGITS | frozenset(" &_-./")
_POSITIONS: Final = {
    "A": "string_start",
    "Z": "string_end",
    "z": "string_end",
    "b": "boundary",
    "B": "non_boundary",
    "G": "search_anchor",
    "m": "word_start",
    "M": "word_end",
}
# Escapes that only exist outside sets, whose matching no analysis models: (construct, min, max width).
_OPAQUE: Final = {
    "K": ("\\K keep", 0, 0),
    "X": ("\\X grapheme cluster", 1, None),
    "R": ("\\R line break", 1, 2),
    "L": ("\\L named list", 0, None),
}
_BACKREFERENCE: Final = "backreference"
_PROPERTY: Final = "\\p{...} property"


def parse_escape(cursor: PatternCursor, in_set: bool, ignore_case: bool) -> int | Node:
    """Parse what follows the backslash just read: a code point for character escapes, else a node."""
    start = cursor.pos - 1
    saved_ignore = cursor.ignore_space
    cursor.ignore_space = False
    ch = cursor.get()
    cursor.ignore_space = saved_ignore
    if ch in _HEX_ESCAPES:
        return int("".join(cursor.get() for _ in range(_HEX_ESCAPES[ch])), 16)
    if ch == "g" and not in_set:
        return _group_reference(cursor, ignore_case, start)
    if ch == "N":
        return _named_char(cursor)
    if ch in ("p", "P"):
        return _property(cursor, ch, in_set, ignore_case, start)
    if ch in ALPHA:
        return _alpha_escape(cursor, ch, in_set, start)
    if ch in DIGITS:
        return _numeric_escape(cursor, ch, in_set, ignore_case, start)
    return ord(ch)


def _literal_with_caveat(cp: int, ignore_case: bool, construct: str, start: int) -> Chars:
    """A literal `regex` reads as such, but whose spelling the translation has always refused."""
    return Chars(literal_ranges(cp, ignore_case), "literal", cp, ignore_case, Untranslatable(construct, start))


def _group_reference(cursor: PatternCursor, ignore_case: bool, start: int) -> Node:
    """``\\g<name>`` is a backreference when `regex` can read the reference, else a literal ``g``."""
    if cursor.peek() != "<":
        return Chars(literal_ranges(ord("g"), ignore_case), "literal", ord("g"), ignore_case)
    saved = cursor.pos
    cursor.get()
    name = cursor.get_until(frozenset(")>"))
    valid_name = int(name) >= 1 if name.isdigit() else name.isidentifier()
    if valid_name and cursor.match(">"):
        return Backreference(name, ignore_case, start)
    cursor.pos = saved
    return _literal_with_caveat(ord("g"), ignore_case, _BACKREFERENCE, start)


def _named_char(cursor: PatternCursor) -> int:
    saved = cursor.pos
    if cursor.match("{"):
        name = cursor.get_while(_NAMED_CHAR_PART, keep_spaces=True)
        if cursor.match("}"):
            return ord(unicodedata.lookup(name))
    cursor.pos = saved
    return ord("N")


def _property(cursor: PatternCursor, letter: str, in_set: bool, ignore_case: bool, start: int) -> int | Node:
    r"""``\p{Name}``, ``\P{^Name}``, ``\pL``: the code points `regex` says it holds; else a literal.

    Inside a set the property is built case-sensitively (the whole set gets the case flag).
    """
    saved = cursor.pos
    nxt = cursor.get()
    complete = False
    if nxt == "{":
        cursor.match("^")
        skip_property_name(cursor)
        complete = cursor.match("}")
    elif nxt and nxt in "CLMNPSZ":
        complete = True
    if complete:
        text = cursor.text[start : cursor.pos]
        case = ignore_case and not in_set
        ranges = scan_class(text, case, cursor.ignore_space)
        return Chars(ranges, "set", None, case, Untranslatable(_PROPERTY, start))
    cursor.pos = saved
    if nxt == "{" or (nxt and nxt in "CLMNPSZ"):
        # `regex` reads an unterminated ``\p{`` literally; the translation has always refused it.
        return _literal_with_caveat(ord(letter), ignore_case and not in_set, _PROPERTY, start)
    return ord(letter)


def skip_property_name(cursor: PatternCursor) -> None:
    """Skip a property name, qualified (``Script=Latin``) or not, as `regex`'s `parse_property_name`."""
    cursor.get_while(_PROPERTY_NAME_PART)
    saved = cursor.pos
    ch = cursor.get()
    if ch and ch in ":=" and cursor.get_while(_PROPERTY_VALUE_PART).strip():
        return
    cursor.pos = saved


def _alpha_escape(cursor: PatternCursor, ch: str, in_set: bool, start: int) -> int | Node:
    if not in_set:
        if ch in _POSITIONS:
            return Assertion(_POSITIONS[ch], start)
        if ch in _OPAQUE:
            construct, low, high = _OPAQUE[ch]
            return Opaque(construct, start, low, high)
    if ch.lower() in TABLES:
        table = TABLES[ch.lower()]
        return Chars(table if ch.islower() else complement(table), "set")
    if ch == "h":
        return Chars(scan_class("\\h", False, False), "set", None, False, Untranslatable("\\h horizontal space", start))
    return _CHARACTER_ESCAPES[ch]


def _numeric_escape(cursor: PatternCursor, ch: str, in_set: bool, ignore_case: bool, start: int) -> int | Node:
    """An octal escape, or (outside sets, one or two digits) a backreference to that group."""
    if in_set or ch == "0":
        digits = ch
        while len(digits) < 3:
            saved = cursor.pos
            nxt = cursor.get()
            if not nxt or nxt not in OCT_DIGITS:
                cursor.pos = saved
                break
            digits += nxt
        return int(digits, 8)
    digits = ch
    saved = cursor.pos
    second = cursor.get()
    if second and second in DIGITS:
        digits += second
        saved = cursor.pos
        third = cursor.get()
        if third and third in OCT_DIGITS and ch in OCT_DIGITS and second in OCT_DIGITS:
            return int(ch + second + third, 8) & 0x1FF
    cursor.pos = saved
    return Backreference(digits, ignore_case, start)
