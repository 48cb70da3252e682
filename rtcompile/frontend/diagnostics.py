"""Warnings about templates the reference accepts but that are probably not what their author meant.

The reference checks only what it must to build its matcher; everything else fails (or silently
misbehaves) when a region closes at run time. These checks run at load time and never reject a
template: they return `Diagnostic`s with the JSON path, which `load_template` turns into
`TemplateWarning`s and `rtcompile lint` prints.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from rtcompile.errors import Diagnostic, JsonPath, did_you_mean
from rtcompile.ir import KINDS, Field, TDict, Template, TList, TPlaceholder, Transform
from rtcompile.regex.analysis import nested_unbounded_repeat, portability_concerns
from rtcompile.regex.ast import ParsedRegex
from rtcompile.regex.backtracking import polynomial_backtracking
from rtcompile.regex.parser import parse_regex

VALUE_PARSER_KEYS = frozenset({"name", "args"})


def warn(message: str, path: JsonPath) -> Diagnostic:
    return Diagnostic("warning", message, path, None, None, None)


def template_warnings(template: Template) -> list[Diagnostic]:
    spec = template.source
    raw_fields = spec.get("fields", {})
    found: list[Diagnostic] = []
    assert isinstance(raw_fields, Mapping)
    for f in template.fields:
        raw = raw_fields[f.name]
        path: JsonPath = ("fields", f.name)
        found += _content_args(f.content, raw.get("content_args", {}), (*path, "content_args"))
        found += _placeholders(f, path)
        for key in ("open_pattern", "close_pattern"):
            if isinstance(raw.get(key), str):
                found += _regex_warnings(raw[key], (*path, key))
    found += _shadowed_opens(template)
    anchor = spec.get("start_anchor_pattern")
    if isinstance(anchor, str):
        found += _regex_warnings(anchor, ("start_anchor_pattern",))
    return found


# --------------------------------------------------------------------------- content_args


def _content_args(content: str, args: Any, path: JsonPath) -> Iterator[Diagnostic]:
    if not isinstance(args, Mapping):
        if content != "python-call-list":
            yield warn(f"content_args must be an object; every {content!r} region will fail to parse", path)
        return
    known = KINDS[content].arguments
    for key in args:
        if key not in known:
            yield warn(
                f"{content!r} ignores content_args key {key!r}{did_you_mean(str(key), known)}", (*path, str(key))
            )
    if content == "xml-inline":
        yield from _xml_inline(args, path)
    for key in ("value_parser",):
        if key in args and key in known:
            yield from _value_parser(args[key], (*path, key))


def _xml_inline(args: Mapping[str, Any], path: JsonPath) -> Iterator[Diagnostic]:
    pattern = args.get("tag_pattern")
    if pattern is None:
        yield warn("xml-inline needs a 'tag_pattern'; every region of this field will fail to parse", path)
    elif isinstance(pattern, str):
        groups = _group_names(pattern)
        if groups is not None and "key" not in groups:
            yield warn("tag_pattern has no (?P<key>...) group; every tag it matches will fail", (*path, "tag_pattern"))
        if groups is not None and "value" not in groups:
            yield warn(
                "tag_pattern has no (?P<value>...) group; every value will be the empty string", (*path, "tag_pattern")
            )
        yield from _regex_warnings(pattern, (*path, "tag_pattern"))


def _value_parser(raw: Any, path: JsonPath) -> Iterator[Diagnostic]:
    if raw is None:
        return
    if not isinstance(raw, Mapping):
        yield warn('value_parser must be an object like {"name": "json", "args": {...}}', path)
        return
    for key in raw:
        if key not in VALUE_PARSER_KEYS:
            yield warn(
                f"value_parser ignores key {key!r}{did_you_mean(str(key), VALUE_PARSER_KEYS)}", (*path, str(key))
            )
    name = raw.get("name", "text")
    if isinstance(name, (list, dict)):  # unhashable: the reference's lookup fails with TypeError
        yield warn(
            f"value_parser name must be a string, got {type(name).__name__}; every value will fail", (*path, "name")
        )
        return
    if name not in KINDS:
        hint = did_you_mean(str(name), KINDS)
        yield warn(f"unknown value_parser {name!r}{hint}; every value will fail with KeyError", (*path, "name"))
        return
    yield from _content_args(name, raw.get("args", {}), (*path, "args"))


# --------------------------------------------------------------------------- transforms


def _placeholders(f: Field, path: JsonPath) -> Iterator[Diagnostic]:
    """Placeholders whose root nothing can supply raise KeyError whenever the field closes."""
    if f.transform is None or f.transform_each:
        return  # transform_each elements bring their own keys, unknown until run time
    available = {"content", *(f.open.group_names if f.open else ()), *(f.close.group_names if f.close else ())}
    for placeholder, where in walk_placeholders(f.transform, (*path, "transform")):
        if placeholder.root not in available:
            yield warn(
                f"placeholder {{{placeholder.path}}} names {placeholder.root!r}, which neither 'content' nor a named "
                f"group of the field's patterns supplies{did_you_mean(placeholder.root, available)}; "
                "the field will fail with KeyError",
                where,
            )


def walk_placeholders(transform: Transform, path: JsonPath = ()) -> Iterator[tuple[TPlaceholder, JsonPath]]:
    """Every placeholder in a transform tree, with its JSON path, in order (no recursion: a transform
    may nest hundreds of levels)."""
    pending: list[tuple[Transform, JsonPath]] = [(transform, path)]
    while pending:
        node, where = pending.pop()
        if isinstance(node, TPlaceholder):
            yield node, where
        elif isinstance(node, TDict):
            pending.extend((value, (*where, str(key))) for key, value in reversed(node.items))
        elif isinstance(node, TList):
            pending.extend((value, (*where, index)) for index, value in reversed(list(enumerate(node.items))))


# --------------------------------------------------------------------------- delimiters


def _shadowed_opens(template: Template) -> Iterator[Diagnostic]:
    """A literal open that is a prefix of another field's literal open: which one fires depends on order."""
    opens = [(f, lit) for f in template.fields if f.open and f.open.literals for lit in f.open.literals]
    # In sorted order the literals a literal is a prefix of come right after it, so this costs about the
    # number of literals (times the prefix pairs found), not its square: a field may list thousands.
    by_text = sorted(range(len(opens)), key=lambda i: opens[i][1])
    pairs = []
    for rank, i in enumerate(by_text):
        short, later = opens[i][1], rank + 1
        while later < len(by_text) and opens[by_text[later]][1].startswith(short):
            pairs.append((i, by_text[later]))
            later += 1
    for i, j in sorted(pairs):  # the order of the obvious double loop over `opens`
        (f, short), (g, long) = opens[i], opens[j]
        if f is not g and long != short:
            yield warn(
                f"open {short!r} of field {f.name!r} is a prefix of open {long!r} of field {g.name!r}; "
                f"text starting with {long!r} opens {g.name!r} only because the longer match wins",
                ("fields", f.name, "open"),
            )


def _regex_warnings(pattern: str, path: JsonPath) -> Iterator[Diagnostic]:
    parsed = _parse(pattern)
    if parsed is None:
        return
    for name in portability_concerns(parsed.root):
        yield warn(f"pattern uses {name}, which the spec asks templates to avoid (not portable)", path)
    if nested_unbounded_repeat(parsed.root):
        yield warn(
            "nested unbounded quantifiers (like (a+)+) can backtrack catastrophically: a long near-miss can take "
            "time exponential in its length on every scan",
            path,
        )
        return  # the polynomial cost of repeats in a row is the lesser worry
    polynomial = polynomial_backtracking(parsed.root)
    if polynomial is not None:
        degree = polynomial.degree
        yield warn(
            f"pattern can backtrack polynomially ({degree} overlapping unbounded repeats in a row, like "
            f"{polynomial.example()}): a long near-miss costs time growing like n^{degree} on every scan",
            path,
        )


def _group_names(pattern: str) -> set[str] | None:
    parsed = _parse(pattern)
    return None if parsed is None else set(parsed.group_names)


def _parse(pattern: str) -> ParsedRegex | None:
    """The pattern as the reference's `regex` reads it; None if it rejects it (or is too deep to read)."""
    try:
        return parse_regex(pattern)
    except (ValueError, RecursionError):
        return None
