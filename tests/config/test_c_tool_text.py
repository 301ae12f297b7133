"""Text both ways with the docsis C tool: its SNMP value forms, address/port, the empty-value form and its
typed GenericTLV are read; ``render_text(c_tool=True)`` writes names it reads. With the C tool built
(HFCPROV_DOCSIS_TOOL=/path/to/docsis or ``docsis`` on PATH) both encoders are compared byte for byte."""

import os
import shutil
import struct
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings

from hfcprov.config import ConfigError, VarBind, decode, encode, parse_text
from hfcprov.config.forms import parse_json, parse_yaml, render_json, render_yaml
from hfcprov.config.text import render_text

from .strategies import trees

H = bytes.fromhex
OID = "1.3.6.1.2.1.1.4.0"


def one(statement: str):
    (node,) = parse_text(f"Main {{ {statement} }}").tlvs
    return node


@pytest.mark.parametrize("text, vb", [
    (f"SnmpMibObject {OID} DecimalString 1.2.250;", VarBind(OID, "OctetString", b"\x01\x02\xfa")),
    (f"SnmpMibObject {OID} BitString 0,3,9;", VarBind(OID, "OctetString", b"\x90\x40")),
    (f"SnmpMibObject {OID} BitString 0x80;", VarBind(OID, "OctetString", b"\x80")),
    (f"SnmpMibObject {OID} Short -5;", VarBind(OID, "Integer", -5)),
    (f"SnmpMibObject {OID} Char 200;", VarBind(OID, "Integer", 200)),
    (f"SnmpMibObject {OID} BigInt 12345678901234;", VarBind(OID, "Counter64", 12345678901234)),
    (f"SnmpMibObject {OID} Float 1.5;", VarBind(OID, "Opaque", b"\x9f\x78\x04" + struct.pack(">f", 1.5))),
    (f"SnmpMibObject {OID} Double -2.25;", VarBind(OID, "Opaque", b"\x9f\x79\x08" + struct.pack(">d", -2.25))),
    (f"SnmpMibObject {OID} IPAddress 10.0.0.1;", VarBind(OID, "IpAddress", "10.0.0.1")),
    (f"SnmpMibObject {OID} ObjectID 1.3.6.1;", VarBind(OID, "ObjectIdentifier", "1.3.6.1")),
    (f"SnmpMibObject {OID} Unsigned32 7;", VarBind(OID, "Gauge32", 7)),
])
def test_c_tool_snmp_value_forms_are_read(text, vb):
    assert one(text).value == vb


@pytest.mark.parametrize("text", [f"SnmpMibObject {OID} Short 70000;", f"SnmpMibObject {OID} DecimalString 1.300;",
                                  f"SnmpMibObject {OID} BigInt -1;", f"SnmpMibObject {OID} Float x;"])
def test_bad_c_tool_values_name_the_line(text):
    with pytest.raises(ConfigError) as err:
        parse_text(f"Main {{\n {text}\n}}", "c.cfg")
    assert err.value.line == 2 and err.value.path == "11"


def test_address_port_empty_value_and_typed_generic_forms():
    for addr, raw in (("10.0.0.1/161", H("0a00000100a1")), ("2001:db8::1/161", H("20010db8" + "00" * 11 + "0100a1"))):
        node = one(f"SNMPv1v2cCoexistenceConfig {{ SNMPv1v2cTransportAddressAccess {{ SNMPv1v2cTransportAddress {addr}; }} }}")
        assert encode(parse_text(f"Main {{ SNMPv1v2cCoexistenceConfig {{ SNMPv1v2cTransportAddressAccess {{"
                                 f" SNMPv1v2cTransportAddress {addr}; }} }} }}")).find(raw) > 0, node
    empty = "VendorSpecific { VendorIdentifier 0xffffff; L2VPNEncoding { NSIEncapsulation { ServiceMultiplexingValueOther 0x00; } } }"
    assert one(empty).find("5.2.1")[0].value == b""
    assert one("GenericTLV TlvCode 200 TlvType Short TlvValue 7;").value == b"\x00\x07"
    assert one("GenericTLV TlvCode 200 TlvType IPAddress TlvValue 10.1.2.3;").value == H("0a010203")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees())
def test_c_tool_rendering_and_every_form_read_back(tree):
    """Including nested sub-TLVs with code 0 or 255 (GenericTLV): text, C-tool text, YAML and JSON."""
    try:
        encode(tree)
    except ConfigError as err:
        assert "at most 255" in err.message
        return
    for text in (render_text(tree), render_text(tree, c_tool=True)):
        assert parse_text(text) == tree
    assert parse_yaml(render_yaml(tree)) == tree and parse_json(render_json(tree)) == tree


# --- the C tool as a peer ---------------------------------------------------------------------

def c_tool():
    path = os.environ.get("HFCPROV_DOCSIS_TOOL") or shutil.which("docsis")
    if not path:
        pytest.skip("the docsis C tool is not built (set HFCPROV_DOCSIS_TOOL=/path/to/docsis)")
    return path


PEER_TEXT = f"""Main
{{
	NetworkAccess 1;
	MaxCPE 4;
	SnmpMibObject {OID} String "ops@example.net";
	SnmpMibObject 1.3.6.1.2.1.69.1.2.1.2.1 IPAddress 10.0.0.1;
	SnmpMibObject 1.3.6.1.2.1.69.1.3.8.0 Integer 1;
	SnmpMibObject 1.3.6.1.2.1.69.1.2.1.5.1 HexString 0x0102ff;
	SnmpMibObject 1.3.6.1.2.1.1.6.0 String "{"l" * 150}";
	SnmpWriteControl .1.3.6.1 1;
	SnmpV3TrapReceiver
	{{
		SnmpV3TrapRxIP 10.0.0.2;
		SnmpV3TrapRxFilterOID .1.3.6.1;
	}}
	SNMPv3AccessViewConfiguration
	{{
		SNMPv3AccessViewName "view";
		SNMPv3AccessViewSubtree .1.3.6;
		SNMPv3AccessViewType 1;
	}}
	SNMPv1v2cCoexistenceConfig
	{{
		SNMPv1v2cCommunityName "public";
		SNMPv1v2cTransportAddressAccess
		{{
			SNMPv1v2cTransportAddress 10.0.0.1/161;
			SNMPv1v2cTransportAddressMask 255.255.255.0/65535;
		}}
		SNMPv1v2cAccessViewType 1;
		SNMPv1v2cAccessViewName "docsisManagerView";
	}}
	UsServiceFlow
	{{
		UsServiceFlowRef 1;
		QosParamSetType 7;
		MaxRateSustained 1000000;
	}}
	GenericTLV TlvCode 200 TlvLength 3 TlvValue 0xaabbcc;
}}
"""


def test_encodes_like_the_c_tool_and_the_c_tool_reads_our_text(tmp_path):
    tool = c_tool()
    key = tmp_path / "key"
    key.write_bytes(b"peer-secret")
    src = tmp_path / "a.cfg"
    src.write_text(PEER_TEXT)
    theirs = tmp_path / "a.cm"
    subprocess.run([tool, "-e", src, key, theirs], check=True, capture_output=True, timeout=60)
    ours = encode(parse_text(PEER_TEXT), b"peer-secret")
    assert ours == theirs.read_bytes()
    back = tmp_path / "b.cfg"
    back.write_text(render_text(decode(ours), c_tool=True))
    again = tmp_path / "b.cm"
    subprocess.run([tool, "-e", back, key, again], check=True, capture_output=True, timeout=60)
    assert again.read_bytes() == ours
    shown = subprocess.run([tool, "-d", theirs], check=True, capture_output=True, text=True, timeout=60).stdout
    assert parse_text(shown) == parse_text(PEER_TEXT)


def test_varbinds_of_128_bytes_and_more_have_the_c_tools_length_form():
    from hfcprov.config.ber import decode_varbind, encode_varbind

    short, long = VarBind(OID, "OctetString", b"s" * 100), VarBind(OID, "OctetString", b"l" * 150)
    assert encode_varbind(short)[:2] == bytes((0x30, 112))
    raw = encode_varbind(long)
    assert raw[:4] == bytes((0x30, 0x82, 0x00, 163)) and raw[4 + 10:4 + 13] == bytes((0x04, 0x81, 150))
    assert decode_varbind(raw) == long
    der = bytes((0x30, 0x81, 163)) + raw[4:]  # what a DER encoder writes: read, and kept as written
    assert decode_varbind(der) == long
    tree = decode(encode(parse_text(f'Main {{ SnmpMibObject {OID} String "{"l" * 150}"; }}')))
    assert tree.tlvs[0].value == long


def test_c_tool_text_writes_oids_with_the_leading_dot_its_grammar_wants():
    tree = parse_text("Main { SnmpWriteControl 1.3.6.1 1; SnmpV3TrapReceiver { SnmpV3TrapRxFilterOID 1.3.6.1; } }")
    text = render_text(tree, c_tool=True)
    assert "SnmpWriteControl .1.3.6.1 1;" in text and "SnmpV3TrapRxFilterOID .1.3.6.1;" in text
    assert parse_text(text) == tree


def test_bytes_as_a_string_and_cvcs_by_file_name(tmp_path):
    node = one('VendorSpecific { VendorIdentifier 0xffffff; L2VPNEncoding { VPNIdentifier "VLAN100"; } }')
    assert node.find("5.1")[0].value == b"VLAN100"
    cvc = bytes(range(256)) * 3
    (tmp_path / "mfg.der").write_bytes(cvc)
    src = tmp_path / "cm.cfg"
    src.write_text('Main {\n NetworkAccess 1;\n ManufacturerCVCChainFile "mfg.der";\n ManufacturerCVC "mfg.der";\n}\n')
    tree = parse_text(src.read_text(), str(src))
    assert tree.find("81")[0].value == cvc and tree.find("32")[0].value == cvc
    assert decode(encode(tree)).find("81")[0].value == cvc
    src.write_text('Main {\n NetworkAccess 1;\n CoSignerCVCChainFile "missing.der";\n}\n')
    with pytest.raises(ConfigError, match="cannot read the CVC file") as err:
        parse_text(src.read_text(), str(src))
    assert err.value.line == 3 and err.value.path == "82"


def test_net_snmp_label_paths_resolve_to_their_last_name_when_the_labels_agree():
    assert one("SnmpMibObject system.sysContact.0 String \"ops\";").value.oid == "1.3.6.1.2.1.1.4.0"
    assert one("SnmpMibObject mib-2.system.sysContact.0 String \"ops\";").value.oid == "1.3.6.1.2.1.1.4.0"
    with pytest.raises(ConfigError, match="unknown OID"):
        one("SnmpMibObject interfaces.sysContact.0 String \"ops\";")  # sysContact is not under interfaces
