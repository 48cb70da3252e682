"""A template's fixed structure as a grammar skeleton: plain data for `rtcompile.runtime.grammar`.

Tools are known per request, so what depends only on the template is decided here, once, and the
runtime adds the tools. The skeleton (strings, numbers, lists, tuples and dicts) holds:

* per parser state, the free text allowed there (`texts`: a clean-text DFA for GBNF, the regexes
  to exclude for Lark) and its exits: the delimiters the grammar writes (a slot where the tool name
  goes), the state they lead to, and the characters that may not follow them;
* for the tool-call field, how a call is written: the syntax of its arguments, where the name and
  the arguments go, which characters strings may not hold, which whitespace is safe.

Everything the grammar writes is checked against the parser here (`automata`): free text holds no
delimiter and ends in no beginning of one, a delimiter written is the match the parser finds, and
arguments cannot hold their region's close. A construct with no grammar form (lookbehind, a
backreference, a content parser the grammar cannot write, a delimiter that could match elsewhere
than where it is written) makes the skeleton a refusal, `{"refused": {...}}`, naming the field and
the construct; the runtime raises it when a grammar is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import rtcompile.grammars.automata as fa
from rtcompile.errors import JsonPath, TemplateError
from rtcompile.grammars.automata import ANY, Regex, alt, seq
from rtcompile.ir import (
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
from rtcompile.per_template import per_template
from rtcompile.plan import ParserState, Watch, plan_parser
from rtcompile.regex import ast as rx
from rtcompile.regex.charsets import Ranges, complement, normalise
from rtcompile.regex.parser import parse_regex
from rtcompile.runtime.grammar import GrammarError, lark_regex, starting

SKELETON_VERSION = 2
JSON_SPACE = " \t\n\r"  # the whitespace JSON (and the Python call-list parser) allows between tokens
# Whitespace sets tried for JSON-like arguments, widest first: the first the close cannot match in.
WHITESPACE_CHOICES = (JSON_SPACE, " \t\n", " \t", " ", "")
SEPARATOR = " \t\n,"  # what the grammar writes between xml-inline tags (text the parser skips)
DIGITS: Regex = ("set", ((48, 57),))
_ANY_TEXT: Regex = ("rep", ("set", ANY), 0, None)
_IDENTIFIER: Regex = ("rep", ("set", ((48, 57), (65, 90), (95, 95), (97, 122))), 1, None)
INTEGER: Regex = seq(
    [("rep", ("lit", "-"), 0, 1), alt([("lit", "0"), seq([("set", ((49, 57),)), ("rep", DIGITS, 0, 14)])])]
)
NUMBER: Regex = seq([INTEGER, ("rep", seq([("lit", "."), ("rep", DIGITS, 1, 15)]), 0, 1)])
KEYWORDS: Regex = alt([("lit", word) for word in ("true", "false", "null")])


# The automata that keep delimiters out of free text are built and minimised in time growing with the
# square of a delimiter's length (a chain of states, refined one state per round): past this many
# characters in a row a grammar refuses, and compiling stays fast. Real delimiters are a few dozen.
MAX_DELIMITER_SPAN = 256
# Every free text of a state keeps every delimiter it watches out, and a template with n literals has
# about n such texts: the automata grow with the square of the literals (and faster). Past this many a
# grammar refuses, and compiling stays fast (1,000 literals took minutes). Real templates have a dozen.
MAX_DELIMITER_LITERALS = 64


def _span(node: rx.Node) -> int:
    """How many characters in a row a pattern can spell, counting an unbounded repeat's body once:
    the length of the longest chain of states in its automata."""
    if isinstance(node, rx.Chars):
        return 1
    if isinstance(node, rx.Concat):
        return sum(_span(item) for item in node.items)
    if isinstance(node, rx.Repeat):
        return _span(node.body) * max(1, node.min if node.max is None else node.max)
    return max((_span(child) for child in rx.children(node)), default=0)


class Refusal(Exception):
    def __init__(self, message: str, path: JsonPath) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


def build_skeleton(template: Template) -> dict[str, Any]:
    """The template's grammar skeleton, or `{"version", "refused": {"message", "path"}}`."""
    try:
        return _Builder(template).build()
    except Refusal as refusal:
        return {"version": SKELETON_VERSION, "refused": {"message": refusal.message, "path": list(refusal.path)}}
    except GrammarError as error:
        # A construct the skeleton's regex forms have no spelling for (`$` repeated inside a close, say):
        # compiling still succeeds, and the module's `grammar()` refuses with this message.
        message = f"no grammar can follow this template: {error}"
        return {"version": SKELETON_VERSION, "refused": {"message": message, "path": []}}
    except RecursionError:
        # A backstop: patterns nested deeper than the automata's recursion (long delimiters are refused
        # before that, by `MAX_DELIMITER_SPAN`). Compiling still succeeds; `grammar()` refuses.
        message = "no grammar can follow this template: a delimiter too long for the grammar's automata"
        return {"version": SKELETON_VERSION, "refused": {"message": message, "path": []}}


def refusal_error(skeleton: dict[str, Any]) -> TemplateError | None:
    refused = skeleton.get("refused")
    if refused is None:
        return None
    return TemplateError(refused["message"], tuple(refused["path"]))


# --------------------------------------------------------------------------- patterns


@dataclass(frozen=True)
class Branch:
    """One top-level alternative of a delimiter, read for the grammar."""

    full: Regex  # its texts (slots as the groups' own regexes)
    written: Regex  # what the grammar writes: slots kept, lazy repeats at their minimum
    trigger: Regex  # texts every match starts with: what free text must not hold
    anchored: bool  # `^` first: it matches only at the start of the message
    lookahead: Ranges | None  # `(?=[...])` last: the character that must come next


class Pattern:
    """A delimiter (or a tag pattern) as the grammar sees it: its branches, and the engine's automaton."""

    def __init__(self, pattern: str, literals: tuple[str, ...] | None, where: JsonPath, slots: frozenset[str]) -> None:
        self.where = where
        self.source = pattern
        self.groups: dict[str, Regex] = {}
        parsed = parse_regex(pattern)
        span = max(len(t) for t in literals) if literals else _span(parsed.root)
        if span > MAX_DELIMITER_SPAN:
            raise Refusal(
                f"a delimiter spelling {span} characters in a row is too long for a grammar"
                f" (at most {MAX_DELIMITER_SPAN})",
                where,
            )
        for flag in parsed.inline_flags:
            if flag.letter in ("m", "V1", "w", "a", "r", "p", "f", "b", "e") and flag.on:
                raise Refusal(f"the inline flag (?{flag.letter}) has no grammar form", where)
        for node in rx.walk(parsed.root):
            if isinstance(node, rx.Group) and node.name is not None and node.name not in self.groups:
                self.groups[node.name] = _convert(node.body, where, frozenset(), written=False)
        root = rx.unwrap(parsed.root)
        tops = rx.flatten_alternation(root) if isinstance(root, rx.Alternation) else [parsed.root]
        if literals is not None:
            self.branches = [Branch(("lit", t), ("lit", t), ("lit", t), False, None) for t in literals]
        else:
            self.branches = [self._branch(node, slots) for node in tops]
        if any(b.lookahead is not None for b in self.branches[:-1]):
            raise Refusal("a lookahead branch before another alternative has no grammar form", where)
        # The engine's automaton leaves out a last `^(?=[...])` branch: it matches only the empty
        # text at the start, after every other branch failed (`Builder._lookahead_banned`).
        kept = tuple(node for node in tops if literals is not None or not _is_lookahead(node))
        self.tree = rx.Alternation(kept)
        try:
            self.engine = fa.priority_nfa(rx.Alternation(kept))
        except fa.NoAutomaton as error:
            raise Refusal(f"{error} has no grammar form", where) from None

    def _branch(self, node: rx.Node, slots: frozenset[str]) -> Branch:
        items = rx.flat_items(node)
        anchored = bool(items) and isinstance(items[0], rx.Assertion) and items[0].kind == "string_start"
        if anchored:
            items = items[1:]
        lookahead = None
        last = items[-1] if items else None
        if isinstance(last, rx.Lookaround) and not last.behind and last.positive:
            body = _convert(last.body, self.where, frozenset(), written=False)
            if not anchored or len(items) != 1 or body[0] not in ("set", "lit") or len(fa.first_chars(body)) == 0:
                raise Refusal("a lookahead other than ^(?=[characters]) has no grammar form", self.where)
            if body[0] == "lit" and len(body[1]) != 1:
                raise Refusal("a lookahead other than ^(?=[characters]) has no grammar form", self.where)
            lookahead = fa.first_chars(body)
            items = []
        full = seq(_convert(item, self.where, frozenset(), written=False) for item in items)
        written = seq(_convert(item, self.where, slots, written=True) for item in items)
        if fa.nullable(full) and not anchored:
            raise Refusal("a delimiter that can match empty text has no grammar form", self.where)
        return Branch(full, written, _trigger(full), anchored, lookahead)

    def lazy_group(self, name: str) -> bool:
        """Whether the named group holds a lazy repeat."""
        return any(
            isinstance(inner, rx.Repeat) and inner.lazy
            for node in rx.walk(self.tree)
            if isinstance(node, rx.Group) and node.name == name
            for inner in rx.walk(node.body)
        )

    def group(self, name: str) -> Regex:
        if name not in self.groups:
            raise Refusal(f"the pattern has no {name!r} group", self.where)
        return self.groups[name]


def _is_lookahead(node: rx.Node) -> bool:
    items = rx.flat_items(node)
    return bool(items) and isinstance(items[-1], rx.Lookaround)


def _trigger(full: Regex) -> Regex:
    """The texts every match of `full` starts with, cut after its first literal of two or more
    characters: free text that holds none of them (nor ends in a beginning of one) holds no match.
    Cutting keeps the clean-text automata small (no name classes after the literal)."""
    items = full[1] if full[0] == "seq" else (full,)
    for index, item in enumerate(items):
        if item[0] == "lit" and len(item[1]) >= 2:
            return seq(items[: index + 1])
    return full


def _convert(node: rx.Node, where: JsonPath, slots: frozenset[str], *, written: bool) -> Regex:
    """`node` as a plain-data regex; named groups in `slots` become ("slot", name). `written`: lazy
    repeats at their minimum (the parser's match takes them as short as it can)."""
    if isinstance(node, rx.Chars):
        return fa.char_set(node.ranges)
    if isinstance(node, rx.Concat):
        return seq(_convert(item, where, slots, written=written) for item in node.items)
    if isinstance(node, rx.Alternation):
        return alt(_convert(branch, where, slots, written=written) for branch in node.branches)
    if isinstance(node, rx.Group):
        if node.name is not None and node.name in slots:
            return ("slot", node.name)
        return _convert(node.body, where, slots, written=written)
    if isinstance(node, rx.Repeat):
        if node.possessive:
            raise Refusal("a possessive repeat has no grammar form", where)
        body = _convert(node.body, where, slots, written=written)
        if written and node.lazy:
            return seq([body] * node.min)
        if node.min > 64 or (node.max is not None and node.max > 64):
            raise Refusal(f"a repeat counted up to {node.max or node.min} has no grammar form", where)
        return ("rep", body, node.min, node.max)
    if isinstance(node, rx.Assertion):
        if node.kind in ("string_end", "string_end_line"):
            return ("end",)
        names = {
            "boundary": "a word boundary (\\b)",
            "non_boundary": "\\B",
            "string_start": "a start anchor (^) after the start",
            "line_start": "a line anchor",
            "line_end": "a line anchor",
        }
        raise Refusal(f"{names.get(node.kind, node.kind)} has no grammar form", where)
    if isinstance(node, rx.Lookaround):
        kind = "lookbehind" if node.behind else ("a lookahead" if node.positive else "a negative lookahead")
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


def _fill(node: Regex, slots: dict[str, Regex]) -> Regex:
    """`node` with its slots replaced."""
    if node[0] == "slot":
        return slots[node[1]]
    if node[0] in ("seq", "alt"):
        items = [_fill(item, slots) for item in node[1]]
        return seq(items) if node[0] == "seq" else alt(items)
    if node[0] == "rep":
        return ("rep", _fill(node[1], slots), node[2], node[3])
    return node


def _trigger_before_slot(written: Regex, trigger: Regex) -> bool:
    """Whether every text of `written` holds a whole `trigger` text before its slot (the trigger's
    last literal comes before the slot at the top of `written`)."""
    items = written[1] if written[0] == "seq" else (written,)
    if trigger == fa.EMPTY:
        return False
    last = trigger[1][-1] if trigger[0] == "seq" else trigger
    slots = [i for i, item in enumerate(items) if item[0] == "slot"]
    return bool(slots) and last[0] == "lit" and last in items[: slots[0]]


def _extensions(group: Regex) -> Ranges:
    """The characters a complete text of `group` can go on with (and still be one, or begin one)."""
    rows = fa.clean_text([], group)
    return normalise(r for state in rows["accept"] for _, ranges in rows["rows"][state] for r in ranges)


def _after_slot(node: Regex, name: str, allowed: Ranges) -> tuple[Regex, bool]:
    """`node` with what follows the slot `name` kept to texts starting with an `allowed` character;
    and whether nothing may follow the slot in `node` (what comes after `node` then must obey)."""
    if node[0] == "alt":
        results = [_after_slot(item, name, allowed) for item in node[1]]
        return alt(r for r, _ in results), any(e for _, e in results)
    items = node[1] if node[0] == "seq" else (node,)
    for index, item in enumerate(items):
        if item == ("slot", name):
            rest = seq(items[index + 1 :])
            ends = fa.nullable(rest)
            kept = alt([_starting(rest, allowed), *([fa.EMPTY] if ends else [])])
            return seq([*items[: index + 1], kept]), ends
        if _has_slot(item, name):
            if item[0] != "alt":
                raise Refusal(f"a {name!r} group inside a repeat has no grammar form", ())
            inner, may_end = _after_slot(item, name, allowed)
            if may_end:
                raise Refusal(f"a {name!r} group at the end of an alternative has no grammar form", ())
            return seq([*items[:index], inner, *items[index + 1 :]]), False
    return node, False


def _starting(node: Regex, allowed: Ranges) -> Regex:
    """The non-empty texts of `node` that start with an `allowed` character."""
    try:
        kept: Regex = starting(node, allowed)
    except GrammarError as error:
        raise Refusal(str(error), ()) from None
    return kept


def _has_slot(node: Regex, name: str | None = None) -> bool:
    """Whether `node` holds the slot `name` (any slot when None)."""
    if node[0] == "slot":
        return name is None or bool(node[1] == name)
    if node[0] in ("seq", "alt"):
        return any(_has_slot(item, name) for item in node[1])
    return node[0] == "rep" and _has_slot(node[1], name)


# --------------------------------------------------------------------------- the builder


def _check_literal_count(template: Template) -> None:
    """Refuse a template with more literal delimiters than the grammar's automata stay small for
    (`MAX_DELIMITER_LITERALS`), at the field with the most."""
    counts = [
        (len(d.literals), ("fields", f.name, key))
        for f in template.fields
        for key, d in (("open", f.open), ("close", f.close))
        if d is not None and d.literals is not None
    ]
    total = sum(count for count, _ in counts)
    if total > MAX_DELIMITER_LITERALS:
        where = max(counts)[1]
        raise Refusal(
            f"the template's delimiters are {total} literals, too many for a grammar (at most"
            f" {MAX_DELIMITER_LITERALS}: keeping each out of free text grows with the square of their number)",
            where,
        )


class _Builder:
    def __init__(self, template: Template) -> None:
        self.template = template
        self.plan = plan_parser(template)
        self.langs: list[dict[str, Any]] = []
        roles = openai_roles(template)
        names = [f.name for f in template.fields]
        self.call = names.index(roles.tool_calls.name) if roles.tool_calls is not None else -1
        self.shape: dict[str, Any] = {}
        self.name_slots: frozenset[str] = frozenset()
        if self.call >= 0:
            call = template.fields[self.call]
            self.shape = _call_shape(call, ("fields", call.name))
            if self.shape["name"][0] == "capture":
                self.name_slots = frozenset({self.shape["name"][1]})
        self.call_state = self.plan.state_of_field[self.call] if self.call >= 0 else -1
        self.patterns: dict[tuple[int, int], Pattern] = {}
        self.classes: list[Ranges] = []

    def build(self) -> dict[str, Any]:
        _check_literal_count(self.template)
        for index, f in enumerate(self.template.fields):
            if index != self.call:
                _check_text_field(f)
        states = [self._state(state) for state in self.plan.states]
        call = None
        if self.call >= 0:
            call = self._call()
            opens = [e for e in states[0]["exits"] if e["field"] == self.call]
            _check_body_start(call, opens)
        for state in states:  # what only the checks here read
            for exit_ in state["exits"]:
                for key in ("written", "lookahead", "where"):
                    del exit_[key]
        if call is not None:
            del call["body_first"]
            for key in ("name_rows", "key"):
                if call.get(key) is not None:
                    call[key] = self._stored(call[key])
        return {
            "version": SKELETON_VERSION,
            "refused": None,
            "fields": [f.name for f in self.template.fields],
            "states": states,
            "call": call,
            "texts": [{"dfa": self._stored(lang["dfa"]), "lark": _lark_text(lang)} for lang in self.langs],
            # each class as hexadecimal ranges, "30-39 5f": one short string instead of many tuples
            "classes": [" ".join(f"{lo:x}" if lo == hi else f"{lo:x}-{hi:x}" for lo, hi in c) for c in self.classes],
        }

    def _stored(self, rows: fa.Rows) -> dict[str, Any]:
        """A DFA as the skeleton keeps it: each move's characters an index into the shared table of
        classes (a class such as \\s comes back in many states)."""
        moves = []
        for row in rows["rows"]:
            out = []
            for target, ranges in row:
                if ranges not in self.classes:
                    self.classes.append(ranges)
                out.append((target, self.classes.index(ranges)))
            moves.append(tuple(out))
        return {"rows": tuple(moves), "accept": rows["accept"]}

    # -- delimiters and free text

    def _pattern(self, state: ParserState, rank: int) -> Pattern:
        key = (state.index, rank)
        if key not in self.patterns:
            watch = state.watches[rank]
            slots = self.name_slots if watch.field == self.call and watch.opens else frozenset()
            d = watch.delimiter
            self.patterns[key] = Pattern(d.pattern, d.literals, watch.where, slots)
        return self.patterns[key]

    def _lang(self, avoid: list[Regex], *bases: Regex, follow: fa.Follow | None = None) -> int:
        """A free-text language, added to the skeleton's table; its index. Its texts are texts of
        every one of `bases` in which no text of `avoid` starts, given what follows (`follow`, see
        `automata.clean_text`): as a DFA (GBNF), and as what to exclude (llguidance's `~`)."""
        rows = fa.clean_text(avoid, bases[0] if bases else None, follow)
        for base in bases[1:]:
            rows = _product_rows(rows, fa.clean_text([], base))
        lang = {
            "dfa": rows,
            "contains": fa.without_end(alt(avoid)) if avoid else fa.NOTHING,
            "ends": fa.danger(alt(avoid), follow) if avoid else fa.NOTHING,
            "base": list(bases),
        }
        if lang not in self.langs:
            self.langs.append(lang)
        return self.langs.index(lang)

    def _state(self, state: ParserState) -> dict[str, Any]:
        patterns = [self._pattern(state, rank) for rank in range(len(state.watches))]
        triggers = [b.trigger for p in patterns for b in p.branches if not b.anchored]
        anchored = [b for p in patterns for b in p.branches if b.anchored]
        text = state.index != self.call_state
        exits = []
        for rank, (watch, pattern) in enumerate(zip(state.watches, patterns, strict=True)):
            for branch in (piece for b in pattern.branches for piece in _trailing_pieces(b, 8)):
                exit_ = self._exit(state, rank, watch, pattern, branch)
                exit_["variants"] = []
                for written in _leading_variants(exit_["written"], 8) if not branch.anchored else [exit_["written"]]:
                    text_lang = final_lang = None
                    if text and not branch.anchored:
                        # the text before it may end in what could begin a delimiter, if this one kills it
                        text_lang = self._lang(triggers, follow=self._follow(pattern, written))
                        # and when the output ends right after a literal close, in anything it kills
                        if written[0] == "lit" and exit_["then"] == 0:
                            final_lang = self._lang(triggers, follow=("final", written[1]))
                    # In Lark the text and the delimiter are one terminal; when the delimiter holds a whole
                    # trigger before the tool's name, that terminal may stop before the name (no text
                    # can go on past a trigger), shared by every tool instead of one per name.
                    split = _trigger_before_slot(written, branch.trigger)
                    variant = {"written": written, "text": text_lang, "final_text": final_lang, "split": split}
                    exit_["variants"].append(variant)
                exits.append(exit_)
        starts: list[tuple[int, int]] = []
        for branch in anchored:
            starts += branch.lookahead or fa.first_chars(branch.full)
        return {
            "field": -1 if state.field is None else state.field,
            "end_text": self._lang(triggers, follow=("end",)) if text else None,
            # at the start of the message `^` delimiters may match: text there may not begin one
            "start_banned": normalise(starts),
            "start_text": not any(b.lookahead is None and fa.nullable(b.full) for b in anchored),
            "exits": exits,
        }

    def _follow(self, pattern: Pattern, written: Regex) -> fa.Follow:
        """What is known of a delimiter written after free text: its leading literal, or its first characters."""
        items = written[1] if written[0] == "seq" else (written,)
        if items and items[0][0] == "lit":
            return ("text", items[0][1])
        groups = {name: pattern.group(name) for name in self.name_slots if _has_slot(written, name)}
        return ("chars", fa.first_chars(_fill(written, groups)))

    def _exit(self, state: ParserState, rank: int, watch: Watch, pattern: Pattern, branch: Branch) -> dict[str, Any]:
        then = self.plan.state_of_field[watch.field] if watch.opens else 0
        names = {name: pattern.group(name) for name in self.name_slots if _has_slot(branch.written, name)}
        if watch.field == self.call and watch.opens and self.name_slots and not names:
            raise Refusal("an open delimiter branch without the tool name's group has no grammar form", pattern.where)
        # The parser's capture of a name must be the name written: what follows it may not go on
        # with a character the name's group could take (its repeats are greedy).
        slotted = branch.written
        banned: list[tuple[int, int]] = []
        for name, group in names.items():
            if pattern.lazy_group(name):
                raise Refusal(f"a lazy repeat in the {name!r} group has no grammar form", pattern.where)
            extends = _extensions(group)
            slotted, may_end = _after_slot(slotted, name, complement(extends))
            banned += extends if may_end else []
        written = _fill(slotted, names)
        if branch.lookahead is not None:
            not_next = self._lookahead_banned(state, rank, pattern, branch)
        else:
            not_next = self._not_next(state, rank, pattern, written, at_start=branch.anchored)
            if not branch.anchored and any(b.anchored for p in self._patterns(state) for b in p.branches):
                not_next = normalise([*not_next, *self._not_next(state, rank, pattern, written, at_start=True)])
        return {
            "kind": "open" if watch.opens else "close",
            "field": watch.field,
            "then": then,
            "written": slotted,
            "at_start": branch.anchored,
            "not_next": normalise([*not_next, *banned]),
            "lookahead": branch.lookahead,
            "where": list(pattern.where),
        }

    def _patterns(self, state: ParserState) -> list[Pattern]:
        return [self._pattern(state, rank) for rank in range(len(state.watches))]

    def _not_next(self, state: ParserState, rank: int, pattern: Pattern, written: Regex, *, at_start: bool) -> Ranges:
        rivals = []
        for other_rank, other in enumerate(self._patterns(state)):
            if other_rank == rank:
                continue
            texts = [b.full for b in other.branches if (at_start or not b.anchored) and b.lookahead is None]
            if texts:
                rivals.append(fa.Rival(fa.regex_nfa(texts), other_rank < rank))
        try:
            return fa.delimiter_match(pattern.engine, written, rivals, at_start=at_start)
        except fa.Mismatch as mismatch:
            raise Refusal(
                f"a delimiter whose match could end elsewhere than written: {mismatch}", pattern.where
            ) from None

    def _lookahead_banned(self, state: ParserState, rank: int, pattern: Pattern, branch: Branch) -> Ranges:
        """`^(?=[C])`: it matches the empty text at the start when C comes next; every other delimiter
        there may not match (or, being longer, win) on a C."""
        assert branch.lookahead is not None
        banned: list[tuple[int, int]] = []
        for other in self._patterns(state):
            for b in other.branches:
                if b is branch:
                    continue
                if b.lookahead is not None or fa.nullable(b.full):
                    raise Refusal(
                        "two delimiters that match the empty text at the start have no grammar form", other.where
                    )
                banned += fa.first_chars(b.full)
        allowed = fa.complement_ranges([*complement(branch.lookahead), *banned])
        if not allowed:
            raise Refusal("a lookahead no text can satisfy without opening another delimiter", pattern.where)
        return fa.complement_ranges(allowed)

    # -- the tool-call field

    def _call(self) -> dict[str, Any]:
        f = self.template.fields[self.call]
        where: JsonPath = ("fields", f.name)
        if f.transform_each and f.repeats:
            raise Refusal("a repeating field whose content is a list of calls has no grammar form", where)
        state = self.plan.states[self.call_state]
        closes = [b for p in self._patterns(state) for b in p.branches]
        close_full = [b.full for b in closes]
        if any(b.anchored or b.lookahead is not None for b in closes):
            raise Refusal("an anchored close delimiter has no grammar form", (*where, "close"))
        out: dict[str, Any] = {
            "field": self.call,
            "state": self.call_state,
            "repeats": f.repeats,
            **self.shape,
            "name_rows": None,  # the tool names the open delimiter can hold, as a DFA
            # strings in arguments may not hold a character a close can start with
            "banned": fa.first_chars(alt(close_full)) if close_full else (),
        }
        if self.name_slots:
            opens = [p for p in self._patterns(self.plan.states[0]) if p.where[1] == f.name]
            group = opens[0].group(next(iter(self.name_slots)))
            out["name_rows"] = fa.clean_text([], group)
        parser = f.parser
        if isinstance(parser, JsonParser) and not parser.unquoted_keys and not parser.string_delims:
            out.update(self._json_call(close_full, where, out["banned"]))
        elif isinstance(parser, JsonParser):
            out.update(self._dialect_call(parser, close_full, where))
        elif isinstance(parser, PythonCallListParser):
            if not self.shape["list"]:
                raise Refusal("a python-call-list field needs transform_each to make calls", (*where, "transform"))
            out.update(self._json_call(close_full, where, out["banned"], syntax="python-call-list"))
        elif isinstance(parser, XmlInlineParser):
            if self.shape["list"] or self.shape["arguments"][0] != "content":
                raise Refusal("xml-inline tool calls need the name from the open delimiter", (*where, "transform"))
            out.update(self._xml_call(parser, close_full, where))
        else:
            raise Refusal(f"tool calls in {f.content!r} content have no grammar form", (*where, "content"))
        return out

    def _json_call(self, closes: list[Regex], where: JsonPath, banned: Ranges, syntax: str = "json") -> dict[str, Any]:
        """Plain JSON bodies (and Python call lists, whose values are JSON values)."""
        python = syntax == "python-call-list"
        strings = [_json_string(banned)]
        if python:
            strings = [_json_string(banned, q, "\"'\\/bfnrt") for q in "\"'"]
        extra = [_IDENTIFIER] if python else []
        brackets = ("{[(", "}])") if python else ("{[", "}]")

        def shape(ws: str) -> Regex:
            return _json_shape(strings, ws, extra, *brackets)

        ws = self._whitespace(shape, closes, where)
        shaped = shape(ws)
        free = bool(closes) and fa.threads_safe(shape(JSON_SPACE), alt(closes), fa.regex_nfa(closes))
        body_first: Ranges = ((91, 91),) if self.shape["list"] else ((123, 123),)
        return {
            "syntax": syntax,
            "ws": ws,
            "ws_free": free or not closes,
            "lead": self._edge_space(ws, closes, at_end=False),
            "trail": self._edge_space(ws, closes, at_end=True),
            "end_ok": not closes or fa.threads_safe(shaped, ("end",), fa.regex_nfa(closes)),
            "body_first": body_first,
        }

    def _dialect_call(self, parser: JsonParser, closes: list[Regex], where: JsonPath) -> dict[str, Any]:
        """JSON with bare keys and custom-delimited strings: the grammar writes every string value
        between the first pair of delimiters, keys bare where they are identifiers."""
        args = (*where, "content_args")
        if not parser.string_delims:
            raise Refusal("unquoted_keys without string_delims has no grammar form yet", (*args, "unquoted_keys"))
        opener, closer = parser.string_delims[0]
        if not opener or not closer:
            raise Refusal("empty string delimiters have no grammar form", (*args, "string_delims"))
        # The strings' bodies: no closer (the rewrite takes the first), no sentinel, no close.
        body = ("rep", ("set", complement(((1, 2),))), 0, None)
        text = self._lang(
            [("lit", closer), *[fa.without_end(c) for c in closes]],
            body,
            follow=("chars", ((ord(closer[0]), ord(closer[0])),)),
        )
        delimited = seq([("lit", opener), ("dfa", self.langs[text]["dfa"]), ("lit", closer)])
        quoted = _json_string(fa.first_chars(alt([("lit", opener), *closes])))
        ws = self._whitespace(lambda w: _json_shape([delimited, quoted], w, [_IDENTIFIER]), closes, where)
        shaped = _json_shape([delimited, quoted], ws, [_IDENTIFIER])
        return {
            "syntax": "json-dialect",
            "ws": ws,
            "ws_free": False,
            "lead": self._edge_space(ws, closes, at_end=False),
            "trail": self._edge_space(ws, closes, at_end=True),
            "end_ok": not closes or fa.threads_safe(shaped, ("end",), fa.regex_nfa(closes)),
            "body_first": ((91, 91),) if self.shape["list"] else ((123, 123),),
            "delims": [opener, closer, text],
            "unquoted_keys": parser.unquoted_keys,
            "banned": fa.first_chars(alt([("lit", opener), *closes])),
        }

    def _tag_match(self, tag: Pattern, written: Regex) -> Ranges:
        try:
            return fa.delimiter_match(tag.engine, written, [], at_start=False)
        except fa.Mismatch as mismatch:
            raise Refusal(f"a tag whose match could end elsewhere than written: {mismatch}", tag.where) from None

    def _whitespace(self, shape: Any, closes: list[Regex], where: JsonPath) -> str:
        if not closes:
            return WHITESPACE_CHOICES[0]
        delimiters = fa.regex_nfa(closes)
        for ws in WHITESPACE_CHOICES:
            if fa.threads_safe(shape(ws), alt(closes), delimiters):
                return ws
        raise Refusal("the close delimiter can match inside the arguments this grammar writes", (*where, "close"))

    def _edge_space(self, ws: str, closes: list[Regex], *, at_end: bool) -> str:
        """Whitespace around a body: none a close may start with (after it, the close follows)."""
        if not at_end or not closes:
            return ws
        first = fa.first_chars(alt(closes))
        return "".join(c for c in ws if not any(lo <= ord(c) <= hi for lo, hi in first))

    def _xml_call(self, parser: XmlInlineParser, closes: list[Regex], where: JsonPath) -> dict[str, Any]:
        tag_where: JsonPath = (*where, "content_args", "tag_pattern")
        tag = Pattern(parser.tag_pattern, None, tag_where, frozenset({"key", "value"}))
        if len(tag.branches) != 1 or tag.branches[0].anchored or tag.branches[0].lookahead is not None:
            raise Refusal("a tag pattern with alternatives or anchors at its top has no grammar form", tag_where)
        written = tag.branches[0].written
        items = written[1] if written[0] == "seq" else (written,)
        slots = [i for i, item in enumerate(items) if item[0] == "slot"]
        if [items[i][1] for i in slots] != ["key", "value"]:
            raise Refusal("a tag pattern without 'key' then 'value' groups at its top has no grammar form", tag_where)
        after_key, after_value = seq(items[slots[0] + 1 : slots[1]]), seq(items[slots[1] + 1 :])
        if _has_slot(after_key, "value") or _has_slot(after_value, "key"):
            raise Refusal("a tag pattern with groups inside repeats has no grammar form", tag_where)
        if closes and not fa.threads_safe(after_value, fa.EMPTY, fa.regex_nfa(closes)):
            # minimax_m3's tag end `(?:]<]minimax[>[)?</[^>\s]+>` can spell its call close
            # `]<]minimax[>[</invoke>`: a call the grammar writes would end inside a tag, before
            # arguments the schema requires.
            raise Refusal("a tag's end can spell the close delimiter, which has no grammar form", tag_where)
        value_group, key_group = tag.group("value"), tag.group("key")
        unconstrained = value_group == _ANY_TEXT or value_group == ("rep", ("set", ANY), 1, None)
        if fa.nullable(after_value) and unconstrained:
            raise Refusal("a tag pattern whose value is not followed by a delimiter has no grammar form", tag_where)
        value_parser = parser.value_parser
        json_values = False
        if value_parser is not None:
            plain_json = isinstance(value_parser, JsonParser) and not value_parser.unquoted_keys
            if not plain_json or value_parser.string_delims:  # type: ignore[union-attr]
                raise Refusal(
                    "a tag value parser other than json has no grammar form", (*where, "content_args", "value_parser")
                )
            json_values = True
        stops = [
            *([_trigger(after_value)] if not fa.nullable(after_value) else []),
            *[fa.without_end(c) for c in closes],
        ]
        key = fa.clean_text([_trigger(after_key), *stops] if not fa.nullable(after_key) else stops, key_group)
        banned = fa.first_chars(alt(stops)) if stops else ()
        string = _json_string(banned)
        kinds: dict[str, Regex] = {
            "string": string if json_values else _ANY_TEXT,
            "integer": INTEGER,
            "number": NUMBER,
            "boolean": alt([("lit", "true"), ("lit", "false")]),
            "null": ("lit", "null"),
        }
        # A value may end in what the tag's end then kills: each way of writing the end (when
        # there are few) gets its own value text (a value ending in "\n" before "\n</parameter>").
        words = _words(after_value, 8)
        ends: list[tuple[Regex, fa.Follow | None]] = (
            [(("lit", w), ("text", w)) for w in words] if words else [(after_value, None)]
        )
        head = seq(items[: slots[1]])
        values: dict[str, list[list[Any]] | None] = {}
        banned_after: list[tuple[int, int]] = []
        for kind, language in kinds.items():
            bases = [b for b in (language, None if unconstrained else value_group) if b not in (None, _ANY_TEXT)]
            entries = []
            for end, follow in ends:
                index = self._lang(stops, *bases, follow=follow)
                if self.langs[index]["dfa"]["accept"]:
                    entries.append([end, index])
                    whole = seq([_fill(head, {"key": ("dfa", key)}), ("dfa", self.langs[index]["dfa"]), end])
                    banned_after += self._tag_match(tag, whole)
            values[kind] = entries or None
        json_shape = _json_shape([string], " \t", [])
        structured = unconstrained and fa.threads_safe(json_shape, alt(stops), fa.regex_nfa(stops))
        if structured:
            banned_after += self._tag_match(tag, _fill(written, {"key": ("dfa", key), "value": json_shape}))
        not_next = normalise(banned_after)
        sep_chars = [
            c
            for c in SEPARATOR
            if not _in(ord(c), [*fa.first_chars(alt([tag.branches[0].trigger, *closes])), *not_next])
        ]
        sep_set: Regex = ("set", normalise((ord(c), ord(c)) for c in sep_chars))
        sep = ("rep", sep_set, 0, None)
        if closes and any(_in(r[0], not_next) for r in fa.first_chars(alt(closes))):
            raise Refusal("the close delimiter would continue the last tag's match", tag_where)
        # A tag the next one could go on (olmo3's bare value `8` would take the `unit` of `unit="c"`
        # as its own: `days=8unit="c"` reads days as "8unit="): tags are then kept apart by at least
        # one separator character, which the parser skips.
        apart = None
        if fa.overlap(fa.first_chars(tag.branches[0].full), not_next):
            if not sep_chars:
                raise Refusal(
                    "tags that run into each other, with nothing to keep them apart, have no grammar form", tag_where
                )
            apart = sep_set
        return {
            "syntax": "xml-inline",
            "tag": written,
            "tail": after_value,
            "key": key,
            "values": values,
            "json_values": json_values,
            "structured": structured,
            "sep": sep,
            "apart": apart,
            "ws": " \t",
            "ws_free": False,
            "lead": "",
            "trail": "",
            "end_ok": False,
            "body_first": fa.first_chars(alt([tag.branches[0].full, *closes])),
            "banned": banned,
        }


def _trailing_pieces(branch: Branch, limit: int) -> list[Branch]:
    r"""`branch` split on how it ends (a last item of at most `limit` alternatives), each piece an exit
    of its own, so that what may not follow the delimiter is known per ending. minimax_m1 closes a call
    with `\}\s*(?:</tool_calls>|<end_of_sentence>|\n|$)`: as one exit, the `<` banned after `}\n` (where
    `<end_of_sentence>` would go on the match) was banned after `</tool_calls>` too, and nothing starting
    with `<` could follow it."""
    written = branch.written
    items = written[1] if written[0] == "seq" else (written,)
    if branch.lookahead is not None or not items or items[-1][0] != "alt" or len(items[-1][1]) > limit:
        return [branch]
    if _has_slot(written):
        return [branch]  # (a name slot's own ban is worked out on the whole open)
    return [replace(branch, written=seq([*items[:-1], option])) for option in items[-1][1]]


def _leading_variants(node: Regex, limit: int) -> list[Regex]:
    """`node` split into alternatives on how it starts (an optional or alternative first item), at
    most `limit`: each may then be told from the text before it by its own leading literal."""
    items = node[1] if node[0] == "seq" else (node,)
    if not items:
        return [node]
    first, rest = items[0], items[1:]
    if first[0] == "rep" and first[2] == 0 and first[3] == 1:
        options = [first[1], fa.EMPTY]
    elif first[0] == "rep" and first[2] == 0 and first[3] is None:
        options = [fa.EMPTY, ("rep", first[1], 1, None)]
    elif first[0] == "alt":
        options = list(first[1])
    else:
        return [node]
    out: list[Regex] = []
    for option in options:
        variant = seq([option, *rest])
        out += _leading_variants(variant, limit) if variant != fa.EMPTY else []
        if len(out) > limit:
            return [node]
    return out or [node]


def _words(node: Regex, limit: int) -> list[str] | None:
    """The texts of `node` when there are at most `limit` of them (None otherwise)."""
    kind = node[0]
    if kind == "lit":
        return [node[1]]
    if kind == "set":
        chars = [chr(c) for lo, hi in node[1] for c in range(lo, min(hi, lo + limit) + 1)]
        return chars if len(chars) <= limit else None
    if kind in ("seq", "alt"):
        parts = [_words(item, limit) for item in node[1]]
        if any(p is None for p in parts):
            return None
        out: list[str] = [""] if kind == "seq" else []
        for part in parts:
            assert part is not None
            out = [a + b for a in out for b in part] if kind == "seq" else out + part
            if len(out) > limit:
                return None
        return list(dict.fromkeys(out))
    if kind == "rep" and node[3] is not None:
        body = _words(node[1], limit)
        if body is None:
            return None
        out, level = [], [""]
        for count in range(node[3] + 1):
            if count >= node[2]:
                out += level
            if len(out) > limit:
                return None
            level = [a + b for a in level for b in body]
        return list(dict.fromkeys(out))
    return None


def _check_body_start(call: dict[str, Any], opens: list[dict[str, Any]]) -> None:
    """What a body must start with may not continue an open delimiter's match (whitespace that would
    is left out at run time)."""
    for exit_ in opens:
        if _ranges_and(normalise(call["body_first"]), normalise(exit_["not_next"])):
            raise Refusal("a tool call's body would continue its open delimiter's match", tuple(exit_["where"]))


def _lark_text(lang: dict[str, Any]) -> str | None:
    """A free-text language as llguidance's terminal expression: any text (of every base), less those
    holding a text to avoid, less those ending in what could begin one that survives what follows.
    None where that would cost llguidance's lexer too much: texts to avoid with repeats or large
    classes (its derivatives multiply); the grammar then spells out the DFA."""
    if not _cheap(lang["contains"]) or not _cheap(lang["ends"]) or lang["base"]:
        return None
    parts = ["/(?s:.*)/", *(f"/{lark_regex(base)}/" for base in lang["base"])]
    if lang["contains"] != fa.NOTHING:
        parts.append(f"~/(?s:.*)(?:{lark_regex(lang['contains'])})(?s:.*)/")
    if lang["ends"] != fa.NOTHING:
        parts.append(f"~/(?s:.*)(?:{lark_regex(lang['ends'])})/")
    return " & ".join(parts)


def _cheap(node: Regex) -> bool:
    """Literals, small classes and optional parts only: a regex whose derivatives stay few."""
    if node[0] == "set":
        return len(node[1]) <= 4
    if node[0] in ("seq", "alt"):
        return all(_cheap(item) for item in node[1])
    if node[0] == "rep":
        return node[3] is not None and _cheap(node[1])
    return True


def _in(point: int, ranges: Any) -> bool:
    return any(lo <= point <= hi for lo, hi in ranges)


def _product_rows(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The product of two plain-data DFAs (texts of both), as plain data."""
    index = {(0, 0): 0}
    order = [(0, 0)]
    rows: list[tuple[tuple[int, Ranges], ...]] = []
    while len(rows) < len(order):
        x, y = order[len(rows)]
        row: list[tuple[int, Ranges]] = []
        for tx, rx_ in a["rows"][x]:
            for ty, ry in b["rows"][y]:
                both = _ranges_and(rx_, ry)
                if not both:
                    continue
                if (tx, ty) not in index:
                    index[(tx, ty)] = len(order)
                    order.append((tx, ty))
                row.append((index[(tx, ty)], both))
        rows.append(tuple(row))
    accept = tuple(i for i, (x, y) in enumerate(order) if x in a["accept"] and y in b["accept"])
    return {"rows": tuple(rows), "accept": accept}


def _ranges_and(first: Ranges, second: Ranges) -> Ranges:
    return complement(normalise([*complement(first), *complement(second)]))


def _check_text_field(f: Field) -> None:
    where: JsonPath = ("fields", f.name)
    parser = f.parser
    if not isinstance(parser, ScalarParser) or parser.kind not in ("text", "bool"):
        raise Refusal(f"a {f.content!r} field other than the tool calls has no grammar form", (*where, "content"))
    if f.transform is not None:
        raise Refusal("a transform on a field other than the tool calls has no grammar form", (*where, "transform"))
    if not f.optional:
        raise Refusal("a field the message must contain (optional: false) has no grammar form", (*where, "optional"))


def _json_string(banned: Ranges, quote: str = '"', escapes: str = '"\\/bfnrt') -> Regex:
    """A JSON string (no \\u escapes) holding no character of `banned` (a Python call list's strings
    take either quote and the escape \\' too)."""
    plain = complement(normalise([(0, 31), (ord(quote), ord(quote)), (92, 92), *banned]))
    letters = [c for c in escapes if not _in(ord(c), banned)]
    char = alt([("set", plain), seq([("lit", "\\"), ("set", normalise((ord(c), ord(c)) for c in letters))])])
    return seq([("lit", quote), ("rep", char, 0, None), ("lit", quote)])


def _json_shape(strings: list[Regex], ws: str, extra: list[Regex], openers: str = "{[", closers: str = "}]") -> Regex:
    """A regular over-approximation of the argument text a grammar writes, with `ws` between tokens:
    a value's end (a string, number, word, closing bracket) is followed by a separator or a closing
    bracket, and a separator or opening bracket by a value or a closing bracket."""
    space: Regex = ("rep", ("set", normalise((ord(c), ord(c)) for c in ws)), 0, None) if ws else fa.EMPTY
    number = ("rep", ("set", normalise((ord(c), ord(c)) for c in "-+.eE0123456789")), 1, None)
    value = alt([*strings, number, KEYWORDS, *extra])
    opening = seq([("set", normalise((ord(c), ord(c)) for c in openers)), space])
    closing = seq([("set", normalise((ord(c), ord(c)) for c in closers)), space])
    # (in a Python call list a name is followed by "(", and "=" separates a keyword from its value)
    separator = seq([("set", normalise((ord(c), ord(c)) for c in ",:" + ("=(" if "(" in openers else ""))), space])
    after_value = seq([alt([value, closing]), space, ("rep", closing, 0, None)])
    before_value = ("rep", opening, 0, None)
    middle = ("rep", seq([separator, before_value, after_value]), 0, None)
    tail = ("rep", seq([separator, before_value]), 0, 1)
    return seq([space, before_value, ("rep", seq([after_value, middle, tail]), 0, 1)])


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
        if name.keys or arguments.keys or name.root == arguments.root:
            raise refusal
        return {"list": True, "name": ["key", name.root], "arguments": ["key", arguments.root]}
    if name.root == "content" and len(name.keys) == 1 and arguments.root == "content" and len(arguments.keys) == 1:
        if name.keys == arguments.keys:
            raise refusal
        return {"list": False, "name": ["key", name.keys[0]], "arguments": ["key", arguments.keys[0]]}
    named = f.open is not None and name.root in f.open.group_names and not name.keys
    if named and arguments.root == "content" and not arguments.keys:
        return {"list": False, "name": ["capture", name.root], "arguments": ["content"]}
    raise refusal


def _placeholder(node: Transform, refusal: Refusal) -> TPlaceholder:
    if not isinstance(node, TPlaceholder):
        raise refusal
    return node


@per_template
def grammar_skeleton(template: Template) -> dict[str, Any]:
    """The template's grammar skeleton (built once per template object)."""
    return build_skeleton(template)
