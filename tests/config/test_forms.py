"""The Main{} text form (compatible with existing DOCSIS text tools), YAML, JSON, and detection."""

import pytest

from hfcprov.config import (
    ConfigError,
    VarBind,
    decode,
    encode,
    parse_json,
    parse_text,
    parse_yaml,
    read_config,
    render_json,
    render_text,
    render_yaml,
)
from hfcprov.config.forms import detect

from .. import support

EXAMPLE = support.REPO / "examples" / "buffer-control.cfg"

OPERATOR_SOURCE = """
/* as written for the common DOCSIS text tools */
Main
{
    NetworkAccess 1;
    MaxCPE 2;
    UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; BufferControl { TargetBuffer 16384; } }
    DsServiceFlow
    {
        DsServiceFlowRef 2;
        QosParamSetType 7;
        MaxRateSustained 20000000;
        ServiceClassName "res_down";
    }
    SnmpMibObject 1.3.6.1.2.1.69.1.3.8.0 Integer 1;   // docsDevSwAdminStatus-like
    SnmpMibObject 1.3.6.1.2.1.1.4.0 String "noc; \\"24x7\\"";
    SnmpMibObject 1.3.6.1.2.1.1.5.0 HexString 0x00ff10;
    SnmpWriteControl 1.3.6.1.2.1.69.1.3 0;
    GenericTLV TlvCode 200 TlvLength 3 TlvValue 0xaabbcc;
    VendorSpecific { VendorIdentifier 0xffffff; GenericTLV TlvCode 128 TlvLength 2 TlvValue 0x0102; }
    # hash comments too
}
"""


def test_operator_source_parses_unchanged():
    tree = parse_text(OPERATOR_SOURCE)
    assert [t.code for t in tree.tlvs] == [3, 18, 24, 25, 11, 11, 11, 10, 200, 43]
    assert tree.find("24.35.2")[0].value == 16384
    assert tree.find("25.4")[0].value == "res_down"
    assert tree.tlvs[5].value == VarBind("1.3.6.1.2.1.1.4.0", "OctetString", b'noc; "24x7"')
    assert tree.tlvs[6].value.value == b"\x00\xff\x10"
    assert tree.tlvs[7].value == ("1.3.6.1.2.1.69.1.3", 0)
    assert tree.tlvs[8].value == b"\xaa\xbb\xcc"
    assert tree.find("43.128")[0].value == b"\x01\x02"  # unknown vendor sub-TLV kept as bytes


def test_text_binary_text_is_stable():
    text1 = render_text(decode(encode(parse_text(OPERATOR_SOURCE), b"s")))
    text2 = render_text(decode(encode(parse_text(text1), b"s")))
    assert text1 == text2
    assert "GenericTLV TlvCode 200 TlvLength 3 TlvValue 0xaabbcc;" in text1
    assert "SnmpMibObject 1.3.6.1.2.1.69.1.3.8.0 Integer 1;" in text1
    assert "/* CmtsMic 0x" in text1


def test_symbolic_oids_resolve_through_the_mibs():
    pytest.importorskip("hfcprov.mib")
    from hfcprov import mib

    numeric = mib.resolve("docsDevNmAccessStatus.1")
    if numeric is None:
        pytest.skip("mibs/ has no docsDevNmAccessStatus")
    tree = parse_text("Main { SnmpMibObject docsDevNmAccessStatus.1 Integer 4; }")
    assert tree.tlvs[0].value.oid == numeric.lstrip(".")
    named = render_text(tree, names=True)
    assert "SnmpMibObject docsDevNmAccessStatus.1 Integer 4;" in named
    assert parse_text(named) == tree
    assert numeric.lstrip(".") in render_text(tree)  # numeric unless asked


@pytest.mark.parametrize("text, line, path, message", [
    ("Main {\n  NetworkAccess 1;\n  Foo 2;\n}", 3, None, "unknown TLV name 'Foo' at the top level"),
    ("Main {\n UsServiceFlow {\n  BufferControl { Bogus 1; }\n }\n}", 3, "24.35", "unknown TLV name 'Bogus' inside BufferControl"),
    ("Main {\n NetworkAccess 2;\n}", 2, "3", "out of range 0..1"),
    ("Main {\n UsServiceFlow {\n  BufferControl {\n   TargetBuffer 4294967296; } } }", 4, "24.35.2", "out of range 0..4294967295"),
    ("Main {\n NetworkAccess 1\n MaxCPE 2;\n}", 2, None, "missing ';'"),
    ("Main {\n NetworkAccess 1;\n", 3, None, "missing '}'"),
    ("Main {\n TftpModemAddress 10.0.0.256;\n}", 2, "20", "bad IP address"),
    ('Main {\n SnmpMibObject 1.3.6.1 Integer x;\n}', 2, "11", "whole number"),
    ('Main {\n SnmpMibObject 1.3.6.1 Bogus 1;\n}', 2, "11", "unknown SNMP type"),
    ('Main {\n SnmpMibObject noSuchObject.0 Integer 1;\n}', 2, "11", "unknown OID"),
    ("Main {\n GenericTLV TlvCode 200 TlvLength 4 TlvValue 0xaabbcc;\n}", 2, "200", "does not match"),
])
def test_text_errors_name_line_and_path(text, line, path, message):
    with pytest.raises(ConfigError, match=message) as err:
        parse_text(text, source="tier.cfg")
    assert err.value.line == line
    assert err.value.path == path
    assert str(err.value).startswith(f"tier.cfg:{line}")
    assert "\n" not in str(err.value)


def test_yaml_and_json_forms_round_trip_the_example():
    tree = read_config(EXAMPLE)
    assert parse_yaml(render_yaml(tree)) == tree
    assert parse_json(render_json(tree)) == tree


def test_yaml_accepts_mappings_for_compound_tlvs_and_hand_written_values():
    tree = parse_yaml("""
Main:
  - NetworkAccess: 1
  - UsServiceFlow:
      UsServiceFlowRef: 1
      QosParamSetType: 7
      BufferControl: {TargetBuffer: 16384}
  - SnmpMibObject: 1.3.6.1.2.1.69.1.3.8.0 Integer 1
  - GenericTLV: {TlvCode: 200, TlvValue: 0xaabbcc}
""")
    assert tree == parse_text("Main { NetworkAccess 1; UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7;"
                              " BufferControl { TargetBuffer 16384; } } SnmpMibObject 1.3.6.1.2.1.69.1.3.8.0 Integer 1;"
                              " GenericTLV TlvCode 200 TlvLength 3 TlvValue 0xaabbcc; }")


@pytest.mark.parametrize("parse, text, line, message", [
    (parse_yaml, "Main:\n  - NetworkAccess: 1\n  - MaxCPE: 300\n", 3, "out of range 1..254"),
    (parse_yaml, "Main:\n  - Nope: 1\n", 2, "unknown TLV name 'Nope'"),
    (parse_yaml, "Main:\n  - NetworkAccess: [1\n", 3, "not valid YAML"),
    (parse_json, '{"Main": [\n {"NetworkAccess": 1},\n {"MaxCPE": -1}\n]}', 3, "out of range 1..254"),
    (parse_json, '{"Main": [\n {"NetworkAccess": 1},\n]}', 3, "not valid JSON"),
])
def test_yaml_json_errors_name_the_line(parse, text, line, message):
    with pytest.raises(ConfigError, match=message) as err:
        parse(text)
    assert err.value.line == line


def test_detect_forms_by_content(tmp_path):
    tree = read_config(EXAMPLE)
    assert detect(EXAMPLE.read_bytes()) == "text"
    assert detect(render_yaml(tree).encode()) == "yaml"
    assert detect(render_json(tree).encode()) == "json"
    assert detect(encode(tree)) == "binary"
    for name, data in [("a.bin", encode(tree)), ("a.txt", render_yaml(tree)), ("b.txt", render_json(tree))]:
        (tmp_path / name).write_bytes(data if isinstance(data, bytes) else data.encode())
        assert read_config(tmp_path / name) == tree


def test_read_config_names_the_file_on_errors(tmp_path):
    bad = tmp_path / "bad.cm"
    bad.write_bytes(b"\x03\x05\x01")
    with pytest.raises(ConfigError, match=r"bad.cm, byte 0, TLV 3: length 5 overruns the file"):
        read_config(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        read_config(tmp_path / "missing.cm")


def test_enum_labels_are_accepted_and_numbers_rendered():
    tree = parse_text("Main { NetworkAccess permitted; UsServiceFlow { SchedulingType bestEffort;"
                      " AQMEncodings { SFAQMDisable aqmDisabled; } } }")
    assert [t.value for t in (tree.find("3") + tree.find("24.15") + tree.find("24.40.1"))] == [1, 2, 1]
    assert "SchedulingType 2;" in render_text(tree)
    assert parse_yaml("Main:\n  - NetworkAccess: denied\n").tlvs[0].value == 0
    with pytest.raises(ConfigError, match="whole number"):
        parse_text("Main { NetworkAccess maybe; }")


def test_the_control_character_test_is_the_regexs():
    """``detect``'s test for a binary file (a control character in the first 4 KiB) by bytes.translate on an
    ASCII text gives the regex's answer on any text."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from hfcprov.config.forms import _CONTROL, _has_control

    chars = st.one_of(st.characters(max_codepoint=0x7F), st.characters(), st.sampled_from("\x00\x08\t\n\r\x0e\x1f "))

    @settings(max_examples=500, deadline=None)
    @given(st.text(chars, max_size=40), st.integers(4080, 4100))
    def check(text, pad):
        for t in (text, "x" * pad + text):
            assert _has_control(t) == (_CONTROL.search(t, 0, 4096) is not None)

    check()
