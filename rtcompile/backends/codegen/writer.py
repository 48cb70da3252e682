"""Writing Python source: literals from template data, identifiers with a role, indented blocks.

Two rules keep generated modules safe whatever a template contains:

* template values enter code only through `literal()`, which builds `repr()` of str/int/float/bool/
  None and containers of them;
* identifiers are the generator's own: a name may carry a field's name for readability
  (`_scan_in_tool_calls`), but only after `Names` has reduced it to ASCII letters, digits and `_`
  behind a fixed role prefix, and made it unique.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from rtcompile.backends.codegen.layout import comment_lines, lay_out, string_literal
from rtcompile.errors import TemplateError
from rtcompile.nesting import levels
from rtcompile.transform_program import data_program

INDENT = "    "
# Brackets a literal may nest before deeper values are built by a program instead (see `literal`).
MAX_LITERAL_NESTING = 16
MAX_HINT = 32  # characters of a template's name a generated identifier takes up at most


def literal(value: object, *, _nesting: int = 0) -> str:
    """Python source for a JSON-like value, built only from repr() of scalars: template text is data.

    A container nested `MAX_LITERAL_NESTING` brackets deep is written as `build_value(<program>)`
    instead (a flat program: see `rtcompile.runtime.transform_data`), so that no literal nests deeper,
    however deep the value: CPython's parser refuses 200 nested brackets.
    """
    if isinstance(value, str):
        return string_literal(value)
    if value is None or isinstance(value, (bool, int)):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return f"float({string_literal(str(value))})"
        return repr(value).replace("e+", "e")  # 1e+16 as ruff writes it: 1e16
    if isinstance(value, (list, tuple, dict)) and _nesting >= MAX_LITERAL_NESTING:
        return f"build_value({literal(data_program(value))})"
    deeper = _nesting + 1
    if isinstance(value, (list, tuple)):
        inner = ", ".join(literal(v, _nesting=deeper) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{literal(k, _nesting=deeper)}: {literal(v, _nesting=deeper)}" for k, v in value.items())
            + "}"
        )
    raise TemplateError(f"cannot compile a template value of type {type(value).__name__}; use JSON values only")


def needs_builder(value: object) -> bool:
    """Whether `literal(value)` calls `build_value` (the module must then define it first)."""
    return any(isinstance(node, (list, tuple, dict)) and level >= MAX_LITERAL_NESTING for node, level in levels(value))


def word(text: str) -> str:
    """`text` reduced to lower-case ASCII words joined by `_` ("" if nothing is left)."""
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_")


class Names:
    """Allocates module-level identifiers: a role prefix plus, where it helps, a word from the template.

    The same request always gets the same answer within one module, so output is deterministic; a
    clash (two fields whose names reduce to the same word) gets a numeric suffix.
    """

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self._taken: set[str] = set(reserved)

    def reserve(self, names: Iterable[str]) -> None:
        self._taken.update(names)

    def new(self, role: str, hint: str = "", *, constant: bool = False) -> str:
        """A fresh name: role `_scan` and hint `in tool_calls` give `_scan_in_tool_calls`; a `constant`
        is upper case (`_RE` and `tool_calls open` give `_RE_TOOL_CALLS_OPEN`)."""
        # A long hint is cut (at a word boundary when there is one): names stay readable and lines short.
        hint_word = word(hint)
        if len(hint_word) > MAX_HINT:
            cut = hint_word[:MAX_HINT]
            hint_word = cut.rsplit("_", 1)[0] if "_" in cut else cut
        base = role if not hint_word else f"{role}{hint_word}" if role.endswith("_") else f"{role}_{hint_word}"
        if constant:
            base = base.upper()
        name, n = base, 2
        while name in self._taken:
            name, n = f"{base}_{n}", n + 1
        self._taken.add(name)
        return name


class CodeWriter:
    """Python source built line by line; indentation belongs to the writer, not to the callers."""

    def __init__(self, *, depth: int = 0) -> None:
        self._lines: list[str] = []
        self._depth = depth

    @property
    def depth(self) -> int:
        """The indentation level of the next line."""
        return self._depth

    def line(self, text: str = "") -> None:
        """One statement (or a line of a block the caller lays out itself, when `text` holds newlines);
        a statement too long for one line is split as the formatter would split it (see `layout`)."""
        if not text:
            self._lines.append("")
        elif "\n" in text:
            self._lines.append(f"{INDENT * self._depth}{text}")
        else:
            self._lines.extend(lay_out(f"{INDENT * self._depth}{text}"))

    def code_lines(self, code: str) -> None:
        """Code laid out already (lifted runtime source at indentation 0), every line indented to the
        current depth."""
        self._lines.extend(f"{INDENT * self._depth}{line}" if line else "" for line in code.splitlines())

    def comment(self, text: str) -> None:
        """A comment, wrapped to the line length; `text` must already be safe for one line (callers
        quote template text)."""
        self._lines.extend(comment_lines(INDENT * self._depth, text))

    @contextmanager
    def block(self, header: str) -> Iterator[None]:
        """`header` (ending in ':') and the statements written inside the `with`, one level deeper."""
        self.line(header)
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    def code(self) -> str:
        return "\n".join(self._lines)
