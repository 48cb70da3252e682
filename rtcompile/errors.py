"""Errors and diagnostics that point into a response template source.

rtcompile is a command-line tool first: users hand it a file and expect one clear line back, in the
``file:line:col: path: message`` shape that editors and CI logs turn into clickable links. Every
problem found in a template is therefore carried by a :class:`TemplateError` (or reported as a
:class:`Diagnostic`) that knows the JSON path inside the response template and, when the template
came from a file, the position of the offending value. Parts that are unknown are simply left out
of the rendering, so an error about an in-memory dict still reads well.

Template text reaches these messages (field names, keys, literals, file names), and a terminal obeys
what it prints: a ``\r`` or an escape sequence in a field name could overwrite the error with a
fake "ok", and U+2028, U+0085 or a form feed would break the promised single line. Messages
therefore quote template text with :func:`quote` (a Python string literal, as a compiler shows
one), and :func:`render_message` escapes whatever unprintable character is left anywhere in
the line.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Diagnostic",
    "JsonPath",
    "TemplateError",
    "TemplateTypeError",
    "TemplateWarning",
    "did_you_mean",
    "format_path",
    "printable",
    "quote",
    "render_message",
]

#: A path into a JSON value: object keys are ``str``, array indices are ``int``.
JsonPath = tuple[str | int, ...]


def quote(text: object) -> str:
    """Template text as it should appear in a message: a string literal, with unprintable characters escaped.

    ``repr`` escapes every character that :meth:`str.isprintable` rejects: control characters (C0, C1,
    DEL), format characters such as bidirectional overrides, line and paragraph separators, and
    spaces other than ``" "``.
    """
    return repr(text)


def printable(text: str) -> str:
    """``text`` with each unprintable character (see :func:`quote`) written as its escape, ``"\\r"`` etc.

    Unlike :func:`quote` it adds no quotes and leaves backslashes alone, so it can be applied to a
    whole message that already contains quoted parts and regex syntax without changing them.
    """
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() or char == " " else repr(char)[1:-1] for char in text)


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """`` (did you mean 'close'?)`` for the choice closest to a misspelt `word`; ``""`` when none is close
    (or `word` is not a string)."""
    close = difflib.get_close_matches(word, sorted(choices), n=1) if isinstance(word, str) else []
    return f" (did you mean {quote(close[0])}?)" if close else ""


def format_path(path: Iterable[str | int]) -> str:
    """Render a JSON path the way a reader would write it: ``fields.tool_calls.open_pattern``.

    List indices become ``[0]``. Keys that are not Python identifiers (``"tool calls"``, ``"a.b"``,
    ``""``) are written as ``['tool calls']`` with :func:`repr`, so a key containing a dot can never
    be confused with two path components. The empty path renders as ``""``.
    """
    rendered = ""
    for part in path:
        if isinstance(part, int):
            rendered += f"[{part}]"
        elif part.isidentifier():
            rendered += f".{part}" if rendered else part
        else:
            rendered += f"[{part!r}]"
    return rendered


def render_message(
    message: str,
    path: Iterable[str | int] = (),
    file: str | None = None,
    line: int | None = None,
    col: int | None = None,
) -> str:
    """Build ``file:line:col: path: message``, leaving out whatever is unknown, as one printable line.

    A column without a line means nothing to a reader, so it is dropped in that case.
    """
    location = [file] if file is not None else []
    if line is not None:
        location.append(str(line))
        if col is not None:
            location.append(str(col))
    prefix = ":".join(location)
    dotted = format_path(path)
    parts = [p for p in (prefix, dotted) if p]
    return printable(": ".join([*parts, message]))


class TemplateError(ValueError):
    """A response template (or the file holding it) is invalid.

    It subclasses :class:`ValueError` because that is what the reference engine (transformers) raises
    for invalid templates, so code written against transformers keeps catching our errors.

    Attributes:
        message: What is wrong, without location information.
        path: Where inside the response template, e.g. ``("fields", "tool_calls", "open_pattern")``.
            Empty when the problem is the file itself or lies outside the template.
        file: The file the template was read from, if any.
        line, col: 1-based position of the offending value in ``file`` (columns count characters).
    """

    def __init__(
        self,
        message: str,
        path: Iterable[str | int] = (),
        *,
        file: str | None = None,
        line: int | None = None,
        col: int | None = None,
    ) -> None:
        self.message = message
        self.path: JsonPath = tuple(path)
        self.file = file
        self.line = line
        self.col = col
        super().__init__(message)

    def __str__(self) -> str:
        return render_message(self.message, self.path, self.file, self.line, self.col)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.message!r}, path={self.path!r}, file={self.file!r}, "
            f"line={self.line!r}, col={self.col!r})"
        )

    def __reduce__(self) -> tuple[object, ...]:
        # The default exception pickling replays ``args`` only, which would lose the location.
        return (_rebuild_error, (type(self), self.message, self.path, self.file, self.line, self.col))

    def to_diagnostic(self) -> Diagnostic:
        """The same problem as an ``"error"`` :class:`Diagnostic`, for tools that collect rather than raise."""
        return Diagnostic("error", self.message, self.path, self.file, self.line, self.col)


class TemplateTypeError(TemplateError, TypeError):
    """A :class:`TemplateError` for the cases where the reference engine raises :class:`TypeError` at load time.

    Inheriting from both keeps ``except TypeError`` code written against transformers working, while
    ``except TemplateError`` still catches every template problem.
    """


def _rebuild_error(
    cls: type[TemplateError],
    message: str,
    path: JsonPath,
    file: str | None,
    line: int | None,
    col: int | None,
) -> TemplateError:
    """Unpickling helper for :meth:`TemplateError.__reduce__`."""
    return cls(message, path, file=file, line=line, col=col)


class TemplateWarning(UserWarning):
    """Category for :func:`warnings.warn` about templates that load but are probably not what was meant."""


@dataclass(frozen=True)
class Diagnostic:
    """One finding about a template, rendered exactly like a :class:`TemplateError`.

    Linters and the CLI collect several of these instead of stopping at the first error. ``str()``
    gives the same ``file:line:col: path: message`` line as the error would; ``severity`` is kept as a
    separate field so callers can prefix or filter as they see fit.
    """

    severity: Literal["error", "warning"]
    message: str
    path: JsonPath = ()
    file: str | None = None
    line: int | None = None
    col: int | None = None

    def __str__(self) -> str:
        return render_message(self.message, self.path, self.file, self.line, self.col)

    def to_error(self) -> TemplateError:
        """A :class:`TemplateError` carrying the same message and location, ready to raise."""
        return TemplateError(self.message, self.path, file=self.file, line=self.line, col=self.col)
