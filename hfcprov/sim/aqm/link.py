"""Simulator hops with an AQM: the service flow's shaper and buffer with DOCSIS-PIE or the dual queue.

The algorithms are ``hfcprov.queue``'s (pure queue objects, no clock); this module is the
simulator's glue that puts them on a link in virtual time.

Both keep the ``Link`` surface (``send``/``receive``, ``waiting_bytes``, the
counters, ``measure_from``; see ``hfcprov.sim``), so the rest of the simulator
does not know which queue it talks to.

``PieLink`` is the token-bucket ``Link`` with DOCSIS-PIE in front of its buffer.
One FIFO keeps departures deterministic, so PIE costs no events: its 16 ms
updates run lazily when a packet arrives, each with the queue as it was at the
update instant (known from the scheduled start times), which gives exactly what
a timer would.

``DualQueueLink`` serves two queues whose order is decided at departure (the
low-latency queue overtakes the classic one), so it schedules one departure
event per packet: dequeue by the scheduler, then the token buckets, the channel,
plant loss and propagation as ``Link`` does.
"""

from __future__ import annotations

import random
from dataclasses import replace
from heapq import heappush

from hfcprov.queue.dualq import DROPPED, LOW_LATENCY, LOW_LATENCY_MARKED, SANCTIONED, DualQParams, DualQueue
from hfcprov.queue.grant import ETHERNET_OVERHEAD
from hfcprov.queue.ecn import CE, DSCP_NQB
from hfcprov.queue.pie import AqmConfigError, DocsisPie, PieParams, qdelay_estimate
from hfcprov.queue.select import dualq_params, parse_params, pie_params
from hfcprov.sim.link import Link
from hfcprov.sim.packet import PROBE


def _pct(xs: list, q: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, round(q / 100 * (len(s) - 1)))]


class PieLink(Link):
    """``Link`` (token bucket + byte buffer) with DOCSIS-PIE deciding early drops."""

    __slots__ = ("pie", "pie_peak")

    def __init__(self, engine, sink=None, *, pie: PieParams | None = None, rng: random.Random | None = None,
                 **kw) -> None:
        super().__init__(engine, sink, **kw)
        self.pie = DocsisPie(pie, self.limit, rng or random.Random(0))
        # bytes the MSR bucket covers leave at the peak rate, or the channel's with no peak
        self.pie_peak = (self.peak or self.capacity) * 8.0

    @property
    def early_drops(self) -> int:
        return self.pie.early_drops

    def aqm_stats(self) -> dict:
        """What ``RunResult.extra["aqm"]`` reports for this hop."""
        return {"aqm": "docsis-pie", "early_drops": self.pie.early_drops, "drop_prob": self.pie.drop_prob,
                "latency_target": self.pie.p.latency_target}

    def qdelay_at(self, t: float) -> float:
        """DOCSIS-PIE's estimate of the queue delay at time ``t`` (>= the last arrival)."""
        q = 0
        for start, wire in self.waiting:
            if start > t:
                q += wire
        if not q:
            return 0.0
        rate = self.rate
        if rate is None:
            return q / self.capacity
        tokens = self.tokens
        if self.t_tokens < t:
            tokens = min(self.burst, tokens + (t - self.t_tokens) * rate)
        return qdelay_estimate(q, rate * 8.0, self.pie_peak, max(0.0, tokens))

    def send(self, pkt) -> bool:
        now = self.engine.now
        pie = self.pie
        if pie.next_update <= now:
            pie.advance(now, self.qdelay_at)
        queued = self.waiting_bytes()
        wire = pkt.size + self.overhead
        limit = self.limit
        if limit is not None and queued + wire > limit:
            self.dropped += 1
            return False
        if pie.drop_early(wire, queued):
            self.dropped += 1
            return False
        return Link.send(self, pkt)

    receive = send


class DualQueueLink(Link):
    """An aggregate service flow with the LLD dual queue: scheduler, shaper, channel, delay.

    A ``Link`` for its token buckets, channel, loss and sink; its own queue and departures.
    """

    __slots__ = ("busy", "c_waits", "l_waits", "nqb_probes", "qd")

    def __init__(self, engine, sink=None, *, capacity: float, rate: float, delay: float = 0.0,
                 burst: int | None = None, peak: float | None = None, peak_burst: int = 1522,
                 overhead: int = 0, loss=None, classic_buffer: int | None = None,
                 ll_buffer: int | None = None, params: DualQParams | None = None,
                 ll_rate: float | None = None, rng: random.Random | None = None, name: str = "",
                 nqb_probes: bool = False) -> None:
        super().__init__(engine, sink, capacity=capacity, delay=delay, buffer=classic_buffer, rate=rate,
                         burst=burst, peak=peak, peak_burst=peak_burst, overhead=overhead, loss=loss, name=name)
        self.qd = DualQueue(rate, classic_buffer, ll_buffer, params, ll_rate, rng=rng or random.Random(0))
        self.limit = self.qd.classic_limit
        self.nqb_probes = nqb_probes  # probes and voice carry the NQB DSCP: the low-latency queue
        self.busy = False
        self.l_waits: list = []  # queueing delay of each low-latency packet sent after measure_from
        self.c_waits: list = []

    @property
    def early_drops(self) -> int:
        return self.qd.early_drops

    def aqm_stats(self) -> dict:
        """What ``RunResult.extra["aqm"]`` reports for this hop (queue delays in seconds)."""
        qd = self.qd
        return {"aqm": "lld", "early_drops": qd.early_drops, "marks": qd.marks, "sanctioned": qd.sanctioned,
                "forced_drops": qd.forced_drops, "ll_packets": len(self.l_waits),
                "ll_delay_p50": _pct(self.l_waits, 50), "ll_delay_p99": _pct(self.l_waits, 99),
                "classic_delay_p50": _pct(self.c_waits, 50), "classic_delay_p99": _pct(self.c_waits, 99)}

    def waiting_bytes(self) -> int:
        return self.qd.c_bytes + self.qd.l_bytes

    def send(self, pkt) -> bool:
        engine = self.engine
        now = engine.now
        wire = pkt.size + self.overhead
        dscp = DSCP_NQB if self.nqb_probes and pkt.kind == PROBE else 0
        out = self.qd.enqueue(pkt, wire, now, pkt.flow, pkt.ecn, dscp)
        if out == DROPPED:
            self.dropped += 1
            return False
        if out == LOW_LATENCY_MARKED:
            pkt.ecn = CE
        elif out == SANCTIONED:
            pass  # it waits in the classic queue; its codepoint is left as it was
        self.accepted += 1
        if not self.busy:
            self.busy = True
            self._serve()
        return True

    receive = send

    def _tokens_ready(self, now: float, need: int) -> float:
        """The earliest time >= now the sustained (and peak) bucket hold ``need`` bytes."""
        t = now
        tok = min(self.burst, self.tokens + (now - self.t_tokens) * self.rate)
        if tok < need:
            t = now + (need - tok) / self.rate
        if self.peak is not None:
            ptok = min(self.peak_burst, self.ptokens + (now - self.t_ptokens) * self.peak)
            if ptok < need:
                t = max(t, now + (need - ptok) / self.peak)
        return t

    def _serve(self, _=None) -> None:
        engine = self.engine
        now = engine.now
        qd = self.qd
        if not len(qd):
            self.busy = False
            return
        # wait for the shaper before choosing, so a low-latency packet arriving meanwhile goes first
        need = min(qd.lq[0][1] if qd.lq else 1 << 30, qd.cq[0][1] if qd.cq else 1 << 30)
        ready = self._tokens_ready(now, need)
        if ready > now + 1e-12:
            engine.at(ready, self._serve)
            return
        pkt, wire, t_enq, low_latency = qd.dequeue(now)
        start = self._tokens_ready(now, wire)  # the other head may have been larger
        tok = min(self.burst, self.tokens + (start - self.t_tokens) * self.rate)
        self.tokens = tok - wire
        self.t_tokens = start
        if self.peak is not None:
            ptok = min(self.peak_burst, self.ptokens + (start - self.t_ptokens) * self.peak)
            self.ptokens = ptok - wire
            self.t_ptokens = start
        end = start + wire / self.capacity
        self.free_at = end
        wait = start - t_enq
        if t_enq >= self.measure_from:
            self.measured += 1
            self.wait_sum += wait
            (self.l_waits if low_latency else self.c_waits).append(wait)
        if start > self.measure_from:
            self.wait_byte_sum += wire * (start - max(t_enq, self.measure_from))
        engine.at(end, self._serve)
        loss = self.loss
        if loss is not None and loss.lost():
            self.lost += 1
            return
        engine.seq += 1
        route = self.route
        heappush(engine.heap, (end + self.delay, engine.seq,
                               route[pkt.flow] if route is not None else self.sink_receive, pkt, None))


def _seed_rng(sc) -> random.Random:
    return random.Random((sc.seed * 1_000_003) ^ 0xA0A0)  # its own stream: AQM coin tosses never shift others


def _params(sc, name: str):
    from hfcprov.sim.scenario import ScenarioError

    try:
        parsed = parse_params(sc.aqm_params, name)
        return pie_params(parsed) if name == "docsis-pie" else dualq_params(parsed)
    except AqmConfigError as err:
        raise ScenarioError(f"aqm_params: {err}") from None


def make_pie_link(engine, sc, sink, loss) -> PieLink:
    """``links.QUEUES["docsis-pie"]``: the shaped service flow with DOCSIS-PIE (``aqm_params``:
    ``PieParams`` fields, e.g. ``latency_target``)."""
    return PieLink(engine, sink, capacity=sc.channel or sc.peak or sc.rate, delay=sc.rtt / 2.0,
                   buffer=sc.buffer, rate=sc.rate, burst=sc.burst, peak=sc.peak, overhead=sc.overhead,
                   loss=loss, name="bottleneck", pie=_params(sc, "docsis-pie"), rng=_seed_rng(sc))


def make_dualq_link(engine, sc, sink, loss) -> DualQueueLink:
    """``links.QUEUES["lld"]``: the shaped flow as a Low Latency aggregate service flow
    (``sc.buffer`` is the classic queue; ``aqm_params``: see ``hfcprov.queue.select``)."""
    params, ll_buffer, ll_rate, nqb = _params(sc, "lld")
    return DualQueueLink(engine, sink, capacity=sc.channel or sc.peak or sc.rate, rate=sc.rate,
                         delay=sc.rtt / 2.0, burst=sc.burst, peak=sc.peak, overhead=sc.overhead, loss=loss,
                         classic_buffer=sc.buffer, ll_buffer=ll_buffer, params=params,
                         ll_rate=ll_rate, rng=_seed_rng(sc), name="bottleneck", nqb_probes=nqb)


class PieCm:
    """DOCSIS-PIE in front of a request-grant cable modem (``mac: docsis``): the CM upstream
    RFC 8034 was written for, its queue drained by grants rather than at a fixed rate.

    The queue delay is estimated as the CM does, from its configured rate and the MSR
    bucket's tokens (the bytes the tokens cover at the peak or channel rate), never from the
    departures: the CM's ``aqm_delay()``, with ``has_room(size)``, ``aqm_queue_bytes()`` (the
    AQM queue the enqueue checks count; ``hfcprov.sim.mulpi``'s leaves out the packet already in
    a burst) and ``aqm_size(size)`` (a packet as that queue counts it), which both request-grant
    models (``hfcprov.sim.mac``, ``hfcprov.sim.mulpi``) give.
    Grants drain the queue between arrivals, so the 16 ms updates run on a timer. Everything but
    ``send`` is the wrapped CM's.
    """

    def __init__(self, cm, params: PieParams | None = None, rng: random.Random | None = None) -> None:
        object.__setattr__(self, "cm", cm)
        object.__setattr__(self, "pie", DocsisPie(params, cm.limit, rng or random.Random(0)))
        cm.engine.at(self.pie.next_update, self._tick)

    def __getattr__(self, name):
        return getattr(self.cm, name)

    def __setattr__(self, name, value) -> None:
        setattr(self.cm, name, value)  # e.g. measure_from

    @property
    def early_drops(self) -> int:
        return self.pie.early_drops

    def aqm_stats(self) -> dict:
        return {"aqm": "docsis-pie", "early_drops": self.pie.early_drops, "drop_prob": self.pie.drop_prob,
                "latency_target": self.pie.p.latency_target, "on": "request-grant CM"}

    def _tick(self, _=None) -> None:
        pie = self.pie
        pie.update(self.cm.aqm_delay())
        pie.next_update += pie.p.interval
        self.cm.engine.at(pie.next_update, self._tick)

    def send(self, pkt) -> bool:
        cm = self.cm
        if cm.has_room(pkt.size) and self.pie.drop_early(cm.aqm_size(pkt.size), cm.aqm_queue_bytes()):
            cm.dropped += 1
            return False
        return cm.send(pkt)

    receive = send


class LowLatencyCm:
    """A Low Latency aggregate on the request-grant upstream (``mac: docsis``, ``aqm: lld``): the CM's
    dual queue in front of its two service flows (``hfcprov.sim.mulpi``), each drained by its own grants.

    Each packet is classified (ECT(1)/CE, or the NQB DSCP the probes carry with ``nqb_probes``), then the
    dual queue decides (``DualQueue.admit``: the Immediate AQM's CE marks and queue protection on the
    low-latency side, the coupled DOCSIS-PIE's drops on the classic side) and the packet joins its flow's
    queue; ``departed`` when its grant carries it. The classic delay estimate is MULPI Annex O's (the
    classic bytes at the rate the low-latency flow leaves), updated every 16 ms on a timer as grants
    drain the queues between arrivals; the low-latency one the CM's virtual queue (Annex N.3).
    The ``Link`` surface sums both flows."""

    def __init__(self, engine, classic, ll, qd: DualQueue, nqb_probes: bool = False) -> None:
        self.engine, self.classic, self.ll, self.qd = engine, classic, ll, qd
        self.nqb_probes = nqb_probes
        self.accepted = self.dropped = 0
        classic.on_depart = self._departed_classic
        ll.on_depart = self._departed_ll
        engine.at(qd.pie.next_update, self._tick)

    def _tick(self, _=None) -> None:
        qd = self.qd
        qd.update(self.engine.now)
        self.engine.at(qd.pie.next_update, self._tick)

    def _departed_classic(self, pkt, _frame) -> None:
        self.qd.departed(pkt.size + ETHERNET_OVERHEAD, False)

    def _departed_ll(self, pkt, _frame) -> None:
        self.qd.departed(pkt.size + ETHERNET_OVERHEAD, True)

    def send(self, pkt) -> bool:
        size = pkt.size + ETHERNET_OVERHEAD  # what the AQM counts: the Ethernet frame, no MAC header
        dscp = DSCP_NQB if self.nqb_probes and pkt.kind == PROBE else 0
        out = self.qd.admit(size, self.engine.now, pkt.flow, pkt.ecn, dscp)
        if out == DROPPED:
            self.dropped += 1
            return False
        if out == LOW_LATENCY_MARKED:
            pkt.ecn = CE
        self.accepted += 1
        (self.ll if out in (LOW_LATENCY, LOW_LATENCY_MARKED) else self.classic).send(pkt)
        return True

    receive = send

    def waiting_bytes(self) -> int:
        return self.classic.waiting_bytes() + self.ll.waiting_bytes()

    def __getattr__(self, counter):  # lost, measured, wait_sum, wait_byte_sum: both flows
        if counter in ("lost", "measured", "wait_sum", "wait_byte_sum"):
            return getattr(self.classic, counter) + getattr(self.ll, counter)
        raise AttributeError(counter)

    @property
    def measure_from(self) -> float:
        return self.classic.measure_from

    @measure_from.setter
    def measure_from(self, t: float) -> None:
        self.classic.measure_from = self.ll.measure_from = t

    @property
    def early_drops(self) -> int:
        return self.qd.early_drops

    def aqm_stats(self) -> dict:
        qd = self.qd
        c, ll = self.classic.hist, self.ll.hist
        return {"aqm": "lld", "on": "request-grant CM", "early_drops": qd.early_drops, "marks": qd.marks,
                "sanctioned": qd.sanctioned, "forced_drops": qd.forced_drops, "ll_packets": ll.n,
                "ll_delay_p50": ll.quantile(0.5), "ll_delay_p99": ll.quantile(0.99),
                "classic_delay_p50": c.quantile(0.5), "classic_delay_p99": c.quantile(0.99)}

    def mac_stats(self) -> dict:
        """``RunResult.extra["mac"]``: the classic flow's figures (the bulk upload's), and the low-latency
        flow's upstream latency and proactive grants beside them."""
        stats = self.classic.mac_stats()
        agg = self.classic.aggregate
        stats["ll_upstream_latency"] = self.ll.hist.stats()
        stats["ll_requests_piggyback"] = self.ll.requests_piggyback
        stats["ll_requests_contention"] = self.ll.requests_contention
        stats["pgs_minislots"] = agg.pgs_minislots
        return stats


def make_docsis_link(engine, sc, sink, loss):
    """``links.LINKS["docsis"]``: the request-grant CM, with DOCSIS-PIE when ``aqm: docsis-pie``, or a Low
    Latency aggregate's two flows and dual queue (``LowLatencyCm``) when ``aqm: lld`` on a DOCSIS 3.x
    profile, with ``pgs`` (Proactive Grant Service) on its low-latency flow."""
    from hfcprov.sim.mac_link import make_link, scenario_profile
    from hfcprov.sim.scenario import ScenarioError

    if sc.aqm == "lld":
        profile = scenario_profile(sc)
        if profile.docsis_version != "3.1":
            raise ScenarioError(f"aqm: lld on mac: docsis needs a DOCSIS 3.1 profile (Low Latency DOCSIS is DOCSIS "
                                f"3.1's), not {profile.name}")
        from hfcprov.sim.mulpi import make_low_latency

        params, ll_buffer, ll_rate, nqb = _params(sc, "lld")
        if "ll_estimator" not in (sc.aqm_params or {}):
            params = replace(params, ll_estimator="virtual")  # MULPI Annex N.3: the CM's upstream estimate
        pgs = (sc.pgs.rate, sc.pgs.interval) if sc.pgs is not None else None
        try:
            classic, ll = make_low_latency(engine, profile, sink=sink, delay=sc.rtt / 2.0, rate=sc.rate,
                                           burst=sc.burst, peak=sc.peak,
                                           classic_rate=(sc.aqm_params or {}).get("classic_rate"),
                                           weight=params.weight, pgs=pgs, loss=loss, seed=sc.seed)
        except ValueError as err:
            raise ScenarioError(str(err)) from None
        qd = DualQueue(sc.rate, sc.buffer, ll_buffer, params, ll_rate, rng=_seed_rng(sc))
        return LowLatencyCm(engine, classic, ll, qd, nqb)
    cm = make_link(engine, sc, sink, loss)
    if sc.aqm == "none":
        return cm
    if sc.aqm != "docsis-pie":
        raise ScenarioError(f"aqm: {sc.aqm} is not modelled on the request-grant CM (none, docsis-pie, lld)")
    return PieCm(cm, _params(sc, "docsis-pie"), _seed_rng(sc))
