"""Validate a response-template dict and build the IR (`rtcompile.ir.Template`).

The rules and their order follow what transformers 5.24.0 enforces when it loads a template, so
that we reject exactly what it rejects, with the same exception type (`TemplateError` is a
`ValueError`; `TemplateTypeError` is also a `TypeError`, for the few inputs where the reference
fails with a TypeError). Everything the reference only looks at when a region closes (the
`content_args`) is normalised here too, but a bad value is turned into a `FailingParser` that
fails at the same moment the reference would, instead of rejecting the template.

Errors carry the JSON path of the offending value; `rtcompile.api` adds file:line:col.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, cast

import regex

from rtcompile.errors import JsonPath, TemplateError, TemplateTypeError, did_you_mean, quote
from rtcompile.ir import (
    KINDS,
    ContentParser,
    Delimiter,
    FailingParser,
    Field,
    JsonParser,
    KindName,
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
    is_kind_name,
    literal_delimiter,
    unreachable,
)
from rtcompile.nesting import (
    MAX_DEFAULTS_LEVEL,
    MAX_TRANSFORM_LOAD_LEVEL,
    TemplateRecursionError,
    copy_nested,
    deepest_level,
)

TOP_LEVEL_KEYS = frozenset({"version", "defaults", "fields", "start_anchor", "start_anchor_pattern"})
FIELD_KEYS = frozenset(
    {
        "open",
        "open_pattern",
        "close",
        "close_pattern",
        "content",
        "content_args",
        "repeats",
        "join",
        "optional",
        "transform",
        "transform_each",
    }
)

# `defaults` nested at most this deep are copied with `copy.deepcopy` itself (deeper ones without recursion).
SHALLOW = 100
# A transform string that is exactly `{name}` or `{name.key.key}` is a placeholder. `\w` is the
# `regex` module's (Unicode) word class, as in the reference.
PLACEHOLDER = regex.compile(r"\{(\w+(?:\.\w+)*)\}")


def build_template(spec: object) -> Template:
    """Validate `spec` (a response_template dict) and return its IR, or raise TemplateError."""
    if not isinstance(spec, Mapping):
        raise TemplateError(f"response_template must be a dict, got {type(spec).__name__}")
    version = spec.get("version", 1)
    if version != 1:
        raise TemplateError(f"Unsupported response_template version: {quote(version)}", path=("version",))
    unknown = set(spec) - TOP_LEVEL_KEYS
    if "response_template" in unknown and isinstance(spec["response_template"], Mapping):
        # A whole tokenizer_config.json (or its `chat_template` and `response_template` pair) passed as the template.
        raise TemplateError(
            "this holds a response template, under this key, rather than being one (a model's"
            " tokenizer_config.json?): pass its 'response_template' value, or the file's path",
            path=("response_template",),
        )
    if unknown:
        raise TemplateError(
            "response_template: " + _unknown_keys(unknown, TOP_LEVEL_KEYS, elsewhere=(FIELD_KEYS, "inside a field")),
            path=(str(sorted(unknown, key=str)[0]),),
        )
    defaults = spec.get("defaults", {})
    if not isinstance(defaults, Mapping):
        raise TemplateError("response_template.defaults must be a dict", path=("defaults",))
    fields_raw = spec.get("fields", {})
    if not isinstance(fields_raw, Mapping) or not fields_raw:
        raise TemplateError("response_template.fields must be a non-empty dict", path=("fields",))

    fields = tuple(_build_field(name, raw) for name, raw in fields_raw.items())
    implicit = [f.name for f in fields if f.open is None]
    if len(implicit) > 1:
        raise TemplateError(
            "At most one field may omit 'open'/'open_pattern' (that field becomes the implicit-open / "
            f"leftover sink). Found: {', '.join(map(quote, implicit))}",
            path=("fields", implicit[1]),
        )
    anchor = _build_delimiter("response_template", (), spec, "start_anchor", "start_anchor_pattern")
    if anchor is None:
        raise TemplateError("response_template must define 'start_anchor' or 'start_anchor_pattern'.")
    return Template(fields=fields, defaults=_copy_defaults(defaults), start_anchor=anchor, source=spec)


def _copy_defaults(defaults: Mapping[Any, Any]) -> dict[Any, Any]:
    """The reference's `copy.deepcopy` of `defaults`, its last load step, and its stack limit."""
    deepest = deepest_level(dict(defaults))
    if deepest > MAX_DEFAULTS_LEVEL:
        raise TemplateRecursionError(
            f"response_template.defaults nests deeper than {MAX_DEFAULTS_LEVEL} levels; transformers 5.24.0 runs "
            "out of Python stack (RecursionError) copying it",
            path=("defaults",),
        )
    if deepest <= SHALLOW:
        return copy.deepcopy(dict(defaults))
    return cast("dict[Any, Any]", copy_nested(dict(defaults)))


# --------------------------------------------------------------------------- fields


def _build_field(name: object, raw: object) -> Field:
    scope = f"Field {quote(name)}"
    path: JsonPath = ("fields", str(name))
    if not isinstance(name, str):
        raise TemplateTypeError(f"{scope}: field names must be strings, got {type(name).__name__}", path=path)
    if not isinstance(raw, Mapping):
        raise TemplateError(f"{scope} must be a dict", path=path)
    unknown = set(raw) - FIELD_KEYS
    if unknown:
        raise TemplateError(
            f"{scope}: "
            + _unknown_keys(unknown, FIELD_KEYS, elsewhere=(TOP_LEVEL_KEYS, "at the top level, next to fields")),
            path=(*path, str(min(unknown, key=str))),
        )
    content = raw.get("content", "text")
    if not _hashable(content):
        raise TemplateTypeError(
            f"{scope}: 'content' must be a string, got {type(content).__name__}", path=(*path, "content")
        )
    if not is_kind_name(content):
        raise TemplateError(
            f"{scope}: unknown content parser {quote(content)}{did_you_mean(content, KINDS)}. "
            f"Available: {sorted(KINDS)}",
            path=(*path, "content"),
        )
    open_ = _build_delimiter(scope, path, raw, "open", "open_pattern")
    close = _build_delimiter(scope, path, raw, "close", "close_pattern")
    join = raw.get("join")
    if join is not None and not isinstance(join, str):
        raise TemplateError(f"{scope}: 'join' must be a string, got {type(join).__name__}", path=(*path, "join"))
    if join is not None and not raw.get("repeats", False):
        raise TemplateError(f"{scope}: 'join' requires 'repeats': true", path=(*path, "join"))
    transform_raw = raw.get("transform")
    transform_each = raw.get("transform_each", False)
    if not isinstance(transform_each, bool):
        raise TemplateError(
            f"{scope}: transform_each must be a bool, got {type(transform_each).__name__}",
            path=(*path, "transform_each"),
        )
    if transform_each and transform_raw is None:
        raise TemplateError(
            f"{scope}: transform_each is set but no transform was provided", path=(*path, "transform_each")
        )
    transform: Transform | None = None
    if transform_raw is not None:
        transform = _build_transform(scope, (*path, "transform"), transform_raw)
    else:
        captured = sorted({*(open_.group_names if open_ else ()), *(close.group_names if close else ())})
        if captured:
            raise TemplateError(
                f"{scope}: open_pattern/close_pattern declares named group(s) {captured}, but the field has no "
                "'transform'. Named captures are only surfaced through a 'transform' template (where they appear "
                "alongside 'content'). Either add a 'transform' that uses the captures, or remove the named groups.",
                path=(*path, "open_pattern" if open_ and open_.group_names else "close_pattern"),
            )
    content_args = raw.get("content_args", {})
    return Field(
        name=name,
        open=open_,
        close=close,
        content=content,
        parser=_build_parser(content, content_args, (*path, "content_args")),
        repeats=bool(raw.get("repeats", False)),
        join=join,
        optional=bool(raw.get("optional", True)),
        transform=transform,
        transform_each=transform_each,
    )


def _unknown_keys(unknown: Iterable[object], allowed: Iterable[str], elsewhere: tuple[Iterable[str], str]) -> str:
    """``unknown key 'clsoe' (did you mean 'close'?); allowed keys: close, ...``.

    A key that belongs one level up or down (``repeats`` written next to ``fields``) is named as such:
    `elsewhere` is those keys and where they go.
    """
    other_keys, other_place = sorted(elsewhere[0]), elsewhere[1]
    described = []
    for key in sorted(unknown, key=str):
        text = str(key)
        if text in other_keys:
            described.append(f"{quote(key)} (it belongs {other_place})")
        elif did_you_mean(text, allowed):
            described.append(f"{quote(key)}{did_you_mean(text, allowed)}")
        elif did_you_mean(text, other_keys):
            described.append(f"{quote(key)}{did_you_mean(text, other_keys)[:-1]} It belongs {other_place})")
        else:
            described.append(quote(key))
    noun = "key" if len(described) == 1 else "keys"
    return f"unknown {noun} {', '.join(described)}; allowed keys: {', '.join(sorted(allowed))}"


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


# --------------------------------------------------------------------------- delimiters


def _build_delimiter(
    scope: str, path: JsonPath, raw: Mapping[Any, Any], literal_key: str, pattern_key: str
) -> Delimiter | None:
    """A literal (string or list of strings) or regex delimiter, compiled as the reference does."""
    if literal_key in raw and pattern_key in raw:
        raise TemplateError(
            f"{scope}: cannot specify both '{literal_key}' and '{pattern_key}'", path=(*path, pattern_key)
        )
    if literal_key in raw:
        return _literal_delimiter(scope, (*path, literal_key), literal_key, raw[literal_key])
    if pattern_key in raw:
        return _regex_delimiter(scope, (*path, pattern_key), pattern_key, raw[pattern_key])
    return None


def _literal_delimiter(scope: str, path: JsonPath, key: str, value: object) -> Delimiter:
    if isinstance(value, str):
        literals = [value]
    elif isinstance(value, list):
        if not value:
            raise TemplateError(f"{scope}: '{key}' list must contain at least one literal", path=path)
        if not all(isinstance(s, str) for s in value):
            raise TemplateError(f"{scope}: '{key}' list must contain only strings", path=path)
        literals = list(dict.fromkeys(value))  # first-seen order, duplicates dropped
    else:
        raise TemplateError(
            f"{scope}: '{key}' must be a string or list of strings, got {type(value).__name__}", path=path
        )
    if "" in literals:
        raise TemplateError(f"{scope}: '{key}' literals cannot be empty strings", path=path)
    return literal_delimiter(literals)


def _regex_delimiter(scope: str, path: JsonPath, key: str, value: object) -> Delimiter:
    if not isinstance(value, str):
        raise TemplateTypeError(f"{scope}: '{key}' must be a regex string, got {type(value).__name__}", path=path)
    try:
        compiled = regex.compile(value, regex.DOTALL)
    except regex.error as exc:
        raise TemplateError(f"{scope}: invalid {key} regex: {exc}", path=path, offset=exc.pos) from exc
    return Delimiter(pattern=value, literals=None, can_extend=False, group_names=tuple(compiled.groupindex))


# --------------------------------------------------------------------------- transforms


def _build_transform(scope: str, path: JsonPath, raw: object) -> Transform:
    """The transform tree as IR, built without recursion (a transform may nest hundreds of levels).

    Nodes are entered depth first, members in order, as the reference's `validate_transform_strings`
    enters them, so that of a string mixing placeholder and text and a node too deep to reach, the
    one the reference meets first is the error raised.
    """
    built: list[Transform] = []  # finished subtrees, in order; a container takes its members off the end
    pending: list[tuple[object, int, JsonPath, bool]] = [(raw, 0, path, False)]
    while pending:
        node, level, where, members_built = pending.pop()
        if members_built:
            if isinstance(node, dict):
                start = len(built) - len(node)
                built[start:] = [TDict(tuple(zip(node, built[start:], strict=True)))]
            else:
                assert isinstance(node, list)
                start = len(built) - len(node)
                built[start:] = [TList(tuple(built[start:]))]
            continue
        if level > MAX_TRANSFORM_LOAD_LEVEL:
            raise TemplateRecursionError(
                f"{scope}: transform nests deeper than {MAX_TRANSFORM_LOAD_LEVEL} levels; transformers 5.24.0 runs "
                "out of Python stack (RecursionError) loading it",
                path=path,
            )
        if isinstance(node, dict):
            pending.append((node, level, where, True))
            pending.extend((v, level + 1, (*where, str(k)), False) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            pending.append((node, level, where, True))
            pending.extend((v, level + 1, (*where, i), False) for i, v in reversed(list(enumerate(node))))
        else:
            built.append(_transform_leaf(scope, where, node))
    (transform,) = built
    return transform


def _transform_leaf(scope: str, path: JsonPath, raw: object) -> Transform:
    if not isinstance(raw, str):
        return TLiteral(raw)
    whole = PLACEHOLDER.fullmatch(raw)
    if whole is None:
        if PLACEHOLDER.search(raw):
            raise TemplateError(
                f"{scope}: transform string {raw!r} mixes a {{placeholder}} with literal text. Use either a "
                'whole-string placeholder (e.g. "{content}") or a plain literal; string interpolation is not '
                "supported.",
                path=path,
            )
        return TLiteral(raw)
    dotted: str = whole.group(1)
    root, *keys = dotted.split(".")
    return TPlaceholder(path=dotted, root=root, keys=tuple(keys))


# --------------------------------------------------------------------------- content parsers


def _build_parser(name: KindName, args: object, path: JsonPath) -> ContentParser:
    """Normalise `content_args` for parser `name`, deciding once what the reference decides per call.

    An absent key takes the reference's default (`KINDS`); a value the reference would only fail on when a
    region closes becomes a `FailingParser` that fails then, the same way.
    """
    if name != "python-call-list" and not isinstance(args, Mapping):  # python-call-list never reads them
        return FailingParser("AttributeError", f"'{type(args).__name__}' object has no attribute 'get'")
    given: Mapping[Any, Any] = args if isinstance(args, Mapping) else {}
    defaults = KINDS[name].arguments

    def arg(key: str) -> Any:
        return given.get(key, defaults[key])

    match name:
        case "text" | "int" | "float" | "bool":
            return ScalarParser(kind=name, strip=bool(arg("strip")))
        case "json":
            return JsonParser(
                unquoted_keys=bool(arg("unquoted_keys")),
                string_delims=_string_delims(arg("string_delims"), (*path, "string_delims")),
                allow_non_json=bool(arg("allow_non_json")),
                strip=bool(arg("strip")),
            )
        case "xml-inline":
            return _xml_inline(arg("tag_pattern"), arg("value_parser"), bool(arg("merge_duplicates")), path)
        case "kv-lines":
            return _kv_lines(arg("line_sep"), arg("kv_sep"), bool(arg("strip")), arg("value_parser"), path)
        case "python-call-list":
            return PythonCallListParser()
        case _:
            unreachable(name)


def _xml_inline(tag_pattern: object, value_parser: object, merge_duplicates: bool, path: JsonPath) -> ContentParser:
    if tag_pattern is None:
        return FailingParser("ValueError", "xml-inline: 'tag_pattern' content_arg is required")
    tag_path = (*path, "tag_pattern")
    if not isinstance(tag_pattern, str):
        raise TemplateTypeError(
            f"xml-inline: 'tag_pattern' must be a regex string, got {type(tag_pattern).__name__}", path=tag_path
        )
    try:
        regex.compile(tag_pattern, regex.DOTALL)
    except regex.error as exc:
        raise TemplateError(f"xml-inline: invalid tag_pattern regex: {exc}", path=tag_path, offset=exc.pos) from exc
    return XmlInlineParser(
        tag_pattern=tag_pattern,
        value_parser=_value_parser(value_parser, (*path, "value_parser")),
        merge_duplicates=merge_duplicates,
    )


def _kv_lines(line_sep: object, kv_sep: object, strip: bool, value_parser: object, path: JsonPath) -> ContentParser:
    # line_sep None is valid: str.split(None) splits on whitespace runs
    if line_sep is not None and not isinstance(line_sep, str):
        raise TemplateTypeError(
            f"kv-lines: 'line_sep' must be a string, got {type(line_sep).__name__}", path=(*path, "line_sep")
        )
    if not isinstance(kv_sep, str):
        # The reference would fail with TypeError on the first non-empty line; we refuse it up front.
        raise TemplateTypeError(
            f"kv-lines: 'kv_sep' must be a string, got {type(kv_sep).__name__}", path=(*path, "kv_sep")
        )
    return KvLinesParser(
        line_sep=line_sep,
        kv_sep=kv_sep,
        strip=strip,
        value_parser=_value_parser(value_parser, (*path, "value_parser")),
    )


def _value_parser(raw: object, path: JsonPath) -> ContentParser | None:
    """The nested `{"name": ..., "args": ...}` parser of xml-inline and kv-lines values."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        return FailingParser("AttributeError", f"'{type(raw).__name__}' object has no attribute 'get'")
    name = raw.get("name", "text")
    if not _hashable(name):
        # The reference looks the name up in a dict when a value is parsed, and fails there, not at load.
        return FailingParser("TypeError", f"unhashable type: '{type(name).__name__}'")
    if not is_kind_name(name):
        return FailingParser("KeyError", name)  # the reference looks the name up in a dict: KeyError(name)
    return _build_parser(name, raw.get("args", {}), (*path, "args"))


def _string_delims(raw: object, path: JsonPath) -> tuple[tuple[str, str], ...]:
    if not raw:
        return ()
    if isinstance(raw, (list, tuple)):
        pairs = []
        for item in raw:
            if isinstance(item, (list, tuple, str)) and len(item) == 2 and all(isinstance(s, str) for s in item):
                pairs.append((item[0], item[1]))
            else:
                break
        else:
            return tuple(pairs)
    raise TemplateError("json: 'string_delims' must be a list of [open, close] string pairs", path=path)
