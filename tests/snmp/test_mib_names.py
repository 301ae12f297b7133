"""The MIB names operators write in config files resolve with no --mib-dir, instance indexes both ways.

Expected OIDs are what the docsis C tool encodes for the same names (rlaager/docsis with its own MIB
folder, net-snmp's parser) and what net-snmp's ``snmptranslate -On`` prints.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov import mib

# issue 26: names from real operator configs that did not resolve; the C tool's OIDs
OPERATOR_NAMES = {
    "docsDevFilterIpStatus.1": "1.3.6.1.2.1.69.1.6.4.1.2.1",
    "docsDevFilterLLCStatus.1": "1.3.6.1.2.1.69.1.6.2.1.2.1",
    "snmpCommunityStatus.'rocablelabs'": "1.3.6.1.6.3.18.1.1.1.8." + ".".join(str(b) for b in b"rocablelabs"),
    'vacmSecurityToGroupStatus.1."rotesting"': "1.3.6.1.6.3.16.1.2.1.5.1.9." + ".".join(str(b) for b in b"rotesting"),
    "snmpTargetAddrRowStatus.'t'": "1.3.6.1.6.3.12.1.2.1.9.116",
    "usmUserStatus.1": "1.3.6.1.6.3.15.1.2.2.1.13.1",
    "ifAdminStatus.1": "1.3.6.1.2.1.2.2.1.7.1",
    "docsIfDownChannelFrequency.3": "1.3.6.1.2.1.10.127.1.1.1.1.2.3",
    "docsIf3CmStatusValue.2": "1.3.6.1.4.1.4491.2.1.20.1.1.1.1.2",
    "pktcMtaDevEnabled.0": "1.3.6.1.4.1.4491.2.2.1.1.1.7.0",  # PKTC-MTA-MIB (CableLabs), as the C tool
    "docsDevEvThrottleAdminStatus.0": "1.3.6.1.2.1.69.1.5.3.0",
    'nlmConfigLogAdminStatus."a"': "1.3.6.1.2.1.92.1.1.3.1.4.1.97",
    "docsBpi2CmPrivacyEnable.2": "1.3.6.1.2.1.10.127.6.1.1.1.1.1.2",  # DOCS-BPI2-MIB, as the C tool
    "snmpNotifyRowStatus.'n1'": "1.3.6.1.6.3.13.1.1.1.5.110.49",
}


@pytest.mark.parametrize("name,oid", sorted(OPERATOR_NAMES.items()))
def test_operator_names_resolve_from_the_shipped_mibs(name, oid):
    assert mib.resolve(name) == oid
    assert mib.resolve(mib.name_of(oid)) == oid


def test_names_are_read_back_as_net_snmp_writes_them():
    assert mib.name_of("1.3.6.1.6.3.18.1.1.1.8.112.117.98.108.105.99") == "snmpCommunityStatus.'public'"
    assert mib.name_of(OPERATOR_NAMES['vacmSecurityToGroupStatus.1."rotesting"']) == \
        'vacmSecurityToGroupStatus.1."rotesting"'
    assert mib.name_of("1.3.6.1.2.1.92.1.1.3.1.4.1.97") == 'nlmConfigLogAdminStatus."a"'


def test_an_enumerated_index_is_written_by_its_label():
    # the C tool's corpus (docsis1_1_oss_v3coex.txt): group "rotesting", context "", USM (1), noAuthNoPriv (1)
    rotesting = ".".join(str(b) for b in b"rotesting")
    assert mib.resolve('vacmAccessStatus."rotesting"."".1.noAuthNoPriv') == \
        mib.resolve('vacmAccessStatus."rotesting"."".1.1') == f"1.3.6.1.6.3.16.1.4.1.9.9.{rotesting}.0.1.1"
    assert mib.resolve('vacmAccessStatus."rotesting"."".1.authPriv').endswith(".0.1.3")
    assert mib.resolve('vacmAccessStatus."rotesting"."".1.nosuchLevel') is None  # no such label: no guess
    assert mib.resolve("docsDevNmAccessStatus.noAuthNoPriv") is None  # a label where the index has no enum


def test_a_double_quoted_string_on_an_implied_index_has_no_length():
    # the row's index is IMPLIED: "public" can only mean the bytes, as 'public' does
    assert mib.resolve('snmpCommunityName."public"') == mib.resolve("snmpCommunityName.'public'") == \
        "1.3.6.1.6.3.18.1.1.1.2.112.117.98.108.105.99"


def test_a_name_two_modules_define_is_the_config_files_one_and_the_other_stays_reachable():
    ietf = mib.resolve("PKTC-IETF-MTA-MIB::pktcMtaDevEnabled.0")
    assert ietf == "1.3.6.1.2.1.140.1.1.6.0"
    assert mib.name_of(ietf) == "PKTC-IETF-MTA-MIB::pktcMtaDevEnabled.0"  # qualified, so it reads back
    assert mib.resolve("PKTC-IETF-MTA-MIB::pktcMtaDevProvConfigHash.0") == "1.3.6.1.2.1.140.1.2.11.0"


def test_bad_index_text_is_unknown_not_mangled():
    assert mib.resolve('ifAdminStatus."eth0"') is None  # ifIndex is a number
    assert mib.resolve('snmpCommunityStatus."unterminated') is None
    assert mib.resolve("docsDevResetNow.x") is None
    assert mib.resolve("docsBpi2CmTEKCipher.1") is None  # in no published MIB (the C tool cannot either)


def test_the_shipped_modules_need_neither_pysnmp_nor_pysmi():
    code = ("import sys; from hfcprov import mib; assert mib.resolve('usmUserStatus.1'); "
            "assert mib.load_mib_dirs(()) == 0; print('pysnmp' in sys.modules, 'pysmi' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False", "False"]


# rows whose index mixes numbers and strings of every kind: length-prefixed, IMPLIED, fixed size
ROWS = ["vacmSecurityToGroupStatus", "snmpCommunityStatus", "usmUserStatus", "snmpTargetAddrRowStatus",
        "nlmConfigLogAdminStatus", "vacmViewTreeFamilyStatus", "docsDevNmAccessStatus", "snmpNotifyFilterRowStatus"]


def _index_arcs(column: str, draw) -> str | None:
    """Random index values for ``column``'s row, as arcs built from its INDEX clause (independently of
    the encoder under test): a number, a string with its length, an IMPLIED or fixed-size string bare."""
    idx = mib.index()
    out = []
    for name, implied in idx.row_index(idx.object(column)):
        obj = idx.object(name)
        info = mib.smi.type_info(obj.syntax, idx.types)
        fixed = obj.fixed or info.fixed
        if info.base == "int":
            out.append(str(draw(st.integers(0, 2**31 - 1))))
        elif info.base == "oid":
            arcs = [str(a) for a in draw(st.lists(st.integers(0, 1000), min_size=1, max_size=6))]
            out += ([] if implied else [str(len(arcs))]) + arcs
        else:
            text = draw(st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E),
                                min_size=fixed or 1, max_size=fixed or 12))
            data = [str(b) for b in text.encode()]
            out += ([] if implied or fixed else [str(len(data))]) + data
    return ".".join(out)


def test_a_quoted_index_holding_the_module_separator_is_no_module():
    # found by the property below: "::" inside a quoted index was read as MODULE::name
    oid = "1.3.6.1.6.3.18.1.1.1.8.58.58"
    assert mib.name_of(oid) == "snmpCommunityStatus.'::'"
    assert mib.resolve("snmpCommunityStatus.'::'") == mib.resolve('SNMP-COMMUNITY-MIB::snmpCommunityStatus."::"') == oid


@given(st.sampled_from(ROWS), st.data())
def test_any_index_reads_back_to_the_same_oid(column, data):
    oid = f"{mib.resolve(column)}.{_index_arcs(column, data.draw)}"
    name = mib.name_of(oid)
    assert mib.resolve(name) == oid, name


def test_a_config_file_with_quoted_indexes_encodes_and_decodes_back_to_the_same_names():
    from hfcprov.config import decode, encode, parse_text, render_text

    text = ("Main {\n NetworkAccess 1;\n SnmpMibObject snmpCommunityName.\"public\" String \"x\";\n"
            " SnmpMibObject vacmSecurityToGroupStatus.1.\"rotesting\" Integer 4;\n"
            " SnmpMibObject snmpCommunityStatus.'rocablelabs' Integer 4;\n}\n")
    data = encode(parse_text(text))
    assert OPERATOR_NAMES['vacmSecurityToGroupStatus.1."rotesting"'] in render_text(decode(data))  # numeric form
    named = render_text(decode(data), names=True)
    assert "snmpCommunityName.'public'" in named and 'vacmSecurityToGroupStatus.1."rotesting"' in named
    assert encode(parse_text(named)) == data
