"""Each role of a modem campaign from its own place: SNMP and the probe's echo leave from the source
address the campaign names; the file goes into the root (never outside it) or through the publish
command; SNMPv3 keys come from a key file through hfcprov.snmp."""

from __future__ import annotations

import os
import socket
import sys

import pytest

from hfcprov.lab.roles import ProbeRole, Publisher, RoleError, SnmpRole, snmp_credentials
from hfcprov.lab.spec import SnmpAccess, TftpPublish


def _listener():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(5)
    return s


@pytest.mark.parametrize("version", ["2c", "3"])
def test_snmp_leaves_from_the_source_address_it_is_given(tmp_path, version):
    from hfcprov.snmp import oids

    agent = _listener()
    access = SnmpAccess(version=version, source="127.0.0.9", port=agent.getsockname()[1], timeout=0.2, retries=0,
                        **({"user": "labuser", "auth_key": "an-auth-key"} if version == "3" else {}))
    role = SnmpRole(access, "127.0.0.1")
    with pytest.raises(Exception):  # nobody answers: only where the request came from matters here
        role.run(lambda c: c.get("127.0.0.1", role.port, [oids.SYS_UPTIME]))
    _, peer = agent.recvfrom(4096)
    agent.close()
    assert peer[0] == "127.0.0.9"


def test_snmpv3_keys_from_a_key_file_and_from_the_environment(tmp_path, monkeypatch):
    keys = tmp_path / "lab.v3"
    keys.write_text("auth: file-auth-key\npriv: file-priv-key\n")
    os.chmod(keys, 0o600)
    read, write = snmp_credentials(SnmpAccess(version="3", user="u", key_file=str(keys), auth_protocol="SHA256",
                                              priv_protocol="AES256"), "target.snmp")
    assert read is write and (read.version, read.user, read.auth_proto, read.priv_proto) == ("3", "u", "SHA256", "AES256")
    assert (read.auth_key, read.priv_key) == ("file-auth-key", "file-priv-key")
    assert "file-auth-key" not in repr(read)
    monkeypatch.setenv("LAB_AUTH", "env-auth-key")
    read, _ = snmp_credentials(SnmpAccess(version="3", user="u", auth_key="env:LAB_AUTH"), "target.snmp")
    assert (read.auth_key, read.priv_key) == ("env-auth-key", None)
    with pytest.raises(RoleError, match="target.snmp: SNMPv3 user u: auth key shorter than 8"):
        snmp_credentials(SnmpAccess(version="3", user="u", auth_key="short"), "target.snmp")
    # v2c: the write community for the reset, the read one else
    monkeypatch.setenv("LAB_WRITE", "w-community")
    read, write = snmp_credentials(SnmpAccess(community="r", write_community="env:LAB_WRITE"), "target.snmp")
    assert (read.community, write.community) == ("r", "w-community")


def test_the_probe_echo_leaves_from_its_source_and_says_when_nobody_answers():
    from hfcprov.probe.responder import Responder

    with Responder("127.0.0.1", 0) as responder:
        rtt = ProbeRole("127.0.0.1", responder.port, source="127.0.0.7").echo()
    assert 0 < rtt < 1
    silent = _listener()
    port = silent.getsockname()[1]
    with pytest.raises(RoleError, match=f"probe responder 127.0.0.1:{port}: no UDP echo in 2 x 0.2 s"):
        ProbeRole("127.0.0.1", port, source="127.0.0.7").echo(timeout=0.2, tries=2)
    _, peer = silent.recvfrom(4096)
    silent.close()
    assert peer[0] == "127.0.0.7"


def test_publish_into_the_root_or_through_a_command(tmp_path):
    root = tmp_path / "tftp"
    root.mkdir()
    pub = Publisher(TftpPublish(root=str(root)))
    assert pub.check().endswith("writable")
    pub.put("cm/001122334455.cm", b"\x03\x01\x01")
    assert (root / "cm" / "001122334455.cm").read_bytes() == b"\x03\x01\x01"
    with pytest.raises(RoleError, match="is not a file inside"):
        pub.put("../escape.cm", b"x")
    remote = tmp_path / "remote"
    remote.mkdir()
    cmd = Publisher(TftpPublish(publish=f"{sys.executable} -c 'import shutil,sys; shutil.copy(sys.argv[1], sys.argv[2])' "
                                        f"{{file}} {remote}/{{name}}"))
    assert cmd.check().startswith("publish command")
    cmd.put("tier.cm", b"data")
    assert (remote / "tier.cm").read_bytes() == b"data"
    failing = Publisher(TftpPublish(publish=f"{sys.executable} -c 'import sys; sys.exit(\"no route to tftp host\")'"))
    with pytest.raises(RoleError, match="target.tftp.publish failed for tier.cm: no route to tftp host"):
        failing.put("tier.cm", b"data")
    with pytest.raises(RoleError, match="not found on PATH"):
        Publisher(TftpPublish(publish="no-such-copier {file}")).check()
    with pytest.raises(RoleError, match="not a folder"):
        Publisher(TftpPublish(root=str(tmp_path / "missing"))).check()
