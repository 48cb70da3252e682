"""Progress lines for long runs (`verify`, `lint`): cases done of the total, and the time left."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


class ProgressPrinter:
    """Progress lines on stderr for a long run: cases done of the total, and an estimate of the time left.

    A line is printed at most every `interval` seconds (none for a run shorter than that, none for the
    last case: the result follows); the estimate assumes the remaining cases take as long as the
    average case so far.
    """

    def __init__(
        self,
        total: int,
        *,
        interval: float = 2.0,
        clock: Callable[[], float] | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.total = total
        self.interval = interval
        self.clock = clock or time.monotonic
        self.stream = stream
        self.started = self.clock()
        self.last_line = self.started

    def __call__(self, done: int, detail: str = "") -> None:
        """`done` cases of the total are done; `detail` (say, "200 comparisons") goes in the line.
        `done == 0` starts the clock again: the time spent getting ready (compiling, importing the
        reference) says nothing about how long the cases take."""
        if done <= 0:
            self.started = self.last_line = self.clock()
            return
        if done >= self.total:
            return
        now = self.clock()
        if now - self.last_line < self.interval:
            return
        self.last_line = now
        elapsed = now - self.started
        left = elapsed / done * (self.total - done)
        parts = [f"  {done}/{self.total} cases", detail, f"{format_duration(elapsed)} elapsed"]
        parts.append(f"about {format_duration(left)} left")
        print(", ".join(part for part in parts if part), file=self.stream or sys.stderr, flush=True)


def format_duration(seconds: float) -> str:
    if seconds < 1:
        return "<1 s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
