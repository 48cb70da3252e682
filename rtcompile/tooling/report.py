"""How the command line reports diagnostics: one format for compiling and for `lint`, as text or JSON,
without the codes the user silenced.

Text: one line per diagnostic, ``file:line:col: severity[code]: path: message`` (the order editors' and
CI problem matchers read; unknown parts are left out), then ``    input: ...`` when the diagnostic has
an example. JSON (``--output-format json``): one array holding an object per diagnostic, printed when
the run ends (`as_json` lists the keys).

``--disable CODE`` silences a code for every template, ``--disable TEMPLATE:CODE`` for one, TEMPLATE
being the template's file name with or without ``.json`` (the model directory's name for a
``tokenizer_config.json``), the path as given, or a bundled template's name. Error codes cannot be
silenced: an error always fails the run.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from rtcompile.errors import Diagnostic, format_path
from rtcompile.frontend.source import TOKENIZER_CONFIG_NAME
from rtcompile.tooling.codes import CODES

OutputFormat = Literal["text", "json"]
OUTPUT_FORMATS: tuple[OutputFormat, ...] = ("text", "json")


class DisableError(ValueError):
    """A `--disable` value that names no code, or an error's code."""


@dataclass(frozen=True)
class Silenced:
    """The codes `--disable` silenced: everywhere, and per template (by the names `template_names` gives)."""

    everywhere: frozenset[str] = frozenset()
    per_template: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def parse(cls, values: Iterable[str]) -> Silenced:
        everywhere: set[str] = set()
        per_template: dict[str, set[str]] = {}
        for value in values:
            template, _, code = value.rpartition(":")
            _check_code(code, value)
            if template:
                per_template.setdefault(template, set()).add(code)
            else:
                everywhere.add(code)
        return cls(frozenset(everywhere), {name: frozenset(codes) for name, codes in per_template.items()})

    def hides(self, diagnostic: Diagnostic, names: Iterable[str] = ()) -> bool:
        """Whether `diagnostic`, about the template known by `names`, is silenced."""
        if diagnostic.severity == "error":
            return False
        if diagnostic.code in self.everywhere:
            return True
        return any(diagnostic.code in self.per_template.get(name, ()) for name in names)


def _check_code(code: str, value: str) -> None:
    severity = CODES.get(code)
    if severity is None:
        close = difflib.get_close_matches(code, sorted(CODES), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise DisableError(f"--disable {value}: no such code {code!r}{hint} (docs/template-language.md lists them)")
    if severity == "error":
        raise DisableError(f"--disable {value}: {code!r} is an error, which cannot be silenced")


def template_names(source: str | os.PathLike[str], as_given: str | None = None) -> set[str]:
    """The names `--disable TEMPLATE:CODE` may use for a template read from `source`: its file name with
    and without the extension (the model directory's name for a tokenizer config), the path as given
    on the command line (`as_given`, also a bundled template's name) and as read."""
    path = Path(source)
    names = {str(source), path.name, path.stem}
    if path.name == TOKENIZER_CONFIG_NAME:
        names.add(path.resolve().parent.name)
    if as_given is not None:
        names.add(as_given)
    return names


def as_json(diagnostic: Diagnostic) -> dict[str, Any]:
    """A diagnostic as `--output-format json` gives it."""
    return {
        "file": diagnostic.file,
        "line": diagnostic.line,
        "col": diagnostic.col,
        "severity": diagnostic.severity,
        "code": diagnostic.code,
        "path": format_path(diagnostic.path),
        "json_path": list(diagnostic.path),
        "message": diagnostic.message,
        "example": diagnostic.example,
    }


class Reporter:
    """Prints diagnostics to `stream`: as they come (text), or all at once when the run ends (JSON)."""

    def __init__(self, output_format: OutputFormat, stream: TextIO) -> None:
        self.output_format = output_format
        self.stream = stream
        self.held: list[Diagnostic] = []

    def report(self, diagnostics: Sequence[Diagnostic]) -> None:
        if self.output_format == "json":
            self.held += diagnostics
            return
        for diagnostic in diagnostics:
            print(diagnostic.render(), file=self.stream, flush=True)

    def finish(self) -> None:
        """The end of the run: JSON output is printed now (an empty array if there was nothing)."""
        if self.output_format == "json":
            print(json.dumps([as_json(d) for d in self.held], indent=2), file=self.stream)  # ASCII: no raw control text
            self.held = []
