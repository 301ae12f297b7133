"""A `kind: modem` campaign, SNMPv3 only, every role in its own namespace, against the emulated modem
booting as a cable modem (root).

The emulated plant: the modem boots through Kea (reservations from the lab's inventory, relayed by the
emulated CMTS), Time of Day, TFTP of the file DHCP names, and the CMTS's registration check with the
campaign's shared secret. Its agents (modem and CMTS) answer SNMPv3 and refuse the v2c community a
careless campaign would use. The campaign runs as on a lab host: SNMP from the headend side (the srv
namespace), the probe from the home side (the cpe namespace), its own TFTP server in the CMTS's
namespace. Each of 2 points x 3 repetitions is published, reset, proven back on the file (sysUpTime
restarted, the CMTS saw it re-register, operational, the published name from that server, the point's
flow) and probed."""

from __future__ import annotations

import os
import secrets

import pytest

from hfcprov.lab.runner import results_of, run_campaign
from hfcprov.lab.spec import load_campaign
from hfcprov.lab.store import Store
from tests.lab.conftest import write
from tests.support import REPO, require_root, require_tool

pytestmark = [pytest.mark.root, pytest.mark.slow]
MAC = "00:10:95:00:00:e1"
USER, AUTH, PRIV = "labuser", "emulated-auth-1", "emulated-priv-1"


@pytest.fixture
def plant(tmp_path, monkeypatch):
    require_root("network namespaces, tc and raw-socket probes")
    require_tool("tc", "iproute2")
    require_tool("kea-dhcp4", "kea-dhcp4-server")
    from hfcprov.emu import netns, topology
    from hfcprov.emu.headend import Headend, SnmpKeys, wait_cmts_agent
    from hfcprov.lab.roles import Publisher
    from hfcprov.lab.spec import TftpPublish
    from hfcprov.probe.responder import Responder

    monkeypatch.setenv("LAB_CMTS_SECRET", "campaign shared secret")
    (tmp_path / "cmts.key").write_text("campaign shared secret\n")
    root = tmp_path / "tftp"
    root.mkdir()
    # a first file for the first boot, built by hand: each point publishes its own
    from hfcprov.config import encode
    from hfcprov.tiers import render_tree

    first = encode(render_tree(str(REPO / "templates" / "res-50x5.j2"), {"us_rate": 1e6, "us_buffer": 16384}),
                   secret=b"campaign shared secret")
    (root / "0010950000e1.cm").write_bytes(first)
    prefix = f"hfemu-c{os.urandom(2).hex()}"
    lab = topology.up(prefix=prefix, docsis_version="3.0")
    responder = None
    try:
        # the campaign's own TFTP server runs in the CMTS's namespace; the same one serves the first boot
        tftp = Publisher(TftpPublish(root=str(root), host=lab.addr_v4("cmts_rf"), namespace=lab.ns("cmts")))
        tftp.serve()
        keys = SnmpKeys(community=secrets.token_hex(8), v3_user=USER, v3_auth_key=AUTH, v3_priv_key=PRIV)
        try:
            applied = lab.boot(root, timeout=240, headend=Headend(
                mac=MAC, secret_file=str(tmp_path / "cmts.key"), tftp=lab.addr_v4("cmts_rf"), serve_tftp=False,
                modem_snmp=keys))
        finally:
            tftp.stop()
        assert applied["status"] == "operational", applied.get("reason")
        wait_cmts_agent(lab, timeout=120)
        with netns.entered(lab.ns("srv")):
            responder = Responder(lab.addr_v4("srv"), 5201).start()
        yield lab, root
    finally:
        if responder is not None:
            responder.stop()
        lab.down()
        topology.down_all(prefix)


@pytest.mark.timeout(900)
def test_snmpv3_campaign_in_separate_namespaces_proves_and_measures_every_point(plant, tmp_path):
    lab, root = plant
    keys = tmp_path / "lab.v3"
    keys.write_text(f"auth: {AUTH}\npriv: {PRIV}\n")
    os.chmod(keys, 0o600)
    spec = write(tmp_path, f"""
        name: emulated-modem-v3
        target:
          kind: modem
          modems: [{{mac: "{MAC}"}}]               # its address: from the CMTS's table
          cmts: {lab.addr_v4("cmts_net")}
          snmp: {{version: 3, user: {USER}, auth_protocol: SHA, priv_protocol: AES, key_file: lab.v3,
                  namespace: {lab.ns("srv")}, timeout: 2s, retries: 2}}
          tftp: {{root: {root}, host: {lab.addr_v4("cmts_rf")}, namespace: {lab.ns("cmts")},
                  server: {lab.addr_v4("cmts_rf")}}}
          probe: {{server: {lab.addr_v4("srv")}, port: 5201, namespace: {lab.ns("cpe")}}}
          online_timeout: 150s
          poll_interval: 1s
          secret: env:LAB_CMTS_SECRET
        template: {REPO / 'templates' / 'res-50x5.j2'}
        grid: {{upstream_rate: 2M, buffer: [16KiB, 64KiB], rtt: 0, congestion_control: reno}}
        repetitions: 3
        traffic: {{duration: 3s, warmup: 1s, probe_interval: 50ms}}
        simulate: false
    """)
    camp = load_campaign(spec)
    events = []
    with Store(tmp_path / "lab.db") as store:
        summary = run_campaign(camp, store, on_event=lambda kind, point, detail: events.append((kind, point.key)))
        res = results_of(store)
        env = store.environment()
    print(f"\npre-flight: {env['preflight']}")
    for idx in sorted(res):
        r = res[idx]["modem"]
        print(f"point {idx}: buffer {r.extra['applied_target_buffer']} B, rate {r.extra['applied_rate']} b/s, "
              f"proof {r.extra['proof']}, goodput {r.goodput_bps / 1e6:.3f} Mb/s, "
              f"loaded RTT p50 {r.latency_loaded.p50 * 1e3:.1f} ms")
    assert (summary.done, summary.failed) == (6, 0), summary.errors
    assert [k for k, _ in events].count("done") == 6
    # each role from its place; the modem's address came from the CMTS; SNMPv3 throughout
    assert env["snmp_place"] == f"SNMPv3 user {USER} (SHA/AES) to {lab.addr_v4('cm_rf')}:161 (namespace {lab.ns('srv')})"
    assert env["probe_place"].endswith(f"(namespace {lab.ns('cpe')})")
    assert f"in namespace {lab.ns('cmts')}" in env["tftp_place"] and env["tftp_place"].endswith("as 0010950000e1.cm")
    assert "cmts: ok: lists 0010950000e1 operational(8) at 10.10.2.2" in env["preflight"]
    for idx, r in ((i, res[i]["modem"]) for i in res):
        point_buffer = 16384 if idx < 3 else 65536
        assert (r.extra["applied_rate"], r.extra["applied_target_buffer"]) == (2_000_000, point_buffer)
        proof = r.extra["proof"]
        assert proof["file"] == "0010950000e1.cm" and proof["tftp_server"] == lab.addr_v4("cmts_rf")
        assert proof["uptime_s"] <= proof["at_s"] + 1 and proof["cmts"] == "operational(8)"
        assert 0.6 < r.utilization < 1.05
    # the queue really changed between the points: 64 KiB at 2 Mb/s holds ~260 ms, 16 KiB ~65 ms
    small = sorted(res[i]["modem"].latency_loaded.p50 for i in range(3))[1]
    big = sorted(res[i]["modem"].latency_loaded.p50 for i in range(3, 6))[1]
    assert big > 2.5 * small
    # the modem rebooted for every point: 1 boot + 6 resets, each registered by the CMTS
    from hfcprov.emu.headend import cmts_state

    row = cmts_state(lab)["modems"][0]
    assert row["registrations"] == 7 and row["refusals"] == 0
    assert (lab.applied() or {})["boots"] == 7
