"""Lift runtime helpers out of `rtcompile/runtime/` into a generated module.

The content parsers, coercion and partial-match helpers are ordinary, typed, tested Python in
`rtcompile.runtime`; the interpreter calls them directly. A generated module must not import
rtcompile, so the generator copies the definitions it runs, and only those:

* given the names a template uses, this module finds their top-level definitions (functions,
  constants, classes), follows the names they in turn use (across runtime modules, through
  `from rtcompile.runtime.x import y`), and returns the source of every definition reached plus the
  standard-library imports they rely on, in a stable order;
* of a class, only the methods something calls are lifted: its public methods (a user may call
  them) and dunders, and a private method only where its name is read as an attribute by the
  generated code or by a method or function lifted already (`used_attributes`). That is what keeps
  the engine's pending-run path out of modules that have no pending run.

A top-level annotation without a value (`ResponseParser: type[StreamingParser]`) declares a name the
generated module defines itself, for the runtime's type checker: it is never lifted.

What is known of each runtime module (its definitions, what they read, their source) is read once
with libcst and kept on disk between runs: see `runtime_index`.
"""

from __future__ import annotations

import ast
import functools
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rtcompile.backends.codegen.runtime_index import Definition, ModuleIndex, module_index

RUNTIME_DIR = Path(__file__).resolve().parents[2] / "runtime"
# Runtime modules whose names a generated module defines itself, specialised for its template
# (`Message`, `Event` and `FieldName` as TypedDicts and Literals): never lifted.
DEFINED_BY_MODULE = frozenset({"types"})


@dataclass(frozen=True)
class Lifted:
    imports: tuple[str, ...]
    definitions: tuple[str, ...]
    names: frozenset[tuple[str, str]]  # (runtime module, name) of every definition
    modules: tuple[str, ...]  # the runtime module of each definition, in the same order


def attributes_read(code: str) -> frozenset[str]:
    """The attribute names generated `code` reads (a statement, a function or an indented method)."""
    tree = ast.parse(textwrap.dedent(code))
    return frozenset(node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute))


@functools.cache
def _module(name: str) -> ModuleIndex:
    """What the lifter knows of runtime module `name` (read once per process, and cached on disk)."""
    return module_index(name, (RUNTIME_DIR / f"{name}.py").read_text(encoding="utf-8"), _read)


def _read(name: str, source: str) -> ModuleIndex:
    # Imported here: libcst takes a tenth of a second to import, and with the index cached a run never
    # needs it.
    from rtcompile.backends.codegen.runtime_reader import read_module

    return read_module(name, source)


def definitions_of(module: str) -> list[str]:
    """The names `rtcompile.runtime.<module>` defines at top level, in the order it defines them."""
    return list(_module(module).definitions)


def inlined_method(module: str, owner: str, method: str, *, annotated: bool = True) -> tuple[list[str], str]:
    """A runtime method's body for a generator that writes its work inline instead of calling it (the
    generated `feed` so writes the engine's `_region_text`, saving a call per chunk): its statements,
    docstring left out, each as code at indentation 0, but the final `return NAME`; and that NAME.
    Without `annotated`, an annotated assignment loses its annotation (the body written out a second
    time in one function: a type checker refuses a name declared twice).

    The method stays the one definition of that work; a body of another shape is refused here, so that
    a runtime author who changes it learns at once what inlining needs."""
    body = _module(module).inlined[f"{owner}.{method}"]
    if isinstance(body, str):
        raise AssertionError(f"{module}.{owner}.{method}: {body}")
    return list(body.annotated if annotated else body.plain), body.returned


def lift(
    wanted: Iterable[tuple[str, str]],
    *,
    defined: Iterable[tuple[str, str]] = (),
    used_attributes: Iterable[str] | None = None,
) -> Lifted:
    """The definitions of `wanted` ((runtime module, name) pairs) and everything they use, except those
    in `defined` (lifted already, earlier in the module).

    `used_attributes` are the attribute names the generated code reads: a class's private methods are
    lifted where one of them, or a lifted method or function, reads their name. None lifts every
    method (whole classes, as a test that lifts a runtime module whole wants them)."""
    ordered: list[Definition] = []
    seen: set[tuple[str, str]] = set(defined)
    import_lines: set[str] = set()
    attributes: set[str] = set(used_attributes or ())
    kept: dict[tuple[str, str], set[str]] = {}  # (module, class) -> the methods lifted

    def visit(module: str, name: str) -> None:
        if (module, name) in seen:
            return
        seen.add((module, name))
        definition = _module(module).definitions[name]
        read(definition, definition.uses, definition.attributes)
        if definition.methods:
            kept[(module, name)] = set()
        ordered.append(definition)  # after its dependencies (methods' ones may follow: they run later)

    def read(definition: Definition, uses: Iterable[str], attribute_names: Iterable[str]) -> None:
        """Lift what `definition` (or one of its methods) reads."""
        attributes.update(attribute_names)
        index = _module(definition.module)
        definitions, imports = index.definitions, index.imports
        for used in sorted(uses):
            if used in definitions and used != definition.name:
                visit(definition.module, used)
            elif used in imports:
                line = imports[used]
                if line.startswith("@"):
                    sibling, original = line[1:].split(":")
                    if sibling not in DEFINED_BY_MODULE:
                        visit(sibling, original)
                else:
                    import_lines.add(line)

    for module, name in wanted:
        visit(module, name)
    # Methods are lifted until nothing more is called: each one lifted may read another's name.
    changed = True
    while changed:
        changed = False
        for definition in list(ordered):
            methods = kept.get((definition.module, definition.name))
            if methods is None:
                continue
            for method in definition.methods:
                if method.name in methods:
                    continue
                if used_attributes is None or method.always or method.name in attributes:
                    methods.add(method.name)
                    read(definition, method.uses, method.attributes)
                    changed = True
    names = [d.name for d in ordered]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise AssertionError(f"runtime helpers define the same name twice: {sorted(duplicates)}")
    return Lifted(
        imports=tuple(sorted(import_lines)),
        definitions=tuple(d.source(_frozen(kept.get((d.module, d.name)))) for d in ordered),
        names=frozenset((d.module, d.name) for d in ordered),
        modules=tuple(d.module for d in ordered),
    )


def _frozen(methods: set[str] | None) -> frozenset[str] | None:
    return None if methods is None else frozenset(methods)
