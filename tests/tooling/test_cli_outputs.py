"""Where the command line's output goes, and what the system may refuse it: outputs that are not
regular files (written through, never replaced), writes checked to the last byte (a full disk, a file
size limit, a reader that stops reading), names escaped in --diff headers, and files the system will
not let us read: one escaped line and exit status 2, in every command."""

from __future__ import annotations

import builtins
import errno
import io
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest

from rtcompile.tooling.cli import main
from tests.support.cli import run_here
from tests.support.paths import ROOT

# A template whose module is small to compile but larger than a pipe's buffer (64 KiB).
TINY = '{"start_anchor": "<A>", "fields": {"content": {}}}\n'


# What needs a process of its own (a file size limit, a full device or a closed pipe on standard output)
# runs `python -m rtcompile`; the rest runs the command line's `main` in this process (run_here).
def rtcompile(
    *argv: str,
    stdout: int | IO[Any] = subprocess.PIPE,
    preexec_fn: Callable[[], None] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "rtcompile", *argv],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        preexec_fn=preexec_fn,
        timeout=300,
        check=False,
    )


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "PyTorch was not found" not in line]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    path.write_text(TINY, encoding="utf-8")
    return path


@pytest.fixture
def module_text(tiny: Path) -> str:
    """The module as written to a regular file beside the template (its header names it relatively)."""
    expected = tiny.parent / "expected.py"
    assert main([str(tiny), "-o", str(expected)]) == 0
    return expected.read_text(encoding="utf-8")


def _read_fifo(path: Path, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        with open(path, "rb") as handle:
            into.append(handle.read())

    reader = threading.Thread(target=read)
    reader.start()
    return reader


# ---------------------------------------------------------------------------------------------------
# Outputs that are not regular files
# ---------------------------------------------------------------------------------------------------


def test_a_fifo_output_is_written_through_and_a_link_followed_never_replaced(
    tmp_path: Path, tiny: Path, module_text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "to_fifo.py"
    link.symlink_to(fifo)
    for target in (fifo, link):
        received: list[bytes] = []
        reader = _read_fifo(fifo, received)
        result = run_here(capsys, str(tiny), "-o", str(target))
        reader.join(timeout=60)
        assert result.returncode == 0, result.stderr
        assert received == [module_text.encode("utf-8")]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.readlink(link) == str(fifo)
    # A link to a regular file is followed too: the file is replaced beside itself, the link stays.
    real = tmp_path / "real.py"
    real.write_text("old\n", encoding="utf-8")
    kept = tmp_path / "kept.py"
    kept.symlink_to(real)
    assert main([str(tiny), "-o", str(kept)]) == 0
    assert os.readlink(kept) == str(real) and real.read_text(encoding="utf-8") == module_text
    names = ["expected.py", "fifo", "kept.py", "real.py", "tiny.json", "to_fifo.py"]
    assert sorted(p.name for p in tmp_path.iterdir()) == names


@pytest.mark.parametrize("mode", ["--check", "--diff"])
def test_check_and_diff_refuse_a_fifo_rather_than_wait_for_a_writer(
    tmp_path: Path, tiny: Path, mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = run_here(capsys, str(tiny), "-o", str(fifo), mode)  # before: waited for a writer until killed
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"rtcompile: error: {fifo}: is a FIFO, not a regular file; --check and --diff compare regular files"
    ]


# ---------------------------------------------------------------------------------------------------
# Every write checked
# ---------------------------------------------------------------------------------------------------


def _file_size_limit(limit: int) -> Callable[[], None]:
    """In the child: files may not grow past `limit` bytes, and a write beyond is short or fails (EFBIG)
    rather than killing the process, as on a full file system."""

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_short_write_is_an_error_and_no_file_is_left_half_written(tmp_path: Path, tiny: Path) -> None:
    limited = _file_size_limit(16 * 1024)
    with open(tmp_path / "redirected.py", "wb") as redirected:
        to_stdout = rtcompile(str(tiny), "-o", "-", stdout=redirected, preexec_fn=limited)
    assert to_stdout.returncode == 2  # before: 0, with 16 KiB of the module
    assert error_lines(to_stdout.stderr) == ["rtcompile: error: standard output: cannot write (File too large)"]
    target = tmp_path / "tiny_parser.py"
    target.write_text("# the previous module\n", encoding="utf-8")
    to_file = rtcompile(str(tiny), "-o", str(target), preexec_fn=limited)
    assert to_file.returncode == 2
    assert error_lines(to_file.stderr) == [f"rtcompile: error: {target}: cannot write (File too large)"]
    assert target.read_text(encoding="utf-8") == "# the previous module\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["redirected.py", "tiny.json", "tiny_parser.py"]


@pytest.mark.parametrize(
    "argv", [["TINY", "-o", "-"], ["TINY", "-o", "LINK"], ["list"], ["--version"], ["help", "lint"]]
)
def test_a_full_device_is_one_line_and_status_2(tmp_path: Path, tiny: Path, argv: list[str]) -> None:
    # `-o` names a link to /dev/full, never /dev/full itself: code that replaces the output (as before)
    # then replaces the link, not the machine's device.
    link = tmp_path / "full.py"
    link.symlink_to("/dev/full")
    with open("/dev/full", "wb") as full:
        result = rtcompile(*[{"TINY": str(tiny), "LINK": str(link)}.get(arg, arg) for arg in argv], stdout=full)
    assert result.returncode == 2  # before: a traceback and 1 (or 0, for --version)
    where = str(link) if "LINK" in argv else "standard output"
    assert error_lines(result.stderr) == [f"rtcompile: error: {where}: cannot write (No space left on device)"]
    assert os.readlink(link) == "/dev/full" and stat.S_ISCHR(os.stat("/dev/full").st_mode)


def _first_line_then_close(argv: list[str]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-m", "rtcompile", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stdout is not None
    process.stdout.readline()
    process.stdout.close()  # `| head -1`: the reader has what it wanted
    process.wait(timeout=300)
    return process


@pytest.mark.parametrize("argv", [["TINY", "-o", "-"], ["TINY", "-o", "LINK"], ["list"]])
def test_a_reader_that_stops_reading_ends_the_run_quietly(tmp_path: Path, tiny: Path, argv: list[str]) -> None:
    link = tmp_path / "stdout.py"  # a link to /dev/stdout, for the reason given above
    link.symlink_to("/dev/stdout")
    process = _first_line_then_close([{"TINY": str(tiny), "LINK": str(link)}.get(arg, arg) for arg in argv])
    assert process.stderr is not None
    assert process.returncode == 0  # as black does (before: 141, or the link replaced by a file)
    assert error_lines(process.stderr.read().decode()) == []
    assert os.readlink(link) == "/dev/stdout"


# ---------------------------------------------------------------------------------------------------
# Names and errors from the system
# ---------------------------------------------------------------------------------------------------


def test_diff_headers_escape_control_characters_in_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "t\x1b[2J.json"
    source.write_text(TINY, encoding="utf-8")
    output = tmp_path / "out\r\x1b]0;x\x07.py"
    output.write_text("# old\n", encoding="utf-8")
    result = run_here(capsys, str(source), "-o", str(output), "--diff")
    assert result.returncode == 0, result.stderr
    headers = [line for line in result.stdout.splitlines() if line.startswith(("--- ", "+++ "))]
    assert headers == [
        f"--- {tmp_path}/out\\r\\x1b]0;x\\x07.py (current)",
        f"+++ {tmp_path}/out\\r\\x1b]0;x\\x07.py (from {tmp_path}/t\\x1b[2J.json)",
    ]


@pytest.fixture
def locked_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory the system will not let us list, nor reach anything in (mode 0 for anyone but root,
    whom permissions do not stop: the tests may run as root, so the refusal is the system calls')."""
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "t.json").write_text(TINY, encoding="utf-8")

    def refused(path: Any, *, listing: bool) -> bool:
        try:
            name = Path(os.fsdecode(path)).absolute()
        except TypeError:  # a file descriptor
            return False
        return name == locked if listing else locked in name.parents

    def guard(function: Callable[..., Any], *, listing: bool = False) -> Callable[..., Any]:
        def guarded(path: Any, *args: Any, **kwargs: Any) -> Any:
            if refused(path, listing=listing):
                raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))
            return function(path, *args, **kwargs)

        return guarded

    for name in ("stat", "lstat", "open"):
        monkeypatch.setattr(os, name, guard(getattr(os, name)))
    monkeypatch.setattr(os, "listdir", guard(os.listdir, listing=True))
    monkeypatch.setattr(os, "scandir", guard(os.scandir, listing=True))
    monkeypatch.setattr(builtins, "open", guard(builtins.open))
    monkeypatch.setattr(io, "open", guard(io.open))
    return locked


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["LOCKED", "-o", "BASE/out"], "rtcompile: error: LOCKED: cannot read this directory (Permission denied)"),
        (["LOCKED/t.json", "-o", "-"], "rtcompile: error: LOCKED/t.json: Permission denied"),
        (["TINY", "-o", "LOCKED/t_parser.py"], "rtcompile: error: LOCKED/t_parser.py: Permission denied"),
        (["TINY", "-o", "LOCKED/t_parser.py", "--check"], "rtcompile: error: LOCKED/t_parser.py: Permission denied"),
        # a template or chat template lint and verify cannot read is reported as any input they cannot load
        (["lint", "LOCKED/t.json"], "LOCKED/t.json: error[load-error]: permission denied"),
        (["lint", "TINY", "--chat-template", "LOCKED/t.json"], "LOCKED/t.json: error[load-error]: permission denied"),
        (["verify", "LOCKED/t.json", "--cases", "1"], "LOCKED/t.json: error[load-error]: permission denied"),
    ],
)
def test_files_the_system_refuses_are_one_line_and_status_2_in_every_command(
    locked_directory: Path, tiny: Path, capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    def spelled(arg: str) -> str:
        base = locked_directory.parent
        return arg.replace("LOCKED", str(locked_directory)).replace("TINY", str(tiny)).replace("BASE", str(base))

    assert main([spelled(arg) for arg in argv]) == 2  # before: a traceback for most of them
    assert error_lines(capsys.readouterr().err) == [spelled(line)]


def test_a_name_too_long_for_the_system_is_one_line_and_status_2(
    tmp_path: Path, tiny: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / ("N" * 300 + ".py")
    result = run_here(capsys, str(tiny), "-o", str(output))
    assert result.returncode == 2  # before: a traceback and 1
    assert result.stderr.splitlines() == [f"rtcompile: error: {output}: File name too long"]
