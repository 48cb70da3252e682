"""The bundled response templates (templates/*.json) and their recorded cases, as the tests read them."""

from __future__ import annotations

import json
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import rtcompile
from rtcompile.errors import TemplateWarning
from tests.support import lanes
from tests.support.paths import DATA, TEMPLATES

MODELS = sorted(path.stem for path in TEMPLATES.glob("*.json"))

# Templates with a construct no grammar can follow: the refusal names the field and the construct.
NO_GRAMMAR = {
    "mimo": "fields.tool_calls.close_pattern: lookbehind has no grammar form",
    # Its tag end `(?:]<]minimax[>[)?</[^>\s]+>` can spell the call close `]<]minimax[>[</invoke>`: the
    # grammar admitted a call closed inside a tag, without its required arguments (found by a walk).
    "minimax_m3": "fields.tool_calls.content_args.tag_pattern: "
    "a tag's end can spell the close delimiter, which has no grammar form",
    "nemotron": "fields.tool_calls.close_pattern: lookbehind has no grammar form",
    "qwen2_5_coder": "fields.tool_calls.open_pattern: lookbehind has no grammar form",
    "qwen3_coder": "fields.reasoning_content.close_pattern: "
    "a lookahead other than ^(?=[characters]) has no grammar form",
    "seed_oss": "fields.tool_calls.close_pattern: lookbehind has no grammar form",
    "step3": "fields.tool_calls.close_pattern: lookbehind has no grammar form",
}


def template_file(model: str) -> Path:
    return TEMPLATES / f"{model}.json"


def template_of(model: str) -> dict[str, Any]:
    """The `response_template` of a bundled template, by model name."""
    document = json.loads(template_file(model).read_text(encoding="utf-8"))
    return dict(document["response_template"])


@cache
def loaded(model: str) -> rtcompile.Template:
    """The rtcompile IR, loaded once; the warnings are checked by test_template_loads_and_compiles_in_rtcompile
    (tests/differential/test_bundled_templates.py)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TemplateWarning)
        return rtcompile.load_template(template_file(model))


def lane_cases(model: str) -> list[dict[str, Any]]:
    """The recorded cases a test of every case runs in this lane: all of them, or in the fast lane the
    first two (tests/support/lanes.py). The recorded behaviour itself is checked on every case in every
    lane (tests/differential/test_bundled_templates.py)."""
    cases = cases_of(model)
    return cases if lanes.FULL else cases[:2]


def cases_of(model: str) -> list[dict[str, Any]]:
    """The recorded cases of a bundled template (tests/data/<model>/cases.json), or none."""
    path = DATA / model / "cases.json"
    if not path.exists():
        return []
    cases: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return cases
