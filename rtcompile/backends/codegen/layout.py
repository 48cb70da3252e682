"""Statements laid out as `ruff format` lays them out (default settings), so no formatter is needed.

Generated modules are committed, vendored and diffed, so their layout must be fixed: the same for
every user, whatever formatter (or version of one) their environment has. Rather than run a
formatter, the code writer emits code in its final form. Every statement the generator writes is
built on one line; a line that does not fit in `LINE_LENGTH` columns is split here by the rule
ruff's formatter follows for the shapes the generator emits (calls, subscripts and collections,
nested to any depth):

* split at the last bracket pair of the statement (a `def` at its parameters);
* if what the brackets hold fits on one line of its own, it goes there, between the opening line and
  the closing bracket;
* if not, each comma-separated member gets a line of its own, with a trailing comma added, and each
  member is laid out by the same rule; a lone member without a comma is laid out by the rule as is;
* an assignment (or `return`) of one conditional expression goes in parentheses: on one line inside
  them if it fits, else the value, `if ...` and `else ...` on a line each;
* an assignment of a value with no bracket to split (a string, a name, `f()`) goes in parentheses
  on a line of its own when that makes it fit;
* a line that cannot be split (a long string, empty brackets) stays as it is.

String literals get ruff's preferred quotes (`string_literal`), widths count East Asian wide
characters as two columns, as ruff does. `tests/codegen/test_layout.py` checks all of this against ruff
itself, on the bundled templates' modules and on random statements.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from dataclasses import dataclass, field

LINE_LENGTH = 88
INDENT = "    "

# What the splitter needs to see in a line of Python: string literals (skipped whole, whatever
# brackets, commas or words they contain), brackets, commas, the start of a comment, an assignment's
# ` = ` and a conditional's ` if ` / ` else `. Single-line strings only: the generator never writes a
# triple-quoted string inside a statement it lays out.
_TOKENS = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[()\[\]{},#]| = | if | else """)
_OPENING = {"(": ")", "[": "]", "{": "}"}
# The word or closing bracket just before an opening parenthesis: a name or a closing bracket there
# makes it a call, a keyword (`return (x,)`) or an operator a tuple.
_WORD_BEFORE = re.compile(r"(\w*)([)\]]?) *\Z")


def string_literal(value: str) -> str:
    """`value` as a string literal in ruff's style: double quotes, unless the text holds more double
    quotes than single quotes (then single quotes, fewer to escape); other escapes as `repr()` has them."""
    text = repr(value)
    if '"' not in value:
        return text if text[0] == '"' else f'"{text[1:-1]}"'
    if "'" not in value or value.count('"') > value.count("'"):
        return text  # repr() chose single quotes; ruff keeps them (switching would escape more)
    body = "".join('\\"' if c == '"' else "'" if c == "'" else repr(c)[1:-1] for c in value)
    return f'"{body}"'


def width(text: str) -> int:
    """Columns `text` takes in an editor: wide (East Asian) characters count two, combining marks none."""
    if text.isascii():
        return len(text)
    return sum(_char_width(c) for c in text)


def _char_width(char: str) -> int:
    if char.isascii():
        return 1
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def lay_out(line: str) -> list[str]:
    """`line` (one whole statement, indentation included) as the lines ruff would format it into."""
    if width(line) <= LINE_LENGTH:
        return [line]
    structure = _Structure.of(line)
    if structure is None:
        return [line]  # a comment, or brackets that do not pair up: nothing the generator writes
    indent = line[: len(line) - len(line.lstrip(" "))]
    is_def = line.lstrip().startswith(("def ", "async def "))
    conditional = structure.conditional_value()
    if conditional is not None:
        return _conditional_lines(line, indent, *conditional)
    value = structure.unsplittable_value()
    if value is not None and width(indent + INDENT + line[value:]) <= LINE_LENGTH:
        # `target = <one long atom>`: the value goes in parentheses, on a line of its own
        return [f"{line[:value]}(", indent + INDENT + line[value:], f"{indent})"]
    return structure.lay(len(indent), len(line), structure.root.pairs, indent, "", is_def=is_def)


def _conditional_lines(line: str, indent: str, value: int, if_at: int, else_at: int) -> list[str]:
    """`target = A if C else B` (or `return ...`) in parentheses: on one line inside them if it fits
    there, else A, `if C` and `else B` on a line each."""
    inner = indent + INDENT
    if width(inner + line[value:]) <= LINE_LENGTH:
        return [f"{line[:value]}(", inner + line[value:], f"{indent})"]
    parts = [line[value:if_at], line[if_at + 1 : else_at], line[else_at + 1 :]]
    return [f"{line[:value]}(", *(piece for part in parts for piece in lay_out(inner + part)), f"{indent})"]


def import_lines(indent: str, module: str, names: list[str]) -> list[str]:
    """`from module import names`; when too long for a line, parenthesised, one name per line."""
    line = f"{indent}from {module} import {', '.join(names)}"
    if width(line) <= LINE_LENGTH:
        return [line]
    return [f"{indent}from {module} import (", *(f"{indent}{INDENT}{n}," for n in names), f"{indent})"]


@dataclass
class _Pair:
    """A pair of brackets in the line, with what it directly contains."""

    opening: int  # index of the opening bracket
    closing: int = -1  # index of the closing bracket
    commas: list[int] = field(default_factory=list)  # indexes of its own commas (not nested ones)
    assignments: list[int] = field(default_factory=list)  # indexes of its own ` = ` (the root's only)
    conditions: list[tuple[int, str]] = field(default_factory=list)  # its own ` if ` / ` else `
    pairs: list[_Pair] = field(default_factory=list)  # pairs directly inside, in order


@dataclass
class _Structure:
    line: str
    root: _Pair

    @classmethod
    def of(cls, line: str) -> _Structure | None:
        root = _Pair(-1, len(line))
        stack = [root]
        for token in _TOKENS.finditer(line):
            text, at = token.group(), token.start()
            if text in _OPENING:
                pair = _Pair(at)
                stack[-1].pairs.append(pair)
                stack.append(pair)
            elif text in ")]}":
                if len(stack) == 1 or _OPENING[line[stack[-1].opening]] != text:
                    return None
                stack.pop().closing = at
            elif text == ",":
                stack[-1].commas.append(at)
            elif text == " = ":
                stack[-1].assignments.append(at)
            elif text in (" if ", " else "):
                stack[-1].conditions.append((at, text))
            elif text == "#":
                return None
        return cls(line, root) if len(stack) == 1 else None

    def conditional_value(self) -> tuple[int, int, int] | None:
        """Where the value of an assignment or `return` starts, and its ` if ` and ` else `, when the
        value is one conditional expression (written with nothing but names, calls and literals)."""
        root = self.root
        if len(root.assignments) == 1:
            start = root.assignments[0] + 3
        elif self.line.lstrip().startswith("return "):
            start = self.line.index("return ") + len("return ")
        else:
            return None
        words = [(at, text) for at, text in root.conditions if at >= start]
        if [text for _, text in words] != [" if ", " else "]:
            return None
        return start, words[0][0], words[1][0]

    def unsplittable_value(self) -> int | None:
        """Where the value of an assignment starts, if no bracket of it can be split (a string, a
        name, a call with empty brackets); None for anything else."""
        root = self.root
        if len(root.assignments) != 1:
            return None
        start = root.assignments[0] + 3
        pairs = [p for p in root.pairs if p.opening >= start]
        if pairs and (pairs[-1].commas or self.line[pairs[-1].opening + 1 : pairs[-1].closing].strip()):
            return None
        return start

    def lay(
        self,
        start: int,
        end: int,
        inside: list[_Pair],
        indent: str,
        trailing: str,
        *,
        is_def: bool = False,
    ) -> list[str]:
        """The text `line[start:end]` (one statement, or one member of a pair), holding the bracket
        pairs `inside` at its top level, on lines starting with `indent`, followed by `trailing` (a
        comma that explosion added)."""
        line = self.line
        text = indent + line[start:end] + trailing
        if not inside or width(text) <= LINE_LENGTH:
            return [text]
        pair = inside[0] if is_def else inside[-1]
        body = line[pair.opening + 1 : pair.closing].strip()
        if not body:
            return [text]
        head = indent + line[start : pair.opening + 1]
        tail = indent + line[pair.closing : end] + trailing
        deeper = indent + INDENT
        members = self._members(pair)
        magic = self._ends_in_comma(pair) and not self._one_tuple(pair, members)
        if is_def and len(members) == 1:
            magic = True  # a def split at its parameters gives even a lone parameter its comma
        if self._is_display(pair) and (len(members) > 1 or magic):
            magic = True  # a list, tuple or dict display that must split puts each member on a line
        if not magic and width(deeper + body) <= LINE_LENGTH:
            return [head, deeper + body, tail]
        if len(members) == 1 and not magic:
            first, last, nested = members[0]
            comma = "," if self._one_tuple(pair, members) else ""  # `(x,)` keeps its comma: syntax
            return [head, *self.lay(first, last, nested, deeper, comma), tail]
        lines = [head]
        for first, last, nested in members:
            lines += self.lay(first, last, nested, deeper, ",")
        lines.append(tail)
        return lines

    def _members(self, pair: _Pair) -> list[tuple[int, int, list[_Pair]]]:
        """Each comma-separated member of `pair`: where it starts and ends (surrounding spaces left
        out), and the bracket pairs at its top level."""
        line = self.line
        bounds = [pair.opening + 1, *(c + 1 for c in pair.commas)]
        ends = [*pair.commas, pair.closing]
        members = []
        nested = iter(pair.pairs)
        upcoming = next(nested, None)
        for first, last in zip(bounds, ends, strict=True):
            held = []
            while upcoming is not None and upcoming.opening < last:
                held.append(upcoming)
                upcoming = next(nested, None)
            while first < last and line[first] == " ":
                first += 1
            while last > first and line[last - 1] == " ":
                last -= 1
            if first < last:
                members.append((first, last, held))
        return members

    def _ends_in_comma(self, pair: _Pair) -> bool:
        at = pair.closing - 1
        while at > pair.opening and self.line[at] == " ":
            at -= 1
        return self.line[at] == ","

    def _is_display(self, pair: _Pair) -> bool:
        """Whether `pair` brackets a list, tuple, set or dict display (not a call, subscript or def)."""
        # A window before the bracket is enough (a longer word is still a name), and keeps this constant
        # time on a long line: the pattern would otherwise be tried from every position before it.
        before = _WORD_BEFORE.search(self.line, max(0, pair.opening - 64), pair.opening)
        assert before is not None  # the pattern matches the empty string too
        return before.group(1) in ("", *keyword.kwlist) and not before.group(2)

    def _one_tuple(self, pair: _Pair, members: list[tuple[int, int, list[_Pair]]]) -> bool:
        """Whether `pair` is a one-member tuple `(x,)`, whose comma is syntax, not a request to explode."""
        return (
            self.line[pair.opening] == "("
            and len(members) == 1
            and self._ends_in_comma(pair)
            and self._is_display(pair)
        )
