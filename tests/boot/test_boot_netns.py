"""A modem's boot chain across network namespaces (root), as on a cable plant, IPv4 and IPv6.

IPv4: the modem broadcasts DHCP to a real Kea on raw sockets. IPv6: its DHCPv6 goes through a relay
(the CMTS) to Kea's unicast address. Either way Kea hands out the reservations `hfcprov dhcp export`
wrote; the modem takes the address, asks the time server DHCP named (RFC 868) and fetches the file
DHCP named from the TFTP server DHCP named, which serves it lease-bound: TLV 20 (59 for IPv6) is the
modem's address. Another address on the same segment asking for that file is refused."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hfcprov.config import decode, verify_cm_mic
from tests.keasupport import Kea
from tests.support import require_root, require_tool

REPO = Path(__file__).resolve().parents[2]
MODEM, OTHER = "001095000b01", "001095000b02"
PLAN = {  # server address, prefix, the modem's reserved address, a thief's address, the relay (IPv6)
    4: {"server": "10.77.0.1", "prefix": "10.77.0.0/24", "modem": "10.77.0.5", "thief": "10.77.0.50",
        "pool": "10.77.0.100 - 10.77.0.200", "column": "ip", "tlv": "20"},
    6: {"server": "fd00:77::1", "prefix": "fd00:77::/64", "modem": "fd00:77::5", "thief": "fd00:77::50",
        "pool": "fd00:77::100 - fd00:77::1ff", "column": "ipv6", "tlv": "59", "relay": "fd00:77::2"},
}


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
        _ip("-n", ns_s, "addr", "add", "10.77.0.1/24", "dev", dev_s)
        _ip("-n", ns_s, "addr", "add", "fd00:77::1/64", "dev", dev_s, "nodad")
        _ip("-n", ns_c, "addr", "add", "fd00:77::2/64", "dev", dev_c, "nodad")  # the CMTS's relay address
        yield ns_s, ns_c, dev_s, dev_c
    finally:
        _ip("netns", "del", ns_c, check=False)
        _ip("netns", "del", ns_s, check=False)


MODEM_BOOT = """
import json, subprocess, sys
from hfcprov.boot.dhcpclient import acquire4, acquire6
from hfcprov.boot.tod import query_time, unix_time
from hfcprov.tftp import fetch_many
mac, dev, family, server, thief = sys.argv[1:6]
if family == "4":
    lease = acquire4(mac, interface=dev)            # DHCPDISCOVER/REQUEST broadcast from port 68
    prefix = "/24"
else:                                               # SOLICIT/REQUEST in RELAY-FORW from the CMTS (port 547)
    lease = acquire6(mac, server=(server, 547), link=sys.argv[6], relay=sys.argv[6], reply_port=547)
    prefix = "/64"
for address in (lease.address, thief):
    subprocess.run(["ip", "addr", "add", address + prefix, "dev", dev] + (["nodad"] if family == "6" else []),
                   check=True)
now = unix_time(query_time(lease.time_servers[0]))   # Time of Day before the file, as a modem does
(own,) = fetch_many(lease.tftp_servers[0], 69, [lease.file], bind=lease.address, timeout=2.0)
(theft,) = fetch_many(lease.tftp_servers[0], 69, [lease.file], bind=thief, timeout=2.0, retries=1)
print(json.dumps({"address": lease.address, "file": lease.file, "tftp": lease.tftp_servers, "time": now,
                  "error": own.error, "data": (own.data or b"").hex(), "theft": theft.error_code}))
"""


@pytest.mark.parametrize("family", [4, 6])
def test_modem_boots_through_kea_tod_and_lease_bound_tftp(plant, tmp_path, family):
    ns_s, ns_c, dev_s, dev_c = plant
    p = PLAN[family]
    (tmp_path / "modems.csv").write_text(f"mac,tier,{p['column']}\n{MODEM},res-50x5,{p['modem']}\n"
                                         f"{OTHER},res-100x10,\n")
    export = subprocess.run([sys.executable, "-m", "hfcprov", "dhcp", "export", "--format", f"kea{family}", "-i",
                             tmp_path / "modems.csv", "-o", tmp_path / "kea.json", "--tftp-server", p["server"],
                             "--subnet", p["prefix"]], capture_output=True, text=True, timeout=120, check=False)
    assert export.returncode == 0, export.stderr
    config = json.loads((tmp_path / "kea.json").read_text())
    config[f"Dhcp{family}"][f"subnet{family}"][0]["pools"] = [{"pool": p["pool"]}]
    interface = dev_s if family == 4 else f"{dev_s}/{p['server']}"
    with Kea(family, config, netns=ns_s, interface=interface) as kea:
        (tmp_path / "root").mkdir()
        (tmp_path / "dyn.yaml").write_text(f"inventory: modems.csv\nprocesses: 0\nleases: {kea.lease_file}\n")
        listen = p["server"] if family == 4 else f"[{p['server']}]"
        server = subprocess.Popen(["ip", "netns", "exec", ns_s, sys.executable, "-m", "hfcprov", "tftp", "serve",
                                   "--root", tmp_path / "root", "--listen", f"{listen}:69", "--tod", "--dynamic",
                                   tmp_path / "dyn.yaml", "--log", tmp_path / "tftp.jsonl"],
                                  cwd=REPO, stderr=subprocess.PIPE, text=True)
        try:
            assert f"RFC 868 time on {listen}:37" in server.stderr.readline()
            (tmp_path / "modem.py").write_text(textwrap.dedent(MODEM_BOOT))
            boot = subprocess.run(["ip", "netns", "exec", ns_c, sys.executable, tmp_path / "modem.py", MODEM, dev_c,
                                   str(family), p["server"], p["thief"], p.get("relay", "")],
                                  cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
            assert boot.returncode == 0, boot.stderr
        finally:
            server.terminate()
            server.wait(30)
    seen = json.loads(boot.stdout)
    assert (seen["address"], seen["file"], seen["tftp"]) == (p["modem"], f"{MODEM}.cm", [p["server"]])
    assert seen["error"] is None and seen["time"] > 1_700_000_000
    data = bytes.fromhex(seen["data"])
    verify_cm_mic(data)
    assert [t.value for t in decode(data).find(p["tlv"])] == [p["modem"]]  # the address that holds the lease
    assert seen["theft"] == 2  # TFTP access violation
    log = [json.loads(line) for line in (tmp_path / "tftp.jsonl").read_text().splitlines()]
    (refused,) = [r for r in log if r.get("result") == "refused"]
    assert p["thief"] in refused["client"] and refused["file"] == f"{MODEM}.cm"
    assert f"{p['thief']} holds no active lease" in refused["detail"]
