"""The response templates bundled with rtcompile, found by name (`rtcompile qwen3 -o qwen3_parser.py`).

The templates live in the repository's `templates/` directory. A wheel installs that directory as the
package data directory `rtcompile/bundled/` (pyproject maps it with `package-dir`, so the source tree
keeps one copy); a source checkout or an editable install reads `templates/` next to the package. The
two are told apart by looking, not by importing: setuptools' editable finder cannot import a mapped
directory that has no `__init__.py`.

What `rtcompile list` says about each template (family, source, what it covers) is read from the
Models table of `templates/README.md` when it is asked for, so a template added together with its row
needs no other step, and a template without a row is still listed and usable.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = [
    "BundledTemplate",
    "bundled_directory",
    "bundled_names",
    "bundled_path",
    "bundled_templates",
    "closest_names",
    "looks_like_name",
]

#: A bundled template's name is its file stem: lower-case letters, digits, `_`, `-` and `.`.
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_PACKAGE_DIR: Final = Path(__file__).resolve().parent.parent
_INDEX_FILE: Final = "README.md"
_MODELS_HEADING: Final = re.compile(r"^##\s+Models\s*$")


@dataclass(frozen=True)
class BundledTemplate:
    """One bundled template, with what templates/README.md says about it (empty where it has no row), and
    whether it carries its model's chat template (`render_prompt` works by its name)."""

    name: str
    path: Path
    family: str
    source: str
    covers: str
    has_chat_template: bool = False


def bundled_directory() -> Path | None:
    """The directory holding the bundled templates, or None if this installation has none."""
    installed = _PACKAGE_DIR / "bundled"
    if installed.is_dir():
        return installed
    checkout = _PACKAGE_DIR.parent / "templates"
    if (_PACKAGE_DIR.parent / "pyproject.toml").is_file() and checkout.is_dir():
        return checkout
    return None


def bundled_names() -> list[str]:
    directory = bundled_directory()
    if directory is None:
        return []
    return sorted(p.stem for p in directory.glob("*.json") if p.is_file())


def looks_like_name(text: str) -> bool:
    """Whether a command-line argument could be a template name rather than a path."""
    return _NAME.fullmatch(text) is not None and not text.endswith(".json")


def bundled_path(name: str) -> Path | None:
    """The file of the bundled template called `name`, or None."""
    directory = bundled_directory()
    if directory is None or not looks_like_name(name):
        return None
    path = directory / f"{name}.json"
    return path if path.is_file() else None


def closest_names(word: str, limit: int = 3) -> list[str]:
    """Bundled names that look like `word`, best first (for "did you mean")."""
    names = bundled_names()
    stem = word[: -len(".json")] if word.endswith(".json") else word
    close = difflib.get_close_matches(stem, names, n=limit, cutoff=0.6)
    if not close and len(stem) >= 3:  # "qwen" names a family: offer its members
        close = [n for n in names if n.startswith(stem) or stem.startswith(n)][:limit]
    return close


def bundled_templates() -> list[BundledTemplate]:
    """Every bundled template, described by its row in the Models table where it has one."""
    directory = bundled_directory()
    if directory is None:
        return []
    index = directory / _INDEX_FILE
    rows = _models_table(index.read_text(encoding="utf-8")) if index.is_file() else {}
    listed = []
    for name in bundled_names():
        family, source, covers = rows.get(name, ("", "", ""))
        path = directory / f"{name}.json"
        family = family or _family_from_name(name)
        listed.append(BundledTemplate(name, path, family, source, covers, _has_chat_template(path)))
    return listed


def _has_chat_template(path: Path) -> bool:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False  # listed anyway; loading it reports what is wrong
    return isinstance(document, dict) and isinstance(document.get("chat_template"), str)


def _family_from_name(name: str) -> str:
    """The model family a template name starts with (`deepseek_v3_1` -> `deepseek`)."""
    match = re.match(r"[a-z]+", name)
    return match.group() if match else name


def _models_table(markdown: str) -> dict[str, tuple[str, str, str]]:
    """{name: (family, source, covers)} from the table under the `## Models` heading.

    The first cell names one or more templates in backticks and, in parentheses, the models they are
    for; the next two cells are the format's source and what the template covers.
    """
    rows: dict[str, tuple[str, str, str]] = {}
    in_section = False
    for line in markdown.splitlines():
        if line.startswith("#"):
            in_section = _MODELS_HEADING.match(line) is not None
            continue
        if not in_section or not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) < 3 or set(cells[0]) <= set("-: "):
            continue
        names = re.findall(r"`([^`]+)`", cells[0])
        models = re.search(r"\(([^)]*)\)\s*$", cells[0])
        for name in names:
            rows.setdefault(name, (models.group(1) if models else "", _plain(cells[1]), _plain(cells[2])))
    return rows


def _plain(cell: str) -> str:
    """A Markdown table cell as plain text: code spans unwrapped, no bold, no escaped pipes.

    A code span opens with a run of backticks and closes at the next run of the same length, so
    ```` `NAME\n```json` ```` is one span whose text holds three backticks (CommonMark).
    """
    cell = cell.replace("\\|", "|").replace("**", "")
    runs = list(re.finditer(r"`+", cell))
    pieces, position, index = [], 0, 0
    while index < len(runs):
        opener = runs[index]
        closer = next((j for j in range(index + 1, len(runs)) if len(runs[j].group()) == len(opener.group())), None)
        if closer is None:  # an unmatched run is literal text
            index += 1
            continue
        pieces += [cell[position : opener.start()], cell[opener.end() : runs[closer].start()]]
        position, index = runs[closer].end(), closer + 1
    pieces.append(cell[position:])
    return "".join(pieces)
