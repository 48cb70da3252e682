"""The package's import layering (README, "How it is built"): no cycle, and no module importing a layer
that is not below its own.

Every import statement counts, wherever it stands (inside a function, under `if TYPE_CHECKING:`): an
import deferred into a function is still a dependency, and a cycle that works only because of where an
import sits breaks as soon as someone moves it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import ROOT

PACKAGE = ROOT / "rtcompile"

# Each layer with the layers directly below it, bottom first; a module may import its own layer and
# everything below it (transitively). The README's architecture section shows the same picture.
LAYERS: dict[str, tuple[str, ...]] = {
    "runtime": (),
    "vocabulary": (),
    "ir": ("vocabulary", "runtime"),
    "regex": ("ir",),
    "frontend": ("regex",),
    "plan": ("regex",),
    "backends": ("plan",),
    "api": ("frontend", "backends"),
    "tooling": ("api",),
}

# Which layer a module belongs to: the longest matching name wins.
MODULE_LAYERS: dict[str, str] = {
    "rtcompile.runtime": "runtime",
    "rtcompile.errors": "vocabulary",
    "rtcompile.nesting": "vocabulary",
    "rtcompile.version": "vocabulary",
    "rtcompile.ir": "ir",
    "rtcompile.per_template": "ir",  # what is derived from a template, kept with it
    "rtcompile.regex": "regex",
    "rtcompile.frontend": "frontend",
    "rtcompile.plan": "plan",
    "rtcompile.strategies": "plan",
    "rtcompile.scan_rule": "plan",
    "rtcompile.held_starts": "plan",
    "rtcompile.transform_program": "plan",
    "rtcompile.content_calls": "plan",
    "rtcompile.openai_roles": "plan",
    "rtcompile.grammars.automata": "plan",  # a template's grammar skeleton, built beside its plan
    "rtcompile.grammars.skeleton": "plan",
    "rtcompile.grammars": "api",  # grammar(): a template source and tools to a grammar
    "rtcompile.grammars.command": "tooling",
    "rtcompile.backends": "backends",
    "rtcompile.api": "api",
    "rtcompile.prompt": "api",
    "rtcompile.tooling": "tooling",
    "rtcompile.__main__": "tooling",
    "rtcompile": "tooling",  # the package itself re-exports the public API
}


def module_names(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, not `.__init__`)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(path: Path, name: str, modules: dict[str, Path]) -> set[str]:
    """The package's modules that the module `name` at `path` imports, by any import statement in it."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {_resolve(alias.name, modules) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from package import name` imports the submodule `package.name` when there is one.
            found |= {_resolve(f"{base}.{alias.name}", modules, fallback=base) for alias in node.names}
    return {module for module in found if module in modules and module != name}


def _resolve(dotted: str, modules: dict[str, Path], fallback: str | None = None) -> str:
    if dotted in modules or fallback is None:
        return dotted
    return fallback


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    modules = module_names(package)
    return {name: imports(path, name, modules) for name, path in modules.items()}


def layer_of(module: str) -> str:
    owners = [prefix for prefix in MODULE_LAYERS if module == prefix or module.startswith(prefix + ".")]
    assert owners, f"{module} belongs to no layer: add it to MODULE_LAYERS (and to the README's picture)"
    return MODULE_LAYERS[max(owners, key=len)]


def below(layer: str) -> set[str]:
    """The layers `layer` may import besides itself."""
    pending, seen = list(LAYERS[layer]), set()
    while pending:
        lower = pending.pop()
        if lower not in seen:
            seen.add(lower)
            pending.extend(LAYERS[lower])
    return seen


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(importer, imported) pairs where the imported module's layer is not below the importer's."""
    return sorted(
        (importer, imported)
        for importer, targets in graph.items()
        for imported in targets
        if layer_of(imported) != layer_of(importer) and layer_of(imported) not in below(layer_of(importer))
    )


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def test_every_module_has_a_layer() -> None:
    for module in module_names():
        layer_of(module)


def test_the_package_has_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert upward_imports(import_graph()) == []


def test_the_checker_finds_cycles_and_upward_imports(tmp_path: Path) -> None:
    """A package with one cycle (through a function-level import) and one upward import."""
    package = tmp_path / "rtcompile"
    (package / "runtime").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "ir.py").write_text("from rtcompile.api import load\n")  # upward: ir -> api
    (package / "api.py").write_text("def load():\n    from rtcompile import prompt\n")
    (package / "prompt.py").write_text("import rtcompile.api\n")  # api -> prompt -> api: a cycle
    (package / "runtime" / "engine.py").write_text("from rtcompile.runtime import content\n")
    (package / "runtime" / "content.py").write_text("")
    graph = import_graph(package)
    assert graph == {
        "rtcompile": set(),
        "rtcompile.api": {"rtcompile.prompt"},
        "rtcompile.ir": {"rtcompile.api"},
        "rtcompile.prompt": {"rtcompile.api"},
        "rtcompile.runtime.content": set(),
        "rtcompile.runtime.engine": {"rtcompile.runtime.content"},
    }
    assert cycles(graph) == [["rtcompile.api", "rtcompile.prompt"]]
    assert upward_imports(graph) == [("rtcompile.ir", "rtcompile.api")]
