"""What a buffer size depends on: the one input of the sizing policy (docs/sizing.md).

``SizingInputs`` is a frozen, hashable value: every entry point (``buffer advise``,
``buffer table``, the templates' ``advise_buffer``, the campaign report) builds one and
hands it to ``hfcprov.queue.sizing.size_buffer``, so two callers that describe the same
tier get the same bytes. A new input (the modem's DOCSIS profile, issue 28) is a new field
with a default: callers that do not name it keep their answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from hfcprov.errors import HfcprovError, UnitError
from hfcprov.model import DEFAULT_AQM_LATENCY_TARGET
from hfcprov.units import parse_duration

# ITU-T G.114: one-way delay below this keeps interaction "essentially transparent".
G114_ONE_WAY_BUDGET = 0.150
# The sender's multiplicative decrease on a loss: the window falls to beta x W. FAST (delay-based)
# is not modelled by the rule and counts as Reno.
# TCP Prague halves on a loss as Reno does (its ECN response is the scalable one; drop-tail has none)
BACKOFF = {"reno": 0.5, "newreno": 0.5, "sack": 0.5, "cubic": 0.7, "fast": 0.5, "prague": 0.5}
# The upstream models the rule knows: the DOCSIS request-grant MAC (a cable modem's upstream, the
# default) or a plain token bucket (hfcprov.sim's LINKS, the emulated modem's htb).
UPSTREAM_MODELS = ("docsis", "tokenbucket")


class SizingError(HfcprovError, ValueError):
    """Inputs the sizing policy cannot reason about (zero rate, zero flows, an unknown TCP...)."""


def check_path(rate: float, rtt: float, flows: int) -> None:
    """The numbers every sizing and prediction needs to make sense of."""
    if rate <= 0:
        raise SizingError(f"rate must be > 0 (got {rate:g} b/s)")
    if rtt < 0:
        raise SizingError(f"rtt must be >= 0 (got {rtt:g} s)")
    if flows < 1:
        raise SizingError(f"flows must be >= 1 (got {flows})")


@dataclass(frozen=True)
class SizingInputs:
    """One upstream service flow and the traffic it carries: everything its buffer size depends on.

    Units: bits/s and seconds.
    """

    rate: float  # the flow's Max Sustained Traffic Rate
    rtt: float  # the TCP traffic's base round trip, without queueing
    flows: int = 1  # concurrent bulk TCP flows
    congestion_control: str = "reno"  # the senders' TCP: how far it backs off on a loss (BACKOFF)
    mac: str = "docsis"  # the upstream model: "docsis" (request-grant MAC) or "tokenbucket"
    aqm_latency_target: float | None = None  # None: drop-tail; seconds: DOCSIS-PIE with this target
    latency_budget: float = G114_ONE_WAY_BUDGET  # one-way delay budget, seconds

    def __post_init__(self) -> None:
        check_path(self.rate, self.rtt, self.flows)
        if self.congestion_control not in BACKOFF:
            raise SizingError(f"unknown congestion control {self.congestion_control!r} "
                              f"(known: {', '.join(BACKOFF)})")
        if self.mac not in UPSTREAM_MODELS:
            raise SizingError(f"unknown upstream model {self.mac!r} (known: {', '.join(UPSTREAM_MODELS)})")
        if self.latency_budget <= 0:
            raise SizingError("latency budget must be > 0")
        if self.aqm_latency_target is not None and not self.aqm_latency_target > 0:
            raise SizingError(f"AQM latency target must be > 0 (got {self.aqm_latency_target:g} s)")

    @property
    def backoff(self) -> float:
        """beta: the share of its window the senders keep on a loss."""
        return BACKOFF[self.congestion_control]


def aqm_latency_target(aqm) -> float | None:
    """The DOCSIS-PIE latency target (s) to size for, from an AQM as a campaign's ``aqm`` axis or a tier
    template names it: None, ``none`` or ``file`` (what the file says; sized as drop-tail) -> None;
    ``docsis-pie`` or ``lld`` (its classic queue) -> the model's default target (24.40.2, 10 ms); a
    duration (``20ms``) -> DOCSIS-PIE with that target."""
    if aqm is None or aqm in ("none", "file"):
        return None
    if aqm in ("docsis-pie", "lld"):
        return DEFAULT_AQM_LATENCY_TARGET
    try:
        return parse_duration(aqm)
    except UnitError as err:
        raise SizingError(f"aqm: {aqm!r} is none, docsis-pie, lld or a latency target such as 10ms ({err})") from None
