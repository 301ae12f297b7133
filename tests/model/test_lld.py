"""Low Latency DOCSIS as MULPI provisions it (hfcprov.model.lld): the dual queue only inside an
aggregate service flow (TLV 70) with a classic and a low-latency flow; a single flow with 24.40.3 = 2
runs DOCSIS-PIE. One rule, read the same way by the simulator's scenario and the reported QoS."""

from __future__ import annotations

import pytest

from hfcprov.config import parse_text
from hfcprov.model import (
    aggregate_service_flows,
    lld_findings,
    low_latency_aggregate,
    low_latency_aggregates,
    modem_settings,
    qos_param_values,
    service_flows,
    upstream_aqm,
)
from hfcprov.queue.pie import AqmConfigError
from hfcprov.queue.select import aqm_keys, asf_keys
from hfcprov.sim import Network, Scenario
from hfcprov.sim.aqm.link import DualQueueLink, PieLink

SINGLE_IAQM = """Main { UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 20000000;
  BufferControl { TargetBuffer 131072; }
  AQMEncodings { SFAQMLatencyTarget 15; AQMAlgorithm 2; ImmediateAQMMaxThreshold 2000; } } }"""

ASF = """Main {
  UpstreamAggregateServiceFlow { UpstreamServiceFlowReference 11; MaxRateSustained 50000000; MaxTrafficBurst 125000;
    UpstreamPeakTrafficRate 100000000;
    LowLatencyAggregateSFEncodings { LowLatencyServiceFlowReference 3; AQMCouplingFactor 15; SchedulingWeight 200;
      QueueProtectionEnable 1; QPLatencyThreshold 2000; QPQueuingScoreThreshold 5000; QPDrainRateExponent 18; } }
  UsServiceFlow { UsServiceFlowRef 1; UpstreamAggregateServiceFlowReference 11; MaxRateSustained 50000000;
    BufferControl { TargetBuffer 262144; } AQMEncodings { SFAQMLatencyTarget 20; } }
  UsServiceFlow { UsServiceFlowRef 3; UpstreamAggregateServiceFlowReference 11;
    GuaranteedGrantRate 2000000; GuaranteedGrantInterval 1000;
    AQMEncodings { AQMAlgorithm 2; ImmediateAQMMaxThreshold 1500; } }
  DsServiceFlow { DsServiceFlowRef 2; MaxRateSustained 100000000; }
}"""


def parsed(text):
    tree = parse_text(text)
    return service_flows(tree), aggregate_service_flows(tree), modem_settings(tree)


def test_a_single_flow_with_immediate_aqm_runs_docsis_pie_not_a_dual_queue():
    (sf,), asfs, settings = parsed(SINGLE_IAQM)
    assert not sf.low_latency and sf.aqm.algorithm == "immediate"  # what the file says
    aqm = upstream_aqm(sf, settings)  # what the modem runs
    assert aqm.algorithm == "docsis-pie" and aqm.latency_target == 0.015
    assert aqm_keys(sf) == {"aqm": "docsis-pie", "aqm_params": {"latency_target": 0.015}}
    net = Network(Scenario.from_service_flow(sf, duration=1.0))
    assert isinstance(net.bottleneck, PieLink) and not isinstance(net.bottleneck, DualQueueLink)
    assert qos_param_values(sf)["aqm_algorithm"] == 3  # reported: docsisPIE(3)
    (note,) = lld_findings([sf], asfs)
    assert "24[0]" in note and "DOCSIS-PIE" in note and "C.2.2.7.15.3" in note
    assert low_latency_aggregates([sf], asfs, settings) == []


def test_an_aggregate_with_a_classic_and_a_low_latency_flow_is_the_dual_queue():
    flows, (asf,), settings = parsed(ASF)
    classic, ll, _down = flows
    assert (classic.low_latency, ll.low_latency) == (False, True)
    assert (ll.guaranteed_grant_rate, ll.guaranteed_grant_interval) == (2e6, 0.001)
    lla = low_latency_aggregate(asf, flows, settings)
    assert lla.classic is classic and lla.low_latency is ll
    assert (lla.rate, lla.burst, lla.peak, lla.coupling, lla.weight, lla.queue_protection) == \
        (50e6, 125000, 100e6, 1.5, 200, True)
    assert (lla.qp_latency_threshold, lla.qp_score_threshold, lla.qp_drain_exponent) == (0.002, 0.005, 18)
    assert lla.classic_aqm.latency_target == 0.020 and lla.immediate_aqm.iaqm_max_threshold == 0.0015
    assert (lla.pgs.rate, lla.pgs.interval) == (2e6, 0.001)
    assert lla.classic_buffer() == 262144 and lla.ll_buffer() is None
    # each member reports the AQM of its queue: DOCSIS-PIE on the classic, Immediate AQM (other(2)) on the LL
    assert upstream_aqm(classic).algorithm == "docsis-pie" and upstream_aqm(ll).algorithm == "immediate"
    assert (qos_param_values(classic)["aqm_algorithm"], qos_param_values(ll)["aqm_algorithm"]) == (3, 2)
    assert lld_findings(flows, [asf]) == []
    keys = asf_keys(asf, flows, settings)
    assert keys["aqm"] == "lld" and keys["pgs"] == {"rate": 2e6, "interval": 0.001}
    assert keys["aqm_params"] == {"latency_target": 0.020, "iaqm_max_th": 0.0015, "coupling": 1.5, "weight": 200,
                                  "queue_protection": True, "qp_latency_threshold": 0.002,
                                  "qp_score_threshold": 0.005, "qp_lg_aging": 18, "classic_rate": 50e6}
    net = Network(Scenario(**keys, duration=1.0))
    qd = net.bottleneck.qd
    assert (qd.qp.critical_ql, qd.qp.p.score_threshold, qd.qp.p.lg_aging) == (0.002, 0.005, 18)
    with pytest.raises(AqmConfigError, match="low-latency flow"):
        aqm_keys(ll)  # the LL flow's queue is the aggregate's: never simulated alone


@pytest.mark.parametrize("change", [
    lambda t: t.replace("Main {", "Main { LowLatencyDisable 1;"),  # TLV 91
    lambda t: t.replace("LowLatencyServiceFlowReference 3;", "LowLatencyServiceFlowReference 7;"),  # no LL member
])
def test_no_dual_queue_where_the_modem_runs_no_low_latency(change):
    flows, (asf,), settings = parsed(change(ASF))
    assert low_latency_aggregate(asf, flows, settings) is None
    assert upstream_aqm(flows[1], settings).algorithm == "docsis-pie"  # the would-be LL flow: an individual one
    keys = asf_keys(asf, flows, settings)  # the aggregate is its classic flow at the aggregate's rate
    assert (keys["aqm"], keys["aqm_params"], keys["rate"]) == ("docsis-pie", {"latency_target": 0.020}, 50e6)


def test_an_aggregate_without_a_classic_flow_is_refused_in_one_line():
    text = ASF.replace("UsServiceFlowRef 1; UpstreamAggregateServiceFlowReference 11;", "UsServiceFlowRef 1;")
    flows, (asf,), settings = parsed(text)
    assert low_latency_aggregate(asf, flows, settings) is None
    assert any("no classic flow" in n for n in lld_findings(flows, [asf]))
    with pytest.raises(AqmConfigError, match="70.0.: no classic service flow names it"):
        asf_keys(asf, flows, settings)


def test_a_docsis30_modem_runs_no_low_latency_docsis():
    flows, (asf,), settings = parsed(ASF)
    assert low_latency_aggregate(asf, flows, settings, "3.0") is None
    assert asf_keys(asf, flows, settings, "3.0")["aqm"] == "docsis-pie"  # the classic flow's 24.40 asks for it
    assert upstream_aqm(flows[1], settings, "3.0").algorithm == "docsis-pie"  # the LL flow alone: its 24.40 asks


def test_findings_name_an_aggregate_whose_low_latency_flow_is_missing():
    flows, asfs, _ = parsed(ASF.replace("LowLatencyServiceFlowReference 3;", "LowLatencyServiceFlowReference 7;"))
    notes = lld_findings(flows, asfs)
    assert any("70[0]" in n and "7" in n and "no dual queue" in n for n in notes), notes
