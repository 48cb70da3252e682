"""A differential fuzzer of adversarial delimiters: random regexes from the whole syntax `regex` accepts,
used in every place a template holds a pattern, against the compiled module, the interpreter and
transformers 5.24.0.

A pattern is drawn from a grammar of everything the reference's `regex` (V0) reads: anchors (``^ $ \\A
\\Z \\z \\b \\B \\m \\M \\G``), lookarounds, lazy and possessive repeats, inline flags (scoped and
global, the ones we refuse included), sets with POSIX classes and ``\\p{..}`` properties, group
references in every spelling (forward ones too), conditionals, atomic groups, branch resets, fuzzy
constraints and control verbs. Its literals are the characters where case folding, word
boundaries and line ends are subtle: ``ſ``, ``K`` (Kelvin), ``ς``/``σ``, ``İ``/``ı``, ``ǅ``, combining
marks, non-BMP letters, ``\\x1c``, ``\\r``, U+2028.

The pattern becomes one delimiter of a small template (`POSITIONS`: an open, a close, the start anchor,
an xml-inline `tag_pattern`); streams are built from strings the template's delimiters match
(`rtcompile.tooling.fuzz.delimiter_examples`), their truncations and the subtle characters, and run
under every 2-way split and one character at a time, plus one-shot parsing. The compiled module must
equal the interpreter in everything (messages of exceptions included), and both must agree with
transformers (events, messages, exception classes).

The suite runs a small, fixed budget (tests/regex/test_fuzz.py); the long run is a command:

    nice -n 19 python -m tests.support.regex_fuzz --templates 20000 --seed 1 --jobs 2

It prints its progress and, at the end, the templates tried and accepted by the reference, the runs,
the divergences (each with a reproducer) and the compiler exceptions.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import logging
import math
import multiprocessing
import random
import signal
import sys
import time
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import regex
import transformers.utils.chat_parsing as reference

import rtcompile
from rtcompile.tooling.fuzz import delimiter_examples
from rtcompile.tooling.observe import Raised, agrees_with_reference, normalise, observe

# ---------------------------------------------------------------------------------------------------
# Random patterns
# ---------------------------------------------------------------------------------------------------

# Characters where `regex` and stdlib `re`, case folding, word boundaries or line ends disagree or are
# easy to get wrong: long s, Kelvin sign, final/medial sigma, dotted/dotless i, the titlecase digraph,
# sharp s and its capital, a ligature, a combining mark, Deseret (non-BMP letters with case), a
# mathematical letter, an emoji, separators `\s` disagrees on, CR, NEL, U+2028, digits `\d` disagrees on.
SUBTLE = [
    "ſ", "s", "S", "\u212a", "k", "K", "ς", "σ", "Σ", "İ", "ı", "i", "I", "ǅ", "Ǆ", "ǆ", "ß", "ẞ", "ﬁ",
    "\u0301", "é", "\U00010400", "\U00010428", "\U0001d400", "\U0001f600",
    "\x1c", "\r", "\n", "\u0085", "\u2028", "\u00a0", "\u00b2", "\u0663", "_", " ", "1", "x", "<", ">", "/",
]  # fmt: skip
_ESCAPED = set(".^$*+?{}[]\\|()#") | {" ", "\n", "\r"}  # escaped in patterns (`#` and blanks for (?x))
ESCAPES = [
    r"\n", r"\t", r"\r", r"\x1c", r"\u017f", r"\U0001F600", r"\N{KELVIN SIGN}", r"\N{LATIN SMALL LETTER DOTLESS I}",
    r"\0", r"\101", r"\.", r"\-", r"\/", r"\ ", r"\#", r"\a", r"\v", r"\e",
]  # fmt: skip
CLASSES = [
    ".", r"\w", r"\W", r"\d", r"\D", r"\s", r"\S", r"\h", r"\pL", r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\P{L}",
    r"\p{Nd}", r"\p{Greek}", r"\p{Script=Latin}", r"\p{Alpha}", r"\p{Cased}", r"\p{Word}", r"\p{posix_alnum}",
    r"\X", r"\R",
]  # fmt: skip
SET_ITEMS = [
    "a-z", "A-Z", "k-s", "0-9", "\u0370-\u03ff", "\u00c0-\u024f", "\u0130-\u0131", r"\w", r"\W", r"\d", r"\s",
    r"\S", r"\p{Lu}", r"\P{Ll}", "[:alpha:]", "[:^digit:]", "[:word:]", "[:space:]", "[:upper:]", "[:lower:]",
    "[:punct:]", "[:alnum:]", r"\]", r"\\", r"\^", "-", r"\b", r"\n", r"\x1c",
]  # fmt: skip
ANCHORS = ["^", "$", r"\A", r"\Z", r"\z", r"\b", r"\B", r"\m", r"\M", r"\G", r"\K"]
GROUP_OPENERS = [
    "(", "(?:", "(?P<a>", "(?P<b>", "(?<a>", "(?>", "(?|", "(?i:", "(?-i:", "(?s:", "(?-s:", "(?m:", "(?x:",
    "(?i-m:", "(?=", "(?!", "(?<=", "(?<!",
]  # fmt: skip
REFERENCES = [r"\1", r"\2", "(?P=a)", r"\g<1>", r"\g<a>", r"\g<b>"]
# Not recursion or group calls (``(?R)``, ``(?1)``): placed at random they recurse without end, and
# `regex` (the reference's too) runs out of memory. The translation refuses them, so a delimiter holding
# one is matched with `regex` in every engine anyway.
OTHERS = ["(?#c)", "(*FAIL)", "(*SKIP)", "(*PRUNE)"]
QUANTIFIERS = ["*", "+", "?", "{2}", "{0,2}", "{1,3}", "{,2}", "{2,}"]
RUN_CLASSES = ["x", "[xy]", "ſ", "(?i:s)", r"\w", r"\s", " ", ".", "[^<]", "[^x]"]
FLAGS = [
    "(?i)", "(?m)", "(?s)", "(?x)", "(?u)", "(?V0)", "(?a)", "(?f)", "(?w)", "(?r)", "(?b)", "(?e)", "(?V1)",
    "(?im)", "(?ix)", "(?if)", "(?iw)", "(?-i)",
]  # fmt: skip
MAX_DEPTH = 2


def random_pattern(rng: random.Random) -> str:
    """A random pattern in `regex`'s syntax (which `regex` may still reject: the caller filters)."""
    pattern = _alternation(rng, 0)
    if rng.random() < 0.35:
        pattern = rng.choice(FLAGS) + pattern
    elif rng.random() < 0.05:  # a global flag in the middle: `regex` applies it to the whole pattern
        cut = rng.randint(0, len(pattern))
        pattern = pattern[:cut] + rng.choice(FLAGS) + pattern[cut:]
    return pattern


def _alternation(rng: random.Random, depth: int) -> str:
    branches = rng.choice([1, 1, 1, 2, 3])
    return "|".join(_sequence(rng, depth) for _ in range(branches))


def _sequence(rng: random.Random, depth: int) -> str:
    return "".join(_quantified(rng, depth) for _ in range(rng.randint(0 if depth else 1, 4)))


def _quantified(rng: random.Random, depth: int) -> str:
    item = _item(rng, depth)
    if item.startswith("(") and rng.random() < 0.03:
        return item + "{e<=1}"  # fuzzy matching, on a group
    if rng.random() < 0.3:
        item += _quantifier(rng)
    return item


def _quantifier(rng: random.Random) -> str:
    return rng.choice(QUANTIFIERS) + rng.choice(["", "", "?", "+"])


def _item(rng: random.Random, depth: int) -> str:
    kind = rng.choices(
        ["literal", "escape", "class", "set", "anchor", "group", "reference", "conditional", "other", "runs"],
        weights=[30, 4, 12, 8, 12, 16 if depth < MAX_DEPTH else 0, 5, 2 if depth < MAX_DEPTH else 0, 2, 4],
    )[0]
    if kind == "runs":  # repeats in a row of classes that share characters: rewritten, or read by what follows
        return "".join(rng.choice(RUN_CLASSES) + _quantifier(rng) for _ in range(rng.randint(2, 3)))
    if kind == "literal":
        char = rng.choice(SUBTLE)
        return "\\" + char if char in _ESCAPED else char
    if kind == "escape":
        return rng.choice(ESCAPES)
    if kind == "class":
        return rng.choice(CLASSES)
    if kind == "set":
        items = [rng.choice([*SET_ITEMS, *SUBTLE]) for _ in range(rng.randint(1, 3))]
        items = [item if item not in ("]", "\\", "[", "^") else "\\" + item for item in items]
        return "[" + ("^" if rng.random() < 0.3 else "") + "".join(items) + "]"
    if kind == "anchor":
        return rng.choice(ANCHORS)
    if kind == "group":
        return rng.choice(GROUP_OPENERS) + _alternation(rng, depth + 1) + ")"
    if kind == "reference":
        return rng.choice(REFERENCES)
    if kind == "conditional":
        condition = rng.choice(["1", "a", "?=x", "?<!y"])
        no = "|" + _sequence(rng, depth + 1) if rng.random() < 0.7 else ""
        return f"(?({condition}){_sequence(rng, depth + 1)}{no})"
    return rng.choice(OTHERS)


# ---------------------------------------------------------------------------------------------------
# Templates holding a random pattern
# ---------------------------------------------------------------------------------------------------

# Where a template holds a pattern: a field's open or close, the start anchor, an xml-inline tag pattern.
POSITIONS = ("open", "close", "start_anchor", "tag_pattern")
# xml-inline needs groups `key` (and reads `value`); the random part sits in different places.
TAG_FRAMES = [
    "(?P<key>{})=(?P<value>[^;]*);",
    "<(?P<key>\\w+)>(?P<value>{})</(?P=key)>",
    "(?P<key>{})",
    "{}(?P<key>[a-zſK])(?P<value>.)",
]


@dataclass(frozen=True)
class Case:
    """A random template and where its random pattern sits (one of `POSITIONS`)."""

    position: str
    template: dict[str, Any]


def random_case(rng: random.Random) -> Case:
    """A small template with a random pattern in a random position (which the reference may reject)."""
    position = rng.choice(POSITIONS)
    pattern = random_pattern(rng)
    template: dict[str, Any] = {"start_anchor": "<s>"}
    if position == "open":
        tc: dict[str, Any] = {"open_pattern": pattern}
        close = rng.choice(["</t>", "\n", None, "pattern"])
        if close == "pattern":
            tc["close_pattern"] = random_pattern(rng)
        elif close is not None:
            tc["close"] = close
        fields: dict[str, Any] = {"tc": tc, "content": {}}
    elif position == "close":
        tc = {"close_pattern": pattern}
        if rng.random() < 0.75:
            tc["open"] = rng.choice(["<t>", "<", "<t"])
            fields = {"tc": tc, "content": {}}
        else:
            fields = {"tc": tc}  # the implicit field closes at the pattern
    elif position == "start_anchor":
        template = {"start_anchor_pattern": pattern}
        fields = {"reasoning_content": {"open": "<think>", "close": "</think>"}, "content": {}}
    else:
        pattern = rng.choice(TAG_FRAMES).format(pattern)
        args: dict[str, Any] = {"tag_pattern": pattern}
        if rng.random() < 0.3:
            args["merge_duplicates"] = True
        fields = {"tc": {"open": "<t>", "close": "</t>", "content": "xml-inline", "content_args": args}}
        fields["content"] = {}
    for spec in fields.values():
        _maybe_transform(rng, spec)
    template["fields"] = fields
    return Case(position, template)


def _maybe_transform(rng: random.Random, spec: dict[str, Any]) -> None:
    """Now and then a transform reading the content and the delimiters' named captures."""
    names: list[str] = []
    for key in ("open_pattern", "close_pattern"):
        with contextlib.suppress(regex.error, ValueError, RecursionError):
            names += [n for n in regex.compile(spec.get(key, ""), regex.DOTALL).groupindex if n not in names]
    if names or rng.random() < 0.2:
        spec["transform"] = {"c": "{content}", **{name: "{" + name + "}" for name in names}}


def accepted_by_reference(template: dict[str, Any]) -> bool:
    """The reference loads the template (and `regex` compiles its tag pattern, which it reads only when
    parsing: a template whose tag pattern `regex` rejects tests an error path, not regex semantics)."""
    try:
        reference.ResponseParser(template, prefix="")
        for spec in template["fields"].values():
            tag = spec.get("content_args", {}).get("tag_pattern")
            if tag is not None:
                regex.compile(tag, regex.DOTALL)
    except Exception:  # noqa: BLE001 - any refusal: the template is not one the reference accepts
        return False
    return True


# ---------------------------------------------------------------------------------------------------
# Streams
# ---------------------------------------------------------------------------------------------------


def _template_texts(template: dict[str, Any], rng: random.Random) -> list[str]:
    """Strings the template's delimiters (and tag patterns) match, its literal delimiters, its start anchor."""
    texts: list[str] = []
    patterns: list[str] = []
    if "start_anchor_pattern" in template:
        patterns.append(template["start_anchor_pattern"])
    else:
        texts.append(template["start_anchor"])
    for spec in template["fields"].values():
        for key in ("open", "close"):
            if key in spec:
                texts.append(spec[key])
        patterns += [spec[key] for key in ("open_pattern", "close_pattern") if key in spec]
        tag = spec.get("content_args", {}).get("tag_pattern")
        if tag is not None:
            texts += [f"<t>{example}</t>" for example in delimiter_examples(tag, rng, count=3)]
    for pattern in patterns:
        texts += delimiter_examples(pattern, rng, count=4)
    return texts


def random_stream(rng: random.Random, texts: list[str], max_pieces: int = 6) -> str:
    """A short stream: delimiter texts, their truncations, subtle characters (runs under every 2-way
    split cost about the square of its length, so it stays short)."""
    pieces = []
    for _ in range(rng.randint(1, max_pieces)):
        kind = rng.random()
        if kind < 0.45 and texts:
            pieces.append(rng.choice(texts))
        elif kind < 0.6 and texts:
            text = rng.choice(texts)
            pieces.append(text[: rng.randint(0, max(0, len(text) - 1))])
        else:
            pieces.append(rng.choice(SUBTLE))
    return "".join(pieces)[:40]


def random_prefix(rng: random.Random, template: dict[str, Any], texts: list[str]) -> str:
    """A prompt: none, the anchor alone, a history with anchors, one that opens a region, or none of it."""
    anchors = (
        delimiter_examples(template["start_anchor_pattern"], rng)
        if "start_anchor_pattern" in template
        else [template["start_anchor"]]
    )
    anchor = rng.choice(anchors) if anchors else ""
    filler = random_stream(rng, texts, 3)
    return rng.choice(["", anchor, f"{filler}{anchor}", f"{anchor}{filler}", filler, f"{anchor}{filler}{anchor}"])


# ---------------------------------------------------------------------------------------------------
# Running the three engines
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Divergence:
    """One run where the engines disagree: enough to reproduce it."""

    template: dict[str, Any]
    prefix: str
    text: str
    chunks: list[str] | None  # None: one-shot parsing of `text`
    compiled: Any
    interpreted: Any
    reference: Any

    def describe(self) -> str:
        return (
            f"template={self.template!r}\nprefix={self.prefix!r}\ntext={self.text!r}\nchunks={self.chunks!r}\n"
            f"  compiled:    {self.compiled!r}\n  interpreter: {self.interpreted!r}\n  reference:   {self.reference!r}"
        )


@dataclass
class Tally:
    """What a fuzz run did."""

    tried: int = 0  # random templates built
    accepted: int = 0  # of those, the ones the reference accepts (and the engines were run on)
    refused: int = 0  # accepted ones rtcompile refused with a located TemplateError
    runs: int = 0  # streams run through all three engines (a chunking or a one-shot parse each)
    by_position: dict[str, int] = field(default_factory=dict)  # accepted templates by pattern position
    divergences: list[Divergence] = field(default_factory=list)
    compiler_exceptions: list[tuple[dict[str, Any], str]] = field(default_factory=list)  # template, traceback line
    runaways: int = 0  # runs the reference never finishes (stopped by the guard; ours must run away too)

    def add(self, part: Tally) -> None:
        """Take in the tally of the next case (`tried` counts up to it)."""
        self.tried = part.tried
        self.accepted += part.accepted
        self.refused += part.refused
        self.runs += part.runs
        self.runaways += part.runaways
        for position, count in part.by_position.items():
            self.by_position[position] = self.by_position.get(position, 0) + count
        self.divergences += part.divergences
        self.compiler_exceptions += part.compiler_exceptions

    def summary(self) -> str:
        positions = ", ".join(f"{k} {v}" for k, v in sorted(self.by_position.items()))
        return (
            f"templates tried {self.tried}, accepted by the reference {self.accepted} ({positions}); "
            f"refused by rtcompile {self.refused}; runs {self.runs}; divergences {len(self.divergences)}; "
            f"compiler exceptions {len(self.compiler_exceptions)}; runs the reference never finishes {self.runaways}"
        )


Make = Callable[[str, Any], Any]


@contextlib.contextmanager
def _loaded(code: str, name: str) -> Iterator[types.ModuleType]:
    """The generated module, imported from its source (and forgotten afterwards: a long run makes
    tens of thousands)."""
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    sys.modules[name] = module
    try:
        exec(compile(code, module.__file__, "exec"), module.__dict__)  # noqa: S102 - our own generated code
        yield module
    finally:
        del sys.modules[name]


def _one_shot(parse: Callable[[str, str], Any], text: str, prefix: str) -> Any:
    try:
        return normalise(parse(text, prefix))
    except Exception as exc:  # noqa: BLE001 - which exception is what we compare
        return Raised.of("parse", exc)


@dataclass(frozen=True)
class Engines:
    """One template's three engines: compiled module, interpreter, transformers (in that order), as
    streaming parser factories and as one-shot parsers."""

    template: dict[str, Any]
    streaming: tuple[Make, Make, Make]
    one_shot: tuple[Callable[[str, str], Any], ...]


@contextlib.contextmanager
def engines_for(template: dict[str, Any], code: str | None = None, name: str = "fuzz_parser") -> Iterator[Engines]:
    """The three engines of `template`, whose module is `code` (compiled here when not given)."""
    code = rtcompile.compile_template(template) if code is None else code
    loaded = rtcompile.load_template(template)
    with _loaded(code, name) as module:
        yield Engines(
            template,
            (
                lambda prefix, tools: module.ResponseParser(prefix, tools=tools),
                lambda prefix, tools: rtcompile.ResponseParser(loaded, prefix, tools=tools),
                lambda prefix, tools: reference.ResponseParser(template, prefix=prefix, tools=tools),
            ),
            (
                lambda text, prefix: module.parse_response(text, prefix=prefix),
                lambda text, prefix: rtcompile.parse_response(text, loaded, prefix=prefix),
                lambda text, prefix: reference.parse_response(text, template, prefix=prefix),
            ),
        )


def check_text(engines: Engines, prefix: str, text: str, tally: Tally) -> None:
    """Run `text` through the three engines in one chunk, under every 2-way split, one character at a
    time and in one `parse_response` call; what they disagree on goes to `tally.divergences`. A text
    on which all three run away (see `RUN_SECONDS`) is not run further."""
    chunkings: list[list[str] | None] = [[text], *[[text[:i], text[i:]] for i in range(len(text) + 1)], list(text)]
    with _watchdog():
        for chunks in [*chunkings, None]:  # None: one-shot
            runs: list[Callable[[], Any]]
            if chunks is None:
                runs = [functools.partial(_one_shot, parse, text, prefix) for parse in engines.one_shot]
            else:
                runs = [functools.partial(observe, make, prefix, chunks) for make in engines.streaming]
            records = _run_all(runs)
            _compare(tally, engines.template, prefix, text, chunks, records)
            if records == [RUNAWAY] * len(records):
                return


def divergences(template: dict[str, Any], prefix: str, texts: list[str]) -> list[str]:
    """Every run of `texts` (see `check_text`) on which the three engines disagree, described."""
    tally = Tally()
    with _quiet(), engines_for(template) as engines:
        for text in texts:
            check_text(engines, prefix, text, tally)
    return [divergence.describe() for divergence in tally.divergences]


def check_case(case: Case, rng: random.Random, tally: Tally, streams: int) -> None:
    """Compile `case.template` and compare the three engines on `streams` random streams."""
    template = case.template
    try:
        code = rtcompile.compile_template(template)
    except rtcompile.TemplateError as error:
        if not error.path:
            tally.compiler_exceptions.append((template, f"unlocated TemplateError: {error}"))
        tally.refused += 1
        return
    except Exception as exc:  # noqa: BLE001 - the compiler must never raise anything else
        tally.compiler_exceptions.append((template, f"{type(exc).__name__}: {exc}"))
        return
    with engines_for(template, code) as engines:
        texts = _template_texts(template, rng)
        for _ in range(streams):
            text = random_stream(rng, texts)
            check_text(engines, random_prefix(rng, template, texts), text, tally)


def _compare(
    tally: Tally, template: dict[str, Any], prefix: str, text: str, chunks: list[str] | None, records: list[Any]
) -> None:
    tally.runs += 1
    compiled, interpreted, expected = records
    if expected == RUNAWAY:
        tally.runaways += 1
    if compiled != interpreted or not agrees_with_reference(interpreted, expected):
        tally.divergences.append(Divergence(template, prefix, text, chunks, compiled, interpreted, expected))


class _Runaway(BaseException):
    """A run stopped by the watchdog (a BaseException, so that `observe` records it as nothing of its own)."""


# The reference loops for ever on some templates (a zero-width open and a zero-width close that match
# at one position reopen the region without end), and so, being exact, do our engines: a watchdog
# stops a run that takes longer than this, or grows the process this much. A run takes milliseconds;
# where only some engines ran away, those run again with the longer limit before the run counts as a
# divergence (a loaded machine can stall a process for a while).
RUN_SECONDS = 1.0
RETRY_SECONDS = 30.0
RUN_MEGABYTES = 300
RUNAWAY = Raised("run", "Runaway", "stopped: still running after the watchdog's time or memory budget")
_WATCHDOG_TICK = 0.05
_deadline = math.inf  # (time.monotonic()) when the run under way is stopped
_memory_limit: int | None = None  # and above what resident size, in MB


def _watch(signum: int, frame: Any) -> None:
    if time.monotonic() > _deadline or (_memory_limit is not None and (_resident_megabytes() or 0) > _memory_limit):
        raise _Runaway


@contextlib.contextmanager
def _watchdog() -> Iterator[None]:
    """A timer that checks the run under way between bytecodes (see `_bounded`); without SIGALRM,
    nothing is stopped."""
    global _memory_limit
    if not hasattr(signal, "setitimer"):
        yield
        return
    resident = _resident_megabytes()
    _memory_limit = None if resident is None else resident + RUN_MEGABYTES
    previous = signal.signal(signal.SIGALRM, _watch)
    signal.setitimer(signal.ITIMER_REAL, _WATCHDOG_TICK, _WATCHDOG_TICK)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _resident_megabytes() -> int | None:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * 4096 // 2**20
    except OSError:  # not Linux: time alone stops runs
        return None


def _bounded(run: Callable[[], Any], seconds: float = RUN_SECONDS) -> Any:
    """`run()`, or `RUNAWAY` if the watchdog stopped it (the deadline is cleared inside the `try`, so
    a stop that lands while the run returns is still caught here)."""
    global _deadline
    try:
        _deadline = time.monotonic() + seconds
        try:
            return run()
        finally:
            _deadline = math.inf
    except _Runaway:
        return RUNAWAY


def _run_all(runs: list[Callable[[], Any]]) -> list[Any]:
    """Each engine's record of one run (see `RETRY_SECONDS`)."""
    records = [_bounded(run) for run in runs]
    if RUNAWAY in records and any(record != RUNAWAY for record in records):
        pairs = zip(runs, records, strict=True)
        records = [_bounded(run, RETRY_SECONDS) if record == RUNAWAY else record for run, record in pairs]
    return records


def fuzz(
    seed: int,
    accepted: int,
    *,
    streams: int = 3,
    jobs: int = 1,
    progress: Callable[[Tally], None] | None = None,
) -> Tally:
    """Draw random templates until `accepted` of them are ones the reference accepts, and run each on
    `streams` random streams, in `jobs` processes. Deterministic for a `seed`, whatever `jobs` is."""
    tally = Tally()
    cases = itertools.islice(_accepted_cases(seed), accepted)
    check = functools.partial(_check_alone, streams=streams)
    with contextlib.ExitStack() as stack:
        stack.enter_context(_quiet())
        if jobs > 1:
            pool = stack.enter_context(multiprocessing.get_context("fork").Pool(jobs))
            results: Iterator[Tally] = pool.imap(check, cases, chunksize=4)
        else:
            results = map(check, cases)
        for part in results:
            tally.add(part)
            if progress is not None:
                progress(tally)
    return tally


def _accepted_cases(seed: int) -> Iterator[tuple[Case, int, int]]:
    """The random cases the reference accepts, each with the seed of its own generator (what one case
    draws never shifts the cases after it) and how many cases were drawn up to it."""
    rng = random.Random(seed)
    tried = 0
    while True:
        case = random_case(rng)
        tried += 1
        if accepted_by_reference(case.template):
            yield case, rng.getrandbits(64), tried


def _check_alone(item: tuple[Case, int, int], streams: int) -> Tally:
    """One accepted case checked on its own: its tally."""
    case, case_seed, tried = item
    tally = Tally(tried=tried, accepted=1, by_position={case.position: 1})
    with _quiet():
        check_case(case, random.Random(case_seed), tally, streams)
    return tally


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Without the warnings and log lines that prompts lacking the start anchor cause in every engine."""
    logger = logging.getLogger("transformers")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


def fuzz_templates(seed: int, count: int) -> Iterator[Case]:
    """The random templates the fuzzer would try for `seed` (accepted by the reference or not)."""
    rng = random.Random(seed)
    for _ in range(count):
        yield random_case(rng)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.regex_fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--templates", type=int, default=20000, help="templates the reference accepts to run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--streams", type=int, default=3, help="random streams per template")
    parser.add_argument("--jobs", type=int, default=1, help="processes (the results do not depend on it)")
    parser.add_argument("--show", type=int, default=5, help="divergences to print in full")
    args = parser.parse_args(argv)
    started = time.monotonic()

    def progress(tally: Tally) -> None:
        if tally.accepted % 500 == 0:
            print(f"[{time.monotonic() - started:7.0f} s] {tally.summary()}", flush=True)

    tally = fuzz(args.seed, args.templates, streams=args.streams, jobs=args.jobs, progress=progress)
    print(f"seed {args.seed}: {tally.summary()}")
    for divergence in tally.divergences[: args.show]:
        print("divergence:\n" + divergence.describe())
    for template, error in tally.compiler_exceptions:
        print(f"compiler exception: {error}\n  template={template!r}")
    return 0 if not (tally.divergences or tally.compiler_exceptions) else 1


if __name__ == "__main__":
    sys.exit(main())
