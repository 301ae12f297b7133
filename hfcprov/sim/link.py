"""A one-way hop: drop-tail byte buffer -> token-bucket shaper -> channel -> plant loss -> propagation.

This is the ``Link`` interface every hop implements (see ``hfcprov.sim``):

- ``send(pkt) -> bool``: offer a packet at ``engine.now``; False if the buffer dropped it.
- ``waiting_bytes() -> int``: bytes queued and not yet being transmitted (for queue series).
- counters ``accepted``, ``dropped`` (buffer), ``lost`` (plant), ``wait_sum`` (per packet accepted
  from ``measure_from`` on), ``wait_byte_sum`` (the time integral of waiting bytes from ``measure_from``).
- ``sink.receive(pkt)`` is called when the packet arrives at the far end.

Because the buffer is FIFO and the service is deterministic (token buckets and a
fixed channel rate), a packet's start of transmission is known when it arrives:
one heap event per packet per hop (its arrival at the far end), no departure
events. A request-grant MAC (issue 7) is not deterministic this way and brings
its own events; it only has to keep the same four methods/counters.
"""

from __future__ import annotations

from collections import deque
from heapq import heappush

from hfcprov.model.flow import DEFAULT_MAX_TRAFFIC_BURST
from hfcprov.sim.loss import NoLoss
from hfcprov.sim.packet import DATA, Packet, Train


class Link:
    __slots__ = (
        "_sink",
        "accepted",
        "burst",
        "capacity",
        "delay",
        "dropped",
        "engine",
        "free_at",
        "limit",
        "line",
        "loss",
        "lost",
        "measure_from",
        "measured",
        "name",
        "overhead",
        "peak",
        "peak_burst",
        "ptokens",
        "rate",
        "route",
        "sink_receive",
        "t_ptokens",
        "t_tokens",
        "tokens",
        "wait_byte_sum",
        "wait_sum",
        "waiting",
        "wbytes",
    )

    def __init__(self, engine, sink=None, *, capacity: float, delay: float = 0.0,
                 buffer: int | None = None, rate: float | None = None, burst: int | None = None,
                 peak: float | None = None, peak_burst: int = 1522, overhead: int = 0,
                 loss=None, name: str = "") -> None:
        if capacity <= 0:
            raise ValueError("link capacity must be > 0")
        self.engine = engine
        self.sink_receive = None
        self.route = None
        self.sink = sink
        self.name = name
        self.capacity = capacity / 8.0  # bytes/s
        self.delay = delay
        self.limit = buffer
        self.overhead = overhead
        self.loss = None if loss is None or isinstance(loss, NoLoss) else loss
        # Token buckets in bytes (DOCSIS: Max Sustained Rate with Max Traffic Burst;
        # Peak Traffic Rate with a one-frame bucket).
        self.rate = rate / 8.0 if rate else None
        self.burst = burst if burst is not None else DEFAULT_MAX_TRAFFIC_BURST
        self.tokens = float(self.burst)
        self.t_tokens = 0.0
        self.peak = peak / 8.0 if peak else None
        self.peak_burst = peak_burst
        self.ptokens = float(peak_burst)
        self.t_ptokens = 0.0
        self.free_at = 0.0  # channel busy until
        self.waiting: deque = deque()  # (start of transmission, wire bytes)
        self.line: deque = deque()  # arrivals at the far end, in order (Engine.queue)
        self.wbytes = 0
        self.accepted = 0
        self.dropped = 0
        self.lost = 0
        self.wait_sum = 0.0  # sum of queueing delays of packets accepted after measure_from
        self.wait_byte_sum = 0.0  # integral of waiting bytes over time (same window)
        self.measure_from = 0.0
        self.measured = 0  # packets accepted after measure_from

    @property
    def sink(self):
        return self._sink

    @sink.setter
    def sink(self, value) -> None:
        self._sink = value
        self.sink_receive = value.receive if value is not None else None  # what the hot path calls
        # A host's per-flow endpoint list: deliver straight to the endpoint, one call less per packet.
        self.route = getattr(value, "receivers", None)

    def waiting_bytes(self) -> int:
        now = self.engine.now
        w = self.waiting
        while w and w[0][0] <= now:
            self.wbytes -= w.popleft()[1]
        return self.wbytes

    def send(self, pkt) -> bool:
        # The hot path of the whole simulator: locals, no helper calls. A Train comes in
        # through send_train (the sender) or receive (the hop before).
        engine = self.engine
        now = engine.now
        w = self.waiting
        wbytes = self.wbytes
        if w:
            while w and w[0][0] <= now:
                wbytes -= w.popleft()[1]
            self.wbytes = wbytes
        wire = pkt.size + self.overhead
        limit = self.limit
        if limit is not None and wbytes + wire > limit:
            self.dropped += 1
            return False
        start = self.free_at
        if start < now:  # noqa: PLR1730 (hot path: cheaper than max())
            start = now
        rate = self.rate
        if rate is not None:
            tok = self.tokens + (start - self.t_tokens) * rate
            if tok > self.burst:  # noqa: PLR1730
                tok = self.burst
            if tok < wire:
                start += (wire - tok) / rate
                tok = wire
            self.tokens = tok - wire
            self.t_tokens = start
        peak = self.peak
        if peak is not None:
            tok = self.ptokens + (start - self.t_ptokens) * peak
            if tok > self.peak_burst:  # noqa: PLR1730
                tok = self.peak_burst
            if tok < wire:
                start += (wire - tok) / peak
                tok = wire
                if rate is not None:  # the sustained bucket kept filling meanwhile
                    self.tokens = min(self.burst, self.tokens + (start - self.t_tokens) * rate)
                    self.t_tokens = start
            self.ptokens = tok - wire
            self.t_ptokens = start
        end = start + wire / self.capacity
        self.free_at = end
        self.accepted += 1
        if now >= self.measure_from:
            self.measured += 1
            if start > now:
                self.wait_sum += start - now
                self.wait_byte_sum += wire * (start - now)
        elif start > self.measure_from:  # queued before the window opens: count the wait inside it
            self.wait_byte_sum += wire * (start - self.measure_from)
        if start > now:
            w.append((start, wire))
            self.wbytes = wbytes + wire
        loss = self.loss
        if loss is not None and loss.lost():
            self.lost += 1
            return True  # it used the channel, then the plant ate it
        engine.seq += 1
        route = self.route
        line = self.line  # engine.queue, inlined: FIFO delivery, only the first event in the heap
        event = (end + self.delay, engine.seq, route[pkt.flow] if route is not None else self.sink_receive, pkt, line)
        if not line:
            heappush(engine.heap, event)
        line.append(event)
        return True

    def receive(self, pkt) -> bool:
        """A link can be the sink of the hop before it, which may deliver trains."""
        if pkt.__class__ is Train:
            return self.send_train(pkt)
        return self.send(pkt)

    def send_train(self, pkt) -> bool:
        """``n`` back-to-back segments in one event: the buffer takes the prefix that fits, the
        shaper and channel serve the rest as one block, plant loss is drawn per segment."""
        engine = self.engine
        now = engine.now
        w = self.waiting
        while w and w[0][0] <= now:
            self.wbytes -= w.popleft()[1]
        n = pkt.n
        per = pkt.size // n
        seg_wire = per + self.overhead
        limit = self.limit
        if limit is not None and self.wbytes + n * seg_wire > limit:
            k = (limit - self.wbytes) // seg_wire
            if k <= 0:
                self.dropped += n
                return False
            self.dropped += n - k
            pkt.n = n = k
            pkt.size = k * per
        wire = pkt.size + self.overhead * n
        start = max(self.free_at, now)
        if self.rate is not None:
            tok = min(self.burst, self.tokens + (start - self.t_tokens) * self.rate)
            if tok < wire:
                start += (wire - tok) / self.rate
                tok = wire
            self.tokens = tok - wire
            self.t_tokens = start
        if self.peak is not None:
            tok = min(self.peak_burst, self.ptokens + (start - self.t_ptokens) * self.peak)
            if tok < wire:
                start += (wire - tok) / self.peak
                tok = wire
                if self.rate is not None:
                    self.tokens = min(self.burst, self.tokens + (start - self.t_tokens) * self.rate)
                    self.t_tokens = start
            self.ptokens = tok - wire
            self.t_ptokens = start
        end = start + wire / self.capacity
        self.free_at = end
        self.accepted += n
        if now >= self.measure_from:
            self.measured += n
            if start > now:
                self.wait_sum += n * (start - now)
                self.wait_byte_sum += wire * (start - now)
        elif start > self.measure_from:
            self.wait_byte_sum += wire * (start - self.measure_from)
        if start > now:
            w.append((start, wire))
            self.wbytes += wire
        deliver = self.route[pkt.flow] if self.route is not None else self.sink_receive
        pieces = [pkt]
        loss = self.loss
        if loss is not None:
            kept = [j for j in range(n) if not loss.lost()]
            if len(kept) < n:
                self.lost += n - len(kept)
                pieces = []
                j = 0
                while j < len(kept):  # contiguous runs of the segments that survived
                    a = j
                    while j + 1 < len(kept) and kept[j + 1] == kept[j] + 1:
                        j += 1
                    m = j - a + 1
                    seq = pkt.seq + kept[a]
                    pieces.append(Train(pkt.flow, seq, m, m * per, pkt.ts) if m > 1
                                  else Packet(DATA, pkt.flow, seq, per, pkt.ts))
                    j += 1
        for piece in pieces:
            engine.queue(self.line, end + self.delay, deliver, piece)
        return True

    def wait_beyond(self, t: float) -> float:
        """Byte-seconds that packets queued now will still wait after ``t`` (counted in
        ``wait_byte_sum`` on arrival): subtract them to integrate the queue up to ``t`` only."""
        return sum(wire * (start - t) for start, wire in self.waiting if start > t)


class Propagation:
    """A hop that only delays: the stretch of path one flow has beyond the shared one (a farther
    server). Constant delay keeps the order, so its packets wait on a line (``Engine.queue``):
    one event per packet, whatever the count in flight. ``deliver`` is what the packet meets next
    (a link's ``receive``/``send`` or an endpoint's ``receive``); trains pass whole."""

    __slots__ = ("delay", "deliver", "engine", "line")

    def __init__(self, engine, delay: float, deliver) -> None:
        self.engine = engine
        self.delay = delay
        self.deliver = deliver
        self.line: deque = deque()

    def send(self, pkt) -> bool:
        engine = self.engine
        engine.queue(self.line, engine.now + self.delay, self.deliver, pkt)
        return True

    receive = send_train = send


class Jitter:
    """Random timing noise on a path without reordering: each packet leaves ``[0, span)`` later than
    it came (uniform, from ``rng``), but never before the packet ahead of it. Hosts and a userspace
    delay line release packets this way; a deterministic simulator without it lets two drop-tail
    flows lock into phase (Floyd and Jacobson 1992), so who loses at an overflow is decided by the
    RTTs modulo a packet's service time rather than by chance."""

    __slots__ = ("deliver", "engine", "last", "line", "rng", "span")

    def __init__(self, engine, span: float, rng, deliver) -> None:
        self.engine = engine
        self.span = span
        self.rng = rng
        self.deliver = deliver
        self.line: deque = deque()
        self.last = 0.0

    def send(self, pkt) -> bool:
        engine = self.engine
        t = engine.now + self.rng.random() * self.span
        if t < self.last:  # noqa: PLR1730
            t = self.last
        self.last = t
        engine.queue(self.line, t, self.deliver, pkt)
        return True

    receive = send_train = send
