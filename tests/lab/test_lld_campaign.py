"""A campaign's ``aqm: lld`` builds Low Latency DOCSIS files: a TLV 70 aggregate with its classic and
low-latency flows (the shipped LLD tier, or the campaign's template rendered with aqm=lld), and the
simulator predicts the point from that file's dual queue, as ``sim run --config`` would."""

from __future__ import annotations

import pytest

from hfcprov.config import decode
from hfcprov.lab import backends
from hfcprov.lab.measured import PointFailed, build_config
from hfcprov.lab.spec import CampaignError, parse_campaign
from hfcprov.model import aggregate_service_flows, low_latency_aggregates, modem_settings, service_flows

GRID = "grid: {upstream_rate: 10M, buffer: 128KiB, rtt: 20ms, aqm: [docsis-pie, lld]}\n"
TRAFFIC = "traffic: {duration: 3s, warmup: 1s, probe_interval: 50ms}\n"


def lld_aggregate(tree):
    (lla,) = low_latency_aggregates(service_flows(tree), aggregate_service_flows(tree), modem_settings(tree))
    return lla


@pytest.mark.parametrize("template", [None, "res-100x10", "lld-300x20"])
def test_a_sim_campaigns_lld_point_is_the_aggregate_its_file_provisions(template):
    head = f"template: {template}\n" if template else ""
    pie, lld = parse_campaign(head + GRID + TRAFFIC).points()
    camp = parse_campaign(head + GRID + TRAFFIC)
    lla = lld_aggregate(backends.config_tree(camp, lld))
    assert (lla.rate, lla.classic_buffer()) == (10e6, 128 * 1024)
    sc = backends.sim_scenario(camp, lld)
    assert (sc.aqm, sc.rate, sc.buffer, sc.burst) == ("lld", 10e6, 128 * 1024, lla.burst)
    assert sc.aqm_params["nqb_probes"] is True and sc.aqm_params["coupling"] == 2.0
    assert backends.sim_scenario(camp, pie).aqm == "docsis-pie"  # the other queue of the same grid
    res = backends.simulate(sc)
    aqm = res.extra["aqm"]
    assert aqm["aqm"] == "lld" and aqm["ll_packets"] > 0  # the probes rode the low-latency queue


def test_an_emu_campaigns_lld_point_publishes_a_file_with_the_aggregate():
    camp = parse_campaign("target: {kind: emu}\ntemplate: res-50x5\n" + GRID)
    pie, lld = camp.points()
    data, classic = build_config(camp, lld)
    lla = lld_aggregate(decode(data))
    assert lla.classic.ref == classic.ref and lla.low_latency.ref == 3 and lla.rate == 10e6
    data, flow = build_config(camp, pie)
    assert aggregate_service_flows(decode(data)) == [] and flow.aqm.algorithm == "docsis-pie"


def test_a_template_without_an_aggregate_cannot_be_an_lld_point(tmp_path):
    t = tmp_path / "pie-only.j2"
    t.write_text("Main { NetworkAccess 1; UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; "
                 "MaxRateSustained {{ upstream_rate|int }}; BufferControl { TargetBuffer {{ buffer }}; } "
                 "AQMEncodings { SFAQMDisable 0; AQMAlgorithm 2; } } }\n")
    camp = parse_campaign(f"template: {t}\n" + GRID)
    _pie, lld = camp.points()
    with pytest.raises(CampaignError, match="aqm=lld but 24.0. is no Low Latency aggregate service flow"):
        backends.sim_scenario(camp, lld)
    emu = parse_campaign(f"target: {{kind: emu}}\ntemplate: {t}\n" + GRID)
    with pytest.raises(PointFailed, match="no Low Latency aggregate"):
        build_config(emu, emu.points()[1])
