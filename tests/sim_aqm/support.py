"""Helpers for the AQM tests: run a scenario and read percentiles."""

from __future__ import annotations

from hfcprov.sim import Network, Scenario


def aqm_run(keep: bool = False, **kw):
    """Run ``Scenario(**kw)`` (``aqm``: none, docsis-pie or lld); with ``keep`` also the Network."""
    net = Network(Scenario(**kw))
    res = net.run()
    return (res, net) if keep else res


def percentile(xs, q: float) -> float:
    xs = sorted(xs)
    if not xs:
        return 0.0
    return xs[min(len(xs) - 1, round(q / 100 * (len(xs) - 1)))]
