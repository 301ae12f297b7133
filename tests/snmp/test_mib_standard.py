"""``hfcprov.mib.load_mib_dirs``: the standard modules (pysnmp-mibs, pysmi-compiled) and --mib-dir folders.

Run in a child process: the name index is process-wide and other tests pin the compact mibs/ view.
"""

from __future__ import annotations

import json
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
