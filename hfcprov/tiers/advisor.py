"""Buffer Control sizing (service-flow TLV 24/25.35): advice and predicted latency/throughput.

The reasoning follows White, Sundaresan & Briscoe, "Right-sizing cable modem
buffers" (CableLabs, 2011): a single long-lived TCP flow needs a buffer of about
one bandwidth-delay product to fill the flow's rate; every byte beyond that only
adds latency under load (size / rate), which ITU-T G.114 asks to keep below
150 ms one way. A CM is required to accept a MinimumBuffer up to 24,576 bytes.

``predict`` is the one model behind ``buffer table`` and ``advise``; it is
analytic (the TCP Reno sawtooth over a drop-tail buffer) and is replaced by the
simulator when one is passed in (``model=``), so the table can be refined
without changing its callers.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field
from typing import Callable

from hfcprov.errors import HfcprovError
from hfcprov.units import format_bytes, format_duration, format_rate

# DOCSIS 3.0 MULPI: a CM must not reject a service flow whose MinimumBuffer is <= this.
CM_GUARANTEED_MINIMUM_BUFFER = 24_576
# ITU-T G.114: one-way delay below this keeps interaction "essentially transparent".
G114_ONE_WAY_BUDGET = 0.150
# A full-size Ethernet frame as the CM queues it; the buffer must hold a few of them.
MAX_FRAME = 1518
FRAMES_FLOOR = 4
# TCP segment on the wire (MSS 1460 + 40 bytes of TCP/IP header): the packet unit of the model.
PACKET = 1500

# White et al. 2011, upstream, single TCP flow (section "Test 1 Results"): (rate b/s, rtt s, buffer found to suffice).
WHITE_2011_FINDINGS = (
    (1e6, 0.040, 16 * 1024, "16 KiB sufficed at 1 Mb/s (40 ms and 100 ms)"),
    (1e6, 0.100, 16 * 1024, "16 KiB sufficed at 1 Mb/s (40 ms and 100 ms)"),
    (2e6, 0.040, 16 * 1024, "16 KiB sufficed at 2 Mb/s (40 ms and 100 ms)"),
    (2e6, 0.100, 16 * 1024, "16 KiB sufficed at 2 Mb/s (40 ms and 100 ms)"),
    (5e6, 0.100, 64 * 1024, "5 Mb/s needed at least 64 KiB at 100 ms"),
    (10e6, 0.040, 64 * 1024, "10 Mb/s needed 64 KiB at 40 ms"),
    (10e6, 0.100, 256 * 1024, "10 Mb/s needed 256 KiB at 100 ms"),
)


class AdvisorError(HfcprovError, ValueError):
    """Inputs the advisor cannot reason about (zero rate, zero flows, ...)."""


@dataclass(frozen=True)
class Prediction:
    """One cell of ``buffer table``: what a flow of ``rate`` sees with ``buffer`` bytes at ``rtt``."""

    rate: float  # bits/s
    buffer: int  # bytes
    rtt: float  # seconds (base round trip, without queueing)
    flows: int
    latency_under_load: float  # seconds a packet waits behind a full buffer (buffer / rate)
    utilization: float  # 0..1 of rate that the TCP flows achieve
    model: str = "analytic"


def latency_under_load(buffer: int, rate: float) -> float:
    """Seconds to drain a full buffer at the flow's rate: the delay a VoIP packet sees behind a TCP upload."""
    return buffer * 8 / rate


def bdp_bytes(rate: float, rtt: float) -> float:
    return rate * rtt / 8


def reno_utilization(rate: float, buffer: int, rtt: float, flows: int = 1) -> float:
    """Long-run utilization of ``flows`` synchronised TCP Reno flows through a drop-tail buffer.

    The window (in packets, summed over flows) climbs one packet per flow per round
    from Wmax/2 to Wmax = BDP + buffer, then halves. Below the BDP a round lasts one
    base RTT and delivers W packets; above it the link is full. With no buffer this
    gives the textbook 3/4; with buffer >= BDP, 1. It ignores the DOCSIS request-grant
    delay, so it is an upper bound on what White et al. measured.
    """
    _check(rate, rtt, flows)
    pipe = bdp_bytes(rate, rtt) / PACKET  # P, packets in flight that fill the link
    if pipe <= 0:
        return 1.0
    queue = buffer / PACKET
    w_max = pipe + queue
    # n synchronised flows halve together; desynchronised ones less so: the aggregate
    # drops by 1/(2n) on a loss, which is why more flows need less buffer.
    w_low = w_max * (1 - 1 / (2 * flows))
    if w_low >= pipe:
        return 1.0
    # Phase 1: window below the pipe, rounds of one RTT, W grows by `flows` per round.
    rounds1 = (pipe - w_low) / flows
    delivered1 = (w_low + pipe) / 2 * rounds1  # packets
    time1 = rounds1  # in RTTs
    # Phase 2: link full; rounds last W/pipe RTTs and deliver W packets each.
    rounds2 = queue / flows
    delivered2 = (pipe + w_max) / 2 * rounds2
    time2 = delivered2 / pipe
    return (delivered1 + delivered2) / (pipe * (time1 + time2))


def predict(rate: float, buffer: int, rtt: float, flows: int = 1) -> Prediction:
    """The analytic model: latency under load and TCP utilization for one (rate, buffer, rtt) cell."""
    _check(rate, rtt, flows)
    return Prediction(
        rate=rate,
        buffer=buffer,
        rtt=rtt,
        flows=flows,
        latency_under_load=latency_under_load(buffer, rate),
        utilization=reno_utilization(rate, buffer, rtt, flows),
    )


Model = Callable[[float, int, float, int], Prediction]


class SimModel:
    """The simulator (``hfcprov.sim``) in place of the analytic model: the same cells, simulated.

    Latency under load is the loaded probes' median RTT less the base RTT (the delay the
    queue and, with ``mac="docsis"``, the request-grant cycle add); utilization is goodput
    over the flow's rate. ``many`` runs a whole table in parallel processes.
    """

    def __init__(self, mac: str = "docsis", duration: float = 20.0, warmup: float = 5.0, seed: int = 1,
                 jobs: int | None = None):
        self.mac, self.duration, self.warmup, self.seed, self.jobs = mac, duration, warmup, seed, jobs
        self.name = f"sim:{mac}"

    def scenario(self, rate: float, buffer: int, rtt: float, flows: int):
        from hfcprov.sim import FlowSpec, Scenario

        return Scenario(rate=rate, buffer=buffer, rtt=rtt, flows=[FlowSpec() for _ in range(flows)], mac=self.mac,
                        duration=self.duration, warmup=self.warmup, probe_rate=10, seed=self.seed,
                        sample_interval=None, name=f"{rate:g}b/s {buffer}B {rtt:g}s x{flows}")

    def prediction(self, cell: tuple, result) -> Prediction:
        rate, buffer, rtt, flows = cell
        loaded = result.latency_loaded.p50
        added = max(0.0, loaded - rtt) if loaded is not None else latency_under_load(buffer, rate)
        return Prediction(rate, buffer, rtt, flows, added, min(1.0, result.utilization or 0.0), self.name)

    def __call__(self, rate: float, buffer: int, rtt: float, flows: int = 1) -> Prediction:
        return self.many([(rate, buffer, rtt, flows)])[0]

    def many(self, cells: list[tuple]) -> list[Prediction]:
        from hfcprov.sim import run_many

        results = run_many([self.scenario(*c) for c in cells], jobs=self.jobs)
        return [self.prediction(c, r) for c, r in zip(cells, results)]


def buffer_table(
    rates: list[float], buffers: list[int], rtts: list[float], flows: int = 1, model: Model | None = None
) -> list[Prediction]:
    """Every (rtt, rate, buffer) cell, in that order; ``model`` defaults to ``predict`` (analytic).

    A model with a ``many(cells)`` method (``SimModel``) gets the whole table at once.
    """
    model = model or predict
    cells = [(rate, buffer, rtt, flows) for rtt in rtts for rate in rates for buffer in buffers]
    if hasattr(model, "many"):
        return model.many(cells)
    return [model(*cell) for cell in cells]


@dataclass
class Advice:
    rate: float
    rtt: float
    flows: int
    latency_budget: float
    minimum: int | None
    target: int
    maximum: int
    bdp: float
    reasoning: list[str] = field(default_factory=list)
    candidates: list[Prediction] = field(default_factory=list)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["candidates"] = [asdict(c) for c in self.candidates]
        return d


def advise(
    rate: float,
    rtt: float,
    flows: int = 1,
    latency_budget: float = G114_ONE_WAY_BUDGET,
    min_buffer: bool = False,
    model: Model | None = None,
) -> Advice:
    """Recommended MinimumBuffer / TargetBuffer / MaximumBuffer for one service flow.

    target  = BDP / sqrt(flows) (one BDP fills the rate for a single flow; Appenzeller
              et al.: n desynchronised flows need BDP/sqrt(n)), at least a few full
              frames, but never more than the latency budget allows;
    maximum = the size whose drain time equals the latency budget;
    minimum = only with ``min_buffer``: the target capped at 24,576 bytes, the size
              every CM must accept, so asking for it cannot get the flow rejected.
    """
    _check(rate, rtt, flows)
    if latency_budget <= 0:
        raise AdvisorError("latency budget must be > 0")
    model = model or predict
    bdp = bdp_bytes(rate, rtt)
    needed = bdp / math.sqrt(flows)
    cap = int(rate * latency_budget / 8)
    floor = FRAMES_FLOOR * MAX_FRAME
    target = advise_target(rate, rtt, flows, latency_budget)
    reasons = [
        f"bandwidth-delay product: {format_rate(rate)} x {format_duration(rtt)} = {round(bdp)} bytes;"
        " a single TCP flow needs about this much buffer to fill the rate",
    ]
    if flows > 1:
        reasons.append(
            f"{flows} flows share the buffer: BDP/sqrt({flows}) = {round(needed)} bytes suffice (Appenzeller et al.)"
        )
    if needed < floor:
        reasons.append(f"raised to {FRAMES_FLOOR} full frames ({floor} bytes) so a small burst is not dropped")
    reasons.append(
        f"latency under load = size / rate: the target {format_bytes(target)} adds"
        f" {format_duration(latency_under_load(target, rate))} when the flow is saturated"
    )
    reasons.append(
        f"latency budget {format_duration(latency_budget)} (ITU-T G.114: keep one-way delay below 150 ms)"
        f" allows at most {cap} bytes at {format_rate(rate)}" + (f": maximum = {cap}" if cap >= MAX_FRAME else "")
    )
    if cap < MAX_FRAME:
        reasons.append(
            f"even one full frame ({MAX_FRAME} bytes) takes {format_duration(latency_under_load(MAX_FRAME, rate))}"
            f" at {format_rate(rate)}: the budget cannot be met; target and maximum are one frame"
        )
        cap = target
    elif _round_up_kib(needed) > cap:
        reasons.append(
            "the budget, not the BDP, sets the target: a single flow will not fill the rate at this RTT;"
            " prefer latency over bulk throughput (White et al. 2011)"
        )
    minimum = None
    if min_buffer:
        minimum = min(target, CM_GUARANTEED_MINIMUM_BUFFER)
        reasons.append(
            f"minimum {minimum}: any DOCSIS 3.0 CM must accept a MinimumBuffer up to {CM_GUARANTEED_MINIMUM_BUFFER}"
            " bytes; a larger minimum risks the modem rejecting the flow"
        )
    else:
        reasons.append(
            "minimum omitted: White et al. recommend setting only the target (and a maximum) so the modem never"
            f" rejects the flow; a MinimumBuffer <= {CM_GUARANTEED_MINIMUM_BUFFER} bytes is always accepted"
        )
    for f_rate, f_rtt, f_buf, text in WHITE_2011_FINDINGS:
        if math.isclose(f_rate, rate, rel_tol=0.25) and math.isclose(f_rtt, rtt, rel_tol=0.25):
            reasons.append(f"measured (White et al. 2011, one upstream TCP flow): {text}")
            break
    sizes = sorted({8 * 1024, 16 * 1024, 32 * 1024, 64 * 1024, 128 * 1024, 256 * 1024, target, cap})
    candidates = [model(rate, s, rtt, flows) for s in sizes]
    return Advice(
        rate=rate,
        rtt=rtt,
        flows=flows,
        latency_budget=latency_budget,
        minimum=minimum,
        target=target,
        maximum=cap,
        bdp=bdp,
        reasoning=reasons,
        candidates=candidates,
    )


@functools.lru_cache(maxsize=1024)
def advise_target(rate: float, rtt: float, flows: int = 1, latency_budget: float = G114_ONE_WAY_BUDGET) -> int:
    """TargetBuffer in bytes: BDP/sqrt(flows), at least a few frames, at most the latency budget.

    The one place the target is computed; ``advise`` explains it, templates call it per modem (cached).
    """
    _check(rate, rtt, flows)
    needed = bdp_bytes(rate, rtt) / math.sqrt(flows)
    cap = int(rate * latency_budget / 8)
    # never below one full frame: a smaller buffer would drop every full-size packet
    return max(MAX_FRAME, min(max(_round_up_kib(needed), _round_up_kib(FRAMES_FLOOR * MAX_FRAME)), cap))


def _round_up_kib(n: float) -> int:
    return int(math.ceil(n / 1024)) * 1024


def _check(rate: float, rtt: float, flows: int) -> None:
    if rate <= 0:
        raise AdvisorError(f"rate must be > 0 (got {rate:g} b/s)")
    if rtt < 0:
        raise AdvisorError(f"rtt must be >= 0 (got {rtt:g} s)")
    if flows < 1:
        raise AdvisorError(f"flows must be >= 1 (got {flows})")
