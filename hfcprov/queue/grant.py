"""The request-grant cycle's timing: the upstream channel and CMTS scheduler parameters.

A cable modem's upstream is not work-conserving: a packet arriving at an idle CM waits for
a contention request opportunity, the request's trip to the CMTS, and a grant in a later
MAP (Atov-Kennedy 2006). ``MacParams`` holds what that wait is made of; two readers use it:

- the simulator's MAC model (``hfcprov.sim.mac``: channel, scheduler, cable modem), in
  virtual time;
- the sizing rule (``hfcprov.queue.sizing``): through the DOCSIS MAC a modem holds
  ``rate x mac_access_delay()`` of data waiting for grants on top of TCP's sawtooth.

``ETHERNET_OVERHEAD`` is what a DOCSIS rate limiter counts of a frame beyond the IP packet
(Ethernet header and CRC), for the MAC model and the CMTS downstream alike. Units: seconds,
bytes, bits/s.
"""

from __future__ import annotations

from dataclasses import dataclass

from hfcprov.errors import HfcprovError

ETHERNET_OVERHEAD = 18  # bytes of a frame the rate limiter counts beyond the IP packet (header + CRC)


class MacConfigError(HfcprovError, ValueError):
    """A request-grant MAC parameter is out of range."""


@dataclass(frozen=True)
class MacParams:
    """Upstream channel and CMTS scheduler parameters (seconds, bytes, bits/s).

    The defaults are the calibrated set (``docs/calibration.md``): DOCSIS 3.0 requests and
    fragmentation, a 5 ms MAP advance, 5% request collisions; the rest are fixed assumptions, not fitted.
    """

    channel_rate: float = 30.72e6  # raw upstream data rate (DOCSIS 2.0, 6.4 MHz 64-QAM ~ 30.72 Mb/s)
    map_interval: float = 0.002  # channel time one MAP describes
    map_advance: float = 0.005  # a MAP is sent this long before the interval it describes starts
    propagation: float = 0.0002  # CM -> CMTS one way (HFC plant and interleaving)
    minislot_bytes: int = 16
    max_request_minislots: int = 65535 // 16  # DOCSIS 3.0 requests in bytes (1.x: 255, one byte)
    max_grant_bytes: int | None = None  # CMTS cap per grant (None: the request cap)
    concatenation: bool = True
    fragmentation: bool = True  # DOCSIS 3.0 continuous concatenation and fragmentation
    frame_overhead: int = 24  # per packet: DOCSIS MAC header 6 + Ethernet header and CRC 18
    fragment_overhead: int = 16  # per fragment: fragmentation header and CRC
    burst_overhead: int = 30  # per burst: preamble, guard time, FEC tail (bytes of channel time)
    other_load: float = 0.0  # mean share of each MAP used by other modems (0..1)
    other_load_spread: float = 0.0  # that share varies uniformly +- this much per MAP
    # probability a contention request collides with another modem's (on by default: a real
    # upstream has neighbours, and the collisions are one of the MAC's sources of run-to-run spread)
    contention_collision: float = 0.05
    backoff_maps: int = 4  # a collided CM retries within this many MAPs (uniform)
    random_placement: bool = True  # grants placed at a random offset within the MAP

    def __post_init__(self) -> None:
        if self.channel_rate <= 0 or self.map_interval <= 0:
            raise MacConfigError("request-grant MAC: channel_rate and map_interval must be > 0")
        if self.map_advance < 0 or self.propagation < 0:
            raise MacConfigError("request-grant MAC: map_advance and propagation must be >= 0")
        if not 0 <= self.other_load < 1 or not 0 <= self.contention_collision < 1:
            raise MacConfigError("request-grant MAC: other_load and contention_collision must be in [0, 1)")

    @classmethod
    def docsis11(cls, **kw) -> MacParams:
        """DOCSIS 1.1/2.0: requests of at most 255 minislots, whole frames (no fragmentation); the
        3 ms MAP advance the Atov-Kennedy ACK-path tests were validated with (not part of the fit)."""
        return cls(**{"max_request_minislots": 255, "fragmentation": False, "map_advance": 0.003, **kw})

    @classmethod
    def docsis30(cls, **kw) -> MacParams:
        """DOCSIS 3.0 continuous concatenation and fragmentation: requests in bytes, large grants."""
        return cls(**{"max_request_minislots": 65535 // 16, "fragmentation": True, **kw})

    @property
    def max_request_bytes(self) -> int:
        cap = self.max_request_minislots * self.minislot_bytes
        return min(cap, self.max_grant_bytes) if self.max_grant_bytes else cap


def mac_access_delay(params: MacParams | None = None) -> float:
    """Seconds a packet arriving at an idle cable modem waits for its grant, from the request-grant MAC's
    own parameters (None: the calibrated defaults): the next MAP's contention opportunity (map advance
    + a map interval on average), the request's propagation, the next MAP after it arrives and the
    grant's place in it (again advance + interval), plus the expected retries after request collisions.
    The modem holds ``rate x`` this of data waiting for grants, on top of what TCP's sawtooth needs
    (docs/sizing.md)."""
    p = params or MacParams()
    cycle = p.map_advance + p.map_interval
    retries = p.contention_collision / (1 - p.contention_collision)  # expected collisions per request
    return 2 * cycle + p.propagation + retries * (max(1, p.backoff_maps) + 1) / 2 * p.map_interval
