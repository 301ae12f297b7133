"""The export's reservations in a real Kea: a relayed modem gets exactly what the inventory says.

Kea 2.2 (kea-dhcp4, kea-dhcp6) runs on loopback (tests.keasupport); a client relays its DORA /
SOLICIT-REQUEST as a CMTS does (hfcprov.boot.dhcpclient) and reads the answer field by field:
address, siaddr/file, options 2/4/7, 122, 125 (enterprise 4491) and DHCPv6 option 17 (4491)
sub-options 32/33/34/37/38. Then a second export through Kea's control socket changes the file
names of the running server without a restart.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hfcprov.boot.dhcpclient import acquire4, acquire6
from tests.keasupport import Kea
from tests.support import has_ipv6_loopback

INVENTORY = "mac,tier,ip,ipv6\n00:10:95:00:00:01,res-50x5,127.0.10.5,fd00:10::5\n0010.9500.0002,res-100x10,,\n"

BASE4 = """// an operator's Kea config, comments and all
{ "Dhcp4": {
    # the CMTS relays from 127.0.0.1 (its giaddr)
    "subnet4": [ { "id": 7, "subnet": "127.0.10.0/24", "relay": { "ip-addresses": [ "127.0.0.1" ] },
                   "pools": [ { "pool": "127.0.10.100 - 127.0.10.200" } ],
                   /* a hand-written reservation the export must keep */
                   "reservations": [ { "hw-address": "02:00:00:00:00:99", "ip-address": "127.0.10.99" } ] } ],
    "valid-lifetime": 600
} }
"""

BASE6 = """{ "Dhcp6": {
    "subnet6": [ { "id": 3, "subnet": "fd00:10::/64", "pools": [ { "pool": "fd00:10::100 - fd00:10::1ff" } ] } ],
    "preferred-lifetime": 300, "valid-lifetime": 600
} }
"""


def hfcprov(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hfcprov", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def export(tmp_path, fmt, out, *extra):
    r = hfcprov("dhcp", "export", "--format", fmt, "-i", tmp_path / "modems.csv", "-o", out, *extra)
    assert r.returncode == 0, r.stderr
    return r


@pytest.fixture
def inventory(tmp_path):
    (tmp_path / "modems.csv").write_text(INVENTORY)
    return tmp_path / "modems.csv"


def test_kea4_hands_out_the_inventory_and_takes_a_new_export_live(tmp_path, inventory):
    (tmp_path / "base.json").write_text(BASE4)
    r = export(tmp_path, "kea4", tmp_path / "kea4.json", "--base", tmp_path / "base.json", "--tftp-server", "127.0.0.1",
               "--tftp-server", "fd00::1", "--log-server", "127.0.0.2", "--time-offset", "-18000",
               "--mta-dhcp-server", "127.0.0.3", "--router", "127.0.10.1")
    assert "2 kea4 reservations" in r.stdout and "checked by kea-dhcp4 -t" in r.stdout
    with Kea(4, json.loads((tmp_path / "kea4.json").read_text())) as kea:
        relay = {"server": kea.server, "relay": "127.0.0.1", "reply_port": kea.reply_port}
        fixed = acquire4("00:10:95:00:00:01", **relay)
        assert fixed.address == "127.0.10.5"
        assert (fixed.siaddr, fixed.file) == ("127.0.0.1", "001095000001.cm")
        assert fixed.vendor == {4491: {2: bytes([127, 0, 0, 1])}}  # option 125, enterprise 4491, sub-option 2
        assert fixed.tftp_servers == ["127.0.0.1"]
        assert fixed.time_servers == ["127.0.0.1"]  # option 4 defaults to the TFTP server (tftp serve --tod)
        assert fixed.log_servers == ["127.0.0.2"]  # option 7
        assert fixed.time_offset == -18000  # option 2
        assert fixed.options[3] == bytes([127, 0, 10, 1])  # option 3
        assert fixed.ccc == {1: bytes([127, 0, 0, 3])}  # option 122 sub-option 1
        pooled = acquire4("00:10:95:00:00:02", **relay)  # no fixed address: the pool's, with its own file
        assert pooled.address.startswith("127.0.10.1") and pooled.file == "001095000002.cm"
        stranger = acquire4("02:00:00:00:00:42", **relay)  # not in the inventory: an address, no boot file
        assert stranger.file == "" and 125 not in stranger.options
        kept = acquire4("02:00:00:00:00:99", **relay)  # the operator's own reservation survived the export
        assert kept.address == "127.0.10.99"

        pid = kea.proc.pid  # a new pattern, applied through the control socket: no restart
        r = export(tmp_path, "kea4", tmp_path / "kea4-new.json", "--tftp-server", "127.0.0.1",
                   "--pattern", "{tier}/{mac}.cm", "--control-socket", kea.socket)
        assert "applied to the running server" in r.stdout
        again = acquire4("00:10:95:00:00:01", **relay)
        assert again.file == "res-50x5/001095000001.cm" and again.address == "127.0.10.5"
        assert acquire4("02:00:00:00:00:99", **relay).address == "127.0.10.99"  # the running config was the base
        assert kea.proc.poll() is None and kea.proc.pid == pid
        written = json.loads((tmp_path / "kea4-new.json").read_text())
        assert written["Dhcp4"]["control-socket"]["socket-name"] == kea.socket  # the file is what runs


@pytest.mark.skipif(not has_ipv6_loopback(), reason="needs IPv6 on lo")
def test_kea6_hands_out_option_17_of_the_inventory_live(tmp_path, inventory):
    (tmp_path / "base.json").write_text(BASE6)
    export(tmp_path, "kea6", tmp_path / "kea6.json", "--base", tmp_path / "base.json", "--tftp-server", "127.0.0.1",
           "--tftp-server", "fd00::1", "--log-server", "fd00::2", "--time-server", "fd00::3", "--time-offset", "3600")
    with Kea(6, json.loads((tmp_path / "kea6.json").read_text())) as kea:
        relay = {"server": kea.server, "link": "fd00:10::1", "relay": "::1", "reply_port": kea.reply_port}
        lease = acquire6("00:10:95:00:00:01", **relay)
        assert lease.address == "fd00:10::5"
        assert lease.tftp_servers == ["fd00::1"]  # 17.4491.32
        assert lease.file == "001095000001.cm"  # 17.4491.33
        assert lease.log_servers == ["fd00::2"]  # 17.4491.34
        assert lease.time_servers == ["fd00::3"]  # 17.4491.37
        assert lease.time_offset == 3600  # 17.4491.38
        pooled = acquire6("00:10:95:00:00:02", **relay)
        assert pooled.file == "001095000002.cm" and pooled.address.startswith("fd00:10::1")
        lines = Path(kea.lease_file).read_text().splitlines()
        assert any(line.startswith("fd00:10::5,") and "00:10:95:00:00:01" in line for line in lines)
