"""Big data literals, laid out here exactly as black would lay them out, so that black never reads them.

black costs about a fifth of a millisecond per member of a literal, so a template with thousands of
literal delimiters, or an 800 KB `defaults` list, spent most of its compile time (minutes) in black,
formatting data whose layout is a foregone conclusion. Before a section goes to black, each assignment
of a big literal is swapped for a placeholder name; black formats the rest, and the placeholder is then
replaced by the literal as laid out here. The layout is black's (stable style, as pinned): a literal
that fits in the line stays on it; one that does not is exploded, each member on a line of its own
with a trailing comma (none after the member of a one-member collection or call), each member laid
out by the same rule. Strings and numbers are normalised with black's own functions.
`tests/test_preformat.py` checks the layout against black itself.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable
from dataclasses import dataclass

from black.numerics import format_float_or_int_string, format_scientific_notation
from black.strings import normalize_string_quotes, str_width

LINE_LENGTH = 120
INDENT = "    "
# Statements shorter than this go through black as usual (it is quick on them, and the output is the same).
BIG_STATEMENT = 2000


@dataclass(frozen=True)
class _Swapped:
    placeholder: str
    value: ast.expr


def format_with_big_literals_aside(code: str, format_code: Callable[[str], str]) -> str:
    """`format_code(code)` (black), with every big data assignment laid out here instead.

    `code` must be a sequence of complete top-level statements, one per line for the big assignments
    (how the generator writes them), at module level or in the body of a top-level class.
    """
    lines = code.split("\n")
    swapped: list[_Swapped] = []
    taken = code
    for statement in _assignments(code, lines):
        line = lines[statement.lineno - 1]
        value = statement.value
        assert value is not None
        start = len(line.encode("utf-8")[: value.col_offset].decode("utf-8"))
        placeholder = next(
            name for n in itertools.count() if (name := f"_RTCOMPILE_PREFORMATTED_{len(swapped)}_{n}") not in taken
        )
        lines[statement.lineno - 1] = line[:start] + placeholder
        swapped.append(_Swapped(placeholder, value))
    if not swapped:
        return format_code(code)
    formatted = format_code("\n".join(lines)).split("\n")
    for item in swapped:
        # black leaves `target = _RTCOMPILE_PREFORMATTED_0_0` on one line, ending in the placeholder (a
        # name, so no string literal can end that way on a line of its own).
        (index,) = [i for i, text in enumerate(formatted) if text.endswith(" " + item.placeholder)]
        head = formatted[index][: -len(item.placeholder)]
        formatted[index : index + 1] = _Layout().lines(item.value, head, "")
    return "\n".join(formatted)


def _assignments(code: str, lines: list[str]) -> list[ast.Assign | ast.AnnAssign]:
    """Single-line assignments of big, purely literal values, at module level or in a top-level class."""
    if len(code) < BIG_STATEMENT:
        return []
    tree = ast.parse(code)
    statements = list(tree.body)
    statements += [s for node in tree.body if isinstance(node, ast.ClassDef) for s in node.body]
    found = []
    for statement in statements:
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is None:
            continue
        if statement.lineno != statement.end_lineno or len(lines[statement.lineno - 1]) < BIG_STATEMENT:
            continue
        value = statement.value
        if not isinstance(value, (ast.Dict, ast.List, ast.Tuple)) or _Layout().flat(value) is None:
            continue  # not a collection of plain data (black treats anything else at this level its own way)
        if value.end_col_offset != len(lines[statement.lineno - 1].encode("utf-8")):
            continue  # something follows the value on its line
        found.append(statement)
    return found


class _Layout:
    """Lays out one value; remembers each node's one-line text, which every enclosing node needs too."""

    def __init__(self) -> None:
        self._flat: dict[int, str | None] = {}  # by id() of a node of the tree being laid out

    def flat(self, node: ast.expr) -> str | None:
        """The value on one line, as black writes it; None for anything but data (and calls of a name)."""
        key = id(node)
        if key not in self._flat:
            self._flat[key] = self._one_line(node)
        return self._flat[key]

    def _one_line(self, node: ast.expr) -> str | None:
        match node:
            case ast.Constant(value=bool() | None as value):
                return repr(value)
            case ast.Constant(value=str() as value):
                return _string(value)
            case ast.Constant(value=int() as value):
                return repr(value)
            case ast.Constant(value=float() as value):
                text = repr(value)
                return format_scientific_notation(text) if "e" in text else format_float_or_int_string(text)
            case ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=int() | float()) as operand):
                return f"-{self.flat(operand)}"
            case ast.Dict(keys=keys, values=values):
                pieces = []
                for key, member in zip(keys, values, strict=True):
                    key_text = None if key is None else self.flat(key)
                    value_text = self.flat(member)
                    if key_text is None or value_text is None:
                        return None
                    pieces.append(f"{key_text}: {value_text}")
                return "{" + ", ".join(pieces) + "}"
            case ast.List(elts=members) | ast.Tuple(elts=members):
                texts = [self.flat(member) for member in members]
                if None in texts:
                    return None
                inner = ", ".join(str(text) for text in texts)
                if isinstance(node, ast.List):
                    return f"[{inner}]"
                return f"({inner},)" if len(texts) == 1 else f"({inner})"
            case ast.Call(func=ast.Name(id=name), args=args, keywords=[]):
                texts = [None if isinstance(arg, ast.Starred) else self.flat(arg) for arg in args]
                if None in texts:
                    return None
                return f"{name}({', '.join(str(text) for text in texts)})"
        return None

    def lines(self, node: ast.expr, head: str, tail: str) -> list[str]:
        """`head`, the value and `tail`: on one line if it fits, else exploded at the value's brackets."""
        one_line = f"{head}{self.flat(node)}{tail}"
        members = self._members(node)
        if str_width(one_line) <= LINE_LENGTH or not members:
            return [one_line]
        opening, closing = _brackets(node)
        outer = head[: len(head) - len(head.lstrip(" "))]
        lines = [head + opening]
        lone = len(members) == 1 and not isinstance(node, ast.Tuple)  # a one-member tuple keeps its comma
        for prefix, member in members:
            lines += self.lines(member, outer + INDENT + prefix, "" if lone else ",")
        lines.append(outer + closing + tail)
        return lines

    def _members(self, node: ast.expr) -> list[tuple[str, ast.expr]]:
        """What a bracketed value explodes into: (what precedes each member on its line, the member)."""
        match node:
            case ast.Dict(keys=keys, values=values):
                return [(f"{self.flat(k)}: ", v) for k, v in zip(keys, values, strict=True) if k is not None]
            case ast.List(elts=members) | ast.Tuple(elts=members):
                return [("", member) for member in members]
            case ast.Call(args=args):
                return [("", arg) for arg in args]
        return []


def _string(value: str) -> str:
    """A string literal as black writes it: repr() with black's choice of quotes."""
    text = repr(value)
    if "'" not in value and '"' not in value:
        return f'"{text[1:-1]}"'  # what normalize_string_quotes makes of it, without its regexes
    return normalize_string_quotes(text)


def _brackets(node: ast.expr) -> tuple[str, str]:
    match node:
        case ast.Dict():
            return "{", "}"
        case ast.List():
            return "[", "]"
        case ast.Tuple():
            return "(", ")"
        case ast.Call(func=ast.Name(id=name)):
            return f"{name}(", ")"
    raise AssertionError(f"not a bracketed value: {ast.dump(node)}")
