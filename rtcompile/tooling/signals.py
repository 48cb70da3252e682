"""Signals as the command line needs them: a clean exit on SIGTERM/SIGHUP, and no interruption mid-commit.

Python turns Ctrl-C into KeyboardInterrupt but lets SIGTERM and SIGHUP (a `kill`, a closed terminal,
a CI timeout) end the process on the spot, skipping every `finally:`, so a write in progress would
leave its hidden temporary file behind. While `termination_raises()` is active those signals raise
`Terminated` instead, which unwinds like KeyboardInterrupt does. `signals_deferred()` holds all three
signals back while the outputs are renamed into place, so that a run is interrupted either before
any output changes or after all of them have.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["INTERRUPT_EXIT_STATUS", "Terminated", "signals_deferred", "termination_raises"]

#: The shell's convention for a process ended by SIGINT (128 + 2).
INTERRUPT_EXIT_STATUS = 130

_TERMINATING = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived. A BaseException, like KeyboardInterrupt, so `except Exception` lets it pass."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name


def _raise_terminated(signum: int, _frame: FrameType | None) -> None:
    raise Terminated(signum)


@contextmanager
def termination_raises() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise `Terminated` where they would have ended the process;
    the previous handlers come back after it.

    A signal the process was started to ignore (`nohup`'s SIGHUP) stays ignored, and one a caller
    handles keeps its handler: only the default action, ending the process, is replaced."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; a caller in another thread keeps its own
        return
    previous = {
        signum: signal.signal(signum, _raise_terminated)
        for signum in _TERMINATING
        if signal.getsignal(signum) == signal.SIG_DFL
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP wait; one that arrived is delivered when it ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = {signal.SIGINT, *_TERMINATING}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
