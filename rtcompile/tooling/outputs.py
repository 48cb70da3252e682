"""Writing generated modules: every output or none, with the file mode a plain write would give.

A run that writes several modules (`rtcompile templates -o generated`) first writes each one to a
hidden temporary file next to its target (`.NAME.XXXX.tmp`), and only when all of them are on disk
renames them into place, with signals held back (see `signals.signals_deferred`). A failure or an
interruption before that point removes the temporaries and any directory the run created, so the
outputs are left exactly as they were.

`tempfile.mkstemp` creates its file with mode 0600, and a rename keeps it, so the temporary is given
the mode the output should have: the existing file's mode when one is replaced, otherwise 0666 less
the umask, as `open(path, "w")` would create it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rtcompile.tooling.signals import signals_deferred

__all__ = ["OutputError", "Staged", "write_all", "write_stdout"]


class OutputError(Exception):
    """An output cannot be written; the message is one line naming it."""


@dataclass
class Staged:
    target: Path
    temporary: Path
    committed: bool = False


def write_stdout(text: str) -> None:
    """Write a module to standard output as UTF-8, whatever encoding the stream was opened with."""
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # replaced by a text-only stream (an embedding program's, a test's)
        stream.write(text)
        return
    stream.flush()
    buffer.write(text.encode("utf-8", "surrogatepass"))
    buffer.flush()


def write_all(outputs: Sequence[tuple[Path, str]], *, create_directories: Sequence[Path] = ()) -> None:
    """Write each `(target, text)`, all or nothing; raises OutputError (or the interruption) after undoing."""
    created: list[Path] = []
    staged: list[Staged] = []
    try:
        for directory in create_directories:
            created += _make_directory(directory)
        umask = _umask()
        for target, text in outputs:
            staged.append(_stage(target, text, umask))
        with signals_deferred():
            for item in staged:
                try:
                    os.replace(item.temporary, item.target)
                except OSError as error:
                    written = sum(s.committed for s in staged)
                    already = f"; {written} of {len(staged)} outputs were already replaced" if written else ""
                    raise OutputError(f"{item.target}: cannot write ({error.strerror or error}){already}") from None
                item.committed = True
    except BaseException:
        _undo(staged, created)
        raise


def _make_directory(directory: Path) -> list[Path]:
    """Create `directory` and missing parents; return the ones created, deepest first (to remove on failure)."""
    missing = []
    probe = directory
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(f"{directory}: cannot create the output directory ({error.strerror})") from None
    return missing


def _stage(target: Path, text: str, umask: int) -> Staged:
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise OutputError(f"{target}: directory {directory} does not exist")
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~umask
    except OSError as error:
        raise OutputError(f"{target}: cannot write ({error.strerror})") from None
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as error:
        raise OutputError(f"{target}: cannot write here ({error.strerror})") from None
    staged = Staged(target, Path(name))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8", "surrogatepass"))
            if hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), mode)
            handle.flush()
            os.fsync(handle.fileno())  # the rename must not reach the disk before the contents do
    except BaseException as error:
        _remove(staged.temporary)
        if isinstance(error, OSError):
            raise OutputError(f"{target}: cannot write ({error.strerror or error})") from None
        raise
    return staged


def _undo(staged: Sequence[Staged], created: Sequence[Path]) -> None:
    for item in staged:
        if not item.committed:
            _remove(item.temporary)
    for directory in created:
        with contextlib.suppress(OSError):  # not empty (something else wrote there meanwhile): leave it
            directory.rmdir()


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _umask() -> int:
    """The process umask; reading it means setting it, so it is put straight back."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
