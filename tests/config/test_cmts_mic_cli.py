"""No silent CMTS-refusable files: `config encode` without a secret warns once (unless told it is
intended), `config verify` without a secret checks the CM MIC and says the CMTS MIC was not checked."""

from __future__ import annotations

import json
import subprocess
import sys

from hfcprov.config import encode, read_config

from .. import support

EXAMPLE = support.REPO / "examples" / "buffer-control.cfg"
WARNING = "no CMTS MIC (TLV 7), and a CMTS refuses such a modem's registration; --no-cmts-mic says that is intended"


def run(*args):
    return subprocess.run([sys.executable, "-m", "hfcprov", "config", *map(str, args)], capture_output=True,
                          text=True, cwd=support.REPO, timeout=60)


def test_encode_without_a_secret_warns_once_for_all_files(tmp_path):
    (tmp_path / "b.cfg").write_text(EXAMPLE.read_text())
    r = run("encode", EXAMPLE, tmp_path / "b.cfg", "-o", tmp_path)
    assert r.returncode == 0 and (tmp_path / "b.cm").exists()
    assert r.stderr.count("warning") == 1 and "the files carry " + WARNING in r.stderr
    r = run("encode", EXAMPLE, "-o", tmp_path / "one.cm")
    assert "the file carries " + WARNING in r.stderr
    r = run("encode", EXAMPLE, "-o", tmp_path / "quiet.cm", "--no-cmts-mic")
    assert r.returncode == 0 and r.stderr == ""
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n")
    r = run("encode", EXAMPLE, "-o", tmp_path / "signed.cm", "--secret-file", secret)
    assert r.returncode == 0 and r.stderr == ""
    r = run("encode", tmp_path / "signed.cm", "-o", tmp_path / "again.cm")  # a decoded binary keeps its CMTS MIC
    assert r.returncode == 0 and "warning" not in r.stderr
    r = run("encode", EXAMPLE, "-o", tmp_path / "x.cm", "--no-cmts-mic", "--secret-file", secret)
    assert r.returncode == 2 and "contradict" in r.stderr  # a usage error (issue 27's exit statuses) and not (tmp_path / "x.cm").exists()


def test_encode_of_an_mta_file_does_not_warn(tmp_path):
    src = tmp_path / "mta.cfg"
    src.write_text("Main {\n  MtaConfigDelimiter 1;\n  MtaConfigDelimiter 255;\n}\n")
    r = run("encode", src, "-o", tmp_path / "mta.bin")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr


def test_verify_without_a_secret_checks_the_cm_mic_only(tmp_path):
    good = tmp_path / "good.cm"
    good.write_bytes(encode(read_config(EXAMPLE), b"s3cret"))
    r = run("verify", good)
    assert r.returncode == 0 and r.stdout.strip() == f"{good}: CM MIC OK; CMTS MIC not checked (no --secret-file)"
    r = run("verify", good, "--json")
    assert json.loads(r.stdout) == [{"file": str(good), "kind": "cm", "ok": True, "cm_mic": "ok",
                                     "cmts_mic": "not checked"}]
    damaged = bytearray(good.read_bytes())
    damaged[5] ^= 1  # inside the content: the CM MIC no longer matches
    bad = tmp_path / "bad.cm"
    bad.write_bytes(bytes(damaged))
    r = run("verify", bad)
    assert r.returncode == 1 and "CM MIC" in r.stderr and r.stderr.count("\n") == 1
