"""Progress of a long command with time remaining: a live bar on a terminal, plain periodic lines in a log.

A bar redrawn in place leaves cut-off fragments in a file or a CI log, so when stderr
is not a terminal the same figures go out as one whole line every ``every`` seconds.
``-q`` (or a command's ``--no-progress``) turns both off.
"""

from __future__ import annotations

import sys
import time

from hfcprov.units import format_duration


def eta_seconds(done: int, total: int, elapsed: float) -> float | None:
    """Time left at the rate so far; None before the first item finishes."""
    if done <= 0 or total <= done:
        return None if done <= 0 else 0.0
    return elapsed / done * (total - done)


class ProgressReport:
    """``advance()`` per finished item; ``close()`` at the end (also on error)."""

    def __init__(self, what: str, *, mode: str | None = None, every: float = 10.0, stream=None):
        self.what = what
        self.stream = stream or sys.stderr
        if mode is None:
            mode = "bar" if self.stream.isatty() else "lines"
        self.mode = mode  # "bar", "lines" or "off"
        self.every = every
        self.total = 0
        self.done = 0
        self.failed = 0
        self.started = time.monotonic()
        self._last_line = self.started
        self._bar = None
        self._task = None

    def start(self, total: int) -> None:
        self.total = total
        self.started = self._last_line = time.monotonic()
        if self.mode == "bar":
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.fields[last]}"),
                                 console=Console(file=self.stream), transient=True)
            self._task = self._bar.add_task(self.what, total=total, last="")
            self._bar.start()

    def update(self, done: int, total: int | None = None, last: str = "") -> None:
        if total is not None and total != self.total:
            if self.mode == "bar" and self._bar is None:
                self.start(total)
            self.total = total
            if self._bar is not None:
                self._bar.update(self._task, total=total)
        self.done = done
        if self._bar is not None:
            self._bar.update(self._task, completed=done, last=last[:100])
        elif self.mode == "lines":
            now = time.monotonic()
            if now - self._last_line >= self.every:
                self._last_line = now
                print(self.line(), file=self.stream, flush=True)

    def advance(self, last: str = "", failed: bool = False) -> None:
        self.failed += failed
        self.update(self.done + 1, last=last)

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        eta = eta_seconds(self.done, self.total, elapsed)
        left = f", about {format_duration(eta)} left" if eta is not None else ""
        failed = f", {self.failed} failed" if self.failed else ""
        return (f"hfcprov: {self.what}: {self.done}/{self.total}{failed}, "
                f"{format_duration(elapsed)} elapsed{left}")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
