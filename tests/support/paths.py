"""Where the tests find the repository's files, wherever the test module itself sits."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "templates"  # the bundled response templates
DATA = ROOT / "tests" / "data"  # tests/data/<model>/cases.json: each bundled template's recorded cases
GOLDEN = ROOT / "tests" / "golden"  # hand-written templates and the modules they must compile to
GENERATED = ROOT / "generated"  # the committed compiled modules
