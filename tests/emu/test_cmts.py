"""The emulated CMTS's registration decision, without a plant: the codec's MICs, TLV 20/59 against the
address the modem holds."""

from hfcprov.config import encode, parse_text
from hfcprov.emu.cmts import check_registration

CONFIG = """Main { NetworkAccess 1; %s
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 2000000; } }"""


def test_registration_check_uses_the_codec_mics_and_the_held_address():
    good = encode(parse_text(CONFIG % "TftpModemAddress 10.1.0.5;"), secret=b"s3cret")
    assert check_registration(good, {4: "10.1.0.5"}, b"s3cret").accepted
    assert "CMTS MIC (TLV 7) mismatch" in check_registration(good, {4: "10.1.0.5"}, b"other").reason
    assert "holds 10.1.0.6" in check_registration(good, {4: "10.1.0.6"}, b"s3cret").reason
    assert "no IPv4 address" in check_registration(good, {6: "fd00::5"}, b"s3cret").reason
    unsigned = encode(parse_text(CONFIG % ""))
    assert "no CMTS MIC" in check_registration(unsigned, {4: "10.1.0.5"}, b"s3cret").reason
    assert check_registration(unsigned, {4: "10.1.0.5"}, None).accepted  # a CMTS configured without a secret
    broken = bytearray(good)
    broken[-20] ^= 1  # inside the CM MIC
    assert not check_registration(bytes(broken), {4: "10.1.0.5"}, b"s3cret").accepted


def test_ipv6_stamp_is_checked_against_the_ipv6_lease():
    v6 = encode(parse_text(CONFIG % "TFTPProvisionedModemIPv6Address fd00:10:2::2;"), secret=b"k")
    assert check_registration(v6, {6: "fd00:10:2::2"}, b"k").accepted
    assert "TLV 59 says fd00:10:2::2, but the modem holds fd00:10:2::9" in check_registration(
        v6, {6: "fd00:10:2::9"}, b"k").reason
