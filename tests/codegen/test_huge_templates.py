"""Templates with a huge value (a string of megabytes in `defaults`): compiling costs memory in
proportion to the template, with a small constant, and the module holds the value once."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

import rtcompile
from tests.support.compiled import import_file
from tests.support.lanes import pick


@pytest.mark.parametrize(
    "text",
    [
        "a" * 1_000_000,  # a plain run: one long literal
        # Every character escaped or wide: the slow paths of a literal. 950 KB of JSON, which tracemalloc makes
        # cost 5 to 10 s of CPU; the fast lane compiles 380 KB of it (a peak of 8 bytes per byte with the
        # module's own megabyte counted in; the copies this test caught cost 130).
        "\u00e9\n\"\\\u4e00'" * pick(50_000, 20_000),
    ],
    ids=["plain", "escaped"],
)
def test_compiling_a_huge_default_costs_a_few_bytes_per_byte(tmp_path: Path, text: str) -> None:
    source = tmp_path / "huge.json"
    source.write_text(
        json.dumps({"start_anchor": "<A>", "defaults": {"big": text}, "fields": {"content": {}}}), encoding="utf-8"
    )
    size = source.stat().st_size
    rtcompile.compile_template({"start_anchor": "<A>", "fields": {"content": {}}})  # imports and caches first
    tracemalloc.start()
    try:
        code = rtcompile.compile_template(source)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * size  # before: about 130 bytes per byte (a 64 MiB read buffer, a regex's stack)
    # The default written once (it was written twice: TEMPLATE and DEFAULTS, over 2x); within 88
    # columns it is written in pieces of about 80 characters, a line each (about 0.2 bytes per byte).
    assert len(code) < 1.4 * size
    module_path = tmp_path / "huge_parser.py"
    module_path.write_text(code, encoding="utf-8")
    module = import_file(module_path, f"huge_parser_{len(text)}_{ord(text[0])}")
    assert module.DEFAULTS == {"big": text} and module.DEFAULTS is not module.TEMPLATE["defaults"]
    assert module.parse_response("hi", prefix="<A>") == {"big": text, "content": "hi"}
