"""White et al. (2011) as data: the figures their text states, the points it implies, the hosts
the fit assumes, how a scenario is built from a point, and the error of a simulated point.

Validation data, kept with the benches and tests (``bench/sim_mac.py``, ``tests/sim_mac``), not in
the model: ``hfcprov.sim.mac`` holds only the MAC (and ``CALIBRATED_TCP``, the hosts it was fitted with).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hfcprov.sim.mac import CALIBRATED_TCP
from hfcprov.sim.scenario import FlowSpec, Scenario, TcpOptions

__all__ = ["CALIBRATED_MAC", "HOSTS_TCP", "IMPLIED_POINTS", "WHITE_2011_POINTS", "WhitePoint", "point_error",
           "white_scenario"]


@dataclass(frozen=True)
class WhitePoint:
    """One figure White et al. report in their text (Tests 1; Figures 4-8), upstream, one CM.

    ``goodput`` in bits/s (None where only the latency is reported); ``full`` marks
    points they describe as using the whole rate ("sufficient to utilize"), for which
    ``goodput`` is 95% of the rate; ``ping`` is their loaded PING latency in seconds.
    """

    rate: float
    buffer: int
    rtt: float
    flows: int
    goodput: float | None
    full: bool = False
    ping: float | None = None
    source: str = ""
    short: bool = False  # implied, not quoted: the text says this buffer was not enough for the rate

    @property
    def collapse(self) -> bool:
        """One of the four 10 Mb/s, 16 KiB points where the measured goodput collapses."""
        return self.rate == 10e6 and self.buffer == 16384 and not self.full


WHITE_2011_POINTS = (
    WhitePoint(1e6, 16384, 0.040, 1, 0.95e6, True, source="Fig. 4: 16 KiB sufficient at 1 Mb/s"),
    WhitePoint(1e6, 16384, 0.100, 1, 0.95e6, True, source="Fig. 4"),
    WhitePoint(2e6, 16384, 0.040, 1, 1.90e6, True, ping=0.05204, source="Fig. 4, Fig. 7: 52.04 ms"),
    WhitePoint(2e6, 16384, 0.100, 1, 1.90e6, True, source="Fig. 4"),
    WhitePoint(2e6, 65536, 0.040, 1, 1.90e6, True, ping=0.200, source="Fig. 7: 200 ms"),
    WhitePoint(2e6, 262144, 0.040, 1, 1.90e6, True, ping=1.01917, source="Fig. 7: 1019.17 ms"),
    WhitePoint(5e6, 65536, 0.100, 1, 4.75e6, True, source="Fig. 5: 64 KiB needed at 100 ms"),
    WhitePoint(10e6, 65536, 0.040, 1, 9.5e6, True, source="Fig. 5/6a: full 10 Mb/s"),
    WhitePoint(10e6, 262144, 0.100, 1, 9.5e6, True, source="Fig. 5: 256 KiB needed at 100 ms"),
    WhitePoint(10e6, 16384, 0.040, 1, 1.97e6, source="Fig. 6a"),
    WhitePoint(10e6, 16384, 0.100, 1, 1.65e6, source="Fig. 6b: 4.95 / 3"),
    WhitePoint(10e6, 65536, 0.100, 1, 6.05e6, source="Fig. 6b"),
    WhitePoint(10e6, 16384, 0.040, 10, 7.11e6, source="Fig. 6a"),
    WhitePoint(10e6, 65536, 0.040, 10, 9.5e6, True, source="Fig. 6a: full"),
    WhitePoint(10e6, 16384, 0.100, 10, 4.95e6, source="Fig. 6b"),
    WhitePoint(10e6, 65536, 0.100, 10, 8.77e6, source="Fig. 6b"),
)


# What the text implies without quoting a number: the next smaller buffer than the one "needed"
# did not reach the rate (Figs. 4/5). Constraints in the held-out fit: at most 90% of the rate.
IMPLIED_POINTS = (
    WhitePoint(5e6, 32768, 0.100, 1, 0.9 * 5e6, short=True, source="Fig. 5: 64 KiB needed at 100 ms"),
    WhitePoint(10e6, 32768, 0.040, 1, 0.9 * 10e6, short=True, source="Fig. 5: 64 KiB needed at 40 ms"),
    WhitePoint(10e6, 131072, 0.100, 1, 0.9 * 10e6, short=True, source="Fig. 5: 256 KiB needed at 100 ms"),
)

# The end hosts of the fit (not fitted): CUBIC with the Linux-like timers of hfcprov.sim.mac.CALIBRATED_TCP.
HOSTS_TCP = {"variant": "cubic", **CALIBRATED_TCP}
# The calibrated MAC is MacParams() (hfcprov.sim.mac), the docsis2.0 profile's; as a scenario's mac_params:
CALIBRATED_MAC: dict = {}


def white_scenario(point: WhitePoint, mac_params: dict | None = None, tcp: dict | None = None,
                   seed: int = 1, duration: float = 30.0, warmup: float = 5.0):
    """The simulator scenario for one White et al. point; ``mac_params=None``: the plain token-bucket link, else the
    docsis2.0 profile's calibrated request-grant MAC with those parameters changed."""
    sc = Scenario(rate=point.rate, buffer=point.buffer, rtt=point.rtt, duration=duration, warmup=warmup,
                  seed=seed, flows=[FlowSpec() for _ in range(point.flows)], sample_interval=None,
                  tcp=TcpOptions(**(tcp if tcp is not None else HOSTS_TCP)),
                  probe_rate=5.0 if point.ping is not None else 0.0)
    return sc if mac_params is None else sc.replace(mac="docsis", profile="docsis2.0", mac_params=dict(mac_params))


def point_error(point: WhitePoint, goodput: float, ping: float | None = None) -> float:
    """|log(simulated / measured)|, one-sided for 'full' points (reaching 95% of the rate is exact)
    and 'short' ones (anything up to 90% of the rate is exact); the loaded-ping error, when both
    exist, is averaged in."""
    if point.short:
        return max(0.0, math.log(max(goodput, 1.0) / point.goodput))
    if point.full:
        err = max(0.0, math.log(point.goodput / max(goodput, 1.0)))
    else:
        err = abs(math.log(max(goodput, 1.0) / point.goodput))
    if point.ping is not None and ping is not None:
        err = (err + abs(math.log(max(ping, 1e-4) / point.ping))) / 2
    return err
