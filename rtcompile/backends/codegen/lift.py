"""Lift runtime helpers out of `rtcompile/runtime/` into a generated module.

The content parsers, coercion and partial-match helpers are ordinary, typed, tested Python in
`rtcompile.runtime`; the interpreter calls them directly. A generated module must not import
rtcompile, so the generator copies the definitions it needs, and only those: given the names a
template uses, this module finds their top-level definitions (functions, constants, classes),
follows the names they in turn use (across runtime modules, through `from rtcompile.runtime.x
import y`), and returns the source of every definition reached plus the standard-library imports
they rely on, in a stable order.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

RUNTIME_DIR = Path(__file__).resolve().parents[2] / "runtime"
RUNTIME_PACKAGE = "rtcompile.runtime"
# Runtime modules whose names a generated module defines itself, specialised for its template
# (`Message`, `Event` and `FieldName` as TypedDicts and Literals): never lifted.
DEFINED_BY_MODULE = frozenset({"types"})


@dataclass(frozen=True)
class Definition:
    module: str
    name: str
    source: str
    uses: frozenset[str]


@dataclass(frozen=True)
class Lifted:
    imports: tuple[str, ...]
    definitions: tuple[str, ...]
    names: frozenset[tuple[str, str]]  # (runtime module, name) of every definition


class _NameCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


def _names_in(node: cst.CSTNode) -> frozenset[str]:
    collector = _NameCollector()
    node.visit(collector)
    return frozenset(collector.names)


def _defined_names(statement: cst.CSTNode) -> list[str]:
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return [statement.name.value]
    if isinstance(statement, cst.SimpleStatementLine):
        names = []
        for small in statement.body:
            targets: list[cst.BaseExpression] = []
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
            elif isinstance(small, cst.AnnAssign):
                targets = [small.target]
            names += [t.value for t in targets if isinstance(t, cst.Name)]
        return names
    return []


@functools.cache
def _module(name: str) -> tuple[dict[str, Definition], dict[str, str]]:
    """A runtime module's top-level definitions, and its import bindings (bound name -> import line)."""
    tree = cst.parse_module((RUNTIME_DIR / f"{name}.py").read_text(encoding="utf-8"))
    definitions: dict[str, Definition] = {}
    imports: dict[str, str] = {}
    for statement in tree.body:
        if isinstance(statement, cst.SimpleStatementLine) and isinstance(
            statement.body[0], (cst.Import, cst.ImportFrom)
        ):
            _record_import(statement.body[0], tree, imports)
            continue
        for defined in _defined_names(statement):
            definitions[defined] = Definition(
                name, defined, tree.code_for_node(statement).strip("\n"), _names_in(statement)
            )
    return definitions, imports


def _record_import(node: cst.Import | cst.ImportFrom, tree: cst.Module, imports: dict[str, str]) -> None:
    if isinstance(node, cst.ImportFrom):
        module = tree.code_for_node(node.module) if node.module is not None else ""
        if module == "__future__":
            return
        assert not isinstance(node.names, cst.ImportStar)
        for alias in node.names:
            bound = tree.code_for_node(alias.asname.name if alias.asname else alias.name)
            original = tree.code_for_node(alias.name)
            if module.startswith(RUNTIME_PACKAGE):
                # A sibling runtime module: lifted as a definition, not imported.
                imports[bound] = f"@{module.rsplit('.', 1)[1]}:{original}"
            else:
                clause = original if bound == original else f"{original} as {bound}"
                imports[bound] = f"from {module} import {clause}"
        return
    for alias in node.names:
        bound = tree.code_for_node(alias.asname.name if alias.asname else alias.name)
        imports[bound] = f"import {tree.code_for_node(alias.name)}"


def lift(wanted: Iterable[tuple[str, str]], *, defined: Iterable[tuple[str, str]] = ()) -> Lifted:
    """The definitions of `wanted` ((runtime module, name) pairs) and everything they use, except those
    in `defined` (lifted already, earlier in the module)."""
    ordered: list[Definition] = []
    seen: set[tuple[str, str]] = set(defined)
    import_lines: set[str] = set()

    def visit(module: str, name: str) -> None:
        if (module, name) in seen:
            return
        seen.add((module, name))
        definitions, imports = _module(module)
        definition = definitions[name]
        for used in sorted(definition.uses):
            if used in definitions and used != name:
                visit(module, used)
            elif used in imports:
                line = imports[used]
                if line.startswith("@"):
                    sibling, original = line[1:].split(":")
                    if sibling not in DEFINED_BY_MODULE:
                        visit(sibling, original)
                else:
                    import_lines.add(line)
        ordered.append(definition)  # after its dependencies

    for module, name in wanted:
        visit(module, name)
    names = [d.name for d in ordered]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise AssertionError(f"runtime helpers define the same name twice: {sorted(duplicates)}")
    return Lifted(
        imports=tuple(sorted(import_lines)),
        definitions=tuple(d.source for d in ordered),
        names=frozenset((d.module, d.name) for d in ordered),
    )
