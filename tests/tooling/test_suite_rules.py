"""Rules of the test suite itself: CI draws the same Hypothesis examples every run, test files sit in
a folder per subject, and shared helpers live in helper modules, never in a test file another imports."""

from __future__ import annotations

import ast
import shlex

from hypothesis import settings

from tests.support.paths import ROOT

TESTS = ROOT / "tests"
SUBJECTS = ("regex", "frontend", "plan", "codegen", "runtime", "differential", "tooling", "docs")


def test_the_ci_profile_is_derandomized_and_keeps_no_database() -> None:
    ci = settings.get_profile("ci")
    assert ci.derandomize is True and ci.database is None


def test_ci_runs_the_suite_with_the_ci_profile() -> None:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [shlex.split(part) for line in lines if not line.startswith("#") for part in line.split("&&")]
    pytest_runs = [command for command in commands if command and command[0] == "pytest"]
    assert pytest_runs == [["pytest", "-n", "auto", "--hypothesis-profile=ci"]]
    # ... which is the README's test command, with the profile selected
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install -e '.[test]' && pytest -n auto\n```" in readme


def test_test_files_sit_in_a_folder_per_subject() -> None:
    test_files = sorted(TESTS.rglob("test_*.py"))
    assert {path.parent.name for path in test_files} == set(SUBJECTS)
    assert all(path.parent.parent == TESTS for path in test_files)
    assert all((TESTS / subject / "__init__.py").is_file() for subject in SUBJECTS)


def test_no_test_file_imports_another() -> None:
    """Helpers the tests share are in tests/support/ (or another module without the test_ prefix)."""
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            offenders += [
                f"{path.relative_to(ROOT)}: {name}"
                for name in names
                if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")
            ]
    assert offenders == []
