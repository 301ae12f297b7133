"""White et al. (2011) for the MAC fit: the quoted points (``hfcprov.sim.papers``), the points the
text implies, the hosts the fit assumes, how a scenario is built from a point, and the error.

Used by ``bench/sim_mac.py`` and ``tests/sim_mac``; not part of the model (``hfcprov.sim.mac``).
"""

from __future__ import annotations

import math

from hfcprov.sim.mac_link import CALIBRATED_HOSTS
from hfcprov.sim.papers import WHITE_2011_POINTS, WhitePoint
from hfcprov.sim.scenario import FlowSpec, Scenario, TcpOptions

__all__ = ["CALIBRATED_MAC", "HOSTS_TCP", "IMPLIED_POINTS", "WHITE_2011_POINTS", "WhitePoint", "point_error",
           "white_scenario"]


# What the text implies without quoting a number: the next smaller buffer than the one "needed"
# did not reach the rate (Figs. 4/5). Constraints in the held-out fit: at most 90% of the rate.
IMPLIED_POINTS = (
    WhitePoint(5e6, 32768, 0.100, 1, 0.9 * 5e6, short=True, source="Fig. 5: 64 KiB needed at 100 ms"),
    WhitePoint(10e6, 32768, 0.040, 1, 0.9 * 10e6, short=True, source="Fig. 5: 64 KiB needed at 40 ms"),
    WhitePoint(10e6, 131072, 0.100, 1, 0.9 * 10e6, short=True, source="Fig. 5: 256 KiB needed at 100 ms"),
)

# The end hosts of the fit (not fitted): CUBIC with the Linux-like timers of mac_link.CALIBRATED_HOSTS.
HOSTS_TCP = {"variant": "cubic", **CALIBRATED_HOSTS}
# The calibrated MAC is MacParams() (hfcprov.sim.mac); as a scenario's mac_params:
CALIBRATED_MAC: dict = {}


def white_scenario(point: WhitePoint, mac_params: dict | None = None, tcp: dict | None = None,
                   seed: int = 1, duration: float = 30.0, warmup: float = 5.0):
    """The simulator scenario for one White et al. point; ``mac_params=None``: the plain token-bucket link."""
    sc = Scenario(rate=point.rate, buffer=point.buffer, rtt=point.rtt, duration=duration, warmup=warmup,
                  seed=seed, flows=[FlowSpec() for _ in range(point.flows)], sample_interval=None,
                  tcp=TcpOptions(**(tcp if tcp is not None else HOSTS_TCP)),
                  probe_rate=5.0 if point.ping is not None else 0.0)
    return sc if mac_params is None else sc.replace(mac="docsis", mac_params=dict(mac_params))


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
