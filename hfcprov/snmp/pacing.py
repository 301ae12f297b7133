"""Run one coroutine per modem, a bounded number at once, paced (per CMTS if asked).

A node's worth of modems polled or rebooted at once is a storm on the CMTS: ``for_each`` keeps at
most ``concurrency`` modems in progress and waits, before starting each, on a pacer: ``Pacer``
(at most ``rate`` starts per second in all) or ``KeyedPacer`` (that rate per CMTS, modems of
different CMTSes not waiting on each other).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter


class Pacer:
    """At most ``rate`` starts per second (None: no cap), shared by every worker."""

    def __init__(self, rate: float | None):
        self.interval = 1.0 / rate if rate else 0.0
        self.next = 0.0
        self.lock = asyncio.Lock()

    async def wait(self, _item=None) -> None:
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            if self.next > now:
                await asyncio.sleep(self.next - now)
                now = self.next
            self.next = now + self.interval


class KeyedPacer:
    """At most ``rate`` starts per second for each key (``key(item)``, e.g. the modem's CMTS)."""

    def __init__(self, rate: float | None, key):
        self.rate, self.key = rate, key
        self.pacers: dict[str, Pacer] = {}

    async def wait(self, item) -> None:
        if not self.rate:
            return
        key = self.key(item)
        pacer = self.pacers.get(key)
        if pacer is None:
            pacer = self.pacers[key] = Pacer(self.rate)
        await pacer.wait()


async def for_each(items, concurrency: int, one, on_result=None, before=None) -> Counter:
    """``await one(item)`` for every item, at most ``concurrency`` at once; each result goes to
    ``on_result`` as it arrives (completion order). ``before(item)`` is awaited before each item
    starts (a pacer's ``wait``). Returns the count of results by their ``status``."""
    counts: Counter = Counter()
    queue: asyncio.Queue = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)

    async def worker():
        while True:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if before is not None:
                await before(item)
            result = await one(item)
            counts[result.status] += 1
            if on_result is not None:
                on_result(result)

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, queue.qsize())))))
    return counts
