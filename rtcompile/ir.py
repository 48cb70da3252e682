"""The intermediate representation: a validated response template as frozen dataclasses.

Loading (`rtcompile.frontend.loader`) turns a template dict into a `Template`; the plan
(`rtcompile.plan`) derives the parser states from it, and both backends (the interpreter and the
code generator, `rtcompile.backends`) read those. Everything a parser needs to know is decided
here, once: which delimiters are literal, which transform strings are placeholders, what each
content parser's arguments are. Nothing downstream looks at the raw template dict again.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NoReturn, TypeAlias, TypeGuard

import regex

# --------------------------------------------------------------------------- delimiters


@dataclass(frozen=True)
class Delimiter:
    """An open/close delimiter or the start anchor.

    `pattern` is always a regex in the `regex` module's syntax (for literal delimiters, the escaped
    alternation of the literals, longest first, exactly as the reference builds it), so both
    literal and regex delimiters can be searched the same way. `literals` is set for literal
    delimiters: then the engine knows the longest possible pending delimiter and that a complete
    match can never grow, unless `can_extend`: a match that ends at the buffer's end may still grow
    (here, one literal is a strict prefix of another; for a pattern the plan searches as the literals
    it matches, because the reference lets any regex match there grow: `rtcompile.plan.scanned_delimiter`).
    """

    pattern: str
    literals: tuple[str, ...] | None
    can_extend: bool
    group_names: tuple[str, ...]

    @property
    def is_literal(self) -> bool:
        return self.literals is not None


def literal_delimiter(literals: Sequence[str]) -> Delimiter:
    """The delimiter matching `literals` (distinct and non-empty), built as the reference builds it."""
    # Longest first, so that the alternation prefers the longer literal where both match.
    pattern = "|".join(regex.escape(s) for s in sorted(literals, key=len, reverse=True))
    # Whether one literal is a strict prefix of another: in sorted order a literal's extensions come right
    # after it, so neighbours tell (a field may list thousands of literals: no comparing every pair).
    ordered = sorted(literals)
    can_extend = any(longer.startswith(shorter) for shorter, longer in itertools.pairwise(ordered))
    return Delimiter(pattern=pattern, literals=tuple(literals), can_extend=can_extend, group_names=())


# --------------------------------------------------------------------------- content parsers

KindName: TypeAlias = Literal["text", "int", "float", "bool", "json", "xml-inline", "kv-lines", "python-call-list"]
ScalarKind: TypeAlias = Literal["text", "int", "float", "bool"]


@dataclass(frozen=True)
class ContentKind:
    """What a content parser (a field's `"content"`) is, as every stage needs to know it.

    `arguments` are the `content_args` keys the parser reads, each with the value the reference uses when
    the key is absent (the loader's defaults; the runtime functions' keyword defaults are the same, which
    lets a generated handler leave them out: tests/frontend/test_content_kinds.py checks it). `value_type` is a
    parsed value's type as a generated module spells it for the type checker. `streamable` kinds are
    text-like: their regions' chunks stream with `dirty=False`; the others' chunks are raw text to be
    parsed at the close (`dirty=True`).

    Adding a kind: a record here, its IR node below (and in `ContentParser`), its build step in
    `frontend/loader.py`, its runtime function in `runtime/content.py`, and its call in
    `content_calls.py`. mypy then points at every `match` that does not handle it.
    """

    name: KindName
    arguments: Mapping[str, object]
    value_type: str
    streamable: bool


KINDS: Mapping[str, ContentKind] = {
    kind.name: kind
    for kind in (
        ContentKind("text", {"strip": True}, "str", streamable=True),
        ContentKind("int", {"strip": True}, "int", streamable=True),
        ContentKind("float", {"strip": True}, "float", streamable=True),
        ContentKind("bool", {"strip": True}, "bool", streamable=True),
        # The reference reads `allow_non_json` as a truth value (absent: None).
        ContentKind(
            "json",
            {"unquoted_keys": False, "string_delims": (), "allow_non_json": False, "strip": True},
            "Any",
            streamable=False,
        ),
        # No default `tag_pattern`: without one every region fails when it closes.
        ContentKind(
            "xml-inline",
            {"tag_pattern": None, "value_parser": None, "merge_duplicates": False},
            "dict[str, Any]",
            streamable=False,
        ),
        ContentKind(
            "kv-lines",
            {"line_sep": "\n", "kv_sep": ":", "strip": True, "value_parser": None},
            "dict[str, Any]",
            streamable=False,
        ),
        ContentKind("python-call-list", {}, "list[dict[str, Any]]", streamable=False),
    )
}


def is_kind_name(name: object) -> TypeGuard[KindName]:
    """Whether `name` names a content parser (`KINDS`)."""
    return isinstance(name, str) and name in KINDS


@dataclass(frozen=True)
class ScalarParser:
    """`text`, `int`, `float` or `bool`: strip (unless `strip` is false) and convert."""

    kind: ScalarKind
    strip: bool


@dataclass(frozen=True)
class JsonParser:
    unquoted_keys: bool
    string_delims: tuple[tuple[str, str], ...]
    allow_non_json: bool
    strip: bool


@dataclass(frozen=True)
class XmlInlineParser:
    tag_pattern: str
    value_parser: ContentParser | None
    merge_duplicates: bool


@dataclass(frozen=True)
class KvLinesParser:
    line_sep: str | None  # None: split on runs of whitespace
    kv_sep: str
    strip: bool
    value_parser: ContentParser | None


@dataclass(frozen=True)
class PythonCallListParser:
    pass


ErrorKind: TypeAlias = Literal["ValueError", "KeyError", "TypeError", "AttributeError"]


@dataclass(frozen=True)
class FailingParser:
    """A parser whose arguments make every call fail, the way the reference fails at parse time.

    The reference only reads `content_args` when a region closes, so a template with, say,
    `"content_args": null` loads fine and parses every message in which that field never appears.
    We keep that behaviour (never reject what the reference accepts) and raise the same exception
    type when the field does close: `error` names the built-in exception class, `message` its text.
    """

    error: ErrorKind
    message: str


# The parsers that run a function of `rtcompile.runtime.content` (`rtcompile.content_calls` says which).
CallingParser: TypeAlias = ScalarParser | JsonParser | XmlInlineParser | KvLinesParser | PythonCallListParser
ContentParser: TypeAlias = CallingParser | FailingParser


# --------------------------------------------------------------------------- transforms


@dataclass(frozen=True)
class TLiteral:
    """A value copied into the output as it is (a number, bool, null or a non-placeholder string)."""

    value: object


@dataclass(frozen=True)
class TPlaceholder:
    """A whole-string `"{root.key1.key2}"`: the scope value at `root`, descended through `keys`."""

    path: str
    root: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class TDict:
    items: tuple[tuple[object, Transform], ...]


@dataclass(frozen=True)
class TList:
    items: tuple[Transform, ...]


Transform: TypeAlias = TLiteral | TPlaceholder | TDict | TList


# --------------------------------------------------------------------------- fields and templates


@dataclass(frozen=True)
class Field:
    name: str
    open: Delimiter | None
    close: Delimiter | None
    content: KindName
    parser: ContentParser
    repeats: bool
    join: str | None
    optional: bool
    transform: Transform | None
    transform_each: bool

    @property
    def dirty(self) -> bool:
        return not KINDS[self.content].streamable

    @property
    def is_implicit(self) -> bool:
        return self.open is None


@dataclass(frozen=True)
class Template:
    fields: tuple[Field, ...]
    defaults: Mapping[str, object]
    start_anchor: Delimiter
    source: Mapping[str, object] = field(compare=False)
    # What is worked out from the template alone (its plan, its grammar skeleton, ...), kept from its
    # first use for as long as the template lives: see `rtcompile.per_template`.
    derived: dict[str, object] = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def implicit(self) -> Field | None:
        return next((f for f in self.fields if f.is_implicit), None)


def unreachable(value: NoReturn) -> NoReturn:
    """The `case _:` of a `match` over an IR union: mypy rejects the call unless every member is handled."""
    raise AssertionError(f"unhandled IR node: {value!r}")
