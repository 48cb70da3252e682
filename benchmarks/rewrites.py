"""Each bundled template rewritten into forms nobody tuned rtcompile for, most of them equivalent.

A model's trainer may write the same template in many ways; rtcompile's speed should not depend on
which. `rewrites(model)` gives, where they change something, these rewrites of a bundled template:

* `regex`: every literal delimiter (start anchor included) as the regex the reference builds from it,
  in a `(?:...)` wrapper, with `(?i)` where its literals have no cased letter;
* `edges`: on top of `regex`, a leading `\\s*` on the closes and a trailing `\\s*` on the opens of
  fields whose content parser ignores surrounding whitespace, `|\\Z` on every close, and `|$` on the
  implicit field's close when its regions are joined;
* `lookahead closes`: on top of `regex`, a close literal that also closes the implicit field written
  as a lookahead, `(?=<|im_end|>)`, so that the implicit field's close consumes it;
* `lazy names`: a name capture `(?P<name>[^>\\n]+)>` made lazy where the character after it is outside
  its class, and a name between quotes matched by a back-reference, `(")(?P<name>[^"]+)\\1`;
* `lookahead open`: a reasoning open that only opens once its close is in sight,
  `<think>(?=[\\s\\S]*?</think>)` (not equivalent: an output cut off inside reasoning differs).

`Rewrite.equivalent` says whether the rewrite claims to give the original's message (or error) for
every output; tests/plan/test_unseen_templates.py checks the claim against transformers on every recorded
case of the template. The outputs to measure a rewrite on are its template's own (`RewriteWorkload`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import regex

from benchmarks.unseen_templates import as_pattern
from benchmarks.workloads import Workload

Template = dict[str, Any]
_FLAGS = re.compile(r"^\(\?[a-zA-Z]+\)")


@dataclass(frozen=True)
class Rewrite:
    base: str  # the bundled template's name
    kind: str
    template: Template
    equivalent: bool

    @property
    def model(self) -> str:
        return f"{self.base}~{self.kind.replace(' ', '-')}"


class RewriteWorkload(Workload):
    """The bundled template's workload (its recorded case, inflated), parsed with a rewrite of the template."""

    def __init__(self, rewrite: Rewrite) -> None:
        super().__init__(rewrite.base)
        self.model = rewrite.model
        self.template = rewrite.template
        self.rewrite = rewrite

    @property
    def constructs(self) -> tuple[str, ...]:
        return (self.rewrite.kind,)


def wrap(pattern: str, before: str = "", after: str = "") -> str:
    """`before(?:pattern)after`, with the pattern's leading global flags (`(?i)`) kept in front."""
    flags = _FLAGS.match(pattern)
    head = flags.group() if flags else ""
    return f"{head}{before}(?:{pattern[len(head) :]}){after}"


def _cased(literals: list[str]) -> bool:
    return any(c.lower() != c.upper() for literal in literals for c in literal)


def _literals(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def regex_form(template: Template) -> Template:
    """Every literal delimiter written as a pattern (see the module docstring)."""
    out = copy.deepcopy(template)
    for spec in [out, *out["fields"].values()]:
        for key in ("open", "close", "start_anchor"):
            if key in spec:
                literals = _literals(spec.pop(key))
                pattern = wrap(as_pattern(literals, False))
                spec[f"{key}_pattern"] = pattern if _cased(literals) else "(?i)" + pattern
    return out


def _implicit(template: Template) -> str | None:
    """The name of the implicit field (the one without an open delimiter), if any."""
    for name, spec in template["fields"].items():
        if "open" not in spec and "open_pattern" not in spec:
            return str(name)
    return None


def _ignores_whitespace(spec: dict[str, Any]) -> bool:
    """Whether the field's value is the same with whitespace added around its body: every content parser
    strips or skips it but `text` with `strip: false`."""
    return not (spec.get("content", "text") == "text" and spec.get("content_args", {}).get("strip") is False)


def edges(template: Template) -> Template:
    out = regex_form(template)
    implicit = _implicit(out)
    for name, spec in out["fields"].items():
        padded = _ignores_whitespace(spec)
        if "open_pattern" in spec and padded:
            spec["open_pattern"] = wrap(spec["open_pattern"], after=r"\s*")
        if "close_pattern" in spec:
            close = wrap(spec["close_pattern"], before=r"\s*" if padded else "")
            joined = name == implicit and "join" in spec
            spec["close_pattern"] = close + ("|$" if joined else r"|\Z")
    return out


def lookahead_closes(template: Template) -> Template:
    out = regex_form(template)
    implicit = _implicit(template)
    if implicit is None or "close" not in template["fields"][implicit]:
        return out
    ends = set(_literals(template["fields"][implicit]["close"]))
    for name, spec in template["fields"].items():
        if "close" not in spec or name == implicit:
            continue
        literals = sorted(dict.fromkeys(_literals(spec["close"])), key=len, reverse=True)
        if ends.isdisjoint(literals):
            continue
        written = [f"(?={re.escape(lit)})" if lit in ends else re.escape(lit) for lit in literals]
        out["fields"][name]["close_pattern"] = "|".join(written)
    return out


_NAME = re.compile(r"\(\?P<(\w+)>\[\^((?:\\.|[^\]\\])*)\]\+\)")
_QUOTED = '"(?P<name>[^"]+)"'


def lazy_names(template: Template) -> Template:
    out = copy.deepcopy(template)
    for spec in out["fields"].values():
        for key in ("open_pattern", "close_pattern"):
            if key in spec:
                spec[key] = _quote_backreference(_lazy(spec[key]))
    return out


def _lazy(pattern: str) -> str:
    """`(?P<n>[^X]+)c` -> `(?P<n>[^X]+?)c` where the literal character `c` is outside the class."""

    def lazier(m: re.Match[str]) -> str:
        after = regex.match(r"(?:\\.|[^\\()\[|?*+{])(?![?*+{])", pattern[m.end() :])
        if after is None:  # the capture ends the pattern, or what follows is not one character
            return m.group()
        follower = regex.compile(after.group())
        outside = [c for c in map(chr, range(0x80)) if follower.fullmatch(c)]
        if outside and all(regex.fullmatch(f"[^{m.group(2)}]", c) is None for c in outside):
            return m.group()[:-1] + "?)"
        return m.group()

    return _NAME.sub(lazier, pattern)


def _quote_backreference(pattern: str) -> str:
    """`"(?P<name>[^"]+)"` -> `(")(?P<name>[^"]+)\\N`, N the quote's group number."""
    at = pattern.find(_QUOTED)
    if at < 0:
        return pattern
    marked = pattern[:at] + '(?P<rtquote>")' + pattern[at + 1 : at + len(_QUOTED) - 1] + "(?P=rtquote)"
    marked += pattern[at + len(_QUOTED) :]
    number = regex.compile(marked).groupindex["rtquote"]
    return marked.replace('(?P<rtquote>")', '(")').replace("(?P=rtquote)", f"\\{number}")


def lookahead_open(template: Template) -> Template:
    out = copy.deepcopy(template)
    for spec in out["fields"].values():
        if spec.get("content", "text") == "text" and "open" in spec and "close" in spec:
            close = as_pattern(spec["close"], False)
            spec["open_pattern"] = wrap(as_pattern(spec.pop("open"), False), after=rf"(?=[\s\S]*?(?:{close}))")
    return out


KINDS: list[tuple[str, Callable[[Template], Template], bool]] = [
    ("regex", regex_form, True),
    ("edges", edges, True),
    ("lookahead closes", lookahead_closes, True),
    ("lazy names", lazy_names, True),
    ("lookahead open", lookahead_open, False),
]


def rewrites(model: str, template: Template) -> list[Rewrite]:
    """The rewrites of `template` (bundled as `model`) that change it, each different from the others."""
    found: list[Rewrite] = []
    seen = [template]
    for kind, rewrite, equivalent in KINDS:
        rewritten = rewrite(template)
        if all(rewritten != other for other in seen):
            seen.append(rewritten)
            found.append(Rewrite(model, kind, rewritten, equivalent))
    return found
