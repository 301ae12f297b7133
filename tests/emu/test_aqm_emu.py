"""The emulated modem applies the AQM its config file asks for, in the userspace stage (root).

2 Mb/s upstream, 64 KiB buffer (262 ms of queue as drop-tail), 40 ms base RTT, two kernel
CUBIC uploads: with 24.40 asking for DOCSIS-PIE the RTT under load sits near base + the 10 ms
target instead of base + buffer/rate, and goodput still fills the rate. Without 24.40 the
emulated modem stays drop-tail (a DOCSIS 3.0 modem: docs/emu.md).
"""

import pytest

from hfcprov.emu import shaping
from hfcprov.emu.aqmstage import explicitly_enabled, plan_stage
from hfcprov.emu.measure import measure
from hfcprov.model import AqmSettings, BufferControl, ServiceFlow
from hfcprov.probe.run import ProbeSpec

PAYLOAD_SHARE = 1448 / 1514


def flow(aqm: AqmSettings, rate=2e6, buffer=64 * 1024):
    return ServiceFlow(direction="upstream", ref=1, max_sustained_rate=rate, buffer=BufferControl(target=buffer),
                       aqm=aqm)


def test_only_an_explicit_24_40_turns_the_stage_on():
    assert not explicitly_enabled(AqmSettings())  # nothing in the file: drop-tail (DOCSIS 3.0)
    assert explicitly_enabled(AqmSettings(disable=False))
    assert explicitly_enabled(AqmSettings(latency_target_ms=20))
    assert not explicitly_enabled(AqmSettings(disable=True))
    assert not explicitly_enabled(AqmSettings(disable=False, cm_disabled=True))  # TLV 76
    stage = plan_stage([shaping.plan(flow(AqmSettings(latency_target_ms=20)))])
    assert stage.kind == "pie" and stage.target == 0.020 and stage.rate == 2e6 and stage.buffer == 65536
    assert stage.tc_plan.rate_bps is None  # tc steers only; the stage shapes
    assert "--aqm-target" in stage.args()
    two = [shaping.plan(flow(AqmSettings(disable=False))), shaping.plan(flow(AqmSettings(disable=False)))]
    assert plan_stage(two) is None  # the stage stands for one upstream flow only


@pytest.mark.root
@pytest.mark.slow
def test_emulated_modem_holds_the_pie_target_on_kernel_tcp(lab_factory):
    lab = lab_factory(rtt=0.040)
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
    lab.apply([shaping.plan(flow(AqmSettings()))])  # the same flow without 24.40: drop-tail again
    assert "aqm" not in lab.queues["upstream"]
    r = measure(lab, ProbeSpec(target=None, flows=2, duration=3, warmup=1.5, idle=1.0, cc="cubic"))
    print(f"drop-tail: idle p50 {r.latency_idle.p50 * 1e3:.1f} ms, loaded p50 {r.latency_loaded.p50 * 1e3:.1f} ms "
          f"p99 {r.latency_loaded.p99 * 1e3:.1f} ms, goodput {r.goodput_bps / 1e6:.3f} Mb/s")
    assert r.latency_loaded.p50 - r.latency_idle.p50 > 0.15
