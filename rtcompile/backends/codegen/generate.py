"""The code generator: emit one standalone, typed Python module from a `Template` IR.

What is specialised per template:
* one scanner function per parser state (outside any explicit region, and inside each explicit
  field), with every watched delimiter inlined: literals by `str.find` plus a precomputed set of
  their proper prefixes for hold-back, regexes by their stdlib translation plus a prefix pattern
  for partial matching (see `rtcompile.regex.translate`);
* one handler per field: its content parser call with the arguments baked in, and its transform
  unrolled into direct dict/list construction;
* the message and event TypedDicts.
The fixed part (the scanning loop) is the Jinja skeleton in `skeleton/`; runtime helpers are
lifted from `rtcompile.runtime` (see `rtcompile.backends.codegen.lift`).

Safety: every value that comes from the template enters the module through `literal()`, which
only produces `repr()` of str/int/float/bool/None and containers of them. Identifiers are the
generator's own (`_scan_3`, `_handle_1`, ...), never derived from template text.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import black
import jinja2

from rtcompile.backends.codegen.lift import lift
from rtcompile.frontend.errors import JsonPath, TemplateError, format_path
from rtcompile.ir import (
    ContentParser,
    Delimiter,
    FailingParser,
    Field,
    JsonParser,
    KvLinesParser,
    PythonCallListParser,
    ScalarParser,
    TDict,
    Template,
    TList,
    TLiteral,
    TPlaceholder,
    Transform,
    XmlInlineParser,
)
from rtcompile.plan import template_history
from rtcompile.regex.first_chars import char_class, delimiter_first_chars, starts_at_buffer_start
from rtcompile.regex.translate import UnsupportedRegex, translate
from rtcompile.version import VERSION

BLACK_MODE = black.Mode(target_versions={black.mode.TargetVersion.PY310}, line_length=120)
# The skeleton's section dividers. Sections are formatted one by one (and cached), because black
# on a whole module costs over a second and most sections are the same for every template.
SECTION_DIVIDER = "# " + "-" * 76
SKELETON = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "skeleton"),
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
    autoescape=False,
)

# The helpers every module needs, as (runtime module, name).
ALWAYS_LIFTED = [
    ("protocol", "PREFIX_REQUIRED"),
    ("protocol", "is_empty"),
    ("protocol", "tool_parameters"),
    ("protocol", "batch_prefixes"),
    ("protocol", "join_value"),
    ("coercion", "coerce_tool_calls"),
]
FIXED_IMPORTS = [
    "import copy",
    "import re",
    "from collections.abc import Callable, Iterable, Sequence",
]
# Typing names generated modules use in annotations (never evaluated) and for the type checker.
# `typing` is slow to import, so modules import it only under TYPE_CHECKING (see the skeleton).
TYPING_NAMES = ["Any", "Final", "Literal", "TypedDict", "Union", "cast", "overload"]


# --------------------------------------------------------------------------- literals


def literal(value: object) -> str:
    """Python source for a JSON-like value, built only from repr() of scalars: template text is data."""
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return f"float({repr(str(value))})"
        return repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(literal(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    raise TemplateError(f"cannot compile a template value of type {type(value).__name__}; use JSON values only")


# --------------------------------------------------------------------------- the generation context


@dataclass
class _Module:
    """Code accumulated while walking the IR."""

    wanted: list[tuple[str, str]] = field(default_factory=lambda: list(ALWAYS_LIFTED))
    constants: list[str] = field(default_factory=list)
    patterns: list[tuple[str, str]] = field(default_factory=list)  # (name, re.compile(...) source)
    functions: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    uses_regex_dependency: bool = False
    counter: Iterator[int] = field(default_factory=lambda: iter(range(1_000_000)))

    def need(self, module: str, name: str) -> None:
        if (module, name) not in self.wanted:
            self.wanted.append((module, name))

    def name(self, stem: str) -> str:
        return f"_{stem}_{next(self.counter)}"

    def constant(self, stem: str, code: str) -> str:
        name = self.name(stem)
        self.constants.append(f"{name}: Final = {code}")
        return name

    def pattern(self, stem: str, source: str, flags: str = "re.DOTALL") -> str:
        """A compiled regex, compiled on first use (see `_compile_patterns` in the generated module)."""
        name = self.name(stem)
        self.patterns.append((name, f"re.compile({literal(source)}, {flags})"))
        return name

    def patterns_code(self) -> str:
        """Declarations plus the function that compiles them: translated Unicode classes make some
        patterns slow to compile, and doing it at import would make every import pay for it."""
        if not self.patterns:
            return "def _compile_patterns() -> None:\n    pass"
        names = ", ".join(name for name, _ in self.patterns)
        lines = [f"{name}: re.Pattern[str]" for name, _ in self.patterns]
        lines += ["", "", "def _compile_patterns() -> None:", f"    global {names}"]
        lines += [f"    {name} = {code}" for name, code in self.patterns]
        return "\n".join(lines)

    def stdlib_regex(self, pattern: str, where: JsonPath, *, streamed: bool = True) -> tuple[str, str | None]:
        """Constants for a template regex: its exact stdlib translation and, for delimiters matched
        in the stream (`streamed`), the pattern that decides partial matches at the buffer's end."""
        try:
            translated = translate(pattern)
        except UnsupportedRegex as error:
            raise TemplateError(
                f"{error}; the generated module must run on the standard library alone", where
            ) from None
        full = self.pattern("re", translated.full)
        if not streamed:
            return full, None
        prefix = self.pattern("re_prefix", translated.prefix)
        return full, prefix


# --------------------------------------------------------------------------- scanners


@dataclass(frozen=True)
class _Watch:
    field: int
    is_open: bool
    delimiter: Delimiter
    where: JsonPath


def _states(template: Template) -> list[tuple[str, list[_Watch]]]:
    """State 0 is "outside any explicit region"; state k+1 is "inside explicit field k"."""
    fields = template.fields
    outside = [_Watch(i, True, f.open, _delimiter_path(f, "open")) for i, f in enumerate(fields) if f.open is not None]
    implicit = template.implicit
    if implicit is not None and implicit.close is not None:
        outside.append(_Watch(fields.index(implicit), False, implicit.close, _delimiter_path(implicit, "close")))
    states = [("outside any explicit region", outside)]
    for i, f in enumerate(fields):
        if f.open is not None:
            inside = [_Watch(i, False, f.close, _delimiter_path(f, "close"))] if f.close is not None else []
            states.append((f"inside field {f.name!r}", inside))
    return states


def _delimiter_path(f: Field, kind: str) -> JsonPath:
    delimiter = f.open if kind == "open" else f.close
    assert delimiter is not None
    return ("fields", f.name, kind if delimiter.is_literal else f"{kind}_pattern")


def _priority(watch: _Watch, template: Template) -> tuple[int, str]:
    """The reference breaks ties between equally early, equally long matches by (opens first, field name)."""
    return (0 if watch.is_open else 1, template.fields[watch.field].name)


def _scanner(module: _Module, index: int, description: str, watches: list[_Watch], template: Template) -> str:
    ordered = sorted(watches, key=lambda w: _priority(w, template))
    lines = [
        f"def _scan_{index}(buf: str, pos: int, eos: bool) -> _ScanResult:",
        f"    # {description}",
        "    n = len(buf)",
        "    hold = n",
        "    best = -1",
        "    best_start = best_end = best_rank = 0",
        "    best_groups: dict[str, str | None] = _NO_GROUPS",
    ]
    for rank, watch in enumerate(ordered):
        which = watches.index(watch)
        lines += ["", f"    # {format_path(watch.where)}"]  # format_path quotes names: no line breaks
        if watch.delimiter.is_literal:
            lines += _literal_watch(module, watch.delimiter, which, rank)
        else:
            lines += _regex_watch(module, watch, which, rank)
    lines += [
        "",
        "    if best >= 0 and best_start >= hold:",
        "        best = -1  # a pending delimiter starts no later and may be the real one",
        "    return best, best_start, best_end, best_groups, hold",
    ]
    return "\n".join(lines)


def _plain_check(module: _Module, index: int, watches: list[_Watch]) -> str | None:
    """A function telling whether a chunk can contain no delimiter start at all in this state."""
    starts: set[int] = set()
    for watch in watches:
        first = delimiter_first_chars(watch.delimiter)
        if first is None:
            return None
        starts |= first
    if not starts:
        condition = "True  # nothing to watch: all text belongs to the region"
    elif len(starts) <= 3:
        condition = " and ".join(f"{literal(chr(c))} not in text" for c in sorted(starts))
    else:
        pattern = module.pattern("starts", char_class(frozenset(starts)), flags="0")
        condition = f"{pattern}.search(text) is None"
    name = f"_plain_{index}"
    module.functions.append(f"def {name}(text: str) -> bool:\n    return {condition}")
    return name


def _better(rank: int) -> str:
    return (
        "best < 0 or start < best_start or (start == best_start and "
        f"(end - start > best_end - best_start or (end - start == best_end - best_start and {rank} < best_rank)))"
    )


def _take(which: int, rank: int, groups: str) -> list[str]:
    return [
        f"        if {_better(rank)}:",
        f"            best, best_start, best_end, best_rank, best_groups = {which}, start, end, {rank}, {groups}",
    ]


def _literal_watch(module: _Module, delimiter: Delimiter, which: int, rank: int) -> list[str]:
    assert delimiter.literals is not None
    by_length = sorted(delimiter.literals, key=len, reverse=True)
    prefixes = sorted({lit[:k] for lit in delimiter.literals for k in range(1, len(lit))})
    longest = max(len(lit) for lit in delimiter.literals) - 1
    if len(by_length) == 1:
        lines = [f"    start = buf.find({literal(by_length[0])}, pos)", f"    end = start + {len(by_length[0])}"]
    else:
        literals = module.constant("literals", literal(tuple(by_length)))
        lines = [
            "    start = end = -1",
            f"    for lit in {literals}:  # longest first: at one position the longest literal wins",
            "        at = buf.find(lit, pos)",
            "        if at >= 0 and (start < 0 or at < start):",
            "            start, end = at, at + len(lit)",
        ]
    lines.append("    if start >= 0:")
    if delimiter.can_extend:
        lines += [
            "        if not eos and end == n:",
            "            hold = min(hold, start)  # a longer literal of the set may still complete",
            "        else:",
            *("    " + line for line in _take(which, rank, "_NO_GROUPS")),
        ]
    else:
        lines += _take(which, rank, "_NO_GROUPS")
    if prefixes:  # a one-character literal is never pending
        module.need("scanning", "literal_hold")
        prefix_set = module.constant("prefixes", f"frozenset({literal(prefixes)})")
        lines += ["    elif not eos:", f"        hold = min(hold, literal_hold(buf, pos, {prefix_set}, {longest}))"]
    return lines


def _regex_watch(module: _Module, watch: _Watch, which: int, rank: int) -> list[str]:
    full, prefix = module.stdlib_regex(watch.delimiter.pattern, watch.where)
    module.need("partial", "partial_search")
    module.need("scanning", "regex_can_grow")
    # A pattern that can only match at the very start of the buffer cannot match (or partially
    # match, short of the end) once scanning has moved on; `re` would still try every position.
    guard = (
        ["    if pos > 0:", "        m = None", "    elif eos:"]
        if starts_at_buffer_start(watch.delimiter)
        else ["    if eos:"]
    )
    return [
        *guard,
        f"        m = {full}.search(buf, pos)",
        "    else:",
        f"        m, partial_at = partial_search({full}, {prefix}, buf, pos)",
        "        if partial_at is not None:",
        "            hold = min(hold, partial_at)",
        "    if m is not None:",
        "        start, end = m.span()",
        f"        if not eos and regex_can_grow({full}, buf, m):",
        "            hold = min(hold, start)",
        "        else:",
        *("    " + line for line in _take(which, rank, "m.groupdict()")),
    ]


# --------------------------------------------------------------------------- field handlers


def _parser_call(module: _Module, parser: ContentParser, arg: str, where: JsonPath) -> str:
    """An expression that parses the string `arg` with `parser`."""
    if isinstance(parser, ScalarParser):
        module.need("content", f"parse_{parser.kind}")
        return f"parse_{parser.kind}({arg}, {parser.strip!r})"
    if isinstance(parser, JsonParser):
        module.need("content", "parse_json")
        delims = literal(tuple(parser.string_delims))
        return f"parse_json({arg}, {parser.unquoted_keys!r}, {delims}, {parser.allow_non_json!r}, {parser.strip!r})"
    if isinstance(parser, XmlInlineParser):
        module.need("content", "parse_xml_inline")
        tag_re, _ = module.stdlib_regex(parser.tag_pattern, (*where, "tag_pattern"), streamed=False)
        nested = _nested_parser(module, parser.value_parser, (*where, "value_parser", "args"))
        return (
            f"parse_xml_inline({arg}, {tag_re}, {literal(parser.tag_pattern)}, {nested}, {parser.merge_duplicates!r})"
        )
    if isinstance(parser, KvLinesParser):
        module.need("content", "parse_kv_lines")
        nested = _nested_parser(module, parser.value_parser, (*where, "value_parser", "args"))
        return (
            f"parse_kv_lines({arg}, {literal(parser.line_sep)}, {literal(parser.kv_sep)}, {parser.strip!r}, {nested})"
        )
    if isinstance(parser, PythonCallListParser):
        module.need("content", "parse_python_call_list")
        return f"parse_python_call_list({arg})"
    assert isinstance(parser, FailingParser)
    name = module.name("fail")
    module.functions.append(f"def {name}(text: Any) -> Any:\n    raise {parser.error}({literal(parser.message)})")
    return f"{name}({arg})"


def _nested_parser(module: _Module, parser: ContentParser | None, where: JsonPath) -> str:
    if parser is None:
        return "None"
    name = module.name("value_parser")
    body = _parser_call(module, parser, "raw", where)
    module.functions.append(f"def {name}(raw: Any) -> Any:\n    return {body}")
    return name


def _transform_expr(module: _Module, transform: Transform) -> str:
    if isinstance(transform, TPlaceholder):
        module.need("transform", "resolve_placeholder")
        keys = literal(transform.keys)
        return f"resolve_placeholder(scope, {literal(transform.path)}, {literal(transform.root)}, {keys})"
    if isinstance(transform, TDict):
        items = ", ".join(f"{literal(k)}: {_transform_expr(module, v)}" for k, v in transform.items)
        return "{" + items + "}"
    if isinstance(transform, TList):
        return "[" + ", ".join(_transform_expr(module, v) for v in transform.items) + "]"
    assert isinstance(transform, TLiteral)
    return literal(transform.value)


def _handler(module: _Module, index: int, f: Field) -> str:
    where: JsonPath = ("fields", f.name, "content_args")
    lines = [
        f"def _handle_{index}(body: str, captures: dict[str, str]) -> Any:",
        f"    content = {_parser_call(module, f.parser, 'body', where)}",
    ]
    if f.transform is None:
        lines.append("    return content")
    elif not f.transform_each:
        module.need("transform", "content_scope")
        lines += ["    scope = content_scope(captures, content)", f"    return {_transform_expr(module, f.transform)}"]
    else:
        module.need("transform", "require_each_list")
        module.need("transform", "each_item_scope")
        name = literal(f.name)
        lines += [
            "    out = []",
            f"    for item in require_each_list({name}, content):",
            f"        scope = each_item_scope({name}, captures, item)",
            f"        out.append({_transform_expr(module, f.transform)})",
            "    return out",
        ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- types


def _value_type(module: _Module, f: Field) -> str:
    base = {
        "text": "str",
        "int": "int",
        "float": "float",
        "bool": "bool",
        "xml-inline": "dict[str, Any]",
        "kv-lines": "dict[str, Any]",
        "python-call-list": "list[dict[str, Any]]",
    }.get(f.content, "Any")
    if isinstance(f.parser, FailingParser):
        base = "Any"
    if f.transform is not None:
        shape = _transform_type(module, f.transform, base)
        base = f"list[{shape}]" if f.transform_each else shape
    if f.join is not None:
        return "str"
    return f"list[{base}]" if f.repeats else base


def _transform_type(module: _Module, transform: Transform, content_type: str) -> str:
    if isinstance(transform, TPlaceholder):
        return content_type if transform.root == "content" and not transform.keys else "Any"
    if isinstance(transform, TLiteral):
        value = transform.value
        if value is None:
            return "None"
        if isinstance(value, (bool, int, str)):
            return f"Literal[{literal(value)}]"
        return "float" if isinstance(value, float) else "Any"
    if isinstance(transform, TList):
        return "list[Any]"
    if not all(isinstance(k, str) for k, _ in transform.items):
        return "dict[Any, Any]"
    name = module.name("Shape")
    keys = ", ".join(f"{literal(k)}: {_transform_type(module, v, content_type)}" for k, v in transform.items)
    module.types.append(f'{name} = TypedDict("{name}", {{{keys}}})')
    return name


def _types(module: _Module, template: Template) -> str:
    field_types: dict[str, str] = {}
    for f in template.fields:
        field_types[f.name] = _value_type(module, f)
    entries = []
    for key, value in template.defaults.items():
        kind = (
            "Any"
            if key in field_types
            else type(value).__name__
            if isinstance(value, (str, int, float, bool))
            else "Any"
        )
        entries.append(f"{literal(key)}: Required[{kind}]")
    for name, kind in field_types.items():
        if name not in template.defaults:
            entries.append(f"{literal(name)}: NotRequired[{kind}]")
    names = ", ".join(literal(f.name) for f in template.fields)
    shapes = "\n    ".join(module.types)
    return f"""if TYPE_CHECKING:
    from typing_extensions import NotRequired, Required

    FieldName = Literal[{names}]
    {shapes}
    Message = TypedDict("Message", {{{", ".join(entries)}}})
    RegionOpen = TypedDict("RegionOpen", {{"type": Literal["region_open"], "field": FieldName}})
    RegionChunk = TypedDict(
        "RegionChunk", {{"type": Literal["region_chunk"], "field": FieldName, "text": str, "dirty": bool}}
    )
    RegionClose = TypedDict("RegionClose", {{"type": Literal["region_close"], "field": FieldName, "value": Any}})
    Event = Union[RegionOpen, RegionChunk, RegionClose]
else:
    FieldName = str
    Message = dict
    Event = dict
"""


# --------------------------------------------------------------------------- tables and assembly


def _tables(module: _Module, template: Template, states: list[tuple[str, list[_Watch]]]) -> str:
    if template_history(template) is None:
        plain: list[str | None] = [None] * len(states)  # text must stay in the buffer: no shortcut
    else:
        plain = [_plain_check(module, i, watches) for i, (_, watches) in enumerate(states)]
    fields = template.fields
    implicit = template.implicit
    state_of_field = []
    explicit_state = 1
    for f in fields:
        state_of_field.append(0 if f.open is None else explicit_state)
        explicit_state += 0 if f.open is None else 1
    actions = [tuple((w.is_open, w.field) for w in watches) for _, watches in states]
    anchor_key = "start_anchor" if template.start_anchor.is_literal else "start_anchor_pattern"
    anchor_full, _ = module.stdlib_regex(template.start_anchor.pattern, (anchor_key,), streamed=False)
    required = [f.name for f in fields if not f.optional]
    return "\n".join(
        [
            "_ScanResult = tuple[int, int, int, dict[str, str | None], int]",
            "_NO_GROUPS: Final[dict[str, str | None]] = {}",
            f"_DEFAULTS: Final[dict[str, Any]] = {literal(dict(template.defaults))}",
            f"_NAMES: Final[tuple[FieldName, ...]] = {literal(tuple(f.name for f in fields))}",
            f"_DIRTY: Final = {literal(tuple(f.dirty for f in fields))}",
            f"_JOIN: Final[tuple[str | None, ...]] = {literal(tuple(f.join for f in fields))}",
            f"_REPEATS: Final = {literal(tuple(f.repeats for f in fields))}",
            f"_REQUIRED: Final[tuple[str, ...]] = {literal(tuple(required))}",
            f"_IMPLICIT: Final = {-1 if implicit is None else fields.index(implicit)}",
            f"_STATE_OF_FIELD: Final = {literal(tuple(state_of_field))}",
            f"_ACTIONS: Final[tuple[tuple[tuple[bool, int], ...], ...]] = {literal(tuple(actions))}",
            f"_PLAIN: Final[tuple[Callable[[str], bool] | None, ...]] = ({', '.join(p or 'None' for p in plain)},)",
            f"_SCANNERS: Final[tuple[Callable[[str, int, bool], _ScanResult], ...]] = "
            f"({', '.join(f'_scan_{i}' for i in range(len(states)))},)",
            "_HANDLERS: Final[tuple[Callable[[str, dict[str, str]], Any], ...]] = "
            f"({', '.join(f'_handle_{i}' for i in range(len(fields)))},)",
            "",
            "",
            "def _after_last_anchor(prefix: str) -> str:",
            "    last_end = None",
            f"    for m in {anchor_full}.finditer(prefix):",
            "        last_end = m.end()",
            "    return prefix if last_end is None else prefix[last_end:]",
        ]
    )


def _merge_imports(lines: list[str]) -> tuple[str, str]:
    """The module's runtime imports, and the typing names to import for the type checker only."""
    plain = sorted({line for line in lines if line.startswith("import ")})
    from_imports: dict[str, set[str]] = {"typing": set(TYPING_NAMES)}
    for line in lines:
        if line.startswith("from "):
            module, names = line[5:].split(" import ", 1)
            from_imports.setdefault(module, set()).update(n.strip() for n in names.split(","))
    typing_names = ", ".join(sorted(from_imports.pop("typing")))
    froms = [f"from {m} import {', '.join(sorted(n))}" for m, n in sorted(from_imports.items())]
    return "\n".join(plain + [""] + froms if plain and froms else plain + froms), typing_names


def template_hash(template: Template) -> str:
    """sha256 of the template's compact JSON: stable under reformatting and unrelated config edits.

    Keys keep their order: the order of `fields` decides which field wins ties, so it is part of
    the template's meaning.
    """
    canonical = json.dumps(template.source, ensure_ascii=False, separators=(",", ":"), default=repr)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def generate(template: Template, *, source_name: str) -> str:
    """The complete, black-formatted module for `template`."""
    module = _Module()
    states = _states(template)
    scanners = [_scanner(module, i, description, watches, template) for i, (description, watches) in enumerate(states)]
    handlers = [_handler(module, i, f) for i, f in enumerate(template.fields)]
    types = _types(module, template)
    tables = _tables(module, template, states)
    lifted = lift(module.wanted)
    sha256 = template_hash(template)
    history = template_history(template)
    imports, typing_names = _merge_imports([*FIXED_IMPORTS, *lifted.imports])
    code = SKELETON.get_template("module.py.jinja").render(
        version=VERSION,
        version_literal=literal(VERSION),
        source_name=_safe_comment(source_name),
        sha256=sha256,
        sha256_literal=literal(sha256),
        regex_note="",
        imports=imports,
        typing_names=typing_names,
        template_literal=literal(dict(template.source)),
        types=types,
        helpers="\n\n\n".join(_formatted(d) for d in lifted.definitions),
        scanners="\n\n\n".join([*module.constants, module.patterns_code(), *scanners]),
        handlers="\n\n\n".join([*module.functions, *handlers, tables]),
        history=history,
    )
    return _format_sections(code)


@functools.lru_cache(maxsize=1024)
def _formatted(code: str) -> str:
    return black.format_str(code, mode=BLACK_MODE)


def _format_sections(code: str) -> str:
    """black, section by section (each section is a run of top-level statements)."""
    pieces = code.split(f"\n{SECTION_DIVIDER}")
    formatted = [_formatted(pieces[0])] + [_formatted(SECTION_DIVIDER + piece) for piece in pieces[1:]]
    return "\n\n".join(formatted)


def _safe_comment(text: str) -> str:
    """A file name for the header comment and docstring: printable ASCII only (it is not code)."""
    return json.dumps(text, ensure_ascii=True)[1:-1].replace('"""', "'''")
