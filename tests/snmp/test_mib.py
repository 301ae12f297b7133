"""hfcprov.mib: the name <-> OID index built from mibs/ (no pysnmp)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov import mib

# OIDs stated in issue 5 and RFC 4639 / RFC 4546 / DOCS-QOS3-MIB
KNOWN = {
    "sysDescr.0": "1.3.6.1.2.1.1.1.0",
    "docsDevServerConfigFile.0": "1.3.6.1.2.1.69.1.4.5.0",
    "docsDevResetNow.0": "1.3.6.1.2.1.69.1.1.3.0",
    "docsDevNmAccessStatus.1": "1.3.6.1.2.1.69.1.2.1.7.1",
    "docsDevNmAccessCommunity.3": "1.3.6.1.2.1.69.1.2.1.4.3",
    "docsIfCmStatusValue.2": "1.3.6.1.2.1.10.127.1.2.2.1.1.2",
    "docsIfCmtsCmStatusTable": "1.3.6.1.2.1.10.127.1.3.3",
    "docsIfCmtsCmStatusMacAddress": "1.3.6.1.2.1.10.127.1.3.3.1.2",
    "docsIfCmtsCmStatusIpAddress": "1.3.6.1.2.1.10.127.1.3.3.1.3",
    "docsIfCmtsCmStatusValue": "1.3.6.1.2.1.10.127.1.3.3.1.9",
    "docsIf3CmtsCmRegStatusEntry": "1.3.6.1.4.1.4491.2.1.20.1.3.1",
    "docsQosParamSetEntry": "1.3.6.1.4.1.4491.2.1.21.1.2.1",
    "docsQosParamSetMaxTrafficRate": "1.3.6.1.4.1.4491.2.1.21.1.2.1.6",
    "docsQosParamSetMaxTrafficBurst": "1.3.6.1.4.1.4491.2.1.21.1.2.1.7",
    "docsQosParamSetMinReservedRate": "1.3.6.1.4.1.4491.2.1.21.1.2.1.8",
    "docsQosParamSetMinimumBuffer": "1.3.6.1.4.1.4491.2.1.21.1.2.1.39",
    "docsQosParamSetTargetBuffer": "1.3.6.1.4.1.4491.2.1.21.1.2.1.40",
    "docsQosParamSetMaximumBuffer": "1.3.6.1.4.1.4491.2.1.21.1.2.1.41",
    "docsQosServiceFlowBufferSize": "1.3.6.1.4.1.4491.2.1.21.1.3.1.17",
}


@pytest.mark.parametrize("name,oid", sorted(KNOWN.items()))
def test_resolve_and_name_of(name, oid):
    assert mib.resolve(name) == oid
    assert mib.name_of(oid) == name


def test_module_prefix_and_numeric_pass_through():
    assert mib.resolve("DOCS-CABLE-DEVICE-MIB::docsDevResetNow.0") == "1.3.6.1.2.1.69.1.1.3.0"
    assert mib.resolve(".1.3.6.1.2.1.1.1.0") == "1.3.6.1.2.1.1.1.0"


def test_unknown_names_and_oids():
    assert mib.resolve("noSuchObject.0") is None
    assert mib.resolve("docsDevResetNow.x") is None
    assert mib.name_of("1.2.840.113549") is None


def test_enum_labels():
    assert mib.enum_label("docsIfCmtsCmStatusValue", 8) == "operational"
    assert mib.enum_label("docsIfCmStatusValue", 12) == "operational"
    assert mib.enum_label("1.3.6.1.2.1.10.127.1.2.2.1.1.2", 2) == "notReady"  # by instance OID
    assert mib.enum_label("docsDevResetNow", 1) == "true"  # TruthValue
    assert mib.enum_label("docsDevNmAccessStatus", 4) == "createAndGo"  # RowStatus
    assert mib.enum_label("docsQosParamSetType", 3) == "provisioned"
    assert mib.enum_label("docsQosParamSetTargetBuffer", 1) is None


def test_import_is_cheap_and_pysnmp_free():
    code = "import sys, hfcprov.mib as m; m.resolve('sysDescr.0'); print('pysnmp' in sys.modules, 'pysmi' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


NAMES = sorted(n for n, o in mib.index().by_name.items() if o.oid.count(".") >= 6)


@given(st.sampled_from(NAMES), st.lists(st.integers(0, 2**32 - 1), max_size=4))
def test_name_oid_round_trip(name, index):
    suffix = "".join(f".{i}" for i in index)
    oid = mib.resolve(name + suffix)
    back = mib.name_of(oid)
    # a deeper defined node may claim the OID (e.g. column under an entry); it must still resolve back
    assert mib.resolve(back) == oid
    if not index:
        assert back == name


def test_parser_reads_definitions_in_any_order():
    idx = mib.MibIndex()
    idx.load_texts([("t", """
T-MIB DEFINITIONS ::= BEGIN
IMPORTS mib-2 FROM SNMPv2-SMI;
Mode ::= TEXTUAL-CONVENTION
    STATUS current
    DESCRIPTION "a -- not a comment"
    SYNTAX INTEGER { on(1), off(2) }
leaf OBJECT-TYPE
    SYNTAX Mode
    MAX-ACCESS read-only
    STATUS current
    DESCRIPTION "defined before its parent"
    ::= { branch 3 }
branch OBJECT IDENTIFIER ::= { mib-2 999 }
END
""")])
    assert idx.resolve("leaf.0") == "1.3.6.1.2.1.999.3.0"
    assert idx.object("leaf").enums == {1: "on", 2: "off"}
