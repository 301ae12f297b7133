"""From the config file to the queue: AQM TLVs -> hfcprov.model -> scenario keys -> the hop."""

from __future__ import annotations

import pytest

from hfcprov.config.forms import parse_text
from hfcprov.model import aggregate_service_flows, modem_settings, service_flows
from hfcprov.sim import Network, Scenario, ScenarioError, run
from hfcprov.sim.aqm.link import DualQueueLink, PieLink
from hfcprov.queue.pie import AqmConfigError
from hfcprov.queue.select import aqm_keys, aqm_overrides, asf_keys, parse_params
from hfcprov.sim.link import Link
from hfcprov.sim.scenario import flow_keys


def flows(text: str):
    return service_flows(parse_text("Main {" + text + "}"))


def test_a_docsis31_upstream_flow_runs_docsis_pie_unless_switched_off():
    (up,) = flows("UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 10000000; }")
    assert aqm_keys(up) == {"aqm": "docsis-pie", "aqm_params": None}
    assert flow_keys(up)["aqm"] == "docsis-pie"
    (t,) = flows("UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 10000000;"
                 " AQMEncodings { SFAQMLatencyTarget 20; } }")
    assert aqm_keys(t) == {"aqm": "docsis-pie", "aqm_params": {"latency_target": 0.020}}
    (off,) = flows("UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 10000000;"
                   " AQMEncodings { SFAQMDisable 1; } }")
    assert aqm_keys(off) == {"aqm": "none"}
    (cm_off,) = flows("CMUpstreamAQMDisable 1; UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 10000000; }")
    assert aqm_keys(cm_off) == {"aqm": "none"}
    (down,) = flows("DsServiceFlow { DsServiceFlowRef 2; MaxRateSustained 10000000; }")
    assert aqm_keys(down) == {"aqm": "none"}  # the CMTS's downstream AQM is not modelled


def test_a_docsis30_modem_runs_aqm_only_where_the_file_asks():
    (up,) = flows("UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 10000000; }")
    assert aqm_keys(up, "3.0") == {"aqm": "none"}
    assert flow_keys(up, "3.0")["aqm"] == "none"
    assert Scenario.from_service_flow(up, docsis_version="3.0").aqm == "none"
    assert type(Network(Scenario.from_service_flow(up, docsis_version="3.0", duration=1.0)).bottleneck) is Link
    assert isinstance(Network(Scenario.from_service_flow(up, duration=1.0)).bottleneck, PieLink)  # 3.1 default
    (t,) = flows("UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 10000000;"
                 " AQMEncodings { SFAQMLatencyTarget 20; } }")
    assert aqm_keys(t, "3.0") == {"aqm": "docsis-pie", "aqm_params": {"latency_target": 0.020}}


def test_the_file_chooses_the_hop_the_simulator_builds():
    (up,) = flows("UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 10000000;"
                  " AQMEncodings { SFAQMLatencyTarget 20; } }")
    net = Network(Scenario.from_service_flow(up, duration=1.0))
    assert isinstance(net.bottleneck, PieLink)
    assert net.bottleneck.pie.p.latency_target == 0.020
    (off,) = flows("UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 10000000;"
                   " AQMEncodings { SFAQMDisable 1; } }")
    net = Network(Scenario.from_service_flow(off, duration=1.0))
    assert type(net.bottleneck) is Link


LLD = """
  UpstreamAggregateServiceFlow { UpstreamServiceFlowReference 9; MaxRateSustained 50000000;
    LowLatencyAggregateSFEncodings { LowLatencyServiceFlowReference 2; AQMCouplingFactor 15;
                                     SchedulingWeight 200; QueueProtectionEnable 0; } }
  UsServiceFlow { UsServiceFlowRef 1; UpstreamAggregateServiceFlowReference 9;
                  AQMEncodings { SFAQMLatencyTarget 15; } }
  UsServiceFlow { UsServiceFlowRef 2; UpstreamAggregateServiceFlowReference 9; MaxRateSustained 20000000;
                  AQMEncodings { AQMAlgorithm 2; ImmediateAQMMaxThreshold 2000; ImmediateAQMRangeExponent 18; } }
"""


def test_an_aggregate_service_flow_becomes_the_lld_dual_queue():
    tree = parse_text("Main {" + LLD + "}")
    (asf,) = aggregate_service_flows(tree)
    keys = asf_keys(asf, service_flows(tree), modem_settings(tree))
    assert keys["rate"] == 50e6 and keys["aqm"] == "lld"
    assert keys["aqm_params"] == {"latency_target": 0.015, "iaqm_max_th": 0.002, "iaqm_lg_range": 18,
                                  "coupling": 1.5, "weight": 200, "queue_protection": False, "ll_rate": 20e6}
    net = Network(Scenario(**keys, duration=1.0))
    link = net.bottleneck
    assert isinstance(link, DualQueueLink)
    qd = link.qd
    assert (qd.p.coupling, qd.p.weight, qd.qp, qd.ll_rate, qd.p.classic.latency_target) == (1.5, 200, None, 20e6, 0.015)
    assert qd.max_th == pytest.approx(max(0.002 - 2**18 * 1e-9, 2 * 2000 * 8 / 20e6) + 2**18 * 1e-9)


def test_low_latency_disable_turns_the_aggregate_into_its_classic_flow():
    tree = parse_text("Main { LowLatencyDisable 1;" + LLD + "}")
    (asf,) = aggregate_service_flows(tree)
    keys = asf_keys(asf, service_flows(tree), modem_settings(tree))
    assert keys["aqm"] == "docsis-pie" and keys["aqm_params"] == {"latency_target": 0.015}


def test_a_docsis30_modem_has_no_low_latency_docsis():
    tree = parse_text("Main {" + LLD + "}")
    (asf,) = aggregate_service_flows(tree)
    keys = asf_keys(asf, service_flows(tree), modem_settings(tree), "3.0")
    # the classic flow asks for AQM in its 24.40, so even a D3.0 modem runs PIE on it; no dual queue
    assert keys["aqm"] == "docsis-pie" and keys["aqm_params"] == {"latency_target": 0.015}


def test_aqm_params_parse_units_and_name_bad_keys():
    assert parse_params({"latency_target": "20ms"}, "docsis-pie") == {"latency_target": 0.020}
    assert parse_params({"ll_buffer": "64KiB", "ll_rate": "20M"}, "lld") == {"ll_buffer": 65536, "ll_rate": 20e6}
    with pytest.raises(AqmConfigError, match="bogus: not a docsis-pie parameter"):
        parse_params({"bogus": 1}, "docsis-pie")
    with pytest.raises(AqmConfigError, match="latency_target"):
        parse_params({"latency_target": "soon"}, "docsis-pie")


def test_scenario_files_take_an_aqm_key_and_errors_are_one_line():
    sc = Scenario.from_dict({"rate": "10M", "buffer": "256KiB", "duration": "2s", "aqm": "docsis-pie",
                             "aqm_params": {"latency_target": "5ms"}})
    res = run(sc)
    assert res.extra["aqm"]["aqm"] == "docsis-pie" and res.extra["aqm"]["latency_target"] == 0.005
    with pytest.raises(ScenarioError, match=r"aqm_params: weight: not a docsis-pie parameter"):
        run(Scenario.from_dict({"rate": "10M", "buffer": "64KiB", "aqm": "docsis-pie", "aqm_params": {"weight": 1}}))
    with pytest.raises(ScenarioError, match="aqm: unknown"):
        run(Scenario.from_dict({"rate": "10M", "buffer": "64KiB", "aqm": "red"}))


def test_campaign_axis_overrides():
    (up,) = flows("UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 10000000;"
                  " AQMEncodings { SFAQMLatencyTarget 20; } }")
    assert aqm_overrides("file", up) == {}
    assert aqm_overrides("none", up) == {"aqm": "none", "aqm_params": None}
    assert aqm_overrides("docsis-pie", up) == {"aqm": "docsis-pie", "aqm_params": {"latency_target": 0.020}}
    assert aqm_overrides("lld", up)["aqm_params"]["nqb_probes"] is True


def test_segment_trains_are_off_behind_an_aqm_hop():
    """TSO trains are one event for n packets on a plain FIFO Link; PIE and the dual queue
    decide per packet, so the senders behind them send single segments."""
    for aqm in ("docsis-pie", "lld"):
        net = Network(Scenario.from_dict({"rate": "50M", "buffer": "256KiB", "aqm": aqm, "duration": "1s",
                                          "tcp": {"variant": "cubic", "tso": 16}}))
        assert all(s.tso == 1 for s in net.senders)
    net = Network(Scenario.from_dict({"rate": "50M", "buffer": "256KiB", "duration": "1s",
                                      "tcp": {"variant": "cubic", "tso": 16}}))
    assert all(s.tso == 16 for s in net.senders)


def test_sim_run_config_simulates_an_aggregate_service_flow_as_the_dual_queue(tmp_path):
    from hfcprov.sim.fromconfig import scenario_from_config
    from hfcprov.config import encode

    cm = tmp_path / "lld.cm"
    cm.write_bytes(encode(parse_text("Main { NetworkAccess 1;" + LLD + "}")))
    sc = scenario_from_config(str(cm), None, ["buffer=256KiB"])
    assert (sc.rate, sc.aqm) == (50e6, "lld")
    assert sc.aqm_params["coupling"] == 1.5 and sc.aqm_params["ll_rate"] == 20e6
    sc = scenario_from_config(str(cm), 2, [])  # naming the low-latency member: the same aggregate
    assert sc.aqm == "lld"


def test_a_measured_point_labelled_with_an_aqm_needs_a_file_that_asks_for_it(tmp_path):
    """The shipped tier templates render 24.40 from the point's aqm; a template that ignores
    it cannot be measured under an AQM label (the modem would run drop-tail)."""
    from hfcprov.lab.measured import PointFailed, build_config
    from hfcprov.lab.spec import parse_campaign
    from tests.support import REPO

    def campaign(template):
        return parse_campaign(f"target: {{kind: emu}}\ntemplate: {template}\n"
                              "grid: {upstream_rate: 2M, buffer: 64KiB, aqm: [none, docsis-pie, lld]}\n")

    plain, pie, lld = campaign(REPO / "templates" / "res-50x5.j2").points()
    assert build_config(campaign(REPO / "templates" / "res-50x5.j2"), plain)[1].aqm.disable is None
    flow = build_config(campaign(REPO / "templates" / "res-50x5.j2"), pie)[1]
    assert flow.aqm.disable is False and flow.aqm.algorithm == "docsis-pie"
    assert build_config(campaign(REPO / "templates" / "res-50x5.j2"), lld)[1].aqm.algorithm == "immediate"
    bare = tmp_path / "bare.j2"
    bare.write_text("Main { NetworkAccess 1; UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; "
                    "MaxRateSustained {{ upstream_rate|int }}; BufferControl { TargetBuffer {{ buffer }}; } } }\n")
    camp = campaign(bare)
    build_config(camp, camp.points()[0])
    with pytest.raises(PointFailed, match="aqm=docsis-pie"):
        build_config(camp, camp.points()[1])


def test_sim_run_config_takes_the_modems_docsis_version(tmp_path):
    import json
    import subprocess
    import sys

    cfg = tmp_path / "bare.txt"
    cfg.write_text("Main { UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 2000000; } }")
    got = {}
    for extra in ((), ("--docsis-version", "3.0"), ("--docsis-version", "3.1")):
        out = tmp_path / "result.json"  # the full result; --json prints the table's figures only
        p = subprocess.run([sys.executable, "-m", "hfcprov", "sim", "run", "--config", str(cfg), "--set", "duration=3s",
                            "--set", "warmup=1s", "--out", str(out), *extra], check=False, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        got[extra[1:]] = (json.loads(out.read_text())["extra"].get("aqm") or {}).get("aqm", "none")
    assert got == {(): "docsis-pie", ("3.0",): "none", ("3.1",): "docsis-pie"}
