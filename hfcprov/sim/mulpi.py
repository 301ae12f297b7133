"""The request-grant upstream as MULPI times it: DOCSIS 3.0 bonded SC-QAM and DOCSIS 3.1 OFDMA.

One cable modem's service flow on an upstream whose channel set, MAP interval and timing come
from a modem profile (``hfcprov.queue.profile.ModemProfile``: the frame, minislots, the MAP's
lead, the request's trip, the CM's burst preparation). Every MAP interval:

1. the CMTS builds the MAP ``map_lead`` before the interval starts: other modems' load leaves it
   ``free`` minislots (the congestion level, varying MAP to MAP); each aggregate's token bucket
   (Max Sustained Rate up to the Max Traffic Burst, Peak Rate up to ``peak_token_interval`` of it)
   and its flows' request backlogs decide the grant, in whole minislots, placed as one block at a
   random place in the MAP; granted bytes leave the buckets and the backlog (what a grant does not
   use goes back into the bucket once it has passed);
2. the CM learns the grant ``cm_map_processing`` before the interval: at the grant's first frame
   less the burst preparation time it sends a request for what it holds beyond what it asked
   before (piggybacked), and takes the bytes the grant carries from its queue (continuous
   concatenation and fragmentation: the grant is filled byte for byte); a packet reaches the CMTS
   ``delivery_delay`` after the start of the frame that carries its last byte. A flow without a
   grant in a MAP may send a contention request at a random frame of it (lost to another modem's
   with ``contention_collision``);
3. the CM asks for at most what its own token bucket allows (Max Sustained Rate up to the Max
   Traffic Burst since the last request; the peak rate over the time since the last request), as
   CableLabs' docsis-ns3 does.

So the upstream is not work-conserving: a flow running at its rate keeps a request-grant loop's
worth of data (``ModemProfile.loop_delay`` x the rate) in the CM's buffer, and a Max Traffic
Burst of less than a few MAPs' worth of the rate caps the flow below it
(``ModemProfile.burst_rate_cap``).

The CM's buffer counts DOCSIS MAC frames (the IP packet, 18 bytes of Ethernet header and CRC and
the MAC header); the rate limiter counts the Ethernet frame (MULPI C.2.2.7.2): the CMTS, which
sees requests in MAC-frame bytes, grants at the rate x (frame + MAC header) / frame for
``mean_frame``-byte frames. A packet leaves the CM's AQM queue when the CM takes its first byte
for a burst (burst preparation): a packet fragmented across grants waits out its remaining
fragments in the MAC, outside the queue. So the TargetBuffer (``has_room``) and DOCSIS-PIE's
enqueue checks (``aqm_queue_bytes``) count the packets not yet taken, while the queue delay
estimate (``aqm_delay``) and the requests count every byte not yet sent, as docsis-ns3's CM
does (its queue disc against its device's staging buffer). At 2 Mb/s a grant is ~500 B, so a
1518-byte packet is in the MAC for three MAPs (6 ms); counting it in the queue made the CM
drop as if it held one packet more (docs/calibration.md section 9).

Low Latency DOCSIS (``make_low_latency``, put on the scenario's link by
``hfcprov.sim.aqm.link.LowLatencyCm``): an ``Aggregate`` owns the token bucket and its ``CmFlow``s
(each its own queue, requests and grants); a Low Latency aggregate has two, the classic flow and
the low-latency one, and ``Aggregate.schedule`` places each MAP's grants as CableLabs' docsis-ns3
documents its scheduler: Proactive Grant Service grants first (Guaranteed Grant Rate x Interval,
the rate paid its MAC headers as the bucket is, every Interval's whole frames from the first MAP's
first frame; not held to the other modems' load), then the best-effort minislots the bucket and
the free capacity allow, split by the scheduling weight (70.42.6 of 256, MULPI 7.7.3.2) where both
flows want more than their share, the other flow taking what one leaves; with proactive grants in
the MAP the low-latency flow's extra minislots extend the first of them and the classic flow takes
the first free minislots around them, else both go in one block at a random place, the
low-latency part first. Every granted byte, proactive ones included, leaves the bucket (a deficit
carries over); what a grant does not use comes back once it has passed. The CM shapes a member's
requests by that member's own QoS parameters only (the classic flow's Max Sustained Rate when it
has one; the low-latency flow's never).
"""

from __future__ import annotations

import math
import random
from collections import deque

from hfcprov.queue.grant import ETHERNET_OVERHEAD
from hfcprov.queue.profile import ModemProfile
from hfcprov.sim.loss import NoLoss

HIST_BIN = 1e-5  # s: the upstream latency histogram's bin (10 us)
DEFAULT_WEIGHT = 230  # the low-latency flow's scheduling weight of 256 when the aggregate gives none (70.42.6)


class LatencyHistogram:
    """Per-packet upstream latency (CM queue in -> CMTS out) in 10 us bins: mean, p50, p99 without
    keeping every sample."""

    __slots__ = ("bins", "n", "total")

    def __init__(self) -> None:
        self.bins: dict[int, int] = {}
        self.n = 0
        self.total = 0.0

    def add(self, seconds: float) -> None:
        k = int(seconds / HIST_BIN)
        bins = self.bins
        bins[k] = bins.get(k, 0) + 1
        self.n += 1
        self.total += seconds

    def quantile(self, q: float) -> float | None:
        if not self.n:
            return None
        want = q * self.n
        acc = 0
        for k in sorted(self.bins):
            acc += self.bins[k]
            if acc >= want:
                return (k + 0.5) * HIST_BIN
        return None

    def stats(self) -> dict:
        return {"mean": self.total / self.n if self.n else None, "p50": self.quantile(0.5),
                "p99": self.quantile(0.99), "packets": self.n}


class Upstream:
    """The CMTS's upstream scheduler for one channel set: a MAP every ``actual_map_interval``."""

    def __init__(self, engine, profile: ModemProfile, rng: random.Random | None = None) -> None:
        self.engine = engine
        self.p = profile
        self.rng = rng or random.Random(0)
        self.frame = profile.frame
        self.interval = profile.actual_map_interval
        self.frames = profile.frames_per_map
        self.per_frame = profile.minislots_per_frame
        self.per_map = profile.minislots_per_map
        self.slot = profile.minislot_bytes
        self.lead = profile.map_lead
        self.aggregates: list[Aggregate] = []
        self.maps = 0
        self.granted = 0  # bytes granted to our flows
        free = profile.capacity * (1 - profile.congestion) * self.interval / 8
        self.free_bytes = round(free) if profile.congestion else None
        self.free_spread = int(profile.variation / 100 * free) if profile.congestion else 0
        # the first MAP interval the CMTS can still build a MAP for
        self.alloc_start = self.interval
        while self.alloc_start - self.lead < 0:
            self.alloc_start += self.interval
        engine.at(self.alloc_start - self.lead, self._map)

    def add(self, aggregate: Aggregate) -> None:
        self.aggregates.append(aggregate)

    def free_minislots(self) -> int:
        """Minislots of this MAP other modems leave (all of them without congestion)."""
        if self.free_bytes is None:
            return self.per_map
        room = self.free_bytes
        if self.free_spread:
            room += self.rng.randrange(-self.free_spread, self.free_spread)
        return max(0, min(self.per_map, round(room / self.slot)))

    def _map(self, _=None) -> None:
        eng, rng = self.engine, self.rng
        alloc = self.alloc_start
        self.maps += 1
        free = self.free_minislots()
        cm_sees = alloc - self.p.cm_map_processing  # the MAP reaches the CM
        for agg in self.aggregates:
            grants = agg.schedule(eng.now, alloc, free)
            free -= sum(m for _, _, m, best_effort in grants if best_effort)
            for flow, start, minislots, _ in grants:
                nbytes = minislots * self.slot
                self.granted += nbytes
                flow.granted(cm_sees, alloc, start, minislots, nbytes, alloc + (start // self.per_frame) * self.frame)
            granted = {f for f, _, m, _ in grants if m}
            for flow in agg.flows:  # a flow this MAP does not grant may contend at a random frame of it
                if flow not in granted:
                    flow.contention_opportunity(alloc + rng.randrange(self.frames) * self.frame)
        self.alloc_start = alloc + self.interval
        eng.at(eng.now + self.interval, self._map)


class Aggregate:
    """The CMTS's view of a (aggregate) service flow: its token bucket and its flows' request backlogs.

    ``rate``/``peak`` in b/s as provisioned; the bucket runs at them x (frame + MAC header) / frame
    over granted MAC-frame bytes. ``rate=None``: not rate limited.
    """

    def __init__(self, upstream: Upstream, rate: float | None, burst: int, peak: float | None,
                 weight: int | None = None, pgs: tuple[float, float | None] | None = None) -> None:
        p = upstream.p
        self.upstream = upstream
        self.weight = weight  # of 256: the low-latency flow's share when both flows want more (MULPI 7.7.3.2)
        self.low_latency: CmFlow | None = None  # the second flow of a Low Latency aggregate
        pay = (p.mean_frame + p.mac_header) / p.mean_frame
        self.pgs_minislots = 0  # Proactive Grant Service: minislots granted every pgs_every frames
        self.pgs_every = 0
        self.pgs_next = None  # s: the frame of the next proactive grant
        if pgs is not None:
            ggr, ggi = pgs
            frames = int((ggi or upstream.interval) / upstream.frame + 1e-9)
            if frames < 1:
                raise ValueError(f"pgs.interval {ggi:g} s is shorter than one frame ({upstream.frame * 1e6:.0f} us)")
            nbytes = math.ceil(ggr * pay / 8 * frames * upstream.frame)  # B_G >= GGR x GGI (MAC headers paid)
            self.pgs_minislots = -(-nbytes // upstream.slot)
            self.pgs_every = frames
        self.rate = rate * pay / 8 if rate else None  # bytes/s of MAC frames
        self.peak = peak * pay / 8 if peak else None
        self.burst = burst
        self.peak_burst = self.peak * p.peak_token_interval if self.peak else 0.0
        self.tokens = float(burst)
        self.ptokens = 0.0
        self.t_last = None
        self.refunds: deque = deque()  # (time, bytes) of unused grants, back in the bucket once passed
        self.flows: list[CmFlow] = []
        upstream.add(self)

    def _bucket(self, now: float) -> float:
        """Refill the buckets for the time since the last MAP; the bytes they allow now (0: none)."""
        if self.rate is None:
            return float(1 << 40)
        elapsed = self.upstream.interval if self.t_last is None else now - self.t_last
        self.t_last = now
        refunds = self.refunds
        while refunds and refunds[0][0] <= now:
            self.tokens += refunds.popleft()[1]
        self.tokens = min(self.burst, self.tokens + elapsed * self.rate)
        if self.peak is not None:
            self.ptokens = min(self.peak_burst, self.ptokens + elapsed * self.peak)
        if self.tokens <= 0:
            return 0.0
        return min(self.tokens, self.ptokens) if self.peak is not None else self.tokens

    def allocate(self, now: float, free: int, slot: int) -> list:
        """``[(flow, minislots)]`` for this MAP within ``free`` minislots and the bucket. One flow takes
        all the bucket allows of its backlog (a Low Latency aggregate's two flows: ``schedule``)."""
        allowed = self._bucket(now)
        grants = []
        if allowed <= 0 or free <= 0:
            return grants
        cap = min(free, -(-int(allowed) // slot) if allowed < (1 << 40) else free)
        for flow in self.flows:
            if flow.backlog <= 0 or cap <= 0:
                continue
            g = min(cap, -(-flow.backlog // slot))
            grants.append((flow, g))
            cap -= g
            nbytes = g * slot
            flow.backlog = max(0, flow.backlog - nbytes)
            if self.rate is not None:
                self.tokens = max(0.0, self.tokens - nbytes)
                if self.peak is not None:
                    self.ptokens = max(0.0, self.ptokens - nbytes)
        return grants

    def schedule(self, now: float, alloc: float, free: int) -> list:
        """``[(flow, start minislot, minislots, best_effort)]``: this MAP's grants, placed. One flow: all the
        bucket allows of its backlog, one block at a random place. A Low Latency aggregate as CableLabs'
        docsis-ns3 grants it (its model documentation): the proactive grants first (every ``pgs_every``
        frames, not held to the free capacity), then the best-effort minislots the bucket and the free
        capacity allow, split by the scheduling weight where both flows want more than their share; with
        proactive grants in the MAP the low-latency flow's extra minislots extend the first one and the
        classic flow takes the first free minislots, else both go in one block at a random place, the
        low-latency part first."""
        up = self.upstream
        if self.low_latency is None:
            grants = self.allocate(now, free, up.slot)
            total = sum(g for _, g in grants)
            start = up.rng.randrange(up.per_map - total + 1) if total else 0
            out = []
            for flow, minislots in grants:
                if minislots:
                    out.append((flow, start, minislots, True))
                    start += minislots
            return out
        classic, ll = self.flows[0], self.low_latency
        pgs_at = []  # minislot offsets of this MAP's proactive grants
        if self.pgs_minislots:
            if self.pgs_next is None:
                self.pgs_next = alloc  # the first proactive grant: the first frame of the first MAP
            end = alloc + up.interval - up.frame / 2
            while self.pgs_next < end:
                pgs_at.append(round((self.pgs_next - alloc) / up.frame) * up.per_frame)
                self.pgs_next += self.pgs_every * up.frame
        pgs = len(pgs_at) * self.pgs_minislots
        allowed = self._bucket(now)
        c = 0
        l_total = pgs
        if allowed > 0 and (classic.backlog > 0 or ll.backlog > 0) and free > 0:
            slot = up.slot
            available = min(free, -(-int(allowed) // slot) if allowed < (1 << 40) else free)
            max_c = -(-classic.backlog // slot)
            max_l = max(-(-ll.backlog // slot), pgs)
            total = max(min(available, max_c + max_l), pgs)
            if pgs >= max_l:
                c = min(available - pgs, max_c) if available > pgs else 0
            else:
                lw = max(int(total * (self.weight or DEFAULT_WEIGHT) / 256), pgs)
                cw = total - lw
                if max_l <= lw and max_c <= cw:
                    c, l_total = max_c, max_l
                elif max_l > lw and max_c > cw:
                    c, l_total = cw, lw
                elif max_l <= lw:
                    c, l_total = min(total - max_l, max_c), max_l
                else:
                    c, l_total = max_c, min(total - max_c, max_l)
        if c + l_total == 0:
            return []
        for flow, minislots in ((classic, c), (ll, l_total)):
            nbytes = minislots * up.slot
            flow.backlog = max(0, flow.backlog - nbytes)
            if self.rate is not None:
                self.tokens -= nbytes  # a deficit carries over (proactive grants may exceed the bucket)
                if self.peak is not None:
                    self.ptokens -= nbytes
        extra = l_total - pgs
        if pgs_at:  # the LL flow's extra minislots on its first proactive grant; classic from the front
            out = [(ll, at, self.pgs_minislots + (extra if i == 0 else 0), i == 0 and extra > 0)
                   for i, at in enumerate(pgs_at)]
            busy = sorted((at, at + m) for _, at, m, _ in out)
            at = 0
            for lo, hi in busy + [(up.per_map, up.per_map)]:
                if c and lo > at:
                    take = min(c, lo - at)
                    out.append((classic, at, take, True))
                    c -= take
                at = max(at, hi)
            return out
        start = up.rng.randrange(max(1, up.per_map - extra - c + 1))
        out = [(ll, start, extra, True)] if extra else []
        return out + ([(classic, start + extra, c, True)] if c else [])

    def refund(self, when: float, nbytes: int) -> None:
        if nbytes > 0 and self.rate is not None:
            self.refunds.append((when, nbytes))


class CmFlow:
    """One upstream service flow in the CM: its queue, requests and grants; the simulator's ``Link``."""

    __slots__ = (
        "accepted", "aggregate", "backlog", "burst", "bytes_sent", "charged", "collisions", "opportunities",
        "delay", "delivery", "dropped", "engine", "frame", "frame_overhead", "grants", "head_sent", "hist",
        "line", "limit", "loss", "lost", "measure_from", "measured", "name", "on_depart", "pending_removal", "peak",
        "per_frame", "prep", "qbytes", "queue", "rate", "req_pipeline", "requests_contention",
        "requests_piggyback", "rng", "sink", "slot", "t_last", "t_tokens", "tokens", "upstream", "wait_byte_sum",
        "wait_sum",
    )

    def __init__(self, aggregate: Aggregate, sink=None, *, delay: float = 0.0, buffer: int | None = None,
                 loss=None, rng: random.Random | None = None, name: str = "",
                 shaper: tuple[float | None, int, float | None] | None = None) -> None:
        """``shaper``: the flow's own (Max Sustained Rate b/s, Max Traffic Burst, Peak Rate b/s) its CM
        shapes its requests with, when it is not the aggregate's one flow (a Low Latency aggregate's
        members: a rate of None, not shaped); None: the aggregate's."""
        up = aggregate.upstream
        p = up.p
        self.aggregate = aggregate
        self.upstream = up
        self.engine = up.engine
        self.sink = sink
        self.name = name
        self.delay = delay  # CMTS -> far end
        self.limit = buffer
        self.loss = None if loss is None or isinstance(loss, NoLoss) else loss
        self.rng = rng or up.rng
        self.frame = up.frame
        self.per_frame = up.per_frame
        self.slot = up.slot
        self.prep = p.burst_preparation
        self.delivery = p.delivery_delay
        self.frame_overhead = ETHERNET_OVERHEAD + p.mac_header  # bytes a packet takes as a MAC frame
        # the CM's own request shaper (bytes/s of MAC frames, as the CMTS's)
        self.rate, self.peak, self.burst = aggregate.rate, aggregate.peak, aggregate.burst
        if shaper is not None:
            pay = (p.mean_frame + p.mac_header) / p.mean_frame
            rate, burst, peak = shaper
            self.rate = rate * pay / 8 if rate else None
            self.peak = peak * pay / 8 if peak else None
            self.burst = burst
        self.on_depart = None  # called with (pkt, frame bytes) as a packet leaves the queue (a dual queue's owner)
        self.tokens = float(self.burst)
        self.t_tokens = 0.0
        self.queue: deque = deque()  # (pkt, frame bytes, arrival time)
        self.qbytes = 0  # MAC-frame bytes queued (the buffer's count), the head's sent part included
        self.charged = 0
        self.head_sent = 0  # bytes of the head frame already sent as fragments
        self.backlog = 0  # bytes the CMTS holds requests for (the scheduler's copy)
        self.req_pipeline = 0  # bytes requested and not yet granted (the CM's copy)
        self.pending_removal: deque = deque()  # (time the MAP reaches the CM, bytes it granted)
        self.grants: deque = deque()  # (time the MAP reaches the CM, prep time, bytes) not yet prepared
        # the contention opportunities known and not used (times, sorted): the MAPs the CMTS has built ahead
        # (a MAP is built map_lead before it starts, so two can be pending)
        self.opportunities: deque = deque()
        self.accepted = self.dropped = self.lost = 0
        self.measured = 0
        self.wait_sum = 0.0
        self.wait_byte_sum = 0.0
        self.measure_from = 0.0
        self.t_last = 0.0
        self.bytes_sent = 0
        self.requests_contention = self.requests_piggyback = self.collisions = 0
        self.line: deque = deque()  # deliveries, in order (hfcprov.sim.engine.Engine.queue)
        self.hist = LatencyHistogram()
        aggregate.flows.append(self)

    # -- Link interface -----------------------------------------------------------------------------------------
    def waiting_bytes(self) -> int:
        return self.qbytes

    def in_burst(self) -> int:
        """MAC-frame bytes of the packet the CM has begun to send (0: none): it has left the AQM queue."""
        return self.queue[0][1] if self.head_sent else 0

    def has_room(self, size: int) -> bool:
        return self.limit is None or self.qbytes - self.in_burst() + size + self.frame_overhead <= self.limit

    def send(self, pkt) -> bool:
        frame = pkt.size + self.frame_overhead
        if self.limit is not None and self.qbytes - self.in_burst() + frame > self.limit:
            self.dropped += 1
            return False
        now = self.engine.now
        self._integrate(now)
        self.queue.append((pkt, frame, now))
        self.qbytes += frame
        self.accepted += 1
        chances = self.opportunities
        while chances and chances[0] <= now:
            chances.popleft()
        if chances:  # the first known opportunity still to come: use it
            self.engine.at(chances.popleft(), self._request, None)
        return True

    receive = send

    def _integrate(self, now: float) -> None:
        if now > self.t_last:
            if now >= self.measure_from:
                self.wait_byte_sum += self.qbytes * (now - max(self.t_last, self.measure_from))
            self.t_last = now

    # -- requests -------------------------------------------------------------------------------------------
    def _shape(self, want: int) -> int:
        """The CM's request shaper: at most the Max Sustained Rate's tokens (up to the burst) and
        the peak rate over the time since the last request."""
        if self.rate is None:
            return want
        now = self.engine.now
        elapsed = now - self.t_tokens
        self.t_tokens = now
        self.tokens = min(self.burst, self.tokens + elapsed * self.rate)
        shaped = min(want, int(self.tokens))
        if self.peak is not None:
            shaped = min(shaped, int(elapsed * self.peak))
        self.tokens = max(0.0, self.tokens - shaped)
        return shaped

    def _request(self, next_grant: int = 0) -> None:
        """Ask for what the CM holds beyond its outstanding requests and the next grant it knows of."""
        now = self.engine.now
        removal = self.pending_removal
        while removal and removal[0][0] <= now:
            self.req_pipeline = max(0, self.req_pipeline - removal.popleft()[1])
        if next_grant is None:  # a contention opportunity: the next known grant, if any
            next_grant = 0
            for seen, prep, nbytes in self.grants:
                if seen <= now:
                    next_grant = nbytes
                    break
            p = self.upstream.p
            if p.contention_collision and self.rng.random() < p.contention_collision:
                self.collisions += 1
                return
            piggyback = False
        else:
            piggyback = True
        want = self.qbytes - self.head_sent - self.req_pipeline - next_grant
        if want <= 0:
            return
        shaped = self._shape(want)
        if shaped <= 0:
            return
        self.req_pipeline += shaped
        if piggyback:
            self.requests_piggyback += 1
        else:
            self.requests_contention += 1
        self.engine.at(now + self.upstream.p.request_delay, self._request_arrives, shaped)

    def _request_arrives(self, nbytes: int) -> None:
        self.backlog += nbytes

    def contention_opportunity(self, when: float) -> None:
        """This MAP's contention frame for the flow: used if it holds data nothing asks for then (or
        when such data arrives before it)."""
        if self.qbytes - self.head_sent > self.req_pipeline:
            self.engine.at(when, self._request, None)
        else:
            self.opportunities.append(when)

    # -- grants ---------------------------------------------------------------------------------------------
    def granted(self, cm_sees: float, alloc: float, start: int, minislots: int, nbytes: int,
                first_frame_at: float) -> None:
        """The CMTS put a grant of ``minislots`` from minislot ``start`` of the MAP starting at ``alloc``."""
        prep_at = first_frame_at - self.prep
        self.pending_removal.append((cm_sees, nbytes))
        self.grants.append((cm_sees, prep_at, nbytes))
        self.engine.at(prep_at, self._burst, (alloc, start, minislots, nbytes))

    def _burst(self, arg) -> None:
        """Burst preparation: piggyback a request, then fill the grant from the queue and schedule what it
        carries to reach the CMTS frame by frame."""
        alloc, start, minislots, nbytes = arg
        self.grants.popleft()
        self._request(nbytes)
        now = self.engine.now
        self._integrate(now)
        q = self.queue
        slot, per_frame, frame = self.slot, self.per_frame, self.frame
        deliver_base = alloc + self.delivery
        used = 0
        first = alloc + (start // per_frame) * frame  # the grant's first frame
        measure_from = self.measure_from
        eng, line, sink = self.engine, self.line, self.sink
        loss, hist, delay = self.loss, self.hist, self.delay
        depart = self.on_depart
        while q and used < nbytes:
            pkt, fsize, arrived = q[0]
            if depart is not None and not self.head_sent:  # taken for this burst: it leaves the AQM queue
                depart(pkt, fsize)
            left = fsize - self.head_sent
            if used + left > nbytes:  # a fragment: the rest goes in a later grant
                self.head_sent += nbytes - used
                used = nbytes
                break
            used += left
            q.popleft()
            self.head_sent = 0
            self.qbytes -= fsize
            self.bytes_sent += fsize
            last_slot = start + -(-used // slot) - 1
            at = deliver_base + (last_slot // per_frame) * frame
            if arrived >= measure_from:
                self.measured += 1
                self.wait_sum += first - arrived
                hist.add(at - arrived)
            if loss is not None and loss.lost():
                self.lost += 1
                continue
            eng.queue(line, at + delay, sink.receive, pkt)
        if used < nbytes:
            self.aggregate.refund(alloc + ((start + minislots - 1) // per_frame) * frame, nbytes - used)

    def aqm_bytes(self) -> int:
        """The bytes DOCSIS-PIE's delay estimate counts: every byte not yet sent (the packet in the MAC's
        burst included), as Ethernet frames, without the DOCSIS MAC header."""
        return self.qbytes - self.head_sent - len(self.queue) * (self.frame_overhead - ETHERNET_OVERHEAD)

    def aqm_queue_bytes(self) -> int:
        """The AQM queue DOCSIS-PIE's enqueue checks count (a third of the buffer, two packets): the packets
        not yet taken for a burst, as Ethernet frames."""
        taken = 1 if self.head_sent else 0
        return (self.qbytes - self.in_burst()
                - (len(self.queue) - taken) * (self.frame_overhead - ETHERNET_OVERHEAD))

    def aqm_size(self, size: int) -> int:
        """The bytes DOCSIS-PIE counts for an arriving IP packet of ``size``: its Ethernet frame, as its
        queue counts (and the dual queue's, ``hfcprov.sim.aqm.link.LowLatencyCm``)."""
        return size + ETHERNET_OVERHEAD

    def aqm_delay(self) -> float:
        """DOCSIS-PIE's queue delay estimate (MULPI Annex M, qdelaySingle): the bytes the request shaper's
        MSR tokens cover leave at the peak rate, the rest at the sustained rate, both as configured (they
        count Ethernet frames, MULPI C.2.2.7.2, as the queue bytes do; not the rates the CMTS grants MAC
        frames at). The tokens are the shaper's as its last request left them (its bucket is brought up
        to date when it shapes a request, as docsis-ns3's CM does): refilled to the instant they read up
        to one inter-request time of the rate more (2 ms: 500 B at 2 Mb/s, 1 ms off the estimate), and
        PIE held the queue that much longer."""
        from hfcprov.queue.pie import qdelay_estimate

        nbytes = self.aqm_bytes()
        p = self.upstream.p
        if self.rate is None:
            return nbytes * 8.0 / p.capacity
        bits = 8.0 * p.mean_frame / (p.mean_frame + p.mac_header)  # per MAC-frame byte/s: configured b/s
        peak = self.peak * bits if self.peak else p.capacity
        return qdelay_estimate(nbytes, self.rate * bits, peak, min(self.burst, self.tokens))

    def mac_stats(self) -> dict:
        """What ``RunResult.extra["mac"]`` reports: the upstream latency (s) and the requests."""
        return {"upstream_latency": self.hist.stats(), "requests_piggyback": self.requests_piggyback,
                "requests_contention": self.requests_contention, "collisions": self.collisions,
                "maps": self.upstream.maps}


def make_flow(engine, profile: ModemProfile, *, sink, delay: float, buffer: int | None, rate: float | None,
              burst: int, peak: float | None, loss, seed) -> CmFlow:
    """One CM with one service flow on its own upstream (the scenario's), seeded from ``seed``."""
    upstream = Upstream(engine, profile, random.Random(f"mulpi-{seed}"))
    aggregate = Aggregate(upstream, rate, burst, peak)
    return CmFlow(aggregate, sink, delay=delay, buffer=buffer, loss=loss, name="cm0")


def make_low_latency(engine, profile: ModemProfile, *, sink, delay: float, rate: float, burst: int,
                     peak: float | None, classic_rate: float | None, weight: int | None,
                     pgs: tuple[float, float | None] | None, loss, seed) -> tuple[CmFlow, CmFlow]:
    """One CM with a Low Latency aggregate (its classic and low-latency flows) on its own upstream:
    ``(classic, low_latency)``. The CMTS grants by the aggregate's bucket (``rate``, ``burst``, ``peak``),
    split by ``weight`` with ``pgs`` (Guaranteed Grant Rate b/s, Interval s or None) proactive grants to
    the low-latency flow; the CM shapes the classic flow's requests by its own ``classic_rate`` (None: not
    shaped, as docsis-ns3's aggregate without classic QoS parameters), never the low-latency flow's. The
    queues' limits are the dual queue's (``hfcprov.sim.aqm.link.LowLatencyCm``), not the flows'."""
    upstream = Upstream(engine, profile, random.Random(f"mulpi-{seed}"))
    aggregate = Aggregate(upstream, rate, burst, peak, weight=weight or DEFAULT_WEIGHT, pgs=pgs)
    classic = CmFlow(aggregate, sink, delay=delay, loss=loss, name="cm0.classic",
                     shaper=(classic_rate, burst, None))
    ll = CmFlow(aggregate, sink, delay=delay, loss=loss, name="cm0.ll", shaper=(None, 0, None))
    aggregate.low_latency = ll
    return classic, ll
