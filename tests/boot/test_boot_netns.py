"""A modem's boot chain across network namespaces (root), as on a cable plant: it broadcasts DHCP to a
real Kea on raw sockets (reservations from `hfcprov dhcp export`), sets its address, asks the time
server DHCP named (RFC 868), and fetches the file DHCP named from the TFTP server DHCP named, which
serves it lease-bound. Another host on the same segment asking for that file is refused."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.keasupport import Kea
from tests.support import require_root, require_tool

REPO = Path(__file__).resolve().parents[2]
SERVER = "10.77.0.1"
MODEM, OTHER = "001095000b01", "001095000b02"


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


@pytest.fixture
def plant():
    require_root()
    require_tool("ip", "iproute2")
    tag = secrets.token_hex(3)
    ns_s, ns_c, dev_s, dev_c = f"hfbt-{tag}-srv", f"hfbt-{tag}-cm", f"bs{tag}", f"bc{tag}"
    _ip("netns", "add", ns_s)
    try:
        _ip("netns", "add", ns_c)
        _ip("link", "add", dev_s, "netns", ns_s, "type", "veth", "peer", "name", dev_c, "netns", ns_c)
        for ns, dev in ((ns_s, dev_s), (ns_c, dev_c)):
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "link", "set", dev, "up")
        _ip("-n", ns_s, "addr", "add", f"{SERVER}/24", "dev", dev_s)
        yield ns_s, ns_c, dev_s, dev_c
    finally:
        _ip("netns", "del", ns_c, check=False)
        _ip("netns", "del", ns_s, check=False)


MODEM_BOOT = """
import json, subprocess, sys
from hfcprov.boot.dhcpclient import acquire4
from hfcprov.boot.tod import query_time, unix_time
from hfcprov.tftp import fetch, fetch_many
mac, dev = sys.argv[1], sys.argv[2]
lease = acquire4(mac, interface=dev)                 # DHCPDISCOVER/REQUEST broadcast from port 68
subprocess.run(["ip", "addr", "add", lease.address + "/24", "dev", dev], check=True)
now = unix_time(query_time(lease.time_servers[0]))   # Time of Day before the file, as a modem does
data = fetch(lease.tftp_servers[0], 69, lease.file, timeout=2.0)
subprocess.run(["ip", "addr", "add", "10.77.0.50/24", "dev", dev], check=True)
(theft,) = fetch_many(lease.tftp_servers[0], 69, [lease.file], bind="10.77.0.50", timeout=2.0, retries=1)
print(json.dumps({"address": lease.address, "file": lease.file, "tftp": lease.tftp_servers, "time": now,
                  "size": len(data), "data": data.hex(), "theft": [theft.error_code, theft.error]}))
"""


def test_modem_boots_through_kea_tod_and_lease_bound_tftp(plant, tmp_path):
    ns_s, ns_c, dev_s, dev_c = plant
    (tmp_path / "modems.csv").write_text(f"mac,tier,ip\n{MODEM},res-50x5,10.77.0.5\n{OTHER},res-100x10,\n")
    export = subprocess.run([sys.executable, "-m", "hfcprov", "dhcp", "export", "--format", "kea4", "-i",
                             tmp_path / "modems.csv", "-o", tmp_path / "kea4.json", "--tftp-server", SERVER,
                             "--subnet", "10.77.0.0/24"], capture_output=True, text=True, timeout=120, check=False)
    assert export.returncode == 0, export.stderr
    config = json.loads((tmp_path / "kea4.json").read_text())
    config["Dhcp4"]["subnet4"][0]["pools"] = [{"pool": "10.77.0.100 - 10.77.0.200"}]
    with Kea(4, config, netns=ns_s, interface=dev_s) as kea:
        (tmp_path / "root").mkdir()
        (tmp_path / "dyn.yaml").write_text(f"inventory: modems.csv\nprocesses: 0\nleases: {kea.lease_file}\n")
        server = subprocess.Popen(["ip", "netns", "exec", ns_s, sys.executable, "-m", "hfcprov", "tftp", "serve",
                                   "--root", tmp_path / "root", "--listen", f"{SERVER}:69", "--tod", "--dynamic",
                                   tmp_path / "dyn.yaml", "--log", tmp_path / "tftp.jsonl"],
                                  cwd=REPO, stderr=subprocess.PIPE, text=True)
        try:
            assert f"RFC 868 time on {SERVER}:37" in server.stderr.readline()
            (tmp_path / "modem.py").write_text(textwrap.dedent(MODEM_BOOT))
            boot = subprocess.run(["ip", "netns", "exec", ns_c, sys.executable, tmp_path / "modem.py", MODEM, dev_c],
                                  cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
            assert boot.returncode == 0, boot.stderr
        finally:
            server.terminate()
            server.wait(30)
    seen = json.loads(boot.stdout)
    assert (seen["address"], seen["file"], seen["tftp"]) == ("10.77.0.5", f"{MODEM}.cm", [SERVER])
    assert seen["size"] > 0 and seen["time"] > 1_700_000_000
    from hfcprov.config import decode, verify_cm_mic

    verify_cm_mic(bytes.fromhex(seen["data"]))
    assert decode(bytes.fromhex(seen["data"])).find("20")[0].value == "10.77.0.5"
    assert seen["theft"][0] == 2  # TFTP access violation: 10.77.0.50 holds no lease
    log = [json.loads(line) for line in (tmp_path / "tftp.jsonl").read_text().splitlines()]
    refused = [r for r in log if r.get("result") == "refused"]
    assert len(refused) == 1 and refused[0]["client"].startswith("10.77.0.50:")
    assert "10.77.0.50 holds no active lease" in refused[0]["detail"] and refused[0]["file"] == f"{MODEM}.cm"
