"""The service-flow rules: one queue size for sim and emu, DOCSIS defaults, AQM settings, layering."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov.config import parse_text
from hfcprov.emu.shaping import FRAME, ModemModel, plan
from hfcprov.model import (
    DEFAULT_QUEUE,
    LARGEST_QUEUE,
    AqmSettings,
    BufferControl,
    BufferRejected,
    ServiceFlow,
    aggregate_service_flows,
    modem_settings,
    service_flows,
)
from hfcprov.sim import Scenario

MODEL_DIR = Path(__file__).resolve().parents[2] / "hfcprov" / "model"


def flow(**buf):
    return ServiceFlow(direction="upstream", ref=1, max_sustained_rate=2e6, path="24[0]", buffer=BufferControl(**buf))


def test_the_issue_cases_give_one_queue_in_sim_and_emu():
    # issue 16: the simulator used target-or-maximum-or-minimum, the emulator MULPI's clamp
    for buf, expected in ((dict(minimum=16384, target=8192), 16384),
                          (dict(target=200000, maximum=100000), 100000),
                          (dict(), DEFAULT_QUEUE),
                          (dict(maximum=32768), 32768),
                          (dict(minimum=100000), 100000)):
        f = flow(**buf)
        assert f.queue_size() == expected
        assert Scenario.from_service_flow(f).buffer == expected
        assert plan(f).buffer == expected


@given(st.one_of(st.none(), st.integers(0, 4 << 20)), st.one_of(st.none(), st.integers(0, 4 << 20)),
       st.one_of(st.none(), st.integers(0, 4 << 20)))
def test_sim_and_emu_agree_on_every_buffer_control(lo, target, hi):
    f = flow(minimum=lo, target=target, maximum=hi)
    try:
        size = f.queue_size()
    except BufferRejected:
        assert (lo is not None and (lo > LARGEST_QUEUE or (hi is not None and lo > hi)))
        return
    assert (lo or 0) <= size <= min(hi if hi is not None else LARGEST_QUEUE, LARGEST_QUEUE) or size == lo
    if target is not None and (lo or 0) <= target <= min(hi if hi is not None else LARGEST_QUEUE, LARGEST_QUEUE):
        assert size == target
    assert Scenario.from_service_flow(f).buffer == size
    assert plan(f).buffer == max(size, FRAME)  # tc's one-frame floor, only below 1514 bytes


def test_modem_limits_are_parameters_of_the_rule():
    small = ModemModel(max_buffer=20000, default_buffer=10000)
    assert plan(flow(), small).buffer == 10000
    assert plan(flow(target=50000), small).buffer == 20000
    assert flow(target=50000).queue_size(default=10000, largest=20000) == 20000
    with pytest.raises(BufferRejected, match="MinimumBuffer 30000 bytes exceeds the 20000"):
        flow(minimum=30000).queue_size(largest=20000)
    with pytest.raises(BufferRejected, match="MinimumBuffer 5 > MaximumBuffer 4"):
        flow(minimum=5, maximum=4).queue_size()


def test_docsis_default_burst_reaches_sim_and_emu():
    f = flow(target=16384)
    assert f.max_traffic_burst is None and f.burst == 3044
    assert Scenario.from_service_flow(f).burst == 3044
    assert plan(f).burst == 3044
    assert Scenario.from_service_flow(ServiceFlow(direction="upstream", max_sustained_rate=1e6,
                                                  max_traffic_burst=20000)).burst == 20000


def test_aqm_encodings_with_defaults_and_cm_wide_disable():
    tree = parse_text("""Main {
      CMUpstreamAQMDisable 1; LowLatencyDisable 2;
      UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 1000000;
                      AQMEncodings { SFAQMLatencyTarget 15; AQMAlgorithm 2; ImmediateAQMMaxThreshold 2000;
                                     ImmediateAQMRangeExponent 17; } }
      DsServiceFlow { DsServiceFlowRef 2; MaxRateSustained 8000000; }
      DsServiceFlow { DsServiceFlowRef 3; MaxRateSustained 8000000; AQMEncodings { SFAQMDisable 1; } }
    }""")
    up, down, off = service_flows(tree)
    assert up.aqm.latency_target_ms == 15 and up.aqm.latency_target == 0.015
    assert up.aqm.algorithm_code == 2 and up.aqm.iaqm_max_threshold == 0.002 and up.aqm.iaqm_range == 2 ** 17 * 1e-9
    assert up.aqm.cm_disabled and not up.aqm.enabled and up.aqm.algorithm == "none"  # TLV 76 wins upstream
    assert down.aqm == AqmSettings() and down.aqm.enabled and down.aqm.algorithm == "docsis-pie"
    assert down.aqm.latency_target == 0.010 and down.aqm.iaqm_max_threshold == 0.001
    assert off.aqm.disable is True and off.aqm_disabled is True and off.aqm.algorithm == "none"
    s = modem_settings(tree)
    assert s.cm_upstream_aqm_disable is True and s.low_latency_disable == 2 and s.low_latency_disabled


def test_aggregate_service_flows_and_their_members():
    tree = parse_text("""Main {
      UpstreamAggregateServiceFlow { UpstreamServiceFlowReference 9; MaxRateSustained 50000000;
        LowLatencyAggregateSFEncodings { LowLatencyServiceFlowReference 2; AQMCouplingFactor 20;
                                         QueueProtectionEnable 1; ClassicSFSCN "classic"; } }
      UsServiceFlow { UsServiceFlowRef 1; UpstreamAggregateServiceFlowReference 9; }
      UsServiceFlow { UsServiceFlowRef 2; UpstreamAggregateServiceFlowReference 9; }
    }""")
    (asf,) = aggregate_service_flows(tree)
    assert (asf.direction, asf.ref, asf.max_sustained_rate, asf.low_latency_ref, asf.coupling_factor,
            asf.queue_protection, asf.classic_scn, asf.path) == ("upstream", 9, 5e7, 2, 20, True, "classic", "70[0]")
    assert [f.asf_ref for f in service_flows(tree)] == [9, 9]


def test_model_imports_only_config_errors_and_units():
    allowed = ("hfcprov.config", "hfcprov.errors", "hfcprov.units", "hfcprov.model")
    for path in MODEL_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                if name.startswith("hfcprov"):
                    assert name.startswith(allowed), f"{path.name} imports {name}"


def test_config_does_not_import_the_model_and_the_model_imports_alone():
    code = ("import sys, hfcprov.config; assert 'hfcprov.model' not in sys.modules; "
            "import hfcprov.model; assert not [m for m in sys.modules if m.startswith(('hfcprov.sim', "
            "'hfcprov.emu', 'hfcprov.lab', 'hfcprov.snmp', 'hfcprov.tiers'))]")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_no_service_flow_rule_is_written_outside_the_model():
    # the old second rule: "target or maximum or minimum"
    root = MODEL_DIR.parents[0]
    for path in root.rglob("*.py"):
        text = path.read_text()
        assert "buffer.target or" not in text, path
        assert "buffer.maximum or" not in text, path


# -- the AQM a modem runs on a flow: one rule for sim and emu (issue 16 / 20) ----------------
AQM_FILES = {  # upstream flow's extra TLVs -> (DOCSIS 3.1 runs AQM?, DOCSIS 3.0 runs AQM?)
    "": (True, False),  # no 24.40: D3.1's default DOCSIS-PIE; a D3.0 modem stays drop-tail
    "AQMEncodings { SFAQMLatencyTarget 20; }": (True, True),
    "AQMEncodings { SFAQMDisable 0; }": (True, True),
    "AQMEncodings { SFAQMDisable 1; }": (False, False),
}


@pytest.mark.parametrize("extra", list(AQM_FILES))
def test_upstream_aqm_follows_the_modems_docsis_version(extra):
    from hfcprov.model import upstream_aqm

    tree = parse_text("Main { UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 2000000; " + extra + " }"
                      " DsServiceFlow { DsServiceFlowRef 2; MaxRateSustained 2000000; " + extra + " } }")
    up, down = service_flows(tree)
    settings = modem_settings(tree)
    want31, want30 = AQM_FILES[extra]
    assert (upstream_aqm(up, settings) is not None) == want31  # 3.1 is the default
    assert (upstream_aqm(up, settings, docsis_version="3.1") is not None) == want31
    assert (upstream_aqm(up, settings, docsis_version="3.0") is not None) == want30
    assert upstream_aqm(down, settings) is None and upstream_aqm(down, docsis_version="3.0") is None
    if want31:
        assert upstream_aqm(up).algorithm == "docsis-pie"


def test_tlv_76_switches_upstream_aqm_off_at_every_version():
    from hfcprov.model import upstream_aqm

    tree = parse_text("Main { CMUpstreamAQMDisable 1; UsServiceFlow { UsServiceFlowRef 1; MaxRateSustained 2000000;"
                      " AQMEncodings { SFAQMLatencyTarget 20; } } }")
    (up,) = service_flows(tree)
    for version in ("3.0", "3.1"):
        assert upstream_aqm(up, modem_settings(tree), version) is None
    bare = ServiceFlow(direction="upstream", max_sustained_rate=1e6)  # TLV 76 given only as settings
    assert upstream_aqm(bare) is not None
    assert upstream_aqm(bare, modem_settings(tree)) is None


def test_an_unknown_docsis_version_is_refused():
    from hfcprov.errors import HfcprovError
    from hfcprov.model import upstream_aqm

    with pytest.raises(HfcprovError, match="3.1"):
        upstream_aqm(ServiceFlow(direction="upstream"), docsis_version="3.2")
