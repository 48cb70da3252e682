"""The planner of scanning strategies: how a generated scanner searches each watched delimiter.

Every decision a generated scanner makes about *how* to search (not *what* matches: that is the
reference's rule, in `rtcompile.runtime.engine`) is taken here, from the pattern's tree alone, and
recorded in a frozen `Strategy`: which engine runs the pattern, which strings a match must contain
before a search is worth running, where a search starts, what a one-shot parse does, and what lets
streaming skip a scan altogether. `rtcompile.backends.codegen.scanners` only renders these records;
each generated scanner carries a record's `summary()` as a comment next to the template's pattern.

Adding a strategy is adding a case here and its rendering there. Each case is exact: it changes how
much text a search looks at, never its answer (the differential tests compare every module with the
interpreter and the reference).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

from rtcompile.ir import Delimiter
from rtcompile.regex.analysis import (
    PastRun,
    awaited_after,
    awaited_after_exactly,
    awaited_past_run,
    awaited_strings,
    begins_with_literal,
    depends_on_scan_start,
    lead_class,
    required_literals,
    start_literals,
)
from rtcompile.regex.backtracking import refuse_slow_backtracking
from rtcompile.regex.charsets import Ranges
from rtcompile.regex.first_chars import leading_chars, starts_at_buffer_start
from rtcompile.regex.parser import parse_regex
from rtcompile.regex.stdlib import emit_ranges
from rtcompile.regex.stdlib_prefix import hoist_leading_character
from rtcompile.regex.translate import (
    BeforeEnd,
    UnsupportedRegex,
    translate,
    translate_before_end,
    translate_complete,
)

Engine = Literal["re", "regex"]


@dataclass(frozen=True)
class Strategy:
    """How one regex delimiter is searched.

    * `engine`: `re` runs its exact stdlib translation, with the pattern that reproduces `regex`'s
      partial matches; `regex` runs the pattern itself (no exact translation is known). (A pattern
      that matches only a few plain strings, a plain literal among them, is searched as those
      literals: `rtcompile.plan.scanned_delimiter`.)
    * `attempt`: `match` for a pattern opening with an unbounded lazy `.*?` (a match anywhere
      implies one at the scan position: one attempt, not one per position), else `search`.
    * `required`: strings every match contains, in order; until they are there, in turn, no full
      search runs (only the partial-match one).
    * `start_only`: the pattern can only match at the buffer's start; nothing once scanning moved on.
    * `search_from`: where a full search starts: the scan position; where `required[0]` was found,
      when every match starts with it (`found`); or the start of the run of `lead` characters that
      ends there (`lead`).
    * `one_shot`: at the end of the stream (where a one-shot parse does all its work), `search`
      from `search_from`; `one_start`: find the one string every match starts with, then search
      from there; `starts`: try only where one of several such strings occurs (`starts`);
      `awaited`: for literals followed by a lookahead that needs nothing but one of `awaits` after
      them (`<think>(?=[\\s\\S]*?</think>)`, no captures), the first literal that ends no later than
      the last of `awaits` starts: where they last occur is found once, and `re` never runs the
      lookahead's lazy run a character at a time.
    * `awaits`: strings one of which a match needs at or after the scan position, for a pattern
      that partially matches everywhere until then (`(?=[\\s\\S]*?</think>)`): while they are
      absent, nothing in the state can be committed, and streaming only looks for them in new text.
    * `awaits_after`: for literals followed by such a lookahead (`<think>(?=[\\s\\S]*?</think>)`),
      those literals: the pattern partially matches wherever one occurs until one of `awaits`
      follows it, so where the state holds back from an occurrence, streaming waits there.
    * `before_end`: for a pattern with branches that match only at the end of the text
      (`</think>|$`), its other branches, which an end-of-stream search runs alone up to the end
      (`re` would try `$` at every position).
    * `leads`: for the `regex` engine, how every match and partial match begins: per path, the
      classes of its first one or two characters (`rtcompile.regex.first_chars.leading_chars`). A
      streaming search starts at the first place they occur after the scan position (a second may
      be cut off by the end of the text), and none runs where they do not (`regex` costs about a
      microsecond a call, a character search a tenth of that).
    * `complete`: for the `regex` engine, its complete matches have an exact stdlib translation
      (`translate_complete`), which a search at the end of the stream runs: there partial matches no
      longer count, and `re` runs a lazy repeat's class test where `regex` looks ahead for what
      follows it to the end of the text from every start (quadratic).
    * `awaits_past`: for the `regex` engine, a lazy run between literals (`X? C{m,}? S`, see
      `rtcompile.regex.analysis.awaited_past_run`): where the state holds back from this watch's
      partial match and that match is past its mandatory part (`PastRun.mandatory` does not match
      there), it stays a partial match until `awaits` (S) follows, so streaming waits there; and a
      streaming search looks for complete matches on `re` (`complete`) and for partial ones with
      `regex` only from `PastRun.span` characters before the last S on (`regex` would look for S
      to the end of the text from every start: quadratic).
    """

    engine: Engine
    attempt: Literal["search", "match"] = "search"
    required: tuple[str, ...] = ()
    start_only: bool = False
    search_from: Literal["pos", "found", "lead"] = "pos"
    lead: Ranges | None = None
    one_shot: Literal["search", "one_start", "starts", "awaited"] = "search"
    starts: tuple[str, ...] = ()
    awaits: tuple[str, ...] = ()
    awaits_after: tuple[str, ...] = ()
    before_end: BeforeEnd | None = None
    leads: tuple[tuple[Ranges, ...], ...] | None = None
    complete: bool = False
    awaits_past: PastRun | None = None

    def summary(self) -> str:
        """The record in one line, for the comment above the scanner code it produced."""
        if self.engine == "regex":
            summary = "strategy: the regex module (no exact stdlib translation), partial=True"
            if self.leads is not None:
                summary += f"; streaming from the first {lead_pattern(self.leads)!r}"
            if self.awaits_past is not None:
                summary += f"; streaming waits past its lazy run for {self.awaits[0]!r}"
            if self.complete:
                summary += "; the stream's end searched with re"
            return summary
        parts = [f"strategy: {self.attempt}"]
        if self.start_only:
            parts.append("at the buffer start only")
        if self.required:
            parts.append(f"after {' then '.join(map(repr, self.required))}")
        if self.search_from != "pos":
            parts.append(f"from {'that string' if self.search_from == 'found' else 'the run before it'}")
        if self.one_shot == "one_start":
            parts.append(f"one-shot from {self.starts[0]!r}")
        elif self.one_shot == "starts":
            parts.append(f"one-shot at {', '.join(map(repr, self.starts))}")
        awaited = " or ".join(map(repr, self.awaits))
        if self.one_shot == "awaited":
            parts.append(f"one-shot where {' or '.join(map(repr, self.awaits_after))} ends before the last {awaited}")
        if self.awaits_after:
            parts.append(f"streaming waits at {' or '.join(map(repr, self.awaits_after))} for {awaited}")
        elif self.awaits:
            parts.append(f"streaming waits for {awaited}")
        if self.before_end is not None:
            parts.append("one-shot tries the end once")
        return "; ".join(parts)


def strategy(delimiter: Delimiter) -> Strategy:
    """The strategy for a regex delimiter (literal delimiters are searched per state, not per watch)."""
    assert delimiter.literals is None
    return _strategy(delimiter.pattern, starts_at_buffer_start(delimiter))


@functools.lru_cache(maxsize=512)
def _strategy(pattern: str, start_only: bool) -> Strategy:
    try:
        translated = translate(pattern)
        # (a translation stdlib `re` would backtrack on for longer than `regex` is not used either)
        refuse_slow_backtracking(pattern, (translated.full, translated.prefix))
    except UnsupportedRegex:
        return _regex_module(pattern)
    parsed = parse_regex(pattern)
    root = parsed.root
    attempt: Literal["search", "match"] = "match" if translated.match_only else "search"
    required = required_literals(root)
    lead = lead_class(root) if attempt == "search" else None
    search_from: Literal["pos", "found", "lead"] = "pos"
    if lead == ():
        search_from, lead = "found", None
    elif lead is not None:
        search_from = "lead"
    starts = start_literals(root) if attempt == "search" else None
    one_shot: Literal["search", "one_start", "starts", "awaited"] = "search"
    # One string found once, then `re` from there, only where `re` then skips between candidates itself:
    # its translation opens with a character (`(?:<tool>\s*)?<function=` is written `<(?:tool>\s*<)?function=`,
    # `stdlib_prefix`); else `re` would try every position, and the candidates are tried one by one.
    prefixed = begins_with_literal(hoist_leading_character(root))
    if starts is not None and len(starts) == 1 and search_from == "pos" and prefixed:
        one_shot = "one_start"
    elif starts is not None and (len(starts) > 1 or not prefixed):
        one_shot = "starts"
    awaits = awaited_strings(root) if attempt == "match" else ()
    waits_at = awaited_after(root) if attempt == "search" else None
    awaits_after, awaits = waits_at if waits_at is not None else ((), awaits)
    # (the match is then the literal's alone: a pattern with captures would report them)
    if waits_at is not None and parsed.group_count == 0 and awaited_after_exactly(root) == waits_at:
        one_shot = "awaited"
    return Strategy(
        "re",
        attempt=attempt,
        required=required,
        start_only=start_only,
        search_from=search_from,
        lead=lead,
        one_shot=one_shot,
        starts=starts if one_shot in ("one_start", "starts") and starts is not None else (),
        awaits=awaits,
        awaits_after=awaits_after,
        before_end=translate_before_end(pattern) if one_shot == "search" and search_from == "pos" else None,
    )


def _regex_module(pattern: str) -> Strategy:
    """The strategy of a pattern matched with the `regex` module while streaming."""
    if depends_on_scan_start(pattern):
        return Strategy("regex")  # searched from where the reference searches, with `regex` throughout
    complete = _complete_on_stdlib(pattern)
    # (a wait past a lazy run needs the complete matches on `re`: see `awaits_past`)
    waits = awaited_past_run(parse_regex(pattern).root) if complete else None
    return Strategy(
        "regex",
        leads=leading_chars(pattern),
        complete=complete,
        awaits=() if waits is None else (waits.awaited,),
        awaits_past=waits,
    )


def _complete_on_stdlib(pattern: str) -> bool:
    """Whether the pattern's complete matches have an exact stdlib translation `re` runs no slower
    than `regex` (`translate_complete`): partial matching is what the translation could not reproduce."""
    try:
        refuse_slow_backtracking(pattern, (translate_complete(pattern),))
    except UnsupportedRegex:
        return False
    return True


def lead_pattern(leads: tuple[tuple[Ranges, ...], ...]) -> str:
    """The stdlib pattern of `Strategy.leads`: one of the first characters, then (where known) one of
    the second or the end of the text (`<(?:i|\\Z)`)."""
    branches = []
    for classes in leads:
        first = emit_ranges(classes[0])
        branches.append(first if len(classes) == 1 else f"{first}(?:{emit_ranges(classes[1])}|\\Z)")
    return "|".join(dict.fromkeys(branches))
