"""Templates nested hundreds of levels deep: valid JSON, and exactly as transformers treats them.

A `transform` or `defaults` value 200 levels deep used to make the compiler write a module CPython
cannot parse (too many nested parentheses), and 400 levels made it die with RecursionError. Now deep
values are built from flat programs (`rtcompile.runtime.transform_data`), and where transformers runs
out of stack, rtcompile fails the same way (RecursionError), at the same step, without a traceback of
its own. `rtcompile.nesting` says where the reference's limits are; the last tests measure
them against transformers in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import transformers.utils.chat_parsing as reference

import rtcompile
from rtcompile.backends.codegen.generate import compact_json
from rtcompile.nesting import MAX_DEFAULTS_LEVEL, MAX_TRANSFORM_APPLY_LEVEL, MAX_TRANSFORM_LOAD_LEVEL
from rtcompile.tooling.cli import main
from rtcompile.tooling.observe import Raised, identical
from tests.compiled import compiled_engine, compiled_module
from tests.differential import interpreter_engine, observe, reference_engine

pytestmark = pytest.mark.slow  # compiles modules of a few thousand lines and runs transformers on deep data

DEPTHS = [50, 200, 400, 1000]
TEXT = "<o>body</o>tail"


def nested(depth: int, leaf: Any, container: str) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"k": value} if container == "dict" else [value]
    return value


def deep_template(kind: str, depth: int, container: str) -> dict[str, Any]:
    """A template with one value `depth` containers deep: a transform (of an explicit and of the implicit
    field, one with a capture) or a default."""
    fields: dict[str, Any] = {
        "tool": {"open_pattern": "<(?P<tag>o)>", "close": "</o>"},
        "content": {},
    }
    if kind == "transform":
        fields["tool"]["transform"] = {"name": "{tag}", "deep": nested(depth, "{content}", container)}
        fields["content"]["transform"] = nested(depth, ["{content}", 1, None], container)
        return {"start_anchor": "<a>", "fields": fields}
    fields["tool"]["transform"] = {"name": "{tag}"}
    return {
        "start_anchor": "<a>",
        "defaults": {"role": "assistant", "x": nested(depth, 1, container)},
        "fields": fields,
    }


def records_caught_alike(ours: list[Any], reference: list[Any]) -> bool:
    """Equal records, except that an exception only has to be caught by the same `except` clauses: a
    template too deep to load raises our TemplateRecursionError (a TemplateError that is also a
    RecursionError) where transformers runs out of stack with a bare RecursionError."""
    if len(ours) != len(reference):
        return False
    return all(
        a.caught_alike(b) if isinstance(a, Raised) and isinstance(b, Raised) else a == b
        for a, b in zip(ours, reference, strict=True)
    )


CASES = [
    (kind, depth, container) for kind in ("transform", "defaults") for depth in DEPTHS for container in ("dict", "list")
]


@pytest.mark.parametrize(("kind", "depth", "container"), CASES)
def test_deep_template_behaves_like_transformers(kind: str, depth: int, container: str) -> None:
    template = deep_template(kind, depth, container)
    for chunks in ([TEXT], list(TEXT)):
        expected = observe(reference_engine(template), "", chunks)
        interpreted = observe(interpreter_engine(template), "", chunks)
        assert records_caught_alike(interpreted, expected)
        if depth < 1000:
            compiled = observe(compiled_engine(template), "", chunks)
            assert identical(compiled, interpreted)
    if depth >= 1000:  # too deep for transformers to load: so too for us, as one clean RecursionError
        with pytest.raises(RecursionError) as raised:
            rtcompile.compile_template(template)
        assert isinstance(raised.value, rtcompile.TemplateError)
        assert "\n" not in str(raised.value) and "transformers 5.24.0" in str(raised.value)
    else:
        assert compiled_module(template).TEMPLATE == template


def test_deep_module_imports_bare_and_type_checks(tmp_path: Path) -> None:
    template = deep_template("transform", 400, "dict")
    template["defaults"] = {"x": nested(400, [1.5, "s"], "list")}
    path = tmp_path / "deep_parser.py"
    path.write_text(rtcompile.compile_template(template), encoding="utf-8")
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import deep_parser; "
        "print(deep_parser.parse_response('x', prefix='')['content'] is not None)"
    )
    result = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(tmp_path)], capture_output=True, text=True)
    assert (result.returncode, result.stdout) == (0, "True\n"), result.stderr
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(path)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout


@pytest.mark.parametrize(
    ("transform", "error"),
    [
        ({"a": "{missing}", "b": nested(600, "{content}", "dict")}, KeyError),  # the placeholder is met first
        ({"a": nested(600, "{content}", "list"), "b": "{missing}"}, RecursionError),  # the overflow is
        ([nested(600, 1, "list"), "{content.x}"], RecursionError),
        ({"a": "{content.x}", "b": nested(600, 1, "list")}, ValueError),
    ],
)
def test_of_an_overflow_and_a_failing_placeholder_the_one_transformers_meets_first_raises(
    transform: Any, error: type[Exception]
) -> None:
    template = {"start_anchor": "<a>", "fields": {"content": {"transform": transform}}}
    for engine in (reference_engine, interpreter_engine, compiled_engine):
        record = observe(engine(template), "", ["text"])
        assert record[-1].step == "finalize" and error.__name__ in record[-1].builtin_types, engine


@pytest.mark.parametrize(
    ("transform", "error"),
    [
        ({"a": "mixed {content} text", "b": nested(1000, 1, "dict")}, ValueError),
        ({"a": nested(1000, 1, "dict"), "b": "mixed {content} text"}, RecursionError),
    ],
)
def test_at_load_a_mixed_placeholder_string_or_too_deep_a_transform_whichever_comes_first(
    transform: Any, error: type[Exception]
) -> None:
    template = {"start_anchor": "<a>", "fields": {"content": {"transform": transform}}}
    with pytest.raises(error):
        reference.ResponseParser(template, prefix="")
    with pytest.raises(error) as raised:
        rtcompile.load_template(template)
    assert isinstance(raised.value, rtcompile.TemplateError)


def test_the_cli_compiles_a_deep_file_and_reports_a_too_deep_one_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for depth, status in ((400, 0), (1000, 2)):
        source = tmp_path / f"deep_{depth}.json"
        source.write_text(compact_json(deep_template("transform", depth, "dict")), encoding="utf-8")
        assert main([str(source), "-o", str(tmp_path / f"deep_{depth}_parser.py")]) == status
        err = capsys.readouterr().err
        assert (err.count("\n"), "Traceback" in err) == (0 if status == 0 else 1, False), err


# The limits in rtcompile.nesting are transformers' own, from a top-level caller: at each
# limit it succeeds, one level deeper it raises RecursionError; rtcompile follows at the same levels.
# Each call is a statement of the probe script itself, so that nothing but the module frame is below it.
PROBE_HEAD = """
import json, warnings
warnings.simplefilter("ignore")
import transformers.utils.chat_parsing as reference
import rtcompile
def nested(depth, leaf):
    value = leaf
    for _ in range(depth):
        value = [value]
    return value
results = {}
"""
PROBE_CASE = """
template = {template}
try:
    {call}
    results[{name!r}] = "ok"
except RecursionError:
    results[{name!r}] = "RecursionError"
"""
TRANSFORM = '{{"start_anchor": "<a>", "fields": {{"content": {{"transform": nested({depth}, "{{content}}")}}}}}}'
DEFAULTS = '{{"start_anchor": "<a>", "defaults": {{"x": nested({depth} - 1, 1)}}, "fields": {{"content": {{}}}}}}'
CALLS = {  # what is measured: (template, the reference's call, ours); a default's level counts the defaults dict
    "apply": (
        TRANSFORM,
        'reference.parse_response("x", template, prefix="")',
        'rtcompile.parse_response("x", template, prefix="")',
    ),
    "load": (TRANSFORM, 'reference.ResponseParser(template, prefix="")', "rtcompile.load_template(template)"),
    "defaults": (DEFAULTS, 'reference.ResponseParser(template, prefix="")', "rtcompile.load_template(template)"),
}
LIMITS = {"apply": MAX_TRANSFORM_APPLY_LEVEL, "load": MAX_TRANSFORM_LOAD_LEVEL, "defaults": MAX_DEFAULTS_LEVEL}


def test_the_limits_are_where_transformers_runs_out_of_stack_from_a_top_level_caller() -> None:
    probe = PROBE_HEAD
    expected = {}
    for what, (template, theirs, ours) in CALLS.items():
        for depth in (LIMITS[what], LIMITS[what] + 1):
            for engine, call in (("reference", theirs), ("ours", ours)):
                name = f"{engine} {what} {depth}"
                probe += PROBE_CASE.format(template=template.format(depth=depth), call=call, name=name)
                expected[name] = "ok" if depth == LIMITS[what] else "RecursionError"
    probe += "print(json.dumps(results))\n"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(result.stdout.splitlines()[-1]) == expected
