"""Assemble one standalone, typed Python module from a template's plan.

What is specialised per template (each in its own file here):
* `scanners`: one scanner per parser state, every watched delimiter inlined, plus the fast-path check;
* `handlers`: one handler per field, the content parser's arguments baked in, the transform unrolled;
* `types`: the message and event TypedDicts.
The streaming engine itself (`rtcompile.runtime.engine`) and the runtime helpers a template needs
are lifted verbatim (`lift`); the fixed arrangement is the Jinja skeleton in `skeleton/`. Each
statement is written in its final layout (`layout`: what ruff's formatter would make of it), so
no formatter runs, and the output is the same wherever rtcompile is installed.

Safety: every value that comes from the template enters the module through `writer.literal()`;
identifiers come from `writer.Names`, never raw from template text.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from rtcompile.backends.codegen.docstring import escaped_name, module_docstring
from rtcompile.backends.codegen.fast_path import engine_class, specialised_feed
from rtcompile.backends.codegen.handlers import handlers
from rtcompile.backends.codegen.layout import INDENT, import_lines, lay_out
from rtcompile.backends.codegen.lift import attributes_read, lift
from rtcompile.backends.codegen.openai import EXPORTED as OPENAI_EXPORTS
from rtcompile.backends.codegen.openai import openai_section
from rtcompile.backends.codegen.options import DEFAULT_OPTIONS, ModuleOptions
from rtcompile.backends.codegen.parts import REGEX_IMPORT, ModuleParts, RegexFallback
from rtcompile.backends.codegen.scanners import scanner
from rtcompile.backends.codegen.shared_runtime import (
    VERSION_ALIAS,
    imports_read,
    loose_types,
    narrowed_members,
    per_model_imports,
    runtime_docstring,
    runtime_header,
    shared_runtime,
)
from rtcompile.backends.codegen.types import message_types
from rtcompile.backends.codegen.writer import CodeWriter, literal, needs_builder
from rtcompile.grammars.skeleton import grammar_skeleton
from rtcompile.ir import Template
from rtcompile.plan import ParserPlan, plan_parser
from rtcompile.runtime.program import Tables
from rtcompile.version import VERSION

SKELETON = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "skeleton"),
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
    autoescape=False,
)
FIXED_IMPORTS = [
    "import copy",  # DEFAULTS is a copy of TEMPLATE's
    "import re",
]
# Typing names generated modules use in annotations (never evaluated) and for the type checker.
# `typing` is slow to import, so modules import it only under TYPE_CHECKING (see the skeleton).
TYPING_NAMES = ["Any", "Final", "Literal", "TypedDict", "cast", "overload"]
# Those a module calls at run time: where it imports them, the skeleton defines a stand-in for each.
STAND_INS = ["cast", "overload"]
# What turns a Python-function tool into its JSON schema, as (runtime module, name): the reference's
# conversion, or (compiled with --no-function-tools) a TypeError saying how to get it back.
FUNCTION_SCHEMA = ("tool_schema", "function_to_tool_schema")
NO_FUNCTION_SCHEMA = ("protocol", "refuse_function_tool")
# The module-level functions every module offers (after its ResponseParser).
MODULE_API = [("module_api", "parse_response"), ("module_api", "grammar")]
GRAMMAR_API = ("module_api", "grammar")  # left out with --no-grammar
# Runtime modules lifted into every module, never shared: they name the module's own ResponseParser.
PER_MODEL_RUNTIME = frozenset(module for module, _ in MODULE_API)
# Names the skeleton defines at module level; generated names must not take them.
SKELETON_NAMES = [
    *("ResponseParser", "parse_response", "TEMPLATE", "DEFAULTS", "TEMPLATE_SHA256"),
    *("RTCOMPILE_VERSION", "REQUIRES", "_PROGRAM", "_after_anchor", VERSION_ALIAS),
    *("GRAMMAR", "grammar"),
    *(option.constant for option in DEFAULT_OPTIONS.recorded()),
]


@dataclass(frozen=True)
class GeneratedModule:
    """A module's source, and the patterns in it that need the `regex` module (empty: stdlib only)."""

    code: str
    fallbacks: tuple[RegexFallback, ...]


def generate_module(
    template: Template, *, source_name: str, options: ModuleOptions = DEFAULT_OPTIONS
) -> GeneratedModule:
    """The complete module for `template`, with what it needs beyond the stdlib (see `ModuleOptions`
    for what `options` leave out)."""
    plan = plan_parser(template)
    parts = ModuleParts()
    parts.names.reserve(SKELETON_NAMES)
    function_schema = FUNCTION_SCHEMA if options.function_tools else NO_FUNCTION_SCHEMA
    parts.need(*function_schema)
    parts.need("program", "ScanResult")
    parts.need("engine", "NO_GROUPS")
    scanners = []
    for state in plan.states:
        name, code = scanner(parts, state, template)
        scanners.append(name)
        parts.scanners.append(code)
    feed = specialised_feed(parts, plan)
    field_handlers = handlers(parts, template.fields)
    anchor_key = "start_anchor" if template.start_anchor.is_literal else "start_anchor_pattern"
    anchor, _ = parts.stdlib_regex(
        template.start_anchor.pattern, "start anchor", (anchor_key,), streamed=False, captures=False
    )
    program = _program(parts, plan, scanners, field_handlers, anchor, function_schema[1])
    if engine_class(plan) == "WaitingParser":
        parts.need("waiting", "WaitingParser")
    # With the runtime shared, its engine types events loosely: the class declares them with this module's.
    narrowed = narrowed_members(["feed"] if feed else []) if options.shared_runtime else []
    parser_class = _parser_class(plan, feed, narrowed)
    types = message_types(parts, template)
    openai = openai_section(parts, template) if options.openai else ""
    # A value nested too deep for a literal is built by `build_value` when the module loads, and TEMPLATE
    # comes first in the module: then the builder is lifted ahead of it (or imported, with the runtime shared).
    skeleton = grammar_skeleton(template) if options.grammar else None
    deep = needs_builder(template.source) or (skeleton is not None and needs_builder(skeleton))
    builder = [("transform_data", "build_value")] if deep else []
    early = lift(builder if not options.shared_runtime else [])
    # The module's own code: what it reads as attributes decides which private methods are lifted.
    own_code = [*parts.constants, *parts.scanners, *parts.functions, parser_class, program, openai]
    used_attributes = frozenset().union(*(attributes_read(code) for code in own_code if code))
    if options.shared_runtime:
        runtime = shared_runtime(PER_MODEL_RUNTIME)
        lifted = lift(_module_api(options), defined=runtime.names, used_attributes=used_attributes)
    else:
        lifted = lift([*parts.wanted, *_module_api(options)], defined=early.names, used_attributes=used_attributes)
    # The module-level functions come after the class they wrap; the rest are helpers.
    by_module = list(zip(lifted.modules, lifted.definitions, strict=True))
    helpers = [code for module, code in by_module if module != "module_api"]
    module_api = [code for module, code in by_module if module == "module_api"]
    sha256 = template_hash(template)
    regex_import = [REGEX_IMPORT] if parts.requires else []
    import_candidates = [*FIXED_IMPORTS, *regex_import, *early.imports, *lifted.imports]
    sections = {
        "constants": _constants(template, sha256, parts.requires, options, skeleton),
        "types": _section_body(types),
        "helpers": _section_body("\n\n\n".join(helpers)) if helpers else "",
        "scanners": _section_body("\n\n\n".join([*parts.constants, parts.patterns_code(), *parts.scanners])),
        "handlers": _section_body("\n\n\n".join(parts.functions)),
        "program": _section_body(program),
        "parser_class": parser_class,
        "module_api": "\n\n\n".join(module_api),
        "openai": _section_body(openai) if openai else "",
    }
    if options.shared_runtime:
        # The module imports what its own code reads, from the standard library and from the runtime.
        own = "\n\n".join(code for code in sections.values() if code)
        typing = [f"from typing import {name}" for name in TYPING_NAMES]
        needed, runtime_import = per_model_imports(runtime, [*import_candidates, *typing], own, _exported(options))
        imports, typing_names = _merge_imports(needed, typing_names=[])
        imports = f"{imports}\n\n{runtime_import}"
    else:
        imports, typing_names = _merge_imports(import_candidates)
    code = SKELETON.get_template("module.py.jinja").render(
        header=_header(source_name, sha256, parts.requires),
        docstring=module_docstring(template, source_name, options, parts.fallbacks),
        imports=imports,
        typing_import="\n".join(import_lines(INDENT, "typing", typing_names)),
        stand_ins=[name for name in STAND_INS if name in typing_names],
        data_helpers="\n\n\n".join(early.definitions),
        exports=_exports(options),
        **sections,
    )
    return GeneratedModule(code, tuple(parts.fallbacks))


def generate_shared_runtime() -> str:
    """The shared runtime (`rtcompile_runtime.py`) the modules compiled with `shared_runtime` import:
    the same for every template (see `rtcompile.backends.codegen.shared_runtime`)."""
    runtime = shared_runtime(PER_MODEL_RUNTIME)
    types, helpers = loose_types(), "\n\n\n".join(runtime.definitions)
    # The imports its code reads (the skeleton's `Final` among them); typing's for the type checker only.
    code = ast.parse("\n\n".join(["RTCOMPILE_VERSION: Final", types, helpers]))
    typing = [f"from typing import {name}" for name in [*TYPING_NAMES, "TypeAlias"]]
    imports, typing_names = _merge_imports(imports_read([*FIXED_IMPORTS, *runtime.imports, *typing], code), [])
    return SKELETON.get_template("runtime.py.jinja").render(
        header=runtime_header(),
        docstring=runtime_docstring(),
        imports=imports,
        typing_import="\n".join(import_lines(INDENT, "typing", typing_names)),
        stand_ins=[name for name in STAND_INS if name in typing_names],
        version=literal(VERSION),
        types=types,
        helpers=_section_body(helpers),
    )


def _header(source_name: str, sha256: str, requires: tuple[str, ...]) -> str:
    """The comment lines a module starts with: where it came from, and what it needs beyond the stdlib."""
    lines = [
        f"# @generated by rtcompile {VERSION} -- do not edit",
        f"# from {escaped_name(source_name)}",
        f"# template sha256:{sha256}",
    ]
    if requires:
        lines.append(f"# requires: {', '.join(requires)}")
    return "\n".join(lines)


def _constants(
    template: Template,
    sha256: str,
    requires: tuple[str, ...],
    options: ModuleOptions,
    skeleton: dict[str, Any] | None,
) -> str:
    """The module's public constants, each with a comment saying what it is."""
    statements = [
        f"RTCOMPILE_VERSION: Final = {literal(VERSION)}",
        "# third-party modules this module imports",
        f"REQUIRES: Final[tuple[str, ...]] = {literal(requires)}",
    ]
    for option in options.recorded():
        if option.written:
            statements += [f"# {option.what}", f"{option.constant}: Final = {literal(option.value)}"]
    statements += [
        "# sha256 of the template's compact JSON (see `template_hash` in rtcompile)",
        f"TEMPLATE_SHA256: Final = {literal(sha256)}",
        "# the response template this module was compiled from",
        f"TEMPLATE: Final[dict[str, Any]] = {literal(dict(template.source))}",
        "# the message before any region closed (each parser starts from a copy)",
        f"DEFAULTS: Final[dict[str, Any]] = {_defaults(template)}",
    ]
    if skeleton is not None:
        statements += [
            "# the template's grammar skeleton, checked against this parser (see `grammar`)",
            f"GRAMMAR: Final[dict[str, Any]] = {literal(skeleton)}",
        ]
    return "\n".join(line for statement in statements for line in lay_out(statement))


def _defaults(template: Template) -> str:
    """DEFAULTS' value: TEMPLATE's "defaults", copied when the module loads rather than written out a
    second time (a template with a huge default would otherwise make a module twice its size)."""
    if dict(template.defaults) == template.source.get("defaults", {}):
        return 'copy.deepcopy(TEMPLATE.get("defaults", {}))'
    return literal(dict(template.defaults))


def _parser_class(plan: ParserPlan, feed: str | None, narrowed: list[str]) -> str:
    """The module's `ResponseParser`: the engine with this template's program plugged in, the feed
    written for it, and the engine's members declared with this module's types (`narrowed`)."""
    out = CodeWriter()
    with out.block(f"class ResponseParser({engine_class(plan)}):"):
        out.line('"""Parses one generation as it streams; see the module docstring."""')
        out.line()
        out.line("_program = _PROGRAM")
        if narrowed:
            out.line()
            with out.block("if TYPE_CHECKING:"):
                out.comment("the engine's members with this module's Message and Event (the shared")
                out.comment("runtime's serve every template: for the type checker they are Any)")
                for member in narrowed:
                    out.line(member)
    code = out.code()
    return f"{code}\n\n{feed}" if feed else code


def _module_api(options: ModuleOptions) -> list[tuple[str, str]]:
    """The module-level functions lifted after the parser class: `parse_response`, and `grammar`
    unless left out."""
    return [api for api in MODULE_API if options.grammar or api != GRAMMAR_API]


def _exported(options: ModuleOptions) -> list[str]:
    """The names in `__all__`: the parser, its types and, unless left out, `grammar` and the OpenAI
    adapter."""
    names = ["TEMPLATE", "Event", "Message", "ResponseParser", "StartAnchorWarning", "parse_response"]
    if options.grammar:
        names += ["GrammarError", "grammar"]
    return names + OPENAI_EXPORTS if options.openai else names


def _exports(options: ModuleOptions) -> str:
    """`__all__`, in the order ruff's RUF022 asks for: constants, then classes, then functions."""
    ordered = sorted(_exported(options), key=lambda name: (not name.isupper(), not name[0].isupper(), name))
    return "\n".join(lay_out(f"__all__ = {literal(ordered)}"))


def _program(
    parts: ModuleParts, plan: ParserPlan, scanners: list[str], handlers: list[str], anchor: str, function_schema: str
) -> str:
    """The module's `ParserProgram`: the plan's tables as literals, this module's functions plugged in."""
    parts.need("program", "ParserProgram")
    parts.need("program", "Tables")
    parts.need("program", "after_last_anchor")
    tables = plan.tables
    out = CodeWriter()
    with out.block("def _after_anchor(prefix: str) -> str | None:"):
        out.line('"""The prompt after the last match of the start anchor; None if it never matches."""')
        out.line(f"return after_last_anchor({anchor}, prefix)")
    out.line()
    out.line()
    fields = ", ".join(
        f"{name}={'DEFAULTS' if name == 'defaults' else literal(getattr(tables, name))}" for name in Tables.__slots__
    )
    plugged = [
        f"tables=Tables({fields})",
        f"scanners={_tuple(scanners)}",
        f"handlers={_tuple(handlers)}",
        "after_anchor=_after_anchor",
        f"function_schema={function_schema}",
        f"memo_slots={parts.memo_slots}",
        "compile_patterns=_compile_patterns",
    ]
    out.line(f"_PROGRAM: Final = ParserProgram({', '.join(plugged)})")
    return out.code()


def _section_body(code: str) -> str:
    """A section's code, as it follows the section's heading comment and one blank line: a definition
    gets a second blank line (a comment right above a definition belongs to it)."""
    first = next(line for line in code.split("\n") if line and not line.startswith("#"))
    return f"\n{code}" if first.startswith(("def ", "class ", "@")) else code


def _tuple(names: list[str]) -> str:
    """A tuple of names, as Python source."""
    return f"({names[0]},)" if len(names) == 1 else f"({', '.join(names)})"


def _merge_imports(lines: list[str], typing_names: Iterable[str] = TYPING_NAMES) -> tuple[str, list[str]]:
    """The module's runtime imports, sorted and grouped as isort does (the standard library, then
    `regex`), and the typing names to import for the type checker only (`typing_names` and those
    `lines` import)."""
    plain = sorted({line for line in lines if line.startswith("import ")})
    from_imports: dict[str, set[str]] = {"typing": set(typing_names)}
    for line in lines:
        if line.startswith("from "):
            module, names = line[5:].split(" import ", 1)
            from_imports.setdefault(module, set()).update(n.strip() for n in names.split(","))
    typing_names = sorted(from_imports.pop("typing"))
    third_party = [line for line in plain if line.startswith(REGEX_IMPORT)]
    stdlib = [line for line in plain if line not in third_party]
    stdlib += [line for m, names in sorted(from_imports.items()) for line in import_lines("", m, sorted(names))]
    return "\n\n".join("\n".join(group) for group in (stdlib, third_party) if group), typing_names


def template_hash(template: Template) -> str:
    """sha256 of the template's compact JSON: stable under reformatting and unrelated config edits.

    Keys keep their order: the order of `fields` decides which field wins ties, so it is part of
    the template's meaning.
    """
    canonical = compact_json(template.source)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def compact_json(value: object) -> str:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)`, without recursion:
    the C encoder counts each nesting level against Python's recursion limit, and a template may nest
    hundreds of levels deep."""
    pieces: list[str] = []
    pending: list[object] = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, _Text):
            pieces.append(node.text)
        elif isinstance(node, dict):
            pending.append(_Text("}"))
            for number, (key, member) in enumerate(reversed(list(node.items()))):
                pending.append(member)
                # json's own rendering of a key (str, int, float, bool or None); a trailing ":0}" stripped
                key_text = json.dumps({key: 0}, ensure_ascii=False, separators=(",", ":"))[1:-3]
                pending.append(_Text(("," if number < len(node) - 1 else "") + key_text + ":"))
            pending.append(_Text("{"))
        elif isinstance(node, (list, tuple)):
            pending.append(_Text("]"))
            for number, member in enumerate(reversed(node)):
                pending.append(member)
                if number < len(node) - 1:
                    pending.append(_Text(","))
            pending.append(_Text("["))
        else:
            pieces.append(json.dumps(node, ensure_ascii=False, default=repr))
    return "".join(pieces)


@dataclass(frozen=True)
class _Text:
    """Literal JSON punctuation queued between the values still to encode."""

    text: str
