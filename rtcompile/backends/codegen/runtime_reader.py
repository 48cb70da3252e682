"""Reading a runtime module for the lifter: its `runtime_index.ModuleIndex`.

libcst writes the code out, exactly as the runtime has it (comments and layout kept); Python's own
tree, statement for statement, says what each definition reads (walking it costs a tenth of libcst's
visitors). A class's source is cut into its members' texts (`_class_pieces`), so that a lift can leave
out the methods nothing calls by joining the others; the cut is checked against libcst's text of the
whole class when the module is read.
"""

from __future__ import annotations

import ast

import libcst as cst

from rtcompile.backends.codegen.runtime_index import Definition, InlineBody, Method, ModuleIndex, Pieces

RUNTIME_PACKAGE = "rtcompile.runtime"
# A statement standing for a class's members while its header and footer are written out.
_MARKER = "__rtcompile_members__"


def read_module(name: str, source: str) -> ModuleIndex:
    """The index of runtime module `name`, whose text is `source`."""
    tree, statements, imports = parse(name, source)
    definitions = {defined: _definition(tree, name, defined, pairs) for defined, pairs in statements.items()}
    inlined: dict[str, InlineBody | str] = {}
    for pairs in statements.values():
        node = pairs[-1][0]
        if isinstance(node, cst.ClassDef):
            for member in node.body.body:
                if isinstance(member, cst.FunctionDef):
                    inlined[f"{node.name.value}.{member.name.value}"] = _inline_body(tree, member)
    return ModuleIndex(definitions, imports, inlined)


Statements = dict[str, tuple[tuple[cst.CSTNode, ast.stmt], ...]]


def parse(name: str, source: str) -> tuple[cst.Module, Statements, dict[str, str]]:
    """A runtime module's tree; its top-level definitions, each as its statements (libcst's and
    Python's: several for a function with `@overload`s); its import bindings (bound name -> import
    line)."""
    tree = cst.parse_module(source)
    # The same statements in Python's tree, one for one (runtime modules put one statement on a line).
    python_tree = ast.parse(source).body
    assert len(python_tree) == len(tree.body), f"runtime/{name}.py: one statement per line, no `;`"
    statements: Statements = {}
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
    return tree, statements, imports


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


def _definition(
    tree: cst.Module, module: str, name: str, pairs: tuple[tuple[cst.CSTNode, ast.stmt], ...]
) -> Definition:
    """A definition from its libcst statements (what is written out) and the same statements in
    Python's tree (what is read)."""
    statements = tuple(s for s, _ in pairs)
    trees = tuple(t for _, t in pairs)
    statement, python_tree = statements[-1], trees[-1]
    if not isinstance(statement, cst.ClassDef):
        reads = [_reads(t) for t in trees]
        uses = frozenset().union(*(names for names, _ in reads))
        attributes = frozenset().union(*(attributes for _, attributes in reads))
        source = "".join(tree.code_for_node(s) for s in statements)
        return Definition(module, name, ((None, source),), uses, attributes, ())
    assert isinstance(python_tree, ast.ClassDef) and len(python_tree.body) == len(statement.body.body)
    shell_uses: set[str] = set()
    shell_attributes: set[str] = set()
    methods = []
    for member, member_tree in zip(statement.body.body, python_tree.body, strict=True):
        uses, attributes = _reads(member_tree)
        if isinstance(member, cst.FunctionDef):
            methods.append(Method(member.name.value, uses, attributes))
        else:
            shell_uses |= uses
            shell_attributes |= attributes
    for base in python_tree.bases:
        shell_uses |= _reads(base)[0]
    pieces = _class_pieces(tree, statement)
    return Definition(module, name, pieces, frozenset(shell_uses), frozenset(shell_attributes), tuple(methods))


def _class_pieces(tree: cst.Module, node: cst.ClassDef) -> Pieces:
    """A class's source as its header, each member's text (labelled with a method's name), and its
    footer: the class written with one member at a time, less what it is written with none."""
    assert isinstance(node.body, cst.IndentedBlock), f"class {node.name.value}: its body on its own lines"
    block = node.body

    def with_members(*members: cst.BaseStatement) -> str:
        return tree.code_for_node(node.with_changes(body=block.with_changes(body=list(members))))

    shell = with_members(cst.SimpleStatementLine([cst.Expr(cst.Name(_MARKER))]))
    at = shell.index(_MARKER)
    start, end = shell.rfind("\n", 0, at) + 1, shell.index("\n", at) + 1
    head, foot = shell[:start], shell[end:]
    pieces: list[tuple[str | None, str]] = [(None, head)]
    for member in block.body:
        alone = with_members(member)
        assert alone.startswith(head) and alone.endswith(foot), node.name.value
        label = member.name.value if isinstance(member, cst.FunctionDef) else None
        pieces.append((label, alone[len(head) : len(alone) - len(foot)]))
    pieces.append((None, foot))
    if "".join(text for _, text in pieces) != tree.code_for_node(node):
        raise AssertionError(f"class {node.name.value}: its members' texts do not make up its source")
    return tuple(pieces)


def _inline_body(tree: cst.Module, function: cst.FunctionDef) -> InlineBody | str:
    """A method's body for a generator that writes it inline (`lift.inlined_method`), or why it has
    not the shape inlining needs."""
    assert isinstance(function.body, cst.IndentedBlock)
    statements = list(function.body.body)
    if statements and _is_docstring(statements[0]):
        statements = statements[1:]
    last = statements[-1] if statements else None
    returned = last.body[0] if isinstance(last, cst.SimpleStatementLine) else None
    if not (isinstance(returned, cst.Return) and isinstance(returned.value, cst.Name)):
        return "must end with `return NAME` to be written inline"
    annotated = tuple(tree.code_for_node(statement).strip("\n") for statement in statements[:-1])
    if any('"""' in text or "'''" in text for text in annotated):
        return "a multi-line string cannot be re-indented inline"
    plain = tuple(tree.code_for_node(_unannotated(statement)).strip("\n") for statement in statements[:-1])
    return InlineBody(annotated, plain, returned.value.value)


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
