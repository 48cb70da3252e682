"""rtcompile as a package: metadata, what a wheel holds, the bundled templates after `pip install`, the
pre-commit hook, and the README commands and examples as a new user runs them."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rtcompile.tooling.cli import main
from tests.support.paths import ROOT

#: sha256 of the Apache License 2.0 text as apache.org publishes it (LICENSE-2.0.txt).
APACHE_2_0_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def test_license_is_the_full_apache_2_0_text() -> None:
    assert hashlib.sha256((ROOT / "LICENSE").read_bytes()).hexdigest() == APACHE_2_0_SHA256


def test_pre_commit_hook_runs_rtcompile_check(tmp_path: Path) -> None:
    # The file is one list item of `key: value` lines (pre-commit reads it as YAML; plain scalars only).
    lines = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8").splitlines()
    entries = [re.fullmatch(r"(- |  )(\w+): (.*)", line) for line in lines if line and not line.startswith("#")]
    assert all(entries) and sum(1 for e in entries if e and e.group(1) == "- ") == 1
    hook = {e.group(2): e.group(3) for e in entries if e}
    assert hook["id"] == "rtcompile-check" and hook["language"] == "python" and hook["pass_filenames"] == "false"
    program, *options = hook["entry"].split()
    assert program == "rtcompile" and options == ["--check"]
    # pre-commit appends the user's `args`, here the README's example: templates -o generated.
    templates, generated = tmp_path / "templates", tmp_path / "generated"
    templates.mkdir()
    shutil.copy(ROOT / "templates" / "smollm3.json", templates / "smollm3.json")
    args = [str(templates), "-o", str(generated)]
    assert main([*options, *args]) == 1  # not compiled yet: the commit is stopped
    assert main(args) == 0
    assert main([*options, *args]) == 0
    (templates / "smollm3.json").write_text(
        (templates / "smollm3.json").read_text(encoding="utf-8").replace("<think>", "<reasoning>"), encoding="utf-8"
    )
    assert main([*options, *args]) == 1  # the template changed and its parser was not regenerated


def test_readme_first_command_leaves_the_checkout_clean() -> None:
    first = re.search(r"```sh\n(.*?)\n```", (ROOT / "README.md").read_text(encoding="utf-8"), re.DOTALL)
    assert first is not None and first.group(1) == "pip install . && rtcompile smollm3 -o smollm3_parser.py"

    def ignored(path: str) -> bool:
        return subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT).returncode == 0

    assert ignored("smollm3_parser.py")
    assert not ignored("generated/smollm3_parser.py")  # committed parsers stay visible to git


def test_readme_streaming_example_renders_every_event(tmp_path: Path) -> None:
    """The README's example, run as written: finalize()'s events (the last region_close) must be rendered."""
    block = re.search(
        r"```python\n(import smollm3_parser as parser\n.*?)```", (ROOT / "README.md").read_text("utf-8"), re.DOTALL
    )
    assert block is not None
    assert main([str(ROOT / "templates" / "smollm3.json"), "-o", str(tmp_path / "smollm3_parser.py")]) == 0
    rendered: list[Any] = []
    output = "<think>Check the weather.</think>It is sunny."
    namespace: dict[str, Any] = {
        "model_output": output,
        "prompt": "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n",
        "tools": None,
        "token_stream": [output[i : i + 3] for i in range(0, len(output), 3)],
        "render": rendered.append,
    }
    sys.path.insert(0, str(tmp_path))
    try:
        exec(compile(block.group(1), "README.md", "exec"), namespace)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("smollm3_parser", None)
    assert namespace["message"]["content"] == "It is sunny."
    closes = [(e["field"], e["value"]) for e in rendered if e["type"] == "region_close"]
    assert closes == [("reasoning_content", "Check the weather."), ("content", "It is sunny.")]


# --------------------------------------------------------------------------- installing into a fresh venv


@dataclass(frozen=True)
class Installed:
    venv: Path
    outside: Path  # a working directory outside the repository

    def run(self, program: str, *argv: str) -> subprocess.CompletedProcess[str]:
        environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        return subprocess.run(
            [str(self.venv / "bin" / program), *argv], capture_output=True, text=True, cwd=self.outside, env=environment
        )


def source_copy(destination: Path) -> Path:
    """What `git clone` gives, without touching this checkout (building writes build/ and *.egg-info)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, destination / name)
    for name in ("rtcompile", "templates"):
        shutil.copytree(ROOT / name, destination / name, ignore=ignore)
    return destination


def install(source: Path, work: Path, *, editable: bool) -> Installed:
    venv = work / ("venv-editable" if editable else "venv")
    # A venv without a pip of its own (copying one in costs seconds): this test run's pip installs into it.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q"]
    # rtcompile itself is built and installed for real; its dependencies come from this test run's environment.
    pip += ["--disable-pip-version-check", "--no-deps"]
    subprocess.run([*pip, *(["-e"] if editable else []), str(source)], check=True)
    purelib = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # A plain path entry: the other environment's own .pth files (its editable rtcompile) are not run.
    (Path(purelib) / "test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    outside = work / "elsewhere"
    outside.mkdir()
    return Installed(venv, outside)


@pytest.fixture(scope="module", params=["regular", "editable"])
def installed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """`pip install .` (or `-e .`) of a copy of this checkout into a fresh venv."""
    work = tmp_path_factory.mktemp(f"install-{request.param}")
    source = work / "source"
    source.mkdir()
    return install(source_copy(source), work, editable=request.param == "editable")


@pytest.mark.slow
def test_installed_package_lists_and_compiles_bundled_templates(installed: Installed) -> None:
    where = installed.run("python", "-c", "import rtcompile; print(rtcompile.__file__)")
    assert where.returncode == 0 and str(installed.venv.parent) in where.stdout  # this install, not the checkout's
    listed = installed.run("rtcompile", "list", "--names")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == sorted(p.stem for p in (ROOT / "templates").glob("*.json"))
    described = installed.run("rtcompile", "list")
    assert "qwen3  (qwen)" in described.stdout and "    covers: <think>" in described.stdout
    compiled = installed.run("rtcompile", "qwen3", "-o", "x.py")
    assert compiled.returncode == 0, compiled.stderr
    header = (installed.outside / "x.py").read_text(encoding="utf-8").splitlines()[:2]
    assert header == ["# @generated by rtcompile 0.1.0 -- do not edit", "# from bundled template qwen3"]
    probe = "import x; print(x.parse_response('<think>r</think>c', prefix='')['content'])"
    parsed = installed.run("python", "-I", "-S", "-c", f"import sys; sys.path.insert(0, '.'); {probe}")
    assert parsed.stdout.strip() == "c", parsed.stderr
    loaded = installed.run("python", "-c", "import rtcompile; print(rtcompile.load_template('gemma4').start_anchor)")
    assert loaded.returncode == 0, loaded.stderr
    unknown = installed.run("rtcompile", "qwen4", "-o", "y.py")
    assert unknown.returncode == 2 and "did you mean 'qwen3'?" in unknown.stderr


@pytest.mark.slow
def test_installed_metadata(installed: Installed) -> None:
    metadata = installed.run(
        "python", "-c", "import importlib.metadata as m; print(m.metadata('rtcompile').as_string())"
    ).stdout
    fields = dict(line.split(": ", 1) for line in metadata.splitlines() if ": " in line)
    assert fields["License-Expression"] == "Apache-2.0" and fields["Author"] == "rtcompile developers"
    assert "License-File: LICENSE" in metadata and "Classifier: Typing :: Typed" in metadata
    for version in ("3.10", "3.11", "3.12", "3.13"):
        assert f"Classifier: Programming Language :: Python :: {version}" in metadata
    assert "Classifier: Operating System :: OS Independent" in metadata
    assert "Home-page" not in metadata and "Project-URL" not in metadata  # none are known yet
    # No formatter among them (black was one, pinned: it kept rtcompile from being installed next to a
    # project pinning another black); the exact `regex` is the Unicode tables' version.
    requires = sorted(line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist: "))
    runtime = [r for r in requires if "extra ==" not in r]
    assert runtime == ["jinja2>=3.1", "libcst>=1.4", "regex==2026.11.19"]


@pytest.mark.slow
def test_wheel_holds_every_module_and_template(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    source_copy(source)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), str(source)], check=True
    )
    (wheel,) = (tmp_path / "dist").glob("rtcompile-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(source).as_posix() for p in (source / "rtcompile").rglob("*.py")}
    assert modules - names == set()  # pyproject's package list misses none (it cannot be discovered)
    templates = {f"rtcompile/bundled/{p.name}" for p in (ROOT / "templates").iterdir() if p.suffix in (".json", ".md")}
    assert templates - names == set()
    assert {"rtcompile/py.typed", "rtcompile-0.1.0.dist-info/licenses/LICENSE"} <= names
