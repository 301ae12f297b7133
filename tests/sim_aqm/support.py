"""Helpers for the AQM tests: run a scenario through an AQM hop and read percentiles."""

from __future__ import annotations

import importlib

from hfcprov.sim import Network, Scenario
from hfcprov.sim.aqm import ecn

_run = importlib.import_module("hfcprov.sim.run")
_run.LINKS.setdefault("pie", "hfcprov.sim.aqm.link:make_pie_link")
_run.LINKS.setdefault("dualq", "hfcprov.sim.aqm.link:make_dualq_link")


def aqm_run(keep: bool = False, **kw):
    """Run ``Scenario(**kw)`` (``mac``: tokenbucket, pie or dualq) with ECN flows wired."""
    net = Network(Scenario(**kw))
    for s, r in zip(net.senders, net.receivers):
        if getattr(s.cc, "ecn", False):
            ecn.attach(s, r, net.send_host.receivers, net.recv_host.receivers)
    res = net.run()
    return (res, net) if keep else res


def percentile(xs, q: float) -> float:
    xs = sorted(xs)
    if not xs:
        return 0.0
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]
