"""The rules for runtime authors (`rtcompile/runtime/README.md`), each one a machine can check.

(Rule 6, methods lifted only where called, is checked on the modules it produces:
`tests/test_modules_carry_what_they_run.py`, and by every differential test that runs them; rule 8 by
ruff, with `rtcompile/runtime/ruff.toml`.)
"""

from __future__ import annotations

import ast
import sys
from collections import Counter

import pytest

from rtcompile.backends.codegen.lift import DEFINED_BY_MODULE, RUNTIME_DIR

MODULES = sorted(path.stem for path in RUNTIME_DIR.glob("*.py"))
# The standard library modules a runtime module may import (rule 1): each one costs every generated
# module that lifts it its import time.
ALLOWED_IMPORTS = frozenset(
    {
        "__future__",
        "_thread",
        "collections.abc",
        "copy",
        "json",
        "math",
        "os",
        "re",
        "sys",
        "time",
        "types",
        "typing",
        "warnings",
        "functools",
    }
)
# What generated modules define themselves at run time (the skeleton's stand-ins).
RUN_TIME_TYPING = frozenset({"cast", "overload"})


def tree(module: str) -> ast.Module:
    return ast.parse((RUNTIME_DIR / f"{module}.py").read_text(encoding="utf-8"))


@pytest.mark.parametrize("module", MODULES)
def test_a_runtime_module_imports_only_the_allowed_standard_library(module: str) -> None:
    """At the top, the allowed list (every import of a module pays for those); inside a function, where
    only a call pays (`inspect` to convert a Python-function tool), any standard-library module."""
    module_tree = tree(module)
    at_top = {name for node in module_tree.body for name in _imported(node)}
    anywhere = {name for node in ast.walk(module_tree) for name in _imported(node)}
    assert at_top <= ALLOWED_IMPORTS, at_top - ALLOWED_IMPORTS
    assert {name.split(".")[0] for name in anywhere} <= sys.stdlib_module_names


def _imported(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if isinstance(node, ast.ImportFrom) and not (node.module or "").startswith("rtcompile.runtime."):
        return {node.module or ""}
    return set()


@pytest.mark.parametrize("module", [m for m in MODULES if m not in DEFINED_BY_MODULE])
def test_typing_names_appear_only_where_the_type_checker_reads_them(module: str) -> None:
    module_tree = tree(module)
    typing_names = {
        alias.asname or alias.name
        for node in module_tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "typing"
        for alias in node.names
    }
    in_annotations = {id(n) for node in ast.walk(module_tree) for n in _annotation_nodes(node)}
    misused = [
        f"line {node.lineno}: {node.id}"
        for node in ast.walk(module_tree)
        if isinstance(node, ast.Name) and node.id in typing_names - RUN_TIME_TYPING and id(node) not in in_annotations
    ]
    assert misused == []
    aliases = [
        node
        for node in ast.walk(module_tree)
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.annotation, ast.Name)
        and node.annotation.id == "TypeAlias"
    ]
    assert all(isinstance(a.value, ast.Constant) and isinstance(a.value.value, str) for a in aliases)


def _annotation_nodes(node: ast.AST) -> list[ast.AST]:
    """Every node inside an annotation of `node` (a parameter, a return, an annotated assignment)."""
    annotations: list[ast.expr] = []
    if isinstance(node, ast.arg) and node.annotation is not None:
        annotations.append(node.annotation)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
        annotations.append(node.returns)
    elif isinstance(node, ast.AnnAssign):
        annotations.append(node.annotation)
    return [inner for annotation in annotations for inner in ast.walk(annotation)]


def test_no_top_level_name_is_defined_in_two_runtime_modules() -> None:
    defined = Counter(name for module in MODULES if module not in DEFINED_BY_MODULE for name in _top_level(module))
    assert [name for name, count in defined.items() if count > 1] == []


def _top_level(module: str) -> list[str]:
    names = []
    for node in tree(module).body:
        if isinstance(node, ast.FunctionDef) and any(_is_overload(d) for d in node.decorator_list):
            continue  # a signature of the function defined next
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            names.append(node.target.id)
    return names


def _is_overload(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Name) and decorator.id == "overload"


@pytest.mark.parametrize("module", MODULES)
def test_nothing_runs_at_import_but_definitions_and_constants(module: str) -> None:
    allowed = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)
    body = tree(module).body
    docstring = body[:1] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else []
    assert [type(node).__name__ for node in body[len(docstring) :] if not isinstance(node, allowed)] == []
    bound = Counter(name for name in _top_level(module))
    assert [name for name, count in bound.items() if count > 1] == []
