"""Facts about a parsed pattern that hold whether or not stdlib `re` can reproduce it.

The translation reports `history`; diagnostics and lint ask about nested unbounded repeats, captures
that may not take part in a match and the constructs the spec's portability section asks templates to
avoid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rtcompile.regex.ast import (
    Alternation,
    Assertion,
    Atomic,
    Backreference,
    BranchReset,
    Chars,
    Concat,
    Conditional,
    Fuzzy,
    Group,
    Lookaround,
    Node,
    Opaque,
    ParsedRegex,
    Repeat,
    children,
    flat_items,
    flatten_alternation,
    linear_items,
    lookahead_body,
    unwrap,
    walk,
    width,
)
from rtcompile.regex.charsets import ALL, Ranges, intersection, normalise, size
from rtcompile.regex.errors import InvalidRegex, UnsupportedRegex
from rtcompile.regex.first_chars import first_characters, start_chars
from rtcompile.regex.parser import parse_regex
from rtcompile.regex.stdlib import emit_ranges

# Assertions that read the character before their position: word boundaries and starts, multiline
# `^`, and the string start (a position is the start only if no character precedes it, so a buffer
# whose committed text was dropped must keep one to tell).
_LOOKS_BACK_ONE = frozenset(("boundary", "non_boundary", "line_start", "word_start", "word_end", "string_start"))


def history(node: Node) -> int | None:
    r"""How many characters before the search position the pattern may inspect; None if unbounded.

    A lookbehind reads its window (as wide as its body can be), and an assertion in it that reads the
    character before its own position (``\b``, ``\B``, ``\m``, ``\M``, ``^``) reads one more
    when it sits at the window's far edge: ``(?<=\b.)X`` reads two characters before ``X``. (That is
    how far before its own start position `node` reads, as it matches forwards from there.)
    """
    if isinstance(node, Assertion):
        return 1 if node.kind in _LOOKS_BACK_ONE else 0
    if isinstance(node, Lookaround) and node.behind:
        return _reach_in_window(node.body, 0)
    reach = 0
    for child in children(node):  # each child starts at or after `node`'s start
        inner = history(child)
        if inner is None:
            return None
        reach = max(reach, inner)
    return reach


def _reach_in_window(node: Node, after: int) -> int | None:
    """How far before a lookbehind's position `node` reads, when it lies in the lookbehind's window
    with at most `after` characters of the window after it (lookbehinds match right to left)."""
    if isinstance(node, Concat):
        reach = after
        for item in reversed(node.items):
            inner = _reach_in_window(item, after)
            item_high = width(item)[1]
            if inner is None or item_high is None:
                return None
            reach, after = max(reach, inner), after + item_high
        return reach
    if isinstance(node, Repeat) and node.max != 1:
        body_high = width(node.body)[1]
        if body_high == 0:  # the copies all sit at one position
            return _reach_in_window(node.body, after)
        if node.max is None or body_high is None:
            return None
        # the copy furthest from the window's end reads furthest
        return after if node.max == 0 else _reach_in_window(node.body, after + (node.max - 1) * body_high)
    if isinstance(node, (Group, Atomic, Repeat, Alternation, BranchReset, Conditional)) or (
        isinstance(node, Lookaround) and node.behind
    ):
        reach = after
        for child in children(node):  # all end where `node` ends (a condition's lookaround there too)
            inner = _reach_in_window(child, after)
            if inner is None:
                return None
            reach = max(reach, inner)
        return reach
    if isinstance(node, Lookaround):  # a lookahead: forwards from where it sits, and what its body reads before
        inner = history(node.body)
        return None if inner is None else after + inner
    if isinstance(node, Assertion):
        return after + (1 if node.kind in _LOOKS_BACK_ONE else 0)
    high = width(node)[1]  # characters, and constructs no analysis models: as wide as they can be
    extra = history(node)
    return None if high is None or extra is None else after + high + extra


def nested_unbounded_repeat(root: Node) -> bool:
    """Whether an unbounded repeat sits inside another one (``(a+)+``), the shape that backtracks
    catastrophically. Possessive repeats never give back what they matched, so they do not count."""

    def search(node: Node, inside_unbounded: bool) -> bool:
        if isinstance(node, Repeat) and not node.possessive:
            unbounded = node.max is None
            if unbounded and inside_unbounded:
                return True
            return search(node.body, inside_unbounded or unbounded)
        return any(search(child, inside_unbounded) for child in children(node))

    return search(root, inside_unbounded=False)


def optional_group_names(parsed: ParsedRegex) -> set[str]:
    """Names of the groups that some match of the pattern leaves unset."""
    return set(parsed.group_names) - _always_set(parsed.root)


def _always_set(node: Node) -> set[str]:
    """Group names every match of `node` sets."""
    if isinstance(node, Group):
        own = {node.name} if node.name is not None else set()
        return own | _always_set(node.body)
    if isinstance(node, Concat):
        return set().union(*(_always_set(item) for item in node.items))
    if isinstance(node, (Alternation, BranchReset)):
        return set.intersection(*(_always_set(branch) for branch in node.branches))
    if isinstance(node, Conditional):
        return _always_set(node.yes) & _always_set(node.no)
    if isinstance(node, Repeat):
        return _always_set(node.body) if node.min > 0 else set()
    if isinstance(node, Lookaround):
        return _always_set(node.body) if node.positive else set()
    if isinstance(node, (Atomic, Fuzzy)):
        return _always_set(node.body)
    return set()


def portability_concerns(root: Node) -> list[str]:
    """The constructs the spec's portability section asks templates to avoid, as "a lookaround"..."""
    nodes = list(walk(root))
    checks = [
        ("a lookaround", any(isinstance(node, Lookaround) for node in nodes)),
        ("a backreference", any(isinstance(node, Backreference) for node in nodes)),
        ("an atomic group", any(isinstance(node, Atomic) for node in nodes)),
        ("a possessive quantifier", any(isinstance(node, Repeat) and node.possessive for node in nodes)),
        (
            "recursion",
            any(isinstance(node, Opaque) and node.construct in ("recursion", "group call") for node in nodes),
        ),
    ]
    return [name for name, present in checks if present]


# A pattern matching more strings than this is searched as a pattern: the literal search's tables
# (and its one alternation) would grow with every product of alternatives.
_MAX_MATCHED_STRINGS = 64


def matched_strings(root: Node) -> tuple[str, ...] | None:
    """Every string `root` matches, in pattern order, duplicates dropped, when it matches only a few,
    each a sequence of plain characters (see `_plain_char`): an alternation of them, in groups that
    name nothing (``(?:<\\|im_end\\|>|</s>)``, ``<(?:/think|\\|end\\|)>``); else None (a class, a
    repeat, an assertion, a named group or a back-reference)."""
    strings = _strings_of(root)
    return None if strings is None else tuple(dict.fromkeys(strings))


def _strings_of(node: Node) -> list[str] | None:
    char = _plain_char(node)
    if char is not None:
        return [char]
    if isinstance(node, Group) and node.name is None:
        return _strings_of(node.body)
    if isinstance(node, Alternation):
        union: list[str] = []
        for branch in node.branches:
            strings = _strings_of(branch)
            if strings is None or len(union) + len(strings) > _MAX_MATCHED_STRINGS:
                return None
            union += strings
        return union
    if isinstance(node, Concat):
        product = [""]
        for item in node.items:
            strings = _strings_of(item)
            if strings is None or len(product) * len(strings) > _MAX_MATCHED_STRINGS:
                return None
            product = [head + tail for head in product for tail in strings]
        return product
    return None


# More strings than this to check would cost more than the search they spare.
_MAX_REQUIRED_LITERALS = 3


def required_literals(root: Node) -> tuple[str, ...]:
    """Strings every match contains, in this order and without overlap (in the text it consumes): the
    runs of two or more plain, case-sensitive characters that the pattern's top-level sequence always
    consumes (at most three: the longest, kept in order). A scanner that does not find them in turn
    after the search position knows there is no complete match there, without running a search that
    can cost the square of the text (`[^\\s]+\\[ARGS\\]` on a long run of letters, or gpt-oss's
    open pattern while its `<|message|>` has yet to arrive)."""
    runs = [run for _, run in _literal_runs(linear_items(root))]
    longest = sorted(range(len(runs)), key=lambda i: -len(runs[i]))[:_MAX_REQUIRED_LITERALS]
    return tuple(runs[i] for i in sorted(longest))


def awaited_strings(root: Node) -> tuple[str, ...]:
    """For a pattern that opens with an unbounded lazy `.*?`, bare or as the body of its one lookahead
    (`(?=[\\s\\S]*?</think>)`): strings one of which every match consumes (`needed_strings`); ()
    for any other pattern. Such a pattern partially matches at the scan position until one of them
    occurs after it, so a stream waiting for them need look only at new text (see
    `rtcompile.strategies.Strategy.awaits`)."""
    read = reads_ahead(root)
    return needed_strings(read) if opens_with_lazy_any(read) else ()


def reads_ahead(root: Node) -> Node:
    """What a match of `root` reads from where it starts: the body of a pattern that is one positive
    lookahead (`(?=[\\s\\S]*?</think>)`), else the pattern itself."""
    items = flat_items(root)
    body = lookahead_body(items[0]) if len(items) == 1 else None
    return root if body is None else body


def opens_with_lazy_any(node: Node) -> bool:
    """Whether every match of `node` opens with an unbounded lazy run of any character (`.*?` under
    DOTALL, `[\\s\\S]*?`): such a pattern matches at a position if it matches anywhere after it,
    and partially matches at any position until what follows the run arrives."""
    items = flat_items(node)
    first = items[0] if items else None
    if not isinstance(first, Repeat) or not first.lazy or (first.min, first.max) != (0, None):
        return False
    body = unwrap(first.body)
    return isinstance(body, Chars) and body.ranges == ALL


def awaited_after(root: Node) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """For plain literals (one, or an alternation of them) followed by one lookahead that opens with
    `.*?` and ends the pattern (`<think>(?=[\\s\\S]*?</think>)`: reasoning that opens only once its
    close is in sight): the literals, and strings one of which every match of the lookahead consumes
    (`needed_strings`); None for any other pattern. Wherever one of the literals occurs, the pattern
    partially matches there until one of the strings follows it, so a stream waiting there for them
    need look only at new text (see `rtcompile.strategies.Strategy.awaits_after`)."""
    found = _literals_before_lazy_lookahead(root)
    if found is None:
        return None
    leads, ahead = found
    awaited = needed_strings(ahead)
    return (leads, awaited) if awaited else None


def awaited_after_exactly(root: Node) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """`awaited_after` where the lookahead reads nothing but its `.*?` and then one of a few plain
    strings (`<think>(?=[\\s\\S]*?(?:</think>|<tool>))`): the literals and those strings; None for any
    other pattern. The strings are then all the lookahead needs: it holds at a position exactly when
    one of them starts there or later. (Capture groups are opened up, as in `awaited_after`: a caller
    that reports captures checks that there are none.)"""
    found = _literals_before_lazy_lookahead(root)
    if found is None:
        return None
    leads, ahead = found
    awaited = _plain_literals(linear_items(ahead)[1:])
    return (leads, awaited) if awaited else None


def _literals_before_lazy_lookahead(root: Node) -> tuple[tuple[str, ...], Node] | None:
    """For plain literals followed by one lookahead that opens with `.*?` and ends the pattern: the
    literals and the lookahead's body."""
    items = linear_items(root)
    if len(items) < 2:
        return None
    ahead = lookahead_body(items[-1])
    if ahead is None or not opens_with_lazy_any(ahead):
        return None
    leads = _plain_literals(items[:-1])
    return (leads, ahead) if leads else None


def needed_strings(node: Node) -> tuple[str, ...]:
    """Strings one of which every match of `node` contains: its first required literal
    (`required_literals`), or else those of the branches of an alternation every match goes
    through, when each branch has one; () when there are none."""
    required = required_literals(node)
    if required:
        return required[:1]
    for item in linear_items(node):
        inner = unwrap(item)
        if isinstance(inner, Alternation):
            firsts = [required_literals(branch)[:1] for branch in flatten_alternation(inner)]
            if all(firsts):
                return tuple(dict.fromkeys(first[0] for first in firsts))
    return ()


def _plain_literals(items: list[Node]) -> tuple[str, ...]:
    """The texts `items` can match, when they spell one plain literal or are one alternation of
    plain literals; () otherwise."""
    lone = unwrap(items[0]) if len(items) == 1 else None
    if isinstance(lone, Alternation):
        branch_items = [linear_items(branch) for branch in flatten_alternation(lone)]
    else:
        branch_items = [items]
    texts = []
    for branch in branch_items:
        chars = [_plain_char(item) for item in branch]
        if not chars or None in chars:
            return ()
        texts.append("".join(c for c in chars if c is not None))
    return tuple(texts)


def _literal_runs(items: list[Node]) -> list[tuple[int, str]]:
    """The runs of two or more plain characters in `items`, with the index of each one's first item."""
    runs: list[tuple[int, str]] = []
    run, start = "", 0
    for index, item in enumerate([*items, None]):
        char = None if item is None else _plain_char(item)
        if char is not None:
            if not run:
                start = index
            run += char
            continue
        if len(run) > 1:
            runs.append((start, run))
        run = ""
    return runs


# A lead class larger than this is not worth a set test per character walked back.
_MAX_LEAD_CLASS = 256


def lead_class(root: Node) -> Ranges | None:
    """The characters a match can consume before the first of its `required_literals`, when they all
    come from one small class (`\\}\\s*\\]\\s*` before `<|tools_suffix|>`); None otherwise. A
    match then starts inside the run of such characters that ends where that string occurs, and a
    one-shot search can begin there rather than at the scan position (`re` would walk the whole body
    before it, one candidate start at a time)."""
    required = required_literals(root)
    if not required:
        return None
    items = linear_items(root)
    at = next(start for start, run in _literal_runs(items) if run == required[0])
    lead: list[tuple[int, int]] = []
    for item in items[:at]:
        body = item.body if isinstance(item, Repeat) and not item.possessive else item
        if not isinstance(body, Chars) or body.untranslatable is not None:
            return None
        lead += body.ranges
    ranges = normalise(lead)
    return ranges if size(ranges) <= _MAX_LEAD_CLASS else None


# More strings than this to look for would cost more than the search they spare.
_MAX_START_LITERALS = 4


def start_literals(root: Node) -> tuple[str, ...] | None:
    """Strings one of which the text starts with where a match starts (a search need only try where
    one occurs), or None: the leading run of plain, case-sensitive characters, through optional items,
    alternations and what a leading lookahead reads (``(?:<a>\\s+)?b=`` starts with ``<a>`` or ``b=``,
    ``(?=<\\|im_end\\|>)|</think>`` with ``<|im_end|>`` or ``</think>``)."""
    starts = _starts(linear_items(root))
    return None if starts is None else tuple(sorted(starts))


def begins_with_literal(root: Node) -> bool:
    """Whether every match begins with the same plain character, read first (not through an optional
    item, an alternation or a lookahead): then `re` itself skips to where a match can begin."""
    items = linear_items(root)
    return bool(items) and _plain_char(items[0]) is not None


def _starts(items: list[Node]) -> set[str] | None:
    if not items:
        return None  # the match may end here, without a literal
    first, rest = items[0], items[1:]
    if _plain_char(first) is not None:
        run = ""
        for item in items:
            char = _plain_char(item)
            if char is None:
                break
            run += char
        return {run}
    body = lookahead_body(first)
    if body is not None:
        # It reads the text where the match starts, as what follows it does: either one tells.
        ahead = _starts(linear_items(body))
        return ahead if ahead is not None else _starts(rest)
    if isinstance(first, Repeat) and (first.min, first.max) == (0, 1) and not first.possessive:
        alternatives = [linear_items(first.body) + rest, rest]
    elif isinstance(first, Alternation):
        alternatives = [linear_items(branch) + rest for branch in first.branches]
    else:
        return None
    union: set[str] = set()
    for alternative in alternatives:
        starts = _starts(alternative)
        if starts is None:
            return None
        union |= starts
    return union if len(union) <= _MAX_START_LITERALS else None


def _plain_char(node: Node) -> str | None:
    """The one character a literal node matches, or None. Case-insensitive, only an ASCII character
    without case (`<`, `|`, `_`, digits): one that only ever matches itself, under simple and full
    case folding alike (a non-ASCII one may be part of a character that folds to several)."""
    if not isinstance(node, Chars) or node.kind != "literal" or node.literal is None:
        return None
    if node.ranges != ((node.literal, node.literal),):
        return None
    return None if node.ignore_case and node.literal >= 0x80 else chr(node.literal)


@dataclass(frozen=True)
class LeadingRun:
    """A pattern that starts with a run of one class, optional items aside (see `leading_run`):
    `run` the class, `busy` the characters that can begin anything else a match reads first (the
    optional items before the run, and what must follow it). `after`: where the run is the first item,
    the literals one of which every match begins with once its run is left out (``\\s*</tool_call>``:
    `</tool_call>`; the other branches' own), in sorted order; None where not known."""

    run: Ranges
    busy: Ranges
    after: tuple[str, ...] | None = None


def leading_run(root: Node) -> LeadingRun | None:
    """The shape of mistral's `(?:\\[TOOL_CALLS\\])?[^\\s\\[\\]]+\\[ARGS\\]` or of `\\s*</tool_call>`:
    optional items, then a greedy unbounded run of one class C, then an item that must consume a
    character outside C. No lookarounds or anchors anywhere: they would make the run's fate depend on
    the text around it. Beside it, the pattern may have other branches that start only at characters
    outside C (`\\s*<end_of_turn>|(?=<start_of_tool>)`): they are `busy` too. None for any other
    pattern.

    In text without any `busy` character, such a pattern has no complete match, and its only partial
    match is the run of C characters that ends the text (another branch may only wait, empty, at the
    text's end): what a streaming parser holds back there is that run, and text that only lengthens it
    changes nothing (see `rtcompile.plan.pending_run`)."""
    inner = unwrap(root)
    if not isinstance(inner, Alternation):
        return _run_first(root)
    branches = flatten_alternation(inner)
    runs = [(branch, run) for branch in branches if (run := _run_first(branch)) is not None]
    if len(runs) != 1:
        return None
    ((owner, leading),) = runs
    busy = list(leading.busy)
    after = None if leading.after is None else set(leading.after)
    for branch in branches:
        if branch is not owner:
            starts = start_chars(branch)
            if starts is None or intersection(starts, leading.run):
                return None  # it may start inside the run, or where nothing tells it is coming
            busy += starts
            literals = start_literals(branch)
            after = None if after is None or literals is None else after | set(literals)
    return LeadingRun(leading.run, normalise(busy), None if after is None else tuple(sorted(after)))


def _run_first(root: Node) -> LeadingRun | None:
    """`leading_run` of a pattern that is no alternation of such branches."""
    nodes = list(walk(root))
    if any(isinstance(n, (Assertion, Lookaround, Opaque, Backreference, Fuzzy, Conditional)) for n in nodes):
        return None
    items = linear_items(root)
    busy: list[tuple[int, int]] = []
    for index, item in enumerate(items):
        if isinstance(item, Repeat) and isinstance(item.body, Chars) and item.max is None:
            if item.lazy or item.possessive or item.body.untranslatable is not None:
                return None
            run = item.body.ranges
            rest = items[index + 1 :]
            if not rest or not _starts_outside(rest[0], run):
                return None
            following = first_characters(rest[0])
            assert following is not None
            # (past optional items, a match may begin with them instead: not known here)
            after = _starts(rest) if index == 0 else None
            literals = None if after is None else tuple(sorted(after))
            return LeadingRun(run, normalise([*busy, *following.ranges]), literals)
        if width(item)[0] != 0:
            return None  # a required item before the run: the run does not start the pattern
        first = first_characters(item)
        if first is None:
            return None
        busy += first.ranges
    return None


def _starts_outside(node: Node, run: Ranges) -> bool:
    """Whether `node` must consume a character, and every character it can start with lies outside
    `run` (so the run cannot run on into it)."""
    first = first_characters(node)
    return first is not None and not first.nullable and not intersection(first.ranges, run)


def depends_on_scan_start(pattern: str) -> bool:
    """Whether what `regex` reports for `pattern` depends on where its search starts, not only on the
    text: then neither one scan for a whole output (`rtcompile.plan.one_scan_is_exact`) nor a
    remembered search stands in for a later one, and a search may not start later than where the
    reference's starts."""
    try:
        parsed = parse_regex(pattern)
    except (InvalidRegex, UnsupportedRegex, ValueError):
        return True
    if any(flag.letter == "r" for flag in parsed.inline_flags):
        return True
    if any(flag.letter == "f" and flag.on for flag in parsed.inline_flags):
        # Full case folding: regex may report a (partial) match starting before where the search
        # starts, in text before it (`(?if)ß\tk\z` searched from 3 in '\x85<t𐐀ﬁẞ\t' starts at 1).
        return True
    for node in walk(parsed.root):
        if isinstance(node, Assertion) and node.kind == "search_anchor":
            return True
        if isinstance(node, Opaque) and node.construct in ("\\K keep", "control verb"):
            return True
        if isinstance(node, Fuzzy):
            return True  # which approximate match regex reports depends on where (and how) it searches
    return False


@dataclass(frozen=True)
class PastRun:
    """What `awaited_past_run` finds: `awaited` (S), `mandatory` (a stdlib pattern matching at a
    position exactly when the text from there to its end is still within the pattern's mandatory
    part: a proper prefix of X, X and fewer than m characters of C, or fewer than m of C) and `span`
    (the length of X plus m: an attempt looks for S from that far past its start on)."""

    awaited: str
    mandatory: str
    span: int


def awaited_past_run(root: Node) -> PastRun | None:
    r"""For a lazy run of one class between literals, `X? C{m,}? S` or `X C{m,}? S` (m at least 1, S at
    least two characters and the pattern's end, X a literal, nothing case-insensitive):
    `(?:\[TOOL_CALLS\])?(?P<name>[^\s\[\]]+?)\[ARGS\]`, `<function=([^<\n]+?)>\n`; None for any
    other pattern.

    Where `regex`'s partial search reports a partial match of such a pattern past its mandatory part,
    it is in the lazy run's search for S: it looks for S from there to the end of the text and reports
    partial when S is not found, whatever comes before it (it tests the run's class only between the
    run's start and an S it found). Text that adds no S after that point leaves the partial match
    where it was, so a stream need look only for S in new text. And with no complete match in the
    text, every attempt that finds an S from `span` characters past its start fails: no partial match
    starts `span` or more characters before the last S (both checked against `regex` itself:
    tests/regex/test_lazy_runs.py). A one-character S is tested character by character instead, with
    the class; it is not such a pattern."""
    items = linear_items(root)
    if any(isinstance(node, Chars) and node.ignore_case for node in walk(root)):
        return None
    at = next((i for i, item in enumerate(items) if isinstance(item, Repeat) and item.lazy), None)
    if at is None:
        return None
    run = items[at]
    assert isinstance(run, Repeat)
    body = unwrap(run.body)
    if not isinstance(body, Chars) or run.possessive or run.min < 1 or run.max is not None:
        return None
    after = [_plain_char(item) for item in items[at + 1 :]]
    if len(after) < 2 or None in after:
        return None
    awaited = "".join(c for c in after if c is not None)
    before = items[:at]
    optional = len(before) == 1 and isinstance(before[0], Repeat) and (before[0].min, before[0].max) == (0, 1)
    lead_items = linear_items(before[0].body) if optional and isinstance(before[0], Repeat) else before
    if optional and isinstance(before[0], Repeat) and (before[0].lazy or before[0].possessive):
        return None
    chars = [_plain_char(item) for item in lead_items]
    if None in chars:
        return None
    lead = "".join(c for c in chars if c is not None)
    if optional and not lead:
        return None
    run_class = emit_ranges(body.ranges)
    short_run = f"{run_class}{{0,{run.min - 1}}}" if run.min > 1 else ""
    mandatory = [re.escape(lead[:length]) for length in range(len(lead))]  # X cut off by the end
    if lead:
        mandatory.append(re.escape(lead) + short_run)
    if optional or not lead:
        mandatory.append(short_run)
    return PastRun(awaited, "(?:" + "|".join(dict.fromkeys(mandatory)) + ")\\Z", len(lead) + run.min)
