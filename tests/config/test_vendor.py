"""TLV 43 by vendor: the dictionary's sub-TLVs under CableLabs' vendor ID 0xFFFFFF only, another vendor's
sub-TLVs kept as raw bytes, byte for byte, in every place TLV 43 appears."""

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.config import ConfigError, decode, encode, parse_text
from hfcprov.config.dictionary import lookup
from hfcprov.config.forms import parse_json, parse_yaml, render_json, render_yaml
from hfcprov.config.text import render_text

from .strategies import tlv_of

# (prefix bytes wrapping a 43, path of that 43): top level and inside classifiers and service flows
PLACES = [(None, "43"), (22, "22.43"), (23, "23.43"), (24, "24.43"), (25, "25.43"), (60, "60.43")]


def signed(content: bytes) -> bytes:
    data = content + b"\x06\x10" + hashlib.md5(content).digest() + b"\xff"
    return data + b"\0" * (-len(data) % 4)


def wrap(parent, tlv43: bytes) -> bytes:
    return tlv43 if parent is None else bytes([parent, len(tlv43)]) + tlv43


@pytest.mark.parametrize("parent, path", PLACES)
def test_another_vendors_sub_tlvs_are_raw_bytes_and_round_trip(parent, path):
    # Vendor ID 00:40:7b with its own sub-type 4 of one byte (CableLabs' 43.4 would take 2)
    vendor43 = bytes.fromhex("2b08" "080300407b" "040105")
    data = signed(bytes.fromhex("030101") + wrap(parent, vendor43))
    tree = decode(data)
    assert tree.warnings == []
    (node,) = tree.find(path)
    assert [(c.code, c.value) for c in node.children] == [(8, b"\x00\x40\x7b"), (4, b"\x05")]
    assert encode(tree) == data
    text = render_text(tree)
    assert "GenericTLV TlvCode 4 TlvLength 1 TlvValue 0x05;" in text and "CMRangingClassIDExtension" not in text
    for form, parse in ((text, parse_text), (render_yaml(tree), parse_yaml), (render_json(tree), parse_json)):
        assert encode(parse(form)) == data


@pytest.mark.parametrize("parent, path", PLACES)
def test_cablelabs_sub_tlvs_are_typed_and_checked(parent, path):
    ok = signed(bytes.fromhex("030101") + wrap(parent, bytes.fromhex("2b09" "0803ffffff" "04020005")))
    tree = decode(ok)
    assert tree.warnings == [] and tree.find(path + ".4")[0].value == 5
    assert "CMRangingClassIDExtension 5;" in render_text(tree)
    odd = signed(bytes.fromhex("030101") + wrap(parent, bytes.fromhex("2b08" "0803ffffff" "040105")))
    tree = decode(odd)
    (warning,) = tree.warnings
    assert warning.path == path + ".4" and "exactly 2 bytes" in warning.message
    assert encode(tree) == odd


def test_text_naming_a_cablelabs_sub_tlv_under_another_vendor_is_refused_with_its_line():
    text = "Main {\n NetworkAccess 1;\n VendorSpecific {\n  VendorIdentifier 0x00407b;\n  CMLoadBalancingPolicyID 3;\n }\n}\n"
    with pytest.raises(ConfigError, match="only under vendor ID 0xffffff") as err:
        parse_text(text, "v.cfg")
    assert err.value.line == 3 and err.value.path == "43.1" and "v.cfg:3" in str(err.value)
    yaml_text = "Main:\n  - VendorSpecific:\n      - VendorIdentifier: '0x00407b'\n      - CMLoadBalancingPolicyID: 3\n"
    with pytest.raises(ConfigError, match="only under vendor ID"):
        parse_yaml(yaml_text)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["43", "22.43", "24.43", "25.43", "60.43", "202.43"]).flatmap(
    lambda p: st.tuples(st.just(p), tlv_of(lookup(p), 2))))
def test_vendor_specific_round_trips_in_every_form(drawn):
    from hfcprov.config import ConfigTree, Tlv

    path, node = drawn  # a VendorSpecific, put in a file where it belongs
    top = node if path == "43" else Tlv(int(path.split(".")[0]), None, [node])
    tree = ConfigTree([top])
    data = encode(tree)
    back = decode(data)
    assert back == tree and back.warnings == [] and encode(back) == data
    for form, parse in ((render_text(back), parse_text), (render_yaml(back), parse_yaml)):
        assert parse(form) == tree
