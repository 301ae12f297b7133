"""DOCSIS upstream request-grant MAC: several cable modems on one upstream channel.

A CM may send only what the CMTS granted it. A packet arriving at an idle CM
waits for a contention request opportunity, the request travels upstream, the
CMTS places a grant in a later MAP (MAPs describe ``map_interval`` of channel
time, ``map_advance`` ahead of when they are sent), and only then does the
packet go. Packets that arrive meanwhile are asked for by a request piggybacked
on the next data burst. So the channel can sit idle while a CM holds data: the
MAC is not work-conserving (Atov-Kennedy 2006), and the CM's buffer holds a
request-grant cycle's worth of data on top of TCP's own standing queue. The
channel's and scheduler's parameters (``MacParams``: MAP interval and advance,
request limits, overheads) live in ``hfcprov.queue.grant``, which the sizing
rule reads too.

Modelled: contention requests (with a collision probability and backoff),
piggybacked requests, a maximum request / grant size (DOCSIS 1.x requests are
counted in minislots in one byte: at most 255 minislots), concatenation of
whole frames into a grant, optional fragmentation, the CMTS's upstream rate
limit (Max Sustained Rate and Max Traffic Burst, enforced when granting),
randomised grant placement inside each MAP, and a random share of each MAP
taken by other modems. Buffer accounting: bytes, bytes plus a per-packet
overhead, or fixed blocks per packet (a CM counting its buffer in packets).

``CableModem`` implements the simulator's ``Link`` interface (``send``,
``waiting_bytes``, ``accepted``/``dropped``/``lost``/``wait_sum``/
``wait_byte_sum``/``measure_from``, ``sink.receive``), so a scenario swaps it
in for the plain token-bucket link.
"""

from __future__ import annotations

import math
import random
from collections import deque

from hfcprov.model.flow import DEFAULT_MAX_TRAFFIC_BURST
from hfcprov.queue.grant import ETHERNET_OVERHEAD, MacParams
from hfcprov.sim.loss import NoLoss

# The end hosts' TCP timers the MAC was calibrated with (docs/calibration.md): Linux's 200 ms
# minimum RTO on the variance term and 40 ms delayed-ACK timer (TcpOptions fields; no variant).
CALIBRATED_TCP = {"min_rto": 0.2, "rto_rule": "linux", "delack_timeout": 0.04}


class UpstreamChannel:
    """The CMTS scheduler for one upstream channel: MAPs, requests, grants."""

    def __init__(self, engine, params: MacParams | None = None, rng: random.Random | None = None) -> None:
        self.engine = engine
        self.p = params or MacParams()
        self.rng = rng or random.Random(0)
        self.cms: list[CableModem] = []
        self.byte_time = 8.0 / self.p.channel_rate  # seconds per byte on the channel
        self.free_at = 0.0  # channel time already allocated up to here
        self.rr = 0  # round-robin start for fairness among CMs
        self.maps = 0
        self.busy_time = 0.0  # channel time granted to our CMs (for utilisation)
        engine.at(0.0, self._map)

    def attach(self, cm: CableModem) -> None:
        self.cms.append(cm)

    def _map(self, _=None) -> None:
        """Build the MAP for [now + map_advance, + map_interval) and schedule what it grants."""
        p, eng, rng = self.p, self.engine, self.rng
        now = eng.now
        start = now + p.map_advance
        end = start + p.map_interval
        self.maps += 1
        t = max(start, self.free_at)
        # Other modems' share of this MAP, as one busy block somewhere in it.
        other = p.other_load
        if p.other_load_spread:
            other = min(0.95, max(0.0, other + rng.uniform(-p.other_load_spread, p.other_load_spread)))
        other_time = other * p.map_interval
        # Contention opportunities: every CM that has data and no request in flight.
        for cm in self.cms:
            if cm.needs_contention and cm.contention_at is None:
                cm.contention_at = start + rng.random() * p.map_interval
                eng.at(cm.contention_at, cm._contention)
        # Grants: round robin over CMs with requests the CMTS has received, within what
        # this MAP has left after other modems' share (fragmentation lets a grant be cut
        # to fit; a whole-frame grant that does not fit waits, unless it is the MAP's first).
        n = len(self.cms)
        grants = []
        room = max(0.0, end - t - other_time) / self.byte_time  # bytes of channel time left
        if n == 1:  # the common case, kept cheap: one MAP event every map_interval
            w = self.cms[0]._grant_size(now)
            wants = [(self.cms[0], w)] if w > 0 else []
        else:
            order = [self.cms[(self.rr + i) % n] for i in range(n)]
            wants = [(cm, cm._grant_size(now)) for cm in order]
            wants = [(cm, w) for cm, w in wants if w > 0]
        if not wants:
            pass
        elif p.fragmentation and len(wants) == 1:
            cm, w = wants[0]
            g = min(w, int(room) - p.burst_overhead)
            if g >= 4 * p.minislot_bytes or (g == w and g > 0):
                grants.append((cm, g, (g + p.burst_overhead) * self.byte_time))
                cm._granted(g, now)
        elif p.fragmentation:
            # Max-min fair split of the MAP among the CMs asking (water-filling).
            alloc = {}
            left = list(wants)
            while left and room > p.burst_overhead + 4 * p.minislot_bytes:
                share = room / len(left) - p.burst_overhead
                small = [(cm, w) for cm, w in left if w <= share]
                if not small:
                    for cm, w in left:
                        alloc[cm] = int(share)
                    room -= len(left) * (int(share) + p.burst_overhead)
                    break
                for cm, w in small:
                    alloc[cm] = w
                    room -= w + p.burst_overhead
                left = [x for x in left if x not in small]
            for cm, w in wants:
                g = alloc.get(cm, 0)
                if g >= 4 * p.minislot_bytes or (g == w and g > 0):
                    grants.append((cm, g, (g + p.burst_overhead) * self.byte_time))
                    cm._granted(g, now)
        else:
            for cm, g in wants:
                if g + p.burst_overhead > room and (grants or other_time):
                    g = cm._fit(int(room) - p.burst_overhead)  # the requests that fit
                    if g <= 0:
                        continue  # the MAP is full for this CM; it waits for the next one
                grants.append((cm, g, (g + p.burst_overhead) * self.byte_time))
                room -= g + p.burst_overhead
                cm._granted(g, now)
        self.rr = (self.rr + 1) % n if n else 0
        # Lay out the MAP: our grants and the other modems' block, in random order and at
        # random offsets in the idle time left (grant placement is the CMTS's choice).
        blocks = grants + ([(None, 0, other_time)] if other_time else [])
        if blocks:
            if p.random_placement:
                rng.shuffle(blocks)
            busy = sum(d for _, _, d in blocks)
            slack = max(0.0, end - t - busy)
            cuts = sorted(rng.random() * slack for _ in blocks) if p.random_placement else [0.0] * len(blocks)
            prev_cut = 0.0
            for (cm, g, dur), cut in zip(blocks, cuts):
                t += cut - prev_cut
                prev_cut = cut
                if cm is not None:
                    eng.at(t, cm._transmit, (g, t))
                    self.busy_time += dur
                t += dur
            self.free_at = t
        eng.at(now + p.map_interval, self._map)


class CableModem:
    """One CM's upstream service flow on an ``UpstreamChannel``: a ``Link`` for the simulator.

    ``buffer`` is the Buffer Control target in bytes; a packet is charged
    ``size + buffer_overhead`` bytes, rounded up to ``buffer_block`` when set
    (``buffer_block=1600`` makes the buffer hold ``buffer // 1600`` packets of any size).
    ``rate``/``burst`` are the service flow's Max Sustained Rate (bits/s) and Max
    Traffic Burst (bytes), enforced by the CMTS when it grants.
    """

    __slots__ = (
        "accepted",
        "buffer_block",
        "buffer_overhead",
        "burst",
        "bytes_sent",
        "channel",
        "charged",
        "cmts_pending",
        "collisions",
        "contention_at",
        "delay",
        "dropped",
        "engine",
        "grants_pending",
        "head_sent",
        "in_flight_req",
        "limit",
        "loss",
        "lost",
        "measure_from",
        "measured",
        "name",
        "needs_contention",
        "qbytes",
        "queue",
        "rate",
        "requests_contention",
        "requests_piggyback",
        "sink",
        "t_last",
        "t_tokens",
        "tokens",
        "unrequested",
        "wait_byte_sum",
        "wait_sum",
    )

    def __init__(self, channel: UpstreamChannel, sink=None, *, delay: float = 0.0,
                 buffer: int | None = None, rate: float | None = None, burst: int | None = None,
                 buffer_overhead: int = 0, buffer_block: int | None = None, loss=None,
                 name: str = "") -> None:
        self.engine = channel.engine
        self.channel = channel
        self.sink = sink
        self.name = name
        self.delay = delay  # CMTS -> far end (after the upstream hop)
        self.limit = buffer
        self.buffer_overhead = buffer_overhead
        self.buffer_block = buffer_block
        self.loss = loss or NoLoss()
        self.rate = rate / 8.0 if rate else None  # bytes/s
        p = channel.p
        # Without fragmentation a grant carries at least one whole frame: the bucket must hold one.
        min_burst = 0 if p.fragmentation else 1522 + p.frame_overhead
        self.burst = max(burst if burst is not None else DEFAULT_MAX_TRAFFIC_BURST, min_burst)
        self.tokens = float(self.burst)
        self.t_tokens = 0.0
        self.queue: deque = deque()  # (pkt, frame bytes, charged bytes, arrival time)
        self.qbytes = 0  # frame bytes queued
        self.charged = 0  # buffer bytes in use
        self.unrequested = 0  # frame bytes queued that no request covers yet
        self.in_flight_req = 0  # bytes requested, request not yet at the CMTS
        self.cmts_pending: deque = deque()  # requests the CMTS holds: sizes in bytes
        self.needs_contention = False
        self.contention_at = None
        self.head_sent = 0  # bytes of the head frame already sent as fragments
        self.grants_pending = 0  # grants in issued MAPs whose time has not come
        self.accepted = self.dropped = self.lost = 0
        self.measured = 0  # packets whose queueing delay is in wait_sum
        self.wait_sum = 0.0
        self.wait_byte_sum = 0.0
        self.measure_from = 0.0
        self.t_last = 0.0
        self.requests_contention = self.requests_piggyback = self.collisions = 0
        self.bytes_sent = 0
        channel.attach(self)

    # -- Link interface -------------------------------------------------
    def waiting_bytes(self) -> int:
        return self.qbytes

    def send(self, pkt) -> bool:
        now = self.engine.now
        frame = pkt.size + self.channel.p.frame_overhead
        charge = pkt.size + self.buffer_overhead
        if self.buffer_block:
            charge = math.ceil(charge / self.buffer_block) * self.buffer_block
        if self.limit is not None and self.charged + charge > self.limit:
            self.dropped += 1
            return False
        self._integrate(now)
        self.queue.append((pkt, frame, charge, now))
        self.qbytes += frame
        self.charged += charge
        self.unrequested += frame
        self.accepted += 1
        if not (self.cmts_pending or self.in_flight_req or self.grants_pending or self.contention_at):
            self.needs_contention = True  # nothing to piggyback on: contend
        return True

    receive = send  # an access hop delivers into the CM

    def _integrate(self, now: float) -> None:
        if now > self.t_last:
            if now >= self.measure_from:
                self.wait_byte_sum += self.qbytes * (now - max(self.t_last, self.measure_from))
            self.t_last = now

    # -- requests -------------------------------------------------------
    def _request_bytes(self) -> int:
        """Whole frames not yet asked for, up to the request cap (fragmentation may split the last)."""
        cap = self.channel.p.max_request_bytes
        if self.rate is not None and not self.channel.p.fragmentation:
            cap = min(cap, self.burst)  # Maximum Concatenated Burst within the Max Traffic Burst
        if self.channel.p.fragmentation:
            return min(self.unrequested, cap)
        covered = self.qbytes - self.unrequested  # frames at the head already requested
        total = 0
        acc = 0
        for _, frame, _, _ in self.queue:
            acc += frame
            if acc <= covered:
                continue
            if total + frame > cap:
                if total == 0:
                    total = frame  # one oversized frame still goes alone
                break
            total += frame
            if not self.channel.p.concatenation:
                break
        return min(total, self.unrequested)

    def _send_request(self, nbytes: int, at: float) -> None:
        self.unrequested -= nbytes
        self.in_flight_req += nbytes
        self.engine.at(at + self.channel.p.propagation, self._request_arrives, nbytes)

    def _request_arrives(self, nbytes: int) -> None:
        self.in_flight_req -= nbytes
        self.cmts_pending.append(nbytes)

    def _contention(self, _=None) -> None:
        p, rng = self.channel.p, self.channel.rng
        now = self.engine.now
        self.contention_at = None
        if not self.needs_contention:
            return
        if p.contention_collision and rng.random() < p.contention_collision:
            self.collisions += 1
            retry = now + p.map_interval * (1 + rng.randrange(max(1, p.backoff_maps)))
            self.contention_at = retry
            self.engine.at(retry, self._contention)
            return
        nbytes = self._request_bytes()
        self.needs_contention = False
        if nbytes > 0:
            self.requests_contention += 1
            self._send_request(nbytes, now)

    # -- grants (called by the channel) ---------------------------------
    def _grant_size(self, now: float) -> int:
        """The most the CMTS would grant now: what is requested, within the rate limit's tokens."""
        if not self.cmts_pending:
            return 0
        limit = 1 << 62
        if self.rate is not None:
            tok = min(self.burst, self.tokens + (now - self.t_tokens) * self.rate)
            self.tokens, self.t_tokens = tok, now
            limit = int(tok)
        return self._fit(limit)

    def _fit(self, limit: int) -> int:
        """Largest grant <= limit: any size with fragmentation, else whole requests (whole frames)."""
        pending = self.cmts_pending
        total = sum(pending)
        if limit >= total:
            return total
        if self.channel.p.fragmentation:
            return limit if limit >= 4 * self.channel.p.minislot_bytes else 0
        acc = 0
        for r in pending:
            if acc + r > limit:
                break
            acc += r
        return acc

    def _granted(self, g: int, now: float) -> None:
        self.grants_pending += 1
        if self.rate is not None:
            self.tokens -= g
        pending = self.cmts_pending
        while pending and g >= pending[0]:
            g -= pending.popleft()
        if g and pending:
            pending[0] -= g

    def _transmit(self, arg) -> None:
        """A grant of ``g`` bytes starts now: send whole frames (and a fragment), piggyback a request."""
        g, t0 = arg
        self.grants_pending -= 1
        p = self.channel.p
        now = self.engine.now
        self._integrate(now)
        bt = self.channel.byte_time
        t = t0 + p.burst_overhead * bt
        left = g
        q = self.queue
        header = p.frame_overhead - ETHERNET_OVERHEAD  # DOCSIS MAC header bytes per frame
        refund = 0
        while q and left > 0:
            pkt, frame, charge, arrived = q[0]
            remaining = frame - self.head_sent
            if remaining <= left:
                left -= remaining
                t += remaining * bt
                q.popleft()
                self.head_sent = 0
                self.qbytes -= frame
                self.charged -= charge
                self.bytes_sent += frame
                refund += header
                if arrived >= self.measure_from:
                    self.wait_sum += t0 - arrived
                    self.measured += 1
                if self.loss.lost():
                    self.lost += 1
                else:
                    self.engine.at(t + p.propagation + self.delay, self.sink.receive, pkt)
            elif p.fragmentation and left > p.fragment_overhead:
                sent = left - p.fragment_overhead
                self.head_sent += sent
                self.unrequested += p.fragment_overhead  # the rest of the frame needs its own header
                refund += p.fragment_overhead
                t += left * bt
                left = 0
            else:
                break
        if self.rate is not None:
            # MULPI C.2.2.7.2: the Max Sustained Rate counts from the byte after the MAC header's HCS
            # to the end of the CRC, so DOCSIS headers and fragment headers go back to the bucket
            self.tokens += refund
        if q and self.unrequested <= 0 and not (self.cmts_pending or self.in_flight_req or self.grants_pending):
            # Requests fell short of the queue (grant carried less than asked): ask for the rest.
            self.unrequested = self.qbytes - self.head_sent
        if self.unrequested > 0:  # frames that arrived since the last request ride on this burst
            nbytes = self._request_bytes()
            if nbytes > 0:
                self.requests_piggyback += 1
                self._send_request(nbytes, t)

    # -- what DOCSIS-PIE in front of the CM reads (hfcprov.sim.aqm.link.PieCm) ------------------
    def has_room(self, size: int) -> bool:
        return self.limit is None or self.charged + size + self.buffer_overhead <= self.limit

    def aqm_bytes(self) -> int:
        """The queue without the DOCSIS MAC framing (what RFC 8034's byte_length counts)."""
        return self.qbytes - len(self.queue) * self.channel.p.frame_overhead

    aqm_queue_bytes = aqm_bytes  # the 2011 model has no burst buffer apart from its queue: one count for both

    def aqm_size(self, size: int) -> int:
        """The bytes DOCSIS-PIE counts for an arriving IP packet (its queue counts IP packets)."""
        return size

    def aqm_delay(self) -> float:
        """DOCSIS-PIE's delay estimate from the CM's rate and MSR tokens (bytes the tokens cover at the
        channel rate)."""
        from hfcprov.queue.pie import qdelay_estimate

        nbytes = self.aqm_bytes()
        if self.rate is None:
            return nbytes * 8.0 / self.channel.p.channel_rate
        now = self.engine.now
        tokens = min(self.burst, self.tokens + max(0.0, now - self.t_tokens) * self.rate)
        return qdelay_estimate(nbytes, self.rate * 8.0, self.channel.p.channel_rate, max(0.0, tokens))

    @property
    def utilisation(self) -> float:
        """Share of elapsed channel time this CM's bursts occupied."""
        now = self.engine.now
        return self.bytes_sent * self.channel.byte_time / now if now else 0.0
