"""The emulated modem boots as a cable modem: DHCP from a real Kea (reservations from the lab's inventory,
through the emulated CMTS's relay), Time of Day, TFTP of the file DHCP named (lease-bound, built per
request), then the CMTS's registration check. IPv4 and IPv6. A wrong shared secret or a stale TLV 20
leaves it unregistered, visibly: its status, its SNMP docsIfCmStatusValue, the CMTS's own table."""

from __future__ import annotations

import asyncio
import ipaddress
import json

import pytest

from hfcprov.config import decode, encode, parse_text
from hfcprov.emu import netns
from hfcprov.emu.headend import Headend, cmts_state, wait_cmts_agent
from hfcprov.snmp import oids, ops
from hfcprov.snmp.client import Credentials, SnmpClient
from tests.support import require_tool

pytestmark = [pytest.mark.root, pytest.mark.slow]
MAC = "0010950000e1"
FILE = f"{MAC}.cm"
CONFIG = """Main { NetworkAccess 1; %s
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 2000000; MaxTrafficBurst 3044;
                  BufferControl { TargetBuffer 16384; } }
  DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 10000000; } }"""


def snmp_in(ns: str, step):
    """Run ``step(client)`` over SNMP v2c (community public) from inside namespace ``ns``."""
    async def go():
        client = SnmpClient(Credentials(), timeout=2.0, retries=3)
        try:
            return await step(client)
        finally:
            client.close()

    with netns.entered(ns):
        return asyncio.run(go())


def modem_view(lab) -> dict:
    host = lab.addr("cm_rf")
    got = snmp_in(lab.ns("cmts"), lambda c: c.get(host, 161, [oids.SYS_UPTIME, oids.CONFIG_FILE, oids.CONFIG_TFTP,
                                                              f"{oids.CM_STATUS_VALUE}.2"]))
    return {"uptime_s": got[oids.SYS_UPTIME] / 100, "file": got[oids.CONFIG_FILE].decode(),
            "tftp": str(ipaddress.ip_address(got[oids.CONFIG_TFTP])), "status": got[f"{oids.CM_STATUS_VALUE}.2"]}


def cmts_view(lab) -> dict:
    wait_cmts_agent(lab, timeout=120)
    (row,) = snmp_in(lab.ns("srv"), lambda c: ops.cmts_modems(lab.addr_v4("cmts_net"), 161, Credentials()))
    return {"mac": row.mac, "status": row.status, "online": row.online, "ip": row.ip, "ipv6": row.ipv6}


@pytest.fixture
def kea():
    require_tool("kea-dhcp4", "kea-dhcp4-server")
    require_tool("kea-dhcp6", "kea-dhcp6-server")


@pytest.mark.timeout(400)
@pytest.mark.parametrize("family", [4, 6])
def test_modem_boots_through_kea_tod_lease_bound_tftp_and_registers(lab_factory, tmp_path, kea, family):
    (tmp_path / "cmts.key").write_bytes(b"lab shared secret\n")
    # the file is built per request by the lease-bound dynamic server, from the lab's inventory and the
    # shipped tier its row names, CMTS MIC with the CMTS's secret, TLV 20 (59) = the requester's address
    (tmp_path / "dynamic.yaml").write_text("key: filename\nprocesses: 0\nsecret_file: cmts.key\n")
    (tmp_path / "root").mkdir()
    lab = lab_factory(ipv6=family == 6)
    applied = lab.boot(tmp_path / "root", timeout=240, headend=Headend(
        mac=MAC, secret_file=str(tmp_path / "cmts.key"), dynamic=str(tmp_path / "dynamic.yaml")))
    print(f"\nIPv{family} boot: {json.dumps({k: applied.get(k) for k in ('status', 'address', 'dhcp', 'tod', 'tftp_server', 'config_file', 'stamped_address')})}")
    assert applied["status"] == "operational", applied.get("reason")
    address, cmts_rf = lab.addr("cm_rf"), lab.addr("cmts_rf")
    # DHCP gave what the export reserved from the lab's inventory
    assert applied["address"] == address and applied["dhcp"]["file"] == FILE
    assert applied["dhcp"]["tftp_servers"] == [cmts_rf] and applied["dhcp"]["time_servers"] == [cmts_rf]
    assert applied["tod"] > 1_700_000_000  # RFC 868 answered before the file was asked for
    assert applied["stamped_address"] == {"20" if family == 4 else "59": [address]}
    leases = (lab.state_dir / "kea" / f"leases{family}.csv").read_text()
    assert address in leases
    # the file went to the address holding the lease, by the name DHCP gave
    log = [json.loads(line) for line in (lab.state_dir / "tftp.log").read_text().splitlines()]
    assert any(r.get("file") == FILE and address in r.get("client", "") and r.get("result") == "ok" for r in log)
    # it says over SNMP what it booted from, and that it just booted
    seen = modem_view(lab)
    print(f"IPv{family} modem over SNMP: {seen}")
    assert (seen["status"], seen["file"], seen["tftp"]) == (12, FILE, cmts_rf)
    assert seen["uptime_s"] < 600
    # the CMTS registered it, with the address it relayed
    row = cmts_view(lab)
    print(f"IPv{family} CMTS table: {row}")
    assert row["online"] and row["status"] == "operational(8)"
    assert (row["ip"] if family == 4 else row["ipv6"]) == address


@pytest.mark.timeout(500)
def test_cmts_refuses_a_wrong_secret_and_a_stale_address_then_registers_a_good_file(lab_factory, tmp_path, kea):
    (tmp_path / "cmts.key").write_bytes(b"the CMTS's secret")
    root = tmp_path / "root"
    root.mkdir()
    (root / FILE).write_bytes(encode(parse_text(CONFIG % ""), secret=b"another secret"))
    lab = lab_factory()
    applied = lab.boot(root, timeout=240, headend=Headend(mac=MAC, secret_file=str(tmp_path / "cmts.key")))
    print(f"\nwrong secret: {applied['status']}: {applied.get('reason')}")
    assert applied["status"] == "registration-refused"
    assert "CMTS MIC (TLV 7) mismatch" in applied["reason"]
    assert modem_view(lab)["status"] == 10  # paramTransferComplete: it has its file, not its registration
    row = cmts_view(lab)
    print(f"wrong secret, CMTS table: {row}")
    assert row["status"] == "accessDenied(7)" and not row["online"]
    # an unregistered modem forwards nothing and runs no service flow
    assert netns.run(["sysctl", "-n", "net.ipv4.ip_forward"], ns=lab.ns("cm")).strip() == "0"
    assert "htb" not in netns.run(["tc", "qdisc", "show", "dev", "rf"], ns=lab.ns("cm"))
    assert cmts_state(lab)["modems"][0]["refusals"] == 1

    def reboot(n: int) -> dict:
        snmp_in(lab.ns("cmts"), lambda c: c.set(lab.addr("cm_rf"), 161, oids.RESET_NOW, "Integer", 1))
        return lab.wait_boot(n, timeout=240)

    # the right secret, but TLV 20 names an address the modem does not hold (a file built for another lease)
    (root / FILE).write_bytes(encode(parse_text(CONFIG % "TftpModemAddress 10.10.2.99;"), secret=b"the CMTS's secret"))
    applied = reboot(2)
    print(f"stale address: {applied['status']}: {applied.get('reason')}")
    assert applied["status"] == "registration-refused"
    assert "TLV 20 says 10.10.2.99, but the modem holds 10.10.2.2" in applied["reason"]
    assert cmts_view(lab)["status"] == "accessDenied(7)"
    # a good file: registered, forwarding, its flows installed
    good = encode(parse_text(CONFIG % ""), secret=b"the CMTS's secret")
    (root / FILE).write_bytes(good)
    applied = reboot(3)
    assert applied["status"] == "operational", applied.get("reason")
    assert [t.value for t in decode(good).find("20")] == []
    assert cmts_view(lab)["status"] == "operational(8)" and modem_view(lab)["status"] == 12
    assert netns.run(["sysctl", "-n", "net.ipv4.ip_forward"], ns=lab.ns("cm")).strip() == "1"
    assert cmts_state(lab)["modems"][0]["registrations"] == 1

