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


# The tier a campaign without a template provisions for ``aqm: lld``: a shipped Low Latency DOCSIS tier
# (TLV 70/71, templates/README.md) rendered with the point's upstream rate and buffer.
LLD_TIER = "lld-100x10"


def config_tree(campaign: Campaign, point: Point, variables: dict | None = None):
    """The point's config tree, rendered from the tier template with the point's values; a campaign
    without a template that tests ``aqm: lld`` renders the shipped LLD tier (``LLD_TIER``)."""
    from hfcprov.tiers import render_tree

    template = campaign.template or (LLD_TIER if point.aqm == "lld" else None)
    if template is None:
        raise CampaignError(f"{point.key}: the campaign names no tier template to build a config file from")
    return render_tree(template, variables or point.template_vars())


def upstream_flow(campaign: Campaign, point: Point, tree=None) -> ServiceFlow:
    """The service flow a point provisions upstream (the modem's queue under test; in a Low Latency
    aggregate, its classic flow)."""
    if campaign.template is None and point.aqm != "lld":  # a tier by its numbers: the profile's tier burst and peak
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
            f"{campaign.template or LLD_TIER}: the rendered flow {flow.path} has rate {flow.max_sustained_rate} and "
            f"TargetBuffer {flow.target_buffer}, not the point's {point.upstream_rate:g} / {point.buffer}; "
            f"use {{{{ upstream_rate }}}} and {{{{ buffer }}}} in the template")
    return flow


def point_queue(campaign: Campaign, point: Point, tree=None) -> dict | None:
    """The scenario keys of the queue a point's file gives its upload, when the file decides it (``aqm``
    lld or file with a template: ``hfcprov.sim.fromconfig.tree_queue``, an aggregate's dual queue
    included); None where the grid's ``aqm`` is applied to the flow. ``aqm: lld`` needs a file with a
    Low Latency aggregate service flow (TLV 70 with its low-latency flow): MULPI puts the dual queue
    nowhere else."""
    if point.aqm not in ("lld", "file") or (campaign.template is None and point.aqm == "file"):
        return None
    from hfcprov.queue.profile import parse_profile
    from hfcprov.sim.fromconfig import tree_queue

    modem = parse_profile(point.profile)
    if point.aqm == "lld" and modem.aqm_rule_version != "3.1":
        raise CampaignError(f"{point.key}: aqm=lld needs a DOCSIS 3.1 profile: Low Latency DOCSIS is DOCSIS 3.1's "
                            f"(profile {modem.name} is a DOCSIS {modem.docsis_version} modem)")
    tree = tree if tree is not None else config_tree(campaign, point)
    _flow, keys, where = tree_queue(tree, None, modem.aqm_rule_version, str(campaign.template or LLD_TIER))
    if point.aqm == "lld":
        if keys.get("aqm") != "lld":
            raise CampaignError(
                f"{campaign.template}: the grid says aqm=lld but {where} is no Low Latency aggregate service "
                "flow (TLV 70 with 70.42 naming its low-latency flow); render one for {{ aqm }} == 'lld' "
                f"(the shipped residential tiers do) or use a shipped LLD tier ({LLD_TIER}, ...)")
        # the probes and the voice call are the latency-sensitive traffic an LLD tier is sold for:
        # NQB-marked, as MULPI's classifiers (and the shipped tiers') send them to the low-latency flow
        keys = {**keys, "aqm_params": {**(keys.get("aqm_params") or {}), "nqb_probes": True}}
    return keys


def sim_scenario(campaign: Campaign, point: Point, flow: ServiceFlow | None = None):
    """The simulator scenario that predicts ``point``: its service flow, path and traffic
    (``hfcprov.sim.upload``, the experiment ``buffer advise --model sim`` runs too); with ``aqm:
    lld`` (or ``file`` with a template) the queue the point's config file gives it (``point_queue``)."""
    t = campaign.traffic
    tree = config_tree(campaign, point) if point.aqm == "lld" or (point.aqm == "file" and campaign.template) \
        else None
    return upload_scenario(flow or upstream_flow(campaign, point, tree), rtt=point.rtt, flows=point.flows,
                           congestion_control=point.congestion_control, mac=point.mac, loss=point.loss,
                           aqm=point.aqm, probe_interval=t.probe_interval, duration=t.duration,
                           warmup=t.warmup, seed=point.seed, name=point.key, profile=point.profile,
                           queue=point_queue(campaign, point, tree), far_rtt=point.far_rtt)


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
