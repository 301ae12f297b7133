"""A scenario from a config file: one service flow (or its aggregate) under the default workload.

``hfcprov sim run --config`` and the tests build the simulator's scenario of a modem's file
here: the flow's own keys (``hfcprov.sim.scenario.flow_keys``: rate, burst, peak, the queue a
modem gives it, its AQM by ``hfcprov.model``'s rule) or, for a member of a Low Latency DOCSIS
aggregate service flow, the aggregate's (``hfcprov.queue.select.asf_keys``), plus
``DEFAULT_WORKLOAD``; ``--set`` style assignments supply what the file lacks (rtt, buffer...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from hfcprov.config import read_config
from hfcprov.model import DEFAULT_DOCSIS_VERSION, aggregate_service_flows, lld_findings, modem_settings, service_flows
from hfcprov.queue.inputs import DEFAULT_UPSTREAM_MODEL
from hfcprov.queue.pie import AqmConfigError
from hfcprov.queue.profile import ProfileError, parse_profile
from hfcprov.queue.select import asf_keys
from hfcprov.sim.run import check
from hfcprov.sim.scenario import Scenario, ScenarioError, apply_overrides, flow_keys

# What a config file's scenario adds to the flow's own keys: one long-lived TCP flow starting
# at 2 s and 10 pings/s, so idle and loaded latency both show.
DEFAULT_WORKLOAD = {"rtt": 0.04, "flows": [{"start": 2.0}], "probe_rate": 10, "duration": 20.0, "warmup": 5.0}


def scenario_from_config(path: str | Path, flow_ref: int | None = None, assignments=(),
                         profile: str | None = None,
                         on_note: Callable[[str], None] | None = None) -> Scenario:
    """The scenario of one service flow of a config file (``flow_ref``; None: the first upstream flow
    with a rate), on a modem of ``profile`` (``hfcprov.queue.profile``; None: the default, DOCSIS 3.1; a
    bare DOCSIS version names its profile); ``assignments`` (``["rtt=100ms", ...]``) override keys.

    An upstream flow runs on the profile's request-grant MAC (the one default upstream model) with the
    AQM the profile's modem applies to it (``hfcprov.model``'s rule for its DOCSIS version). A flow in an
    aggregate service flow (TLV 70/71, Low Latency DOCSIS) is simulated as the aggregate: its rate, the
    classic flow's queue and the dual queue, with Proactive Grant Service where its low-latency flow has a
    Guaranteed Grant Rate. ``on_note`` hears what the caller should tell the user (a flow without a
    TargetBuffer gets the modem's default queue; a Max Traffic Burst that caps the rate on the MAC; what
    the modem does differently from what the file seems to ask, ``hfcprov.model.lld_findings``).
    """
    try:
        modem = parse_profile(profile)
    except ProfileError as err:
        raise ScenarioError(f"--profile: {err}") from None
    docsis_version = modem.aqm_rule_version
    tree = read_config(path)
    sf, keys, where = tree_queue(tree, flow_ref, docsis_version, str(path))
    d = {**keys, **DEFAULT_WORKLOAD}
    if on_note is not None:
        for line in lld_findings(service_flows(tree), aggregate_service_flows(tree)):
            on_note(f"{path}: {line}")
    queues = ("none", "docsis-pie", "lld") if modem.model == "mulpi" else ("none", "docsis-pie")
    if d.get("direction", "upstream") == "upstream" and d.get("aqm", "none") in queues:
        d.update(mac=DEFAULT_UPSTREAM_MODEL, profile=modem.name)
    if sf.buffer.target is None and not any(a.split("=", 1)[0].strip() == "buffer" for a in assignments):
        if on_note is not None:
            on_note(f"{sf.name} has no TargetBuffer: simulating the modem's queue for it, {d['buffer']} bytes "
                    "(hfcprov.model's rule; --set buffer=SIZE to choose another)")
    d = apply_overrides(d, list(assignments))
    source = f"{path} {where}".strip()
    sc = Scenario.from_dict(d, source=source)
    check(sc, source)
    if on_note is not None:  # simulated as a real upstream carries it: say why it falls short
        for line in sc.upstream_findings():
            on_note(f"{sf.name}: {line}")
    return sc


def tree_queue(tree, flow_ref: int | None = None, docsis_version: str = DEFAULT_DOCSIS_VERSION,
               source: str = "config") -> tuple:
    """``(flow, keys, path)``: the flow of a config tree to simulate (``flow_ref``; None: the first
    upstream flow with a rate or an aggregate), the scenario keys of the queue the modem gives it
    (``flow_keys``, or ``asf_keys`` for a member of an aggregate service flow) and the TLV path of
    that queue's flow or aggregate. The one mapping from a file to a queue: ``sim run --config`` and
    the campaign's points use it."""
    flows = service_flows(tree)
    asfs = {(a.direction, a.ref): a for a in aggregate_service_flows(tree)}
    if flow_ref is not None:
        chosen = [f for f in flows if f.ref == flow_ref]
        if not chosen:
            refs = ", ".join(str(f.ref) for f in flows) or "none"
            raise ScenarioError(f"{source}: no service flow with reference {flow_ref} (there are: {refs})")
    else:
        chosen = [f for f in flows if f.direction == "upstream" and (f.max_sustained_rate or f.asf_ref is not None)] \
            or [f for f in flows if f.max_sustained_rate]
        if not chosen:
            raise ScenarioError(f"{source}: no service flow with a Max Sustained Traffic Rate to simulate")
    sf = chosen[0]
    asf = asfs.get((sf.direction, sf.asf_ref)) if sf.asf_ref is not None else None
    try:
        keys = asf_keys(asf, flows, modem_settings(tree), docsis_version) if asf is not None \
            else flow_keys(sf, docsis_version)
    except AqmConfigError as err:
        raise ScenarioError(f"{source}: {err}") from None
    return sf, keys, (asf or sf).path
