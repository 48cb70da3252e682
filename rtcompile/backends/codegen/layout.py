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
* a block header (`if`, `elif`, `while`) whose condition has a top-level `or` (else `and`), twice
  or more or without closing brackets at its end: the condition in parentheses, on one line inside
  them if it fits, else an operand a line, the operator leading the line;
* an assignment (or `return`) of one conditional expression goes in parentheses: on one line inside
  them if it fits, else the value, `if ...` and `else ...` on a line each;
* an assignment of a value with no bracket to split (a string, a name, `f()`) goes in parentheses
  on a line of its own when that makes it fit;
* a string literal too long for any line (a pattern in `TEMPLATE`) is written as consecutive
  literals, a line each, in parentheses;
* a line that cannot be split otherwise (empty brackets) stays as it is.

String literals get ruff's preferred quotes (`string_literal`), widths count East Asian wide
characters as two columns, as ruff does. `tests/codegen/test_layout.py` checks all of this against ruff
itself, on the bundled templates' modules and on random statements.
"""

from __future__ import annotations

import ast
import functools
import itertools
import keyword
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field

LINE_LENGTH = 88
INDENT = "    "

# What the splitter needs to see in a line of Python: string literals (skipped whole, whatever
# brackets, commas or words they contain), brackets, commas, the start of a comment, an assignment's
# ` = `, a conditional's ` if ` / ` else ` and the boolean operators. Single-line strings only: the
# generator never writes a triple-quoted string inside a statement it lays out.
_TOKENS = re.compile(r"""["'()\[\]{},#]| = | if | else | and | or """)
# The header of a block whose condition may be split at its boolean operators.
_CONDITION_HEADER = re.compile(r" *(?:if|elif|while) (?=.*:\Z)")
# Inside a string literal, what can end it: its quote, a backslash (escaping the next character) or
# a line end. (A string is skipped a run at a time rather than matched by one pattern: `re` keeps a
# backtracking entry per character of `(?:[^"\\]|\\.)*`, over 100 bytes each, which on a default
# of 50 MB is gigabytes.)
_STRING_STOPS = {quote: re.compile(f"[{quote}\\\\\n]") for quote in "\"'"}
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
    # repr() escaped each ' and left each " alone: the other way round (whole-string replacements,
    # not a piece per character: a huge default would cost tens of bytes per character).
    return '"' + text[1:-1].replace("\\'", "'").replace('"', '\\"') + '"'


def width(text: str) -> int:
    """Columns `text` takes in an editor: wide (East Asian) characters count two, combining marks none."""
    if text.isascii():
        return len(text)
    return sum(map(_char_width, text))  # a loop in C over a cached function: a huge literal is millions


@functools.cache
def _char_width(char: str) -> int:
    if char.isascii():
        return 1
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _tokens(line: str) -> Iterator[tuple[str, int]]:
    """The tokens of `_TOKENS` in `line` and where each starts, string literals skipped."""
    at = 0
    while (token := _TOKENS.search(line, at)) is not None:
        text, at = token.group(), token.end()
        if text in "\"'":
            at = _string_end(line, token.start())
            continue
        yield text, token.start()


def _trailing_comment(line: str) -> int | None:
    """Where a comment that follows code on `line` starts (outside string literals), or None."""
    for text, at in _tokens(line):
        if text == "#":
            return at if line[:at].strip() else None
    return None


def _string_end(line: str, start: int) -> int:
    """Where the string literal opening at `start` ends; just after its quote when it does not close on
    the line (then the quote is read as code, as a pattern matching whole strings would skip it)."""
    stops = _STRING_STOPS[line[start]]
    at = start + 1
    while (stop := stops.search(line, at)) is not None:
        if line[stop.start()] != "\\":
            return stop.end() if line[stop.start()] == line[start] else start + 1
        at = stop.start() + 2
    return start + 1


def lay_out(line: str) -> list[str]:
    """`line` (one whole statement, indentation included) as the lines ruff would format it into."""
    if width(line) <= LINE_LENGTH:
        return [line]
    comment = _trailing_comment(line)
    if comment is not None:
        # ruff and black keep a trailing comment where it is and split the statement around it (even
        # `x = text[-1:]`); on a line of its own above the statement, it leaves the statement whole.
        indent = line[: len(line) - len(line.lstrip(" "))]
        return comment_lines(indent, line[comment + 1 :].strip()) + lay_out(line[:comment].rstrip())
    structure = _Structure.of(line)
    if structure is None:
        return [line]  # a comment, or brackets that do not pair up: nothing the generator writes
    indent = line[: len(line) - len(line.lstrip(" "))]
    is_def = line.lstrip().startswith(("def ", "async def "))
    operands = structure.condition_operands()
    if operands is not None:
        return _condition_lines(line, indent, operands)
    conditional = structure.conditional_value()
    if conditional is not None:
        return _conditional_lines(line, indent, *conditional)
    value = structure.unsplittable_value()
    if value is not None and width(indent + INDENT + line[value:]) <= LINE_LENGTH:
        # `target = <one long atom>`: the value goes in parentheses, on a line of its own
        return [f"{line[:value]}(", indent + INDENT + line[value:], f"{indent})"]
    if value is not None and _string_at(line, value):
        # `target = <a string too long for any line>`: pieces of it, in parentheses
        return [f"{line[:value]}(", *_string_pieces(line[value:], indent + INDENT), f"{indent})"]
    return structure.lay(len(indent), len(line), structure.root.pairs, indent, "", is_def=is_def)


def _conditional_lines(line: str, indent: str, value: int, if_at: int, else_at: int) -> list[str]:
    """`target = A if C else B` (or `return ...`) in parentheses: on one line inside them if it fits
    there, else A, `if C` and `else B` on a line each."""
    inner = indent + INDENT
    if width(inner + line[value:]) <= LINE_LENGTH:
        return [f"{line[:value]}(", inner + line[value:], f"{indent})"]
    parts = [line[value:if_at], line[if_at + 1 : else_at], line[else_at + 1 :]]
    return [f"{line[:value]}(", *(piece for part in parts for piece in lay_out(inner + part)), f"{indent})"]


# What may come before a string literal in a member, besides a dict entry's key: a keyword.
_KEYWORD = re.compile(r"\w+=")


def _string_at(text: str, start: int) -> bool:
    """Whether `text` from `start` on is one string literal."""
    return text[start : start + 1] in ("'", '"') and _string_end(text, start) == len(text)


def _string_member_lines(member: str, indent: str, trailing: str) -> list[str] | None:
    """A member that is one string literal too long for its line, written as consecutive literals on
    lines of their own, in parentheses (after a key or keyword, if any); None for any other member.
    black and ruff both keep this form as it is, and ruff's ISC rules accept it."""
    if _string_at(member, 0):  # in parentheses too: a bare concatenation in a list reads as a lost comma
        return [f"{indent}(", *_string_pieces(member, indent + INDENT), f"{indent}){trailing}"]
    if member[0] in "\"'":  # a dict entry's key
        at = _string_end(member, 0) + 2
        if member[at - 2 : at] != ": ":
            return None
    else:
        keyword = _KEYWORD.match(member)
        if keyword is None:
            return None
        at = keyword.end()
    if not _string_at(member, at):
        return None
    lead, string = member[:at], member[at:]
    return [f"{indent}{lead}(", *_string_pieces(string, indent + INDENT), f"{indent}){trailing}"]


# A string literal's body as pieces that each stand alone: an escape sequence, or a run of other text.
_BODY_PIECES = re.compile(
    r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|.)|[^\\]{1,4096}", re.DOTALL
)


def _string_value(string: str) -> str:
    """The value of the string literal `string`, evaluated a few kilobytes at a time (a default may
    be megabytes, and evaluating it whole costs several bytes per character for a moment)."""
    quote, body = string[0], string[1:-1]
    values: list[str] = []
    chunk: list[str] = []
    size = 0
    for piece in _BODY_PIECES.finditer(body):
        chunk.append(piece.group())
        size += len(chunk[-1])
        if size >= 4096:
            values.append(ast.literal_eval(quote + "".join(chunk) + quote))
            chunk, size = [], 0
    values.append(ast.literal_eval(quote + "".join(chunk) + quote))
    return "".join(values)


def _string_pieces(string: str, indent: str) -> list[str]:
    """The string literal `string` as consecutive literals, each on a line of `indent` that fits (in
    parentheses, with no comma after any: a piece may take the whole line)."""
    pieces = split_string(_string_value(string), LINE_LENGTH - width(indent) + 1)
    return [indent + piece for piece in pieces]


def _condition_lines(line: str, indent: str, operands: list[str]) -> list[str]:
    """`if a and b and c:` with the condition in parentheses: on one line inside them if it fits
    there, else an operand a line (each laid out by the same rules), the operator leading all but
    the first. The one form black and ruff both keep."""
    head, _, _ = line.lstrip(" ").partition(" ")
    inner = indent + INDENT
    lines = [f"{indent}{head} ("]
    condition = " ".join(operands)
    if width(inner + condition) <= LINE_LENGTH:
        return [*lines, inner + condition, f"{indent}):"]
    for operand in operands:
        lines += lay_out(inner + operand)
    return [*lines, f"{indent}):"]


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
    operators: list[tuple[int, str]] = field(default_factory=list)  # its own ` and ` / ` or `
    pairs: list[_Pair] = field(default_factory=list)  # pairs directly inside, in order


@dataclass
class _Structure:
    line: str
    root: _Pair

    @classmethod
    def of(cls, line: str) -> _Structure | None:
        root = _Pair(-1, len(line))
        stack = [root]
        for text, at in _tokens(line):
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
            elif text in (" and ", " or "):
                stack[-1].operators.append((at, text))
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

    def condition_operands(self) -> list[str] | None:
        """The operands of an `if`, `elif` or `while` header's condition, split at its top-level
        `or` (else `and`), the operator kept at the start of each but the first; None for any other
        line, or a condition without such an operator."""
        header = _CONDITION_HEADER.match(self.line)
        operators = self.root.operators
        if header is None or not operators:
            return None
        weakest = " or " if any(text == " or " for _, text in operators) else " and "
        cuts = [at for at, text in operators if text == weakest]
        if len(cuts) == 1 and self.line[-2] in ")]}":
            return None  # `if a and f(...):` splits at its last brackets instead, as both formatters do
        bounds = [header.end(), *cuts, len(self.line) - 1]
        operands = [self.line[first:last].strip() for first, last in itertools.pairwise(bounds)]
        return operands

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
        # (the text is built only where it is kept: a huge value is not copied at every level)
        if width(indent) + width(line[start:end]) + len(trailing) <= LINE_LENGTH:
            return [indent + line[start:end] + trailing]
        if not inside:
            return _string_member_lines(line[start:end], indent, trailing) or [indent + line[start:end] + trailing]
        pair = inside[0] if is_def else inside[-1]
        if not self._inner(pair):
            return [indent + line[start:end] + trailing]
        head = indent + line[start : pair.opening + 1]
        tail = indent + line[pair.closing : end] + trailing
        deeper = indent + INDENT
        members = self._members(pair)
        magic = self._ends_in_comma(pair) and not self._one_tuple(pair, members)
        if is_def and len(members) == 1:
            magic = True  # a def split at its parameters gives even a lone parameter its comma
        if self._is_display(pair) and (len(members) > 1 or magic):
            magic = True  # a list, tuple or dict display that must split puts each member on a line
        if not magic and width(deeper) + width(self._inner(pair)) <= LINE_LENGTH:
            return [head, deeper + self._inner(pair), tail]
        if len(members) == 1 and not magic:
            first, last, nested = members[0]
            comma = "," if self._one_tuple(pair, members) else ""  # `(x,)` keeps its comma: syntax
            return [head, *self.lay(first, last, nested, deeper, comma), tail]
        lines = [head]
        for first, last, nested in members:
            lines += self.lay(first, last, nested, deeper, ",")
        lines.append(tail)
        return lines

    def _inner(self, pair: _Pair) -> str:
        """What `pair` holds, surrounding spaces left out."""
        return self.line[pair.opening + 1 : pair.closing].strip()

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


def comment_lines(indent: str, text: str) -> list[str]:
    """`# text` at `indent`, wrapped to `LINE_LENGTH` columns: at spaces where it can be, within a long
    word (a pattern) where it cannot. `text` must already be safe for a comment (escaped)."""
    room = LINE_LENGTH - width(indent) - 2
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if width(candidate) <= room:
            line = candidate
            continue
        if line:
            lines.append(line)
        while width(word) > room:  # a word longer than a line: cut it
            cut = _fitting(word, room)
            lines.append(word[:cut])
            word = word[cut:]
        line = word
    lines.append(line)
    return [f"{indent}# {line}".rstrip() for line in lines]


def split_string(value: str, room: int) -> list[str]:
    """String literals (ruff's quotes) whose concatenation is `value`, each followed by a comma within
    `room` columns: a long pattern written over several lines. Linear in `value` (a default may be
    megabytes): each piece starts as long as could fit and is cut down by what it overshoots."""
    pieces: list[str] = []
    start = 0
    while start < len(value):
        end = min(len(value), start + max(1, room - 3))  # every character takes a column or more
        while True:
            piece = string_literal(value[start:end])
            excess = width(piece) + 1 - room
            if excess <= 0 or end == start + 1:
                break
            end = max(start + 1, end - max(1, excess // 10))  # no character's escape is over ten wide
        pieces.append(piece)
        start = end
    return pieces or [string_literal("")]


def _fitting(text: str, room: int) -> int:
    """How many leading characters of `text` fit in `room` columns (at least one)."""
    total = 0
    for index, char in enumerate(text):
        total += width(char)
        if total > room:
            return max(1, index)
    return len(text)
