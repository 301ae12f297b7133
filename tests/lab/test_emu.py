"""A small campaign on the emulated modem: TFTP, SNMP (v3) reset, SNMP read-back, probe; all real (root)."""

from __future__ import annotations

import subprocess

import pytest

from hfcprov.lab.runner import results_of, run_campaign
from hfcprov.lab.spec import load_campaign
from hfcprov.lab.store import Store
from tests.lab.conftest import write
from tests.support import require_root, require_tool

# MinimumBuffer = TargetBuffer: a point asking more than the emulated modem's 1 MiB gets its flow refused.
TEMPLATE = """
Main {
    NetworkAccess 1;
    UsServiceFlow {
        UsServiceFlowRef 1;
        QosParamSetType 7;
        MaxRateSustained {{ us_rate|bps }};
        MaxTrafficBurst 3044;
        BufferControl { MinimumBuffer {{ us_buffer|bytes }}; TargetBuffer {{ us_buffer|bytes }}; }
    }
    DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 50000000; }
}
"""

SPEC = """
    name: emu-small
    target:
      kind: emu
      online_timeout: 40s
      snmp: {version: 3, user: emuuser, auth_protocol: SHA256, auth_key: env:EMU_AUTH_KEY}  # its agent: v3 only
    template: tier.j2
    grid:
      upstream_rate: 2M
      buffer: [16KiB, 2MiB, 96KiB]
      rtt: 20ms
      congestion_control: reno
      aqm: none    # drop-tail: latency under load follows the buffer (a DOCSIS 3.1 modem's PIE would hold 10 ms)
    traffic: {duration: 4s, warmup: 1s, probe_interval: 50ms}
"""


@pytest.mark.root
@pytest.mark.slow
def test_emulated_modem_campaign_goes_through_tftp_snmp_and_probe(tmp_path, monkeypatch):
    require_root("network namespaces and tc for the emulated modem")
    monkeypatch.setenv("EMU_AUTH_KEY", "emulated-auth-key")
    require_tool("tc", "iproute2")
    write(tmp_path, TEMPLATE, "tier.j2")
    camp = load_campaign(write(tmp_path, SPEC))
    with Store(tmp_path / "emu.db") as store:
        summary = run_campaign(camp, store)
        res = results_of(store)
        env = store.environment()
        rows = store.rows()
    # the 2 MiB point fails with the reason, the campaign goes on to the next point
    assert (summary.done, summary.failed) == (2, 1), summary.errors
    (reason,) = summary.errors.values()
    assert "not the point's (2000000, 2097152)" in reason
    assert {r["idx"]: r["state"] for r in rows} == {0: "done", 1: "failed", 2: "done"}
    small, big = res[0], res[2]
    assert set(small) == {"emu", "sim"}  # measured and predicted, side by side
    for r in (small, big):
        emu = r["emu"]
        assert emu.extra["applied_rate"] == 2_000_000
        assert 0.7 < emu.utilization < 1.05
        assert emu.latency_idle.p50 == pytest.approx(0.02, abs=0.01)
    assert small["emu"].extra["applied_target_buffer"] == 16384
    assert big["emu"].extra["applied_target_buffer"] == 98304
    # a 96 KiB buffer at 2 Mb/s holds ~390 ms; 16 KiB ~65 ms: latency under load follows the buffer
    assert big["emu"].latency_loaded.p50 > 3 * small["emu"].latency_loaded.p50
    assert big["emu"].latency_loaded.p50 < 0.02 + 98304 * 8 / 2e6 + 0.1
    assert env["modem_sysDescr"]
    # the namespaces the campaign built are gone
    labs = {r["emu"].extra["lab"] for r in (small, big)}
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(lab in left for lab in labs)
