"""Regenerate templates/GALLERY.md, the one-page overview of the bundled response templates.

Everything on the page is read from the files it describes: the templates (templates/*.json), their
recorded cases (tests/data/<model>/cases.json) and the Models table of templates/README.md, which
says which templates one section groups and what each row covers. Per template it shows the prompt
ending the template expects (its start anchor, and what the recorded prompts add after the anchor's
last match, found the way the parser finds it), the fields it produces, and one recorded output with
the message transformers 5.24.0 makes of it.

Usage: python -m tools.gen_gallery   (writes templates/GALLERY.md)
tests/test_gallery.py checks that the committed page is what this writes.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rtcompile
from rtcompile.backends.interpreter import anchor_pattern
from rtcompile.errors import TemplateWarning
from rtcompile.runtime.program import after_last_anchor

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
DATA = ROOT / "tests" / "data"
README = TEMPLATES / "README.md"
GALLERY = TEMPLATES / "GALLERY.md"

# The model family of each template (the vendor's model line: versions and variants of one line share
# a family). This is the only hand-written table here; a template missing from it stops the generator.
FAMILIES: Mapping[str, str] = {
    "apertus": "Apertus",
    "cohere_command_a": "Command (Cohere)",
    "deepseek_r1": "DeepSeek",
    "deepseek_v3": "DeepSeek",
    "deepseek_v3_1": "DeepSeek",
    "deepseek_v3_2": "DeepSeek",
    "deepseek_v4": "DeepSeek",
    "ernie4_5": "ERNIE",
    "exaone4": "EXAONE",
    "functiongemma": "Gemma",
    "gemma4": "Gemma",
    "gigachat3": "GigaChat",
    "glm4_5": "GLM",
    "glm4_7": "GLM",
    "gpt_oss": "gpt-oss",
    "granite3": "Granite",
    "granite4": "Granite",
    "granite_20b_fc": "Granite",
    "hermes2_pro": "Hermes",
    "hunyuan_a13b": "Hunyuan",
    "internlm2": "InternLM / Intern-S1",
    "jamba": "Jamba",
    "kimi_k2": "Kimi",
    "kimi_k2_5": "Kimi",
    "kimi_k3": "Kimi",
    "lfm2": "LFM",
    "ling": "Ling / Ring",
    "llama3_1": "Llama",
    "llama3_2": "Llama",
    "llama3_3": "Llama",
    "llama4": "Llama",
    "llama_nemotron_nano_v2": "Nemotron",
    "longcat": "LongCat",
    "magistral": "Mistral",
    "mimo": "MiMo",
    "minicpm": "MiniCPM",
    "minicpm5": "MiniCPM",
    "minimax_m1": "MiniMax",
    "minimax_m2": "MiniMax",
    "minimax_m3": "MiniMax",
    "mistral_pre_v11": "Mistral",
    "mistral_v11": "Mistral",
    "nemotron": "Nemotron",
    "olmo3": "OLMo",
    "phi4_mini": "Phi",
    "phi4_reasoning": "Phi",
    "qwen2_5_coder": "Qwen",
    "qwen3": "Qwen",
    "qwen3_coder": "Qwen",
    "seed_oss": "Seed",
    "smollm3": "SmolLM",
    "step3": "Step",
    "xlam": "xLAM",
}

# Example outputs longer than this are shown as their first and last characters.
MAX_EXAMPLE_CHARS = 1500
EXAMPLE_HEAD_CHARS = 1000
EXAMPLE_TAIL_CHARS = 400
# Prompt endings longer than this are shortened in the tables (the full text is in the case file).
MAX_PROMPT_ENDING_CHARS = 120


# --------------------------------------------------------------------------- inputs


class GalleryError(Exception):
    """The inputs disagree (a template without a family or a README row); the message says what to fix."""


@dataclass(frozen=True)
class Model:
    name: str
    spec: Mapping[str, Any]  # the "response_template" dict, as written
    template: rtcompile.Template
    cases: Sequence[Mapping[str, Any]]

    @property
    def family(self) -> str:
        try:
            return FAMILIES[self.name]
        except KeyError:
            raise GalleryError(f"templates/{self.name}.json has no family: add it to FAMILIES in {__name__}") from None

    @property
    def field_names(self) -> list[str]:
        return list(self.spec["fields"])

    def after_anchor(self, case: Mapping[str, Any]) -> str | None:
        """What the case's prompt holds after the last match of the start anchor (None: no match)."""
        return after_last_anchor(anchor_pattern(self.template), case["prefix"])


@dataclass(frozen=True)
class ReadmeRow:
    """One row of the Models table: the templates it names and, in parentheses, the models it covers."""

    models: tuple[str, ...]
    covers: str | None


def load_models() -> list[Model]:
    models = []
    for path in sorted(TEMPLATES.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        with warnings.catch_warnings():
            # The lint's portability warnings are documented in templates/README.md; they change nothing here.
            warnings.simplefilter("ignore", TemplateWarning)
            template = rtcompile.load_template(path)
        cases_path = DATA / path.stem / "cases.json"
        cases = json.loads(cases_path.read_text(encoding="utf-8")) if cases_path.exists() else []
        models.append(Model(path.stem, document["response_template"], template, cases))
    return models


def readme_sections(readme: str) -> dict[str, list[str]]:
    """The lines of each `## ` section of templates/README.md, by heading."""
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in readme.splitlines():
        if line.startswith("## "):
            current = sections.setdefault(line[3:].strip(), [])
        else:
            current.append(line)
    return sections


def first_cells(lines: Iterable[str]) -> list[str]:
    """The first cell of every body row of the Markdown tables in `lines` (not the header rows)."""

    def is_separator(line: str) -> bool:
        return line.startswith("|") and set(line) <= set("|-: ")

    lines = list(lines)
    cells = []
    for line, following in zip(lines, [*lines[1:], ""], strict=True):
        if line.startswith("| ") and not is_separator(line) and not is_separator(following):
            cells.append(re.split(r"(?<!\\)\|", line)[1].strip())
    return cells


def models_table(readme: str, known: Iterable[str]) -> list[ReadmeRow]:
    """The Models table's rows: the templates a row names come before its parenthesis."""
    known = set(known)
    rows = []
    for cell in first_cells(readme_sections(readme).get("Models", [])):
        names_part, _, covers = cell.partition(" (")
        names = tuple(name for name in re.findall(r"`([^`]+)`", names_part) if name in known)
        if names:
            rows.append(ReadmeRow(names, covers[:-1] if covers.endswith(")") else None))
    return rows


def readme_mentions(readme: str, known: Iterable[str]) -> dict[str, set[str]]:
    """For each README section other than Models: the templates its tables' first cells name."""
    known = set(known)
    mentions: dict[str, set[str]] = {}
    for heading, lines in readme_sections(readme).items():
        if heading == "Models":
            continue
        for cell in first_cells(lines):
            for word in re.findall(r"`([^`]+)`", cell):
                name = word.removesuffix(".json")
                if name in known:
                    mentions.setdefault(heading, set()).add(name)
    return mentions


# --------------------------------------------------------------------------- Markdown


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.lower())
    return text.replace(" ", "-")


def visible(text: str, *, literal: bool) -> str:
    """`text` with every control or invisible character written as an escape (`\\n`, `\\t`, `\\u200b`).

    For literal text (`literal=True`) a backslash is doubled, so that `\\n` always means a newline;
    regex patterns keep their backslashes, where `\\n` means a newline already.
    """
    out = []
    for char in text:
        if char == "\\" and literal:
            out.append("\\\\")
        elif char in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[char])
        elif _invisible(char):
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return "".join(out)


def _invisible(char: str) -> bool:
    return char != " " and unicodedata.category(char) in {"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"}


def code(text: str) -> str:
    """An inline code span holding `text` exactly (the fence is longer than any backtick run inside)."""
    if not text:
        return "*(empty)*"
    fence = "`" * (_longest_run(text, "`") + 1)
    # CommonMark strips one space on each side when both are there; pad when the text would lose or merge.
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _longest_run(text: str, char: str) -> int:
    return max((len(run) for run in re.findall(f"{re.escape(char)}+", text)), default=0)


def fenced(body: str, info: str) -> list[str]:
    """A fenced code block; the fence is longer than any backtick run in `body`."""
    fence = "`" * max(3, _longest_run(body, "`") + 1)
    return [f"{fence}{info}", *body.split("\n"), fence]


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A GFM table. Every `|` in a cell is escaped, inside code spans too (GFM splits cells first)."""

    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return [row(header), "| " + " | ".join("---" for _ in header) + " |", *map(row, rows)]


# In raw model output (a fenced block, where escapes would be read as the text itself) newlines stay
# line breaks, marked with ↵ so that blank and trailing lines show; these marks are escaped if the
# text itself contains them.
NEWLINE_MARK = "↵"
TRAILING_SPACE_MARK = "␣"
_MARKS = {NEWLINE_MARK, TRAILING_SPACE_MARK, "⟨"}


def raw_block_text(text: str) -> str:
    """Model output for a fenced block: ↵ ends each line, ␣ is a space at a line's end, ⟨U+XXXX⟩ the rest."""
    lines = []
    for line in text.split("\n"):
        shown = "".join(f"⟨U+{ord(c):04X}⟩" if _invisible(c) or c in _MARKS else c for c in line)
        stripped = shown.rstrip(" ")
        lines.append(stripped + TRAILING_SPACE_MARK * (len(shown) - len(stripped)))
    return f"{NEWLINE_MARK}\n".join(lines)


def shortened_example(text: str) -> str:
    """`text`, or its first and last characters around a marker line when it is very long."""
    if len(text) <= MAX_EXAMPLE_CHARS:
        return raw_block_text(text)
    omitted = len(text) - EXAMPLE_HEAD_CHARS - EXAMPLE_TAIL_CHARS
    head, tail = text[:EXAMPLE_HEAD_CHARS], text[-EXAMPLE_TAIL_CHARS:]
    # The marker is a line of its own: not ending in ↵, it cannot be mistaken for part of the text.
    return f"{raw_block_text(head)}\n[… {omitted:,} characters omitted …]\n{raw_block_text(tail)}"


def prompt_ending(text: str) -> str:
    if not text:
        return "*(nothing)*"
    if len(text) <= MAX_PROMPT_ENDING_CHARS:
        return code(visible(text, literal=True))
    head = MAX_PROMPT_ENDING_CHARS * 2 // 3
    tail = MAX_PROMPT_ENDING_CHARS - head
    return (
        f"{code(visible(text[:head], literal=True))} … {code(visible(text[-tail:], literal=True))}"
        f" ({len(text):,} characters)"
    )


# --------------------------------------------------------------------------- one template


def delimiter(spec: Mapping[str, Any], literal_key: str, pattern_key: str) -> str:
    """A field's open or close delimiter, compactly: its literals, or `regex` and the pattern."""
    if pattern_key in spec:
        return "regex " + code(visible(spec[pattern_key], literal=False))
    value = spec.get(literal_key)
    if value is None:
        return "—"
    literals = [value] if isinstance(value, str) else list(value)
    return ", ".join(code(visible(literal, literal=True)) for literal in literals)


def content_parser(spec: Mapping[str, Any]) -> str:
    shown = code(spec.get("content", "text"))
    for key, value in spec.get("content_args", {}).items():
        text = visible(value, literal=False) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        shown += f"; {code(key)} {code(text)}"
    return shown


def repetition(spec: Mapping[str, Any]) -> str:
    if spec.get("transform_each"):
        return "one region, a list (`transform_each`)"
    if not spec.get("repeats"):
        return "once"
    if "join" not in spec:
        return "repeats, a list"
    return "repeats, joined with " + code(json.dumps(spec["join"], ensure_ascii=False))


def fields_table(model: Model) -> list[str]:
    rows = []
    for name, spec in model.spec["fields"].items():
        implicit = "open" not in spec and "open_pattern" not in spec
        opener = "*(implicit)*" if implicit else delimiter(spec, "open", "open_pattern")
        rows.append(
            [code(name), opener, delimiter(spec, "close", "close_pattern"), content_parser(spec), repetition(spec)]
        )
    return table(["field", "open", "close", "content", "repeats / join"], rows)


def anchor_sentence(model: Model) -> str:
    spec = model.spec
    if "start_anchor_pattern" in spec:
        return "Start anchor (a regex): " + code(visible(spec["start_anchor_pattern"], literal=False)) + "."
    anchor = spec["start_anchor"]
    literals = [anchor] if isinstance(anchor, str) else list(anchor)
    shown = ", ".join(code(visible(literal, literal=True)) for literal in literals)
    if len(literals) == 1:
        return f"Start anchor: {shown}."
    return f"Start anchor, any of: {shown} (the parser keeps what follows the last match of any of them)."


def prompt_endings_table(model: Model) -> list[str]:
    endings = Counter(model.after_anchor(case) for case in model.cases)
    ordered = sorted(endings.items(), key=lambda item: (-item[1], item[0] is None, item[0] or ""))
    rows = [
        ["*(the anchor does not occur)*" if text is None else prompt_ending(text), str(count)]
        for text, count in ordered
    ]
    return table(["after the anchor", "cases"], rows)


def produced_fields(model: Model, case: Mapping[str, Any]) -> list[str]:
    """The keys of the case's message that come from regions (not from `defaults`)."""
    return [key for key in case["expected"] if key not in model.spec.get("defaults", {})]


def is_error(case: Mapping[str, Any]) -> bool:
    return set(case["expected"]) == {"error"}


def example_case(model: Model) -> Mapping[str, Any] | None:
    """The recorded case with the most kinds of region; then the most values (parallel calls count
    each); then one that is not a documented limit (`limit_*`); then the first in the file."""

    def richness(indexed: tuple[int, Mapping[str, Any]]) -> tuple[int, int, bool, int]:
        index, case = indexed
        keys = produced_fields(model, case)
        values = sum(len(v) if isinstance(v := case["expected"][key], list) else 1 for key in keys)
        return (-len(keys), -values, case["name"].startswith("limit_"), index)

    candidates = [(i, case) for i, case in enumerate(model.cases) if not is_error(case)]
    return min(candidates, key=richness)[1] if candidates else None


def example(model: Model) -> list[str]:
    case = example_case(model)
    if case is None:
        return ["No recorded case parses without an error."]
    ending = model.after_anchor(case)
    where = "" if not ending else f"; the prompt adds {prompt_ending(ending)} after the anchor"
    tools = case.get("tools")
    typed = "" if not tools else f"; parsed with the case's `tools=` ({len(tools)} schema{'s' * (len(tools) > 1)})"
    return [
        f"**Example** (case {code(case['name'])}{where}{typed}):",
        "",
        *fenced(shortened_example(case["text"]), "text"),
        "",
        "parses to",
        "",
        *fenced(message_json(case["expected"]), "json"),
    ]


def message_json(message: Mapping[str, Any]) -> str:
    """The message as JSON, one key a line and one list item (a tool call) a line."""

    def compact(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    lines = []
    for key, value in message.items():
        if isinstance(value, list) and value:
            items = ",\n".join(f"    {compact(item)}" for item in value)
            lines.append(f"  {compact(key)}: [\n{items}\n  ]")
        else:
            lines.append(f"  {compact(key)}: {compact(value)}")
    return "{\n" + ",\n".join(lines) + "\n}" if lines else "{}"


def model_body(model: Model, mentions: Mapping[str, set[str]], same_as: Model | None = None) -> list[str]:
    errors = sum(map(is_error, model.cases))
    raised = f" ({errors} {'expects' if errors == 1 else 'expect'} an exception)" if errors else ""
    links = [f"[Models]({README.name}#models)"] + [
        f"[{heading}]({README.name}#{slug(heading)})" for heading, names in mentions.items() if model.name in names
    ]
    return [
        f"Family: {model.family}. Template: [`{model.name}.json`]({model.name}.json). Recorded cases:"
        f" {len(model.cases)} in [`tests/data/{model.name}/cases.json`](../tests/data/{model.name}/cases.json){raised}."
        f" In templates/README.md: {', '.join(links)}.",
        "",
        *([f"Its response template is identical to {code(same_as.name)}'s; the cases differ.", ""] if same_as else []),
        f"**Prompt ending.** {anchor_sentence(model)} After it, the recorded prompts add:",
        "",
        *prompt_endings_table(model),
        "",
        "**Fields.**",
        "",
        *fields_table(model),
        "",
        *example(model),
    ]


# --------------------------------------------------------------------------- the page


@dataclass(frozen=True)
class Section:
    models: tuple[Model, ...]
    covers: str | None

    @property
    def heading(self) -> str:
        return ", ".join(model.name for model in self.models)

    def sort_key(self) -> tuple[str, str]:
        return (self.models[0].family.lower(), self.models[0].name)


def sections(models: Sequence[Model], readme: str) -> list[Section]:
    by_name = {model.name: model for model in models}
    rows = models_table(readme, by_name)
    listed = [name for row in rows for name in row.models]
    missing = sorted(set(by_name) - set(listed))
    if missing:
        raise GalleryError(f"templates/README.md's Models table names no row for {', '.join(missing)}")
    twice = sorted(name for name, count in Counter(listed).items() if count > 1)
    if twice:
        raise GalleryError(f"templates/README.md's Models table names {', '.join(twice)} in more than one row")
    found = [Section(tuple(by_name[name] for name in row.models), row.covers) for row in rows]
    return sorted(found, key=Section.sort_key)


def render_gallery(models: Sequence[Model] | None = None, readme: str | None = None) -> str:
    """The text of templates/GALLERY.md."""
    models = load_models() if models is None else models
    readme = README.read_text(encoding="utf-8") if readme is None else readme
    page_sections = sections(models, readme)
    mentions = readme_mentions(readme, (model.name for model in models))
    ordered = [model for section in page_sections for model in section.models]
    families = {model.family for model in models}
    lines = [
        "# Template gallery",
        "",
        "<!-- Generated by `python -m tools.gen_gallery` from templates/*.json, tests/data/*/cases.json and"
        " templates/README.md; do not edit by hand. -->",
        "",
        f"The {len(models)} bundled response templates ({len(families)} model families,"
        f" {sum(len(model.cases) for model in models)} recorded cases), one section each; templates that"
        " one row of [README.md](README.md#models) covers together share a section. For each: the prompt"
        " ending it expects (the `start_anchor`, and what the recorded prompts add after its last match,"
        " which the parser reads as part of the message), its fields, and one recorded output (the case with"
        " the most kinds of region) with the message transformers 5.24.0 parses from it. Where each format"
        " comes from and what the templates cannot express is in [README.md](README.md).",
        "",
        "Notation: in `code`, `\\n`, `\\t`, `\\r` and `\\uXXXX` stand for a newline, a tab, a carriage"
        " return and other invisible characters, and `\\\\` for a backslash in a literal; a delimiter marked"
        " *regex* is a pattern in the `regex` module's syntax, the others are literal strings (a list: any"
        " of them); the *implicit* field has no open delimiter and takes the text outside the other regions."
        f" In example outputs {NEWLINE_MARK} ends each line of the raw text, {TRAILING_SPACE_MARK}"
        " is a space at the end of a line and `⟨U+XXXX⟩` any other invisible character.",
        "",
        "## Contents",
        "",
        *table(
            ["model", "family", "fields", "cases"],
            (
                [
                    f"[{model.name}](#{slug(model.name)})",
                    model.family,
                    ", ".join(code(name) for name in model.field_names),
                    str(len(model.cases)),
                ]
                for section in page_sections
                for model in section.models
            ),
        ),
    ]
    assert len(ordered) == len(models)
    for section in page_sections:
        lines += ["", f"## {section.heading}", ""]
        if section.covers:
            lines += [f"Covers: {section.covers}.", ""]
        if len(section.models) == 1:
            lines += model_body(section.models[0], mentions)
            continue
        for index, model in enumerate(section.models):
            same_as = next((other for other in section.models[:index] if other.spec == model.spec), None)
            lines += [f"### {model.name}", "", *model_body(model, mentions, same_as), ""]
        lines.pop()
    return "\n".join(lines) + "\n"


def main() -> None:
    try:
        page = render_gallery()
    except GalleryError as error:
        sys.exit(f"gen_gallery: {error}")
    GALLERY.write_text(page, encoding="utf-8")
    print(f"wrote {GALLERY.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
