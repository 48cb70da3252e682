"""A template's fixed structure as a grammar skeleton: plain data for `rtcompile.runtime.grammar`.

Tools are known per request, so what depends only on the template is decided here, once, and the
runtime adds the tools. The skeleton (a dict of strings, numbers, lists and tuples) holds, per parser
state, the free text allowed there and the ways out of it (the delimiters the grammar writes, with a
slot where a tool name goes); and for the tool-call field how a call is written: which syntax, where
the name and the arguments go, which strings are safe inside it.

Free text never holds a delimiter the parser watches in that state, nor ends in the start of one
(`automata.clean_text`). A construct with no grammar form (lookbehind, a backreference, a content
parser the grammar cannot write) makes the whole skeleton a refusal, `{"refused": {...}}`, naming
the field and the construct; the runtime raises it when a grammar is asked for.
"""

from __future__ import annotations

from typing import Any

from rtcompile.frontend.errors import JsonPath, TemplateError
from rtcompile.grammar import automata as fa
from rtcompile.grammar.automata import ANY, Regex, alt, seq
from rtcompile.ir import (
    Delimiter,
    Field,
    JsonParser,
    PythonCallListParser,
    ScalarParser,
    TDict,
    Template,
    TLiteral,
    TPlaceholder,
    Transform,
    XmlInlineParser,
)
from rtcompile.openai_roles import openai_roles
from rtcompile.plan import plan_parser
from rtcompile.regex import ast as rx
from rtcompile.regex.charsets import Ranges, complement, normalise
from rtcompile.regex.parser import parse_regex

SKELETON_VERSION = 1
SPACE: Ranges = normalise((ord(c), ord(c)) for c in " \t\n\r")
WHITESPACE_CHOICES = (" \t\n", " \t", "")
DIGITS: Regex = ("set", ((48, 57),))
# JSON string content without \\u escapes (a grammar never needs them; the parsers take them all)
JSON_CHAR: Regex = alt(
    [
        ("set", complement(normalise([(0, 31), (34, 34), (92, 92)]))),
        seq([("lit", "\\"), ("set", normalise((ord(c), ord(c)) for c in '"\\/bfnrt'))]),
    ]
)


class Refusal(Exception):
    def __init__(self, message: str, path: JsonPath) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


def build_skeleton(template: Template) -> dict[str, Any]:
    """The template's grammar skeleton, or `{"refused": {"message", "path"}}`."""
    try:
        return _Builder(template).build()
    except Refusal as refusal:
        return {"version": SKELETON_VERSION, "refused": {"message": refusal.message, "path": list(refusal.path)}}


def refusal_error(skeleton: dict[str, Any]) -> TemplateError | None:
    refused = skeleton.get("refused")
    if refused is None:
        return None
    return TemplateError(refused["message"], tuple(refused["path"]))


# --------------------------------------------------------------------------- regex ASTs -> description regexes


class _Branch:
    """One top-level alternative of a delimiter: `^` before it, a lookahead after it."""

    def __init__(self, full: Regex, emit: Regex, anchored: bool, lookahead: Regex | None) -> None:
        self.full, self.emit, self.anchored, self.lookahead = full, emit, anchored, lookahead


class _Pattern:
    """One delimiter (or tag pattern) read for the grammar, as its top-level alternatives."""

    def __init__(self, pattern: str, literals: tuple[str, ...] | None, where: JsonPath, slots: frozenset[str]) -> None:
        self.where = where
        self.source = pattern
        if literals is not None:
            self.branches = [_Branch(("lit", text), ("lit", text), False, None) for text in literals]
            return
        parsed = parse_regex(pattern)
        for flag in parsed.inline_flags:
            if flag.letter in ("m", "V1", "w", "a", "r", "p") and flag.on:
                raise Refusal(f"the inline flag (?{flag.letter}) has no grammar form", where)
        root = parsed.root
        tops = rx.flatten_alternation(root) if isinstance(rx.unwrap(root), rx.Alternation) else [root]
        self.branches = [self._branch(branch, slots) for branch in tops]

    def _branch(self, node: rx.Node, slots: frozenset[str]) -> _Branch:
        where = self.where
        items = rx.flat_items(node)
        anchored = False
        lookahead: Regex | None = None
        if items and isinstance(items[0], rx.Assertion) and items[0].kind == "string_start":
            anchored = True
            items = items[1:]
        if items and isinstance(items[-1], rx.Lookaround) and not items[-1].behind and items[-1].positive:
            lookahead = _convert(items[-1].body, where, frozenset(), emit=False)
            items = items[:-1]
        full = seq(_convert(item, where, frozenset(), emit=False) for item in items)
        emit = seq(_convert(item, where, slots, emit=True) for item in items)
        return _Branch(full, emit, anchored, lookahead)

    @property
    def full(self) -> Regex:
        return alt(b.full for b in self.branches)

    @property
    def unanchored(self) -> list[Regex]:
        return [b.full for b in self.branches if not b.anchored]


def _convert(node: rx.Node, where: JsonPath, slots: frozenset[str], *, emit: bool) -> Regex:
    """`node` as a description regex; named groups in `slots` become ("slot", name). With `emit`,
    lazy repeats are written at their minimum (the shortest match is the one the engine takes)."""
    if isinstance(node, rx.Chars):
        return fa.char_set(node.ranges)
    if isinstance(node, rx.Concat):
        return seq(_convert(item, where, slots, emit=emit) for item in node.items)
    if isinstance(node, rx.Alternation):
        return alt(_convert(branch, where, slots, emit=emit) for branch in node.branches)
    if isinstance(node, rx.Group):
        if node.name is not None and node.name in slots:
            return ("slot", node.name)
        return _convert(node.body, where, slots, emit=emit)
    if isinstance(node, rx.Repeat):
        if node.possessive:
            raise Refusal("a possessive repeat has no grammar form", where)
        body = _convert(node.body, where, slots, emit=emit)
        if emit and node.lazy:
            return seq([body] * node.min)
        if node.min > 64 or (node.max is not None and node.max > 64):
            raise Refusal(f"a repeat counted up to {node.max or node.min} has no compact grammar form", where)
        return ("rep", body, node.min, node.max)
    if isinstance(node, rx.Assertion):
        if node.kind in ("string_end", "string_end_line"):
            return ("end",)
        name = {
            "boundary": "a word boundary (\\b)",
            "non_boundary": "\\B",
            "string_start": "a start anchor (^) after the start",
        }
        raise Refusal(f"{name.get(node.kind, node.kind)} has no grammar form", where)
    if isinstance(node, rx.Lookaround):
        kind = (
            "lookbehind" if node.behind else ("a lookahead before the end" if node.positive else "a negative lookahead")
        )
        raise Refusal(f"{kind} has no grammar form", where)
    construct = {
        rx.Backreference: "a backreference",
        rx.Atomic: "an atomic group",
        rx.BranchReset: "a branch reset",
        rx.Conditional: "a conditional",
        rx.Fuzzy: "fuzzy matching",
    }.get(type(node))
    if construct is None and isinstance(node, rx.Opaque):
        construct = node.construct
    raise Refusal(f"{construct or type(node).__name__} has no grammar form", where)


def _delimiter(delimiter: Delimiter, where: JsonPath, slots: frozenset[str] = frozenset()) -> _Pattern:
    return _Pattern(delimiter.pattern, delimiter.literals, where, slots)


def _path(f: Field, kind: str) -> JsonPath:
    delimiter = f.open if kind == "open" else f.close
    assert delimiter is not None
    return ("fields", f.name, kind if delimiter.is_literal else f"{kind}_pattern")


# --------------------------------------------------------------------------- the builder


class _Builder:
    def __init__(self, template: Template) -> None:
        self.template = template
        self.plan = plan_parser(template)
        roles = openai_roles(template)
        names = [f.name for f in template.fields]
        self.call = names.index(roles.tool_calls.name) if roles.tool_calls is not None else -1
        self.shape: dict[str, Any] = {}
        if self.call >= 0:
            call = template.fields[self.call]
            self.shape = _call_shape(call, ("fields", call.name))
        self.name_slots = (
            frozenset({self.shape["name"][1]}) if self.shape.get("name", [""])[0] == "capture" else frozenset()
        )
        self.call_state = self.plan.state_of_field[self.call] if self.call >= 0 else -1

    def build(self) -> dict[str, Any]:
        template = self.template
        for index, f in enumerate(template.fields):
            if index != self.call:
                self._check_text_field(f)
        states = [self._state(index) for index in range(len(self.plan.states))]
        return {
            "version": SKELETON_VERSION,
            "refused": None,
            "fields": [f.name for f in template.fields],
            "call_field": self.call,
            "states": states,
            "call": self._call() if self.call >= 0 else None,
        }

    def _check_text_field(self, f: Field) -> None:
        parser = f.parser
        if not isinstance(parser, ScalarParser) or parser.kind not in ("text", "bool"):
            kind = f.content
            raise Refusal(
                f"a {kind!r} field other than the tool calls has no grammar form", ("fields", f.name, "content")
            )

    def _patterns(self, state_index: int) -> list[tuple[bool, int, _Pattern]]:
        state = self.plan.states[state_index]
        out = []
        for watch in state.watches:
            f = self.template.fields[watch.field]
            kind = "open" if watch.opens else "close"
            slots = self.name_slots if watch.field == self.call else frozenset()
            pattern = _delimiter(watch.delimiter, _path(f, kind), slots)
            for branch in pattern.branches:
                if fa.nullable(branch.full) and not branch.anchored:
                    raise Refusal("a delimiter that can match empty text has no grammar form", pattern.where)
                if branch.lookahead is not None and not watch.opens:
                    raise Refusal("a lookahead at the end of a close delimiter has no grammar form", pattern.where)
            out.append((watch.opens, watch.field, pattern))
        return out

    def _avoided(self, state_index: int) -> list[Regex]:
        return [full for _, _, p in self._patterns(state_index) for full in p.unanchored]

    def _state(self, index: int) -> dict[str, Any]:
        state = self.plan.states[index]
        patterns = self._patterns(index)
        avoided = self._avoided(index)
        text = first = None
        if index != self.call_state:
            text = _lang(avoided, _ANY_TEXT)
            anchored = [b for _, _, p in patterns for b in p.branches if b.anchored]
            first = self._text_at_start(avoided, anchored) if anchored else text
        exits = []
        for opens, field, pattern in patterns:
            then = self.plan.state_of_field[field] if opens else 0
            for branch in pattern.branches:
                ext = fa.extension_chars(
                    branch.emit if field != self.call else branch.full, fa.regex_nfa([pattern.full])
                )
                exits.append(
                    {
                        "kind": "open" if opens else "close",
                        "field": field,
                        "emit": branch.emit,
                        "then": then,
                        "at_start": branch.anchored,
                        "lookahead": branch.lookahead,
                        "where": list(pattern.where),
                        "not_next": list(ext),
                        "next_text": self._next_text(then, ext) if then != self.call_state else None,
                    }
                )
        return {"field": -1 if state.field is None else state.field, "text": text, "first_text": first, "exits": exits}

    def _text_at_start(self, avoided: list[Regex], anchored: list[_Branch]) -> dict[str, Any] | None:
        """Free text at the very start of the message, where `^` delimiters can match: none may."""
        starts: list[tuple[int, int]] = []
        for branch in anchored:
            if fa.nullable(branch.full) and branch.lookahead is None:
                return None  # it matches at once: the message opens with it
            starts += fa.first_chars(seq([branch.full, branch.lookahead or fa.EMPTY]))
        return _lang(avoided, _not_starting(normalise(starts)))

    def _next_text(self, state_index: int, banned: Ranges) -> dict[str, Any] | None:
        """The free text of `state_index` when it may not start with a character of `banned`."""
        if not banned:
            return None
        return _lang(self._avoided(state_index), _not_starting(banned))

    # -- the tool-call field

    def _call(self) -> dict[str, Any]:
        f = self.template.fields[self.call]
        where: JsonPath = ("fields", f.name)
        shape = self.shape
        parser = f.parser
        close = _delimiter(f.close, _path(f, "close")) if f.close is not None else None
        closes = [close.full] if close is not None else []
        out: dict[str, Any] = {"field": self.call, "repeats": f.repeats, **shape}
        if f.transform_each and f.repeats:
            raise Refusal("a repeating field whose content is a list of calls has no grammar form", where)
        open_pattern = _delimiter(f.open, _path(f, "open"), self.name_slots) if f.open is not None else None
        out["starts_with"] = None
        for branch in open_pattern.branches if open_pattern is not None else []:
            if branch.lookahead is not None:
                first = fa.first_chars(branch.lookahead)
                if len(first) != 1 or first[0][0] != first[0][1] or not _is_char(branch.lookahead):
                    raise Refusal("a lookahead other than one character has no grammar form", open_pattern.where)
                out["starts_with"] = chr(first[0][0])
        if isinstance(parser, JsonParser):
            out.update(self._json_call(f, parser, closes, where))
        elif isinstance(parser, XmlInlineParser):
            out.update(self._xml_call(f, parser, closes, where))
        elif isinstance(parser, PythonCallListParser):
            out.update(self._python_call(closes))
        else:
            raise Refusal(f"tool calls in {f.content!r} content have no grammar form", ("fields", f.name, "content"))
        out["end_ok"] = self._end_ok(out, closes)
        if open_pattern is not None and shape["name"][0] == "capture":
            out["name_pattern"] = _slot_language(open_pattern, shape["name"][1])
        return out

    def _json_call(self, f: Field, parser: JsonParser, closes: list[Regex], where: JsonPath) -> dict[str, Any]:
        delims = [pair for pair in parser.string_delims if pair[0] and pair[1]]
        if len(delims) != len(parser.string_delims):
            raise Refusal("empty string delimiters have no grammar form", (*where, "content_args", "string_delims"))
        openers = [("lit", o) for o, _ in delims]
        string = _lang(closes + openers, ("rep", JSON_CHAR, 0, None))
        delim_texts = []
        for opener, closer in delims:
            text = _lang([*closes, ("lit", closer)], ("rep", ("set", complement(normalise([(1, 2)]))), 0, None))
            delim_texts.append([opener, closer, text])
        syntax = "json-dialect" if (parser.unquoted_keys or delims) else "json"
        body = _json_shape(string, delim_texts, parser.unquoted_keys, "json")
        ws = self._whitespace(body, closes, where)
        return {
            "syntax": syntax,
            "string": string,
            "ws": ws,
            "unquoted_keys": parser.unquoted_keys,
            "delims": delim_texts,
        }

    def _python_call(self, closes: list[Regex]) -> dict[str, Any]:
        string = _lang(closes, ("rep", JSON_CHAR, 0, None))
        body = _json_shape(string, [], False, "python")
        ws = self._whitespace(body, closes, ("fields", self.template.fields[self.call].name))
        return {"syntax": "python-call-list", "string": string, "ws": ws}

    def _xml_call(self, f: Field, parser: XmlInlineParser, closes: list[Regex], where: JsonPath) -> dict[str, Any]:
        tag_where: JsonPath = (*where, "content_args", "tag_pattern")
        tag = _Pattern(parser.tag_pattern, None, tag_where, frozenset({"key", "value"}))
        if len(tag.branches) != 1 or tag.branches[0].anchored or tag.branches[0].lookahead is not None:
            raise Refusal(
                "a tag pattern with alternatives, anchors or lookaheads at its top has no grammar form", tag_where
            )
        emit = tag.branches[0].emit
        items = emit[1] if emit[0] == "seq" else (emit,)
        slots = [i for i, item in enumerate(items) if item[0] == "slot"]
        if [items[i][1] for i in slots] != ["key", "value"]:
            raise Refusal(
                "a tag pattern without 'key' then 'value' groups at its top level has no grammar form", tag_where
            )
        after_value = seq(_unslot(item, tag_where) for item in items[slots[1] + 1 :])
        value_group = _group_language(parser.tag_pattern, "value", tag_where)
        if fa.nullable(after_value) and _is_any(value_group):
            raise Refusal("a tag pattern whose value is not followed by a delimiter has no grammar form", tag_where)
        value_parser = parser.value_parser
        json_values = False
        if value_parser is not None:
            if not (
                isinstance(value_parser, JsonParser)
                and not value_parser.unquoted_keys
                and not value_parser.string_delims
            ):
                raise Refusal(
                    "a tag value parser other than plain json has no grammar form",
                    (*where, "content_args", "value_parser"),
                )
            json_values = True
        key_group = _group_language(parser.tag_pattern, "key", tag_where)
        key_lang = _lang(closes, key_group)
        avoid_in_value = [after_value, *closes] if not fa.nullable(after_value) else closes
        string = _lang(avoid_in_value, ("rep", JSON_CHAR, 0, None))
        kinds = {
            "string": seq([("lit", '"'), ("rep", JSON_CHAR, 0, None), ("lit", '"')])
            if json_values
            else ("rep", ("set", ANY), 0, None),
            "integer": _INTEGER,
            "number": _NUMBER,
            "boolean": alt([("lit", "true"), ("lit", "false")]),
            "null": ("lit", "null"),
        }
        values = {}
        for kind, language in kinds.items():
            lang = (
                _lang(avoid_in_value, language)
                if _is_any(value_group)
                else _lang(avoid_in_value, language, value_group)
            )
            values[kind] = None if _lang_empty(lang) else lang
        lead = self._first_after_slot(items, slots[1])
        structured = _is_any(value_group)
        sep_chars = normalise([*SPACE, (44, 44)])
        unslotted = _unslotted_tag(items, _lang_regex(key_lang), values)
        tag_first = fa.first_chars(unslotted)
        sep = ("rep", ("set", _minus(sep_chars, normalise([*tag_first, *_firsts(closes)]))), 0, None)
        over = seq([sep, ("rep", seq([unslotted, sep]), 0, None)])
        if not fa.threads_safe(
            over, alt(closes) if closes else ("end",), fa.regex_nfa(closes) if closes else fa.regex_nfa([fa.NOTHING])
        ):
            raise Refusal("the close delimiter can match inside the tags this grammar writes", tag_where)
        return {
            "syntax": "xml-inline",
            "tag": emit,
            "sep": sep,
            "values": values,
            "value_lead": lead,
            "structured_values": structured,
            "string": string,
            "json_values": json_values,
            "key": key_lang,
            "ws": "",
        }

    def _first_after_slot(self, items: tuple[Regex, ...], slot: int) -> list[tuple[int, int]]:
        """Characters the value may not start with: what a repeat just before it could also take."""
        before = items[slot - 1] if slot > 0 else None
        if before is not None and before[0] == "rep" and (before[3] is None or before[3] > 1):
            return list(fa.first_chars(before[1]))
        return []

    def _whitespace(self, body: Regex, closes: list[Regex], where: JsonPath) -> str:
        if not closes:
            return WHITESPACE_CHOICES[0]
        delimiters = fa.regex_nfa(closes)
        for ws in WHITESPACE_CHOICES:
            shaped = _with_ws(body, ws)
            if fa.threads_safe(shaped, alt(closes), delimiters):
                return ws
        raise Refusal("the close delimiter can match inside the arguments this grammar writes", (*where, "close"))

    def _end_ok(self, call: dict[str, Any], closes: list[Regex]) -> bool:
        """Whether the output may end right after a call's body (its region closed by the end)."""
        if not closes:
            return True
        if call["syntax"] == "xml-inline":
            return False
        body = _with_ws(
            _json_shape(call["string"], call.get("delims", []), call.get("unquoted_keys", False), "json"), call["ws"]
        )
        return fa.threads_safe(body, ("end",), fa.regex_nfa(closes))


_ANY_TEXT: Regex = ("rep", ("set", ANY), 0, None)


def _not_starting(banned: Ranges) -> Regex:
    return alt([fa.EMPTY, seq([("set", complement(banned)), _ANY_TEXT])])


_INTEGER: Regex = seq(
    [("rep", ("lit", "-"), 0, 1), alt([("lit", "0"), seq([("set", ((49, 57),)), ("rep", DIGITS, 0, 14)])])]
)
_NUMBER: Regex = seq([_INTEGER, ("rep", seq([("lit", "."), ("rep", DIGITS, 1, 15)]), 0, 1)])


def _minus(ranges: Ranges, banned: Ranges) -> Ranges:
    return complement(normalise([*complement(ranges), *banned]))


def _firsts(nodes: list[Regex]) -> list[tuple[int, int]]:
    return [r for node in nodes for r in fa.first_chars(node)]


def _is_char(node: Regex) -> bool:
    return (node[0] == "lit" and len(node[1]) == 1) or (
        node[0] == "set" and len(node[1]) == 1 and node[1][0][0] == node[1][0][1]
    )


def _is_any(node: Regex) -> bool:
    return node[0] == "rep" and node[1] == ("set", ANY) and node[2] == 0 and node[3] is None


def _unslot(node: Regex, where: JsonPath) -> Regex:
    if node[0] == "slot":
        raise Refusal("a tag pattern with a group after its value has no grammar form", where)
    return node


def _unslotted_tag(items: tuple[Regex, ...], key: Regex, values: dict[str, Any]) -> Regex:
    value = alt([_lang_regex(v) for v in values.values() if v is not None])
    return seq(key if item == ("slot", "key") else value if item == ("slot", "value") else item for item in items)


def _group_language(pattern: str, name: str, where: JsonPath) -> Regex:
    parsed = parse_regex(pattern)
    for node in rx.walk(parsed.root):
        if isinstance(node, rx.Group) and node.name == name:
            return _convert(node.body, where, frozenset(), emit=False)
    raise Refusal(f"a tag pattern without a {name!r} group has no grammar form", where)


def _slot_language(pattern: _Pattern, name: str) -> Regex:
    if not any(("slot", name) in _walk(branch.emit) for branch in pattern.branches):
        raise Refusal(f"the open delimiter has no {name!r} group outside repeats and lookarounds", pattern.where)
    return _group_language(pattern.source, name, pattern.where)


def _walk(node: Regex) -> list[Regex]:
    out = [node]
    if node[0] in ("seq", "alt"):
        for item in node[1]:
            out += _walk(item)
    elif node[0] == "rep":
        out += _walk(node[1])
    return out


def _lang(avoid: list[Regex], *bases: Regex) -> dict[str, Any]:
    """Texts of every regex in `bases` in which no match of `avoid` starts: for Lark as the regexes
    (`base & ~(.*avoid.*) & ~(.*prefix-of-avoid)`), for GBNF and checks as a minimised DFA."""
    nfa = fa.regex_nfa(avoid) if avoid else fa.regex_nfa([fa.NOTHING])
    base_nfas = [fa.regex_nfa([base]) for base in bases]
    extra = [r for b in base_nfas for moves in b.moves for r, _ in moves]
    dfa = fa.clean_text(nfa, extra=extra)
    for base in base_nfas:
        dfa = fa.intersect(dfa, fa.regex_dfa(base, dfa.atoms))
    rows = fa.dfa_rows(dfa)
    every = alt(avoid) if avoid else fa.NOTHING
    first = fa.first_chars(every) if avoid else ()
    return {
        "bases": list(bases),
        "avoid": every,
        "prefixes": fa.prefixes(every) if avoid else fa.NOTHING,
        "first": first,
        "dfa": rows,
    }


def _lang_regex(lang: dict[str, Any]) -> Regex:
    return ("dfa", lang["dfa"])


def _lang_empty(lang: dict[str, Any]) -> bool:
    return not lang["dfa"]["accept"]


def _json_shape(string: Regex, delims: list[Any], bare_keys: bool, flavour: str) -> Regex:
    """A regular over-approximation of the argument text a grammar writes, whitespace marked by
    ("ws",): tokens in any order (what matters is which characters can meet)."""
    tokens: list[Regex] = [
        ("set", normalise((ord(c), ord(c)) for c in "{}[],:=()")),
        seq([("lit", '"'), _lang_regex(string), ("lit", '"')]),
        seq(
            [
                ("rep", ("lit", "-"), 0, 1),
                ("rep", DIGITS, 1, None),
                ("rep", seq([("lit", "."), ("rep", DIGITS, 1, None)]), 0, 1),
            ]
        ),
        alt([("lit", w) for w in ("true", "false", "null", "True", "False", "None")]),
    ]
    if bare_keys or flavour == "python":
        tokens.append(("rep", ("set", ((48, 57), (65, 90), (95, 95), (97, 122))), 1, None))
    if flavour == "python":
        tokens.append(("rep", ("set", ((45, 46), (48, 57), (65, 90), (95, 95), (97, 122))), 1, None))
    for opener, closer, text in delims:
        tokens.append(seq([("lit", opener), _lang_regex(text), ("lit", closer)]))
    return seq([("ws",), ("rep", seq([alt(tokens), ("ws",)]), 0, None)])


def _with_ws(node: Regex, ws: str) -> Regex:
    if node == ("ws",):
        return ("rep", ("set", normalise((ord(c), ord(c)) for c in ws)), 0, None) if ws else fa.EMPTY
    if node[0] in ("seq", "alt"):
        items = [_with_ws(item, ws) for item in node[1]]
        return seq(items) if node[0] == "seq" else alt(items)
    if node[0] == "rep":
        return ("rep", _with_ws(node[1], ws), node[2], node[3])
    return node


# --------------------------------------------------------------------------- the call shape


def _call_shape(f: Field, where: JsonPath) -> dict[str, Any]:
    """Where a call's name and arguments come from, read off the field's transform."""
    refusal = Refusal(
        "a tool-call transform other than {type: function, function: {name, arguments}} has no grammar form",
        (*where, "transform"),
    )
    transform = f.transform
    if not isinstance(transform, TDict):
        raise refusal
    items = dict(transform.items)
    if set(items) != {"type", "function"} or items["type"] != TLiteral("function"):
        raise refusal
    function = items["function"]
    if isinstance(function, TPlaceholder):
        if f.transform_each or function.root != "content" or function.keys:
            raise refusal
        return {"list": False, "name": ["key", "name"], "arguments": ["key", "arguments"]}
    if not isinstance(function, TDict):
        raise refusal
    parts = dict(function.items)
    if set(parts) != {"name", "arguments"}:
        raise refusal
    name, arguments = _placeholder(parts["name"], refusal), _placeholder(parts["arguments"], refusal)
    if f.transform_each:
        if name.keys or arguments.keys:
            raise refusal
        return {"list": True, "name": ["key", name.root], "arguments": ["key", arguments.root]}
    groups = set((f.open.group_names if f.open else ()) + (f.close.group_names if f.close else ()))
    if name.root == "content" and len(name.keys) == 1 and arguments.root == "content" and len(arguments.keys) == 1:
        return {"list": False, "name": ["key", name.keys[0]], "arguments": ["key", arguments.keys[0]]}
    if name.root in groups and not name.keys and arguments.root == "content" and not arguments.keys:
        if f.open is None or name.root not in f.open.group_names:
            raise refusal
        return {"list": False, "name": ["capture", name.root], "arguments": ["content"]}
    raise refusal


def _placeholder(node: Transform, refusal: Refusal) -> TPlaceholder:
    if not isinstance(node, TPlaceholder):
        raise refusal
    return node
