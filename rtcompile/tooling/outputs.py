"""Writing generated modules: every output or none, every byte checked, special files left in place.

A run that writes several modules (`rtcompile templates -o generated`) first writes each one to a
hidden temporary file next to its target (`.NAME.XXXX.tmp`), and only when all of them are on disk
renames them into place, with signals held back (see `signals.signals_deferred`). A failure or an
interruption before that point removes the temporaries and any directory the run created, so the
outputs are left exactly as they were.

`tempfile.mkstemp` creates its file with mode 0600, and a rename keeps it, so the temporary is given
the mode the output should have: the existing file's mode when one is replaced, otherwise 0666 less
the umask, as `open(path, "w")` would create it.

A symbolic link is followed: the file it points to is replaced (next to it), and the link stays. An
output that exists and is not a regular file -- a device (``-o /dev/null``, ``-o /dev/stdout``), a
FIFO, or a link to one -- is never replaced: the module is written through it, as ``cat > OUT``
would write (a FIFO waits for its reader), after every regular output is staged and before any is
renamed into place, so that a failure there still changes no file.

Every write is checked to the last byte: a short write (a full file system, a file size limit) is an
error, never a silently truncated module. `write_stdout` does the same for standard output.
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
from typing import BinaryIO

from rtcompile.tooling.signals import signals_deferred

__all__ = ["OutputError", "Staged", "special_file_kind", "write_all", "write_stdout"]

STANDARD_OUTPUT = "standard output"


class OutputError(Exception):
    """An output cannot be written; the message is one line naming it."""


@dataclass
class Staged:
    target: Path  # the file the temporary replaces (a link's target, not the link)
    temporary: Path
    committed: bool = False


def special_file_kind(path: Path) -> str | None:
    """What `path` (links followed) is when it exists and is neither a regular file nor a directory:
    "character device", "FIFO"...; None otherwise. Raises OSError when it cannot be looked at."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kinds = {
        stat.S_ISCHR: "character device",
        stat.S_ISBLK: "block device",
        stat.S_ISFIFO: "FIFO",
        stat.S_ISSOCK: "socket",
    }
    return next((name for test, name in kinds.items() if test(mode)), "special file")


def write_stdout(text: str) -> None:
    """Write a module to standard output as UTF-8, whatever encoding the stream was opened with, every
    byte checked (`OutputError` naming standard output when it cannot take them all). A reader that
    went away (`| head -1`) raises BrokenPipeError, for the caller to end quietly."""
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    try:
        if buffer is None:  # replaced by a text-only stream (an embedding program's, a test's)
            stream.write(text)
            stream.flush()
            return
        stream.flush()
        _write_fully(buffer, text.encode("utf-8", "surrogatepass"))
    except BrokenPipeError:
        raise
    except OSError as error:
        raise OutputError(f"{STANDARD_OUTPUT}: cannot write ({error.strerror or error})") from None


def _write_fully(stream: BinaryIO, data: bytes) -> None:
    """Write all of `data` and flush: a buffered stream handed a large write may take only part of it
    (a full disk lets the first write through short) and say so only in its return value."""
    view = memoryview(data)
    while view:
        written = stream.write(view)
        if not written:  # nothing taken and no error: a write that can never finish
            raise OSError(f"only {len(data) - len(view)} of {len(data)} bytes written")
        view = view[written:]
    stream.flush()


def write_all(outputs: Sequence[tuple[Path, str]], *, create_directories: Sequence[Path] = ()) -> None:
    """Write each `(target, text)`, all or nothing; raises OutputError (or the interruption) after undoing."""
    created: list[Path] = []
    staged: list[Staged] = []
    through: list[tuple[Path, str]] = []
    try:
        for directory in create_directories:
            created += _make_directory(directory)
        umask = _umask()
        for target, text in outputs:
            if _special(target) is not None:
                through.append((target, text))
            else:
                staged.append(_stage(target, text, umask))
        for target, text in through:
            _write_through(target, text)
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


def _special(target: Path) -> str | None:
    try:
        return special_file_kind(target)
    except OSError as error:
        raise OutputError(f"{target}: cannot write ({error.strerror or error})") from None


def _write_through(target: Path, text: str) -> None:
    """Write to a device or FIFO in place (opening it follows links, and never replaces it). A reader
    that stops reading (``-o /dev/stdout | head -1``) took what it wanted: that is no failure."""
    try:
        with open(target, "wb") as handle:
            _write_fully(handle, text.encode("utf-8", "surrogatepass"))
    except BrokenPipeError:
        return
    except OSError as error:
        raise OutputError(f"{target}: cannot write ({error.strerror or error})") from None


def _make_directory(directory: Path) -> list[Path]:
    """Create `directory` and missing parents; return the ones created, deepest first (to remove on failure)."""
    missing = []
    probe = directory
    try:
        while not probe.exists() and probe != probe.parent:
            missing.append(probe)
            probe = probe.parent
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(f"{directory}: cannot create the output directory ({error.strerror})") from None
    return missing


def _stage(target: Path, text: str, umask: int) -> Staged:
    """Write `text` to a temporary file beside the file `target` names (a link is followed: the file it
    points to is the one replaced), with the mode that file should have."""
    replaced = Path(os.path.realpath(target))
    directory = replaced.parent
    try:
        if not directory.is_dir():
            raise OutputError(f"{target}: directory {directory} does not exist")
        mode = stat.S_IMODE(os.stat(replaced).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~umask
    except OSError as error:
        raise OutputError(f"{target}: cannot write ({error.strerror})") from None
    try:
        fd, name = tempfile.mkstemp(prefix=f".{replaced.name}.", suffix=".tmp", dir=directory)
    except OSError as error:
        raise OutputError(f"{target}: cannot write here ({error.strerror})") from None
    staged = Staged(replaced, Path(name))
    data = text.encode("utf-8", "surrogatepass")
    try:
        with os.fdopen(fd, "wb") as handle:
            _write_fully(handle, data)
            if hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())  # the rename must not reach the disk before the contents do
            size = os.fstat(handle.fileno()).st_size
            if size != len(data):
                raise OSError(f"only {size} of {len(data)} bytes written")
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
