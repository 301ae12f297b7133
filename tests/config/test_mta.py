"""PacketCable MTA config files: TLV 254 delimiters, TLV 11 SNMP objects with TLV 64 (2-byte length) for
long ones, the configuration hash (SHA-1 of the file without it, in pktcMtaDevProvConfigHash.0), byte-exact
round trips; checked against bytes written out here and, when built, the docsis C tool's -p output."""

import hashlib
import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hfcprov.config import ConfigError, ConfigTree, Tlv, VarBind, encode, parse_text
from hfcprov.config.forms import parse_any, render_yaml
from hfcprov.config.mta import decode_mta, encode_mta, verify_mta
from hfcprov.config.text import render_text

from .. import support
from .strategies import varbinds

H = bytes.fromhex
TEXT = """Main
{
	MtaConfigDelimiter 1;
	SnmpMibObject 1.3.6.1.4.1.4491.2.2.1.1.1.1.0 Integer 1;
	SnmpMibObject 1.3.6.1.4.1.4491.2.2.1.1.1.3.0 String "%s";
	MtaConfigDelimiter 255;
}
""" % ("x" * 300)
# pktcMtaDevEnabled.0 Integer 1, written out by hand: SEQUENCE { OID 1.3.6.1.4.1.4491.2.2.1.1.1.1.0, INTEGER 1 }
ENABLED = H("0b15" "3013" "060e2b06010401a30b020201010101" "00" "020101")
HASH_PREFIX = H("0b28" "3026" "060e2b06010401a30b0202010102" "0700" "0414")  # pktcMtaDevProvConfigHash.0, 20 bytes


def long_object() -> bytes:
    value = b"x" * 300
    body = H("060e2b06010401a30b020201010103" "00") + b"\x04\x82\x01\x2c" + value
    return b"\x40" + (len(body) + 4).to_bytes(2, "big") + b"\x30\x82" + len(body).to_bytes(2, "big") + body


def test_framing_written_out_by_hand():
    data = encode(parse_text(TEXT))
    assert data == H("fe0101") + ENABLED + long_object() + H("fe01ff")  # no MICs, no 0xFF, no padding
    tree = decode_mta(data)
    assert tree.warnings == [] and tree.tlvs[2].wide and encode(tree) == data


def test_configuration_hash_is_sha1_of_the_file_without_it():
    data = encode_mta(parse_text(TEXT), hash="na")
    plain = H("fe0101") + ENABLED + long_object() + H("fe01ff")
    assert data == plain[:-3] + HASH_PREFIX + hashlib.sha1(plain).digest() + H("fe01ff")
    assert verify_mta(data) == "na"
    tree = parse_any(data)
    assert tree.warnings == [] and encode(tree) == data
    bad = bytearray(data)
    bad[len(H("fe0101") + ENABLED) - 1] ^= 1  # the Integer 1 becomes 0
    assert "hash (na) mismatch" in str(parse_any(bytes(bad)).warnings[0])
    with pytest.raises(ConfigError, match="mismatch"):
        verify_mta(bytes(bad))
    assert encode(parse_any(bytes(bad))) != bytes(bad)  # re-encoding recomputes the hash
    verify_mta(encode(parse_any(bytes(bad))))


def test_text_and_yaml_forms_round_trip_byte_exact():
    data = encode_mta(parse_text(TEXT), hash="eu")
    tree = decode_mta(data)
    for form in (render_text(tree), render_text(tree, c_tool=True), render_yaml(tree)):
        assert encode(parse_any(form)) == data


def test_a_text_mta_file_starts_with_its_delimiter_and_one_without_its_end_is_written_as_decoded():
    with pytest.raises(ConfigError, match="MtaConfigDelimiter 1 and ends with MtaConfigDelimiter 255"):
        encode_mta(parse_text("Main { SnmpMibObject 1.3.6.1.2.1.1.4.0 Integer 1; }"))
    # decoded, a file without its end delimiter is a warning and is written back as it was, from its
    # text too (encode accepts what decode writes; lint names the missing delimiter)
    data = H("fe0101") + ENABLED
    tree = decode_mta(data)
    assert "ends with MtaConfigDelimiter 255" in str(tree.warnings[0]) and encode(tree) == data
    assert encode(parse_text(render_text(tree))) == data


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(varbinds(), st.booleans(), st.integers(0, 400)), max_size=6),
       st.sampled_from([None, "na", "eu"]))
def test_mta_files_round_trip_whatever_the_objects(objects, hash_kind):
    tlvs = [Tlv(254, 1)]
    for vb, wide, pad in objects:
        if vb.type == "OctetString":
            vb = VarBind(vb.oid, vb.type, vb.value + b"p" * pad)  # some over 255 bytes: TLV 64
        tlvs.append(Tlv(11, vb, wide=wide))
    tree = ConfigTree(tlvs + [Tlv(254, 255)])
    data = encode_mta(tree, hash=hash_kind)
    back = decode_mta(data)
    assert back.warnings == [] and encode(back) == data
    assert [t.value for t in back.tlvs if not (hash_kind and t is back.tlvs[-2])] == [t.value for t in tree.tlvs]
    assert encode(parse_text(render_text(back))) == encode_mta(parse_text(render_text(back)))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_mutated_mta_files_raise_only_config_errors(data):
    blob = bytearray(encode_mta(parse_text(TEXT), hash="na"))
    for _ in range(data.draw(st.integers(1, 4))):
        blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    try:
        tree = decode_mta(bytes(blob))
    except ConfigError:
        return
    assert encode(tree) is not None


@pytest.mark.slow
def test_cli_encode_decode_verify(tmp_path):
    src = tmp_path / "mta.cfg"
    src.write_text(TEXT)
    out = tmp_path / "mta.bin"
    run = lambda *a: subprocess.run([sys.executable, "-m", "hfcprov", "config", *map(str, a)], capture_output=True,
                                    text=True, cwd=support.REPO, timeout=60)
    r = run("encode", src, "-o", out, "--mta", "--hash", "na")
    assert r.returncode == 0, r.stderr
    r = run("verify", out)
    assert r.returncode == 0 and "MTA file, configuration hash na" in r.stdout
    r = run("decode", out)
    assert r.returncode == 0 and r.stdout.count("MtaConfigDelimiter") == 2 and "1.3.6.1.4.1.4491.2.2.1.1.2.7.0" in r.stdout
    data = bytearray(out.read_bytes())
    data[10] ^= 0x01
    out.write_bytes(bytes(data))
    r = run("verify", out)
    assert r.returncode == 1 and "Traceback" not in r.stderr


VOICE = """Main
{
	MtaConfigDelimiter 1;
	SnmpMibObject 1.3.6.1.4.1.4491.2.2.1.1.1.1.0 Integer 1;
	SnmpMibObject 1.3.6.1.4.1.4491.2.2.2.1.1.1.0 Integer 26;
	SnmpMibObject 1.3.6.1.4.1.4491.2.2.2.1.1.2.0 Integer 46;
	SnmpMibObject 1.3.6.1.4.1.4491.2.2.3.1.1.1.9 String "[192.168.28.40]";
	SnmpMibObject 1.3.6.1.4.1.4491.2.2.3.1.1.2.9 Integer 2427;
	SnmpMibObject 1.3.6.1.4.1.4491.2.2.1.1.1.7.0 IPAddress 10.20.30.40;
	SnmpMibObject 1.3.6.1.4.1.4491.2.2.1.1.1.8.0 ObjectID 1.3.6.1.4.1.4491;
	SnmpMibObject 1.3.6.1.4.1.4491.2.2.2.1.2.1.0 HexString 0x003ff00000000000;
	SnmpMibObject 1.3.6.1.4.1.4491.2.2.2.1.2.2.0 Gauge32 3000;
	SnmpMibObject 1.3.6.1.4.1.4491.2.2.2.1.2.3.0 TimeTicks 600;
	SnmpMibObject 1.3.6.1.4.1.4491.2.2.2.1.2.4.0 String "%s";
	MtaConfigDelimiter 255;
}
""" % ("(xx.T|[2-9]xxxxxx|1[2-9]xxxxxxxxx|011x.T|[*#]xx)" * 12)


@pytest.mark.parametrize("text", [TEXT, VOICE], ids=["tlv64", "voice"])
def test_encodes_like_the_c_tool_p(tmp_path, text):
    tool = os.environ.get("HFCPROV_DOCSIS_TOOL") or shutil.which("docsis")
    if not tool:
        pytest.skip("the docsis C tool is not built (set HFCPROV_DOCSIS_TOOL=/path/to/docsis)")
    src = tmp_path / "mta.cfg"
    src.write_text(render_text(parse_text(text), c_tool=True))
    for flag, kind in ((None, None), ("-na", "na"), ("-eu", "eu")):
        out = tmp_path / f"{kind}.bin"
        subprocess.run([tool, *([flag] if flag else []), "-p", src, out], check=True, capture_output=True, timeout=60)
        assert out.read_bytes() == encode_mta(parse_text(text), hash=kind)
        assert encode(decode_mta(out.read_bytes())) == out.read_bytes()
