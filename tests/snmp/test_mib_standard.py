"""``hfcprov.mib.load_mib_dirs``: the standard modules (pysnmp-mibs, pysmi-compiled) and --mib-dir folders.

Run in a child process: the name index is process-wide and other tests pin the compact mibs/ view.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("pysnmp_mibs", reason="pysnmp-mibs (the standard IETF modules, pysmi-compiled) not installed")

PROBE = r"""
import json, sys
from hfcprov import mib
before = {n: mib.resolve(n) for n in sys.argv[1:]}
added = mib.load_mib_dirs()
after = {n: mib.resolve(n) for n in sys.argv[1:]}
print(json.dumps({"before": before, "after": after, "added": added, "labels": mib.enums("ifAdminStatus"),
                  "sw": mib.enums("docsDevSwAdminStatus")}))
"""

NAMES = ["ifHCInOctets.2", "pktcMtaDevProvConfigHash.0", "docsIfDownChannelFrequency.3", "docsDevSwOperStatus.0",
         "docsIetfQosServiceFlowDirection", "sysContact.0"]


def test_standard_modules_resolve_names_the_compact_mibs_lack():
    r = subprocess.run([sys.executable, "-c", PROBE, *NAMES], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    assert got["before"]["ifHCInOctets.2"] is None  # not in hfcprov's compact IF-MIB
    assert got["after"] == {
        "ifHCInOctets.2": "1.3.6.1.2.1.31.1.1.1.6.2",
        "pktcMtaDevProvConfigHash.0": "1.3.6.1.2.1.140.1.2.11.0",
        "docsIfDownChannelFrequency.3": "1.3.6.1.2.1.10.127.1.1.1.1.2.3",
        "docsDevSwOperStatus.0": "1.3.6.1.2.1.69.1.3.4.0",
        "docsIetfQosServiceFlowDirection": "1.3.6.1.2.1.127.1.3.1.3",
        "sysContact.0": "1.3.6.1.2.1.1.4.0",
    }
    assert got["added"] > 500
    assert got["labels"] == {"1": "up", "2": "down", "3": "testing"}
    assert got["sw"]["1"] == "upgradeFromMgt"


def test_no_dirs_and_no_standard_imports_nothing():
    code = ("import sys; from hfcprov import mib; assert mib.load_mib_dirs((), standard=False) == 0; "
            "assert 'pysnmp' not in sys.modules")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.slow
def test_config_mib_dir_also_resolves_the_standard_modules(tmp_path):
    """`config encode --mib-dir` goes through load_mib_dirs: the vendor's names and the standard modules'."""
    vendor = tmp_path / "mibs"
    vendor.mkdir()
    (vendor / "ACME-CABLE-MIB").write_text(
        "ACME-CABLE-MIB DEFINITIONS ::= BEGIN\nIMPORTS enterprises, OBJECT-TYPE, Integer32 FROM SNMPv2-SMI;\n"
        "acme OBJECT IDENTIFIER ::= { enterprises 99999 }\nacmeTurbo OBJECT-TYPE\n    SYNTAX Integer32\n"
        '    MAX-ACCESS read-write\n    STATUS current\n    DESCRIPTION "Turbo mode."\n    ::= { acme 1 }\nEND\n')
    src = tmp_path / "a.cfg"
    src.write_text("Main {\n NetworkAccess 1;\n SnmpMibObject acmeTurbo.0 Integer 1;\n"
                   " SnmpMibObject ifHCInOctets.2 Integer 7;\n}\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    run = [sys.executable, "-m", "hfcprov", "config"]
    bare = subprocess.run([*run, "encode", str(src), "-o", str(tmp_path / "a.cm")], capture_output=True, text=True,
                          env=env, check=False)
    assert bare.returncode == 1 and "acmeTurbo" in bare.stderr  # neither name is in the compact mibs/
    r = subprocess.run([*run, "encode", str(src), "-o", str(tmp_path / "a.cm"), "--mib-dir", str(vendor)],
                       capture_output=True, text=True, env=env, check=False)
    assert r.returncode == 0, r.stderr
    numeric = subprocess.run([*run, "decode", str(tmp_path / "a.cm")], capture_output=True, text=True, env=env,
                             check=False).stdout
    assert "1.3.6.1.4.1.99999.1.0 Integer 1" in numeric and "1.3.6.1.2.1.31.1.1.1.6.2 Integer 7" in numeric
