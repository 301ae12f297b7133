"""One shared secret per CMTS: each modem's file carries the CMTS MIC of the CMTS it registers with,
in the bulk build and in the dynamic TFTP server; a CMTS without a secret fails its rows, never
silently; files without a CMTS MIC are counted and warned about once; secrets never printed."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from hfcprov.config import ConfigError, verify, verify_cm_mic
from hfcprov.tftp import TftpServer, fetch_many
from hfcprov.tftp.dynamic import load_dynamic
from hfcprov.tftp.protocol import TftpErrors
from hfcprov.tiers.bulk import build
from hfcprov.tiers.secrets import SecretMap, SecretMapError

EAST, WEST, DEFAULT = b"east-secret-1", b"west-secret-2", b"default-secret-3"


@pytest.fixture
def site(tmp_path):
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "east.key").write_bytes(EAST + b"\n")
    (tmp_path / "keys" / "west.key").write_bytes(WEST + b"\r\n")
    (tmp_path / "default.key").write_bytes(DEFAULT)
    (tmp_path / "secrets.yaml").write_text("cmts-east: keys/east.key\ncmts-west: keys/west.key\n")
    (tmp_path / "modems.csv").write_text("mac,tier,cmts\n001095000001,res-50x5,cmts-east\n"
                                         "001095000002,res-50x5,cmts-west\n001095000003,res-50x5,\n"
                                         "001095000004,res-50x5,cmts-north\n")
    return tmp_path


def signed_by(data: bytes) -> bytes | None:
    for secret in (EAST, WEST, DEFAULT):
        try:
            verify(data, secret)
            return secret
        except ConfigError:
            continue
    verify_cm_mic(data)
    return None


def test_build_signs_each_file_with_its_cmts_secret(site):
    secrets = SecretMap.load(site / "secrets.yaml")
    summary = build(site / "modems.csv", site / "out", secret=DEFAULT, secrets=secrets)
    assert [signed_by((site / "out" / f"00109500000{i}.cm").read_bytes()) for i in (1, 2, 3)] == [EAST, WEST, DEFAULT]
    (where, message), = summary.failed  # a CMTS the map does not have: that row fails, nothing unsigned
    assert where == "modems.csv line 5" and "cmts 'cmts-north' has no secret in" in message
    assert not (site / "out" / "001095000004.cm").exists() and summary.unsigned == 0
    manifest = (site / "out" / "manifest.json").read_bytes()
    assert EAST not in manifest and WEST not in manifest and DEFAULT not in manifest
    # the same rendered text on two CMTSs is two files: the cache is per CMTS
    assert (site / "out" / "001095000001.cm").read_bytes() != (site / "out" / "001095000002.cm").read_bytes()


def test_a_changed_secret_rebuilds_only_that_cmts(site):
    secrets = SecretMap.load(site / "secrets.yaml")
    build(site / "modems.csv", site / "out", secret=DEFAULT, secrets=secrets)
    (site / "keys" / "west.key").write_bytes(b"rotated-west")
    again = build(site / "modems.csv", site / "out", secret=DEFAULT, secrets=SecretMap.load(site / "secrets.yaml"))
    assert (again.built, again.unchanged) == (1, 2)
    verify((site / "out" / "001095000002.cm").read_bytes(), b"rotated-west")


def test_secret_map_errors_name_the_cmts_not_the_secret(site):
    (site / "bad.yaml").write_text("cmts-east: keys/missing.key\n")
    with pytest.raises(ConfigError, match="missing.key"):
        SecretMap.load(site / "bad.yaml")
    (site / "bad.yaml").write_text("- a list\n")
    with pytest.raises(SecretMapError, match="mapping of CMTS name to secret file"):
        SecretMap.load(site / "bad.yaml")
    m = SecretMap.load(site / "secrets.yaml", DEFAULT)
    assert EAST.decode() not in repr(m) and DEFAULT.decode() not in repr(m)
    assert m.secret_for({"cmts": "cmts-east"}) == EAST and m.secret_for({}) == DEFAULT
    assert SecretMap({}, DEFAULT).secret_for({"cmts": "anything"}) == DEFAULT  # no map: the column means nothing


def hfcprov(*args):
    return subprocess.run([sys.executable, "-m", "hfcprov", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def test_build_cli_warns_once_about_files_without_a_cmts_mic(site):
    (site / "plain.csv").write_text("mac,tier\n001095000001,res-50x5\n001095000002,res-50x5\n")
    r = hfcprov("build", "-i", site / "plain.csv", "-o", site / "o1")
    assert r.returncode == 0
    warnings = [line for line in r.stderr.splitlines() if "warning" in line]
    assert warnings == [("hfcprov: warning: 2 of 2 files carry no CMTS MIC (TLV 7): a CMTS refuses such a modem's "
                        "registration; give --secret-file or --secret-map, or --no-cmts-mic if that is intended")]
    r = hfcprov("build", "-i", site / "plain.csv", "-o", site / "o2", "--no-cmts-mic")
    assert r.returncode == 0 and "warning" not in r.stderr
    r = hfcprov("build", "-i", site / "modems.csv", "-o", site / "o3", "--secret-map", site / "secrets.yaml",
                "--json")
    assert r.returncode == 3  # the cmts-north row
    assert "1 of 3 files carry no CMTS MIC" in r.stderr  # the row without a CMTS, and no --secret-file
    assert "give --secret-file for the rows that name no CMTS in --cmts-column 'cmts'" in r.stderr
    for secret in (EAST, WEST):
        assert secret.decode() not in r.stderr + r.stdout
    r = hfcprov("build", "-i", site / "plain.csv", "-o", site / "o4", "--no-cmts-mic", "--secret-file",
                site / "default.key")
    assert r.returncode == 2 and "contradicts" in r.stderr


def test_dynamic_tftp_signs_with_the_modems_cmts_secret(site):
    (site / "root").mkdir()
    (site / "dyn.yaml").write_text("inventory: modems.csv\nsecret_map: secrets.yaml\nsecret_file: default.key\n"
                                   "processes: 0\n")
    builder = load_dynamic(site / "dyn.yaml")
    assert builder.signs and EAST.decode() not in repr(builder)
    log = io.StringIO()
    with TftpServer(site / "root", "127.0.0.1", 0, dynamic=builder, log=log) as srv:
        got = fetch_many("127.0.0.1", srv.port, [f"00109500000{i}.cm" for i in (1, 2, 3, 4)], timeout=2.0)
    assert [signed_by(f.data) for f in got[:3]] == [EAST, WEST, DEFAULT]
    assert got[3].error_code == TftpErrors.NotDefined  # its CMTS has no secret: an error, not an unsigned file
    assert "cmts 'cmts-north' has no secret" in log.getvalue()
    for secret in (EAST, WEST, DEFAULT):
        assert secret.decode() not in log.getvalue()
