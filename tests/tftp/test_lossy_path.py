"""5% random loss in both directions between server and modems, each in a namespace this test creates.

This kernel has no netem qdisc, so the loss is ``iptables -m statistic --mode random``
on the INPUT chain of each namespace: one rule drops 5% of what the modems receive, the
other 5% of what the server receives. (A drop in OUTPUT would be a local EPERM on
sendto(), not a lost packet.)
Every transfer must still arrive byte-identical: our client, tftpy's, and tftp-hpa.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import require_root, require_tool

REPO = Path(__file__).resolve().parents[2]
LOSS = 0.05


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


@pytest.fixture
def lossy_pair(tmp_path):
    """(server namespace, client namespace, server address) joined by a veth with 5% loss each way."""
    require_root()
    require_tool("ip", "iproute2")
    iptables = require_tool("iptables", "iptables")
    tag = secrets.token_hex(3)
    ns_s, ns_c = f"hfct-{tag}-srv", f"hfct-{tag}-cm"
    _ip("netns", "add", ns_s)
    try:
        _ip("netns", "add", ns_c)
        _ip("link", "add", f"ts{tag}", "netns", ns_s, "type", "veth", "peer", "name", f"tc{tag}", "netns", ns_c)
        for ns, dev, addr in ((ns_s, f"ts{tag}", "10.231.7.1/24"), (ns_c, f"tc{tag}", "10.231.7.2/24")):
            _ip("-n", ns, "addr", "add", addr, "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
        for ns in (ns_s, ns_c):
            subprocess.run(["ip", "netns", "exec", ns, iptables, "-A", "INPUT", "-p", "udp", "-m", "statistic",
                            "--mode", "random", "--probability", str(LOSS), "-j", "DROP"], check=True)
        yield ns_s, ns_c, "10.231.7.1", iptables
    finally:
        _ip("netns", "del", ns_c, check=False)
        _ip("netns", "del", ns_s, check=False)


CLIENT = r"""
import hashlib, io, json, sys
import tftpy
from hfcprov.tftp import fetch_many
host, port, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
got = fetch_many(host, port, [(n, {"blksize": 512}) for n in names] + [(n, {"windowsize": 4}) for n in names],
                 timeout=0.5, retries=8)
res = [{"file": f.filename, "sha": hashlib.sha256(f.data).hexdigest() if f.ok else None, "error": f.error,
        "retransmits": f.retransmits} for f in got]
for n in names[:3]:
    out = io.BytesIO()
    tftpy.TftpClient(host, port).download(n, out, timeout=1, retries=10)
    res.append({"file": n, "sha": hashlib.sha256(out.getvalue()).hexdigest(), "error": None, "retransmits": 0})
print(json.dumps(res))
"""


@pytest.mark.slow
def test_every_transfer_completes_through_5_percent_loss(lossy_pair, root, tmp_path):
    ns_s, ns_c, server_ip, iptables = lossy_pair
    tftp = require_tool("tftp", "tftp-hpa")
    log = tmp_path / "server.jsonl"
    server = subprocess.Popen(["ip", "netns", "exec", ns_s, sys.executable, "-m", "hfcprov", "tftp", "serve",
                               "--root", str(root), "--listen", f"{server_ip}:69", "--log", str(log),
                               "--timeout", "500ms", "--retries", "8"],
                              cwd=REPO, stderr=subprocess.PIPE, text=True)
    try:
        assert "serving" in server.stderr.readline()
        names = ["gold.cm", "two.cm", "exact.cm", "short.cm", "cm/silver.cm", "big.bin"] * 4
        r = subprocess.run(["ip", "netns", "exec", ns_c, sys.executable, "-c", CLIENT, server_ip, "69", *names],
                           cwd=REPO, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        results = json.loads(r.stdout)
        for res in results:
            assert res["error"] is None, res
            assert res["sha"] == hashlib.sha256((root / res["file"]).read_bytes()).hexdigest(), res["file"]
        # tftp-hpa, retransmitting every second
        for name in ("gold.cm", "big.bin"):
            out = tmp_path / name.replace("/", "_")
            subprocess.run(["ip", "netns", "exec", ns_c, tftp, server_ip], input=f"mode octet\nrexmt 1\ntimeout 60\n"
                           f"get {name} {out}\nquit\n", text=True, capture_output=True, timeout=90)
            assert out.read_bytes() == (root / name).read_bytes()
        # The loss was real: the drop rules counted packets and clients had to retransmit.
        counters = "".join(subprocess.run(["ip", "netns", "exec", ns, iptables, "-L", "INPUT", "-n", "-v", "-x"],
                                          capture_output=True, text=True).stdout for ns in (ns_s, ns_c))
        dropped = [int(line.split()[0]) for line in counters.splitlines() if "statistic" in line]
        assert len(dropped) == 2 and all(d > 0 for d in dropped), counters
        assert sum(res["retransmits"] for res in results) > 0
    finally:
        server.send_signal(15)
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
