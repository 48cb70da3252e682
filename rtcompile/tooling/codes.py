"""Every code a diagnostic can carry, with its severity: what `--disable CODE` accepts.

The load-time warnings' codes are defined beside the checks that find them (`rtcompile.frontend.
diagnostics`), the regex-fallback note's in `rtcompile.api`; `lint`'s own are defined here, so that
`rtcompile` can check a `--disable` list without importing the linter (and jinja2). docs/template-
language.md explains each code; a test checks that it lists exactly these.
"""

from __future__ import annotations

from rtcompile.api import REGEX_FALLBACK
from rtcompile.errors import LOAD_ERROR, Severity
from rtcompile.frontend import diagnostics

NO_IMPLICIT_FIELD = "no-implicit-field"
NARROW_NAME_CAPTURE = "narrow-name-capture"
STRIPPED_INDENTATION = "stripped-indentation"
OPTIONAL_CAPTURE = "optional-capture"
STREAM_DIVERGENCE = "stream-divergence"
IMPLICIT_OVERWRITE = "implicit-overwrite"
GENERATION_PROMPT = "generation-prompt"
ANCHOR_NOT_FOUND = "anchor-not-found"
ANCHOR_TOO_EARLY = "anchor-too-early"
CHAT_TEMPLATE_RENDER = "chat-template-render"
FIELD_NOT_RENDERED = "field-not-rendered"

#: What `rtcompile lint` finds beyond the load-time warnings, each with the severity it always has.
LINT_CODES: dict[str, Severity] = {
    NO_IMPLICIT_FIELD: "warning",
    NARROW_NAME_CAPTURE: "warning",
    STRIPPED_INDENTATION: "warning",
    OPTIONAL_CAPTURE: "warning",
    STREAM_DIVERGENCE: "error",
    IMPLICIT_OVERWRITE: "warning",
    GENERATION_PROMPT: "info",
    ANCHOR_NOT_FOUND: "error",
    ANCHOR_TOO_EARLY: "error",
    CHAT_TEMPLATE_RENDER: "warning",
    FIELD_NOT_RENDERED: "warning",
}

#: Every code, with its severity.
CODES: dict[str, Severity] = {
    LOAD_ERROR: "error",
    **{code: "warning" for code in diagnostics.CODES},
    REGEX_FALLBACK: "warning",
    **LINT_CODES,
}
