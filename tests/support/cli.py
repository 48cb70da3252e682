"""Run the command line as a user does: `python -m rtcompile` in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def errors_in(stderr: str) -> list[str]:
    """The lines of `stderr`, without transformers' notice that PyTorch is not installed."""
    return [line for line in stderr.splitlines() if "PyTorch was not found" not in line]
