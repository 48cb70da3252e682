"""Every construct `regex` accepts compiles, in every position a template can use a pattern, into a
module equal to the interpreter and to transformers.

Each construct is tried as a reasoning open, a reasoning close, the start anchor and an xml-inline
`tag_pattern`. A module either matches the pattern with stdlib `re` or, where no exact translation is
known, imports `regex` for it (and says so in `REQUIRES`); never is a template refused that the
reference accepts. Every module is then compared on streams built around the construct's sample
matches and near misses: one shot, every two-way split, one character at a time, random chunkings.
`NEEDS_REGEX` records where a construct still needs `regex`; everywhere else it must be stdlib-only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest
import regex
import transformers.utils.chat_parsing as reference

import rtcompile
from rtcompile.tooling.observe import agrees_with_reference, identical
from tests.support.compiled import compiled_engine, compiled_module
from tests.support.differential import interpreter_engine, observe, one_shot, reference_engine, two_way_splits

pytestmark = pytest.mark.slow  # every case compiles and imports a module


@dataclass(frozen=True)
class Construct:
    name: str
    pattern: str
    samples: tuple[str, ...]  # texts the pattern matches (a near miss is made from each by truncating it)


CONSTRUCTS = [
    Construct("backreference (numbered)", r"<(t)\1>", ("<tt>",)),
    Construct("backreference (named)", r"<(?P<a>t)(?P=a)>", ("<tt>",)),
    Construct("backreference (\\g<name>)", r"<(?P<a>t)\g<a>>", ("<tt>",)),
    Construct("lazy class repeat", r"<t[^>]*?>", ("<t>", "<tab>")),
    Construct("lazy digit repeat", r"<t\d+?>", ("<t12>",)),
    Construct("lazy space repeat", r"<t\s*?>", ("<t >", "<t>")),
    Construct("lazy repeat ending the pattern", r"<t>\s*?", ("<t> ", "<t>")),
    Construct("lookahead then more", r"<(?=t)t>", ("<t>",)),
    Construct("negative lookahead then more", r"<t(?!x)>", ("<t>",)),
    Construct("tail variable lookahead", r"<t>(?=[\s\S]*?</t>)", ("<t>x</t>",)),
    Construct("variable lookahead close", r"\n(?=\n|$)", ("\n\n",)),
    Construct("(?u) flag", r"(?u)<t>", ("<t>",)),
    Construct("(?a) flag", r"(?a)<t\w>", ("<ta>",)),
    Construct("(?V1) flag", r"(?V1)<t>", ("<t>",)),
    Construct("(?f) flag", r"(?fi)<t>", ("<T>",)),
    Construct("(?f) flag without (?i)", r"(?f)<t>", ("<t>",)),
    Construct("(?w) flag", r"(?w)<t\b>", ("<t>",)),
    Construct("(?b) flag", r"(?b)<t>", ("<t>",)),
    Construct("(?e) flag", r"(?e)<t>", ("<t>",)),
    Construct("(?p) flag", r"(?p)<t+>", ("<tt>",)),
    Construct("(?r) flag", r"(?r)<t>", ("<t>",)),
    Construct("atomic group", r"<(?>t+)>", ("<tt>",)),
    Construct("possessive repeat", r"<t++>", ("<tt>",)),
    Construct("POSIX class", r"<[[:alpha:]]+>", ("<ab>",)),
    Construct("\\p{L}", r"<\p{L}+>", ("<aé>",)),
    Construct("\\P{L}", r"<\P{L}>", ("<1>",)),
    Construct("\\R", r"<t>\R", ("<t>\r\n", "<t>\n")),
    Construct("\\K", r"x\K<t>", ("x<t>",)),
    Construct("\\G", r"\G<t>", ("<t>",)),
    Construct("branch reset", r"(?|<(t)>|\[(t)\])", ("<t>", "[t]")),
    Construct("fuzzy matching", r"(?:<tt>){e<=1}", ("<tt>", "<t>")),
    Construct("duplicate group name", r"(?P<n><t>)|(?P<n>\[t\])", ("<t>", "[t]")),
    Construct(
        "duplicate names, two orders", r"<c>to=(?P<name>\w+)<m>|to=(?P<name>\w+)<c><m>", ("<c>to=f<m>", "to=g<c><m>")
    ),
    Construct("(?V1) set operation", r"(?V1)<[[a-z]--[q]]>", ("<a>",)),
    Construct("group call", r"<(t(?1)?)>", ("<tt>",)),
    Construct("recursion", r"<(?:t|\((?R)\))>", ("<t>",)),
    Construct("\\X", r"<\X>", ("<e\u0301>",)),
    Construct("\\m word start", r"\m<t>", ("<t>",)),
    Construct("\\M word end", r"<t\M>", ("<t>",)),
    Construct("\\h", r"<\h>", ("< >",)),
    Construct("control verb", r"<t(*SKIP)(*FAIL)|<u>", ("<u>",)),
    Construct("conditional", r"<(t)?(?(1)a|b)>", ("<ta>", "<b>")),
    Construct("alternation of negated sets", r"<[^a]|[^b]>", ("<x", "y>")),
    Construct("nested repeat", r"<(a+)+>", ("<aa>",)),
    Construct("long literal", "<" + "x" * 3000 + ">", ("<" + "x" * 3000 + ">",)),
    # Too long for a stdlib prefix pattern ("pattern too complex"): searched as a literal.
    Construct("10,000-character literal", "<" + "y" * 10000 + ">", ("<" + "y" * 10000 + ">",)),
]

POSITIONS = ("open", "close", "anchor", "tag_pattern")
DELIMITERS = ("open", "close")

# Where each construct still needs the `regex` module (everything else must compile stdlib-only):
# constructs `re` has no equivalent for, everywhere; partial matching `regex`'s way, in delimiters only.
NEEDS_REGEX: dict[str, tuple[str, ...]] = {
    "(?a) flag": POSITIONS,
    "(?V1) flag": POSITIONS,
    "(?f) flag": POSITIONS,
    "(?w) flag": POSITIONS,
    "(?p) flag": POSITIONS,
    "(?r) flag": POSITIONS,
    "\\K": POSITIONS,
    "\\G": POSITIONS,
    "branch reset": POSITIONS,
    "fuzzy matching": POSITIONS,
    "(?V1) set operation": POSITIONS,
    "group call": POSITIONS,
    "recursion": POSITIONS,
    "\\X": POSITIONS,
    "control verb": POSITIONS,
    "conditional": POSITIONS,
    "backreference (numbered)": DELIMITERS,
    "backreference (named)": DELIMITERS,
    "backreference (\\g<name>)": DELIMITERS,
    "lazy class repeat": DELIMITERS,
    "lazy digit repeat": DELIMITERS,
    "lazy space repeat": DELIMITERS,
    "lookahead then more": DELIMITERS,
    "negative lookahead then more": DELIMITERS,
    "atomic group": DELIMITERS,
    "possessive repeat": DELIMITERS,
    "\\R": DELIMITERS,
    "duplicate group name": ("tag_pattern",),
    "duplicate names, two orders": ("tag_pattern",),
    # Inside a tag_pattern it sits beside the key and value repeats: a tree over the backtracking
    # analysis's size limit cannot be proven linear on stdlib re, so it is matched with regex.
    "10,000-character literal": ("tag_pattern",),
}


def template_for(construct: Construct, position: str) -> dict[str, Any]:
    pattern = construct.pattern
    reasoning: dict[str, Any] = {"open": "<r>", "close": "</r>"}
    anchor: dict[str, Any] = {"start_anchor": "<A>"}
    content: dict[str, Any] = {}
    names = sorted(regex.compile(pattern, regex.DOTALL).groupindex)
    # The reference surfaces a delimiter's named captures only through a transform, and requires one.
    transform = {"transform": {"body": "{content}", **{name: f"{{{name}}}" for name in names}}} if names else {}
    if position == "open":
        reasoning = {"open_pattern": pattern, "close": "</r>", **transform}
    elif position == "close":
        reasoning = {"open": "<r>", "close_pattern": pattern, **transform}
    elif position == "anchor":
        anchor = {"start_anchor_pattern": pattern}
    else:
        tag = f"(?:{pattern})(?P<key>[a-z]+)=(?P<value>[^;]*);"
        content = {"content": "xml-inline", "content_args": {"tag_pattern": tag}}
    return {**anchor, "fields": {"reasoning_content": reasoning, "content": content}}


def texts_for(construct: Construct, position: str) -> list[str]:
    texts = []
    for sample in construct.samples:
        miss = sample[:-1]
        if position == "open":
            texts += [f"a{sample}why</r>answer", f"{miss}</r>x", f"{sample}"]
        elif position == "close":
            texts += [f"<r>why{sample}answer", f"<r>{miss}x", f"<r>a{sample}"]
        elif position == "anchor":
            texts += [f"<r>why</r>answer{sample}"]
        else:
            texts += [f"{sample}k=v;{sample}j=w;", f"{miss}k=v;"]
    return texts


def prefix_for(construct: Construct, position: str) -> str:
    if position != "anchor":
        return "junk<A>"
    return f"junk{construct.samples[0]}<r>pre"


def _accepted_by_reference(construct: Construct, position: str) -> bool:
    try:
        reference.ResponseParser(template_for(construct, position), prefix=prefix_for(construct, position))
    except Exception:  # noqa: BLE001 - anything the reference rejects is not ours to compile
        return False
    return True


CASES = [(c, p) for c in CONSTRUCTS for p in POSITIONS]


# A text longer than this is not compared at every 2-way split nor one character at a time: on a 10 KB
# delimiter the reference and the interpreter take time quadratic in its length (about 40 s for each
# one-character stream). See test_a_long_literal_streams_one_character_at_a_time for the compiled module.
LONG_TEXT = 1000
LONG_TEXT_CHUNK = 97  # characters a chunk of a long text holds (a prime: chunks fall across the literal)


def _chunkings(text: str, rng: random.Random) -> list[list[str]]:
    if len(text) > LONG_TEXT:  # ends, a sample of cuts between, and chunks of LONG_TEXT_CHUNK characters
        cuts = sorted({*range(30), *range(len(text) - 30, len(text) + 1), *rng.sample(range(len(text)), 40)})
        chunked = [text[i : i + LONG_TEXT_CHUNK] for i in range(0, len(text), LONG_TEXT_CHUNK)]
        return [[text], *([text[:i], text[i:]] for i in cuts), chunked]
    chunkings = [[text], *two_way_splits(text), list(text)]
    for _ in range(4):
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(1, 4))))
        chunkings.append([text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)])
    return chunkings


@pytest.mark.parametrize(("construct", "position"), CASES, ids=[f"{c.name}-{p}" for c, p in CASES])
def test_construct_compiles_and_matches_interpreter_and_reference(construct: Construct, position: str) -> None:
    assert regex.compile(construct.pattern, regex.DOTALL) is not None
    template = template_for(construct, position)
    assert _accepted_by_reference(construct, position)
    compiled = rtcompile.compile_module(template)  # never refused: stdlib or the regex fallback
    module = compiled_module(template)
    assert module.REQUIRES == compiled.requires
    assert compiled.requires == (("regex",) if position in NEEDS_REGEX.get(construct.name, ()) else ())
    rng = random.Random(construct.name + position)
    prefix = prefix_for(construct, position)
    for text in texts_for(construct, position):
        ours = one_shot(lambda t, _template, **kw: module.parse_response(t, **kw), text, template, prefix)
        assert agrees_with_reference(ours, one_shot(reference.parse_response, text, template, prefix))
        assert ours == one_shot(rtcompile.parse_response, text, template, prefix)
        for chunks in _chunkings(text, rng):
            mine = observe(compiled_engine(template), prefix, chunks)
            assert identical(mine, observe(interpreter_engine(template), prefix, chunks)), chunks
            assert agrees_with_reference(mine, observe(reference_engine(template), prefix, chunks)), chunks


@pytest.mark.parametrize("position", ["open", "close"])
def test_a_long_literal_streams_one_character_at_a_time(position: str) -> None:
    """The compiled module holds a 10,000-character delimiter back one character at a time and ends
    with the reference's message (the interpreter and the reference are compared on coarser chunks
    above: one character at a time, they take time quadratic in the literal's length)."""
    (construct,) = [c for c in CONSTRUCTS if c.name == "10,000-character literal"]
    template = template_for(construct, position)
    prefix = prefix_for(construct, position)
    for text in texts_for(construct, position):
        streamed = observe(compiled_engine(template), prefix, list(text))
        # the message (the last of the record), or the exception, with the reference's one-shot outcome
        assert agrees_with_reference(streamed[-1], one_shot(reference.parse_response, text, template, prefix))


def _translator_constructs() -> set[str]:
    """Every construct name the translation can refuse with, read from its own tables."""
    from rtcompile.regex import escapes, stdlib

    names = {construct for construct, _low, _high in escapes._OPAQUE.values()}
    names |= set(stdlib._ASSERTION_CONSTRUCTS.values()) | set(stdlib._REASONS)
    names |= {"atomic group", "possessive quantifier", "branch reset group", "conditional group"}
    names |= {"duplicate group name", "lazy single-character repeat", "lookahead followed by more pattern"}
    names -= {"\\L named list"}  # needs named lists passed to regex.compile: the reference cannot load it
    return names


# Which construct of CONSTRUCTS exercises each name the translator reports.
EXERCISED_BY = {
    "\\K keep": "\\K",
    "\\X grapheme cluster": "\\X",
    "\\R line break": "\\R",
    "\\G search anchor": "\\G",
    "\\p{...} property": "\\p{L}",
    "POSIX character class": "POSIX class",
    "fuzzy matching": "fuzzy matching",
    "backreference": "backreference (numbered)",
    "control verb": "control verb",
    "recursion": "recursion",
    "group call": "group call",
    "atomic group": "atomic group",
    "possessive quantifier": "possessive repeat",
    "branch reset group": "branch reset",
    "conditional group": "conditional",
    "duplicate group name": "duplicate group name",
    "lazy single-character repeat": "lazy class repeat",
    "lookahead followed by more pattern": "lookahead then more",
}


def test_every_construct_the_translator_knows_is_exercised_in_every_position() -> None:
    assert _translator_constructs() == set(EXERCISED_BY)
    exercised = {c.name for c in CONSTRUCTS}
    assert set(EXERCISED_BY.values()) <= exercised
    flags = {c.name for c in CONSTRUCTS if c.name.startswith("(?") and c.name.endswith("flag")}
    assert {f"(?{letter}) flag" for letter in ["a", "b", "e", "f", "p", "r", "u", "w", "V1"]} <= flags
