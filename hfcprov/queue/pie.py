"""DOCSIS-PIE: the AQM every DOCSIS 3.1 cable modem runs on its upstream service flows.

Implemented from RFC 8034 (White, Pan 2017; Appendix A) and the DOCSIS 3.1 MULPI
specification's Annex M, which carries the same algorithm. What sets it apart
from plain PIE (RFC 8033):

- the queue delay is *estimated from the configured rates* (Max Sustained Rate,
  Peak Rate and the tokens in the MSR bucket) instead of measured from the
  departure rate: a CM knows its shaping rates, and grants make departures bursty;
- the update interval is 16 ms and the PI weights are A = 0.25, B = 2.5 (per s);
- the drop probability is scaled by packet size (byte mode, MEAN_PKTSIZE 1024 B),
  may reach PROB_LOW * MEAN_PKTSIZE / MIN_PKTSIZE so that even small packets can
  be dropped, and is auto-tuned in more steps (the table in ``DocsisPie.update``);
- burst tolerance is a small state machine: no early drop while the queue is under
  a third of the buffer; the first early drop starts a burst allowance of
  MAX_BURST (142 ms) with no further early drops; after BURST_RESET_TIMEOUT (1 s)
  of a quiet queue it goes back to the start;
- de-randomised drops: the per-packet probabilities are accumulated and no packet
  is dropped before the sum reaches PROB_LOW (0.85), one always is at PROB_HIGH (8.5).

Two objects: ``DocsisPie`` is the controller (the control path ``update`` and the
data path ``drop_early``), free of any queue; ``PieQueue`` is a plain FIFO
queue discipline around it (enqueue decision, dequeue, time-driven update), used
by the emulator's userspace stage. The simulator's ``PieLink`` drives the
controller directly (``hfcprov.sim.aqm.link``). Units: seconds, bytes, bits/s.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

from hfcprov.errors import HfcprovError

NO_BURST, IN_BURST, IN_BURST_PROTECTING = 0, 1, 2

# RFC 8034 drop-probability auto-tuning: below each bound, the PI step is divided by the factor.
_TUNE = ((1e-6, 2048.0), (1e-5, 512.0), (1e-4, 128.0), (1e-3, 32.0), (1e-2, 8.0), (1e-1, 2.0),
         (1.0, 0.5), (10.0, 0.125))
_TUNE_TOP = 0.03125


class AqmConfigError(HfcprovError, ValueError):
    """An AQM parameter is out of range."""


@dataclass(frozen=True)
class PieParams:
    """DOCSIS-PIE constants (RFC 8034 A.1); only ``latency_target`` is configurable in a
    config file (service flow TLV 24/25.40.2, in ms), the rest are the RFC's values."""

    latency_target: float = 0.010  # LATENCY_TARGET: AQM latency target
    alpha: float = 0.25  # A: weight of (qdelay - target), per second
    beta: float = 2.5  # B: weight of (qdelay - qdelay_old), per second
    interval: float = 0.016  # update interval of the drop probability
    max_burst: float = 0.142  # MAX_BURST: burst allowance after the first early drop
    burst_reset_timeout: float = 1.0  # quiet time before the burst state resets
    mean_pkt: int = 1024  # MEAN_PKTSIZE (bytes)
    min_pkt: int = 64  # MIN_PKTSIZE (bytes)
    prob_low: float = 0.85  # PROB_LOW
    prob_high: float = 8.5  # PROB_HIGH
    latency_low: float = 0.005  # LATENCY_LOW: below it (twice in a row) the probability decays
    latency_high: float = 0.200  # LATENCY_HIGH: above it the probability jumps by 2 %

    def __post_init__(self) -> None:
        if not self.latency_target > 0:
            raise AqmConfigError(f"DOCSIS-PIE: latency target must be > 0 s, got {self.latency_target!r}")
        if not self.interval > 0:
            raise AqmConfigError(f"DOCSIS-PIE: update interval must be > 0 s, got {self.interval!r}")
        if self.max_burst < 0 or self.burst_reset_timeout < 0:
            raise AqmConfigError("DOCSIS-PIE: max_burst and burst_reset_timeout must be >= 0")
        if not 0 < self.min_pkt <= self.mean_pkt:
            raise AqmConfigError("DOCSIS-PIE: need 0 < min_pkt <= mean_pkt")

    @property
    def max_prob(self) -> float:
        """The cap on drop_prob: high enough that a MIN_PKTSIZE packet's scaled probability
        still reaches PROB_LOW (13.6 with the RFC's constants)."""
        return self.prob_low * self.mean_pkt / self.min_pkt


def qdelay_estimate(queue_bytes: float, msr: float, peak: float | None = None, msr_tokens: float = 0.0) -> float:
    """RFC 8034's queue-delay estimate (seconds) from the configured rates (bits/s).

    The bytes the Max Sustained Rate bucket still covers leave at the peak rate, the
    rest at the sustained rate. ``peak`` None: those bytes leave at once (no peak
    limit is configured; the caller may pass the channel rate instead).
    """
    if queue_bytes <= 0 or not msr:
        return 0.0
    if queue_bytes <= msr_tokens:
        return queue_bytes * 8.0 / peak if peak else 0.0
    d = (queue_bytes - msr_tokens) * 8.0 / msr
    if peak and msr_tokens > 0:
        d += msr_tokens * 8.0 / peak
    return d


class DocsisPie:
    """The DOCSIS-PIE controller of one service flow: no queue of its own.

    The owner calls ``update(qdelay)`` every ``params.interval`` (or ``advance``,
    which catches up on every interval boundary passed, asking ``qdelay_at(t)``
    for the estimate at each) and ``drop_early(size, queue_bytes)`` for each
    arriving packet the buffer has room for.
    """

    __slots__ = ("accu_prob", "buffer_size", "burst_allowance", "burst_reset", "burst_reset_limit",
                 "burst_state", "drop_prob", "early_drops", "next_update", "p", "qdelay", "qdelay_old",
                 "rng", "updates")

    def __init__(self, params: PieParams | None = None, buffer_size: int | None = None,
                 rng: random.Random | None = None, start: float = 0.0) -> None:
        self.p = params or PieParams()
        self.buffer_size = buffer_size  # BUFFER_SIZE: None means unlimited (no one-third rule)
        self.rng = rng or random.Random(0)
        self.drop_prob = 0.0
        self.accu_prob = 0.0
        self.qdelay = 0.0  # the estimate at the last update
        self.qdelay_old = 0.0
        self.burst_allowance = 0.0
        self.burst_state = NO_BURST
        self.burst_reset = 0
        self.burst_reset_limit = int(self.p.burst_reset_timeout / self.p.interval + 1e-9)
        self.next_update = start + self.p.interval
        self.early_drops = 0
        self.updates = 0

    # -- control path ------------------------------------------------------------
    def update(self, qdelay: float) -> None:
        """One control-path step with this interval's queue-delay estimate (seconds)."""
        p = self.p
        self.updates += 1
        old = self.qdelay_old
        if self.burst_allowance > 0:
            self.drop_prob = 0.0
        else:
            step = p.alpha * (qdelay - p.latency_target) + p.beta * (qdelay - old)
            prob = self.drop_prob
            for bound, factor in _TUNE:
                if prob < bound:
                    step /= factor
                    break
            else:
                step /= _TUNE_TOP
            if prob >= 0.1 and step > 0.02:  # no big upward jumps once it is high
                step = 0.02
            prob += step
            if qdelay < p.latency_low and old < p.latency_low:
                prob *= 0.98  # congestion gone: decay exponentially
            elif qdelay > p.latency_high:
                prob += 0.02
            if prob < 0.0:
                prob = 0.0
            elif prob > p.max_prob:
                prob = p.max_prob
            self.drop_prob = prob
        if self.burst_allowance < p.interval:
            self.burst_allowance = 0.0
        else:
            self.burst_allowance -= p.interval
        half = 0.5 * p.latency_target
        if qdelay < half and old < half and self.drop_prob == 0.0 and self.burst_allowance == 0.0:
            if self.burst_state == IN_BURST_PROTECTING:
                self.burst_state = IN_BURST
                self.burst_reset = 0
            elif self.burst_state == IN_BURST:
                self.burst_reset += 1
                if self.burst_reset > self.burst_reset_limit:
                    self.burst_reset = 0
                    self.burst_state = NO_BURST
        elif self.burst_state == IN_BURST:
            self.burst_reset = 0
        self.qdelay_old = qdelay
        self.qdelay = qdelay

    def settled(self) -> bool:
        """Nothing left to decay: further updates with an empty queue change nothing."""
        return (self.drop_prob == 0.0 and self.burst_allowance == 0.0 and self.burst_state == NO_BURST
                and self.qdelay_old == 0.0)

    def advance(self, now: float, qdelay_at) -> None:
        """Run every update whose time is <= ``now``; ``qdelay_at(t)`` gives the estimate at t.

        An owner that knows its queue's past (the simulator's deterministic link) gets
        exactly what a timer every interval would give, without the timer events.
        """
        interval = self.p.interval
        t = self.next_update
        while t <= now:
            q = qdelay_at(t)
            if q == 0.0 and self.settled():
                # idle and settled: skip to the last boundary <= now (state stays as it is)
                t += interval * int((now - t) / interval)
                self.updates += 1
                t += interval
                break
            self.update(q)
            t += interval
        self.next_update = t

    # -- data path ---------------------------------------------------------------
    def drop_early(self, size: int, queue_bytes: float) -> bool:
        """Whether to drop an arriving packet of ``size`` bytes early; ``queue_bytes``
        is the queue ahead of it (the buffer has already been checked for room)."""
        if self.burst_allowance > 0:
            return False
        p = self.p
        if self.drop_prob == 0.0:
            self.accu_prob = 0.0
        if self.burst_state == NO_BURST:
            if self.buffer_size is not None and queue_bytes < self.buffer_size / 3.0:
                return False
            self.burst_state = IN_BURST
        prob = self.drop_prob * size / p.mean_pkt
        prob = min(prob, p.prob_low)
        self.accu_prob += prob
        if self.qdelay_old < 0.5 * p.latency_target and self.drop_prob < 0.2:
            return False  # safeguard: little delay and a small probability
        if queue_bytes <= 2 * p.mean_pkt:
            return False  # a couple of packets: never worth a drop
        if self.accu_prob < p.prob_low:
            return False  # de-randomisation: not yet
        if self.accu_prob < p.prob_high and self.rng.random() >= prob:
            return False
        self.accu_prob = 0.0
        self.early_drops += 1
        if self.burst_state == IN_BURST:
            self.burst_state = IN_BURST_PROTECTING
            self.burst_allowance = p.max_burst
        return True


class ByteFifo:
    """A byte-limited FIFO queue discipline (drop-tail): ``enqueue(item, size, now) -> bool``,
    ``dequeue(now) -> (item, size, enqueued_at) | None``, ``update(now)`` (nothing to do here)."""

    def __init__(self, buffer: int | None) -> None:
        self.limit = buffer
        self.items: deque = deque()
        self.bytes = 0
        self.forced_drops = 0
        self.early_drops = 0

    def __len__(self) -> int:
        return len(self.items)

    def update(self, now: float) -> None:
        pass

    def admit(self, size: int, now: float) -> bool:
        """Whether a packet of ``size`` bytes may join the queue (drop-tail: if it fits)."""
        if self.limit is not None and self.bytes + size > self.limit:
            self.forced_drops += 1
            return False
        return True

    def enqueue(self, item, size: int, now: float) -> bool:
        if not self.admit(size, now):
            return False
        self.items.append((item, size, now))
        self.bytes += size
        return True

    def dequeue(self, now: float):
        if not self.items:
            return None
        entry = self.items.popleft()
        self.bytes -= entry[1]
        return entry


class PieQueue(ByteFifo):
    """A FIFO byte queue with DOCSIS-PIE: a plain queue discipline.

    ``enqueue(item, size, now) -> bool`` (False: dropped, by the buffer or early),
    ``dequeue(now) -> (item, size, enqueued_at) | None``, ``update(now)`` runs the
    control path when an interval has passed (the owner calls it, e.g. from its
    loop). ``delay(nbytes)`` is the owner's queue-delay estimator: by default the
    bytes at the sustained ``rate``; a shaper that knows its tokens passes its own.
    """

    def __init__(self, rate: float, buffer: int | None, params: PieParams | None = None,
                 peak: float | None = None, rng: random.Random | None = None, start: float = 0.0,
                 delay=None) -> None:
        if not rate or rate <= 0:
            raise AqmConfigError("DOCSIS-PIE: the service flow needs a Max Sustained Rate > 0")
        super().__init__(buffer)
        self.rate = rate
        self.peak = peak
        self.pie = DocsisPie(params, buffer, rng, start)
        self.delay = delay or (lambda nbytes: nbytes * 8.0 / self.rate)

    @property
    def early_drops(self) -> int:
        return self.pie.early_drops

    @early_drops.setter
    def early_drops(self, _value) -> None:
        pass  # counted by the controller

    def update(self, now: float) -> None:
        self.pie.advance(now, lambda _t: self.delay(self.bytes))

    def admit(self, size: int, now: float) -> bool:
        self.update(now)
        return super().admit(size, now) and not self.pie.drop_early(size, self.bytes)
