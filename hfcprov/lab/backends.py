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
from hfcprov.lab.spec import Campaign, CampaignError, Point
from hfcprov.model import ServiceFlow
from hfcprov.sim.upload import simulate, tier_flow, upload_scenario  # noqa: F401 (simulate: the runner's)


def config_tree(campaign: Campaign, point: Point, variables: dict | None = None):
    """The point's config tree, rendered from the tier template with the point's values."""
    from hfcprov.tiers import render_tree

    return render_tree(campaign.template, variables or point.template_vars())


def upstream_flow(campaign: Campaign, point: Point, tree=None) -> ServiceFlow:
    """The service flow a point provisions upstream (the modem's queue under test)."""
    if campaign.template is None:  # a tier by its numbers: the profile's tier burst and peak
        from hfcprov.queue.profile import parse_profile

        profile = parse_profile(point.profile)
        rate = point.upstream_rate
        return tier_flow(rate, point.buffer, profile.tier_burst(rate), profile.tier_peak(rate))
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
    """The simulator scenario that predicts ``point``: its service flow, path and traffic
    (``hfcprov.sim.upload``, the experiment ``buffer advise --model sim`` runs too)."""
    t = campaign.traffic
    return upload_scenario(flow or upstream_flow(campaign, point), rtt=point.rtt, flows=point.flows,
                           congestion_control=point.congestion_control, mac=point.mac, loss=point.loss,
                           aqm=point.aqm, probe_interval=t.probe_interval, duration=t.duration,
                           warmup=t.warmup, seed=point.seed, name=point.key, profile=point.profile,
                           far_rtt=point.far_rtt)


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
