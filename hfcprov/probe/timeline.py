"""Bytes received over time, and goodput taken from it.

A receiver notes its running byte count against the monotonic clock; goodput
over a window and per-second series are read off that record by linear
interpolation, so the window edges need not fall on a record.
"""

from __future__ import annotations

import bisect
import time


class Timeline:
    """Cumulative bytes received, sampled at most every ``step`` seconds (and at the end)."""

    def __init__(self, step: float = 0.01):
        self.step = step
        self.t: list[float] = []
        self.total: list[int] = []
        self.bytes = 0

    def add(self, n: int, now: float | None = None) -> None:
        self.bytes += n
        now = time.monotonic() if now is None else now
        if not self.t or now - self.t[-1] >= self.step:
            self.t.append(now)
            self.total.append(self.bytes)
        else:
            self.total[-1] = self.bytes

    def start(self, now: float | None = None) -> None:
        """Mark the zero point (connection up, before the first byte)."""
        self.t.append(time.monotonic() if now is None else now)
        self.total.append(0)

    def at(self, when: float) -> float:
        """Bytes received by time ``when`` (interpolated)."""
        if not self.t or when <= self.t[0]:
            return 0.0
        if when >= self.t[-1]:
            return float(self.total[-1])
        i = bisect.bisect_right(self.t, when)
        t0, t1 = self.t[i - 1], self.t[i]
        b0, b1 = self.total[i - 1], self.total[i]
        return b0 + (b1 - b0) * (when - t0) / (t1 - t0)

    def goodput(self, t0: float, t1: float) -> float:
        """Average bits/s between ``t0`` and ``t1``."""
        if t1 <= t0:
            return 0.0
        return (self.at(t1) - self.at(t0)) * 8 / (t1 - t0)

    def per_second(self, t0: float, t1: float, origin: float) -> list[tuple[float, float]]:
        """Goodput of each whole second in [t0, t1], as (end time relative to ``origin``, bits/s)."""
        out = []
        t = t0
        while t + 1.0 <= t1 + 1e-9:
            out.append((round(t + 1.0 - origin, 6), self.goodput(t, t + 1.0)))
            t += 1.0
        return out

    def to_pairs(self) -> list[tuple[float, int]]:
        return list(zip(self.t, self.total))

    @classmethod
    def from_pairs(cls, pairs) -> Timeline:
        tl = cls()
        for t, b in pairs:
            tl.t.append(float(t))
            tl.total.append(int(b))
        tl.bytes = tl.total[-1] if tl.total else 0
        return tl
