"""Hand-written byte vectors from the DOCSIS specification (MULPI Annex C/D): every value
type, both MICs, repeated TLVs, TLV 64 in a CM file, CVC chains. Expected bytes are written
out here, not produced by the codec under test."""

import hashlib
import hmac

import pytest

from hfcprov.config import ConfigError, ConfigTree, Tlv, VarBind, decode, encode, parse_text, verify, verify_cm_mic

H = bytes.fromhex


def body(tree_text: str) -> bytes:
    """The TLV bytes of a text config, without MIC and trailer (file without secret)."""
    data = encode(parse_text(tree_text))
    return data[: data.rindex(b"\x06\x10")]


@pytest.mark.parametrize("text, expected", [
    # uint8, uint16, uint32
    ("NetworkAccess 1;", "030101"),
    ("MaxClassifiers 20;", "1c020014"),
    ("DownstreamFrequency 555000000;", "0104" + (555000000).to_bytes(4, "big").hex()),
    # ipv4, ipv6, mac
    ("TftpModemAddress 10.1.2.3;", "14040a010203"),
    ("SwUpgradeServer6 2001:db8::1;", "3a10" + "20010db8" + "00" * 11 + "01"),
    ("CpeMacAddress 00:11:22:33:44:55;", "0e06001122334455"),
    # string (no NUL) and NUL-terminated string inside a service flow
    ('SwUpgradeFilename "fw.bin";', "0906" + b"fw.bin".hex()),
    ('UsServiceFlow { ServiceClassName "gold"; }', "1807" + "0405" + b"gold\0".hex()),
    # Buffer Control 24.35: uint32 bytes
    ("UsServiceFlow { UsServiceFlowRef 1; BufferControl { MinimumBuffer 1000; TargetBuffer 16384; MaximumBuffer 65536; } }",
     "1818" "01020001" "2312" "010400" "0003e8" "020400004000" "030400010000"),
    ("DsServiceFlow { DsServiceFlowRef 2; BufferControl { TargetBuffer 24576; } }", "190c" "01020002" "2306" "020400006000"),
    # Ethernet/LLC classifier: 12-byte destination MAC + mask; 802.1P/Q user priority list and VLAN
    ("UsPacketClass { LLCPacketClassifier { DstMacAddress 00:11:22:33:44:55/ff:ff:ff:00:00:00; } }",
     "1610" "0a0e" "010c" "001122334455" "ffffff000000"),
    ("DsPacketClass { IEEE802Classifier { UserPriority 2,5; VlanID 100; } }", None),
    # IPv4 and IPv6 classifiers
    ("UsPacketClass { ClassifierRef 1; IpPacketClassifier { IpProto 6; DstPortStart 80; } }", None),
    # SNMP write control: OID then one flag byte
    ("SnmpWriteControl 1.3.6.1.2.1.69.1.3 0;", "0a0b" "0608" "2b060102014501" "03" "00"),
    # SNMPv1v2c coexistence: address + port
    ("SNMPv1v2cCoexistenceConfig { SNMPv1v2cTransportAddressAccess { SNMPv1v2cTransportAddress 10.0.0.1:161; } }",
     "350a" "0208" "0106" "0a000001" "00a1"),
    # vendor specific with its vendor id and an unknown vendor sub-TLV kept as hex
    ("VendorSpecific { VendorIdentifier 0x00000c; GenericTLV TlvCode 128 TlvLength 2 TlvValue 0xbeef; }",
     "2b09" "080300000c" "8002beef"),
    # unknown top-level TLV
    ("GenericTLV TlvCode 200 TlvLength 3 TlvValue 0xaabbcc;", "c803aabbcc"),
    # list types
    ("SubMgmtFilters 1,2,3,4;", "2508" "0001000200030004"),
    ("SubscriberManagementCPEIPTable 10.0.0.1,10.0.0.2;", "2408" "0a000001" "0a000002"),
])
def test_value_types_encode_to_spec_bytes(text, expected):
    got = body(f"Main {{ {text} }}")
    if expected is not None:
        assert got.hex() == expected
    assert decode(encode(parse_text(f"Main {{ {text} }}"))) == parse_text(f"Main {{ {text} }}")


@pytest.mark.parametrize("value_text, ber_value", [
    ("Integer 1", "020101"),
    ("Integer -1", "0201ff"),
    ("Integer 128", "02020080"),
    ("Integer -129", "0202ff7f"),
    ("Counter32 4294967295", "410500ffffffff"),
    ("Gauge32 100", "420164"),
    ("Unsigned32 200", "420200c8"),
    ("TimeTicks 0", "430100"),
    ("IpAddress 192.168.0.1", "4004c0a80001"),
    ('OctetString "public"', "0406" + b"public".hex()),
    ('String "public"', "0406" + b"public".hex()),
    ("HexString 0x00ff", "040200ff"),
    ("ObjectIdentifier 1.3.6.1.4.1.4491", "0607" "2b06010401a30b"),
    ("Counter64 18446744073709551615", "4609" "00ffffffffffffffff"),
    ("Opaque 0x9f780441200000", "4407" "9f780441200000"),
])
def test_snmp_mib_object_varbind(value_text, ber_value):
    oid = "060a2b060102014501030800"  # 1.3.6.1.2.1.69.1.3.8.0
    varbind = bytes.fromhex(oid + ber_value)
    expected = "0b" + f"{len(varbind) + 2:02x}" + "30" + f"{len(varbind):02x}" + varbind.hex()
    assert body(f"Main {{ SnmpMibObject 1.3.6.1.2.1.69.1.3.8.0 {value_text}; }}").hex() == expected


def test_snmp_mib_object_docsis_example():
    # docsDevNmAccessStatus-style object set to Integer 1, as in DOCSIS config examples
    tree = parse_text("Main { SnmpMibObject 1.3.6.1.2.1.69.1.3.8.0 Integer 1; }")
    assert tree.tlvs[0].value == VarBind("1.3.6.1.2.1.69.1.3.8.0", "Integer", 1)
    assert body("Main { SnmpMibObject 1.3.6.1.2.1.69.1.3.8.0 Integer 1; }") == H(
        "0b11300f060a2b060102014501030800020101")


def test_cm_mic_is_md5_of_everything_before_it_and_trailer_pads_to_4():
    data = encode(parse_text("Main { NetworkAccess 1; }"))
    expected = H("030101") + b"\x06\x10" + hashlib.md5(H("030101")).digest() + b"\xff" + b"\0\0"
    assert data == expected
    assert len(data) % 4 == 0


def test_cmts_mic_covers_every_instance_in_spec_order():
    secret = b"cablelabs-secret"
    na = H("030101")
    cpe = H("120104")
    flow1 = H("180401020001")
    flow2 = H("180401020002")
    snmp = H("0b11300f060a2b060102014501030800020101")  # TLV 11: not in the CMTS MIC
    vendor = H("2b05080300000c")
    cls = H("1603010101")
    content = na + snmp + flow1 + cpe + vendor + flow2 + cls
    cm_mic = b"\x06\x10" + hashlib.md5(content).digest()
    # order: 1,2,3,4,17,43,6,18,19,20,22,23,24,25,...; each code's instances in file order
    mic_input = na + vendor + cm_mic + cpe + cls + flow1 + flow2
    cmts = b"\x07\x10" + hmac.new(secret, mic_input, hashlib.md5).digest()
    expected = content + cm_mic + cmts + b"\xff"
    expected += b"\0" * (-len(expected) % 4)
    tree = decode(expected)
    assert encode(tree, secret) == expected
    verify(expected, secret)
    assert decode(expected, secret) == tree


def test_bad_secret_names_the_cmts_mic():
    data = encode(parse_text("Main { NetworkAccess 1; }"), b"right")
    with pytest.raises(ConfigError, match=r"CMTS MIC \(TLV 7\) mismatch") as err:
        decode(data, b"wrong")
    assert err.value.path == "7" and err.value.offset == 21
    assert "CM MIC (TLV 6) mismatch" not in str(err.value)


def test_changed_file_names_both_mics():
    data = bytearray(encode(parse_text("Main { NetworkAccess 1; MaxCPE 3; }"), b"k"))
    data[5] = 4  # MaxCPE 3 -> 4
    with pytest.raises(ConfigError, match=r"CM MIC \(TLV 6\) mismatch.*CMTS MIC \(TLV 7\) mismatch") as err:
        decode(bytes(data), b"k")
    assert err.value.path == "6"


def test_missing_mics_are_reported():
    with pytest.raises(ConfigError, match="no CM MIC"):
        verify(H("030101ff"), b"k")


def test_cm_mic_alone_is_checked_without_the_secret():
    good = encode(parse_text("Main { NetworkAccess 1; MaxCPE 3; }"), b"k")
    verify_cm_mic(good)  # the CMTS MIC (keyed by a secret the modem does not have) is not looked at
    changed = bytearray(good)
    changed[5] = 4  # MaxCPE 3 -> 4
    with pytest.raises(ConfigError, match=r"^byte 6, TLV 6: CM MIC \(TLV 6\) mismatch: the file was changed") as err:
        verify_cm_mic(bytes(changed))
    assert "TLV 7" not in str(err.value)
    with pytest.raises(ConfigError, match=r"^TLV 6: no CM MIC \(TLV 6\)$"):
        verify_cm_mic(H("030101ff"))
    wrong_cmts = good[:6 + 18 + 2] + bytes(16) + good[6 + 18 + 18:]  # the CMTS MIC zeroed: not the modem's business
    verify_cm_mic(wrong_cmts)
    with pytest.raises(ConfigError):
        verify(wrong_cmts, b"k")


def test_tlv64_in_a_cm_file_has_a_one_byte_length_and_later_tlvs_stay_in_the_cmts_mic():
    # 64 CMTS static multicast session: group 224.1.1.1, source 10.0.0.1 (1-byte length, 12 bytes)
    t64 = H("400c" "0104e0010101" "02040a000001")
    flow = H("180401020001")
    content = H("030101") + t64 + flow
    cm_mic = b"\x06\x10" + hashlib.md5(content).digest()
    cmts = b"\x07\x10" + hmac.new(b"s", H("030101") + cm_mic + flow, hashlib.md5).digest()
    data = content + cm_mic + cmts + b"\xff"
    data += b"\0" * (-len(data) % 4)
    tree = decode(data, b"s")
    assert [t.code for t in tree.tlvs] == [3, 64, 24]
    assert tree.find("64.1")[0].value == "224.1.1.1"
    assert tree.find("24.1")[0].value == 1
    assert encode(tree, b"s") == data


def test_repeated_tlvs_keep_order_and_every_instance():
    text = "Main { MaxCPE 1; NetworkAccess 1; MaxCPE 2; SnmpMibObject 1.3.6.1.2.1.1.4.0 String \"a\"; MaxCPE 3; }"
    tree = decode(encode(parse_text(text)))
    assert [t.code for t in tree.tlvs] == [18, 3, 18, 11, 18]
    assert [t.value for t in tree.find("18")] == [1, 2, 3]


def test_cvc_chain_split_in_254_byte_fragments_and_joined_on_decode():
    chain = bytes(range(256)) * 2 + b"xyz"  # 515 bytes
    tree = ConfigTree([Tlv(3, 1), Tlv(81, chain)])
    data = encode(tree)
    frags = H("030101") + b"\x51\xfe" + chain[:254] + b"\x51\xfe" + chain[254:508] + b"\x51\x07" + chain[508:]
    assert data.startswith(frags)
    back = decode(data)
    assert back == tree and back.find("81")[0].value == chain
    assert encode(back) == data


def test_cvc_chain_with_other_fragment_sizes_reencodes_identically():
    content = H("030101") + b"\x52\x64" + b"a" * 100 + b"\x52\x64" + b"b" * 100
    data = content + b"\x06\x10" + hashlib.md5(content).digest() + b"\xff"
    data += b"\0" * (-len(data) % 4)
    tree = decode(data)
    assert tree.find("82")[0].value == b"a" * 100 + b"b" * 100
    assert encode(tree) == data


def test_value_over_255_bytes_is_an_error_never_truncated_or_retagged():
    with pytest.raises(ConfigError, match=r"300 bytes; a TLV value holds at most 255") as err:
        encode(ConfigTree([Tlv(9, "f" * 300)]))
    assert err.value.path == "9"
    # a TLV 11 VarBind over 255 bytes is refused too (no TLV 64 re-tagging)
    big = parse_text('Main { SnmpMibObject 1.3.6.1.2.1.1.4.0 String "%s"; }' % ("x" * 200))
    big.tlvs[0] = Tlv(11, VarBind("1.3.6.1.2.1.1.4.0", "OctetString", b"x" * 300))
    with pytest.raises(ConfigError, match="at most 255") as err:
        encode(big)
    assert err.value.path == "11"
    # a service flow whose sub-TLVs add up to more than 255 bytes
    flow = Tlv(24, None, [Tlv(43, None, [Tlv(200, b"z" * 200)]), Tlv(43, None, [Tlv(201, b"z" * 100)])])
    with pytest.raises(ConfigError, match="at most 255") as err:
        encode(ConfigTree([flow]))
    assert err.value.path == "24"


@pytest.mark.parametrize("data, offset, path, message", [
    (H("03"), 0, "3", "truncated"),
    (H("030101" "12"), 3, "18", "truncated"),
    (H("0301"), 0, "3", "overruns the file"),
    (H("030201"), 0, "3", "overruns the file"),
    (H("1808" "2306" "020800000000"), 4, "24.35.2", "overruns its parent"),
])
def test_broken_framing_is_an_error_naming_offset_and_tlv_path(data, offset, path, message):
    with pytest.raises(ConfigError, match=message) as err:
        decode(data)
    assert (err.value.offset, err.value.path) == (offset, path)
    assert f"byte {offset}" in str(err.value) and f"TLV {path}" in str(err.value)


@pytest.mark.parametrize("data, offset, path, message", [
    (H("1807" "2305" "02030000ff"), 4, "24.35.2", "exactly 4 bytes"),
    (H("030105"), 0, "3", "out of range 0..1"),
    (H("0c020101"), 0, "12", "exactly 4 bytes"),
    (H("1807" "0405676f6c6421"), 2, "24.4", "NUL-terminated"),
])
def test_odd_fields_are_warnings_kept_raw_and_errors_when_strict(data, offset, path, message):
    """A known TLV whose bytes do not fit its type: lenient decode keeps them and says where; --strict refuses."""
    signed = data + b"\x06\x10" + hashlib.md5(data).digest() + b"\xff"
    signed += b"\0" * (-len(signed) % 4)
    tree = decode(signed)
    (warning,) = tree.warnings
    assert (warning.offset, warning.path) == (offset, path) and message in str(warning)
    assert f"byte {offset}" in str(warning) and f"TLV {path}" in str(warning)
    assert encode(tree) == signed  # kept byte for byte
    with pytest.raises(ConfigError, match=message) as err:
        decode(signed, strict=True)
    assert (err.value.offset, err.value.path) == (offset, path)


@pytest.mark.parametrize("code, name", [(32, "MfgCVCData"), (33, "CoSignerCVCData"), (81, "ManufacturerCVCChain"),
                                        (82, "CoSignerCVCChain")])
def test_cvc_values_over_255_bytes_are_split_like_the_spec_says(code, name):
    """MULPI C.1.2.10/11/21/22: a CVC over 254 bytes goes in consecutive TLVs, each but the last of 254 bytes."""
    cvc = bytes(range(256)) * 3 + b"\x01" * 40  # 808 bytes, as a real CVC
    data = encode(parse_text(f"Main {{ NetworkAccess 1; {name} 0x{cvc.hex()}; }}"))
    want = H("030101") + b"".join(bytes([code, len(cvc[i:i + 254])]) + cvc[i:i + 254] for i in range(0, 808, 254))
    assert data.startswith(want + b"\x06\x10")
    back = decode(data)
    assert back.find(str(code))[0].value == cvc and encode(back) == data


def test_oversized_values_from_text_and_yaml_name_file_and_line():
    from hfcprov.config.forms import parse_yaml

    text = 'Main {\n NetworkAccess 1;\n SwUpgradeFilename "%s";\n}\n' % ("f" * 300)
    with pytest.raises(ConfigError, match="300 bytes; a TLV value holds at most 255") as err:
        parse_text(text, "big.cfg")
    assert (err.value.line, err.value.path, err.value.source) == (3, "9", "big.cfg") and "big.cfg:3" in str(err.value)
    flow = "Main {\n UsServiceFlow {\n  UsServiceFlowRef 1;\n" + \
        "".join(f'  MaxRateSustained {i};\n' for i in range(45)) + " }\n}\n"
    with pytest.raises(ConfigError, match="at most 255") as err:
        parse_text(flow, "flow.cfg")
    assert (err.value.line, err.value.path) == (2, "24")
    with pytest.raises(ConfigError, match="at most 255") as err:
        parse_yaml("Main:\n  - NetworkAccess: 1\n  - SwUpgradeFilename: '%s'\n" % ("f" * 300), "big.yaml")
    assert (err.value.line, err.value.path) == (3, "9") and "big.yaml:3" in str(err.value)
