"""Buffer Control sizing (service-flow TLV 24/25.35): the one policy, ``size_buffer`` (docs/sizing.md).

The reasoning follows White, Sundaresan & Briscoe, "Right-sizing cable modem
buffers" (CableLabs, 2011): a single long-lived TCP flow needs a buffer of about
one bandwidth-delay product to fill the flow's rate; every byte beyond that only
adds latency under load (size / rate), which ITU-T G.114 asks to keep below
150 ms one way. A CM is required to accept a MinimumBuffer up to 24,576 bytes.

    from hfcprov.queue import SizingInputs, size_buffer
    advice = size_buffer(SizingInputs(rate=20e6, rtt=0.040, congestion_control="cubic",
                                      aqm_latency_target=0.010))
    advice.target, advice.maximum, advice.reasoning

``size_buffer`` takes every input the answer depends on in one ``SizingInputs`` and is
what ``buffer advise``, ``buffer table``, the templates' ``advise_buffer`` and the campaign
report call: the same tier gives the same bytes everywhere. A ``model``
(``hfcprov.queue.predict``) fills the candidate table, or, when it measures (the
simulator's experiment, ``hfcprov.sim.upload.SimModel``), decides by ``choose`` as a
campaign does. ``choose`` is also the campaign report's rule over its own results.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field

from hfcprov.queue.inputs import G114_ONE_WAY_BUDGET, SizingError, SizingInputs
from hfcprov.queue.predict import (
    PACKET,
    SLACK_PACKETS,
    Model,
    Prediction,
    aimd_utilization,
    analytic,
    bdp_bytes,
    latency_under_load,
)
from hfcprov.units import format_bytes, format_duration, format_rate

# DOCSIS 3.0 MULPI: a CM must not reject a service flow whose MinimumBuffer is <= this.
CM_GUARANTEED_MINIMUM_BUFFER = 24_576
# A full-size Ethernet frame as the CM queues it.
MAX_FRAME = 1518
# The sizes a recommendation is chosen from: White et al.'s 8..256 KiB, doubling, up to 16 MiB (a gigabit
# DOCSIS 3.1 upstream needs a few MiB).
LADDER = tuple(1024 * 2 ** k for k in range(3, 15))
# The sizes a simulated advice tests: White et al.'s six, the README campaign's grid
CAMPAIGN_SIZES = LADDER[:6]
# A size "fills the rate" when it keeps this share of the best goodput any size reaches.
THROUGHPUT_SHARE = 0.95

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
# White et al. 2011, single upstream flow, sizes they measured short of the rate: (rate, rtt, buffer, goodput b/s).
WHITE_2011_SHORTFALLS = (
    (10e6, 0.040, 16384, 1.97e6),  # Fig. 6a
    (10e6, 0.100, 16384, 1.65e6),  # Fig. 6b: 4.95 / 3
    (10e6, 0.100, 65536, 6.05e6),  # Fig. 6b
)


@dataclass
class Advice:
    """What ``size_buffer`` recommends for one tier, and why."""

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
    congestion_control: str = "reno"
    mac: str = "docsis"
    aqm_latency_target: float | None = None
    profile: str = ""  # the modem profile the advice is for (hfcprov.queue.profile), as named
    warnings: list[str] = field(default_factory=list)  # e.g. a Max Traffic Burst that caps the rate

    def as_dict(self) -> dict:
        d = asdict(self)
        d["candidates"] = [asdict(c) for c in self.candidates]
        return d


# -- the parts of the rule ---------------------------------------------------------------------------------

def queue_budget(rtt: float, one_way: float = G114_ONE_WAY_BUDGET) -> float:
    """Seconds of queueing delay under load the modem may add: the one-way budget less the path's
    own one-way delay (rtt / 2), so the modem does not spend what the rest of the path needs."""
    return round(one_way - rtt / 2, 9)  # 0.15 - 0.05 is 0.0999...: keep whole bytes whole


@functools.lru_cache(maxsize=16)
def fluid_need(beta: float, share: float = THROUGHPUT_SHARE) -> float:
    """The buffer, in BDPs, with which an AIMD sender backing off to ``beta`` keeps ``share`` of the rate
    (``aimd_utilization``): 0.43 for Reno's halving, 0.16 for CUBIC's 0.7; 1 and 0.43 keep all of it."""
    lo, hi = 0.0, (1 - beta) / beta  # at (1 - beta) / beta BDP the window never falls below the pipe
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if aimd_utilization(mid, beta) < share else (lo, mid)
    return hi


def mac_delays(tier: SizingInputs) -> tuple[float, float]:
    """``SizingInputs.mac_delays``: (what the MAC adds to TCP's round trip, how long it holds the rate's data)."""
    return tier.mac_delays()


def rule_bytes(tier: SizingInputs) -> float:
    """The bytes keeping 95% of the rate, before the ladder: the fluid sawtooth's share of the
    bandwidth-delay product for the senders' back-off (``fluid_need``; over sqrt(flows) for several
    flows), the round trip including the MAC's own delay, plus ``SLACK_PACKETS`` full packets, plus,
    through the DOCSIS MAC, what the modem holds while it waits for grants (rate x the loop delay,
    ``mac_delays``). The simulator's DOCSIS models need this (docs/sizing.md)."""
    pipe, hold = mac_delays(tier)
    needed = fluid_need(tier.backoff) * bdp_bytes(tier.rate, tier.rtt + pipe) / math.sqrt(tier.flows)
    needed += SLACK_PACKETS * PACKET
    needed += tier.rate * hold / 8
    return needed


def throughput_need(tier: SizingInputs) -> int:
    """``rule_bytes`` put on the size ladder (8 KiB, 16 KiB, ...), before any AQM or budget."""
    return on_ladder(rule_bytes(tier))


def on_ladder(nbytes: float) -> int:
    """The smallest ladder size holding ``nbytes`` (whole KiB above the ladder)."""
    return next((s for s in LADDER if s >= nbytes), int(math.ceil(nbytes / 1024)) * 1024)


def rule_name(tier: SizingInputs) -> str:
    """How reports name the rule behind a need: the formula and the profile it is for."""
    pipe, hold = mac_delays(tier)
    name = f"rule: {fluid_need(tier.backoff):.2g} BDP + {SLACK_PACKETS} packets"
    if tier.mac == "docsis":
        name += f" + rate x {hold * 1e3:.1f} ms ({tier.modem.name}: request-grant MAC)"
    else:
        name += " (token bucket)"
    return f"{name}, on the size ladder ({tier.congestion_control})"


def carried_rate(tier: SizingInputs) -> float:
    """b/s of Ethernet frames the tier's upstream can carry at most: the profile's channel less other modems'
    share (a token bucket: unbounded)."""
    if tier.mac != "docsis":
        return float("inf")
    p = tier.modem
    return p.capacity * (1 - p.congestion) * p.mean_frame / (p.mean_frame + p.mac_header)


def tier_warnings(tier: SizingInputs) -> list[str]:
    """What is wrong with the tier on its upstream that no buffer fixes (one line each)."""
    out = []
    cap = tier.burst_cap() if tier.rate <= carried_rate(tier) else None  # beyond the channel: size_buffer refuses
    if cap is not None:
        p = tier.modem
        need = int(math.ceil(tier.rate / 8 * 2 * p.actual_map_interval / 1000)) * 1000
        out.append(f"MaxTrafficBurst {tier.tier_burst} B caps this {format_rate(tier.rate)} flow at about "
                   f"{cap / 1e6:.3g} Mb/s on {p.name}'s {p.actual_map_interval * 1e3:.3g} ms MAPs (the CMTS grants "
                   f"at most the burst per MAP): set it to at least {need} B (two MAPs at the rate)")
    return out


def flow_checks(flow, profile: str | None = None) -> list[tuple[str, str]]:
    """What an upstream ``hfcprov.model.ServiceFlow`` provisions that its modem profile's upstream cannot
    carry, as (kind, one line): "capacity" (a rate beyond the channel) or "burst" (a Max Traffic Burst that
    caps the rate). The check ``hfcprov config lint`` applies to each upstream flow."""
    if flow.direction != "upstream" or not flow.max_sustained_rate:
        return []
    try:
        tier = SizingInputs(float(flow.max_sustained_rate), 0.020, aqm_latency_target=None,
                            profile=profile or "docsis3.1", burst=flow.burst, peak=flow.peak_rate)
    except SizingError as err:
        return [("capacity", str(err))]
    return upstream_checks(tier)


def upstream_checks(tier: SizingInputs) -> list[tuple[str, str]]:
    """``flow_checks`` of a tier already in hand (``sim run`` checks its scenario's upstream so): "capacity",
    a rate beyond what the profile's upstream carries, or "burst", a Max Traffic Burst that caps the rate."""
    if tier.rate > carried_rate(tier):
        return [("capacity", f"{tier.modem.name}'s upstream carries {carried_rate(tier) / 1e6:.4g} Mb/s of frames: "
                             f"it cannot carry this {format_rate(tier.rate)} flow")]
    return [("burst", w) for w in tier_warnings(tier)]


def flow_warnings(flow, profile: str | None = None) -> list[str]:
    """``flow_checks``' lines alone."""
    return [line for _, line in flow_checks(flow, profile)]


def queue_delay(loaded_p50: float | None, idle_p50: float | None, rtt: float) -> float | None:
    """The delay a loaded queue adds: loaded median RTT less the idle one (the base RTT when no idle
    probes ran). The campaign report and ``SimModel`` both measure latency under load this way."""
    if loaded_p50 is None:
        return None
    return max(0.0, loaded_p50 - (idle_p50 if idle_p50 is not None else rtt))


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
    its measured or simulated points, and by ``size_buffer`` with a measuring model.
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


def _white_shortfall(rate: float, rtt: float, buffer: int) -> float | None:
    """The single-flow goodput White et al. measured short of the rate at this size, if they did."""
    for f_rate, f_rtt, f_buf, goodput in WHITE_2011_SHORTFALLS:
        if (f_rate, f_rtt, f_buf) == (rate, rtt, buffer):
            return goodput
    return None


def relate_to_paper(tier: SizingInputs, need: int, target: int) -> str | None:
    """How a recommendation relates to White et al.'s finding for the same tier (None: they state none).

    Their figures are of a DOCSIS 3.0 modem on one SC-QAM channel: on another profile the advice says so."""
    rate, rtt = tier.rate, tier.rtt
    found = white_finding(rate, rtt)
    if found is not None and tier.mac == "docsis" and tier.modem.calibrated is None:
        return (f"White et al. 2011 measured this tier on one SC-QAM channel ({found[1]}); "
                f"{tier.modem.name}'s request-grant loop is shorter, so this advice is for a different upstream")
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


# -- the policy ------------------------------------------------------------------------------------------

def size_buffer(tier: SizingInputs, model: Model | None = None, *, min_buffer: bool = False,
                sim_sizes: list[int] | None = None, table: bool = True) -> Advice:
    """Recommended MinimumBuffer / TargetBuffer / MaximumBuffer for one service flow (docs/sizing.md).

    need    = the smallest size on the ladder (8 KiB, 16 KiB, ...) keeping 95% of the rate
              (``throughput_need``): the fluid sawtooth's share of the bandwidth-delay product for the
              sender's back-off (Reno 0.43, CUBIC 0.16; over sqrt(flows) for n desynchronised flows,
              Appenzeller et al.), the round trip including the MAC's loop, plus 3 full packets, plus, when
              ``tier.mac`` is "docsis" (a cable modem's upstream), rate x the loop delay of the tier's modem
              profile (``mac_delays``);
    budget  = the queueing delay the modem may add: the one-way budget (G.114 150 ms) less the
              path's one-way delay (rtt/2); maximum = rate x budget;
    target  = need, capped at the maximum (latency wins over filling the rate with one flow);
    minimum = only with ``min_buffer``: the target capped at 24,576 bytes, the size every CM
              must accept, so asking for it cannot get the flow rejected.

    ``tier.aqm_latency_target`` (seconds; by default what the profile's modem runs: DOCSIS-PIE at 10 ms on
    DOCSIS 3.1): the queue under load settles at the target, not size / rate, so: need = the throughput
    need plus the standing queue PIE keeps (target x rate), on the ladder; maximum = 3 x rate x budget,
    since DOCSIS-PIE drops nothing early below a third of the buffer and that third is what a burst can
    queue before it acts; latency under load = the target.

    A tier its upstream cannot carry (the profile's channel, less other modems' load) is refused
    (``SizingError``): no buffer fixes it. A Max Traffic Burst that caps the rate is a warning
    (``Advice.warnings``, ``tier_warnings``).

    ``model`` (``hfcprov.queue.predict.Model``, default ``analytic``) fills the candidate table. A model
    that measures (``measures = True``: the simulator's experiment) decides instead: it runs ``sim_sizes``
    (default: the campaign's sizes, more around the rule's need for fast tiers) as a campaign's points and
    the target is ``choose``'s pick within the budget, the campaign report's answer for the same tier and
    traffic. Before choosing it checks that its upstream carries the tier at all (``model.carries``): a
    simulated plateau below the rate is a model error, never a recommendation.

    ``table=False``: no ``candidates`` table around the answer when the model does not measure (half the
    work of an analytic advice; a tier template needs only the target: ``tiers.templates.advise_buffer``).
    """
    rate, rtt, flows, cc = tier.rate, tier.rtt, tier.flows, tier.congestion_control
    latency_budget, aqm_target = tier.latency_budget, tier.aqm_latency_target
    budget, cap = _budget_and_cap(tier)
    carried = carried_rate(tier)
    if rate > carried:
        p = tier.modem
        raise SizingError(f"{p.summary()}: the upstream carries {carried / 1e6:.4g} Mb/s of frames"
                          f"{' beside other modems' if p.congestion else ''}: it cannot carry a {format_rate(rate)} "
                          "tier with any buffer (choose a profile with more upstream capacity, e.g. docsis3.1-highsplit)")
    warnings = tier_warnings(tier)
    pipe, hold = mac_delays(tier)
    bdp = bdp_bytes(rate, rtt + pipe)
    need = throughput_need(tier)
    model_name = rule_name(tier)
    aqm = aqm_target is not None
    measures = model is not None and getattr(model, "measures", False)
    if aqm:
        if not aqm_target < budget:
            raise SizingError(f"AQM latency target {format_duration(aqm_target)} must be > 0 and below "
                              f"the {format_duration(budget)} queue budget")
        standing = rate * aqm_target / 8
        need = on_ladder(need + standing)
        cap = 3 * cap
        model_name += f" + DOCSIS-PIE's {format_duration(aqm_target)} standing queue"
    model = model or analytic
    sizes = [s for s in LADDER if s <= max(need, cap) * 2] or [LADDER[0]]
    candidates = []
    picked = None
    if measures:
        # The simulator: the campaign's policy (``choose``) over the sizes it would test, within the budget,
        # so the answer is the campaign's for the same tier, RTT and traffic
        sizes = list(sim_sizes or sim_ladder(need, cap))
        check = getattr(model, "carries", None)
        if check is not None:
            check(tier)  # raises SizingError when the simulated upstream cannot carry the tier
        candidates = model([(tier, s) for s in sizes])
        picked = choose([(c.buffer, c.utilization, c.latency_under_load) for c in candidates], budget)
        need = picked.buffer or need
        model_name = candidates[0].model if candidates else "sim"
    where = (f"{tier.modem.summary()}, request-grant MAC" if tier.mac == "docsis"
             else "a token bucket (no request-grant MAC)")
    reasons = [f"upstream: {where}"]
    reasons.append(f"bandwidth-delay product: {format_rate(rate)} x {format_duration(rtt + pipe)}"
                   + (f" (the {format_duration(rtt)} round trip and the MAC's {format_duration(pipe)} loop)"
                      if pipe else "") + f" = {round(bdp)} bytes;"
                   " a halving TCP flow needs about this much buffer to keep all of the rate, 95% of it with less")
    if flows > 1:
        reasons.append(f"{flows} flows share the buffer: BDP/sqrt({flows}) = {round(bdp / math.sqrt(flows))} bytes "
                       "suffice (Appenzeller et al.)")
    share = fluid_need(tier.backoff)
    reasons.append(f"a sender backing off to {tier.backoff:g} x its window ({cc}) keeps "
                   f"{THROUGHPUT_SHARE:.0%} of the rate with {share:.2g} BDP of buffer (the fluid sawtooth), plus "
                   f"{SLACK_PACKETS} full packets: a loss is seen a round trip late and the queue holds whole packets")
    if tier.mac == "docsis":
        how = ("the 2011 calibration's access delay: map advance, map interval, request propagation, collisions"
               if tier.modem.calibrated is not None else
               "next request opportunity, the request's trip, the MAP's build and lead, the grant's place in its "
               "MAP: hfcprov.queue.profile")
        reasons.append(f"the DOCSIS request-grant MAC: a packet waits about {format_duration(hold)} for its grant "
                       f"({how}), so the modem holds {round(rate * hold / 8)} bytes of waiting data on top of "
                       "TCP's sawtooth")
    if picked is not None:
        reasons.append(f"simulated {', '.join(format_bytes(s) for s in sizes)} ({model_name}): {picked.reason}")
    else:
        reasons.append(f"throughput need: {format_bytes(need)}, the smallest size on the ladder "
                       f"({', '.join(format_bytes(s) for s in LADDER[:6])}, ...) that keeps {THROUGHPUT_SHARE:.0%} of "
                       f"the rate ({model_name})")
    if aqm:
        reasons.append(f"DOCSIS-PIE holds the queue under load near its {format_duration(aqm_target)} "
                       f"target (RFC 8034), so the buffer no longer sets the latency: it absorbs the window's "
                       f"back-off burst plus the {round(rate * aqm_target / 8)} bytes of standing queue")
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
    if aqm and picked is not None and picked.delay is not None and target == picked.buffer:
        reasons.append(f"latency under load, simulated with DOCSIS-PIE: the target {format_bytes(target)} adds "
                       f"{format_duration(picked.delay)} (drop-tail would add up to "
                       f"{format_duration(latency_under_load(target, rate))})")
    elif aqm:
        reasons.append(f"latency under load = the AQM target: the target {format_bytes(target)} adds about "
                       f"{format_duration(min(aqm_target, latency_under_load(target, rate)))} when the "
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
    paper = None if aqm else relate_to_paper(tier, need, target)  # White et al. measured drop-tail
    if paper:
        reasons.append(paper)
    reasons += [f"warning: {w}" for w in warnings]
    if not candidates and table:
        candidates = model([(tier, s) for s in sorted({*sizes, target, cap})])
    return Advice(rate=rate, rtt=rtt, flows=flows, latency_budget=latency_budget, minimum=minimum, target=target,
                  maximum=cap, bdp=bdp, need=need, queue_budget=budget, model=model_name, paper=paper,
                  reasoning=reasons, candidates=candidates, congestion_control=cc, mac=tier.mac,
                  aqm_latency_target=aqm_target, profile=tier.modem.name, warnings=warnings)


def sim_ladder(need: int, cap: int) -> list[int]:
    """The sizes a simulated advice tests: the campaign's (8-256 KiB, White et al.'s) where the rule's need
    sits well inside them, else the ladder from an eighth of the need to four times it."""
    if need * 2 <= CAMPAIGN_SIZES[-1]:
        return list(CAMPAIGN_SIZES)
    return [s for s in LADDER if need / 8 <= s <= need * 4]


def _budget_and_cap(tier: SizingInputs) -> tuple[float, int]:
    """The queue budget (s) and the drop-tail maximum it allows (bytes); refused when no queue fits."""
    budget = queue_budget(tier.rtt, tier.latency_budget)
    if budget <= 0:
        raise SizingError(f"the path's one-way delay ({format_duration(tier.rtt / 2)}) already spends the "
                          f"{format_duration(tier.latency_budget)} budget: no queue fits")
    return budget, int(round(tier.rate * budget / 8, 6))
