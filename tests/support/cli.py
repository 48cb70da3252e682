"""Run the command line as a user does: `python -m rtcompile` in a subprocess; or, for what needs no
process of its own, its `main` in this one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rtcompile.tooling.cli import main
from tests.support.paths import ROOT


def run(
    *argv: str, cwd: Path = ROOT, stdin: str | None = None, umask: int = -1, **env: str
) -> subprocess.CompletedProcess[str]:
    """`python -m rtcompile ARGV` as a user runs it, importing this checkout's rtcompile from any directory."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run(
        [sys.executable, "-m", "rtcompile", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        input=stdin,
        env=environment,
        umask=umask,
    )


def run_here(capsys: pytest.CaptureFixture[str], *argv: str) -> subprocess.CompletedProcess[str]:
    """`rtcompile ARGV` run by the command line's `main` in this process, with its exit status and what it
    printed, as `run` returns them. For tests of what a command decides and says: a new interpreter costs
    about 0.3 s of CPU to compile a template (importing rtcompile, the runtime's index read from the run's
    cache), this nothing once the worker has compiled a template. What needs a process stays with `run`:
    signals, exit-time flushes, the environment, `python -m rtcompile` itself."""
    capsys.readouterr()  # what the test printed before is not this run's
    status = main(list(argv))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["rtcompile", *argv], status, out, err)


def errors_in(stderr: str) -> list[str]:
    """The lines of `stderr`, without transformers' notice that PyTorch is not installed."""
    return [line for line in stderr.splitlines() if "PyTorch was not found" not in line]
