"""``hfcprov config`` as a user runs it: a real subprocess, one-line errors, no partial output."""

import json
import subprocess
import sys

import pytest

from hfcprov.config import decode, encode, parse_text, read_config, render_text

from .. import support

EXAMPLE = support.REPO / "examples" / "buffer-control.cfg"


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hfcprov", "config", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd or support.REPO, timeout=60)


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "secret"
    path.write_bytes(b"Sh4red-secret\r\n")  # trailing CR/LF is not part of the key
    return path


def test_encode_decode_verify_round_trip(tmp_path, secret):
    out = tmp_path / "bc.cm"
    r = run("encode", EXAMPLE, "-o", out, "--secret-file", secret)
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert decode(data, b"Sh4red-secret") == read_config(EXAMPLE)
    r = run("verify", out, "--secret-file", secret)
    assert r.returncode == 0 and "OK" in r.stdout
    r = run("decode", out, "--secret-file", secret)
    assert r.returncode == 0 and "TargetBuffer 32768;" in r.stdout
    assert parse_text(r.stdout) == read_config(EXAMPLE)
    for fmt in ("yaml", "json"):
        r = run("decode", out, "--format", fmt)
        assert r.returncode == 0 and "TargetBuffer" in r.stdout
    assert json.loads(run("decode", out, "--format", "json").stdout)["Main"][0] == {"NetworkAccess": 1}


def test_wrong_secret_is_one_line_naming_the_cmts_mic(tmp_path, secret):
    out = tmp_path / "bc.cm"
    assert run("encode", EXAMPLE, "-o", out, "--secret-file", secret).returncode == 0
    wrong = tmp_path / "wrong"
    wrong.write_text("not-it\n")
    wrong.chmod(0o600)  # a secret others can read is warned about (hfcprov.secretfile): not this test's line
    for cmd in ("verify", "decode"):
        r = run(cmd, out, "--secret-file", wrong)
        assert r.returncode == 1
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
        assert "CMTS MIC (TLV 7) mismatch" in r.stderr and "not-it" not in r.stderr + r.stdout


def test_bad_source_leaves_no_output_file(tmp_path):
    src = tmp_path / "tier.cfg"
    src.write_text("Main {\n  NetworkAccess 1;\n  UsServiceFlow { BufferControl { TargetBuffer -5; } }\n}\n")
    out = tmp_path / "tier.cm"
    r = run("encode", src, "-o", out)
    assert r.returncode == 1
    assert r.stderr.strip().endswith("out of range") or "TLV 24.35.2" in r.stderr
    assert f"{src}:3" in r.stderr and r.stderr.count("\n") == 1
    assert not out.exists() and list(tmp_path.iterdir()) == [src]


def test_batch_encode_to_a_directory_is_all_or_nothing(tmp_path):
    good = tmp_path / "a.cfg"
    good.write_text("Main { NetworkAccess 1; }")
    other = tmp_path / "b.yaml"
    other.write_text("Main:\n  - NetworkAccess: 0\n")
    bad = tmp_path / "c.cfg"
    bad.write_text("Main { NetworkAccess 1 }")
    outdir = tmp_path / "out"
    r = run("encode", good, other, bad, "-o", outdir)
    assert r.returncode == 1 and "c.cfg:1" in r.stderr
    assert not outdir.exists() or not any(outdir.iterdir())
    r = run("encode", good, other, "-o", outdir)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in outdir.iterdir()) == ["a.cm", "b.cm"]
    assert decode((outdir / "b.cm").read_bytes()).tlvs[0].value == 0
    r = run("decode", outdir / "a.cm", outdir / "b.cm", "--format", "yaml", "-o", tmp_path / "yaml")
    assert r.returncode == 0 and sorted(p.name for p in (tmp_path / "yaml").iterdir()) == ["a.yaml", "b.yaml"]


def test_a_batch_over_several_chunks_gives_each_file_its_own_bytes_and_stops_at_the_first_bad_one(tmp_path):
    """Sources go through read, lint and assemble a chunk at a time: each file is still its own source's
    encoding, and a bad source (a syntax error, or one that cannot be read) past the first chunk names
    itself and leaves no file at all."""
    texts = [f"Main {{ NetworkAccess 1; MaxCPE {1 + i % 16}; SnmpMibObject sysLocation.0 String \"n{i}\"; }}"
             for i in range(70)]
    sources = []
    for i, text in enumerate(texts):
        sources.append(tmp_path / f"m{i:02d}.cfg")
        sources[-1].write_text(text)
    outdir = tmp_path / "out"
    r = run("encode", *sources, "-o", outdir, "--no-cmts-mic")
    assert r.returncode == 0, r.stderr
    for src, text in zip(sources, texts):
        assert (outdir / f"{src.stem}.cm").read_bytes() == encode(parse_text(text))
    sources[67].write_text("Main { NetworkAccess 1 }")
    r = run("encode", *sources, "-o", tmp_path / "bad", "--no-cmts-mic")
    errors = [line for line in r.stderr.splitlines() if not line.startswith("hfcprov: warning:")]
    assert r.returncode == 1 and len(errors) == 1 and "m67.cfg:1" in errors[0]
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())
    sources[67].write_text(texts[67])
    r = run("encode", *sources[:66], tmp_path / "missing.cfg", *sources[66:], "-o", tmp_path / "gone",
            "--no-cmts-mic")
    assert r.returncode == 1 and "missing.cfg" in r.stderr and "cannot read" in r.stderr
    assert not (tmp_path / "gone").exists() or not any((tmp_path / "gone").iterdir())


def test_decode_of_a_truncated_file_names_offset_and_path(tmp_path):
    data = encode(read_config(EXAMPLE))
    cut = tmp_path / "cut.cm"
    cut.write_bytes(data[:40])
    r = run("decode", cut)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"hfcprov: error: {cut}, byte ") and "TLV 17" in r.stderr


def test_diff_is_semantic_by_tlv_path(tmp_path):
    a = tmp_path / "a.cm"
    a.write_bytes(encode(read_config(EXAMPLE)))
    b = tmp_path / "b.cfg"
    b.write_text(render_text(read_config(EXAMPLE)).replace("TargetBuffer 4096;", "TargetBuffer 8192;")
                 .replace("\tMaxCPE 4;\n", ""))
    r = run("diff", a, b)
    assert r.returncode == 4  # found different: not 1, the status of an error
    assert r.stdout.splitlines() == ["- 18 MaxCPE 4", "~ 24[1].35.2 TargetBuffer: 4096 -> 8192"]
    assert run("diff", a, EXAMPLE).returncode == 0


def test_tlvs_listing_is_greppable():
    r = run("tlvs", "buffer")
    lines = r.stdout.splitlines()
    assert r.returncode == 0
    assert any(line.startswith("24.35.2 ") and "TargetBuffer" in line and "uint32" in line for line in lines)
    assert any(line.startswith("68 ") and "DefaultUpstreamTargetBuffer" in line for line in lines)
    assert len(run("tlvs").stdout.splitlines()) == 1542
    assert run("tlvs", "24.35").stdout.count("\n") == 4


def test_lenient_decode_warns_strict_refuses_and_empty_files_fail(tmp_path):
    good = encode(parse_text("Main { NetworkAccess 1; UsServiceFlow { ServiceClassName \"gold\"; } }"))
    odd = good.replace(b"gold\0", b"gold!")  # no trailing NUL: a known field that does not fit its type
    path = tmp_path / "odd.cm"
    path.write_bytes(odd)
    r = run("decode", path)
    assert r.returncode == 0 and "GenericTLV TlvCode 4" in r.stdout
    warnings = r.stderr.strip().splitlines()
    assert any("odd.cm, byte 5, TLV 24.4" in w and "NUL-terminated" in w for w in warnings)
    assert any("CM MIC (TLV 6) mismatch" in w for w in warnings)
    r = run("decode", "--strict", path)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "TLV 24.4" in r.stderr
    back = tmp_path / "back.cm"
    assert run("encode", path, "-o", back).returncode == 0
    assert back.read_bytes()[:-24] == odd[:-24]  # the odd field written back as read; the CM MIC recomputed
    empty = tmp_path / "empty.cm"
    empty.write_bytes(b"")
    for cmd in (("decode", empty), ("encode", empty, "-o", tmp_path / "e.cm")):
        r = run(*cmd)
        assert r.returncode == 1 and "empty" in r.stderr and not (tmp_path / "e.cm").exists()


def test_encoding_yaml_that_carries_a_cmts_mic_needs_the_secret(tmp_path, secret):
    cm = tmp_path / "a.cm"
    assert run("encode", EXAMPLE, "-o", cm, "--secret-file", secret).returncode == 0
    yml = tmp_path / "a.yaml"
    assert run("decode", cm, "--format", "yaml", "-o", yml).returncode == 0
    r = run("encode", yml, "-o", tmp_path / "b.cm")
    assert r.returncode == 1 and "carries a CMTS MIC" in r.stderr and "a.yaml" in r.stderr
    assert run("encode", yml, "-o", tmp_path / "b.cm", "--secret-file", secret).returncode == 0
    assert (tmp_path / "b.cm").read_bytes() == cm.read_bytes()


VENDOR_MIB = """ACME-CABLE-MIB DEFINITIONS ::= BEGIN
IMPORTS enterprises, OBJECT-TYPE, Integer32 FROM SNMPv2-SMI;
acme OBJECT IDENTIFIER ::= { enterprises 99999 }
acmeTurbo OBJECT-TYPE
    SYNTAX Integer32
    MAX-ACCESS read-write
    STATUS current
    DESCRIPTION "Turbo mode."
    ::= { acme 1 }
END
"""


def test_mib_dir_resolves_vendor_oid_names(tmp_path):
    mibs = tmp_path / "mibs"
    mibs.mkdir()
    (mibs / "ACME-CABLE-MIB").write_text(VENDOR_MIB)
    src = tmp_path / "a.cfg"
    src.write_text("Main {\n NetworkAccess 1;\n SnmpMibObject acmeTurbo.0 Integer 1;\n}\n")
    r = run("encode", src, "-o", tmp_path / "a.cm")
    assert r.returncode == 1 and "a.cfg:3" in r.stderr and "acmeTurbo" in r.stderr
    r = run("encode", src, "-o", tmp_path / "a.cm", "--mib-dir", mibs)
    assert r.returncode == 0, r.stderr
    r = run("decode", tmp_path / "a.cm", "--names", "--mib-dir", mibs)
    assert "SnmpMibObject acmeTurbo.0 Integer 1;" in r.stdout
    assert "1.3.6.1.4.1.99999.1.0 Integer 1" in run("decode", tmp_path / "a.cm").stdout


def test_verify_and_diff_json_for_scripts(tmp_path, secret):
    good = tmp_path / "good.cm"
    assert run("encode", EXAMPLE, "-o", good, "--secret-file", secret).returncode == 0
    bad = tmp_path / "bad.cm"
    data = bytearray(good.read_bytes())
    data[5] ^= 0x01  # a value byte: both MICs now disagree with the content
    bad.write_bytes(bytes(data))
    r = run("verify", good, bad, "--secret-file", secret, "--json")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    rows = json.loads(r.stdout)
    assert [(x["file"], x["kind"], x["ok"]) for x in rows] == [(str(good), "cm", True), (str(bad), "cm", False)]
    assert "MIC" in rows[1]["error"] and "error" not in rows[0]
    other = tmp_path / "other.cfg"
    other.write_text(render_text(read_config(EXAMPLE)).replace("\tMaxCPE 4;\n", ""))
    r = run("diff", good, other, "--json")
    assert r.returncode == 4
    assert json.loads(r.stdout) == {"a": str(good), "b": str(other), "same": False, "differences": ["- 18 MaxCPE 4"]}
    r = run("diff", good, EXAMPLE, "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["same"] is True
