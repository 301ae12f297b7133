"""The one results schema: what a simulator run and a probe measurement both report.

``sim`` predicts, ``probe`` measures (on the emulated or a real modem), and
``lab`` stores and plots; all three use ``RunResult``, so measured and predicted
figures line up column for column. Units: bits/s, bytes, seconds, fractions.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Literal

Source = Literal["sim", "emu", "modem"]


@dataclass
class LatencyStats:
    """Round-trip (or one-way, for VoIP) latency of a probe stream, in seconds."""

    count: int = 0  # probes answered
    sent: int = 0  # probes sent
    mean: float | None = None
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    max: float | None = None

    @property
    def loss(self) -> float | None:
        return None if not self.sent else 1.0 - self.count / self.sent

    @classmethod
    def of(cls, samples: list[float], sent: int | None = None) -> "LatencyStats":
        """Statistics of RTT samples (seconds); ``sent`` counts lost probes too."""
        s = sorted(samples)
        n = len(s)
        sent = n if sent is None else sent
        if not n:
            return cls(count=0, sent=sent)
        return cls(count=n, sent=sent, mean=math.fsum(s) / n, p50=percentile(s, 50),
                   p90=percentile(s, 90), p99=percentile(s, 99), max=s[-1])


def percentile(sorted_samples: list[float], q: float) -> float:
    """Linear-interpolated percentile of already sorted samples (q in 0..100)."""
    if not sorted_samples:
        raise ValueError("no samples")
    pos = (len(sorted_samples) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_samples) - 1)
    return sorted_samples[lo] + (sorted_samples[hi] - sorted_samples[lo]) * (pos - lo)


@dataclass
class FlowResult:
    """One TCP bulk flow."""

    goodput_bps: float  # application bytes delivered * 8 / measured interval (warm-up excluded)
    bytes_delivered: int = 0
    retransmissions: int | None = None
    timeouts: int | None = None
    completion_time: float | None = None  # finite transfers: seconds from start to last byte


@dataclass
class RunResult:
    """The summary of one run (one point, one repetition), predicted or measured."""

    source: Source
    duration: float  # seconds measured (warm-up excluded)
    goodput_bps: float  # all flows together
    flows: list[FlowResult] = field(default_factory=list)
    shaped_rate_bps: float | None = None  # the service flow's max sustained rate, for utilization
    latency_idle: LatencyStats = field(default_factory=LatencyStats)
    latency_loaded: LatencyStats = field(default_factory=LatencyStats)
    packet_loss: float | None = None  # fraction of data packets dropped (queue or plant)
    mos: float | None = None  # VoIP E-model MOS, where a voice stream ran
    # Time series: name -> [(t seconds, value)], e.g. "queue_bytes", "cwnd.0", "rtt", "goodput_bps".
    series: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    extra: dict = field(default_factory=dict)  # source-specific figures (events/s, kernel cc, ...)

    @property
    def utilization(self) -> float | None:
        if not self.shaped_rate_bps:
            return None
        return self.goodput_bps / self.shaped_rate_bps

    def to_dict(self, series: bool = True) -> dict:
        d = asdict(self)
        d["utilization"] = self.utilization
        d["latency_idle"]["loss"] = self.latency_idle.loss
        d["latency_loaded"]["loss"] = self.latency_loaded.loss
        if not series:
            d.pop("series")
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "RunResult":
        known = {f.name for f in fields(cls)}
        d = {k: v for k, v in d.items() if k in known}
        lat_keys = {f.name for f in fields(LatencyStats)}
        for key in ("latency_idle", "latency_loaded"):
            if isinstance(d.get(key), dict):
                d[key] = LatencyStats(**{k: v for k, v in d[key].items() if k in lat_keys})
        d["flows"] = [FlowResult(**f) if isinstance(f, dict) else f for f in d.get("flows", [])]
        d["series"] = {k: [tuple(p) for p in v] for k, v in d.get("series", {}).items()}
        return cls(**d)
