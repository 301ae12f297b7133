"""A real-modem campaign proves each point before it measures it, against real agents on loopback.

The modems here are snmpsim agents (SNMPv3, as a plant that allows only v3) beside an emulated CMTS's
table; hfcprov's TFTP root is a folder. An agent that keeps its old values and never reboots, that
says it is down and names another file, has every point failed with what was seen, even when its
rate and buffer are the point's. A campaign checks its secrets, its TFTP root, the modem, the CMTS
and the probe responder before the first point, and stops after N points whose modem never answers.
The successful path (a modem that really reboots onto the file) is tests/lab/test_boot_campaign.py."""

from __future__ import annotations

import os

import pytest

from hfcprov.lab.runner import run_campaign
from hfcprov.lab.spec import load_campaign
from hfcprov.lab.store import Store
from hfcprov.model import BufferControl, ServiceFlow
from tests.lab.conftest import write
from tests.support import REPO, free_udp_port

MAC = "00:11:22:33:44:55"
USER, AUTH, PRIV = "labuser", "lab-auth-key-1", "lab-priv-key-1"


def agent(tmp_path, stale_flow, uptime_s=3600, status=1, file="old.cm", cmts_status=8):
    """One snmpsim process: a modem (SNMPv3) that never reboots, and a CMTS that lists it operational."""
    from hfcprov.snmp.agentdata import cmts_snmprec, modem_snmprec
    from hfcprov.snmp.simagent import SnmpSimAgent, write_endpoint_data

    data_dir = tmp_path / "snmp"
    modem = modem_snmprec([stale_flow], "Stale CM 1.0", file, status=status, uptime_ticks=uptime_s * 100,
                          tftp_server="10.0.0.1")
    cmts = cmts_snmprec([{"mac": MAC, "ip": "127.0.0.1", "status": cmts_status}])
    write_endpoint_data(data_dir, "public", [modem, cmts], v3=True)
    ports = free_udp_port(), free_udp_port()
    sim = SnmpSimAgent(data_dir, [("127.0.0.1", ports[0]), ("127.0.0.1", ports[1])], v3_user=USER,
                       v3_auth_key=AUTH, v3_priv_key=PRIV, writecache_file=tmp_path / "reset")
    return sim, ports


def campaign(tmp_path, ports, responder_port, online_timeout="3s", grid="buffer: [16KiB, 32KiB]", extra=""):
    keys = tmp_path / "lab.v3"
    keys.write_text(f"auth: {AUTH}\npriv: {PRIV}\n")
    os.chmod(keys, 0o600)
    (tmp_path / "tftp").mkdir(exist_ok=True)
    return write(tmp_path, f"""
        name: stale-modem
        target:
          kind: modem
          modems: [{{mac: "{MAC}", ip: 127.0.0.1}}]
          snmp: {{version: 3, user: {USER}, auth_protocol: SHA, priv_protocol: AES, key_file: lab.v3,
                  port: {ports[0]}, timeout: 1s, retries: 1}}
          cmts: {{address: 127.0.0.1, snmp: {{port: {ports[1]}}}}}
          tftp: {{root: tftp, server: 127.0.0.1}}
          probe: {{server: 127.0.0.1, port: {responder_port}}}
          online_timeout: {online_timeout}
          poll_interval: 500ms
          {extra}
        template: {REPO / 'templates' / 'res-50x5.j2'}
        grid: {{upstream_rate: 2M, {grid}, rtt: 0}}
        traffic: {{duration: 2s, warmup: 1s, probe_interval: 50ms}}
        simulate: false
    """)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_an_agent_that_never_reboots_fails_every_point_with_what_it_showed(tmp_path):
    from hfcprov.probe.responder import Responder

    # it already shows the first point's rate and TargetBuffer: only the proof can tell
    flow = ServiceFlow(direction="upstream", ref=1, qos_param_set_type=7, max_sustained_rate=2e6,
                       max_traffic_burst=3044, buffer=BufferControl(target=16384))
    sim, ports = agent(tmp_path, flow)
    with sim, Responder("127.0.0.1", 0) as responder:
        camp = load_campaign(campaign(tmp_path, ports, responder.port))
        with Store(tmp_path / "m.db") as store:
            summary = run_campaign(camp, store)
            env = store.environment()
            rows = store.rows()
    assert (summary.done, summary.failed) == (0, 2), summary.errors
    assert {r["state"] for r in rows} == {"failed"}
    for reason in summary.errors.values():
        print(reason)
        assert reason.startswith("modem 001122334455 (127.0.0.1): not proven back on the new file within 3 s")
        assert "not rebooted: sysUpTime 3600 s at " in reason and "the CMTS never listed it down" in reason
        assert "docsIfCmStatusValue other(1), not operational(12)" in reason
        assert "docsDevServerConfigFile 'old.cm', not the published '001122334455.cm'" in reason
        assert "loaded from TFTP server 10.0.0.1, not 127.0.0.1" in reason
    # the pre-flight ran before the first point, each role from its place, and is kept with the results
    checks = dict(c.split(": ", 1) for c in env["preflight"].split(" | "))
    assert set(checks) == {"tftp", "cmts", "modem", "probe"} and all(v.startswith("ok: ") for v in checks.values())
    assert "Stale CM 1.0" in checks["modem"] and "operational(8)" in checks["cmts"]
    assert env["snmp_place"].startswith("SNMPv3 user labuser (SHA/AES) to 127.0.0.1")
    assert env["tftp_place"].endswith("as 001122334455.cm")
    # the files were published under the modem's name, the last point's
    assert (tmp_path / "tftp" / "001122334455.cm").stat().st_size > 0
    assert AUTH not in str(env) and PRIV not in str(env)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_the_campaign_stops_after_n_points_whose_modem_never_answers(tmp_path):
    from hfcprov.probe.responder import Responder

    flow = ServiceFlow(direction="upstream", ref=1, qos_param_set_type=7, max_sustained_rate=2e6,
                       buffer=BufferControl(target=16384))
    sim, ports = agent(tmp_path, flow)
    events = []

    def on_event(kind, point, detail):
        events.append((kind, point.index))
        if kind == "start" and point.index == 0:
            sim.stop()  # it answered the pre-flight, then went away for good

    with sim, Responder("127.0.0.1", 0) as responder:
        spec = campaign(tmp_path, ports, responder.port, online_timeout="2s",
                        grid="buffer: [16KiB, 32KiB, 64KiB, 128KiB]", extra="max_unreachable: 2")
        # the name its DHCP gives it, read from the modem at the pre-flight
        spec.write_text(spec.read_text().replace("root: tftp,", "root: tftp, filename: from-modem,"))
        camp = load_campaign(spec)
        with Store(tmp_path / "m.db") as store:
            summary = run_campaign(camp, store, on_event=on_event)
            progress = store.progress()
    assert (summary.failed, progress.pending) == (2, 2)
    assert "stopped after 2 points in a row whose modem never answered" in summary.stopped
    assert all("the reset (docsDevResetNow) failed" in r or "no SNMP answer" in r for r in summary.errors.values())
    assert [e for e in events if e[0] == "start"] == [("start", 0), ("start", 1)]
    assert (tmp_path / "tftp" / "old.cm").exists() and not (tmp_path / "tftp" / "001122334455.cm").exists()


def test_a_missing_secret_stops_the_campaign_before_its_first_point(tmp_path, monkeypatch):
    monkeypatch.delenv("LAB_CMTS_SECRET", raising=False)
    monkeypatch.delenv("LAB_AUTH", raising=False)
    spec = campaign(tmp_path, (free_udp_port(), free_udp_port()), 9, extra="secret: env:LAB_CMTS_SECRET")
    spec.write_text(spec.read_text().replace("key_file: lab.v3", "auth_key: env:LAB_AUTH"))
    camp = load_campaign(spec)
    with Store(tmp_path / "m.db") as store:
        with pytest.raises(Exception) as info:
            run_campaign(camp, store)
        progress = store.progress()
    msg = str(info.value)
    assert "pre-flight" in msg and "\n" not in msg
    assert "target.secret: environment variable LAB_CMTS_SECRET is not set" in msg
    assert "target.snmp.auth_key: environment variable LAB_AUTH is not set" in msg
    assert (progress.failed, progress.done, progress.pending) == (0, 0, 2)  # nothing measured, nothing failed


def test_an_unreachable_modem_and_responder_fail_the_pre_flight_not_every_point(tmp_path):
    spec = campaign(tmp_path, (free_udp_port(), free_udp_port()), free_udp_port(), extra="")
    spec.write_text(spec.read_text().replace("timeout: 1s, retries: 1", "timeout: 200ms, retries: 0"))
    camp = load_campaign(spec)
    with Store(tmp_path / "m.db") as store:
        with pytest.raises(Exception) as info:
            run_campaign(camp, store)
        assert store.progress().failed == 0
    msg = str(info.value)
    assert "pre-flight failed before the first point" in msg
    assert "modem: " in msg and "cmts: " in msg and "probe: probe responder 127.0.0.1" in msg
    assert "tftp" not in msg.split("pre-flight failed before the first point: ")[1].split(":")[0]


def test_dry_run_prints_the_plan_and_touches_nothing(tmp_path):
    from click.testing import CliRunner

    from hfcprov.cli.root import cli

    spec = campaign(tmp_path, (1161, 1162), 5201)
    out = CliRunner().invoke(cli, ["campaign", "run", str(spec), "--dry-run", "-d", str(tmp_path / "x.db")])
    assert out.exit_code == 0, out.output
    text = out.output
    assert "2 points on modem; dry run" in text
    assert "SNMP   SNMPv3 user labuser (SHA, AES) to 127.0.0.1:1161" in text
    assert "TFTP   into" in text and "as 001122334455.cm; the modem must load it from 127.0.0.1" in text
    assert "001122334455.cm (upstream 2 Mb/s, TargetBuffer 32 KiB)" in text
    assert "resets: 2 (one per point)" in text and "time: probe" in text
    assert "pre-flight, before the first point:" in text
    assert not (tmp_path / "x.db").exists() and not any((tmp_path / "tftp").iterdir())
