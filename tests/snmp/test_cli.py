"""hfcprov snmp audit / reset / cmts-modems end to end: CLI process -> UDP -> snmpsim agent."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time

import pytest

from hfcprov.snmp import oids
from hfcprov.snmp.client import Credentials, SnmpClient, run
from tests.snmp.conftest import MACS, V3_AUTH, V3_PRIV, V3_USER


def hfcprov(*args, env=None, timeout=60):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("HFCPROV_SNMP")}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "hfcprov", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=full_env, check=False)


def by_mac(stdout: str) -> dict:
    return {r["mac"]: r for r in map(json.loads, stdout.splitlines())}


@pytest.mark.slow
def test_audit_reports_each_kind_of_modem(lab):
    inv = lab.inventory(list(MACS))
    started = time.monotonic()
    res = hfcprov("snmp", "audit", "--inventory", inv, "--configs", lab.configs, "--format", "json",
                  "--timeout", "500ms", "--retries", "1")
    elapsed = time.monotonic() - started
    assert res.returncode == 3, res.stderr  # the offline and the dead modem could not be audited
    rows = by_mac(res.stdout)
    assert {m: rows[m]["status"] for m in rows} == {
        MACS["insync"]: "in-sync", MACS["drifted"]: "drifted", MACS["wrongcfg"]: "wrong-config",
        MACS["offline"]: "offline", MACS["dead"]: "unreachable"}
    drifted = rows[MACS["drifted"]]
    assert [d["field"] for d in drifted["drifts"]] == ["buffer_target"]
    assert "target buffer 16384 asked, 65536 applied" in drifted["detail"]
    assert drifted["buffer_sizes"]["upstream flow 1"] == 65536
    assert rows[MACS["wrongcfg"]]["config_file"] == "old-tier.cm"
    assert f"expected {MACS['wrongcfg']}.cm" in rows[MACS["wrongcfg"]]["detail"]
    assert rows[MACS["offline"]]["cm_status"] == "notReady(2)"
    assert rows[MACS["insync"]]["sys_descr"] == "hfcprov sim modem insync"
    # the dead modem costs its own 2 x 0.5 s, not a stall of the run
    assert elapsed < 10
    assert "audited 5 modems" in res.stderr and "1 in-sync" in res.stderr and "1 unreachable" in res.stderr


def test_audit_all_in_sync_exits_zero_and_streams_csv(lab):
    inv = lab.inventory(["insync"])
    res = hfcprov("snmp", "audit", "--inventory", inv, "--configs", lab.configs, "--format", "csv")
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader(res.stdout.splitlines()))
    assert [(r["mac"], r["status"]) for r in rows] == [(MACS["insync"], "in-sync")]


def test_audit_table_names_the_drift(lab):
    res = hfcprov("snmp", "audit", "--inventory", lab.inventory(["drifted"]), "--configs", lab.configs)
    assert res.returncode == 4  # drift: its own status, never a usage error's (2)
    header, line = res.stdout.splitlines()
    assert header.split()[:3] == ["mac", "host", "status"]
    assert "drifted" in line and "upstream flow 1 (sfid 1): target buffer 16384 asked, 65536 applied" in line


def test_audit_v3_authpriv(lab):
    keys = lab.tmp / "v3.keys"
    keys.write_text(f"auth: {V3_AUTH}\npriv: {V3_PRIV}\n")
    inv = lab.inventory(["insync", "drifted"])
    res = hfcprov("snmp", "audit", "--inventory", inv, "--configs", lab.configs, "--format", "json",
                  "--v3-user", V3_USER, "--v3-key-file", keys, "--v3-priv-proto", "AES")
    rows = by_mac(res.stdout)
    assert rows[MACS["insync"]]["status"] == "in-sync", res.stderr
    assert rows[MACS["drifted"]]["status"] == "drifted"
    assert V3_AUTH not in res.stdout + res.stderr and V3_PRIV not in res.stdout + res.stderr


def test_audit_v3_wrong_key_is_auth_failure(lab):
    res = hfcprov("snmp", "audit", "--inventory", lab.inventory(["insync"]), "--configs", lab.configs,
                  "--format", "json", "--v3-user", V3_USER, "--timeout", "1s",
                  env={"HFCPROV_SNMP_V3_AUTH_KEY": "not-the-key", "HFCPROV_SNMP_V3_PRIV_KEY": V3_PRIV})
    assert res.returncode == 3
    row = by_mac(res.stdout)[MACS["insync"]]
    assert row["status"] == "auth-failure", row
    assert "not-the-key" not in res.stdout + res.stderr


def test_audit_missing_expected_config_is_reported_not_raised(lab, tmp_path):
    res = hfcprov("snmp", "audit", "--inventory", lab.inventory(["insync"]), "--configs", tmp_path,
                  "--format", "json")
    row = by_mac(res.stdout)[MACS["insync"]]
    assert res.returncode == 3 and row["status"] == "error"
    assert "Traceback" not in res.stderr


def test_audit_bad_inventory_is_one_line(lab, tmp_path):
    inv = tmp_path / "inv.csv"
    inv.write_text("mac,port\n001122334455,161\n")
    res = hfcprov("snmp", "audit", "--inventory", inv, "--configs", lab.configs)
    assert res.returncode == 1
    assert res.stderr.strip().count("\n") == 0 and "no 'ip' or 'host' column" in res.stderr
    assert "columns found: mac, port" in res.stderr


def test_audit_names_a_misspelt_address_column_once(lab, tmp_path):
    # issue 27: `ipaddr` instead of `ip` did not name the column
    inv = tmp_path / "inv.csv"
    inv.write_text("mac,ipaddr\n" + "".join(f"00112233440{i},127.0.0.1\n" for i in range(5)))
    res = hfcprov("snmp", "audit", "--inventory", inv, "--configs", lab.configs)
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.strip().count("\n") == 0 and "Traceback" not in res.stderr
    assert "no 'ip' or 'host' column" in res.stderr and "columns found: mac, ipaddr" in res.stderr


def test_reset_sets_docsDevResetNow(lab, tmp_path):
    community = tmp_path / "community"
    community.write_text("public\n")
    port = lab.ports["offline"]
    res = hfcprov("snmp", "reset", f"127.0.0.1:{port}", "--community-file", community)
    assert res.returncode == 0, res.stderr
    assert "reset sent" in res.stdout

    async def read():
        c = SnmpClient(Credentials(community="public"), timeout=1, retries=1)
        try:
            return await c.get("127.0.0.1", port, [oids.RESET_NOW])
        finally:
            c.close()

    assert run(read())[oids.RESET_NOW] == 1  # true(1): the agent took the SET


def test_reset_needs_a_write_community(lab):
    res = hfcprov("snmp", "reset", f"127.0.0.1:{lab.ports['insync']}")
    assert res.returncode == 1
    assert "no community" in res.stderr and "Traceback" not in res.stderr


def test_reset_wait_online(lab, tmp_path):
    community = tmp_path / "community"
    community.write_text("public\n")
    res = hfcprov("snmp", "reset", f"127.0.0.1:{lab.ports['insync']}", "--community-file", community,
                  "--wait-online", "--down-grace", "0s", "--poll-interval", "100ms")
    assert res.returncode == 0, res.stderr
    assert "back online" in res.stdout


def test_reset_wait_online_times_out_on_offline_modem(lab, tmp_path):
    community = tmp_path / "community"
    community.write_text("public\n")
    res = hfcprov("snmp", "reset", f"127.0.0.1:{lab.ports['offline']}", "--community-file", community,
                  "--wait-online", "--online-timeout", "1s", "--poll-interval", "200ms")
    assert res.returncode == 1
    assert "not back online after 1 s" in res.stderr


def test_reset_wait_online_via_cmts(lab, tmp_path):
    community = tmp_path / "community"
    community.write_text("public\n")
    res = hfcprov("snmp", "reset", f"127.0.0.1:{lab.ports['insync']}", "--community-file", community,
                  "--wait-online", "--down-grace", "0s", "--cmts", f"127.0.0.1:{lab.cmts_port}")
    # every simulated modem sits on 127.0.0.1; the CMTS's first row for that IP is operational
    assert res.returncode == 0, res.stderr


def test_cmts_modems_table_and_inventory_feed_the_audit(lab, tmp_path):
    res = hfcprov("snmp", "cmts-modems", f"127.0.0.1:{lab.cmts_port}", "--format", "json")
    assert res.returncode == 0, res.stderr
    rows = by_mac(res.stdout)
    assert set(rows) == set(MACS.values())
    assert rows[MACS["insync"]]["status"] == "operational(8)"
    assert rows[MACS["insync"]]["reg_status"] == "operational(8)"
    assert rows[MACS["offline"]]["status"] == "ranging(2)"
    assert rows[MACS["insync"]]["ip"] == "127.0.0.1"

    inv = tmp_path / "from-cmts.csv"
    res = hfcprov("snmp", "cmts-modems", f"127.0.0.1:{lab.cmts_port}", "--online-only", "--inventory-out", inv)
    assert res.returncode == 0, res.stderr
    listed = list(csv.DictReader(inv.read_text().splitlines()))
    assert MACS["offline"] not in {r["mac"] for r in listed} and len(listed) == 4
    # the audit reads that inventory (all modems answer on one port here: point it at the in-sync one)
    one = tmp_path / "one.csv"
    one.write_text("\n".join(inv.read_text().splitlines()[:1] + [ln for ln in inv.read_text().splitlines()
                                                                  if ln.startswith(MACS["insync"])]) + "\n")
    res = hfcprov("snmp", "audit", "--inventory", one, "--configs", lab.configs, "--port", lab.ports["insync"],
                  "--format", "json")
    assert res.returncode == 0, res.stdout + res.stderr


def test_cmts_unreachable_is_one_line(tmp_path):
    import socket

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    try:
        res = hfcprov("snmp", "cmts-modems", f"127.0.0.1:{port}", "--timeout", "200ms", "--retries", "0")
    finally:
        s.close()
    assert res.returncode == 1
    assert res.stderr.strip() == f"hfcprov: error: 127.0.0.1:{port}: no SNMP answer in 0.2 s x 1 tries"


VENDOR_TC_MIB = """
VENDOR-CM-TC-MIB DEFINITIONS ::= BEGIN
IMPORTS MODULE-IDENTITY, enterprises FROM SNMPv2-SMI
        TEXTUAL-CONVENTION FROM SNMPv2-TC;
vendorCmTcMib MODULE-IDENTITY
    LAST-UPDATED "202611220000Z" ORGANIZATION "v" CONTACT-INFO "v" DESCRIPTION "vendor TCs"
    ::= { enterprises 99999 }
VendorCmState ::= TEXTUAL-CONVENTION
    STATUS      current
    DESCRIPTION "vendor wording of the CM states"
    SYNTAX      INTEGER { other(1), notReadyVendorWording(2), operational(12) }
END
"""

VENDOR_DOCS_IF_MIB = """
DOCS-IF-MIB DEFINITIONS ::= BEGIN
IMPORTS OBJECT-TYPE, transmission FROM SNMPv2-SMI
        VendorCmState FROM VENDOR-CM-TC-MIB;
docsIfMib OBJECT IDENTIFIER ::= { transmission 127 }
docsIfCmStatusValue OBJECT-TYPE
    SYNTAX      VendorCmState
    MAX-ACCESS  read-only
    STATUS      current
    DESCRIPTION "vendor copy"
    ::= { docsIfCmStatusEntry 1 }
docsIfCmStatusEntry OBJECT IDENTIFIER ::= { docsIfCmStatusTable 1 }
docsIfCmStatusTable OBJECT IDENTIFIER ::= { docsIfCmObjects 2 }
docsIfCmObjects OBJECT IDENTIFIER ::= { docsIfMibObjects 2 }
docsIfMibObjects OBJECT IDENTIFIER ::= { docsIfMib 1 }
END
"""


@pytest.fixture(scope="module")
def mib_cache(tmp_path_factory):
    """One pysmi cache for this module's CLI runs (the compile costs seconds; a hit does not)."""
    return {"XDG_CACHE_HOME": str(tmp_path_factory.mktemp("xdg-cache"))}


@pytest.mark.parametrize("engine", ["v2c", "pysnmp"])
@pytest.mark.slow
def test_mib_dir_labels_come_from_the_operators_mibs(lab, tmp_path, mib_cache, engine):
    """The operator's DOCS-IF-MIB replaces the compact one and takes its labels from a TC
    in a second file: pysmi resolves the import, the audit prints the vendor's name."""
    mibs = tmp_path / "mibs"
    mibs.mkdir()
    (mibs / "DOCS-IF-MIB.txt").write_text(VENDOR_DOCS_IF_MIB)
    (mibs / "vendor-tc.my").write_text(VENDOR_TC_MIB)
    res = hfcprov("snmp", "audit", "--inventory", lab.inventory(["offline"]), "--configs", lab.configs,
                  "--format", "json", "--mib-dir", mibs,
                  env={**mib_cache, **({"HFCPROV_SNMP_ENGINE": "pysnmp"} if engine == "pysnmp" else {})})
    assert by_mac(res.stdout)[MACS["offline"]]["cm_status"] == "notReadyVendorWording(2)", res.stderr


def test_a_broken_mib_in_mib_dir_is_one_line_naming_the_file(lab, tmp_path, mib_cache):
    mibs = tmp_path / "mibs"
    mibs.mkdir()
    (mibs / "VENDOR-CM-TC-MIB.txt").write_text(VENDOR_TC_MIB.replace("SYNTAX      INTEGER {", "SYNTAX INTEGER {{"))
    res = hfcprov("snmp", "audit", "--inventory", lab.inventory(["offline"]), "--configs", lab.configs,
                  "--mib-dir", mibs, env=mib_cache)
    assert res.returncode == 1
    assert res.stdout == ""
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith(f"hfcprov: error: {mibs / 'VENDOR-CM-TC-MIB.txt'}: line 11: "), line


def test_audit_on_the_pysnmp_engine_agrees(lab):
    res = hfcprov("snmp", "audit", "--inventory", lab.inventory(["insync", "drifted", "offline"]), "--configs",
                  lab.configs, "--format", "json", env={"HFCPROV_SNMP_ENGINE": "pysnmp"})
    rows = by_mac(res.stdout)
    assert [rows[MACS[n]]["status"] for n in ("insync", "drifted", "offline")] == ["in-sync", "drifted", "offline"]
    assert "target buffer 16384 asked, 65536 applied" in rows[MACS["drifted"]]["detail"]


@pytest.mark.parametrize("engine", ["v2c", "pysnmp"])
def test_set_takes_a_type_name_or_a_pysnmp_value(lab, engine):
    from pysnmp.proto.rfc1902 import Integer32

    async def both():
        c = SnmpClient(Credentials(community="public"), timeout=1, retries=1,
                       engine="pysnmp" if engine == "pysnmp" else "auto")
        try:
            await c.set("127.0.0.1", lab.ports["wrongcfg"], oids.RESET_NOW, "Integer", 1)
            await c.set("127.0.0.1", lab.ports["wrongcfg"], oids.RESET_NOW, Integer32(1))
            return await c.get("127.0.0.1", lab.ports["wrongcfg"], [oids.RESET_NOW])
        finally:
            c.close()

    assert run(both())[oids.RESET_NOW] == 1


def test_the_audit_reads_past_flows_its_file_does_not_ask_for(lab):
    # sfids: 1 upstream (asked), 2 upstream (a voice call's, not in the file), 3 downstream (asked,
    # drifted): reading only as many flows as the file has would miss the downstream one and the extra
    from tests.snmp.conftest import EXTRA_FLOW

    res = hfcprov("snmp", "audit", "--inventory", lab.inventory(["extra"]), "--configs", lab.configs,
                  "--format", "json")
    row = by_mac(res.stdout)[EXTRA_FLOW]
    assert row["status"] == "drifted", row
    assert sorted((d["flow"], d["field"], d["expected"], d["actual"]) for d in row["drifts"]) == [
        ("downstream flow 1 (sfid 3)", "max_sustained_rate", 50_000_000.0, 40_000_000),
        ("upstream sfid 2", "flow", "not in the config file", "active on the modem")]


def test_a_flow_without_active_row_is_judged_by_its_provisioned_row(lab):
    from tests.snmp.conftest import PROV_ONLY

    res = hfcprov("snmp", "audit", "--inventory", lab.inventory(["provonly"]), "--configs", lab.configs,
                  "--format", "json")
    row = by_mac(res.stdout)[PROV_ONLY]
    assert row["status"] == "drifted", row
    assert [(d["field"], d["expected"], d["actual"]) for d in row["drifts"]] == [
        ("max_sustained_rate", 5_000_000.0, 4_000_000)]


def test_the_audit_compares_the_applied_aqm_with_the_file(lab):
    """DOCSIS 3.1 AQM columns (docsQosParamSetAqm*): a modem running another latency target, or
    running AQM where the file disables it, is drifted; the in-sync modem's AQM was compared."""
    from tests.snmp.conftest import AQM_MODEMS

    names = ["insync", "target", "off"]
    res = hfcprov("snmp", "audit", "--inventory", lab.inventory(names), "--configs", lab.configs, "--format", "json")
    assert res.returncode == 4, res.stderr
    rows = by_mac(res.stdout)
    assert rows[MACS["insync"]]["status"] == "in-sync" and rows[MACS["insync"]]["aqm_exposed"] is True
    target = rows[AQM_MODEMS["target"][0]]
    assert target["status"] == "drifted", target
    assert [(d["field"], d["expected"], d["actual"]) for d in target["drifts"]] == [("aqm_latency_target", 20, 10)]
    assert "AQM latency target (ms) 20 asked, 10 applied" in target["detail"]
    off = rows[AQM_MODEMS["off"][0]]
    assert [(d["field"], d["expected"], d["actual"]) for d in off["drifts"]] == [("aqm_disabled", 1, 2)], off
    assert "AQM disabled true(1) asked, false(2) applied" in off["detail"]


def test_a_modem_without_the_aqm_columns_is_not_exposed_not_drifted(lab):
    from tests.snmp.conftest import AQM_MODEMS

    res = hfcprov("snmp", "audit", "--inventory", lab.inventory(["d30"]), "--configs", lab.configs, "--format", "json")
    assert res.returncode == 0, res.stderr
    row = by_mac(res.stdout)[AQM_MODEMS["d30"][0]]
    assert (row["status"], row["aqm_exposed"]) == ("in-sync", False), row
    assert "AQM not exposed" in row["detail"]
