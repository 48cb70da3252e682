"""What a generated module defines but never runs: a call graph read off the module's own source.

The roots are what a user reaches: the names in `__all__` and the public upper-case constants
(`TEMPLATE`, `RTCOMPILE_VERSION`, ...). From a reachable function the graph follows every name it
reads; from a reachable class its bases and its class body. Methods are dispatched as Python does:
a class that is exported or instantiated is *concrete*, and a method name read as an attribute
(`self._x`, `parser.feed`) reaches the definition that each concrete class's bases resolve it to; a
concrete class's public methods and dunders are reached as a user would call them; `Base.m` and
`super().m` reach that one definition. Whatever is defined at module level (a function, a class, a
constant) or in a class (a method) and is not reached is reported: the generic `feed` of a base class
that every concrete class overrides, for one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def unreached(code: str, *, library: str | None = None) -> list[str]:
    """The module-level definitions and methods of `code` that nothing reachable uses. `library` is the
    source of a module `code` imports its base classes from (a thin module's shared runtime): a method
    whose name it reads as an attribute (a hook its engine calls, such as `_settle`) is reached."""
    graph = _Graph(ast.parse(code))
    if library is not None:
        graph.attributes.update(n.attr for n in ast.walk(ast.parse(library)) if isinstance(n, ast.Attribute))
    graph.walk()
    missing = [name for name in graph.definitions if name not in graph.names and not name.startswith("__")]
    missing += [f"{owner}.{method}" for owner, method in graph.methods if (owner, method) not in graph.reached]
    return sorted(missing)


def defined(code: str) -> set[str]:
    """The names `code` defines at module level (in module-level `if` blocks too)."""
    return {name for statement in _module_level(ast.parse(code).body) for name in _defines(statement)}


class _Graph:
    def __init__(self, tree: ast.Module) -> None:
        self.definitions: dict[str, list[ast.stmt]] = {}
        for statement in _module_level(tree.body):
            for name in _defines(statement):
                self.definitions.setdefault(name, []).append(statement)
        self.classes = {
            statement.name: statement
            for statements in self.definitions.values()
            for statement in statements
            if isinstance(statement, ast.ClassDef)
        }
        self.methods: dict[tuple[str, str], _Function] = {
            (name, member.name): member
            for name, cls in self.classes.items()
            for member in cls.body
            if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.exported = _exported(tree)
        self.names: set[str] = set()  # module-level names reached
        self.reached: set[tuple[str, str]] = set()  # (class, method) reached
        self.attributes: set[str] = set()  # method names read as attributes of an instance
        self.concrete: set[str] = set()  # classes exported or instantiated
        self.pending = [n for n in self.definitions if n in self.exported or (n.isupper() and n[0] != "_")]

    def walk(self) -> None:
        while True:
            while self.pending:
                self._reach_name(self.pending.pop())
            grown = False
            for owner in sorted(self.concrete):
                for cls in self._mro(owner):
                    for member in self.classes[cls].body:
                        if not isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            continue
                        public = not member.name.startswith("_") or member.name.endswith("__")
                        wanted = public or member.name in self.attributes
                        if wanted and self._resolve(owner, member.name) == cls:
                            grown |= self._reach_method(cls, member.name)
            if not grown and not self.pending:
                return

    def _reach_name(self, name: str) -> None:
        if name in self.names or name not in self.definitions:
            return
        self.names.add(name)
        for statement in self.definitions[name]:
            if isinstance(statement, ast.ClassDef):  # its methods are reached one by one, by dispatch
                parts: list[ast.AST] = [*statement.bases, *statement.decorator_list]
                parts += [m for m in statement.body if not isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
                if name in self.exported:
                    self.concrete.add(name)
            else:
                parts = [statement]
            for part in parts:
                self._read(part, None)

    def _reach_method(self, owner: str, method: str) -> bool:
        if (owner, method) in self.reached:
            return False
        self.reached.add((owner, method))
        self._read(self.methods[(owner, method)], owner)
        return True

    def _read(self, node: ast.AST, owner: str | None) -> None:
        """Follow what `node` (inside class `owner`, if any) reads."""
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
                self.pending.append(child.id)
            elif isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in self.classes:
                self.concrete.add(child.func.id)  # instantiated
            if not isinstance(child, ast.Attribute):
                continue
            base = child.value
            if isinstance(base, ast.Name) and base.id in self.classes:  # `Base.method`
                self.pending.append(base.id)
                target = self._resolve(base.id, child.attr)
                if target is not None:
                    self._reach_method(target, child.attr)
            elif _is_super(base) and owner is not None:  # `super().method`
                target = next((c for c in self._mro(owner)[1:] if (c, child.attr) in self.methods), None)
                if target is not None:
                    self._reach_method(target, child.attr)
            else:
                self.attributes.add(child.attr)

    def _mro(self, name: str) -> list[str]:
        """`name` and its bases defined in the module, most derived first (single inheritance)."""
        chain = [name]
        while True:
            bases = [b.id for b in self.classes[chain[-1]].bases if isinstance(b, ast.Name) and b.id in self.classes]
            if not bases:
                return chain
            chain.append(bases[0])

    def _resolve(self, owner: str, method: str) -> str | None:
        return next((c for c in self._mro(owner) if (c, method) in self.methods), None)


def _is_super(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, those inside module-level `if` blocks (TYPE_CHECKING) included."""
    for statement in body:
        if isinstance(statement, ast.If):
            yield from _module_level(statement.body)
            yield from _module_level(statement.orelse)
        else:
            yield statement


def _defines(statement: ast.stmt) -> list[str]:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    if isinstance(statement, ast.Assign):
        return [n.id for target in statement.targets for n in ast.walk(target) if isinstance(n, ast.Name)]
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    return []


def _exported(tree: ast.Module) -> set[str]:
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in statement.targets
        ):
            return {ast.literal_eval(element) for element in getattr(statement.value, "elts", [])}
    return set()
