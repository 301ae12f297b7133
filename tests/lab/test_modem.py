"""The real-modem backend against real parts on loopback: hfcprov's TFTP server publishes the
config, an snmpsim agent plays the modem (reset accepted, applied flow read back), the probe
measures against a responder. A modem that applied something else fails its point by name."""

from __future__ import annotations

import pytest

from hfcprov.model import BufferControl, ServiceFlow
from hfcprov.lab.runner import results_of, run_campaign
from hfcprov.lab.spec import load_campaign
from hfcprov.lab.store import Store
from tests.lab.conftest import write
from tests.support import REPO, free_udp_port, require_root

MAC = "00:11:22:33:44:55"


@pytest.mark.root
@pytest.mark.timeout(180)
def test_modem_backend_publishes_resets_confirms_and_probes(tmp_path, monkeypatch):
    require_root("raw-socket (ICMP) probes with kernel timestamps")
    from hfcprov.config import read_config
    from hfcprov.model import service_flows
    from hfcprov.probe.responder import Responder
    from hfcprov.snmp.agentdata import modem_snmprec
    from hfcprov.snmp.simagent import SnmpSimAgent, write_endpoint_data

    applied = ServiceFlow(direction="upstream", ref=1, qos_param_set_type=7, max_sustained_rate=2e6,
                          max_traffic_burst=20480, buffer=BufferControl(target=16384))
    data_dir = tmp_path / "snmp"
    write_endpoint_data(data_dir, "labwrite", [modem_snmprec([applied], "Lab CM 1.0", "001122334455.cm",
                                                             counters={0: {"packets": 5, "octets": 500}})])
    snmp_port = free_udp_port()
    tftp_root = tmp_path / "tftp"
    tftp_root.mkdir()
    monkeypatch.setenv("LAB_TEST_WRITE", "labwrite")
    spec = write(tmp_path, f"""
        name: modem-loopback
        target:
          kind: modem
          modems: [{{mac: "{MAC}", ip: 127.0.0.1}}]
          snmp: {{community: labread, write_community: env:LAB_TEST_WRITE, port: {snmp_port}, timeout: 1s,
                  retries: 0}}
          tftp: {{root: {tftp_root}, host: 127.0.0.1, port: {free_udp_port()}}}
          probe: {{server: 127.0.0.1, port: PORT}}
          online_timeout: 4s
        template: {REPO / 'templates' / 'res-50x5.j2'}
        grid: {{upstream_rate: 2M, buffer: [16KiB, 32KiB], rtt: 0}}
        traffic: {{duration: 2s, warmup: 1s, probe_interval: 50ms}}
        simulate: false
    """)
    with SnmpSimAgent(data_dir, [("127.0.0.1", snmp_port)], writecache_file=tmp_path / "reset"), \
            Responder("127.0.0.1", 0) as responder:
        spec.write_text(spec.read_text().replace("PORT", str(responder.port)))
        camp = load_campaign(spec)
        assert "labwrite" not in str(camp.to_record()) and "labread" not in str(camp.to_record())
        with Store(tmp_path / "m.db") as store:
            summary = run_campaign(camp, store)
            res = results_of(store)
            env = store.environment()
    assert (summary.done, summary.failed) == (1, 1), summary.errors
    # the 32 KiB point: the modem still runs 16 KiB, so the point fails with what it saw
    (reason,) = summary.errors.values()
    assert "127.0.0.1: the modem's active upstream flows" in reason and "(2000000, 32768)" in reason
    r = res[0]["modem"]
    assert r.extra["applied_target_buffer"] == 16384 and r.extra["sys_descr"] == "Lab CM 1.0"
    assert r.goodput_bps > 0 and r.latency_loaded.count > 0
    # the modem's per-flow counters, stored before and after the point (issue 29: kind: modem campaigns)
    counters = r.extra["flow_counters"]
    assert counters["before"]["flows"][0]["packets"] == 5 and counters["after"]["flows"][0]["octets"] == 500
    assert counters["delta"][0]["packets"] == 0 and counters["delta"][0]["direction"] == "upstream"
    assert env["modem_sysDescr"] == "Lab CM 1.0"
    # the last published file is the 32 KiB point's config, decodable, under the modem's name
    (flow,) = [f for f in service_flows(read_config(tftp_root / "001122334455.cm")) if f.direction == "upstream"]
    assert (flow.max_sustained_rate, flow.target_buffer) == (2e6, 32768)
