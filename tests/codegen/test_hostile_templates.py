"""Templates are data: hostile text in any template string compiles to a module that runs none of it.

Field names, literal delimiters, defaults (nested), join strings and transform literals are drawn
from text built to break code generation: every kind of quote, triple quotes, backslashes and line
continuations, newlines, U+2028/U+2029, NUL, lone surrogates, braces, Python keywords and dunders,
the generated module's own identifiers, non-identifiers and non-ASCII. Each template compiles,
imports in a fresh interpreter without creating the file its payload asks for, and parses exactly
like the interpreter and transformers.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rtcompile
from rtcompile.tooling.observe import agrees_with_reference, identical
from tests.support.compiled import compiled_engine, compiled_module
from tests.support.differential import interpreter_engine, observe, reference_engine
from tests.support.lanes import examples

pytestmark = pytest.mark.slow  # ~10 s: compiles, imports and type-checks modules in fresh interpreters

PAYLOAD_FILE = Path("/tmp/rtcompile_hostile_payload_ran")
PAYLOAD = f"__import__('pathlib').Path({str(PAYLOAD_FILE)!r}).touch()"

HOSTILE_PIECES = [
    '"',
    "'",
    '"""',
    "'''",
    "\\",
    "\\\n",
    "\n",
    "\r",
    "\u2028",
    "\u2029",
    "\x00",
    "\ud800",
    "{",
    "}",
    "{content}",
    "__init__",
    "self",
    "None",
    "class",
    "TEMPLATE",
    "parse_response",
    "json",
    "re",
    "_NAMES",
    "1abc",
    "a-b",
    "é",
    "日本",
    "#",
    "\t",
    f'"); {PAYLOAD}; ("',
    f"'''\n{PAYLOAD}\n'''",
    f'"""\n{PAYLOAD}\n"""',
    f"\n{PAYLOAD}\n",
    "x",
]

hostile_text = st.lists(st.sampled_from(HOSTILE_PIECES), min_size=1, max_size=4).map("".join)
json_leaf = st.one_of(
    hostile_text, st.integers(-5, 5), st.booleans(), st.none(), st.floats(allow_nan=False, allow_infinity=False)
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def hostile_templates(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(hostile_text, min_size=1, max_size=3, unique=True))
    fields: dict[str, Any] = {}
    implicit = draw(st.sampled_from([None, *names]))
    for name in names:
        field: dict[str, Any] = {}
        if name != implicit:
            field["open"] = draw(hostile_text)
        if draw(st.booleans()):
            field["close"] = draw(st.lists(hostile_text, min_size=1, max_size=2))
        if draw(st.booleans()):
            field["repeats"] = True
            if draw(st.booleans()):
                field["join"] = draw(hostile_text)
        if draw(st.booleans()):
            literal_leaf = hostile_text.filter(lambda s: "{" not in s)
            field["transform"] = {
                draw(hostile_text): "{content}",
                draw(hostile_text): draw(st.one_of(literal_leaf, st.integers(), st.none())),
            }
        fields[name] = field
    return {
        "defaults": draw(st.dictionaries(hostile_text, json_value, max_size=3)),
        "start_anchor": draw(hostile_text),
        "fields": fields,
    }


def _streams(template: dict[str, Any]) -> list[str]:
    delimiters = [d for f in template["fields"].values() for key in ("open", "close") for d in _as_list(f.get(key))]
    body = "hello \u2028 world"
    return [
        "".join(delimiters) + body,
        body.join(delimiters),
        "".join(d[: len(d) // 2] + body for d in delimiters),
    ]


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(hostile_templates())
def test_hostile_template_compiles_imports_inertly_and_parses_like_the_reference(template: dict[str, Any]) -> None:
    PAYLOAD_FILE.unlink(missing_ok=True)
    module = compiled_module(template)
    assert module.TEMPLATE == template
    assert not PAYLOAD_FILE.exists(), "importing the generated module ran template text"
    for text in _streams(template):
        for chunks in ([text], list(text)):
            ours = observe(compiled_engine(template), "", chunks)
            assert identical(ours, observe(interpreter_engine(template), "", chunks))
            assert agrees_with_reference(ours, observe(reference_engine(template), "", chunks))


@settings(max_examples=examples(5), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_templates())
def test_hostile_template_module_imports_in_a_fresh_interpreter_and_type_checks(template: dict[str, Any]) -> None:
    directory = Path(tempfile.mkdtemp(prefix="rtcompile-hostile-"))
    path = directory / "hostile_parser.py"
    path.write_text(rtcompile.compile_template(template), encoding="utf-8")
    PAYLOAD_FILE.unlink(missing_ok=True)
    probe = "import sys; sys.path.insert(0, sys.argv[1]); import hostile_parser; print(len(hostile_parser.TEMPLATE))"
    result = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(directory)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert not PAYLOAD_FILE.exists()
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(path)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout
