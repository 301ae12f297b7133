"""Low Latency DOCSIS as MULPI provisions it: which upstream flows a modem runs as one dual queue.

The one rule simulator, emulator, audit, advisor and lab read (units: bits/s, bytes, seconds).

MULPI (DOCSIS 3.1, from I19: Low Latency DOCSIS) puts the dual queue in one place only: a *Low
Latency Aggregate Service Flow*, an Aggregate Service Flow (TLV 70 upstream, 71 downstream) with
its Low Latency encodings (70/71.42) grouping two service flows, each naming the aggregate in
24/25.36:

- the **classic** flow: the aggregate's classic queue, DOCSIS-PIE (24.40.2 its latency target),
  the queue its Buffer Control sizes;
- the **low-latency** flow, the one 70.42.1 names: the low-latency queue, run by the Immediate
  AQM (24.40.4/5 its ramp) and protected by queue protection (70.42.7, 70.42.8-10);
- the aggregate's own parameters: the rate and burst both flows share (70.8/9/27), the AQM
  coupling factor (70.42.5, tenths; default 2.0), the scheduling weight of the low-latency flow
  (70.42.6, of 256; default 230, MULPI 7.7.3.2's weighted round robin between the two).

The low-latency flow may be granted proactively (Proactive Grant Service: Guaranteed Grant Rate
24.45 in bit/s, Guaranteed Grant Interval 24.44 in microseconds): the CMTS grants it GGR x GGI
bytes every GGI whether it asked or not, which removes the request-grant loop from its latency.
A low-latency flow with a GGR is a PGS flow here, as CableLabs' docsis-ns3 takes it (its
scheduling type 24.15 = 7 is MULPI 3.1's value for PGS).

**A single service flow with 24.40.3 = 2 (Immediate AQM)** is no dual queue. MULPI defines the
Immediate AQM as the low-latency queue's AQM of a Low Latency Aggregate Service Flow (MULPIv3.1
section 7.7.4 and Annex N; the AQM Algorithm encoding, Annex C.2.2.7.15.3, C.2.2.9.15.3 in the
numbering of the TLV facts this project uses); a flow in no such aggregate is an individual
service flow, whose one queue runs DOCSIS-PIE (the 3.1 default, on unless 24.40.1 or TLV 76
switch AQM off). So the modem runs DOCSIS-PIE on it, at its 24.40.2 target, and its 24.40.4/5
ramp is unused; ``lld_findings`` says so, and ``upstream_aqm`` (``hfcprov.model.flow``) returns the
DOCSIS-PIE the modem runs.

Where LLD does not run, the aggregate is its classic flow (DOCSIS-PIE at the aggregate's rate):
a DOCSIS 3.0 modem (no LLD), TLV 91 (Low Latency Disable), or an aggregate without a low-latency
member. An aggregate that names its flows only by service class name (70.42.3/4) leaves them to
the CMTS's class definitions, which a config file does not carry: not modelled (``lld_findings``).
"""

from __future__ import annotations

from dataclasses import dataclass

from hfcprov.model.flow import (
    DEFAULT_DOCSIS_VERSION,
    AggregateServiceFlow,
    AqmSettings,
    ModemSettings,
    ServiceFlow,
    check_docsis_version,
    upstream_aqm,
)

DEFAULT_COUPLING = 2.0  # k, 70.42.5 absent (the TLV carries tenths: 20)
DEFAULT_SCHEDULING_WEIGHT = 230  # 70.42.6 absent: the low-latency flow's share of 256
PGS_SCHEDULING_TYPE = 7  # 24.15: Proactive Grant Service (MULPI 3.1)
# The low-latency queue when the LL flow's file gives no Buffer Control: 10 ms at the aggregate rate,
# at least 20 frames (``hfcprov.queue.dualq.DualQueue``'s own default).
LL_BUFFER_TIME = 0.010


@dataclass(frozen=True)
class ProactiveGrants:
    """Proactive Grant Service on the low-latency flow: ``rate`` (GGR, bits/s) every ``interval``
    (GGI, seconds; None: the CMTS's choice, one MAP interval in docsis-ns3)."""

    rate: float
    interval: float | None = None

    def bytes_per_interval(self, default_interval: float) -> float:
        """What each grant carries at least (MULPI's B_G >= GGI x GGR, segment headers aside)."""
        return self.rate * (self.interval or default_interval) / 8.0


@dataclass(frozen=True)
class LowLatencyAggregate:
    """An aggregate service flow a modem runs as the LLD dual queue, with every parameter effective."""

    asf: AggregateServiceFlow
    classic: ServiceFlow
    low_latency: ServiceFlow
    rate: float  # bits/s: the aggregate's Max Sustained Rate (else the classic flow's)
    burst: int  # bytes: the aggregate's Max Traffic Burst (else the classic flow's)
    peak: float | None  # bits/s
    classic_aqm: AqmSettings  # DOCSIS-PIE on the classic queue (its latency target)
    immediate_aqm: AqmSettings | None  # the low-latency flow's IAQM ramp; None: 24.40.1 switched it off
    coupling: float = DEFAULT_COUPLING
    weight: int = DEFAULT_SCHEDULING_WEIGHT
    queue_protection: bool = True
    qp_latency_threshold: float | None = None  # s (70.42.8, microseconds there); None: the IAQM ramp's top
    qp_score_threshold: float | None = None  # s (70.42.9, microseconds there)
    qp_drain_exponent: int | None = None  # 70.42.10: scores drain at 2^x bytes/s
    pgs: ProactiveGrants | None = None

    @property
    def members(self) -> tuple[ServiceFlow, ServiceFlow]:
        return self.classic, self.low_latency

    @property
    def name(self) -> str:
        return f"aggregate service flow {self.asf.path or self.asf.ref}"

    def classic_buffer(self) -> int:
        """The classic queue: the classic flow's Buffer Control (``ServiceFlow.queue_size``)."""
        return self.classic.queue_size()

    def ll_buffer(self) -> int | None:
        """The low-latency queue, bytes: its flow's Buffer Control; None when the file gives none
        (the dual queue's default, ``LL_BUFFER_TIME`` at the rate)."""
        b = self.low_latency.buffer
        if all(v is None for v in (b.minimum, b.target, b.maximum)):
            return None
        return self.low_latency.queue_size(default=max(int(LL_BUFFER_TIME * self.rate / 8), 40_000))

    @property
    def ll_rate(self) -> float | None:
        """The low-latency flow's own Max Sustained Rate (None: only the aggregate's)."""
        return self.low_latency.max_sustained_rate or None


def members(asf: AggregateServiceFlow, flows: list[ServiceFlow]) -> tuple[ServiceFlow | None, ServiceFlow | None]:
    """``(classic, low_latency)``: the flows of ``asf``'s direction naming it in 24/25.36; the
    low-latency one is the flow 70/71.42.1 names, the classic the first other member."""
    mine = [f for f in flows if f.direction == asf.direction and asf.ref is not None and f.asf_ref == asf.ref]
    ll = next((f for f in mine if asf.low_latency_ref is not None and f.ref == asf.low_latency_ref), None)
    classic = next((f for f in mine if f is not ll), None)
    return classic, ll


def runs_low_latency(settings: ModemSettings | None, docsis_version: str = DEFAULT_DOCSIS_VERSION) -> bool:
    """Does a modem of ``docsis_version`` run LLD at all (3.1 and TLV 91 not disabling it)?"""
    check_docsis_version(docsis_version)
    return docsis_version != "3.0" and not (settings is not None and settings.low_latency_disabled)


def low_latency_aggregate(asf: AggregateServiceFlow, flows: list[ServiceFlow], settings: ModemSettings | None = None,
                          docsis_version: str = DEFAULT_DOCSIS_VERSION) -> LowLatencyAggregate | None:
    """The dual queue a modem runs for ``asf``, or None when it runs none (no low-latency member,
    no classic member, a downstream aggregate, a DOCSIS 3.0 modem, TLV 91)."""
    classic, ll = members(asf, flows)
    if asf.direction != "upstream" or classic is None or ll is None or not runs_low_latency(settings, docsis_version):
        return None
    rate = asf.max_sustained_rate or classic.max_sustained_rate
    if not rate:
        return None
    classic_aqm = upstream_aqm(classic, settings, docsis_version) or AqmSettings()
    ll_aqm = ll.aqm
    immediate = None if ll_aqm.disable else ll_aqm
    pgs = None
    if ll.guaranteed_grant_rate:
        pgs = ProactiveGrants(float(ll.guaranteed_grant_rate), ll.guaranteed_grant_interval)
    us = 1e-6
    return LowLatencyAggregate(
        asf=asf, classic=classic, low_latency=ll, rate=float(rate),
        burst=asf.max_traffic_burst or classic.burst, peak=float(asf.peak_rate) if asf.peak_rate else None,
        classic_aqm=classic_aqm, immediate_aqm=immediate,
        coupling=asf.coupling_factor / 10.0 if asf.coupling_factor is not None else DEFAULT_COUPLING,
        weight=asf.scheduling_weight or DEFAULT_SCHEDULING_WEIGHT,
        queue_protection=asf.queue_protection if asf.queue_protection is not None else True,
        qp_latency_threshold=asf.qp_latency_threshold_us * us if asf.qp_latency_threshold_us else None,
        qp_score_threshold=asf.qp_score_threshold_us * us if asf.qp_score_threshold_us else None,
        qp_drain_exponent=asf.qp_drain_exponent or None, pgs=pgs)


def low_latency_aggregates(flows: list[ServiceFlow], aggregates: list[AggregateServiceFlow],
                           settings: ModemSettings | None = None,
                           docsis_version: str = DEFAULT_DOCSIS_VERSION) -> list[LowLatencyAggregate]:
    """Every upstream aggregate the modem runs as a dual queue, in file order."""
    out = []
    for asf in aggregates:
        lla = low_latency_aggregate(asf, flows, settings, docsis_version)
        if lla is not None:
            out.append(lla)
    return out


def lld_findings(flows: list[ServiceFlow], aggregates: list[AggregateServiceFlow]) -> list[str]:
    """What a modem does differently from what the file seems to ask, about LLD (one line each)."""
    out = []
    for f in flows:
        if f.aqm.algorithm_code == 2 and not f.low_latency:
            out.append(f"{f.name}: AQMAlgorithm 2 (Immediate AQM) applies only to the low-latency flow of an "
                       "aggregate service flow (TLV 70/71 .42.1; MULPI C.2.2.7.15.3): a modem runs DOCSIS-PIE "
                       "on this flow, no dual queue")
        if f.guaranteed_grant_rate and not f.low_latency:
            out.append(f"{f.name}: a Guaranteed Grant Rate (24.45, Proactive Grant Service) outside an "
                       "aggregate's low-latency flow: not modelled")
        if f.low_latency and f.scheduling_type not in (None, 2, PGS_SCHEDULING_TYPE) and f.guaranteed_grant_rate:
            out.append(f"{f.name}: SchedulingType {f.scheduling_type} with a Guaranteed Grant Rate: simulated as "
                       "Proactive Grant Service")
    for asf in aggregates:
        classic, ll = members(asf, flows)
        where = f"aggregate service flow {asf.path or asf.ref}"
        if asf.low_latency_ref is None and (asf.low_latency_scn or asf.classic_scn):
            out.append(f"{where}: names its flows by service class name only (.42.3/.42.4): the CMTS's class "
                       "definitions decide them; not modelled")
        elif asf.low_latency_ref is not None and ll is None:
            out.append(f"{where}: its low-latency flow (.42.1 = {asf.low_latency_ref}) is no flow of the file that "
                       "names the aggregate (24/25.36): no dual queue")
        if asf.low_latency_ref is not None and classic is None:
            out.append(f"{where}: no classic flow names it (24/25.36): no dual queue")
    return out
