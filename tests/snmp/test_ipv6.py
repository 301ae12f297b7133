"""IPv6 modems: the CMTS's DOCS-IF3 registration table gives their address, --online-only keeps a
modem operational there only, and the audit and snmp get reach a modem (net-snmp snmpd) on ::1."""

from __future__ import annotations

import csv
import json
import socket

import pytest

from hfcprov.fileio import atomic_write
from hfcprov.snmp import agentdata
from hfcprov.snmp.simagent import SnmpSimAgent, write_endpoint_data
from hfcprov.snmp.snmpdagent import NetSnmpModem
from tests.snmp.test_cli import hfcprov
from tests.support import free_udp_port, require_tool


def _v6_free_port() -> int:
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
        s.bind(("::1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cmts(tmp_path_factory):
    data = tmp_path_factory.mktemp("cmts6")
    write_endpoint_data(data, "public", [agentdata.cmts_snmprec([
        {"mac": "00aa00000601", "ip": "10.9.0.1", "ipv6": "2001:db8::1", "status": 8},
        {"mac": "00aa00000602", "ip": None, "ipv6": "2001:db8::2", "status": 2, "reg_status": 8,
         "in_status_table": False},  # IPv6-only, in the registration table only
        {"mac": "00aa00000603", "ip": "10.9.0.3", "status": 2},  # offline in both
    ])])
    port = free_udp_port()
    with SnmpSimAgent(data, [("127.0.0.1", port)]):
        yield port


@pytest.mark.slow
def test_cmts_modems_reads_ipv6_and_the_registration_table(cmts, tmp_path):
    res = hfcprov("snmp", "cmts-modems", f"127.0.0.1:{cmts}", "--format", "json")
    assert res.returncode == 0, res.stderr
    rows = {r["mac"]: r for r in map(json.loads, res.stdout.splitlines())}
    assert (rows["00aa00000601"]["ip"], rows["00aa00000601"]["ipv6"]) == ("10.9.0.1", "2001:db8::1")
    assert (rows["00aa00000602"]["ip"], rows["00aa00000602"]["ipv6"]) == (None, "2001:db8::2")
    assert rows["00aa00000602"]["reg_status"] == "operational(8)" and rows["00aa00000603"]["ipv6"] is None
    inv = tmp_path / "online.csv"
    res = hfcprov("snmp", "cmts-modems", f"127.0.0.1:{cmts}", "--online-only", "--inventory-out", inv)
    assert res.returncode == 0, res.stderr
    listed = {r["mac"]: r for r in csv.DictReader(inv.read_text().splitlines())}
    assert set(listed) == {"00aa00000601", "00aa00000602"}  # the registration-table-only modem is online
    assert listed["00aa00000602"]["ip"] == "2001:db8::2"  # the audit reaches it over IPv6


def test_audit_and_get_over_ipv6(tmp_path):
    require_tool("snmpd", "snmpd")
    try:
        port = _v6_free_port()
    except OSError:
        pytest.skip("::1 is not configured on this machine")
    with NetSnmpModem(port, host="::1", state={"config_file": "v6only.cm", "tftp_server": "2001:db8::69"}):
        got = hfcprov("snmp", "get", f"[::1]:{port}", "docsDevServerConfigFile.0", "--timeout", "1s")
        assert got.returncode == 0, got.stderr
        assert got.stdout.strip() == 'DOCS-CABLE-DEVICE-MIB::docsDevServerConfigFile.0 = STRING: "v6only.cm"'
        inv = tmp_path / "inv.csv"
        atomic_write(inv, f"mac,ip,port,config\n00aa00000602,::1,{port},v6only.cm\n")
        res = hfcprov("snmp", "audit", "--inventory", inv, "--format", "json", "--timeout", "1s")
    (row,) = map(json.loads, res.stdout.splitlines())
    assert (row["host"], row["config_file"], row["tftp_server"]) == ("::1", "v6only.cm", "2001:db8::69"), row
    assert row["status"] != "unreachable"
