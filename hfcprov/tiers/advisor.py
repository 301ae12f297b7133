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
# A full-size Ethernet frame as the CM queues it.
MAX_FRAME = 1518
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


def predict_aqm(rate: float, buffer: int, rtt: float, flows: int = 1, latency_target: float = 0.010) -> Prediction:
    """The analytic model with DOCSIS-PIE on: the queue settles at the latency target, not the buffer
    (RFC 8034); TCP sees a buffer of ``latency_target x rate`` at most. ``bench/sim_aqm.py`` checks it."""
    _check(rate, rtt, flows)
    held = min(buffer, int(rate * latency_target / 8))
    return Prediction(rate=rate, buffer=buffer, rtt=rtt, flows=flows,
                      latency_under_load=min(latency_under_load(buffer, rate), latency_target),
                      utilization=reno_utilization(rate, held, rtt, flows), model="analytic: DOCSIS-PIE")


Model = Callable[[float, int, float, int], Prediction]


class SimModel:
    """The simulator (``hfcprov.sim``) in place of the analytic model: the same cells, simulated.

    Each cell is the campaign's upload experiment (``hfcprov.sim.upload``: the same flow, hosts,
    probes and voice call a campaign point runs), repeated with seeds ``seed .. seed+seeds-1`` as a
    campaign's repetitions are; the figures are the medians. Latency under load is ``queue_delay``
    (loaded median RTT less the idle one, as the campaign report has it); utilization is goodput
    over the flow's rate. ``many`` runs a whole
    table in parallel processes.
    """

    def __init__(self, mac: str = "docsis", duration: float = 15.0, warmup: float = 5.0, seed: int = 1,
                 jobs: int | None = None, aqm: str = "none", aqm_params: dict | None = None,
                 congestion_control: str | None = None, seeds: int = 1, voice: bool = False,
                 probe_interval: float = 0.1):
        self.mac, self.duration, self.warmup, self.seed, self.jobs = mac, duration, warmup, seed, jobs
        self.aqm, self.aqm_params = aqm, aqm_params  # hfcprov.sim.links.QUEUES (issue 20): tokenbucket only
        self.congestion_control = congestion_control  # None: the simulator's default TCP
        self.seeds, self.voice, self.probe_interval = seeds, voice, probe_interval
        self.name = f"sim:{mac}" + (f"+{aqm}" if aqm != "none" else "")

    def scenario(self, rate: float, buffer: int, rtt: float, flows: int, seed: int | None = None):
        """``duration`` is the measured time, after ``warmup`` (as a campaign's traffic counts it)."""
        from hfcprov.sim.upload import tier_flow, upload_scenario

        sc = upload_scenario(tier_flow(rate, buffer), rtt=rtt, flows=flows,
                             congestion_control=self.congestion_control, mac=self.mac,
                             probe_interval=self.probe_interval, duration=self.duration, warmup=self.warmup,
                             seed=self.seed if seed is None else seed,
                             name=f"{rate:g}b/s {buffer}B {rtt:g}s x{flows}")
        return sc.replace(sample_interval=None, aqm=self.aqm, aqm_params=self.aqm_params) \
            if self.aqm != "none" else sc.replace(sample_interval=None)

    def prediction(self, cell: tuple, results: list) -> Prediction:
        rate, buffer, rtt, flows = cell
        added = _median_of([queue_delay(r.latency_loaded.p50, r.latency_idle.p50, rtt) for r in results])
        if added is None:
            added = latency_under_load(buffer, rate)
        utilization = _median_of([r.utilization or 0.0 for r in results])
        return Prediction(rate, buffer, rtt, flows, added, min(1.0, utilization), self.name)

    def __call__(self, rate: float, buffer: int, rtt: float, flows: int = 1) -> Prediction:
        return self.many([(rate, buffer, rtt, flows)])[0]

    def many(self, cells: list[tuple]) -> list[Prediction]:
        import functools

        from hfcprov.sim.run import run_many
        from hfcprov.sim.upload import simulate

        seeds = [self.seed + r for r in range(self.seeds)]  # a campaign's repetition r runs seed + r
        scenarios = [self.scenario(*c, seed=s) for c in cells for s in seeds]
        results = run_many(scenarios, jobs=self.jobs, worker=functools.partial(simulate, voice=self.voice))
        n = len(seeds)
        return [self.prediction(c, results[i * n:(i + 1) * n]) for i, c in enumerate(cells)]


def queue_delay(loaded_p50: float | None, idle_p50: float | None, rtt: float) -> float | None:
    """The delay a loaded queue adds: loaded median RTT less the idle one (the base RTT when no idle
    probes ran). The campaign report and ``SimModel`` both measure latency under load this way."""
    if loaded_p50 is None:
        return None
    return max(0.0, loaded_p50 - (idle_p50 if idle_p50 is not None else rtt))


def _median_of(values):
    import statistics

    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


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
    latency_budget: float  # one-way (G.114), seconds
    minimum: int | None
    target: int
    maximum: int
    bdp: float
    need: int = 0  # bytes: the throughput need (the ladder size that keeps THROUGHPUT_SHARE of the rate)
    queue_budget: float = 0.0  # s: what the budget leaves the modem's queue
    model: str = "rule: 1 BDP on the size ladder (reno)"
    paper: str | None = None  # White et al.'s finding for this tier, and how the advice relates to it
    reasoning: list[str] = field(default_factory=list)
    candidates: list[Prediction] = field(default_factory=list)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["candidates"] = [asdict(c) for c in self.candidates]
        return d


# -- the sizing policy (docs/sizing.md) ------------------------------------------------------------------

# The sizes a recommendation is chosen from: White et al.'s 8..256 KiB, doubling, up to a modem's 1 MiB.
LADDER = tuple(1024 * 2 ** k for k in range(3, 11))
# The sizes a simulated advice tests: White et al.'s six, the README campaign's grid
CAMPAIGN_SIZES = LADDER[:6]
# A size "fills the rate" when it keeps this share of the best goodput any size reaches.
THROUGHPUT_SHARE = 0.95


def queue_budget(rtt: float, one_way: float = G114_ONE_WAY_BUDGET) -> float:
    """Seconds of queueing delay under load the modem may add: the one-way budget less the path's
    own one-way delay (rtt / 2), so the modem does not spend what the rest of the path needs."""
    return round(one_way - rtt / 2, 9)  # 0.15 - 0.05 is 0.0999...: keep whole bytes whole


# The sender's multiplicative decrease on a loss: the window falls to beta x W. FAST (delay-based)
# is not modelled by the rule and counts as Reno.
# TCP Prague halves on a loss as Reno does (its ECN response is the scalable one; drop-tail has none)
BACKOFF = {"reno": 0.5, "newreno": 0.5, "sack": 0.5, "cubic": 0.7, "fast": 0.5, "prague": 0.5}
# Packet granularity: a loss is seen a round trip after the queue overflowed (the window still grows
# meanwhile) and a drop-tail queue holds whole packets. On the simulator's token-bucket link, CUBIC
# needs the fluid share below plus this many full packets at every White et al. tier (docs/sizing.md).
SLACK_PACKETS = 3
# The upstream models the rule knows: the DOCSIS request-grant MAC (a cable modem's upstream, the
# default) or a plain token bucket (hfcprov.sim's LINKS).
MACS = ("docsis", "tokenbucket")


def aimd_utilization(queue_over_pipe: float, beta: float) -> float:
    """Long-run share of the rate one AIMD sender keeps through a drop-tail buffer of
    ``queue_over_pipe`` BDPs: the window climbs linearly to pipe + buffer, then falls to beta x that
    (the fluid sawtooth of ``reno_utilization``, any back-off)."""
    pipe = 1.0
    w_max = pipe + queue_over_pipe
    w_low = beta * w_max
    if w_low >= pipe:
        return 1.0
    rise = pipe - w_low  # window below the pipe: rounds of one RTT, w_low -> pipe
    below = (w_low + pipe) / 2 * rise
    full = (pipe + w_max) / 2 * queue_over_pipe  # window above it: the link is full
    return (below + full) / (pipe * (rise + full / pipe))


@functools.lru_cache(maxsize=16)
def fluid_need(beta: float, share: float = THROUGHPUT_SHARE) -> float:
    """The buffer, in BDPs, with which an AIMD sender backing off to ``beta`` keeps ``share`` of the rate
    (``aimd_utilization``): 0.43 for Reno's halving, 0.16 for CUBIC's 0.7; 1 and 0.43 keep all of it."""
    lo, hi = 0.0, (1 - beta) / beta  # at (1 - beta) / beta BDP the window never falls below the pipe
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if aimd_utilization(mid, beta) < share else (lo, mid)
    return hi


def mac_access_delay(params=None) -> float:
    """Seconds a packet arriving at an idle cable modem waits for its grant, from the request-grant MAC's
    own parameters (``hfcprov.sim.mac.MacParams``; None: the calibrated defaults): the next MAP's
    contention opportunity (map advance + a map interval on average), the request's propagation, the
    next MAP after it arrives and the grant's place in it (again advance + interval), plus the expected
    retries after request collisions. The modem holds ``rate x`` this of data waiting for grants, on top of
    what TCP's sawtooth needs (docs/sizing.md)."""
    from hfcprov.sim.mac import MacParams

    p = params or MacParams()
    cycle = p.map_advance + p.map_interval
    retries = p.contention_collision / (1 - p.contention_collision)  # expected collisions per request
    return 2 * cycle + p.propagation + retries * (max(1, p.backoff_maps) + 1) / 2 * p.map_interval


def throughput_need(rate: float, rtt: float, flows: int = 1, congestion_control: str = "reno",
                    mac: str = "docsis") -> int:
    """``rule_bytes`` put on the size ladder (8 KiB, 16 KiB, ...)."""
    needed = rule_bytes(rate, rtt, flows, congestion_control, mac)
    return next((s for s in LADDER if s >= needed), _round_up_kib(needed))


def rule_bytes(rate: float, rtt: float, flows: int = 1, congestion_control: str = "reno",
               mac: str = "docsis") -> float:
    """The bytes keeping 95% of the rate, before the ladder: the fluid sawtooth's share of the BDP for the
    senders' back-off (``fluid_need``; over sqrt(flows) for several flows), plus ``SLACK_PACKETS`` full
    packets, plus, through the DOCSIS MAC, what the modem holds while it waits for grants (rate x
    ``mac_access_delay``). On White et al.'s grid the simulator's DOCSIS model needs this (docs/sizing.md)."""
    _check(rate, rtt, flows)
    if congestion_control not in BACKOFF:
        raise AdvisorError(f"unknown congestion control {congestion_control!r} (known: {', '.join(BACKOFF)})")
    if mac not in MACS:
        raise AdvisorError(f"unknown upstream model {mac!r} (known: {', '.join(MACS)})")
    needed = fluid_need(BACKOFF[congestion_control]) * bdp_bytes(rate, rtt) / math.sqrt(flows)
    needed += SLACK_PACKETS * PACKET
    if mac == "docsis":
        needed += rate * mac_access_delay() / 8
    return needed


def rule_name(congestion_control: str, mac: str = "docsis") -> str:
    """How reports name the rule behind a need."""
    name = f"rule: {fluid_need(BACKOFF[congestion_control]):.2g} BDP + {SLACK_PACKETS} packets"
    if mac == "docsis":
        name += f" + rate x the DOCSIS MAC's {mac_access_delay() * 1e3:.1f} ms access delay"
    return f"{name}, on the size ladder ({congestion_control})"


@dataclass(frozen=True)
class Choice:
    """A buffer chosen from measured or predicted (size, goodput, queueing delay) rows."""

    buffer: int | None
    share: float | None  # of the best goodput, at this size
    delay: float | None  # s of queueing delay under load at this size
    fills: bool  # keeps THROUGHPUT_SHARE within the budget
    reason: str


def choose(rows: list[tuple[int, float, float | None]], budget: float, share: float = THROUGHPUT_SHARE) -> Choice:
    """The policy over results: the smallest size keeping ``share`` of the best goodput whose queueing
    delay is within ``budget``; if none does, the size within the budget that keeps the most.

    ``rows``: (buffer bytes, goodput, queueing delay s or None). Used by the campaign report on
    its measured or simulated points, and by ``recommend`` with the simulator as the model.
    """
    rows = sorted(rows)
    if not rows:
        return Choice(None, None, None, False, "no results")
    best = max(g for _, g, _ in rows) or 1.0
    within = [r for r in rows if r[2] is None or r[2] <= budget + 1e-9]
    good = [r for r in within if r[1] >= share * best]
    if good:
        b, g, d = good[0]
        return Choice(b, g / best, d, True, f"smallest size keeping ≥{share:.0%} of the best goodput "
                                             f"({g / best:.0%}) within the {_ms(budget)} queue budget ({_ms(d)})")
    if within:
        b, g, d = max(within, key=lambda r: (r[1], -r[0]))
        return Choice(b, g / best, d, False, f"no size within the {_ms(budget)} queue budget keeps {share:.0%} of "
                                              f"the best goodput; this one keeps the most ({g / best:.0%}) at "
                                              f"{_ms(d)}: more buffer buys throughput only with more delay")
    b, g, d = rows[0]
    return Choice(b, g / best, d, False, f"every size exceeds the {_ms(budget)} queue budget; the smallest adds "
                                         f"{_ms(d)} and keeps {g / best:.0%}")


def _ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e3:.0f} ms"


def white_finding(rate: float, rtt: float) -> tuple[int, str] | None:
    """White et al.'s stated need (bytes, text) for this tier, if they state one."""
    for f_rate, f_rtt, f_buf, text in WHITE_2011_FINDINGS:
        if math.isclose(f_rate, rate, rel_tol=0.01) and math.isclose(f_rtt, rtt, rel_tol=0.01):
            return f_buf, text
    return None


# White et al. 2011, single upstream flow, sizes they measured short of the rate: (rate, rtt, buffer, goodput b/s).
WHITE_2011_SHORTFALLS = (
    (10e6, 0.040, 16384, 1.97e6),  # Fig. 6a
    (10e6, 0.100, 16384, 1.65e6),  # Fig. 6b: 4.95 / 3
    (10e6, 0.100, 65536, 6.05e6),  # Fig. 6b
)


def _white_shortfall(rate: float, rtt: float, buffer: int) -> float | None:
    """The single-flow goodput White et al. measured short of the rate at this size, if they did."""
    for f_rate, f_rtt, f_buf, goodput in WHITE_2011_SHORTFALLS:
        if (f_rate, f_rtt, f_buf) == (rate, rtt, buffer):
            return goodput
    return None


def relate_to_paper(rate: float, rtt: float, need: int, target: int) -> str | None:
    """How a recommendation relates to White et al.'s finding for the same tier (None: they state none)."""
    found = white_finding(rate, rtt)
    if found is None:
        return None
    buf, text = found
    where = f"White et al. 2011 (one upstream TCP flow): {text}"
    if target < buf and target < need:
        return (f"{where}; the queue budget caps this advice at {format_bytes(target)}: the paper's "
                f"{format_bytes(buf)} adds {format_duration(latency_under_load(buf, rate))} at {format_rate(rate)}, "
                "so latency wins over filling the rate with one flow")
    if need == buf:
        return f"{where}: the same size"
    if need < buf:
        short = _white_shortfall(rate, rtt, need)
        if short is not None:
            return (f"{where}; this advice's {format_bytes(need)} is smaller: at that size the paper measured "
                    f"{format_rate(short)} (the simulator's DOCSIS model, which this rule follows, keeps 95%: its "
                    "widest miss against the paper, docs/calibration.md)")
        return (f"{where}; this advice's {format_bytes(need)} is smaller and consistent with it (the paper "
                "states a size that sufficed, not the least that would)")
    return (f"{where}; this advice's {format_bytes(need)} is larger: by the simulator the paper's size keeps "
            "just under 95% of the rate with a halving TCP, which the paper counted as sufficient")


def advise(
    rate: float,
    rtt: float,
    flows: int = 1,
    latency_budget: float = G114_ONE_WAY_BUDGET,
    min_buffer: bool = False,
    model: Model | None = None,
    congestion_control: str = "reno",
    aqm_latency_target: float | None = None,
    mac: str = "docsis",
    sim_sizes: list[int] | None = None,
) -> Advice:
    """Recommended MinimumBuffer / TargetBuffer / MaximumBuffer for one service flow (docs/sizing.md).

    need    = the smallest size on the ladder (8 KiB, 16 KiB, ... 1 MiB) keeping 95% of the rate
              (``throughput_need``): the fluid sawtooth's share of the BDP for the sender's back-off
              (Reno 0.43 BDP, CUBIC 0.16 BDP; over sqrt(flows) for n desynchronised flows, Appenzeller
              et al.), plus 3 full packets, plus, when ``mac`` is "docsis" (a cable modem's upstream),
              rate x the request-grant MAC's access delay (``mac_access_delay``, from MacParams);
    budget  = the queueing delay the modem may add: the one-way budget (G.114 150 ms) less the
              path's one-way delay (rtt/2); maximum = rate x budget;
    target  = need, capped at the maximum (latency wins over filling the rate with one flow);
    minimum = only with ``min_buffer``: the target capped at 24,576 bytes, the size every CM
              must accept, so asking for it cannot get the flow rejected.

    ``model`` only fills the candidate table (analytic by default). A ``SimModel`` decides instead:
    it simulates ``sim_sizes`` (default ``CAMPAIGN_SIZES``) as a campaign's points and the target is
    ``choose``'s pick within the budget, the campaign report's answer for the same tier and traffic.

    ``aqm_latency_target`` (seconds): the flow runs DOCSIS-PIE (every DOCSIS 3.1 upstream by
    default, issue 20). The queue under load then settles at the target, not size / rate, so:
    need = the throughput need plus the standing queue PIE keeps (target x rate), on the ladder;
    maximum = 3 x rate x budget, since DOCSIS-PIE drops nothing early below a third of the
    buffer and that third is what a burst can queue before it acts; latency under load = the target.
    """
    budget, cap = _budget_and_cap(rate, rtt, flows, latency_budget)
    bdp = bdp_bytes(rate, rtt)
    need = throughput_need(rate, rtt, flows, congestion_control, mac)
    model_name = rule_name(congestion_control, mac)
    aqm = aqm_latency_target is not None
    if aqm:
        if not 0 < aqm_latency_target < budget:
            raise AdvisorError(f"AQM latency target {format_duration(aqm_latency_target)} must be > 0 and below "
                               f"the {format_duration(budget)} queue budget")
        standing = rate * aqm_latency_target / 8
        need = next((s for s in LADDER if s >= need + standing), _round_up_kib(need + standing))
        cap = 3 * cap
        model_name += f" + DOCSIS-PIE's {format_duration(aqm_latency_target)} standing queue"
        if model is None:
            model = functools.partial(predict_aqm, latency_target=aqm_latency_target)
    sizes = [s for s in LADDER if s <= max(need, cap) * 2] or [LADDER[0]]
    candidates = []
    picked = None
    if model is not None and hasattr(model, "many"):
        # The simulator: the campaign's policy (``choose``) over the sizes it would test, within the budget,
        # so the answer is the campaign's for the same tier, RTT and traffic
        sizes = list(sim_sizes or CAMPAIGN_SIZES)
        candidates = model.many([(rate, s, rtt, flows) for s in sizes])
        picked = choose([(c.buffer, c.utilization, c.latency_under_load) for c in candidates], budget)
        need = picked.buffer or need
        model_name = getattr(model, "name", "sim")
    reasons = [
        f"bandwidth-delay product: {format_rate(rate)} x {format_duration(rtt)} = {round(bdp)} bytes;"
        " a halving TCP flow needs about this much buffer to keep all of the rate, 95% of it with less",
    ]
    if flows > 1:
        reasons.append(f"{flows} flows share the buffer: BDP/sqrt({flows}) = {round(bdp / math.sqrt(flows))} bytes "
                       "suffice (Appenzeller et al.)")
    share = fluid_need(BACKOFF[congestion_control])
    reasons.append(f"a sender backing off to {BACKOFF[congestion_control]:g} x its window ({congestion_control}) keeps "
                   f"{THROUGHPUT_SHARE:.0%} of the rate with {share:.2g} BDP of buffer (the fluid sawtooth), plus "
                   f"{SLACK_PACKETS} full packets: a loss is seen a round trip late and the queue holds whole packets")
    if mac == "docsis":
        d = mac_access_delay()
        reasons.append(f"the DOCSIS request-grant MAC: a packet waits about {format_duration(d)} for its grant "
                       f"(map advance, map interval, request propagation, collisions: hfcprov.sim MacParams), so the "
                       f"modem holds {round(rate * d / 8)} bytes of waiting data on top of TCP's sawtooth")
    if picked is not None:
        reasons.append(f"simulated {', '.join(format_bytes(s) for s in sizes)} ({model_name}): {picked.reason}")
    else:
        reasons.append(f"throughput need: {format_bytes(need)}, the smallest size on the ladder "
                       f"({', '.join(format_bytes(s) for s in LADDER[:6])}, ...) that keeps {THROUGHPUT_SHARE:.0%} of "
                       f"the rate ({model_name})")
    if aqm:
        reasons.append(f"DOCSIS-PIE holds the queue under load near its {format_duration(aqm_latency_target)} "
                       f"target (RFC 8034), so the buffer no longer sets the latency: it absorbs the window's "
                       f"back-off burst plus the {round(rate * aqm_latency_target / 8)} bytes of standing queue")
        reasons.append(f"queue budget: {format_duration(latency_budget)} one way (ITU-T G.114) less the path's own "
                       f"{format_duration(rtt / 2)} leaves {format_duration(budget)}; PIE drops nothing early below "
                       f"a third of the buffer, so a burst may queue that third first: maximum = 3 x rate x budget "
                       f"= {cap} bytes at {format_rate(rate)}")
    else:
        reasons.append(f"queue budget: {format_duration(latency_budget)} one way (ITU-T G.114) less the path's own "
                       f"{format_duration(rtt / 2)} leaves {format_duration(budget)} for the modem's queue: "
                       f"maximum = {cap} bytes at {format_rate(rate)}")
    if cap < MAX_FRAME:
        reasons.append(f"even one full frame ({MAX_FRAME} bytes) takes "
                       f"{format_duration(latency_under_load(MAX_FRAME, rate))} at {format_rate(rate)}: the budget "
                       "cannot be met; target and maximum are one frame")
        target = cap = MAX_FRAME
    elif picked is not None:  # the campaign's choice: its simulated queueing delay is within the budget
        target = need
        cap = max(cap, target)
    elif need > cap:
        target = cap
        reasons.append("the budget, not the BDP, sets the target: a single flow will not fill the rate at this RTT;"
                       " prefer latency over bulk throughput (White et al. 2011)")
    else:
        target = need
    if aqm:
        reasons.append(f"latency under load = the AQM target: the target {format_bytes(target)} adds about "
                       f"{format_duration(min(aqm_latency_target, latency_under_load(target, rate)))} when the "
                       f"flow is saturated (drop-tail would add {format_duration(latency_under_load(target, rate))})")
    elif picked is not None and picked.delay is not None and target == picked.buffer:
        reasons.append(f"latency under load, simulated: the target {format_bytes(target)} adds "
                       f"{format_duration(picked.delay)} (a full queue would add "
                       f"{format_duration(latency_under_load(target, rate))})")
    else:
        reasons.append(f"latency under load = size / rate: the target {format_bytes(target)} adds "
                       f"{format_duration(latency_under_load(target, rate))} when the flow is saturated")
    minimum = None
    if min_buffer:
        minimum = min(target, CM_GUARANTEED_MINIMUM_BUFFER)
        reasons.append(f"minimum {minimum}: any DOCSIS 3.0 CM must accept a MinimumBuffer up to "
                       f"{CM_GUARANTEED_MINIMUM_BUFFER} bytes; a larger minimum risks the modem rejecting the flow")
    else:
        reasons.append("minimum omitted: White et al. recommend setting only the target (and a maximum) so the modem"
                       f" never rejects the flow; a MinimumBuffer <= {CM_GUARANTEED_MINIMUM_BUFFER} bytes is always "
                       "accepted")
    paper = None if aqm else relate_to_paper(rate, rtt, need, target)  # White et al. measured drop-tail
    if paper:
        reasons.append(paper)
    if not candidates:
        shown = sorted({*sizes, target, cap})
        candidates = [(model or predict)(rate, s, rtt, flows) for s in shown]
    return Advice(rate=rate, rtt=rtt, flows=flows, latency_budget=latency_budget, minimum=minimum, target=target,
                  maximum=cap, bdp=bdp, need=need, queue_budget=budget, model=model_name, paper=paper,
                  reasoning=reasons, candidates=candidates)


@functools.lru_cache(maxsize=1024)
def advise_target(rate: float, rtt: float, flows: int = 1, latency_budget: float = G114_ONE_WAY_BUDGET,
                  congestion_control: str = "reno", mac: str = "docsis") -> int:
    """TargetBuffer in bytes by the sizing policy (``advise``'s target, without the explanation).

    The one place templates get a target from; cached, since a bulk build asks per modem.
    """
    _, cap = _budget_and_cap(rate, rtt, flows, latency_budget)
    if cap < MAX_FRAME:
        return MAX_FRAME
    return min(throughput_need(rate, rtt, flows, congestion_control, mac), cap)


def _budget_and_cap(rate: float, rtt: float, flows: int, latency_budget: float) -> tuple[float, int]:
    """The queue budget (s) and the drop-tail maximum it allows (bytes); refused when no queue fits.
    ``advise`` and ``advise_target`` both start here, so a template refuses what the CLI refuses."""
    _check(rate, rtt, flows)
    if latency_budget <= 0:
        raise AdvisorError("latency budget must be > 0")
    budget = queue_budget(rtt, latency_budget)
    if budget <= 0:
        raise AdvisorError(f"the path's one-way delay ({format_duration(rtt / 2)}) already spends the "
                           f"{format_duration(latency_budget)} budget: no queue fits")
    return budget, int(round(rate * budget / 8, 6))


def _round_up_kib(n: float) -> int:
    return int(math.ceil(n / 1024)) * 1024


def _check(rate: float, rtt: float, flows: int) -> None:
    if rate <= 0:
        raise AdvisorError(f"rate must be > 0 (got {rate:g} b/s)")
    if rtt < 0:
        raise AdvisorError(f"rtt must be >= 0 (got {rtt:g} s)")
    if flows < 1:
        raise AdvisorError(f"flows must be >= 1 (got {flows})")
