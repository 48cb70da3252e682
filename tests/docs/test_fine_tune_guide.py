"""docs/fine-tune-guide.md, followed as a reader would: its files written into an empty directory, its
commands and Python blocks run there in order, each printing and giving what the guide shows."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import doc_examples
from tests.support.paths import ROOT

GUIDE = (ROOT / "docs" / "fine-tune-guide.md").read_text(encoding="utf-8")


@pytest.mark.slow  # ~5 s of CPU: four rtcompile processes (two lints, a compile, a verify)
def test_the_guide_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # `import my_model_parser`, as from the directory it is in
    monkeypatch.delitem(sys.modules, "my_model_parser", raising=False)
    namespace: dict[str, Any] = {}
    ran = {"python": 0, "console": 0, "file": 0}
    for block in doc_examples.runnable(GUIDE):
        if block.language in doc_examples.FILE_LANGUAGES:
            (tmp_path / block.name).write_text(block.code, encoding="utf-8")
            ran["file"] += 1
        elif block.language == "python":
            doc_examples.run_python(block, namespace)  # one namespace: each step builds on the last
            ran["python"] += 1
        else:
            doc_examples.run_console(block, tmp_path)
            ran["console"] += 1
    sys.modules.pop("my_model_parser", None)
    assert ran == {"python": 6, "console": 2, "file": 3}
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == [
        "chat_template.jinja",
        "my_model.json",
        "my_model_parser.py",
    ]
