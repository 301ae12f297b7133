"""A service flow and the rules a cable modem applies to it: the one model sim, emu, audit and lab read.

Units are plain numbers: bits/s for rates, bytes for sizes, seconds for times.
The rules live here and nowhere else:

- ``BufferControl.queue_size``: the queue a modem gives a flow (MULPI "Buffer
  Control": the target clamped into [minimum, maximum], the modem's default
  when the file gives no target, refused when the minimum cannot be met).
- ``ServiceFlow.burst``: Max Traffic Burst, DOCSIS default 3044 bytes.
- ``AqmSettings``: TLV 24/25.40 with the CM's defaults (DOCSIS-PIE, 10 ms).
- ``upstream_aqm``: the AQM a modem of a given DOCSIS version runs on a flow's queue
  (the one rule the simulator and the emulated modem both apply); which flows share the
  Low Latency DOCSIS dual queue is ``hfcprov.model.lld``'s.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

from hfcprov.errors import HfcprovError

TYPE_CHECKING = False  # typing's own flag would import typing: ~3 ms of every command's start-up
if TYPE_CHECKING:
    from typing import Literal

    Direction = Literal["upstream", "downstream"]
else:
    Direction = str  # "upstream" or "downstream"

# DOCSIS defaults (MULPI Annex C.2.2.7): what a CM uses when the file leaves a parameter out.
DEFAULT_MAX_TRAFFIC_BURST = 3044  # bytes, 24/25.9 (two full Ethernet frames plus MAC headers)
DEFAULT_AQM_LATENCY_TARGET = 0.010  # s, 24/25.40.2: DOCSIS-PIE's target when the file gives none
DEFAULT_IAQM_MAX_THRESHOLD = 0.001  # s, 24/25.40.4: Immediate AQM ramp top (1000 us)
DEFAULT_IAQM_RANGE_EXPONENT = 19  # 24/25.40.5: ramp width 2**19 ns (about 0.52 ms)
# The emulated (and a typical) modem's queue limits: a datasheet figure, not a DOCSIS value.
DEFAULT_QUEUE = 64 * 1024  # bytes: the queue when the file has no TargetBuffer
LARGEST_QUEUE = 1024 * 1024  # bytes: the largest queue it can give one flow

AQM_ALGORITHMS = {1: "docsis-pie", 2: "immediate"}  # 24/25.40.3 (0 and absent: the CM's default)
DOCSIS_PIE, IMMEDIATE_AQM = 1, 2
DOCSIS_VERSIONS = ("3.0", "3.1")  # the modem versions ``upstream_aqm`` knows
DEFAULT_DOCSIS_VERSION = "3.1"  # what operators deploy today: upstream DOCSIS-PIE on by default


class BufferRejected(HfcprovError):
    """A modem must refuse the flow: its Buffer Control cannot be honoured (the message says why)."""


@dataclass(frozen=True)
class BufferControl:
    """Service-flow TLV 24/25.35: the CM's queue for this flow, in bytes (DOCSIS 3.0)."""

    minimum: int | None = None  # 35.1 MinimumBuffer
    target: int | None = None  # 35.2 TargetBuffer
    maximum: int | None = None  # 35.3 MaximumBuffer

    def rejection(self, largest: int = LARGEST_QUEUE) -> str | None:
        """Why a modem whose largest queue is ``largest`` bytes must refuse this, or None."""
        if self.minimum is not None and self.minimum > largest:
            return (f"MinimumBuffer {self.minimum} bytes exceeds the {largest} bytes this modem "
                    "supports; flow rejected")
        if self.minimum is not None and self.maximum is not None and self.minimum > self.maximum:
            return f"MinimumBuffer {self.minimum} > MaximumBuffer {self.maximum}; flow rejected"
        return None

    def queue_size(self, default: int = DEFAULT_QUEUE, largest: int = LARGEST_QUEUE) -> int:
        """The queue in bytes a modem gives this flow (MULPI "Buffer Control").

        The target (the modem's ``default`` when absent) clamped into [minimum, maximum],
        the maximum itself capped at the modem's ``largest``. Raises ``BufferRejected``
        when the minimum cannot be provided.
        """
        reason = self.rejection(largest)
        if reason:
            raise BufferRejected(reason)
        size = self.target if self.target is not None else default
        hi = min(self.maximum if self.maximum is not None else largest, largest)
        lo = self.minimum if self.minimum is not None else 0
        return max(lo, min(size, hi))


@dataclass(frozen=True)
class AqmSettings:
    """Service-flow TLV 24/25.40 AQM Encodings as the file gives them (None: absent).

    The effective values (``enabled``, ``algorithm``, ``latency_target``...) apply the CM's
    defaults; ``cm_disabled`` is TLV 76 (CM Upstream AQM Disable), which switches AQM off on
    every upstream flow whatever 24.40 says.
    """

    disable: bool | None = None  # 40.1 SF AQM Disable
    latency_target_ms: int | None = None  # 40.2 SF AQM Latency Target, ms (0: the default)
    algorithm_code: int | None = None  # 40.3 AQM Algorithm: 1 DOCSIS-PIE, 2 Immediate AQM
    iaqm_max_threshold_us: int | None = None  # 40.4 Immediate AQM Max Threshold, microseconds
    iaqm_range_exponent: int | None = None  # 40.5 Immediate AQM Range Exponent (ns, log2)
    cm_disabled: bool = False  # TLV 76 for an upstream flow

    @property
    def enabled(self) -> bool:
        return not (self.disable or self.cm_disabled)

    @property
    def requested(self) -> bool:
        """The file gives 24.40 (any sub-TLV) and neither 24.40.1 nor TLV 76 switches AQM off."""
        given = (self.disable, self.latency_target_ms, self.algorithm_code, self.iaqm_max_threshold_us,
                 self.iaqm_range_exponent)
        return self.enabled and any(v is not None for v in given)

    @property
    def algorithm(self) -> str:
        """``docsis-pie`` (the default) or ``immediate``; ``none`` when AQM is off."""
        if not self.enabled:
            return "none"
        return AQM_ALGORITHMS.get(self.algorithm_code or 0, "docsis-pie")

    @property
    def latency_target(self) -> float:
        """Seconds: the file's target, else DOCSIS-PIE's default 10 ms."""
        return self.latency_target_ms / 1e3 if self.latency_target_ms else DEFAULT_AQM_LATENCY_TARGET

    @property
    def iaqm_max_threshold(self) -> float:
        """Seconds: Immediate AQM's ramp top (default 1 ms)."""
        us = self.iaqm_max_threshold_us
        return us / 1e6 if us else DEFAULT_IAQM_MAX_THRESHOLD

    @property
    def iaqm_range(self) -> float:
        """Seconds: the width of Immediate AQM's ramp, 2**exponent ns (default 2**19)."""
        exp = self.iaqm_range_exponent if self.iaqm_range_exponent is not None else DEFAULT_IAQM_RANGE_EXPONENT
        return (1 << exp) * 1e-9


@dataclass(frozen=True)
class ServiceFlow:
    """One upstream (TLV 24) or downstream (TLV 25) service flow, or a DOCSIS 1.0 class of service."""

    direction: Direction
    ref: int | None = None  # 24/25.1 ServiceFlowReference (or 4.1 ClassID for DOCSIS 1.0)
    sfid: int | None = None  # 24/25.2 ServiceFlowId
    service_class_name: str | None = None  # 24/25.4
    qos_param_set_type: int | None = None  # 24/25.6 bitmask: 1 provisioned, 2 admitted, 4 active
    traffic_priority: int | None = None  # 24/25.7
    max_sustained_rate: float | None = None  # 24/25.8 bits/s
    max_traffic_burst: int | None = None  # 24/25.9 bytes (None: the file leaves it; see ``burst``)
    min_reserved_rate: float | None = None  # 24/25.10 bits/s
    peak_rate: float | None = None  # 24/25.27 bits/s
    max_concatenated_burst: int | None = None  # 24.14 bytes
    scheduling_type: int | None = None  # 24.15: 2 best effort, 6 UGS, ...
    max_latency: float | None = None  # 25.14 seconds
    asf_ref: int | None = None  # 24/25.36 the aggregate service flow (TLV 70/71) it belongs to
    # the file makes it the low-latency flow of its aggregate (70/71.42.1 names it; hfcprov.model.lld)
    low_latency: bool = False
    guaranteed_grant_rate: float | None = None  # 24.45 bits/s (Proactive Grant Service)
    guaranteed_grant_interval: float | None = None  # 24.44 seconds (microseconds in the file)
    buffer: BufferControl = field(default_factory=BufferControl)
    # Where the buffer figures came from: "24.35"/"25.35", "68" (default upstream target), or None.
    buffer_source: str | None = None
    aqm: AqmSettings = field(default_factory=AqmSettings)
    path: str = ""  # TLV path of the flow in its file, e.g. "24[0]" (first TLV 24)

    @property
    def target_buffer(self) -> int | None:
        return self.buffer.target

    @property
    def aqm_disabled(self) -> bool | None:
        """24/25.40.1 as the file gives it (None: absent)."""
        return self.aqm.disable

    @property
    def burst(self) -> int:
        """Max Traffic Burst in bytes, the DOCSIS default 3044 when the file gives none."""
        return self.max_traffic_burst if self.max_traffic_burst else DEFAULT_MAX_TRAFFIC_BURST

    @property
    def rate(self) -> float | None:
        """Max Sustained Rate in bits/s; None for no limit (DOCSIS rate 0 or absent)."""
        return self.max_sustained_rate or None

    def queue_size(self, default: int = DEFAULT_QUEUE, largest: int = LARGEST_QUEUE) -> int:
        """The queue a modem gives this flow, bytes (``BufferControl.queue_size``)."""
        return self.buffer.queue_size(default, largest)

    @property
    def name(self) -> str:
        """How messages name the flow: ``service flow 24[0] (ref 1)``."""
        return f"service flow {self.path or self.direction}" + (f" (ref {self.ref})" if self.ref is not None else "")

    def as_dict(self) -> dict:
        return asdict(self)

    def conflicts(self) -> list[tuple[str, str, str]]:
        """The flow's parameters that contradict each other, as (rule, the TLV name at fault, why): a CMTS
        refuses a Minimum Reserved Rate above the Maximum Sustained Rate (MULPI C.2.2.7.4) and a Peak
        Traffic Rate below it (C.2.2.7.10), a modem a MinimumBuffer above the MaximumBuffer; a
        TargetBuffer outside them is clamped (``BufferControl.queue_size``, C.2.2.7.11)."""
        out = []
        peak_name = "UpstreamPeakTrafficRate" if self.direction == "upstream" else "DownstreamPeakTrafficRate"
        out += _rate_conflicts(self.min_reserved_rate, self.max_sustained_rate, self.peak_rate, peak_name)
        buffer = self.buffer
        rejected = buffer.rejection(largest=_ANY_SIZE)
        if rejected:
            out.append(("buffer-min-over-max", "MinimumBuffer", rejected))
        elif buffer.target is not None:
            size = buffer.queue_size(largest=_ANY_SIZE)
            if size != buffer.target:
                bound = "MinimumBuffer" if size > buffer.target else "MaximumBuffer"
                out.append(("buffer-target-clamped", "TargetBuffer",
                            f"TargetBuffer {buffer.target} is outside the flow's {bound} {size}: the modem uses {size}"
                            " bytes"))
        return out


_ANY_SIZE = 2**32  # no modem limit: only what the file's own Buffer Control says


def _rate_conflicts(min_rate, max_rate, peak, peak_name: str) -> list[tuple[str, str, str]]:
    out = []
    if min_rate is not None and max_rate and min_rate > max_rate:
        out.append(("rate-min-over-max", "MinReservedRate",
                    f"MinReservedRate {min_rate:.0f} exceeds MaxRateSustained {max_rate:.0f}: a CMTS refuses the flow"))
    if peak and max_rate and peak < max_rate:
        out.append(("rate-peak-under-max", peak_name,
                    f"{peak_name} {peak:.0f} is below MaxRateSustained {max_rate:.0f}: a CMTS refuses the flow"))
    return out


# DOCS-QOS3-MIB's values for the AQM a modem runs (docsQosParamSetAqmDisabled is a TruthValue,
# docsQosParamSetAqmAlgInUse unknown(1) other(2) docsisPIE(3)).
TRUTH = {True: 1, False: 2}
AQM_ALG_IN_USE = {"docsis-pie": 3, "immediate": 2}


def _reported_aqm(flow: ServiceFlow) -> AqmSettings | None:
    """The AQM a DOCSIS 3.1 modem reports on ``flow``'s active row (``upstream_aqm``'s rule; a
    modem that exposes the AQM columns is a 3.1 one), or None when it runs none."""
    return upstream_aqm(flow)


def _aqm_disabled(flow: ServiceFlow) -> int | None:
    if flow.direction != "upstream":
        return None  # the downstream queue is the CMTS's: not modelled, not compared
    return TRUTH[_reported_aqm(flow) is None]


def _aqm_field(get):
    """A getter that applies only while AQM runs on the flow (a disabled flow's target is moot)."""
    return lambda flow: get(aqm) if (aqm := _reported_aqm(flow)) is not None else None


# The QoS parameters a modem reports per flow (DOCS-QOS3-MIB docsQosParamSetTable), keyed as
# hfcprov.snmp.oids.PARAM_SET: what the audit compares and the test agent serves, in the MIB's
# units and values (the AQM ones from the one rule, ``upstream_aqm``, so DOCSIS 3.1 defaults).
QOS_PARAMS = {
    "max_sustained_rate": ("max rate", lambda f: f.max_sustained_rate),
    "max_traffic_burst": ("max burst", lambda f: f.max_traffic_burst),
    "min_reserved_rate": ("min reserved rate", lambda f: f.min_reserved_rate),
    "buffer_minimum": ("minimum buffer", lambda f: f.buffer.minimum),
    "buffer_target": ("target buffer", lambda f: f.buffer.target),
    "buffer_maximum": ("maximum buffer", lambda f: f.buffer.maximum),
    "aqm_disabled": ("AQM disabled", _aqm_disabled),
    "aqm_latency_target": ("AQM latency target (ms)", _aqm_field(lambda a: round(a.latency_target * 1e3))),
    "aqm_algorithm": ("AQM algorithm", _aqm_field(lambda a: AQM_ALG_IN_USE[a.algorithm])),
}
# The DOCSIS 3.1 columns among them: a DOCSIS 3.0 modem has none ("not exposed", not a drift).
AQM_PARAMS = ("aqm_disabled", "aqm_latency_target", "aqm_algorithm")


def qos_param_values(flow: ServiceFlow) -> dict:
    """The flow's reported QoS parameters (``QOS_PARAMS`` keys plus its service class name)."""
    return {"service_class_name": flow.service_class_name,
            **{key: get(flow) for key, (_label, get) in QOS_PARAMS.items()}}


@dataclass(frozen=True)
class AggregateServiceFlow:
    """TLV 70 (upstream) / 71 (downstream) Aggregate Service Flow: e.g. a Low Latency pair."""

    direction: Direction
    ref: int | None = None  # 70/71.1 its reference; flows name it in 24/25.36
    profile_name: str | None = None  # 70/71.4 ASF QoS Profile Name
    max_sustained_rate: float | None = None  # 70/71.8 bits/s
    max_traffic_burst: int | None = None  # 70/71.9 bytes
    peak_rate: float | None = None  # 70/71.27 bits/s
    low_latency_ref: int | None = None  # 70/71.42.1 the Low Latency SF's reference
    classic_scn: str | None = None  # 70/71.42.3
    low_latency_scn: str | None = None  # 70/71.42.4
    coupling_factor: int | None = None  # 70/71.42.5 (tenths)
    scheduling_weight: int | None = None  # 70/71.42.6
    queue_protection: bool | None = None  # 70/71.42.7
    qp_latency_threshold_us: int | None = None  # 70/71.42.8 QPLatencyThreshold (microseconds)
    qp_score_threshold_us: int | None = None  # 70/71.42.9 QPQueuingScoreThreshold (microseconds)
    qp_drain_exponent: int | None = None  # 70/71.42.10 QPDrainRateExponent
    path: str = ""
    min_reserved_rate: float | None = None  # 70/71.10 bits/s

    def conflicts(self) -> list[tuple[str, str, str]]:
        """As ``ServiceFlow.conflicts``, for the aggregate's rates (MULPI C.2.2.9.4, C.2.2.9.10)."""
        return _rate_conflicts(self.min_reserved_rate, self.max_sustained_rate, self.peak_rate,
                               "UpstreamPeakTrafficRate" if self.direction == "upstream" else "DownstreamPeakTrafficRate")


# The Aggregate Service Flow parameters a modem reports (keys of hfcprov.snmp.oids.ASF), in the
# MIB's units: what the audit compares for each TLV 70/71 and the test agent serves.
ASF_PARAMS = {
    "max_sustained_rate": ("ASF max rate", lambda a: a.max_sustained_rate),
    "max_traffic_burst": ("ASF max burst", lambda a: a.max_traffic_burst),
    "peak_rate": ("ASF peak rate", lambda a: a.peak_rate),
    "coupling_factor": ("AQM coupling factor (tenths)", lambda a: a.coupling_factor),
    "scheduling_weight": ("scheduling weight", lambda a: a.scheduling_weight),
    "queue_protection": ("queue protection", lambda a: None if a.queue_protection is None else TRUTH[a.queue_protection]),
}


@dataclass(frozen=True)
class ModemSettings:
    """File-wide settings that change how every flow is treated."""

    default_us_target_buffer_ms: int | None = None  # TLV 68 (0: the CM chooses)
    cm_upstream_aqm_disable: bool | None = None  # TLV 76
    low_latency_disable: int | None = None  # TLV 91 as given (0: Low Latency allowed)

    @property
    def low_latency_disabled(self) -> bool:
        return bool(self.low_latency_disable)


def check_docsis_version(docsis_version: str) -> None:
    if docsis_version not in DOCSIS_VERSIONS:
        raise HfcprovError(f"DOCSIS version {docsis_version!r}: expected one of {', '.join(DOCSIS_VERSIONS)}")


def upstream_aqm(flow: ServiceFlow, settings: ModemSettings | None = None,
                 docsis_version: str = DEFAULT_DOCSIS_VERSION) -> AqmSettings | None:
    """The AQM a modem runs on ``flow``'s queue, or None for drop-tail: the one rule.

    A DOCSIS 3.1 modem (the default) runs AQM (DOCSIS-PIE unless 24.40.3 picks another) on
    every upstream flow unless 24.40.1 or TLV 76 (``settings.cm_upstream_aqm_disable``, also
    folded into ``flow.aqm.cm_disabled``) disable it; a DOCSIS 3.0 modem is drop-tail unless
    the file's 24.40 asks for AQM. Downstream queues are the CMTS's: None (not modelled).

    The algorithm is what the modem runs (MULPI C.2.2.7.15.3, ``hfcprov.model.lld``): the
    Immediate AQM on the low-latency flow of a Low Latency aggregate (its default), DOCSIS-PIE on
    any other flow, whatever 24.40.3 says (Immediate AQM is the low-latency queue's AQM only).
    """
    check_docsis_version(docsis_version)
    aqm = flow.aqm
    if flow.direction != "upstream" or not aqm.enabled:
        return None
    if settings is not None and settings.cm_upstream_aqm_disable:
        return None
    if docsis_version == "3.0" and not aqm.requested:
        return None
    low_latency = flow.low_latency and docsis_version != "3.0" and not (settings and settings.low_latency_disabled)
    if low_latency:
        return aqm if aqm.algorithm == "immediate" else replace(aqm, algorithm_code=IMMEDIATE_AQM)
    return replace(aqm, algorithm_code=DOCSIS_PIE) if aqm.algorithm == "immediate" else aqm
