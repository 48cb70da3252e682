"""Delimiter searches and hold-back decisions used by generated scanners (the
interpreter gets them from `regex`)."""

import re
from collections.abc import Generator, Iterable
from typing import Any, Final


def literal_hold(buf: str, pos: int, literal: str) -> int:
    """Where held-back text starts for a literal delimiter that does not occur in
    `buf[pos:]`.

    That is the start of the longest suffix of `buf[pos:]` that is a proper prefix of
    `literal` (it may become the delimiter when more text arrives), or `len(buf)` when
    there is none. Candidates are the occurrences of the literal's first character in
    the last `len(literal) - 1` characters, leftmost (longest) first, each checked in
    one comparison; a literal that keeps producing failed candidates (`aaaa...b` against
    `aaaa`) is finished with KMP, so the cost stays linear in the literal's length.
    """
    n = len(buf)
    start = max(pos, n - len(literal) + 1)
    first = literal[0]
    at = buf.find(first, start)
    for _ in range(_DIRECT_CANDIDATES):
        if at < 0:
            return n
        if literal.startswith(buf[at:]):
            return at
        at = buf.find(first, at + 1)
    return n if at < 0 else n - _longest_prefix_suffix(buf, at, literal)


# In a long buffer, literals are searched by jumping between occurrences of their first
# character: a one-character `str.find` runs at memory speed (memchr), where a longer
# needle costs about 0.4 ns a character and an alternation or a literal-prefixed pattern
# in `re` about as much, comparable to a long parse's own work. The jumps cost a few
# calls each, so they pay from this many characters on...
LONG_SCAN: Final = 8192
# ...and from this many for a pattern that opens with an optional part or an
# alternation, which `re` runs in full at every position.
LONG_UNPREFIXED_SCAN: Final = 1024
# A candidate costs about as much as this many characters of a plain search: once they
# come more densely than that, the rest is left to one plain search.
_CANDIDATE_COST: Final = 256
# ...and as this many of a plain search of a pattern `re` runs in full at every position
# (one opening with an optional part: about 16 ns a position against 250 a candidate).
_UNPREFIXED_CANDIDATE_COST: Final = 16


def find_literal(buf: str, literal: str, pos: int) -> int:
    """`buf.find(literal, pos)` for a long `buf[pos:]`: the occurrences of the literal's
    first character are candidates, each checked with one comparison, until they prove
    dense."""
    head = literal[0]
    at = buf.find(head, pos)
    probes = 0
    while at >= 0 and not buf.startswith(literal, at):
        probes += 1
        if probes > _DIRECT_CANDIDATES and at - pos < probes * _CANDIDATE_COST:
            return _find_densely(buf, literal, at + 1)
        at = buf.find(head, at + 1)
    return at


# CPython's `str.find` skips ahead at most a needle's length at a time (and finds one
# character with `memchr`): a needle shorter than this is found a few times faster by
# `re`'s literal search.
_SHORT_NEEDLE: Final = 6
_NEEDLE_PATTERNS: dict[str, re.Pattern[str]] = {}


def _find_densely(buf: str, literal: str, pos: int) -> int:
    """`buf.find(literal, pos)` for a literal of several characters whose first is
    frequent."""
    if len(literal) >= _SHORT_NEEDLE:
        return buf.find(literal, pos)
    pattern = _NEEDLE_PATTERNS.get(literal)
    if pattern is None:
        pattern = _NEEDLE_PATTERNS[literal] = re.compile(re.escape(literal))
    m = pattern.search(buf, pos)
    return -1 if m is None else m.start()


def search_literals(
    pattern: re.Pattern[str],
    buf: str,
    pos: int,
    heads: str,
    literals: Iterable[str],
    last: int,
) -> re.Match[str] | None:
    """`pattern.search(buf, pos)` for a long `buf[pos:]`, where `pattern` is the
    alternation of `literals`, none of which contains another, and `heads` their first
    characters; a match that starts after `last` may be given as no match (the caller
    has a better one there).

    A match can only start at a head: while heads are rare, each is tried with `match`
    (at one position, `match` picks the alternative `search` would). Once they prove
    dense the rest is left to `re` when the literals share their head (it scans for
    their common prefix), else to `str.find` per literal (`re` would try the alternation
    at every head, several times slower), the leftmost occurrence winning. Both are
    searched in windows of growing width (see `_candidates`), so a head or literal that
    does not occur is searched for only about as far as the match, not to the end of the
    buffer at every scan (quadratic in the number of regions)."""
    n = min(len(buf), last + 1)  # where matches may start
    at = _dense_from(pattern, buf, pos, n, tuple(heads), _CANDIDATE_COST)
    if isinstance(at, re.Match) or at is None:
        return at
    if len(heads) == 1:
        # a match starting before `n` ends before this (and no literal is cut short by
        # it)
        return pattern.search(buf, at, n - 1 + max(map(len, literals)))
    width = _FIRST_WINDOW
    while at < n:
        stop = min(n, at + width)
        best = stop
        for literal in literals:
            # occurrences starting before the best so far, wherever they end
            i = buf.find(literal, at, best + len(literal) - 1)
            if i >= 0:
                best = i
        if best < stop:
            return pattern.match(buf, best)
        at = stop
        width *= 2
    return None


def search_from_starts(
    pattern: re.Pattern[str], buf: str, pos: int, starts: tuple[str, ...]
) -> re.Match[str] | None:
    """`pattern.search(buf, pos)` for a long `buf[pos:]`, where every match of `pattern`
    starts with one of `starts`: only where one occurs can a match start, and `match`
    there is the attempt `search` makes there (assertions see the whole string either
    way). `re` would run the whole pattern at every position of a pattern that opens
    with an optional part; candidates are tried left to right until they prove dense,
    then the rest is left to `re`."""
    at = _dense_from(pattern, buf, pos, len(buf), starts, _UNPREFIXED_CANDIDATE_COST)
    if isinstance(at, re.Match) or at is None:
        return at
    return pattern.search(buf, at)


def _dense_from(
    pattern: re.Pattern[str],
    buf: str,
    pos: int,
    end: int,
    needles: tuple[str, ...],
    cost: int,
) -> re.Match[str] | int | None:
    """`pattern.match` tried where one of `needles` starts in `buf[pos:end]`, left to
    right: the first match; None when there is none; or, once candidates prove dense
    (more than a few, closer together than `cost`, a candidate's cost in characters of
    plain search), the position from which no candidate has been tried, for the
    caller's plain search."""
    if len(needles) == 1:
        return _dense_from_one(pattern, buf, pos, end, needles[0], cost)
    for probes, candidate in enumerate(_candidates(buf, pos, end, needles), start=1):
        m = pattern.match(buf, candidate)
        if m is not None:
            return m
        if probes > _DIRECT_CANDIDATES and candidate - pos < probes * cost:
            return candidate + 1
    return None


def _dense_from_one(
    pattern: re.Pattern[str], buf: str, pos: int, end: int, needle: str, cost: int
) -> re.Match[str] | int | None:
    """`_dense_from` for one needle (most states' literals share their first character),
    as one loop: it runs once per candidate, and a one-shot parse of a text full of `<`
    tries many."""
    at, width, probes = pos, _FIRST_WINDOW, 0
    while at < end:
        stop = min(end, at + width)
        # an occurrence starting before `stop`, wherever it ends
        reach = stop + len(needle) - 1
        candidate = buf.find(needle, at, reach)
        while candidate >= 0:
            m = pattern.match(buf, candidate)
            if m is not None:
                return m
            probes += 1
            if probes > _DIRECT_CANDIDATES and candidate - pos < probes * cost:
                return candidate + 1
            candidate = buf.find(needle, candidate + 1, reach)
        at, width = stop, width * 2
    return None


def _candidates(
    buf: str, pos: int, end: int, needles: tuple[str, ...]
) -> Generator[int, None, None]:
    """The positions in `buf[pos:end]` where one of `needles` starts, left to right.
    Where they share their first character, its occurrences are candidates while they
    are rare (see `_shared_head`); the rest is searched in windows of growing width,
    each taking up where the previous one stopped: the search goes only about twice as
    far as the last position taken, however far the next occurrence is."""
    head = needles[0][0]
    at = pos
    if all(needle[0] == head for needle in needles):
        at = yield from _shared_head(buf, pos, end, head, needles)
    width = _FIRST_WINDOW
    while at < end:
        stop = min(end, at + width)
        # an occurrence starting before `stop`, wherever it ends
        found = [buf.find(needle, at, stop + len(needle) - 1) for needle in needles]
        while True:
            candidate = min([i for i in found if i >= 0], default=-1)
            if candidate < 0:
                break
            yield candidate
            found = [
                (
                    buf.find(needle, candidate + 1, stop + len(needle) - 1)
                    if i == candidate
                    else i
                )
                for needle, i in zip(needles, found, strict=True)
            ]
        at = stop
        width *= 2


def _shared_head(
    buf: str, pos: int, end: int, head: str, needles: tuple[str, ...]
) -> Generator[int, None, int]:
    """`_candidates` for `needles` that all start with `head`, found by that character:
    `str.find` finds one character at `memchr`'s speed, a string of several characters
    a few times more slowly, and needle by needle. Returns where the needle searches are
    to take over: `end` when done, or, once occurrences of `head` that start none of
    `needles` prove dense (see `find_literal`), the position after the last one looked
    at."""
    at = buf.find(head, pos, end)
    misses = 0
    while at >= 0:
        if buf.startswith(needles, at):
            yield at
        else:
            misses += 1
            if misses > _DIRECT_CANDIDATES and at - pos < misses * _CANDIDATE_COST:
                return at + 1
        at = buf.find(head, at + 1, end)
    return end


def first_of(leads: re.Pattern[str], buf: str, pos: int) -> int:
    """Where `leads` (a pattern of a character or two) first matches in `buf` from
    `pos`, -1 if nowhere: `str.find` for a character class."""
    m = leads.search(buf, pos)
    return -1 if m is None else m.start()


def lead_start(buf: str, pos: int, end: int, lead: frozenset[str]) -> int:
    """The earliest start of a match whose text before a string found at `end` comes
    from `lead`: the start of the run of `lead` characters that ends there, no earlier
    than `pos`. A match starting before it would run through the character that ends the
    run. A run longer than a few dozen characters gives `pos` (searching it costs about
    what walking it back would)."""
    start = end
    while start > pos and buf[start - 1] in lead:
        start -= 1
        if end - start > _LONG_LEAD:
            return pos
    return start


def literal_set_hold(buf: str, pos: int, literals: Iterable[str]) -> int:
    """`literal_hold` for a set of literals, none of which occurs in `buf[pos:]`: the
    leftmost hold."""
    return min(literal_hold(buf, pos, literal) for literal in literals)


_DIRECT_CANDIDATES: Final = 8
_LONG_LEAD: Final = 64
# The first window of `search_literals`: a few calls per literal cost about as much as a
# search this long.
_FIRST_WINDOW: Final = 4096
_FAILURE_TABLES: dict[str, list[int]] = {}


def _longest_prefix_suffix(buf: str, start: int, literal: str) -> int:
    """The length of the longest prefix of `literal` that is a suffix of `buf[start:]`
    (shorter than it)."""
    failure = _FAILURE_TABLES.get(literal)
    if failure is None:
        failure = _FAILURE_TABLES[literal] = _failure_table(literal)
    matched = 0
    for char in buf[start:]:
        while matched and char != literal[matched]:
            matched = failure[matched - 1]
        if char == literal[matched]:
            matched += 1
    return matched


def _failure_table(literal: str) -> list[int]:
    """KMP: for each prefix of `literal`, the length of its longest proper prefix that
    is also its suffix."""
    table = [0] * len(literal)
    matched = 0
    for index in range(1, len(literal)):
        while matched and literal[index] != literal[matched]:
            matched = table[matched - 1]
        if literal[index] == literal[matched]:
            matched += 1
        table[index] = matched
    return table


# What `recall` answers when the memo cannot: search again.
FORGOTTEN: Final = object()


def recall(memo: list[Any], slot: int, start: int) -> Any:
    """What an end-of-stream search from `start` finds, as remembered in `memo[slot]` (a
    pair: where the last search started, and its match or None), or `FORGOTTEN`.

    At the end of the stream the buffer no longer changes and searches only move on, so
    a search that started no later and found nothing, or found a match starting at or
    after `start`, still answers: a one-shot parse does not search the rest of its
    output again for each region."""
    remembered = memo[slot]
    if remembered is None:
        return FORGOTTEN
    since, match = remembered
    if since <= start and (match is None or match.start() >= start):
        return match
    return FORGOTTEN


def find_once(memo: list[Any], slot: int, buf: str, literal: str, pos: int) -> int:
    """`buf.find(literal, pos)` at the end of the stream, remembered in `memo[slot]`
    (see `recall`): an occurrence at or after `pos`, or none found from an earlier
    position, still answers."""
    at: int | None = memo[slot]
    if at is None or 0 <= at < pos:
        long = len(buf) - pos >= LONG_SCAN
        at = memo[slot] = (
            find_literal(buf, literal, pos) if long else buf.find(literal, pos)
        )
    return at


def last_start(memo: list[Any], slot: int, buf: str, strings: tuple[str, ...]) -> int:
    """Where the last occurrence of any of `strings` in `buf` starts (-1: none), at the
    end of the stream, found once and remembered in `memo[slot]` (the buffer no longer
    changes). A lookahead `(?=[\\s\\S]*?(?:A|B))` holds at a position exactly when that
    is no earlier, however far ahead the strings are."""
    at: int | None = memo[slot]
    if at is None:
        at = memo[slot] = max(buf.rfind(string) for string in strings)
    return at


def search_before_end(
    full: re.Pattern[str],
    branches: re.Pattern[str] | None,
    buf: str,
    pos: int,
    final_newline: bool,
) -> re.Match[str] | None:
    """`full.search(buf, pos)` for a pattern some of whose branches match only at the
    end of the text (`</think>|$`: `rtcompile.regex.translate.translate_before_end`),
    without `re` trying those branches at every position: before the first position
    where one of them can match (the end, or with `final_newline` before a newline that
    ends the text), the other branches (`branches`) decide alone, in their order; there,
    the whole pattern does."""
    n = len(buf)
    end = n - 1 if final_newline and pos < n and buf[-1] == "\n" else n
    if branches is not None:
        m = branches.search(buf, pos)
        if m is not None and m.start() < end:
            return m
    m = full.match(buf, end)
    if m is None and end < n:
        m = full.match(buf, n)
    return m


def regex_can_grow(pattern: re.Pattern[str], buf: str, m: re.Match[str]) -> bool:
    """Whether a complete regex match could still change when the stream goes on.

    A match that reaches the end of the buffer can always grow (or, if empty, only be
    real at the true end). One that ends earlier may still lean on the end of input
    (`$`, `\\Z` inside a lookahead): it is final only if it survives the buffer being
    extended by a plain character.
    """
    if m.end() == len(buf):
        return True
    extended = pattern.match(buf + "\x00", m.start())
    return (
        extended is None
        or extended.span() != m.span()
        or extended.groupdict() != m.groupdict()
    )
