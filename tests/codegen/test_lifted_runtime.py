"""Every runtime helper's tests, run again against its lifted copy: the definitions as a generated
module holds them, under the module's header (typing names exist for the type checker only).

A helper that works in `rtcompile.runtime` but not once lifted (a typing name used at run time, a
name the lifter did not follow) fails here, not in a user's compiled module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import libcst as cst
import pytest
import transformers.utils.chat_parsing as reference

import rtcompile
from rtcompile.backends.codegen.generate import SKELETON
from tests.support.compiled import compiled_module
from tests.support.lifted import PREAMBLE, lifted_module, rerun_tests
from tests.support.paths import ROOT

TESTS = ROOT / "tests"

# Each test file of a runtime helper, and the runtime modules it imports.
RERUN = {
    "runtime/test_tool_schema.py": ["tool_schema"],
    "runtime/test_coercion.py": ["coercion"],
    "runtime/test_content.py": ["content", "transform"],
    "regex/test_duplicate_names.py": ["partial"],
}
# (runtime.openai and runtime.openai_stream are imported by users from rtcompile, never lifted.)

# Tests that inspect a runtime module's source file (its shape), not its behaviour.
SOURCE_TESTS = frozenset({"test_module_shape_is_liftable"})

for file_name, runtime_modules in RERUN.items():
    prefix = f"lifted_{Path(file_name).stem.removeprefix('test_')}"
    rerun_tests(TESTS / file_name, runtime_modules, globals(), prefix, source_tests=SOURCE_TESTS)


def test_the_preamble_is_the_skeletons_header() -> None:
    # (as a module that calls both stand-ins has it: every module that lifts the engine and parse_response)
    header = SKELETON.get_template("typing_preamble.py.jinja").render(
        stand_ins=["cast", "overload"], typing_import="{typing_import}"
    )
    assert PREAMBLE.split("{imports}\n\n", 1)[1] == f"{header}\n"


def test_lifted_modules_are_not_the_runtime_modules() -> None:
    from rtcompile.runtime import tool_schema

    assert lifted_module("tool_schema").function_to_tool_schema is not tool_schema.function_to_tool_schema
    assert "Any" not in vars(lifted_module("tool_schema"))  # typing names exist for the type checker only


def _get_weather(city: Any, days: int = 1) -> str:
    """Get the weather.

    Args:
        city: where
        days: how many days
    """
    return ""


def test_a_compiled_module_accepts_a_tool_annotated_with_typing_any() -> None:
    template = {
        "start_anchor": "<A>",
        "fields": {
            "tool_calls": {
                "open": "<tool>",
                "close": "</tool>",
                "content": "json",
                "transform_each": True,
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
            },
            "content": {},
        },
    }
    module = compiled_module(template)
    text = '<tool>[{"name": "_get_weather", "arguments": {"city": 3, "days": "2"}}]</tool>'
    schema: dict[str, Any] = {"type": "function", "function": {"name": "x", "parameters": {}}}
    toolsets: list[list[Any]] = [[_get_weather], [_get_weather, schema]]
    for tools in toolsets:
        ours = module.parse_response(text, prefix="", tools=tools)
        assert ours == rtcompile.parse_response(text, template, prefix="", tools=tools)
        assert ours == reference.parse_response(text, template, prefix="", tools=tools)


def test_a_method_written_inline_is_its_body_without_docstring_and_final_return() -> None:
    """The generated `feed` writes the engine's `_region_text` out rather than calling it: the body as the
    runtime has it (the chunk event is still defined once), its final `return chunk` becoming the feed's
    `return [chunk]`."""
    from rtcompile.backends.codegen.lift import inlined_method

    statements, returned = inlined_method("engine", "StreamingParser", "_region_text")
    assert returned == "chunk"
    assert statements[0] == "body = self._body"
    assert statements[-1].startswith("chunk: RegionChunk = {")
    module = compiled_module({"start_anchor": "<a>", "fields": {"content": {"content": "text"}}})
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    feed = source[source.index("    def feed(self, text: str) -> list[Event]:", source.index("class ResponseParser")) :]
    for statement in statements:  # in the branch of the chunk's lane
        assert "\n".join("            " + line for line in statement.splitlines()) in feed
    assert "            return [chunk]" in feed


def test_a_method_of_another_shape_is_refused_for_inlining(tmp_path: Path, monkeypatch: Any) -> None:
    from rtcompile.backends.codegen import lift

    (tmp_path / "shapes.py").write_text(
        "class Shapes:\n"
        "    def computed(self, text: str) -> str:\n"
        "        return text + text\n"
        "    def named(self, text: str) -> str:\n"
        '        """Docstring."""\n'
        "        doubled = text + text\n"
        "        return doubled\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(lift, "RUNTIME_DIR", tmp_path)
    lift._module.cache_clear()
    try:
        assert lift.inlined_method("shapes", "Shapes", "named") == (["doubled = text + text"], "doubled")
        with pytest.raises(AssertionError, match="must end with `return NAME`"):
            lift.inlined_method("shapes", "Shapes", "computed")
    finally:
        lift._module.cache_clear()


# What the comparison deliberately ignores: libcst reads these constants as names, Python's tree as
# constants (no definition has their names).
CONSTANTS = frozenset({"None", "True", "False"})


class _LibcstNames(cst.CSTVisitor):
    """The names and attribute names a libcst node reads, as libcst sees them: the reading the lifter
    did with libcst's visitors before it walked Python's tree instead (ten times cheaper)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.attributes: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        if node.value not in CONSTANTS:
            self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.attributes.add(node.attr.value)
        node.value.visit(self)
        return False


def test_what_each_runtime_definition_reads_is_what_libcst_sees() -> None:
    """The lifter follows the names a definition reads (`runtime_reader._reads`, on Python's tree); for every
    definition and method of the runtime they are exactly the `Name` nodes libcst finds, and the
    attribute names, so the lift follows what it always followed."""
    from rtcompile.backends.codegen import lift, runtime_reader

    compared = 0
    for path in sorted(lift.RUNTIME_DIR.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        _, statements, _ = runtime_reader.parse(path.stem, source)
        for definition in runtime_reader.read_module(path.stem, source).definitions.values():
            nodes = [node for node, _ in statements[definition.name]]
            last = nodes[-1]
            members = last.body.body if isinstance(last, cst.ClassDef) else ()
            for member, method in zip(
                [m for m in members if isinstance(m, cst.FunctionDef)], definition.methods, strict=True
            ):
                seen = _LibcstNames()
                member.visit(seen)
                assert (method.uses, method.attributes) == (frozenset(seen.names), frozenset(seen.attributes)), (
                    path.stem,
                    method.name,
                )
                compared += 1
            if not members:
                seen = _LibcstNames()
                for node in nodes:
                    node.visit(seen)
                assert (definition.uses, definition.attributes) == (
                    frozenset(seen.names),
                    frozenset(seen.attributes),
                ), definition.name
                compared += 1
    assert compared > 200
