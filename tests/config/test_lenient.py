"""Lenient decode over any well-framed bytes under any known TLV path: decoding never refuses, a value that
does not fit its type is kept raw with a warning naming its offset and path, and the file re-encodes byte
for byte; every form of the result parses back."""

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.config import ConfigError, decode, encode, parse_text
from hfcprov.config.dictionary import ROOT
from hfcprov.config.forms import parse_yaml, render_yaml
from hfcprov.config.text import render_text

LEAVES = [s for s in ROOT.walk() if not s.compound and s.path.split(".")[0] not in ("0", "6", "7", "254", "255")
          and not (s.path.isdigit() and int(s.path) in (32, 33, 81, 82))]


def wrapped(path: str, raw: bytes) -> tuple[bytes, int]:
    """The TLV at ``path`` with value ``raw`` inside its parents, and the offset of the leaf in the result."""
    codes = [int(c) for c in path.split(".")]
    tlv = bytes((codes[-1], len(raw))) + raw
    for code in reversed(codes[:-1]):
        tlv = bytes((code, len(tlv))) + tlv
    return tlv, 3 + 2 * (len(codes) - 1)


def signed(content: bytes) -> bytes:
    data = content + b"\x06\x10" + hashlib.md5(content).digest() + b"\xff"
    return data + b"\0" * (-len(data) % 4)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(LEAVES), st.binary(max_size=24))
def test_any_value_under_any_known_path_decodes_and_reencodes_byte_exact(spec, raw):
    leaf, at = wrapped(spec.path, raw)  # no VendorIdentifier: sub-TLVs of 43 are typed as CableLabs'
    data = signed(b"\x03\x01\x01" + leaf)
    tree = decode(data)
    assert encode(tree) == data
    if spec.type in ("snmp_varbind_ber", "ber_oid", "ber_oid+uint8"):
        fits = spec.length_ok(len(raw)) is None  # BER we would not write is kept byte for byte, silently
    else:
        try:
            spec.decode(raw)
            fits = True
        except ConfigError:
            fits = False
    if fits:
        assert tree.warnings == []
    else:
        (warning,) = tree.warnings
        assert (warning.path, warning.offset) == (spec.path, at) and "kept as raw bytes" in warning.message
    assert parse_text(render_text(tree)) == tree and parse_yaml(render_yaml(tree)) == tree
