"""Low Latency DOCSIS: the dual queue with the coupled AQM (RFC 9332 as MULPI applies it).

One aggregate service flow holds two queues: *classic* (DOCSIS-PIE, whose drop
probability is the square of a base probability p') and *low latency* (L4S
traffic: ECT(1) or CE, or a DSCP MULPI's default classifier sends there).

- Low-latency side: an immediate AQM marks CE with the larger of its *native*
  probability, a ramp from MINTH to MAXTH = MINTH + 2^LG_RANGE ns of the queue
  delay (defaults MAXTH 1 ms, LG_RANGE 19, MINTH at least two 2000-byte frames at
  the rate), and the *coupled* probability k * p' (coupling factor k = 2). Marks
  are de-randomised (a running sum that marks each time it passes 1). A Not-ECT packet
  (classified by its NQB DSCP) cannot be marked and is not dropped either: NQB traffic
  is sparse by definition, and queue protection deals with any that is not.
- Classic side: DOCSIS-PIE on the classic queue delay, estimated from the rate
  left after the low-latency queue's share; drop probability p' squared.
- Scheduling: weighted deficit round robin, the low-latency queue getting
  ``weight``/256 (default 230) of the rate while both have data; work-conserving.
- Queue protection (``hfcprov.queue.qprotect``) sanctions packets of flows that
  build the low-latency queue, into the classic queue.

``DualQueue`` is a pure queue discipline: ``enqueue(item, size, now, flow, ecn,
dscp) -> outcome`` and ``dequeue(now) -> (item, size, enqueued_at, low_latency)``;
the owner shapes and times the departures.
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass, field

from hfcprov.queue.ecn import CE, DSCP_NQB, ECT1, NOT_ECT
from hfcprov.queue.pie import AqmConfigError, DocsisPie, PieParams
from hfcprov.queue.qprotect import QProtectParams, QueueProtection, flow_hash

# enqueue outcomes
DROPPED, CLASSIC, LOW_LATENCY, LOW_LATENCY_MARKED, SANCTIONED = 0, 1, 2, 3, 4
_RANGE_CAP = 0.065535  # MAXTH is a 16-bit count of microseconds


@dataclass(frozen=True)
class DualQParams:
    """MULPI defaults; the aggregate service flow's TLVs override them where the file sets them."""

    coupling: float = 2.0  # k: AQM coupling factor (the TLV carries tenths)
    weight: int = 230  # inter-SF scheduling weight of the low-latency SF, of 256
    iaqm_max_th: float = 0.001  # IAQM maximum threshold (s)
    iaqm_lg_range: int = 19  # IAQM ramp range: 2^19 ns
    iaqm: bool = True  # immediate AQM on the low-latency queue
    max_frame: int = 2000  # MAX_FRAME_SIZE (bytes): the ramp floor is two of them
    quantum: int = 1500  # DRR quantum (bytes) per round, split by weight
    # EWMA gain of the measured low-latency rate that the classic delay estimate subtracts
    # (1: each interval's own count, as MULPI Annex O; the default smooths it, see docs/sim.md)
    ll_rate_gain: float = 0.125
    ll_dscp: tuple = (DSCP_NQB,)
    queue_protection: bool = True
    qprotect: QProtectParams = field(default_factory=QProtectParams)
    classic: PieParams = field(default_factory=PieParams)

    def __post_init__(self) -> None:
        if not 1 <= self.weight <= 255:
            raise AqmConfigError(f"dual queue: scheduling weight must be in 1..255, got {self.weight}")
        if not 0 <= self.coupling <= 25.5:
            raise AqmConfigError(f"dual queue: coupling factor must be in 0..25.5, got {self.coupling}")
        if not 0 <= self.iaqm_lg_range <= 25 or self.iaqm_max_th <= 0:
            raise AqmConfigError("dual queue: IAQM range exponent in 0..25 and max threshold > 0")


def ramp_thresholds(max_th: float, lg_range: int, max_frame: int, rate: float) -> tuple[float, float]:
    """(MINTH, MAXTH) of the immediate AQM ramp: MINTH = MAXTH - range, but at least
    the time two maximum frames take at ``rate`` (slow links), capped at 65.535 ms."""
    span = (1 << lg_range) * 1e-9
    floor = min(_RANGE_CAP, 2 * max_frame * 8.0 / rate) if rate else 0.0
    lo = max(max_th - span, floor)
    return lo, min(lo + span, _RANGE_CAP)


class DualQueue:
    """The dual-queue coupled AQM of one aggregate service flow (pure: no clock, no shaper)."""

    def __init__(self, rate: float, classic_buffer: int | None = None, ll_buffer: int | None = None,
                 params: DualQParams | None = None, ll_rate: float | None = None,
                 classic_rate: float | None = None, rng: random.Random | None = None,
                 start: float = 0.0, salt: int = 0) -> None:
        if not rate or rate <= 0:
            raise AqmConfigError("dual queue: the aggregate service flow needs a Max Sustained Rate > 0")
        self.p = p = params or DualQParams()
        self.rate = rate  # AMSR
        self.ll_rate = ll_rate  # MSR of the low-latency SF (None: unlimited)
        self.classic_rate = classic_rate
        self.max_rate = min(rate, ll_rate) if ll_rate else rate
        # MULPI defaults: classic 100 ms at the rate, low latency 10 ms (at least 20 frames)
        self.classic_limit = classic_buffer if classic_buffer is not None else int(0.1 * rate / 8)
        self.ll_limit = ll_buffer if ll_buffer is not None else max(int(0.010 * rate / 8), 20 * p.max_frame)
        self.min_th, self.max_th = ramp_thresholds(p.iaqm_max_th, p.iaqm_lg_range, p.max_frame, self.max_rate)
        self.pie = DocsisPie(p.classic, self.classic_limit, rng or random.Random(0), start)
        self.qp = QueueProtection(p.qprotect, self.max_th) if p.queue_protection else None
        self.salt = salt
        self.cq: deque = deque()
        self.lq: deque = deque()
        self.c_bytes = 0
        self.l_bytes = 0
        self.prob_cl = 0.0  # coupled marking probability k * p'
        self.count = 0.0  # de-randomised marking accumulator
        self.interval_bits_l = 0  # low-latency bits sent since the last update
        self.ll_rate_est = 0.0  # bits/s: the low-latency rate the classic estimate subtracts
        self.c_def = 0.0
        self.l_def = 0.0
        self.turn_ll = True
        self.l_quantum = p.quantum * p.weight / 256.0
        self.c_quantum = p.quantum - self.l_quantum
        self.marks = 0
        self.forced_drops = 0

    # -- classification and estimates ---------------------------------------------
    def classify(self, ecn: int, dscp: int = 0) -> bool:
        """True: the low-latency queue (ECT(1) or CE, or a low-latency DSCP)."""
        return ecn == ECT1 or ecn == CE or (dscp in self.p.ll_dscp)

    def qdelay_l(self, extra: int = 0) -> float:
        return (self.l_bytes + extra) * 8.0 / self.max_rate

    def qdelay_c(self) -> float:
        """Classic queue delay from the rate the low-latency side leaves it (MULPI Annex O)."""
        p = self.p
        r_l = self.rate * p.weight / 256.0
        if self.ll_rate:
            r_l = min(r_l, self.ll_rate)
        r_l = min(r_l, self.ll_rate_est)
        r_c = self.rate - r_l
        if self.classic_rate:
            r_c = min(r_c, self.classic_rate)
        return self.c_bytes * 8.0 / r_c if r_c > 0 else 0.0

    def prob_native(self, qdelay: float) -> float:
        if qdelay >= self.max_th:
            return 1.0
        if qdelay > self.min_th:
            return (qdelay - self.min_th) / (self.max_th - self.min_th)
        return 0.0

    @property
    def early_drops(self) -> int:
        return self.pie.early_drops

    @property
    def sanctioned(self) -> int:
        return self.qp.sanctioned if self.qp is not None else 0

    # -- control path --------------------------------------------------------------
    def update(self, now: float) -> None:
        """Run the classic PIE updates due by ``now`` and re-derive the coupled probability."""
        pie = self.pie
        interval = pie.p.interval
        gain = self.p.ll_rate_gain
        while pie.next_update <= now:
            self.ll_rate_est += gain * (self.interval_bits_l / interval - self.ll_rate_est)
            q = self.qdelay_c()
            if q == 0.0 and pie.settled():
                pie.next_update += interval * (int((now - pie.next_update) / interval) + 1)
                self.interval_bits_l = 0
                break
            pie.update(q)
            self.interval_bits_l = 0
            pie.next_update += interval
            self.prob_cl = min(self.p.coupling * math.sqrt(pie.drop_prob), 1.0)

    # -- data path -----------------------------------------------------------------
    def enqueue(self, item, size: int, now: float, flow=0, ecn: int = NOT_ECT, dscp: int = 0) -> int:
        if self.pie.next_update <= now:
            self.update(now)
        if self.classify(ecn, dscp):
            qd = self.qdelay_l(size)
            pn = self.prob_native(qd) if self.p.iaqm else 0.0
            qp = self.qp
            if qp is not None and qp.protect(flow, flow_hash(flow, self.salt) if isinstance(flow, int) else hash(flow),
                                             size, qd, pn, now):
                return SANCTIONED if self._classic(item, size, now) else DROPPED
            mark = False
            if self.p.iaqm and ecn != NOT_ECT:  # Not-ECT (NQB by DSCP) is never marked nor dropped
                prob = max(self.prob_cl, pn)
                self.count += prob
                if self.count > 1.0:
                    self.count -= 1.0
                    mark = True
            if self.l_bytes >= self.ll_limit - self.p.max_frame:
                self.forced_drops += 1
                return DROPPED
            self.lq.append((item, size, now))
            self.l_bytes += size
            if mark:
                self.marks += 1
                return LOW_LATENCY_MARKED
            return LOW_LATENCY
        return CLASSIC if self._classic(item, size, now) else DROPPED

    def _classic(self, item, size: int, now: float) -> bool:
        if self.c_bytes + size > self.classic_limit:
            self.forced_drops += 1
            return False
        if self.pie.drop_early(size, self.c_bytes):
            return False
        self.cq.append((item, size, now))
        self.c_bytes += size
        return True

    def __len__(self) -> int:
        return len(self.cq) + len(self.lq)

    def dequeue(self, now: float):
        """The next packet by weighted DRR: ``(item, size, enqueued_at, low_latency)`` or None."""
        lq, cq = self.lq, self.cq
        if not lq and not cq:
            return None
        if self.pie.next_update <= now:
            self.update(now)
        if lq and cq:
            ll = self._drr()
        else:  # one queue with data: serve it (work-conserving); deficits lapse
            ll = bool(lq)
            self.l_def = self.c_def = 0.0
        if ll:
            item, size, t = lq.popleft()
            self.l_def -= size if cq else 0.0
            self.l_bytes -= size
            self.interval_bits_l += 8 * size
            return item, size, t, True
        item, size, t = cq.popleft()
        self.c_def -= size if lq else 0.0
        self.c_bytes -= size
        return item, size, t, False

    def _drr(self) -> bool:
        """Both queues have data: True if the low-latency head is next (deficit round robin)."""
        lq, cq = self.lq, self.cq
        while True:
            if self.turn_ll:
                if lq[0][1] <= self.l_def:
                    return True
                self.turn_ll = False
                self.c_def += self.c_quantum
            else:
                if cq[0][1] <= self.c_def:
                    return False
                self.turn_ll = True
                self.l_def += self.l_quantum
