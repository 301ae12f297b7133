"""A cable modem's upstream profile: its DOCSIS version and channel set, and the request-grant timing they fix.

Every figure about an upstream flow that depends on the modem (the buffer a tier needs, the
latency it gives, whether the channel can carry it, which AQM runs) takes a profile:

==========================  =====================================================================
``docsis2.0``               one 6.4 MHz 64-QAM SC-QAM channel (30.72 Mb/s raw): White et al.'s
                            2011 plant. Its request-grant timing is the calibrated fit
                            (``hfcprov.queue.grant.MacParams()``, docs/calibration.md), held out as it was
``docsis3.0-4ch``,          4 or 8 bonded 6.4 MHz 64-QAM SC-QAM channels (A-TDMA), 2 ms MAPs
``docsis3.0-8ch``
``docsis3.1``               one OFDMA channel: 1880 subcarriers of 50 kHz (94 MHz), 1024-QAM
                            (10 bits/subcarrier), 6-symbol frames, 256-sample cyclic prefix,
                            2 ms MAPs: 668 Mb/s (CableLabs' docsis-ns3 default). The default
``docsis3.1-ofdma+4scqam``  that OFDMA channel bonded with four SC-QAM channels
``docsis3.1-highsplit``     two 96 MHz OFDMA channels at 4096-QAM (204 MHz high split): 1.6 Gb/s
==========================  =====================================================================

Any of them takes overrides after a colon: ``docsis3.1:map_interval=1ms``,
``docsis3.1:congestion=40%,variation=20``, ``docsis3.1:bits_per_subcarrier=12`` (``OVERRIDES``).
``congestion`` is the share of the channel other modems' grants take (the CMTS's free capacity is
the rest, varying by ``variation`` percent MAP to MAP); it is the plant's load, carried by the
profile so that every entry point that names an upstream can name it.

The timing, for OFDMA from MULPI (Annex B, CM MAP processing time) and PHYv3.1 as CableLabs'
docsis-ns3 models them (its model documentation): a frame is K symbols of 1/spacing + cyclic
prefix; a minislot is 400 kHz of subcarriers for one frame, carrying its bits at an 80% LDPC
code rate; a MAP describes a whole number of frames nearest the MAP interval; the CMTS builds a
MAP ``map_lead`` before it starts (CM MAP processing time 600 us + (K+1)/K frames, the MAP's trip:
downstream interleaver, three downstream symbols, half the plant round trip, CMTS MAP processing
200 us); a request reaches the CMTS half a plant round trip plus three frames (CM and CMTS
pipelines) after it is sent; the CM prepares a burst one frame ahead; a packet reaches the CMTS
two frames (transmission, CMTS decoding) and half a plant round trip after its frame starts. For
SC-QAM channels the same with the A-TDMA minislot as the frame, a 200 us CM MAP processing
time and a J.83 downstream interleaver. Bonded channels are one logical channel of their summed
capacity (the CMTS stripes each grant over them). Units: seconds, bytes, bits/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from hfcprov.errors import HfcprovError
from hfcprov.model.flow import DEFAULT_MAX_TRAFFIC_BURST
from hfcprov.queue.grant import MacParams

DEFAULT_PROFILE = "docsis3.1"
TIER_BURST_TIME = 0.100  # s at the rate: a DOCSIS 3.x tier's Max Traffic Burst when only its rate is given
TIER_PEAK_FACTOR = 2.0  # its Peak Traffic Rate, times its rate


class ProfileError(HfcprovError, ValueError):
    """An unknown profile, or an override it cannot take."""


@dataclass(frozen=True)
class OfdmaChannel:
    """One DOCSIS 3.1 OFDMA upstream channel (PHYv3.1), as docsis-ns3's channel model has it."""

    subcarriers: int = 1880  # active subcarriers (94 MHz at 50 kHz)
    spacing: float = 50e3  # Hz: 25 kHz or 50 kHz
    symbols_per_frame: int = 6  # K: 6-36
    bits_per_subcarrier: float = 10.0  # the modulation profile's mean bit loading (1024-QAM)
    cyclic_prefix: int = 256  # samples at 102.4 MHz
    code_rate: float = 0.8  # LDPC

    @property
    def frame(self) -> float:
        return self.symbols_per_frame * (1 / self.spacing + self.cyclic_prefix / 102.4e6)

    @property
    def subcarriers_per_minislot(self) -> int:
        return int(400e3 / self.spacing)

    @property
    def minislots_per_frame(self) -> int:
        return int(self.subcarriers * self.spacing / 400e3)

    @property
    def minislot_bytes(self) -> int:
        return int(math.floor(self.subcarriers_per_minislot * self.symbols_per_frame * self.bits_per_subcarrier
                              * self.code_rate / 8))

    @property
    def capacity(self) -> float:
        return 8 * self.minislot_bytes * self.minislots_per_frame / self.frame

    @property
    def cm_map_processing(self) -> float:
        """MULPI Annex B for OFDMA: 600 us + (symbol + cyclic prefix) x (K + 1)."""
        return 600e-6 + self.frame * (self.symbols_per_frame + 1) / self.symbols_per_frame


@dataclass(frozen=True)
class ScQamChannel:
    """One DOCSIS 3.0 A-TDMA upstream channel: 6.4 MHz (5.12 Msym/s), 64-QAM."""

    symbol_rate: float = 5.12e6
    bits_per_symbol: int = 6
    fec: float = 0.88  # Reed-Solomon, preambles and guard time: the data a long grant carries
    minislot: float = 12.5e-6  # s: two 6.25 us ticks

    @property
    def capacity(self) -> float:
        return self.symbol_rate * self.bits_per_symbol * self.fec

    @property
    def minislot_bytes(self) -> int:
        return int(self.capacity * self.minislot / 8)


@dataclass(frozen=True)
class ModemProfile:
    """What an upstream's request-grant loop and capacity are made of (module docstring)."""

    name: str
    docsis_version: str  # "2.0", "3.0", "3.1"
    description: str
    ofdma: tuple[OfdmaChannel, ...] = ()
    scqam: tuple[ScQamChannel, ...] = ()
    map_interval: float = 0.002  # s: the target; a MAP holds whole frames (``actual_map_interval``)
    cmts_map_processing: float = 200e-6  # s: the CMTS's scheduling time (MULPI allows up to 400 us)
    plant_km: float = 8.0  # CM-CMTS distance (docsis-ns3's default MaximumDistance): 40 us each way
    downstream: str = "ofdm"  # the MAP's channel: ofdm (DOCSIS 3.1) or scqam (J.83 Annex B)
    pipeline_frames: int = 1  # frames the CM encodes ahead of a burst, and the CMTS decodes after one
    mac_header: int = 10  # bytes: DOCSIS MAC header with the extended header a modem sends
    mean_frame: int = 1518  # bytes: the frame size the CMTS assumes when it pays the MAC headers of a request
    peak_token_interval: float = 0.002  # s: the Peak Rate bucket holds this long at the peak rate
    contention_collision: float = 0.0  # probability a contention request is lost to another modem's
    congestion: float = 0.0  # share of each MAP other modems' grants take
    variation: float = 0.0  # % the free capacity varies MAP to MAP (uniform)
    # the 2011 fit: DOCSIS 2.0's request-grant timing as calibrated on White et al. (hfcprov.sim.mac's model)
    calibrated: MacParams | None = None

    def __post_init__(self) -> None:
        if not (self.ofdma or self.scqam):
            raise ProfileError(f"profile {self.name}: no upstream channel")
        if self.map_interval <= 0 or self.plant_km < 0 or self.cmts_map_processing < 0:
            raise ProfileError(f"profile {self.name}: map_interval must be > 0, plant_km and "
                               "cmts_map_processing >= 0")
        if not 0 <= self.congestion < 1:
            raise ProfileError(f"profile {self.name}: congestion {self.congestion:g} must be in [0, 1)")
        if not 0 <= self.variation <= 100:
            raise ProfileError(f"profile {self.name}: variation {self.variation:g} must be 0..100 (%)")
        if not 0 <= self.contention_collision < 1:
            raise ProfileError(f"profile {self.name}: collision must be in [0, 1)")

    # -- the channel set --------------------------------------------------------------------------------------
    @property
    def frame(self) -> float:
        """s: the scheduling granule: the OFDMA frame, or the SC-QAM minislot without OFDMA."""
        return self.ofdma[0].frame if self.ofdma else self.scqam[0].minislot

    @property
    def minislot_bytes(self) -> int:
        return self.ofdma[0].minislot_bytes if self.ofdma else self.scqam[0].minislot_bytes

    @property
    def minislots_per_frame(self) -> int:
        """Minislots of every bonded channel in one frame, counted in the first channel's minislots."""
        n = sum(c.minislots_per_frame * c.minislot_bytes for c in self.ofdma)
        n += sum(c.capacity * self.frame / 8 for c in self.scqam)
        return max(1, int(n // self.minislot_bytes))

    @property
    def frames_per_map(self) -> int:
        return max(1, round(self.map_interval / self.frame))

    @property
    def actual_map_interval(self) -> float:
        return self.frames_per_map * self.frame

    @property
    def minislots_per_map(self) -> int:
        return self.frames_per_map * self.minislots_per_frame

    @property
    def capacity(self) -> float:
        """b/s the channel set carries (MAC frames, before other modems' load)."""
        return 8 * self.minislot_bytes * self.minislots_per_frame / self.frame

    # -- the request-grant loop's timing ----------------------------------------------------------------------
    @property
    def propagation(self) -> float:
        """s one way on the plant (light in coax and fibre: 5 us per km)."""
        return self.plant_km / 2e5

    @property
    def cm_map_processing(self) -> float:
        """s a MAP must reach the CM before the interval it describes (MULPI: OFDMA Annex B; SC-QAM 200 us)."""
        return self.ofdma[0].cm_map_processing if self.ofdma else 200e-6

    @property
    def downstream_delay(self) -> float:
        """s a MAP spends on the downstream: interleaver and three symbols (OFDM: M = 3, 20 us + 512-sample
        cyclic prefix at 204.8 MHz); J.83 Annex B 64-QAM: I = 32, J = 4 interleaving."""
        if self.downstream == "ofdm":
            symbol = 1 / 50e3 + 512 / 204.8e6
            return 2 * symbol + 3 * symbol
        return 0.68e-3 + 3 * (188 * 8 / 26.97e6)

    @property
    def map_lead(self) -> float:
        """s between the CMTS building a MAP and the start of the interval it describes."""
        return self.cm_map_processing + self.downstream_delay + self.propagation + self.cmts_map_processing

    @property
    def request_delay(self) -> float:
        """s from a request leaving the CM to the CMTS scheduler having it: the plant, the CM's and CMTS's
        pipelines and the frame that carries it."""
        return self.propagation + self.frame * (2 * self.pipeline_frames + 1)

    @property
    def burst_preparation(self) -> float:
        """s ahead of a grant the CM takes the data it will send (a packet arriving later waits)."""
        return self.frame * self.pipeline_frames

    @property
    def delivery_delay(self) -> float:
        """s from the start of the frame carrying a packet's last byte to the CMTS having it."""
        return self.frame * (1 + self.pipeline_frames) + self.propagation

    @property
    def model(self) -> str:
        """Which simulator MAC runs the profile: ``calibrated`` (the 2011 fit) or ``mulpi``."""
        return "calibrated" if self.calibrated is not None else "mulpi"

    def loop_delay(self) -> float:
        """Mean s a byte waits in the CM between arriving and being sent while the flow runs at its rate
        (piggybacked requests, no standing queue): the next request opportunity (one per MAP at a random
        place: 7/12 of a MAP on average), the request's trip, the next MAP build (half a MAP), the MAP's
        lead, the grant's random place in its MAP (half a MAP), and the frame that carries it. The modem
        holds the rate times this of data waiting for grants, on top of TCP's standing queue
        (docs/sizing.md); the calibrated 2.0 profile uses ``grant.mac_access_delay`` instead."""
        if self.calibrated is not None:
            from hfcprov.queue.grant import mac_access_delay

            return mac_access_delay(self.calibrated)
        t = self.actual_map_interval
        return 7 * t / 12 + self.request_delay + t / 2 + self.map_lead + t / 2 + self.burst_preparation

    def burst_rate_cap(self, rate: float, burst: int, peak: float | None = None) -> float:
        """b/s of Ethernet frames the CMTS can grant a flow of ``rate`` with Max Traffic Burst ``burst``:
        the token bucket holds at most ``burst``, so a MAP grants at most that, and the CM asks for at
        most what its own bucket gathered since its last request (one a MAP, at a random place: on
        average ``E[min(rate x gap, burst)]`` with the gap between two uniform grant times in consecutive
        MAPs). A ``burst`` of a few MAPs' worth of the rate does not cap it. The calibrated docsis2.0 model's
        CM asks for all it holds: there the cap is the burst per MAP."""
        t = self.actual_map_interval
        if self.calibrated is not None:
            return min(rate, burst * 8 / self.calibrated.map_interval)
        r = rate / 8  # bytes/s
        b = float(burst)
        # gap = t + U2 - U1, triangular on [0, 2t] with its mode at t: E[min(r gap, b)]
        x = min(b / r, 2 * t)  # where the cap binds
        # integral of min(r g, b) f(g) dg, f(g) = g / t^2 on [0, t], (2t - g) / t^2 on [t, 2t]
        def part(lo, hi, slope, icpt):  # integral of (r g) (slope g + icpt) / t^2 over [lo, hi]
            return r * (slope * (hi ** 3 - lo ** 3) / 3 + icpt * (hi ** 2 - lo ** 2) / 2) / t ** 2

        def mass(lo, hi, slope, icpt):  # integral of (slope g + icpt) / t^2
            return (slope * (hi ** 2 - lo ** 2) / 2 + icpt * (hi - lo)) / t ** 2

        below = part(0, min(x, t), 1, 0) + (part(t, x, -1, 2 * t) if x > t else 0.0)
        above = 1.0 - (mass(0, min(x, t), 1, 0) + (mass(t, x, -1, 2 * t) if x > t else 0.0))
        per_map = below + b * above
        frames = per_map * 8 / t * self.mean_frame / (self.mean_frame + self.mac_header)
        cap = min(frames, rate)
        if peak:
            cap = min(cap, peak * self.peak_token_interval / t, peak)
        return min(cap, self.capacity * (1 - self.congestion) * self.mean_frame / (self.mean_frame + self.mac_header))

    def tier_burst(self, rate: float) -> int:
        """The Max Traffic Burst (bytes) of a tier given by its rate alone: docsis2.0, MULPI's default
        3044 B (what the 2011 calibration assumed); DOCSIS 3.0 and 3.1, ``TIER_BURST_TIME`` at the rate
        (CableLabs' residential tier in docsis-ns3: it does not cap the rate on 1-2 ms MAPs)."""
        if self.calibrated is not None:
            return DEFAULT_MAX_TRAFFIC_BURST
        return max(DEFAULT_MAX_TRAFFIC_BURST, int(rate * TIER_BURST_TIME / 8))

    def tier_peak(self, rate: float) -> float | None:
        """The Peak Traffic Rate of a tier given by its rate alone: none on docsis2.0, else twice the rate."""
        return None if self.calibrated is not None else rate * TIER_PEAK_FACTOR

    def mac_params(self) -> MacParams:
        """The calibrated model's parameters (``docsis2.0``); other profiles run the MULPI model."""
        if self.calibrated is None:
            raise ProfileError(f"profile {self.name} runs the MULPI-timed model, not the calibrated one")
        return self.calibrated

    @property
    def aqm(self) -> str:
        """The queue the modem runs on an upstream flow whose file asks nothing: DOCSIS-PIE on 3.1."""
        return "docsis-pie" if self.docsis_version == "3.1" else "none"

    @property
    def aqm_rule_version(self) -> str:
        """The modem version ``hfcprov.model.upstream_aqm`` applies (a 2.0 modem has no AQM, as 3.0)."""
        return "3.1" if self.docsis_version == "3.1" else "3.0"

    def summary(self) -> str:
        chans = []
        if self.ofdma:
            c = self.ofdma[0]
            chans.append(f"{len(self.ofdma)} x OFDMA {c.subcarriers * c.spacing / 1e6:g} MHz "
                         f"{c.bits_per_subcarrier:g} b/subcarrier")
        if self.scqam:
            chans.append(f"{len(self.scqam)} x SC-QAM {self.scqam[0].symbol_rate / 1e6:g} Msym/s")
        load = f", {self.congestion:.0%} other modems" if self.congestion else ""
        return (f"{self.name} (DOCSIS {self.docsis_version}: {' + '.join(chans)}, {self.capacity / 1e6:.0f} Mb/s, "
                f"MAP {self.actual_map_interval * 1e3:.3g} ms{load})")


_SCQAM = ScQamChannel()
PROFILES: dict[str, ModemProfile] = {
    "docsis2.0": ModemProfile(
        "docsis2.0", "2.0", "one 6.4 MHz 64-QAM SC-QAM channel: White et al.'s 2011 plant (the calibrated fit)",
        scqam=(ScQamChannel(fec=1.0),), downstream="scqam", mac_header=6, calibrated=MacParams()),
    "docsis3.0-4ch": ModemProfile("docsis3.0-4ch", "3.0", "4 bonded 6.4 MHz 64-QAM SC-QAM channels",
                                  scqam=(_SCQAM,) * 4, downstream="scqam"),
    "docsis3.0-8ch": ModemProfile("docsis3.0-8ch", "3.0", "8 bonded 6.4 MHz 64-QAM SC-QAM channels",
                                  scqam=(_SCQAM,) * 8, downstream="scqam"),
    "docsis3.1": ModemProfile("docsis3.1", "3.1", "one 94 MHz OFDMA channel, 1024-QAM (docsis-ns3's default)",
                              ofdma=(OfdmaChannel(),)),
    "docsis3.1-ofdma+4scqam": ModemProfile("docsis3.1-ofdma+4scqam", "3.1",
                                           "a 94 MHz OFDMA channel bonded with four SC-QAM channels",
                                           ofdma=(OfdmaChannel(),), scqam=(_SCQAM,) * 4),
    "docsis3.1-highsplit": ModemProfile("docsis3.1-highsplit", "3.1",
                                        "two 96 MHz OFDMA channels at 4096-QAM (204 MHz high split)",
                                        ofdma=(OfdmaChannel(subcarriers=1900, bits_per_subcarrier=12),) * 2),
}

# a bare DOCSIS version names its profile (``--docsis-version 3.0`` and ``sim run --config`` before profiles)
BY_VERSION = {"2.0": "docsis2.0", "3.0": "docsis3.0-4ch", "3.1": "docsis3.1"}

# override key -> (where it goes, how it is read)
OVERRIDES = ("map_interval", "congestion", "variation", "collision", "plant_km", "cmts_map_processing",
             "subcarriers", "spacing", "symbols_per_frame", "bits_per_subcarrier", "cyclic_prefix", "ofdma",
             "scqam")
_PROFILE_KEYS = {"map_interval", "congestion", "variation", "plant_km", "cmts_map_processing"}
_CHANNEL_KEYS = {f.name for f in fields(OfdmaChannel)} - {"code_rate"}


def _number(key: str, text: str) -> float:
    from hfcprov.units import parse_duration

    t = text.strip()
    try:
        if key in ("map_interval", "cmts_map_processing"):
            return parse_duration(t)
        if key == "congestion" and t.endswith("%"):
            return float(t[:-1]) / 100
        if key == "variation":
            return float(t.rstrip("%"))
        if key == "spacing":
            from hfcprov.units import parse_rate

            return parse_rate(t.replace("Hz", "").replace("hz", ""))
        return float(t)
    except (ValueError, HfcprovError) as err:
        raise ProfileError(f"profile override {key}={text}: {err}") from None


def parse_profile(spec: str | ModemProfile | None) -> ModemProfile:
    """A profile by name (``PROFILES``; a bare DOCSIS version, ``3.0``, names its default), with
    ``:key=value,...`` overrides; None: the default."""
    if isinstance(spec, ModemProfile):
        return spec
    if spec is not None and not isinstance(spec, str):  # a YAML inventory's `profile: 1`
        raise ProfileError(f"modem profile {spec!r} is not a profile name (known: {', '.join(PROFILES)})")
    text = (spec or DEFAULT_PROFILE).strip()
    name, _, rest = text.partition(":")
    name = BY_VERSION.get(name.strip(), name.strip())
    base = PROFILES.get(name.lower())
    if base is None:
        from hfcprov.suggest import did_you_mean

        raise ProfileError(f"unknown modem profile {name!r}{did_you_mean(name, PROFILES)} "
                           f"(known: {', '.join(PROFILES)})")
    if not rest.strip():
        return base
    profile_kw, channel_kw, counts = {}, {}, {}
    for item in rest.split(","):
        if not item.strip():
            continue
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if not eq or key not in OVERRIDES:
            raise ProfileError(f"profile {text!r}: {item.strip()!r} is not key=value with a key among "
                               f"{', '.join(OVERRIDES)}")
        x = _number(key, value)
        if key == "collision":
            profile_kw["contention_collision"] = x
        elif key in _PROFILE_KEYS:
            profile_kw[key] = x
        elif key in ("ofdma", "scqam"):
            counts[key] = int(x)
        else:
            channel_kw[key] = int(x) if key in ("subcarriers", "symbols_per_frame", "cyclic_prefix") else x
    if base.calibrated is not None and (channel_kw or counts or set(profile_kw) - {"congestion"}):
        raise ProfileError(f"profile {text!r}: docsis2.0 is the calibrated 2011 fit; only congestion can change "
                           "(its channel and timing are what the fit was made with)")
    ofdma, scqam = base.ofdma, base.scqam
    if channel_kw:
        if not ofdma:
            raise ProfileError(f"profile {text!r}: {', '.join(channel_kw)} describe an OFDMA channel; "
                               f"{base.name} has none")
        try:
            ofdma = tuple(replace(c, **channel_kw) for c in ofdma)
        except TypeError as err:
            raise ProfileError(f"profile {text!r}: {err}") from None
    if "ofdma" in counts:
        ofdma = (ofdma[0] if ofdma else OfdmaChannel(),) * counts["ofdma"]
    if "scqam" in counts:
        scqam = (scqam[0] if scqam else _SCQAM,) * counts["scqam"]
    if base.calibrated is not None and "congestion" in profile_kw:
        cal = replace(base.calibrated, other_load=profile_kw["congestion"])
        return replace(base, name=text, congestion=profile_kw["congestion"], calibrated=cal)
    return replace(base, name=text, ofdma=ofdma, scqam=scqam, **profile_kw)


def profile_names() -> tuple[str, ...]:
    return tuple(PROFILES)
