"""The emulated modem follows hfcprov.model's LLD rule: a dual queue only for a Low Latency aggregate
(TLV 70 with its classic and low-latency flows), DOCSIS-PIE for a lone flow with 24.40.3 = 2, and the
low-latency flow's classifiers (when the file has some) choose the dual queue's side.

Without root: the stage plan and the packet dispatch. With root (namespaces the tests create): ``emu
up --config`` boots the modem from such files, and a TUN path shows a classifier-steered flow keeping
low delay beside a classic bulk flow while an ECT(1) flow the classifiers leave classic waits."""

from __future__ import annotations

import json
import struct

import pytest

from hfcprov.config import decode, encode, parse_text
from hfcprov.emu import classify, shaping
from hfcprov.emu.aqmstage import dispatch_from_spec, plan_stage
from hfcprov.model import aggregate_service_flows, classifiers, modem_settings, service_flows
from hfcprov.tiers import render_tree
from tests.support import require_root

SINGLE_IAQM = """Main { NetworkAccess 1;
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 10000000;
                  BufferControl { TargetBuffer 131072; } AQMEncodings { AQMAlgorithm 2; } }
  DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 50000000; } }"""

# The low-latency flow (ref 2) is chosen by its classifier, UDP to port 9001, not by ECN
PORT_LLD = """Main { NetworkAccess 1;
  UpstreamAggregateServiceFlow { UpstreamServiceFlowReference 9; MaxRateSustained 10000000;
    LowLatencyAggregateSFEncodings { LowLatencyServiceFlowReference 2; } }
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; UpstreamAggregateServiceFlowReference 9;
                  BufferControl { TargetBuffer 262144; } }
  UsServiceFlow { UsServiceFlowRef 2; QosParamSetType 7; UpstreamAggregateServiceFlowReference 9; }
  UsPacketClass { ClassifierRef 1; ServiceFlowRef 2; RulePriority 64; ActivationState 1;
                  IpPacketClassifier { IpProto 17; DstPortStart 9001; DstPortEnd 9001; } }
  DsServiceFlow { DsServiceFlowRef 3; QosParamSetType 7; MaxRateSustained 50000000; } }"""


def stage_of(tree, version="3.1"):
    flows = service_flows(tree)
    plans = [shaping.plan(f) for f in flows]
    up = [p for p in plans if p.direction == "upstream"]
    steering, _ = classify.steer({d: [p.flow for p in plans if p.direction == d] for d in ("upstream", "downstream")},
                                 classifiers(tree))
    return plan_stage(up, version, steering, aggregate_service_flows(tree), modem_settings(tree))


def udp(dport: int, tos: int = 0) -> bytes:
    hdr = bytes([0x45, tos]) + struct.pack("!HHHBBH", 60, 0, 0, 64, 17, 0) + struct.pack("!II", 0x0A0A0102, 0x0A0A0302)
    return hdr + struct.pack("!HH", 4000, dport) + b"\0" * 36


def test_a_lone_flow_with_immediate_aqm_gets_docsis_pie_in_the_stage():
    stage = stage_of(parse_text(SINGLE_IAQM))
    (f,) = stage.staged
    assert (f.kind, f.rate, f.buffer, f.target) == ("pie", 10e6, 131072, 0.010)


def test_the_shipped_lld_tier_runs_one_dual_queue_its_classifiers_feed():
    tree = decode(encode(render_tree("lld-100x10", {"mac": "001122aabbcc"})))
    stage = stage_of(tree)
    assert stage.flows[0] is stage.flows[1] and stage.flows[0].kind == "dualq" and stage.flows[0].rate == 10e6
    assert stage.roles == (False, True)  # classic flow, low-latency flow: the classifiers choose
    d = dispatch_from_spec(json.loads(json.dumps(stage.spec())))
    q = d.stages[0].q
    for tos in (0, 1, 2, 3, 45 << 2):
        d.offer(udp(5000, tos), 0.0)
    assert (len(q.lq), len(q.cq)) == (3, 2)  # ECT(1), CE, NQB low latency; Not-ECT, ECT(0) classic


def test_classifiers_not_ecn_choose_the_low_latency_queue_when_the_file_has_them():
    stage = stage_of(parse_text(PORT_LLD))
    assert stage.roles == (False, True)
    d = dispatch_from_spec(json.loads(json.dumps(stage.spec())))
    q = d.stages[0].q
    d.offer(udp(9001), 0.0)  # Not-ECT, steered to the low-latency flow
    d.offer(udp(9002, tos=1), 0.0)  # ECT(1), but no classifier sends it to the low-latency flow
    assert (len(q.lq), len(q.cq)) == (1, 1) and q.lq[0][0][22:24] == struct.pack("!H", 9001)


def test_without_low_latency_classifiers_ecn_and_dscp_choose():
    no_rules = PORT_LLD[:PORT_LLD.index("  UsPacketClass")] + PORT_LLD[PORT_LLD.index("  DsServiceFlow"):]
    stage = stage_of(parse_text(no_rules))
    assert stage.roles == (None, None)
    d = dispatch_from_spec(json.loads(json.dumps(stage.spec())))
    q = d.stages[0].q
    d.offer(udp(9001), 0.0)
    d.offer(udp(9002, tos=1), 0.0)
    assert q.lq[0][0][22:24] == struct.pack("!H", 9002) and len(q.cq) == 1


@pytest.mark.root
def test_emu_up_follows_the_lld_rule(lab_factory, tmp_path):
    from hfcprov.config import render_text
    from tests.emu.test_aqm_emu import emu_up

    lone = tmp_path / "lone.txt"
    lone.write_text(SINGLE_IAQM)
    lab, _ = emu_up(lab_factory, lone)
    assert lab["modem"]["status"] == "operational"
    assert [f["stage"] for f in lab["queues"]["upstream"]["aqm"]["flows"]] == ["pie"]
    tier = tmp_path / "lld.txt"
    tier.write_text(render_text(render_tree("lld-100x10", {"mac": "001122aabbcc"})))
    lab, _ = emu_up(lab_factory, tier)
    up = lab["queues"]["upstream"]
    assert lab["modem"]["status"] == "operational"
    assert [(f["stage"], f["rate_bps"]) for f in up["aqm"]["flows"]] == [("dualq", 10e6)]
    assert up["aqm"]["roles"] == [False, True]
    assert [f["classifier"] for f in up["filters"]] == ["22[0]", "22[1]"]  # both LL classifiers installed


@pytest.mark.root
def test_a_classifier_steered_flow_keeps_low_delay_and_an_unclassified_ect1_flow_waits():
    from tests.emu.test_aqm_flows import blast_ports
    from tests.emu.test_aqmstage import Path3

    require_root("network namespaces and a TUN device")
    stage = stage_of(parse_text(PORT_LLD))
    path = Path3("dualq", 0, 0, spec=stage.spec())
    try:  # classic bulk at 110 % of the 10 Mb/s aggregate; 1 Mb/s to the LL flow's port; 1 Mb/s ECT(1) elsewhere
        res = blast_ports(path, {9000: 11e6, 9001: 1e6, 9002: 1e6}, 1400, 6.0, warmup=2.0, tos={9002: 1})
    finally:
        path.close()
    p50 = {port: sorted(d)[len(d) // 2] for port, (_got, d) in res.items()}
    print(f"\nclassifier-steered LL p50 {p50[9001] * 1e3:.2f} ms; unclassified ECT(1) p50 {p50[9002] * 1e3:.2f} ms; "
          f"classic bulk p50 {p50[9000] * 1e3:.2f} ms")
    assert p50[9001] < 0.003, p50  # the low-latency queue
    assert p50[9002] > 0.005 and p50[9000] > 0.005, p50  # both wait in the classic queue near its PIE target
