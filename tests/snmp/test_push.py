"""snmp reset --inventory / upgrade / get / walk / set against real agents this module starts.

net-snmp's snmpd with hfcprov's pass_persist modem backend (it reboots on a reset and runs
upgrades), one snmpd that refuses every write (read-only community), one UDP socket that
never answers, and snmpsim (the audit lab) for reads and SNMPv3.
"""

from __future__ import annotations

import itertools
import json
import socket
from pathlib import Path

import pytest

from hfcprov.fileio import atomic_write
from hfcprov.snmp.snmpdagent import NetSnmpModem
from tests.snmp.conftest import MACS, V3_AUTH, V3_PRIV, V3_USER
from tests.snmp.test_cli import hfcprov
from tests.support import free_udp_port, require_tool

FAST = ["--timeout", "1s", "--retries", "1"]  # a busy machine delays an agent's answer by hundreds of ms


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Three writable snmpd modems, one read-only snmpd, one dead socket; an inventory of all."""
    require_tool("snmpd", "snmpd")
    tmp = tmp_path_factory.mktemp("fleet")
    modems = {}
    try:
        for n in range(3):
            modems[f"cm{n}"] = NetSnmpModem(free_udp_port(), state={
                "config_file": f"cm{n}.cm", "tftp_server": "10.1.0.1", "reboot_s": 0.6, "upgrade_s": 0.5}).start()
        modems["readonly"] = NetSnmpModem(free_udp_port(), writable=False,
                                          state={"config_file": "ro.cm"}).start()
        dead = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        dead.bind(("127.0.0.1", 0))
        ports = {name: m.port for name, m in modems.items()} | {"dead": dead.getsockname()[1]}
        macs = {name: f"00aa000000{i:02x}" for i, name in enumerate(ports)}
        rows = ["mac,ip,port"] + [f"{macs[n]},127.0.0.1,{p}" for n, p in ports.items()]
        inventory = tmp / "inventory.csv"
        atomic_write(inventory, "\n".join(rows) + "\n")
        good = tmp / "good.csv"
        atomic_write(good, "\n".join(rows[:4]) + "\n")
        community = tmp / "rw"
        atomic_write(community, "private\n", mode=0o600)
        yield {"modems": modems, "ports": ports, "macs": macs, "inventory": inventory, "good": good,
               "rw": community}
        dead.close()
    finally:
        for m in modems.values():
            m.stop()


def _rows(stdout: str) -> dict:
    return {r["mac"] or r["host"]: r for r in map(json.loads, stdout.splitlines())}


def test_reset_inventory_paced_reports_each_modem(fleet):
    res = hfcprov("snmp", "reset", "--inventory", fleet["inventory"], "--community-file", fleet["rw"],
                  "--concurrency", "2", "--per-second", "4", "--wait-online", "--poll-interval", "0.1s",
                  "--down-grace", "3s", "--online-timeout", "10s", "--format", "json", *FAST)
    assert res.returncode == 3, res.stderr  # failed rows: the read-only and the dead modem were not reset
    rows = _rows(res.stdout)
    macs = fleet["macs"]
    for n in range(3):
        r = rows[macs[f"cm{n}"]]
        assert (r["status"], r["went_down"]) == ("ok", True), r
        assert 0.5 <= r["seconds"] < 5
    assert rows[macs["readonly"]]["status"] == "refused"
    assert "noAccess" in rows[macs["readonly"]]["detail"]
    assert rows[macs["dead"]]["status"] == "unreachable"
    assert "reset 5 modems" in res.stderr and "3 ok, 1 refused, 1 unreachable" in res.stderr
    # each writable modem got exactly one reset, and the SETs went out at most 4 per second
    resets = [e for n in range(3) for e in fleet["modems"][f"cm{n}"].events() if e["event"] == "reset"]
    assert len(resets) == 3
    starts = sorted(r["started"] for r in rows.values())
    assert all(b - a >= 0.24 for a, b in itertools.pairwise(starts)), starts


def test_reset_inventory_all_reset_exits_zero_with_a_table(fleet):
    res = hfcprov("snmp", "reset", "--inventory", fleet["good"], "--community-file", fleet["rw"], *FAST)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split()[:4] == ["mac", "host", "status", "seconds"]
    assert sum(" sent " in line for line in lines) == 3
    assert "3 sent" in res.stderr


def test_reset_one_modem_that_refuses_writes_is_one_line(fleet):
    res = hfcprov("snmp", "reset", f"127.0.0.1:{fleet['ports']['readonly']}", "--community-file", fleet["rw"], *FAST)
    assert res.returncode == 1
    assert res.stderr.strip().count("\n") == 0 and "refused" in res.stderr and "Traceback" not in res.stderr


def test_upgrade_watches_each_modem_to_the_end(fleet, tmp_path):
    ports = fleet["ports"]
    ok = hfcprov("snmp", "upgrade", f"127.0.0.1:{ports['cm1']}", "--server", "10.1.0.9", "--file", "cm-fw-2.bin",
                 "--community-file", fleet["rw"], "--poll-interval", "0.1s", "--format", "json", *FAST)
    assert ok.returncode == 0, ok.stderr
    (r,) = map(json.loads, ok.stdout.splitlines())
    assert (r["status"], r["oper_status"], r["version"]) == ("ok", "completeFromMgt(3)", "cm-fw-2.bin")
    events = [e for e in fleet["modems"]["cm1"].events() if e["event"].startswith("upgrade")]
    assert events[-2:] == [{"event": "upgrade", "time": events[-2]["time"], "file": "cm-fw-2.bin",
                            "server": "10.1.0.9"},
                           {"event": "upgraded", "time": events[-1]["time"], "file": "cm-fw-2.bin"}]
    # IPv6 server address: docsDevSwServerAddressType ipv6(2) and 16 bytes
    v6 = hfcprov("snmp", "upgrade", f"127.0.0.1:{ports['cm2']}", "--server", "2001:db8::9", "--file", "fw6.bin",
                 "--community-file", fleet["rw"], "--poll-interval", "0.1s", "--format", "json", *FAST)
    assert v6.returncode == 0, v6.stderr
    assert fleet["modems"]["cm2"].events()[-2]["server"] == "2001:db8::9"
    # a file the server does not have fails; a read-only agent refuses; a dead one is unreachable
    inv = tmp_path / "inv.csv"
    atomic_write(inv, "mac,ip,port\n" + "".join(f"{fleet['macs'][n]},127.0.0.1,{ports[n]}\n"
                                                 for n in ("cm0", "readonly", "dead")))
    bad = hfcprov("snmp", "upgrade", "--inventory", inv, "--server", "10.1.0.9", "--file", "missing.bin",
                  "--community-file", fleet["rw"], "--poll-interval", "0.1s", "--format", "json", *FAST)
    assert bad.returncode == 3
    rows = _rows(bad.stdout)
    assert rows[fleet["macs"]["cm0"]]["status"] == "failed"
    assert rows[fleet["macs"]["cm0"]]["oper_status"] == "failed(4)"
    assert rows[fleet["macs"]["readonly"]]["status"] == "refused"
    assert rows[fleet["macs"]["dead"]]["status"] == "unreachable"


def test_upgrade_bad_server_fails_before_any_modem(fleet):
    res = hfcprov("snmp", "upgrade", "--inventory", fleet["good"], "--server", "tftp.example", "--file", "x.bin",
                  "--community-file", fleet["rw"], *FAST)
    assert res.returncode == 1 and "not an IPv4 or IPv6 address" in res.stderr
    assert all(e["event"] != "upgrade" or e["file"] != "x.bin" for m in fleet["modems"].values() for e in m.events())


def test_get_walk_set_by_name_on_snmpd(fleet):
    port = fleet["ports"]["cm0"]
    got = hfcprov("snmp", "get", f"127.0.0.1:{port}", "docsDevServerConfigFile.0", "docsIfCmStatusValue.2",
                  "docsDevServerConfigTftpAddress.0", "sysUpTime.0", *FAST)
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[0] == 'DOCS-CABLE-DEVICE-MIB::docsDevServerConfigFile.0 = STRING: "cm0.cm"'
    assert lines[1] == "DOCS-IF-MIB::docsIfCmStatusValue.2 = INTEGER: operational(12)"
    assert lines[2] == "DOCS-CABLE-DEVICE-MIB::docsDevServerConfigTftpAddress.0 = Hex-STRING: 0A 01 00 01 (10.1.0.1)"
    assert lines[3].startswith("SNMPv2-MIB::sysUpTime.0 = Timeticks: (")
    s = hfcprov("snmp", "set", f"127.0.0.1:{port}", "docsDevSwFilename.0", "s", "next.bin",
                "docsDevSwAdminStatus.0", "i", "allowProvisioningUpgrade", "--community-file", fleet["rw"], *FAST)
    assert s.returncode == 0, s.stderr
    assert s.stdout.splitlines() == ['DOCS-CABLE-DEVICE-MIB::docsDevSwFilename.0 = STRING: "next.bin"',
                                     ("DOCS-CABLE-DEVICE-MIB::docsDevSwAdminStatus.0 = INTEGER: "
                                      "allowProvisioningUpgrade(2)")]
    walked = hfcprov("snmp", "walk", f"127.0.0.1:{port}", "docsDevSoftware", "--json", *FAST)
    assert walked.returncode == 0, walked.stderr
    objs = {o["name"]: o for o in map(json.loads, walked.stdout.splitlines())}
    assert objs["docsDevSwFilename.0"]["value"] == "next.bin"
    assert objs["docsDevSwAdminStatus.0"]["label"] == "allowProvisioningUpgrade"
    assert "6 objects under docsDevSoftware" in walked.stderr
    # a name only the standard modules define (pysnmp-mibs' IF-MIB), served by snmpd's own ifXTable
    if_mib = hfcprov("snmp", "get", f"127.0.0.1:{port}", "ifHCInOctets.1", "ifName.1", *FAST)
    assert if_mib.returncode == 0, if_mib.stderr
    assert if_mib.stdout.startswith("IF-MIB::ifHCInOctets.1 = Counter64: ")
    assert 'IF-MIB::ifName.1 = STRING: "lo"' in if_mib.stdout
    missing = hfcprov("snmp", "get", f"127.0.0.1:{port}", "docsDevServerConfigFile.7", *FAST)
    assert missing.returncode == 3  # a failed row, not bad usage
    assert "No Such Instance currently exists at this OID" in missing.stdout


@pytest.mark.parametrize("args,expected", [
    (["set", "{ro}", "docsDevSwFilename.0", "s", "x.bin"], "noAccess"),
    (["set", "{cm}", "docsDevSwFilename.0", "q", "x.bin"], "unknown type 'q'"),
    (["set", "{cm}", "docsDevSwAdminStatus.0", "i", "upgradeNow"], "upgradeFromMgt(1)"),
    (["set", "{cm}", "noSuchThing.0", "i", "1"], "unknown MIB name 'noSuchThing.0'"),
    (["get", "{dead}", "sysDescr.0"], "no SNMP answer in 1 s x 2 tries"),
])
def test_get_set_failures_are_one_line(fleet, args, expected):
    ports = fleet["ports"]
    where = {"{ro}": f"127.0.0.1:{ports['readonly']}", "{cm}": f"127.0.0.1:{ports['cm0']}",
             "{dead}": f"127.0.0.1:{ports['dead']}"}
    res = hfcprov("snmp", *[where.get(a, a) for a in args], "--community-file", fleet["rw"], *FAST)
    assert res.returncode == 1, res.stdout
    assert expected in res.stderr and res.stderr.strip().count("\n") == 0 and "Traceback" not in res.stderr


def test_get_and_walk_v3_on_snmpsim(lab, tmp_path):
    keys = tmp_path / "keys"
    atomic_write(keys, f"auth: {V3_AUTH}\npriv: {V3_PRIV}\n", mode=0o600)
    port = lab.ports["insync"]
    res = hfcprov("snmp", "get", f"127.0.0.1:{port}", "docsDevServerConfigFile.0", "--v3-user", V3_USER,
                  "--v3-key-file", keys)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f'DOCS-CABLE-DEVICE-MIB::docsDevServerConfigFile.0 = STRING: "{MACS["insync"]}.cm"'
    walked = hfcprov("snmp", "walk", f"127.0.0.1:{port}", "docsQosServiceFlowDirection", "--v3-user", V3_USER,
                     "--v3-key-file", keys)
    assert walked.returncode == 0, walked.stderr
    assert [line.split(" = ")[1] for line in walked.stdout.splitlines()] == ["INTEGER: upstream(2)",
                                                                            "INTEGER: downstream(1)"]
    v2 = hfcprov("snmp", "walk", f"127.0.0.1:{port}", "docsQosServiceFlowDirection")
    assert v2.stdout == walked.stdout  # the lean v2c engine prints the same


def test_audit_reports_boot_state_and_tftp_server(lab, fleet, tmp_path):
    """snmpsim modem (IPv4 TFTP server) and an snmpd modem that fetched its file over IPv6."""
    res = hfcprov("snmp", "audit", "--inventory", lab.inventory(["insync"]), "--configs", lab.configs,
                  "--format", "json")
    (row,) = map(json.loads, res.stdout.splitlines())
    assert (row["boot_state"], row["tftp_server"]) == ("operational(1)", "10.0.0.1"), row
    with NetSnmpModem(free_udp_port(), state={"config_file": "v6.cm", "tftp_server": "2001:db8::69"}) as m:
        inv = tmp_path / "v6.csv"
        atomic_write(inv, f"mac,ip,port,config\n00aa00000099,127.0.0.1,{m.port},v6.cm\n")
        res = hfcprov("snmp", "audit", "--inventory", inv, "--format", "json", *FAST)
    (row,) = map(json.loads, res.stdout.splitlines())
    assert (row["config_file"], row["boot_state"], row["tftp_server"]) == ("v6.cm", "operational(1)",
                                                                          "2001:db8::69"), row


# -- push gaps of issue 29: docsDevSwServer for RFC 2669 modems, a node watched from its CMTS -------------
@pytest.fixture(scope="module")
def legacy_modem():
    require_tool("snmpd", "snmpd")
    m = NetSnmpModem(free_udp_port(), state={"config_file": "old.cm", "legacy": True, "upgrade_s": 0.3,
                                             "reboot_s": 0.3}).start()
    yield m
    m.stop()


def test_upgrade_falls_back_to_docsdevswserver_on_an_rfc2669_modem(fleet, legacy_modem):
    res = hfcprov("snmp", "upgrade", f"127.0.0.1:{legacy_modem.port}", "--server", "10.1.0.9", "--file", "fw-20.bin",
                  "--community-file", fleet["rw"], "--poll-interval", "0.1s", "--format", "json", *FAST)
    assert res.returncode == 0, res.stderr
    (r,) = map(json.loads, res.stdout.splitlines())
    assert (r["status"], r["legacy"], r["version"]) == ("ok", True, "fw-20.bin")
    assert "docsDevSwServer" in r["detail"]
    assert legacy_modem.events()[-2] == {"event": "upgrade", "time": legacy_modem.events()[-2]["time"],
                                         "file": "fw-20.bin", "server": "10.1.0.9"}


def test_upgrade_legacy_is_asked_for_and_takes_ipv4_only(fleet, legacy_modem):
    res = hfcprov("snmp", "upgrade", f"127.0.0.1:{legacy_modem.port}", "--server", "10.1.0.7", "--file", "fw-21.bin",
                  "--legacy", "--community-file", fleet["rw"], "--poll-interval", "0.1s", "--format", "json", *FAST)
    assert res.returncode == 0, res.stderr
    assert legacy_modem.events()[-2]["server"] == "10.1.0.7"
    v6 = hfcprov("snmp", "upgrade", f"127.0.0.1:{legacy_modem.port}", "--server", "2001:db8::9", "--file", "x.bin",
                 "--legacy", "--community-file", fleet["rw"], *FAST)
    assert v6.returncode == 1 and "IPv4 address only" in v6.stderr
    # a modem of RFC 4639 takes the address-type pair: the fallback is never needed there
    ok = hfcprov("snmp", "upgrade", f"127.0.0.1:{fleet['ports']['cm0']}", "--server", "10.1.0.9", "--file",
                 "fw-3.bin", "--community-file", fleet["rw"], "--poll-interval", "0.1s", "--format", "json", *FAST)
    assert json.loads(ok.stdout)["legacy"] is None


def test_reset_inventory_watched_from_the_cmts(fleet, tmp_path):
    """The modems' own status stays operational (their SNMP would say nothing changed); the CMTS sees
    them re-register: watched from the CMTS, every modem is seen down and back."""
    require_tool("snmpd", "snmpd")
    modems = [NetSnmpModem(free_udp_port(), host=f"127.0.0.{i + 1}", state={
        "config_file": f"w{i}.cm", "reboot_s": 1.0, "override": {"1.3.6.1.2.1.10.127.1.2.2.1.1.2": ["integer", "12"]}},
    ).start() for i in range(3)]
    try:
        cmts = NetSnmpModem(free_udp_port(), state={"role": "cmts", "modems": [
            {"mac": f"00bb000000{i:02x}", "ip": f"127.0.0.{i + 1}", "reboot_s": 1.0,
             "events": str(Path(m._tmp.name) / "events.jsonl")} for i, m in enumerate(modems)]}).start()
        try:
            inv = tmp_path / "inv.csv"
            atomic_write(inv, "mac,ip,port\n" + "".join(f"00bb000000{i:02x},127.0.0.{i + 1},{m.port}\n"
                                                         for i, m in enumerate(modems)))
            res = hfcprov("snmp", "reset", "--inventory", inv, "--cmts", f"127.0.0.1:{cmts.port}", "--wait-online",
                          "--poll-interval", "0.2s", "--down-grace", "5s", "--online-timeout", "20s",
                          "--community-file", fleet["rw"], "--format", "json", *FAST)
        finally:
            cmts.stop()
    finally:
        for m in modems:
            m.stop()
    assert res.returncode == 0, res.stderr
    rows = list(map(json.loads, res.stdout.splitlines()))
    assert [(r["status"], r["went_down"]) for r in rows] == [("ok", True)] * 3, rows
    assert all(r["seconds"] < 5 for r in rows)  # back when the CMTS said so, not after the down grace


class _LateAgent:
    """A v2c agent on a real UDP socket that acts on a request's first copy and answers it late (as a modem
    busy rebooting does): it waits ``hold`` seconds for another copy, counting every one, then answers."""

    def __init__(self, hold: float):
        import threading

        self.hold, self.copies = hold, 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        import time

        from hfcprov.config.ber import read_tlv, tlv

        self.sock.settimeout(60)
        first, peer = self.sock.recvfrom(4096)
        self.copies = 1
        deadline = time.monotonic() + self.hold
        while (left := deadline - time.monotonic()) > 0:  # another copy within hold, or none
            self.sock.settimeout(left)
            try:
                self.sock.recvfrom(4096)
                self.copies += 1
            except TimeoutError:
                break
        _, msg, _ = read_tlv(first, 0)  # the answer: the same message as a GetResponse (0xa2)
        _, _, pos = read_tlv(msg, 0)
        _, _, pos = read_tlv(msg, pos)
        _, pdu, _ = read_tlv(msg, pos)
        self.sock.sendto(tlv(0x30, msg[:pos] + tlv(0xA2, pdu)), peer)

    def close(self):
        self.thread.join(timeout=30)
        self.sock.close()


@pytest.mark.parametrize("engine", ["hfcprov", "pysnmp"])
def test_reset_is_sent_once_to_a_modem_that_answers_late(engine):
    """A reset acts: an agent that answers after the client's timeout has reset already, and a resent SET
    would reset it again (seen as 4 resets for 3 modems on a busy machine). The one copy is awaited as long
    as every try would have been."""
    from hfcprov.snmp.client import SnmpClient, run
    from hfcprov.snmp.credentials import Credentials
    from hfcprov.snmp.push import SENT, PushTarget, reset_one

    agent = _LateAgent(hold=1.5)  # the 1 s timeout's resend would come at 1 s: inside the hold

    async def reset():
        client = SnmpClient(Credentials(version="2c", community="private"), timeout=1.0, retries=1, engine=engine)
        try:
            return await reset_one(client, PushTarget("127.0.0.1", agent.port))
        finally:
            client.close()

    try:
        result = run(reset())
    finally:
        agent.close()
    assert agent.copies == 1
    assert result.status == SENT, result
