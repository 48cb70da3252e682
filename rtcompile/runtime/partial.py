"""Streaming hold-back with stdlib `re`: `regex`'s ``search(text, pos, partial=True)``
reproduced.

Lifted verbatim into generated parsers, so it uses the standard library only.
"""

import re


def partial_search(
    full: re.Pattern[str], prefix: re.Pattern[str], text: str, pos: int
) -> tuple[re.Match[str] | None, int | None]:
    """Search `text` from `pos` the way ``regex.search(text, pos, partial=True)`` would.

    `full` and `prefix` are the two patterns `rtcompile.regex.translate.translate`
    produces, compiled with ``re.DOTALL``. Returns

    * ``(match, None)`` when there is a full match (`regex` always prefers one, wherever
      it starts);
    * ``(None, start)`` for a partial match: `start` is the leftmost position where the
      pattern could still match if more text arrived, i.e. the first character the
      caller must hold back;
    * ``(None, None)`` when no partial match can start at or after `pos` (for example a
      pattern anchored at the string start, searched with ``pos > 0``).

    A partial match at ``len(text)`` and ``(None, None)`` both mean "nothing to hold
    back"; which one `regex` reports there depends on its search prefilters, and the
    translation mirrors them except in rare cases (see `rtcompile.regex.translate`).

    Both steps are single scans by the `re` engine; `prefix` encodes `regex`'s whole
    partial-match decision, including its quirks, so no per-position loop is needed
    here.
    """
    match = full.search(text, pos)
    if match is not None:
        return match, None
    live = prefix.search(text, pos)
    return None, None if live is None else live.start()


def partial_search_at(
    full: re.Pattern[str], prefix: re.Pattern[str], text: str, pos: int
) -> tuple[re.Match[str] | None, int | None]:
    """`partial_search` where only a match or partial match that starts at `pos` can
    matter (another delimiter matched there already): a complete match at `pos` is the
    one `partial_search` finds; with none, and no partial match at `pos`, nothing that
    starts later could beat the match in hand, so the rest of the text is not searched.
    (A partial match at `pos` still needs the search: a complete match anywhere later
    would be reported instead.)"""
    match = full.match(text, pos)
    if match is not None:
        return match, None
    if prefix.match(text, pos) is None:
        return None, None
    return partial_search(full, prefix, text, pos)


def partial_match(
    full: re.Pattern[str], prefix: re.Pattern[str], text: str, pos: int
) -> tuple[re.Match[str] | None, int | None]:
    """`partial_search` for a pattern that can match at a later start only if it matches
    at `pos` (one opening with an unbounded lazy ``.*?``): one match attempt instead of
    one per start position, which keeps stdlib `re` linear where its search would be
    quadratic."""
    match = full.match(text, pos)
    if match is not None:
        return match, None
    live = prefix.search(text, pos)
    return None, None if live is None else live.start()


def merged_groupdict(
    match: re.Match[str], duplicates: tuple[tuple[str, tuple[str, ...]], ...]
) -> dict[str, str | None]:
    """`match.groupdict()` as `regex` reports it for a pattern that uses a group name
    more than once.

    The translation renames every later occurrence (`duplicates` lists, per name, the
    stdlib names of its occurrences, the first being the name itself). `regex` gives
    them one group, whose value is the capture that completed last: among non-empty,
    non-nested occurrences, the one that ends last.
    """
    groups = match.groupdict()
    for name, copies in duplicates:
        value, end = None, -1
        for (
            occurrence
        ) in copies:  # not `copy`: modules that lift this import the module `copy`
            if match.end(occurrence) > end and match.group(occurrence) is not None:
                value, end = match.group(occurrence), match.end(occurrence)
            if occurrence != name:
                del groups[occurrence]
        groups[name] = value
    return groups
