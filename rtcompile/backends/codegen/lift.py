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
"""

from __future__ import annotations

import ast
import functools
import textwrap
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
class Method:
    """A method of a runtime class, lifted only where it is called (see the module docstring)."""

    name: str
    uses: frozenset[str]  # names it reads
    attributes: frozenset[str]  # attribute names it reads (`self._x`: `_x`)

    @property
    def always(self) -> bool:
        """Public and dunder methods are part of the class's interface: always lifted."""
        return not self.name.startswith("_") or self.name.endswith("__")


@dataclass(frozen=True)
class Definition:
    module: str
    name: str
    nodes: tuple[cst.CSTNode, ...]  # the top-level statement (with its `@overload`s: several)
    uses: frozenset[str]  # names read outside its methods
    attributes: frozenset[str]  # attribute names read outside its methods
    methods: tuple[Method, ...]  # a class's methods; () for anything else


@dataclass(frozen=True)
class Lifted:
    imports: tuple[str, ...]
    definitions: tuple[str, ...]
    names: frozenset[tuple[str, str]]  # (runtime module, name) of every definition
    modules: tuple[str, ...]  # the runtime module of each definition, in the same order


def _reads(node: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
    """The names and the attribute names `node` reads (a name defined or bound counts too: reading
    more than is used only lifts a definition more, never less). Walked on Python's own tree, which
    costs a tenth of libcst's visitors; libcst writes the code out."""
    names: set[str] = set()
    attributes: set[str] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            names.add(inner.id)
        elif isinstance(inner, ast.Attribute):
            attributes.add(inner.attr)  # (its value is walked on: `self._x.y` reads `self`)
        elif isinstance(inner, ast.arg):
            names.add(inner.arg)
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(inner.name)
        elif isinstance(inner, ast.keyword) and inner.arg is not None:
            names.add(inner.arg)
        elif isinstance(inner, (ast.Global, ast.Nonlocal)):
            names.update(inner.names)
        elif isinstance(inner, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and inner.name is not None:
            names.add(inner.name)
        elif isinstance(inner, ast.MatchClass):
            names.update(inner.kwd_attrs)
        elif isinstance(inner, ast.MatchMapping) and inner.rest is not None:
            names.add(inner.rest)
        elif isinstance(inner, (ast.alias, ast.ImportFrom)):
            # a dotted module name reads its first part, then attributes of it
            dotted = inner.name if isinstance(inner, ast.alias) else inner.module or ""
            first, *rest = dotted.split(".")
            names.update({first} - {"", "*"})
            attributes.update(rest)
            if isinstance(inner, ast.alias) and inner.asname is not None:
                names.add(inner.asname)
    return frozenset(names), frozenset(attributes)


def attributes_read(code: str) -> frozenset[str]:
    """The attribute names generated `code` reads (a statement, a function or an indented method)."""
    tree = ast.parse(textwrap.dedent(code))
    return frozenset(node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute))


def _defined_names(statement: cst.CSTNode) -> list[str]:
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return [statement.name.value]
    if isinstance(statement, cst.SimpleStatementLine):
        names = []
        for small in statement.body:
            targets: list[cst.BaseExpression] = []
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                targets = [small.target]
            names += [t.value for t in targets if isinstance(t, cst.Name)]
        return names
    return []


def _definition(module: str, name: str, statements: tuple[cst.CSTNode, ...], trees: tuple[ast.stmt, ...]) -> Definition:
    """A definition from its libcst statements (what is written out) and the same statements in
    Python's tree (what is read)."""
    statement, tree = statements[-1], trees[-1]
    if not isinstance(statement, cst.ClassDef):
        reads = [_reads(t) for t in trees]
        uses = frozenset().union(*(names for names, _ in reads))
        attributes = frozenset().union(*(attributes for _, attributes in reads))
        return Definition(module, name, statements, uses, attributes, ())
    assert isinstance(tree, ast.ClassDef) and len(tree.body) == len(statement.body.body)
    shell_uses: set[str] = set()
    shell_attributes: set[str] = set()
    methods = []
    for member, member_tree in zip(statement.body.body, tree.body, strict=True):
        uses, attributes = _reads(member_tree)
        if isinstance(member, cst.FunctionDef):
            methods.append(Method(member.name.value, uses, attributes))
        else:
            shell_uses |= uses
            shell_attributes |= attributes
    for base in tree.bases:
        shell_uses |= _reads(base)[0]
    return Definition(module, name, statements, frozenset(shell_uses), frozenset(shell_attributes), tuple(methods))


@functools.cache
def _module(name: str) -> tuple[cst.Module, dict[str, Definition], dict[str, str]]:
    """A runtime module's tree, top-level definitions, and import bindings (bound name -> import line)."""
    source = (RUNTIME_DIR / f"{name}.py").read_text(encoding="utf-8")
    tree = cst.parse_module(source)
    # The same statements in Python's tree, one for one (runtime modules put one statement on a line).
    python_tree = ast.parse(source).body
    assert len(python_tree) == len(tree.body), f"runtime/{name}.py: one statement per line, no `;`"
    statements: dict[str, tuple[tuple[cst.CSTNode, ast.stmt], ...]] = {}
    imports: dict[str, str] = {}
    for statement, python_statement in zip(tree.body, python_tree, strict=True):
        if isinstance(statement, cst.SimpleStatementLine) and isinstance(
            statement.body[0], (cst.Import, cst.ImportFrom)
        ):
            _record_import(statement.body[0], tree, imports)
            continue
        for defined in _defined_names(statement):
            # A function's `@overload` signatures come first and stay with it.
            earlier = statements.get(defined, ())
            pair = (statement, python_statement)
            statements[defined] = (*earlier, pair) if _overloads(tuple(s for s, _ in earlier)) else (pair,)
    definitions = {
        defined: _definition(name, defined, tuple(s for s, _ in pairs), tuple(t for _, t in pairs))
        for defined, pairs in statements.items()
    }
    return tree, definitions, imports


def definitions_of(module: str) -> list[str]:
    """The names `rtcompile.runtime.<module>` defines at top level, in the order it defines them."""
    return list(_module(module)[1])


def inlined_method(module: str, owner: str, method: str, *, annotated: bool = True) -> tuple[list[str], str]:
    """A runtime method's body for a generator that writes its work inline instead of calling it (the
    generated `feed` so writes the engine's `_region_text`, saving a call per chunk): its statements,
    docstring left out, each as code at indentation 0, but the final `return NAME`; and that NAME.
    Without `annotated`, an annotated assignment loses its annotation (the body written out a second
    time in one function: a type checker refuses a name declared twice).

    The method stays the one definition of that work; a body of another shape is refused here, so that
    a runtime author who changes it learns at once what inlining needs."""
    tree, definitions, _ = _module(module)
    node = definitions[owner].nodes[-1]
    assert isinstance(node, cst.ClassDef)
    (function,) = [m for m in node.body.body if isinstance(m, cst.FunctionDef) and m.name.value == method]
    assert isinstance(function.body, cst.IndentedBlock)
    statements = list(function.body.body)
    if statements and _is_docstring(statements[0]):
        statements = statements[1:]
    last = statements[-1] if statements else None
    returned = last.body[0] if isinstance(last, cst.SimpleStatementLine) else None
    if not (isinstance(returned, cst.Return) and isinstance(returned.value, cst.Name)):
        raise AssertionError(f"{module}.{owner}.{method} must end with `return NAME` to be written inline")
    body = statements[:-1] if annotated else [_unannotated(statement) for statement in statements[:-1]]
    code = [tree.code_for_node(statement).strip("\n") for statement in body]
    if any('"""' in text or "'''" in text for text in code):
        raise AssertionError(f"{module}.{owner}.{method}: a multi-line string cannot be re-indented inline")
    return code, returned.value.value


def _unannotated(statement: cst.BaseStatement) -> cst.BaseStatement:
    """`statement` with an annotated assignment (`x: T = v`) written as a plain one (`x = v`)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return statement
    small = statement.body[0]
    if not (isinstance(small, cst.AnnAssign) and small.value is not None):
        return statement
    plain = cst.Assign(targets=[cst.AssignTarget(small.target)], value=small.value)
    return statement.with_changes(body=[plain, *statement.body[1:]])


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _overloads(statements: tuple[cst.CSTNode, ...]) -> bool:
    """Whether `statements` are all `@overload` signatures of one function."""
    return bool(statements) and all(
        isinstance(s, cst.FunctionDef)
        and any(isinstance(d.decorator, cst.Name) and d.decorator.value == "overload" for d in s.decorators)
        for s in statements
    )


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
        definition = _module(module)[1][name]
        read(definition, definition.uses, definition.attributes)
        if definition.methods:
            kept[(module, name)] = set()
        ordered.append(definition)  # after its dependencies (methods' ones may follow: they run later)

    def read(definition: Definition, uses: Iterable[str], attribute_names: Iterable[str]) -> None:
        """Lift what `definition` (or one of its methods) reads."""
        attributes.update(attribute_names)
        _, definitions, imports = _module(definition.module)
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
        definitions=tuple(_source(d.module, d.name, _frozen(kept.get((d.module, d.name)))) for d in ordered),
        names=frozenset((d.module, d.name) for d in ordered),
        modules=tuple(d.module for d in ordered),
    )


def _frozen(methods: set[str] | None) -> frozenset[str] | None:
    return None if methods is None else frozenset(methods)


@functools.lru_cache(maxsize=1024)
def _source(module: str, name: str, methods: frozenset[str] | None) -> str:
    """A definition's source; a class with only the methods in `methods` (written out once per choice
    of methods: libcst takes a while to write out a class)."""
    tree, definitions, _ = _module(module)
    definition = definitions[name]
    nodes = list(definition.nodes)
    node = nodes[-1]
    if isinstance(node, cst.ClassDef) and methods is not None:
        members = [
            member
            for member in node.body.body
            if not isinstance(member, cst.FunctionDef) or member.name.value in methods
        ]
        nodes[-1] = node.with_changes(body=node.body.with_changes(body=members))
    return "".join(tree.code_for_node(n) for n in nodes).strip("\n")
