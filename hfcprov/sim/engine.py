"""The event engine: a binary heap of ``(time, seq, fn, arg)`` tuples.

Plain tuples keep the per-event cost to one heappush/heappop; ``seq`` breaks
ties in scheduling order, which is what makes a seeded run reproducible bit for
bit. Cancelling is lazy: owners of timers check on firing whether the event is
still wanted, so nothing is ever removed from the heap.
"""

from __future__ import annotations

from heapq import heappop, heappush


class Engine:
    __slots__ = ("events", "heap", "now", "seq")

    def __init__(self) -> None:
        self.now = 0.0
        self.heap: list = []
        self.seq = 0
        self.events = 0  # events executed so far

    def at(self, t: float, fn, arg=None) -> None:
        """Call ``fn(arg)`` at absolute time ``t`` (seconds)."""
        self.seq += 1
        heappush(self.heap, (t, self.seq, fn, arg))

    def after(self, delay: float, fn, arg=None) -> None:
        self.seq += 1
        heappush(self.heap, (self.now + delay, self.seq, fn, arg))

    def run(self, until: float) -> None:
        """Execute events up to and including time ``until``; leave ``now`` at ``until``."""
        heap = self.heap
        n = 0
        while heap and heap[0][0] <= until:
            t, _, fn, arg = heappop(heap)
            self.now = t
            fn(arg)
            n += 1
        self.events += n
        self.now = until
