"""snmp reset --inventory / upgrade / get / walk / set against real agents this module starts.

net-snmp's snmpd with hfcprov's pass_persist modem backend (it reboots on a reset and runs
upgrades), one snmpd that refuses every write (read-only community), one UDP socket that
never answers, and snmpsim (the audit lab) for reads and SNMPv3.
"""

from __future__ import annotations

import itertools
import json
import socket

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
