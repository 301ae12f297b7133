"""What a buffer size depends on: the one input of the sizing policy, and the one set of defaults.

``SizingInputs`` is a frozen, hashable value: every entry point (``buffer advise``,
``buffer table``, the templates' ``advise_buffer``, the campaign report) builds one and
hands it to ``hfcprov.queue.sizing.size_buffer``, so two callers that describe the same
tier get the same bytes.

The defaults every entry point takes when the user names nothing are written here once
(docs/sizing.md): the modem profile ``DEFAULT_PROFILE`` (DOCSIS 3.1, one OFDMA upstream),
the AQM as that modem runs it (``DEFAULT_AQM``: DOCSIS-PIE at its 10 ms target on 3.1,
drop-tail on 2.0 and 3.0), the senders' TCP ``DEFAULT_CONGESTION_CONTROL`` (CUBIC, what
Linux, Windows and macOS hosts run), the upstream model ``DEFAULT_UPSTREAM_MODEL`` (the
request-grant MAC), and a tier's Max Traffic Burst and Peak Rate when only its rate is
given (the profile's: DOCSIS 3.x, 100 ms at the rate and twice the rate, CableLabs'
residential tier in docsis-ns3, a burst that does not cap the rate on a 1-2 ms MAP;
docsis2.0, MULPI's default 3044 B and no peak, as calibrated).
"""

from __future__ import annotations

import functools

from dataclasses import dataclass

from hfcprov.errors import HfcprovError, UnitError
from hfcprov.model import DEFAULT_AQM_LATENCY_TARGET
from hfcprov.queue.grant import mac_access_delay
from hfcprov.queue.profile import DEFAULT_PROFILE, ModemProfile, ProfileError, parse_profile
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

# -- the one set of defaults (module docstring; the profile's own in hfcprov.queue.profile) --------------------
DEFAULT_CONGESTION_CONTROL = "cubic"
DEFAULT_UPSTREAM_MODEL = "docsis"
DEFAULT_AQM = "modem"  # as the profile's modem runs it on a flow whose file asks nothing


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

    Units: bits/s, bytes and seconds. ``aqm_latency_target``: None, drop-tail; seconds, DOCSIS-PIE
    with that target; ``"modem"`` (the default), what the profile's modem runs (resolved on
    construction: DOCSIS 3.1, DOCSIS-PIE at 10 ms; 2.0 and 3.0, drop-tail). ``burst``/``peak`` None:
    the profile's tier defaults (``ModemProfile.tier_burst``, ``tier_peak``).
    """

    rate: float  # the flow's Max Sustained Traffic Rate
    rtt: float  # the TCP traffic's base round trip, without queueing
    flows: int = 1  # concurrent bulk TCP flows
    congestion_control: str = DEFAULT_CONGESTION_CONTROL  # the senders' TCP: how far it backs off (BACKOFF)
    mac: str = DEFAULT_UPSTREAM_MODEL  # the upstream model: "docsis" (request-grant MAC) or "tokenbucket"
    aqm_latency_target: float | str | None = DEFAULT_AQM  # None: drop-tail; s: DOCSIS-PIE; "modem": the profile's
    latency_budget: float = G114_ONE_WAY_BUDGET  # one-way delay budget, seconds
    profile: str = DEFAULT_PROFILE  # the modem profile (hfcprov.queue.profile), overrides included
    burst: int | None = None  # Max Traffic Burst, bytes
    peak: float | None = None  # Peak Traffic Rate, b/s

    def __post_init__(self) -> None:
        check_path(self.rate, self.rtt, self.flows)
        try:
            profile = parse_profile(self.profile)
        except ProfileError as err:
            raise SizingError(str(err)) from None
        if self.aqm_latency_target == DEFAULT_AQM:
            object.__setattr__(self, "aqm_latency_target",
                               DEFAULT_AQM_LATENCY_TARGET if profile.aqm == "docsis-pie" else None)
        elif isinstance(self.aqm_latency_target, str):
            raise SizingError(f"AQM latency target {self.aqm_latency_target!r}: seconds, None or {DEFAULT_AQM!r}")
        if self.burst is not None and self.burst < 1:
            raise SizingError(f"Max Traffic Burst must be > 0 bytes (got {self.burst})")
        if self.peak is not None and self.peak < self.rate:
            raise SizingError(f"Peak Traffic Rate {self.peak:g} b/s is below the sustained rate {self.rate:g} b/s")
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

    @functools.cached_property
    def modem(self) -> ModemProfile:
        """The modem profile named, parsed once per value (the sizing policy asks for it per candidate)."""
        return parse_profile(self.profile)

    @property
    def tier_burst(self) -> int:
        """The flow's Max Traffic Burst: as given, else the tier default."""
        return self.burst if self.burst is not None else self.modem.tier_burst(self.rate)

    @property
    def tier_peak(self) -> float | None:
        """The flow's Peak Traffic Rate: as given, else the profile's tier default (given a burst but no
        peak: none)."""
        if self.peak is not None:
            return self.peak
        return None if self.burst is not None else self.modem.tier_peak(self.rate)

    def mac_delays(self) -> tuple[float, float]:
        """``(pipe, hold)`` in seconds: what the request-grant MAC adds to TCP's round trip, and how long the
        modem holds the rate's data beyond TCP's standing queue (it keeps rate x ``hold``). The MULPI-timed
        profiles: the loop delay (``ModemProfile.loop_delay``) in the round trip; held, the loop's data plus
        one MAP's grant (the ACKs of a grant return together, so TCP sends a MAP's worth at once: it arrives
        while the last is still waiting). The calibrated docsis2.0 profile: the 2011 fit's access delay
        (``grant.mac_access_delay``, 14.5 ms), counted in ``hold`` alone as it was calibrated
        (docs/sizing.md). A token bucket: none."""
        return self._mac_delays

    @functools.cached_property
    def _mac_delays(self) -> tuple[float, float]:
        # once per value: the sizing policy asks for it per candidate size
        if self.mac != "docsis":
            return 0.0, 0.0
        profile = self.modem
        if profile.calibrated is not None:
            return 0.0, mac_access_delay(profile.calibrated)
        loop = profile.loop_delay()
        return loop, loop + profile.actual_map_interval

    def burst_cap(self) -> float | None:
        """b/s of frames the CMTS can grant the flow when its burst is too small for its rate on this
        profile's upstream (``ModemProfile.burst_rate_cap``), or None when the burst does not cap it
        (below 95% of the rate counts as capping). A token bucket has no MAPs: None."""
        if self.mac != "docsis":
            return None
        cap = self.modem.burst_rate_cap(self.rate, self.tier_burst, self.tier_peak)
        return cap if cap < 0.95 * self.rate else None


def aqm_latency_target(aqm, profile: str | ModemProfile | None = None) -> float | str | None:
    """The DOCSIS-PIE latency target (s) to size for, from an AQM as a campaign's ``aqm`` axis or a tier
    template names it: None, ``modem`` or ``file`` (the modem's own rule for a file that asks nothing)
    -> ``DEFAULT_AQM`` (``SizingInputs`` resolves it for its profile; with ``profile`` given, resolved
    here); ``none`` -> None (drop-tail); ``docsis-pie`` or ``lld`` (its classic queue) -> the model's
    default target (24.40.2, 10 ms); a duration (``20ms``) -> DOCSIS-PIE with that target."""
    if aqm is None or aqm in (DEFAULT_AQM, "file"):
        if profile is None:
            return DEFAULT_AQM
        return DEFAULT_AQM_LATENCY_TARGET if parse_profile(profile).aqm == "docsis-pie" else None
    if aqm == "none":
        return None
    if aqm in ("docsis-pie", "lld"):
        return DEFAULT_AQM_LATENCY_TARGET
    try:
        return parse_duration(aqm)
    except UnitError as err:
        raise SizingError(f"aqm: {aqm!r} is none, docsis-pie, lld, modem or a latency target such as 10ms "
                          f"({err})") from None
