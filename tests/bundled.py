"""The bundled response templates (templates/*.json), as the tests read them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def template_file(model: str) -> Path:
    return TEMPLATES / f"{model}.json"


def template_of(model: str) -> dict[str, Any]:
    """The `response_template` of a bundled template, by model name."""
    document = json.loads(template_file(model).read_text(encoding="utf-8"))
    return dict(document["response_template"])
