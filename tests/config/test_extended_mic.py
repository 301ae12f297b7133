"""The Extended CMTS MIC (TLV 43.6, MULPI C.1.1.18.1.6 and D.2.1) computed and verified, checked against an
HMAC computed here from the file's bytes alone: explicit (the digest in 43.6.3, TLV 7 the pre-3.0 MIC) and
implicit (TLV 7 is the extended MIC), with holes stamped per request, and refused where it cannot be."""

import hashlib
import hmac

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hfcprov.config import ConfigError, ConfigTree, content_items, decode, encode, parse_text, verify
from hfcprov.config.framing import assemble, covered_types, extended_mic_bitmap, extended_mic_item, prepare
from hfcprov.config.text import render_text

from .strategies import trees
from .test_framing import SPEC_ORDER, walk

SECRET = b"emic-secret"
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOP_CODES = st.sets(st.sampled_from([1, 2, 3, 4, 6, 7, 9, 11, 17, 18, 19, 20, 22, 23, 24, 25, 43, 45, 60, 64, 70]))


def independent(data: bytes, secret: bytes, codes: set[int], explicit: bool):
    """(the extended MIC of ``data`` computed from its bytes, the pre-3.0 CMTS MIC, TLV 7 as written,
    43.6.3 as written or None)."""
    tlvs = walk(data)
    digest_at = None
    if explicit:  # the CableLabs TLV 43 holding 43.6, and 43.6.3's value in it
        pos, _, whole = next(t for t in tlvs if t[1] == 43 and b"\x06" in t[2] and t[2][2:7] == bytes.fromhex("0803ffffff"))
        # 43 L | 08 03 ffffff | 06 L | 01 01 type | 02 n bitmap | 03 10 digest (as extended_mic_item writes it)
        assert whole[7] == 6 and whole[9:11] == b"\x01\x01" and whole[12] == 2
        setting = 16 + whole[13]
        digest_at = (pos + setting, pos + setting + 16)
    zeroed = data if digest_at is None else data[:digest_at[0]] + bytes(16) + data[digest_at[1]:]
    emic = hmac.new(secret, digestmod="md5")
    for pos, code, whole in walk(zeroed):
        if code in codes - {0, 7} and not (explicit and code == 6):
            emic.update(whole)
    pre3 = hmac.new(secret, digestmod="md5")
    for code in SPEC_ORDER:
        for _, t, whole in tlvs:
            if t == code:
                pre3.update(whole)
    tlv7 = next(whole[2:] for _, t, whole in tlvs if t == 7)
    return emic.digest(), pre3.digest(), tlv7, data[digest_at[0]:digest_at[1]] if digest_at else None


@SETTINGS
@given(trees(max_tlvs=6), TOP_CODES, st.booleans())
def test_extended_mic_is_the_hmac_of_the_covered_tlvs_in_file_order(tree, codes, explicit):
    tree.tlvs = [t for t in tree.tlvs if t.code != 43]  # the one Extended CMTS MIC setting is the item added here
    try:
        items = content_items(tree.tlvs)
    except ConfigError:
        return  # a drawn value too long for its TLV
    data = assemble(items + [extended_mic_item(codes, explicit=explicit)], SECRET)
    emic, pre3, tlv7, digest = independent(data, SECRET, codes, explicit)
    if explicit:
        assert digest == emic and tlv7 == pre3
    else:
        assert tlv7 == emic
    verify(data, SECRET)
    assert encode(decode(data), SECRET) == data and encode(parse_text(render_text(decode(data))), SECRET) == data
    with pytest.raises(ConfigError, match="mismatch"):
        verify(data, b"another secret")


@SETTINGS
@given(st.sampled_from([19, 20]), st.booleans(), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_a_stamped_hole_the_bitmap_covers_is_in_the_extended_mic(hole_code, explicit, stamp, address):
    tree = parse_text("Main { NetworkAccess 1; MaxCPE 3; UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; } }")
    items = content_items(tree.tlvs) + [extended_mic_item({3, 19, 20, 24, 43}, explicit=explicit)]
    prepared = prepare(items, SECRET, holes=(19, 20))
    value = stamp if hole_code == 19 else ".".join(str(b) for b in address.to_bytes(4, "big"))
    data = prepared.fill({hole_code: value})
    verify(data, SECRET)
    again = prepared.fill({hole_code: value})
    assert again == data  # the cached digest states do not leak from one fill into the next
    stamped = decode(data)
    assert encode(stamped, SECRET) == data


def test_bitmap_bits_count_from_the_first_bytes_top_bit():
    assert extended_mic_bitmap({1, 7, 8}) == bytes((0b01000001, 0b10000000))
    assert covered_types(bytes((0b11000000,))) == {1}  # bit 0 is reserved
    assert covered_types(extended_mic_bitmap({3, 24, 43, 70})) == {3, 24, 43, 70}


def test_a_one_byte_placeholder_digest_becomes_the_digest_and_the_c_tools_way_is_kept_on_request():
    text = ("Main { NetworkAccess 1; VendorSpecific { VendorIdentifier 0xffffff; ExtendedCMTSMICConfiguration {"
            " ExtendedCMTSMICHMACDigestType 1; ExtendedCMTSMICHMACBitmap 0x10; ExtendedCMTSMICHMACDigest 0x00; } } }")
    tree = parse_text(text)
    data = encode(tree, SECRET)
    digest = decode(data).find("43.6.3")[0].value
    assert len(digest) == 16 and digest == independent(data, SECRET, {3}, True)[0]
    verify(data, SECRET)
    as_given = assemble(content_items(tree.tlvs), SECRET, extended_mic=False)  # what the docsis C tool writes
    assert decode(as_given).find("43.6.3")[0].value == b"\x00"
    assert decode(as_given).cmts_mic == independent(as_given, SECRET, set(), False)[1]


def test_an_hmac_type_hfcprov_cannot_compute_is_one_line_with_a_secret_and_written_as_given_without():
    tree = parse_text("Main { NetworkAccess 1; VendorSpecific { VendorIdentifier 0xffffff;"
                      " ExtendedCMTSMICConfiguration { ExtendedCMTSMICHMACDigestType 2; ExtendedCMTSMICHMACBitmap 0x10; } } }")
    with pytest.raises(ConfigError, match=r"HMAC type 2 \(MMH16-sigma-n HMAC \(SECv3.0\)\): hfcprov computes type 1") as err:
        encode(tree, SECRET)
    assert err.value.path == "43.6.1"
    assert decode(encode(tree)).find("43.6.1")[0].value == 2
    assert decode(assemble(content_items(tree.tlvs), SECRET, extended_mic=False)).find("43.6.1")[0].value == 2


def test_another_vendors_tlv_43_6_is_not_an_extended_mic():
    tree = ConfigTree(parse_text("Main { NetworkAccess 1; VendorSpecific { VendorIdentifier 0x00407b;"
                                 " GenericTLV TlvCode 6 TlvLength 3 TlvValue 0x010101; } }").tlvs)
    data = encode(tree, SECRET)
    assert decode(data).cmts_mic == independent(data, SECRET, set(), False)[1]
