"""The event engine: a binary heap of ``(time, seq, fn, arg, line)`` tuples.

Plain tuples keep the per-event cost to one heappush/heappop; ``seq`` breaks
ties in scheduling order, which is what makes a seeded run reproducible bit for
bit. Cancelling is lazy: owners of timers check on firing whether the event is
still wanted, so nothing is ever removed from the heap.

A FIFO hop delivers its packets in the order it sent them, so it need not put
them all in the heap: it queues its events on a ``line`` (a deque of event tuples,
each naming that line) and only the line's first event sits in the heap; when it
runs, the next one takes its place. Each line is sorted by ``(time, seq)``, so the
run order is exactly that of one heap holding everything, but at 1 Gb/s the heap
holds a few events instead of every packet in flight (thousands), and each push
and pop costs less.
"""

from __future__ import annotations

import gc
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
        heappush(self.heap, (t, self.seq, fn, arg, None))

    def after(self, delay: float, fn, arg=None) -> None:
        self.seq += 1
        heappush(self.heap, (self.now + delay, self.seq, fn, arg, None))

    def queue(self, line, t: float, fn, arg) -> None:
        """``at(t, fn, arg)`` for a hop whose events never run before those it queued earlier
        (``t`` never decreases along ``line``, a ``collections.deque`` the hop keeps)."""
        self.seq += 1
        event = (t, self.seq, fn, arg, line)
        if not line:
            heappush(self.heap, event)
        line.append(event)

    def run(self, until: float) -> None:
        """Execute events up to and including time ``until``; leave ``now`` at ``until``.

        Python's cyclic garbage collector is paused meanwhile: events create no reference
        cycles (reference counting frees every packet and event; tests/sim/test_engine_run.py
        checks), and with thousands of packets in flight each of its passes walks them all
        (-3 to -7% CPU in bench/sim_speed.py's 1 Gb/s overshoot second)."""
        heap = self.heap
        n = 0
        collecting = gc.isenabled()
        gc.disable()
        try:
            while heap and heap[0][0] <= until:
                t, _, fn, arg, line = heappop(heap)
                self.now = t
                if line is not None:  # the first event of a FIFO line: the next one joins the heap
                    line.popleft()
                    if line:
                        heappush(heap, line[0])
                fn(arg)
                n += 1
        finally:
            if collecting:
                gc.enable()
            self.events += n
        self.now = until
