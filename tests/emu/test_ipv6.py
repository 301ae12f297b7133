"""`hfcprov emu up --ipv6`: the emulated modem boots over IPv6 from hfcprov's dynamic TFTP server (the
file it applies carries its IPv6 address in TLV 59, not TLV 20) and `hfcprov snmp audit` reaches its
SNMP agent on its IPv6 address. Root: the test builds and removes its own namespaces."""

import json
import subprocess
import sys

import pytest

from hfcprov.config import decode, verify
from hfcprov.emu import topology
from hfcprov.emu.topology import ADDR, ADDR6
from hfcprov.fileio import atomic_write
from tests.support import require_tool
from tests.tftp.helpers import shipped_tiers

pytestmark = pytest.mark.root

SECRET = b"emu-ipv6-secret"
MAC, FILE = "00:10:95:00:19:02", "001095001902.cm"


def dynamic_site(tmp_path):
    """A dynamic TFTP site whose one modem is ours (a residential tier, stamped per request)."""
    shipped_tiers(tmp_path / "tiers")
    (tmp_path / "inventory.csv").write_text(f"mac,tier\n{MAC},res-50x5\n")
    (tmp_path / "secret.txt").write_bytes(SECRET)
    (tmp_path / "root").mkdir()
    (tmp_path / "dyn.yaml").write_text("inventory: inventory.csv\ntemplates: tiers\nsecret_file: secret.txt\n")
    return tmp_path / "root", tmp_path / "dyn.yaml"


def in_ns(lab, node, *argv, timeout=60):
    return subprocess.run(["ip", "netns", "exec", lab.ns(node), sys.executable, "-m", "hfcprov", *argv],
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.slow
def test_emu_up_ipv6_boots_over_ipv6_with_tlv59_and_the_audit_reaches_it(lab_factory, tmp_path):
    root, dyn = dynamic_site(tmp_path)
    up = subprocess.run([sys.executable, "-m", "hfcprov", "emu", "up", "--ipv6", "--docsis-version", "3.0",
                         "--prefix", lab_factory.prefix, "--tftp-root", str(root), "--file", FILE,
                         "--dynamic", str(dyn), "--json"], capture_output=True, text=True, timeout=180, check=False)
    assert up.returncode == 0, up.stderr[-1500:]
    shown = json.loads(up.stdout)
    lab = topology.Lab.load(shown["name"])  # removed by the fixture (its prefix)
    assert lab.ipv6 and shown["management"] == ADDR6["cm_rf"]
    applied = shown["modem"]
    assert applied["status"] == "operational", applied
    assert applied["tftp_server"] == f"[{ADDR6['cmts_rf']}]:69"
    assert applied["snmp"] == f"[{ADDR6['cm_rf']}]:161"
    # the server stamped the modem's IPv6 address (TLV 59) and no IPv4 one (TLV 20)
    assert applied["stamped_address"] == {"59": [ADDR6["cm_rf"]]}, applied
    log = (lab.state_dir / "tftp.log").read_text().replace(" ", "")
    assert f'"client":"[{ADDR6["cm_rf"]}]:' in log and FILE in log
    assert ADDR["cm_rf"] not in log

    # the file an operator fetches over IPv6 from the modem's side: what the audit compares against
    configs = tmp_path / "configs"
    configs.mkdir()
    got = in_ns(lab, "cm", "tftp", "get", f"[{ADDR6['cmts_rf']}]:69", FILE, "-o", str(configs / FILE))
    assert got.returncode == 0, got.stderr
    data = (configs / FILE).read_bytes()
    verify(data, SECRET)
    tree = decode(data)
    assert [str(t.value) for t in tree.find("59")] == [ADDR6["cm_rf"]] and tree.find("20") == []

    inv = tmp_path / "inv.csv"
    atomic_write(inv, f"mac,ip,port,config\n{MAC.replace(':', '')},{ADDR6['cm_rf']},161,{FILE}\n")
    audit = in_ns(lab, "cmts", "snmp", "audit", "--inventory", str(inv), "--configs", str(configs),
                  "--format", "json", "--timeout", "1s")
    row = json.loads(audit.stdout.splitlines()[0]) if audit.stdout.strip() else audit.stderr
    assert audit.returncode == 0 and row["status"] == "in-sync", row


def test_only_an_ipv6_lab_has_the_ipv6_management_addresses(lab_factory):
    """CM and CMTS reach each other over IPv6 in an ipv6 lab; a default lab stays IPv4 only."""
    v6 = lab_factory(ipv6=True)
    addrs = subprocess.run(["ip", "-n", v6.ns("cm"), "-6", "addr", "show", "dev", "rf"], capture_output=True,
                           text=True, check=True).stdout
    assert f"{ADDR6['cm_rf']}/64" in addrs
    ping = subprocess.run(["ip", "netns", "exec", v6.ns("cmts"), require_tool("ping", "iputils-ping"), "-6", "-c", "1",
                           "-W", "2", ADDR6["cm_rf"]], capture_output=True, text=True, check=False)
    assert ping.returncode == 0, ping.stdout + ping.stderr
    v4 = lab_factory()
    assert not v4.ipv6 and v4.addr("cm_rf") == ADDR["cm_rf"]
    assert subprocess.run(["ip", "-n", v4.ns("cm"), "-6", "addr", "show", "dev", "rf"], capture_output=True,
                          text=True, check=True).stdout.strip() == ""
