"""IPv6 between two network namespaces this test creates: a modem namespace fetches its dynamic file
from `hfcprov tftp serve --listen [fd..::1]:69` in a server namespace (our client and tftp-hpa's), and
the file carries the modem's own IPv6 address in TLV 59 with valid MICs."""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from hfcprov.config import decode, verify
from tests.support import require_root, require_tool

from .helpers import shipped_tiers

REPO = Path(__file__).resolve().parents[2]
SECRET = b"ipv6-shared-secret"
SERVER, MODEM = "fd00:19::1", "fd00:19::2"


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


@pytest.fixture
def v6_pair():
    require_root()
    require_tool("ip", "iproute2")
    tag = secrets.token_hex(3)
    ns_s, ns_c = f"hfct-{tag}-srv6", f"hfct-{tag}-cm6"
    _ip("netns", "add", ns_s)
    try:
        _ip("netns", "add", ns_c)
        _ip("link", "add", f"s6{tag}", "netns", ns_s, "type", "veth", "peer", "name", f"c6{tag}", "netns", ns_c)
        for ns, dev, addr in ((ns_s, f"s6{tag}", SERVER), (ns_c, f"c6{tag}", MODEM)):
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "addr", "add", f"{addr}/64", "dev", dev, "nodad")  # usable at once, no DAD wait
        yield ns_s, ns_c
    finally:
        _ip("netns", "del", ns_c, check=False)
        _ip("netns", "del", ns_s, check=False)


def test_ipv6_modem_gets_tlv59_across_namespaces(v6_pair, tmp_path):
    ns_s, ns_c = v6_pair
    shipped_tiers(tmp_path / "tiers")
    (tmp_path / "inventory.csv").write_text("mac,tier\n00:10:95:00:06:01,res-50x5\n")
    (tmp_path / "secret.txt").write_bytes(SECRET)
    (tmp_path / "root").mkdir()
    (tmp_path / "dyn.yaml").write_text("inventory: inventory.csv\ntemplates: tiers\nsecret_file: secret.txt\n")
    server = subprocess.Popen(["ip", "netns", "exec", ns_s, sys.executable, "-m", "hfcprov", "tftp", "serve",
                               "--root", str(tmp_path / "root"), "--listen", f"[{SERVER}]:69",
                               "--dynamic", str(tmp_path / "dyn.yaml"), "--log", str(tmp_path / "log.jsonl")],
                              cwd=REPO, stderr=subprocess.PIPE, text=True)
    try:
        assert "serving" in server.stderr.readline()
        ours = tmp_path / "ours.cm"
        r = subprocess.run(["ip", "netns", "exec", ns_c, sys.executable, "-m", "hfcprov", "tftp", "get",
                            f"[{SERVER}]:69", "001095000601.cm", "-o", str(ours)], cwd=REPO, capture_output=True,
                           text=True, timeout=60, check=False)
        assert r.returncode == 0, r.stderr
        files = [ours.read_bytes()]
        tftp = require_tool("tftp", "tftp-hpa")
        theirs = tmp_path / "theirs.cm"
        subprocess.run(["ip", "netns", "exec", ns_c, tftp, "-6", SERVER, "-m", "binary", "-c", "get",
                        "001095000601.cm", str(theirs)], capture_output=True, timeout=60, check=False)
        files.append(theirs.read_bytes())
        for data in files:
            verify(data, SECRET)
            tree = decode(data)
            assert [t.value for t in tree.find("59")] == [MODEM] and tree.find("20") == []
    finally:
        server.terminate()
        server.wait(15)
    assert f'"client":"[{MODEM}]:' in (tmp_path / "log.jsonl").read_text().replace(" ", "")
