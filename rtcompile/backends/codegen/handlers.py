"""One handler per field: its content parser called with the arguments baked in, its transform unrolled
(or, nested too deep for one expression, run as data by `build_value`).

A handler is `(body, captures) -> value` (`rtcompile.runtime.engine.Handler`).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass

from rtcompile.backends.codegen.parts import ModuleParts
from rtcompile.backends.codegen.writer import MAX_LITERAL_NESTING, CodeWriter, literal
from rtcompile.content_calls import Argument, Nested, RuntimeFunction, TagRegex, Value, runtime_call
from rtcompile.errors import JsonPath
from rtcompile.ir import (
    ContentParser,
    FailingParser,
    Field,
    TDict,
    TList,
    TLiteral,
    TPlaceholder,
    Transform,
    unreachable,
)
from rtcompile.runtime import content
from rtcompile.transform_program import transform_program


def handlers(parts: ModuleParts, fields: tuple[Field, ...]) -> list[str]:
    """The handler name of each field. Fields whose handlers are the same code share one function,
    named after what it parses (`_handle_text`); a handler of its own is named after its field."""
    bodies = [_handler_body(parts, f) for f in fields]
    names: dict[str, str] = {}
    for f, body in zip(fields, bodies, strict=True):
        if body in names:
            continue
        shared = bodies.count(body) > 1
        names[body] = parts.names.new("_handle", f.content if shared else f.name)
        parts.functions.append(f"def {names[body]}(body: str, captures: dict[str, str]) -> Any:\n{body}")
    return [names[body] for body in bodies]


def _handler_body(parts: ModuleParts, f: Field) -> str:
    where: JsonPath = ("fields", f.name, "content_args")
    parse = _parser_call(parts, f.parser, "body", where, f.name)
    out = CodeWriter(depth=1)  # the body of the handler's def
    if f.transform is None:
        out.line(f"return {parse}")
        return out.code()
    unrolled = _nesting(f.transform) <= MAX_LITERAL_NESTING
    if not f.transform_each:
        if unrolled and not any(isinstance(node, TPlaceholder) for node, _ in _subtrees(f.transform)):
            out.comment("the transform reads nothing: the body is parsed for the errors it may raise")
            out.line(parse)
            out.line(f"return {_apply_transform(parts, f, unrolled)}")
            return out.code()
        out.line(f"content = {parse}")
        if not unrolled or _uses_scope(f.transform):
            parts.need("transform", "content_scope")
            out.line("scope = content_scope(captures, content)")
        out.line(f"return {_apply_transform(parts, f, unrolled)}")
    else:
        parts.need("transform", "require_each_list")
        parts.need("transform", "each_item_scope")
        name = literal(f.name)
        out.line("out = []")
        with out.block(f"for item in require_each_list({name}, {parse}):"):
            out.line(f"scope = each_item_scope({name}, captures, item)")
            out.line(f"out.append({_apply_transform(parts, f, unrolled)})")
        out.line("return out")
    return out.code()


def _apply_transform(parts: ModuleParts, f: Field, unrolled: bool) -> str:
    """The transform applied to `scope` (or, unrolled in a plain transform, to `content` directly)."""
    assert f.transform is not None
    if unrolled:
        return _transform_expr(parts, f.transform, fold_content=not f.transform_each)
    # Too deep for one expression: the transform as data, run by a helper (as the interpreter runs it).
    parts.need("transform_data", "build_value")
    program = parts.constant(f"{f.name} transform", literal(transform_program(f.transform)))
    return f"build_value({program}, scope)"


def _parser_call(parts: ModuleParts, parser: ContentParser, arg: str, where: JsonPath, hint: str) -> str:
    """An expression that parses the string `arg` with `parser`."""
    match parser:
        case FailingParser():
            raising = f"raise {parser.error}({literal(parser.message)})"
            name = _function(parts, "_fail", hint, "(text: Any) -> Any:", raising)
            return f"{name}({arg})"
        case _:
            call = runtime_call(parser)  # every other parser calls a runtime function
            arguments = {name: _argument(parts, value, where, hint) for name, value in call.arguments}
            return _call(parts, call.function, arg, arguments)


def _argument(parts: ModuleParts, argument: Argument, where: JsonPath, hint: str) -> object:
    """An argument of a runtime call as the handler passes it: a value, or a `Code` name."""
    match argument:
        case Value(value=value):
            return value
        case RuntimeFunction(name=name):
            parts.need("content", name)
            return Code(name)
        case Nested(parser=nested, path=path):
            return _nested_parser(parts, nested, (*where, *path), hint)
        case TagRegex(pattern=pattern, path=path):
            tag_re, _ = parts.stdlib_regex(pattern, f"{hint} tags", (*where, *path), streamed=False)
            return Code(tag_re)
        case _:
            unreachable(argument)


@dataclass(frozen=True)
class Code:
    """An argument that is an expression of the generated module (a name), not a value to write as a literal."""

    text: str


def _call(parts: ModuleParts, function: str, arg: str, arguments: dict[str, object]) -> str:
    """`function(arg, name=value, ...)`, lifting `function` from `rtcompile.runtime.content`.

    An argument equal to the function's default is left out, so a handler shows only what its template
    changes: those defaults are the reference's `content_args` defaults (`rtcompile.ir.KINDS`; checked
    by tests/test_content_kinds.py), and leaving one out never changes the call.
    """
    parts.need("content", function)
    parameters = inspect.signature(getattr(content, function)).parameters
    written = [
        f"{name}={value.text if isinstance(value, Code) else literal(value)}"
        for name, value in arguments.items()
        if isinstance(value, Code) or value != parameters[name].default
    ]
    return f"{function}({', '.join([arg, *written])})"


def _nested_parser(parts: ModuleParts, parser: ContentParser | None, where: JsonPath, hint: str) -> Code | None:
    if parser is None:
        return None
    body = _parser_call(parts, parser, "raw", where, hint)
    return Code(_function(parts, "_parse_value", hint, "(raw: Any) -> Any:", f"return {body}"))


def _function(parts: ModuleParts, role: str, hint: str, signature: str, statement: str) -> str:
    """The name of a module-level function `def <name><signature>` whose body is `statement`: one per
    distinct code, so that fields parsing alike share it (and their handlers, then the same code, are
    emitted once)."""
    key = (role, signature, statement)
    name = parts.shared_functions.get(key)
    if name is None:
        name = parts.shared_functions[key] = parts.names.new(role, hint)
        out = CodeWriter()
        with out.block(f"def {name}{signature}"):
            out.line(statement)
        parts.functions.append(out.code())
    return name


def _subtrees(transform: Transform) -> Iterator[tuple[Transform, int]]:
    """Every node of a transform tree with its nesting (the root is 0), without recursion."""
    pending = [(transform, 0)]
    while pending:
        node, nesting = pending.pop()
        yield node, nesting
        if isinstance(node, (TDict, TList)):
            members = [value for _, value in node.items] if isinstance(node, TDict) else node.items
            pending.extend((member, nesting + 1) for member in members)


def _nesting(transform: Transform) -> int:
    """Brackets the transform's unrolled expression nests (its deepest container's nesting, plus one)."""
    return max((nesting + 1 for node, nesting in _subtrees(transform) if isinstance(node, (TDict, TList))), default=0)


def _uses_scope(transform: Transform) -> bool:
    """Whether a plain transform reads anything but the parsed content itself."""
    return any(
        isinstance(node, TPlaceholder) and not (node.root == "content" and not node.keys)
        for node, _ in _subtrees(transform)
    )


def _transform_expr(parts: ModuleParts, transform: Transform, *, fold_content: bool) -> str:
    """The transform as one expression. With `fold_content`, `{content}` is the variable `content`
    (a plain transform's scope always maps "content" to the parsed body)."""
    match transform:
        case TPlaceholder(path=path, root=root, keys=keys):
            if fold_content and root == "content" and not keys:
                return "content"
            parts.need("transform", "resolve_placeholder")
            return f"resolve_placeholder(scope, {literal(path)}, {literal(root)}, {literal(keys)})"
        case TDict():
            items = ", ".join(
                f"{literal(k)}: {_transform_expr(parts, v, fold_content=fold_content)}" for k, v in transform.items
            )
            return "{" + items + "}"
        case TList():
            return "[" + ", ".join(_transform_expr(parts, v, fold_content=fold_content) for v in transform.items) + "]"
        case TLiteral(value=value):
            return literal(value)
        case _:
            unreachable(transform)
