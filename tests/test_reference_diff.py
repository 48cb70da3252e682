"""`python -m tools.reference_diff`: the installed transformers against the recorded 5.24.0 fingerprints.

The installed oracle (transformers 5.24.0, pinned by the test extra) has no differences; a copy of its
sources with one function changed, one added and one removed lists exactly those three; documentation and
formatting edits are not differences.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tools.reference_diff import METHODS, WHOLE_MODULES, main, transformers_root


def test_the_installed_reference_matches_the_recording(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("transformers 5.24.0 (") and "against the recorded 5.24.0:" in out
    assert "  no differences in 154 definitions\n" in out


def copy_of_the_reference(tmp_path: Path) -> Path:
    """The watched files of the installed transformers, under tmp_path/transformers/."""
    installed = transformers_root(None)
    for relative in (*WHOLE_MODULES, *METHODS, "__init__.py"):
        target = tmp_path / "transformers" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(installed / relative, target)
    return tmp_path / "transformers"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_modified_copy_lists_what_changed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package = copy_of_the_reference(tmp_path)
    parsers = package / "utils/chat_parsing/content_parsers.py"
    edit(parsers, 'return text.strip() if args.get("strip", True) else text', "return text.strip()")  # changed
    edit(parsers, '    """Parse line-delimited `key<sep>value` pairs into a dict."""\n', "")  # a docstring: no change
    edit(parsers, "def _bool(", "def _yaml(text: str, args: dict) -> dict:\n    return {}\n\n\ndef _bool(")  # added
    tokenizer = package / "tokenization_utils_base.py"
    edit(tokenizer, "    def get_response_parser(", "    def _no_longer_public(")  # removed (and not watched)
    templates = package / "utils/chat_parsing/response_templates.py"
    edit(templates, "import regex as re\n", "import re  # the standard library's, now\n")  # changed
    edit(templates, "    name: str\n", "    name:   str  # spacing and a comment: no change\n")

    assert main(["--root", str(tmp_path)]) == 1
    assert capsys.readouterr().out.splitlines()[1:] == [
        "  changed  utils/chat_parsing/content_parsers.py:_text",
        "  changed  utils/chat_parsing/response_templates.py:re",
        "  added    utils/chat_parsing/content_parsers.py:_yaml",
        "  removed  tokenization_utils_base.py:PreTrainedTokenizerBase.get_response_parser",
        "  2 changed, 1 added, 1 removed",
    ]


def test_recording_a_new_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package = copy_of_the_reference(tmp_path)
    edit(package / "__init__.py", '__version__ = "5.24.0"', '__version__ = "5.25.0"')
    edit(package / "utils/chat_template_utils.py", "def get_json_schema(", "def get_json_schema_v2(")
    recorded = tmp_path / "fingerprints.json"
    assert main(["--root", str(tmp_path), "--record", "--fingerprints", str(recorded)]) == 0
    assert "recorded 154 definitions of transformers 5.25.0" in capsys.readouterr().out
    assert main(["--root", str(tmp_path), "--fingerprints", str(recorded)]) == 0
    assert "against the recorded 5.25.0:\n  no differences" in capsys.readouterr().out
    assert main(["--fingerprints", str(recorded)]) == 1  # the installed 5.24.0 against it
    out = capsys.readouterr().out
    assert "  changed  " not in out
    assert "  added    utils/chat_template_utils.py:get_json_schema\n" in out
    assert "  removed  utils/chat_template_utils.py:get_json_schema_v2\n" in out


def test_a_root_without_transformers_is_one_line_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--root", str(tmp_path)])
    assert exited.value.code == 2
    assert capsys.readouterr().err == f"reference_diff: {tmp_path}: no transformers/ directory there\n"
