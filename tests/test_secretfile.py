"""Secret files (SNMP communities, v3 keys, CMTS shared secrets): refused or warned about as ssh does."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hfcprov import secretfile
from hfcprov.snmp.credentials import load_credentials


@pytest.mark.parametrize("mode,level", [(0o600, None), (0o400, None), (0o640, "warn"), (0o644, "refuse"),
                                        (0o620, "refuse"), (0o602, "refuse")])
def test_what_is_too_open(tmp_path, mode, level):
    path = tmp_path / "secret"
    path.write_text("x\n")
    path.chmod(mode)
    found = secretfile.problem(path)
    assert (found[0] if found else None) == level
    if found:
        assert str(path) in found[1] and "chmod 600" in found[1] and "\n" not in found[1]


def test_a_world_readable_key_file_is_refused_a_group_readable_one_warned(tmp_path):
    keys = tmp_path / "v3.keys"
    keys.write_text("auth: auth-key-0123\npriv: priv-key-4567\n")
    keys.chmod(0o644)
    with pytest.raises(secretfile.SecretFileError, match="too open"):
        load_credentials(v3_user="u", v3_key_file=str(keys), env={})
    keys.chmod(0o640)
    warned = []
    creds = load_credentials(v3_user="u", v3_key_file=str(keys), env={}, warn=warned.append)
    assert creds.auth_key == "auth-key-0123" and len(warned) == 1 and "readable by its group" in warned[0]
    assert "auth-key" not in repr(creds)


def test_the_cli_refuses_in_one_line_and_warns_about_a_cmts_secret(tmp_path):
    community = tmp_path / "rw"
    community.write_text("private\n")
    community.chmod(0o666)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HFCPROV_SNMP")}
    res = subprocess.run([sys.executable, "-m", "hfcprov", "snmp", "reset", "127.0.0.1:9", "--community-file",
                          str(community)], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert res.returncode == 1 and res.stderr.count("\n") == 1 and "too open" in res.stderr
    assert "private" not in res.stderr
    secret = tmp_path / "cmts.key"
    secret.write_text("Sh4red\n")
    secret.chmod(0o644)
    (tmp_path / "a.cfg").write_text("Main { NetworkAccess 1; }\n")
    res = subprocess.run([sys.executable, "-m", "hfcprov", "config", "encode", str(tmp_path / "a.cfg"), "-o",
                          str(tmp_path / "a.cm"), "--secret-file", str(secret)], capture_output=True, text=True,
                         env=env, timeout=60, check=False)
    assert res.returncode == 0 and "hfcprov: warning:" in res.stderr and "CMTS shared secret file" in res.stderr
    assert "Sh4red" not in res.stderr
