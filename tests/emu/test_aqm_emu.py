"""The emulated modem applies the AQM its config file asks for, in the userspace stage (root).

2 Mb/s upstream, 64 KiB buffer (262 ms of queue as drop-tail), 40 ms base RTT, two kernel
CUBIC uploads: with 24.40 asking for DOCSIS-PIE the RTT under load sits near base + the 10 ms
target instead of base + buffer/rate, and goodput still fills the rate. Without 24.40 the
emulated modem runs what ``hfcprov.model.upstream_aqm`` says for its DOCSIS version, as the
simulator does for the same file: DOCSIS-PIE at 3.1 (the default), drop-tail at 3.0 (docs/emu.md).
"""

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov.emu import shaping
from hfcprov.emu.aqmstage import plan_stage
from hfcprov.emu.measure import measure
from hfcprov.model import AqmSettings, BufferControl, ServiceFlow
from hfcprov.probe.run import ProbeSpec
from hfcprov.sim.scenario import flow_keys

PAYLOAD_SHARE = 1448 / 1514


def flow(aqm: AqmSettings, rate=2e6, buffer=64 * 1024):
    return ServiceFlow(direction="upstream", ref=1, max_sustained_rate=rate, buffer=BufferControl(target=buffer),
                       aqm=aqm)


def test_the_stage_runs_where_the_models_rule_gives_aqm():
    bare = flow(AqmSettings())  # no 24.40
    stage = plan_stage([shaping.plan(bare)])  # DOCSIS 3.1 (the default): DOCSIS-PIE
    assert stage.flows[0].kind == "pie" and stage.flows[0].target == 0.010
    assert plan_stage([shaping.plan(bare)], "3.0") is None  # DOCSIS 3.0: drop-tail
    stage = plan_stage([shaping.plan(flow(AqmSettings(latency_target_ms=20)))], "3.0")  # the file asks
    f = stage.flows[0]
    assert f.kind == "pie" and f.target == 0.020 and f.rate == 2e6 and f.buffer == 65536
    assert stage.tc_plans[0].rate_bps is None  # tc steers only; the stage shapes
    assert stage.args()[0] == "--aqm-spec" and json.loads(stage.args()[1])["stages"][0]["latency_target"] == 0.020
    for off in (AqmSettings(disable=True), AqmSettings(disable=False, cm_disabled=True)):  # 24.40.1, TLV 76
        for version in ("3.0", "3.1"):
            assert plan_stage([shaping.plan(flow(off))], version) is None


def test_several_upstream_flows_each_get_the_aqm_the_rule_gives_them():
    two = [shaping.plan(flow(AqmSettings())), shaping.plan(replace(flow(AqmSettings(disable=True)), ref=2,
                                                                    path="24[1]"))]
    stage = plan_stage(two)  # flow 1: PIE in the stage; flow 2 (24.40.1 off): tc's drop-tail
    assert stage.flows[0].kind == "pie" and stage.flows[1] is None
    assert stage.tc_plans[0].rate_bps is None and stage.tc_plans[1] == two[1]
    assert plan_stage(two, "3.0") is None  # the rule gives neither AQM


AQMS = st.builds(AqmSettings, disable=st.none() | st.booleans(), latency_target_ms=st.none() | st.integers(0, 100),
                 algorithm_code=st.none() | st.sampled_from([0, 1, 2]), cm_disabled=st.booleans())


@given(AQMS, st.sampled_from(["3.0", "3.1"]))
def test_sim_and_emulated_modem_give_one_flow_the_same_queue(aqm, version):
    """The scenario the simulator builds and the stage the emulated modem applies agree."""
    f = flow(aqm)
    sim = flow_keys(f, version)
    stage = plan_stage([shaping.plan(f)], version)
    if stage is None:
        assert sim["aqm"] == "none"
    else:
        kind, target = stage.flows[0].kind, stage.flows[0].target
        assert sim["aqm"] == {"pie": "docsis-pie", "dualq": "lld"}[kind]
        assert (sim.get("aqm_params") or {}).get("latency_target", 0.010) == target or kind == "dualq"


@pytest.mark.root
@pytest.mark.slow
def test_emulated_modem_holds_the_pie_target_on_kernel_tcp(lab_factory):
    lab = lab_factory(rtt=0.040, docsis_version="3.0")
    rate = 2e6
    lab.apply([shaping.plan(flow(AqmSettings(disable=False)))])
    assert lab.queues["upstream"]["aqm"]["stage"] == "pie"
    r = measure(lab, ProbeSpec(target=None, flows=2, duration=5, warmup=2, idle=1.0, cc="cubic"))
    excess = r.latency_loaded.p50 - r.latency_idle.p50
    print(f"\nPIE stage: idle p50 {r.latency_idle.p50 * 1e3:.1f} ms, loaded p50 {r.latency_loaded.p50 * 1e3:.1f} ms "
          f"p99 {r.latency_loaded.p99 * 1e3:.1f} ms, goodput {r.goodput_bps / 1e6:.3f} Mb/s")
    # drop-tail would add 64 KiB / 2 Mb/s = 262 ms; PIE holds about its 10 ms target
    assert excess < 0.060, (excess, r.latency_loaded)
    assert r.goodput_bps > 0.85 * rate * PAYLOAD_SHARE, r.goodput_bps
    lab.apply([shaping.plan(flow(AqmSettings()))])  # the same flow without 24.40: drop-tail on DOCSIS 3.0
    assert "aqm" not in lab.queues["upstream"]
    r = measure(lab, ProbeSpec(target=None, flows=2, duration=3, warmup=1.5, idle=1.0, cc="cubic"))
    print(f"drop-tail: idle p50 {r.latency_idle.p50 * 1e3:.1f} ms, loaded p50 {r.latency_loaded.p50 * 1e3:.1f} ms "
          f"p99 {r.latency_loaded.p99 * 1e3:.1f} ms, goodput {r.goodput_bps / 1e6:.3f} Mb/s")
    assert r.latency_loaded.p50 - r.latency_idle.p50 > 0.15


ONE_FLOW = """Main { NetworkAccess 1;
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 2000000;
                  BufferControl { TargetBuffer 65536; } }
  DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 10000000; } }"""
TWO_UPSTREAM = ONE_FLOW.replace("DsServiceFlow {", "UsServiceFlow { UsServiceFlowRef 3; QosParamSetType 7;"
                                "  MaxRateSustained 1000000; }\n  DsServiceFlow {")


def emu_up(lab_factory, cfg, *extra):
    import json
    import subprocess

    p = subprocess.run([".venv/bin/hfcprov", "emu", "up", "--prefix", lab_factory.prefix, "--config", str(cfg),
                        "--json", *extra], check=False, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), p.stderr


@pytest.mark.root
@pytest.mark.slow
def test_one_file_without_24_40_gets_the_same_queue_in_sim_and_emu_up(lab_factory, tmp_path):
    """`emu up --config F` and `sim run --config F` model the same modem for each --docsis-version."""
    from hfcprov.sim.fromconfig import scenario_from_config

    cfg = tmp_path / "bare.txt"
    cfg.write_text(ONE_FLOW)
    for extra, sim_queue, stage in (((), "docsis-pie", "pie"), (("--docsis-version", "3.0"), "none", None)):
        lab, note = emu_up(lab_factory, cfg, *extra)
        assert lab["modem"]["status"] == "operational"
        assert (lab["queues"]["upstream"].get("aqm") or {}).get("stage") == stage, (extra, lab["queues"])
        assert "aqm" not in lab["queues"]["downstream"] and "note" not in note
        assert scenario_from_config(cfg, None, [], *extra[1:]).aqm == sim_queue


@pytest.mark.root
@pytest.mark.slow
def test_emu_up_runs_the_stage_for_every_upstream_flow_the_rule_gives_aqm(lab_factory, tmp_path):
    cfg = tmp_path / "two.txt"
    cfg.write_text(TWO_UPSTREAM)
    lab, note = emu_up(lab_factory, cfg)
    up = lab["queues"]["upstream"]
    assert lab["modem"]["status"] == "operational" and note == "", (up, note)
    assert [(f["stage"], f["rate_bps"]) for f in up["aqm"]["flows"]] == [("pie", 2e6), ("pie", 1e6)]
    lab, note = emu_up(lab_factory, cfg, "--docsis-version", "3.0")
    assert note == "" and "aqm" not in lab["queues"]["upstream"]


@pytest.mark.root
@pytest.mark.slow
def test_emu_up_runs_an_lld_aggregate_as_one_dual_queue(lab_factory, tmp_path):
    """The modem hands its file's aggregate service flows (70/71) and TLV 91 to the stage, as `sim run --config` reads them."""
    from hfcprov.sim.fromconfig import scenario_from_config
    from tests.emu.test_aqm_flows import LLD

    cfg = tmp_path / "lld.txt"
    cfg.write_text(LLD)
    lab, note = emu_up(lab_factory, cfg)
    stages = lab["queues"]["upstream"]["aqm"]["flows"]
    assert lab["modem"]["status"] == "operational" and note == ""
    assert [(f["stage"], f["rate_bps"]) for f in stages] == [("dualq", 10e6)], stages  # both members, one queue
    assert scenario_from_config(cfg, None, []).aqm == "lld"
    cfg.write_text(LLD.replace("NetworkAccess 1;", "NetworkAccess 1; LowLatencyDisable 1;"))
    lab, _ = emu_up(lab_factory, cfg)
    assert [f["stage"] for f in lab["queues"]["upstream"]["aqm"]["flows"]] == ["pie"]
