"""What runs a point: the simulator, the emulated modem, or a real modem.

Every backend turns a ``Point`` into ``RunResult`` objects with the point's
service flow built the same way: from the tier template when the campaign names
one (``tiers.render_tree`` -> ``model.service_flows``), else straight from the
grid values. The simulator's scenario is built from that one flow, so a
predicted point and a measured point describe the same configuration.
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

from hfcprov import __version__
from hfcprov.model import BufferControl, ServiceFlow
from hfcprov.lab.spec import Campaign, CampaignError, Point
from hfcprov.results import RunResult


def config_tree(campaign: Campaign, point: Point, variables: dict | None = None):
    """The point's config tree, rendered from the tier template with the point's values."""
    from hfcprov.tiers import render_tree

    return render_tree(campaign.template, variables or point.template_vars())


def upstream_flow(campaign: Campaign, point: Point, tree=None) -> ServiceFlow:
    """The service flow a point provisions upstream (the modem's queue under test)."""
    if campaign.template is None:
        return ServiceFlow(direction="upstream", ref=1, qos_param_set_type=7,
                           max_sustained_rate=point.upstream_rate,
                           buffer=BufferControl(target=point.buffer), buffer_source="24.35")
    from hfcprov.model import service_flows

    tree = tree if tree is not None else config_tree(campaign, point)
    ups = [f for f in service_flows(tree) if f.direction == "upstream"]
    if not ups:
        raise CampaignError(f"{campaign.template}: renders no upstream service flow (TLV 24) for {point.key}")
    flow = ups[0]
    # The grid is the truth of what a point tests; a template that ignores a grid
    # value would silently make every point the same, so say so.
    if flow.max_sustained_rate != point.upstream_rate or flow.target_buffer != point.buffer:
        raise CampaignError(
            f"{campaign.template}: the rendered flow {flow.path} has rate {flow.max_sustained_rate} and "
            f"TargetBuffer {flow.target_buffer}, not the point's {point.upstream_rate:g} / {point.buffer}; "
            f"use {{{{ upstream_rate }}}} and {{{{ buffer }}}} in the template")
    return flow


def sim_scenario(campaign: Campaign, point: Point, flow: ServiceFlow | None = None):
    """The simulator scenario that predicts ``point``: its service flow, path and traffic."""
    from hfcprov.sim import FlowSpec, LossSpec, Scenario
    from hfcprov.sim.aqm.select import aqm_overrides

    flow = flow or upstream_flow(campaign, point)
    t = campaign.traffic
    return Scenario.from_service_flow(
        flow, rtt=point.rtt, flows=[FlowSpec() for _ in range(point.flows)],
        tcp=_tcp(point),
        data_loss=LossSpec(model="bernoulli", rate=point.loss) if point.loss else LossSpec(),
        probe_rate=1.0 / t.probe_interval, mac=point.mac,
        # the simulator's duration includes its warm-up; the campaign's counts measured time only
        duration=t.warmup + t.duration, warmup=t.warmup, seed=point.seed, name=point.key,
        **aqm_overrides(point.aqm, flow))


def _tcp(point: Point):
    """The hosts' TCP: the point's congestion control; with the DOCSIS MAC also the Linux-like
    timers the MAC was calibrated with (hfcprov.sim.mac.CALIBRATED_TCP: 200 ms minimum RTO, 40 ms
    delayed-ACK timer), so ``mac: docsis`` is the calibrated model as docs/calibration.md scores it."""
    from hfcprov.sim import TcpOptions

    if point.mac != "docsis":
        return TcpOptions(variant=point.congestion_control)
    from hfcprov.sim.mac import CALIBRATED_TCP

    return TcpOptions(variant=point.congestion_control, **CALIBRATED_TCP)


def simulate(scenario, voice: bool = False) -> RunResult:
    """Top-level (picklable) so process pools and Dask workers can call it.

    ``voice``: a G.711 call rides beside the bulk flows and ``RunResult.mos`` scores it (White et al. Fig. 9).
    """
    if voice:
        from hfcprov.sim.run import run_with_voice

        result = run_with_voice(scenario)
    else:
        from hfcprov.sim import run

        result = run(scenario)
    result.extra["model"] = sim_model_name(scenario.mac)
    return result


def sim_model_name(mac: str) -> str:
    """How a report names the simulator model behind a figure."""
    return {"tokenbucket": "sim: token bucket", "docsis": "sim: DOCSIS request-grant MAC"}.get(mac, f"sim: {mac}")


def environment(campaign: Campaign) -> dict:
    """Versions and host facts that decide how results compare across campaigns."""
    env = {
        "hfcprov": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "kernel": platform.release(),
        "hostname": platform.node(),
        "cpus": os.cpu_count(),
        "target": campaign.target.kind,
    }
    cc = Path("/proc/sys/net/ipv4/tcp_congestion_control")
    if cc.exists():
        env["kernel_tcp_congestion_control"] = cc.read_text().strip()
    for mod in ("matplotlib", "distributed"):
        m = sys.modules.get(mod)
        if m is not None:
            env[mod] = getattr(m, "__version__", "?")
    try:
        import sqlite3

        env["sqlite"] = sqlite3.sqlite_version
    except ImportError:  # pragma: no cover
        pass
    return env
