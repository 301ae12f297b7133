"""Queue protection for the low-latency queue (DOCSIS 3.1 MULPI, Annex P).

Every packet arriving at the low-latency queue is scored for the flow it belongs
to: its size times the queue's native (immediate AQM) marking probability, so a
flow builds up a score in proportion to the congestion it is causing. Scores
drain at a fixed aging rate (2^LG_AGING bytes/s of "congestion volume" at
probability 1). A packet is *sanctioned* (sent to the classic queue instead)
when the low-latency queue's delay is over the critical latency and the
product of that delay and its flow's score is over the critical product: a
well-behaved (responsive, paced) flow keeps its score near zero; an
unresponsive flow that builds a queue is moved out while the others stay.

Flow state lives in 2^BI_SIZE buckets (32) plus one shared overflow bucket. A
bucket is a flow id and an expiry time: the score is ``expiry - now`` in seconds,
so aging costs nothing. A flow owns the bucket its hash points to (two tries
with different hash bits); an expired bucket may be taken over by another flow.
"""

from __future__ import annotations

from dataclasses import dataclass

from hfcprov.queue.pie import AqmConfigError


@dataclass(frozen=True)
class QProtectParams:
    """Annex P constants; the latency threshold defaults to the IAQM maximum threshold."""

    latency_threshold: float | None = None  # CRITICALqL (s); None: the IAQM ramp's MAXTH
    score_threshold: float = 0.004  # CRITICALqLSCORE (s): 4000 us
    lg_aging: int = 19  # LG_AGING: scores drain at 2^19 B/s of congestion volume
    bucket_bits: int = 5  # BI_SIZE: 32 flow buckets (+1 overflow)
    attempts: int = 2  # buckets tried per flow
    max_score: float = 5.0  # MAX_QLSCORE (s)

    def __post_init__(self) -> None:
        if not 1 <= self.lg_aging <= 30:
            raise AqmConfigError(f"queue protection: lg_aging must be in 1..30, got {self.lg_aging}")
        if not 0 <= self.bucket_bits <= 14 or self.attempts < 1:
            raise AqmConfigError("queue protection: bucket_bits in 0..14 and attempts >= 1")
        if self.score_threshold <= 0:
            raise AqmConfigError("queue protection: score_threshold must be > 0 s")


def flow_hash(key: int, salt: int = 0) -> int:
    """A 32-bit hash of an integer flow key (Knuth's multiplicative hash, salted)."""
    return ((key ^ salt) * 2654435761) & 0xFFFFFFFF


class QueueProtection:
    """Per-flow queuing scores; ``protect`` says whether to sanction a packet."""

    __slots__ = (
        "critical_product",
        "critical_ql",
        "expiry",
        "owner",
        "p",
        "sanctioned",
        "sanctions_by_flow",
        "score_per_byte",
    )

    def __init__(self, params: QProtectParams | None = None, max_th: float = 0.001) -> None:
        self.p = p = params or QProtectParams()
        self.critical_ql = p.latency_threshold if p.latency_threshold is not None else max_th
        self.critical_product = p.score_threshold * self.critical_ql
        self.score_per_byte = 2.0 ** (30 - p.lg_aging) * 1e-9  # s of score per byte at probability 1
        n = (1 << p.bucket_bits) + 1
        self.owner: list = [None] * n
        self.expiry: list = [0.0] * n
        self.sanctioned = 0
        self.sanctions_by_flow: dict = {}

    def score(self, flow, now: float) -> float:
        """The current queuing score (s) of ``flow``'s bucket, 0 if it holds none."""
        for b, owner in enumerate(self.owner):
            if owner == flow:
                return max(0.0, self.expiry[b] - now)
        return 0.0

    def _bucket(self, flow, h: int, now: float) -> int:
        p = self.p
        nbuckets = 1 << p.bucket_bits
        mask = nbuckets - 1
        owner, expiry = self.owner, self.expiry
        spare = nbuckets  # the overflow bucket unless an expired one turns up
        for _ in range(p.attempts):
            b = h & mask
            if owner[b] == flow:
                expiry[b] = max(now, expiry[b])
                return b
            if spare == nbuckets and expiry[b] <= now:
                spare = b
            h >>= p.bucket_bits
        expiry[spare] = max(now, expiry[spare])
        owner[spare] = flow
        return spare

    def protect(self, flow, h: int, size: int, qdelay: float, prob_native: float, now: float) -> bool:
        """Score a packet of ``size`` bytes of ``flow`` (hash ``h``) arriving at a low-latency
        queue whose delay is ``qdelay`` and native marking probability ``prob_native``;
        True: sanction it (to the classic queue)."""
        b = self._bucket(flow, h, now)
        exp = self.expiry[b] + prob_native * size * self.score_per_byte
        if exp - now > self.p.max_score:
            exp = now + self.p.max_score
        self.expiry[b] = exp
        if qdelay > self.critical_ql and qdelay * (exp - now) > self.critical_product:
            self.sanctioned += 1
            self.sanctions_by_flow[flow] = self.sanctions_by_flow.get(flow, 0) + 1
            return True
        return False
