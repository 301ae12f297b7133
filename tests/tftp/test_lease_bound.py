"""Lease-bound TFTP: a modem's file goes only to the address that holds that modem's DHCP lease.

The leases are real: Kea 2.2 (tests.keasupport, on loopback) hands them out to relayed DHCP
clients and writes its memfile lease file, or answers ``lease4-get`` through its control socket
(lease_cmds hook). The TFTP clients bind the addresses Kea gave (127.0.10.x on lo).
"""

from __future__ import annotations

import io

import pytest

from hfcprov.boot.dhcp import BootServers, kea_config, plan_reservations
from hfcprov.boot.dhcpclient import acquire4
from hfcprov.boot.leases import KeaLeaseApi, MemfileLeases
from hfcprov.config import decode, verify_cm_mic
from hfcprov.tftp import TftpServer, fetch_many
from hfcprov.tftp.dynamic import ConfigFileBuilder, DynamicConfigError, load_dynamic
from hfcprov.tftp.protocol import TftpErrors
from tests.keasupport import Kea

from .helpers import records, wait_idle

A, B, C = "001095000001", "001095000002", "001095000003"
BASE = {"Dhcp4": {"valid-lifetime": 600, "subnet4": [{"id": 1, "subnet": "127.0.10.0/24",
                                                       "relay": {"ip-addresses": ["127.0.0.1"]},
                                                       "pools": [{"pool": "127.0.10.100 - 127.0.10.200"}]}]}}


@pytest.fixture
def lab(tmp_path):
    """Kea with reservations exported from the inventory; modems A and B hold their leases."""
    (tmp_path / "modems.csv").write_text(f"mac,tier,ip\n{A},res-50x5,127.0.10.5\n{B},res-100x10,127.0.10.6\n"
                                         f"{C},res-50x5,127.0.10.7\n")
    plan = plan_reservations(tmp_path / "modems.csv", 4)
    config, _ = kea_config(plan, 4, BootServers(tftp=("127.0.0.1",)), base=BASE)
    kea = Kea(4, config, lease_cmds=True).start()
    relay = {"server": kea.server, "relay": "127.0.0.1", "reply_port": kea.reply_port}
    assert acquire4(A, **relay).address == "127.0.10.5"
    assert acquire4(B, **relay).address == "127.0.10.6"
    (tmp_path / "root").mkdir()
    yield tmp_path, kea
    kea.cleanup()


def serve(lab_dir, builder):
    log = io.StringIO()
    return TftpServer(lab_dir / "root", "127.0.0.1", 0, dynamic=builder, log=log), log


def get(srv, name, source):
    (f,) = fetch_many("127.0.0.1", srv.port, [name], bind=source, timeout=2.0, retries=2)
    return f


@pytest.mark.parametrize("source", ["memfile", "api"])
def test_a_host_without_the_lease_is_refused_the_file(lab, source):
    lab_dir, kea = lab
    leases = MemfileLeases(kea.lease_file, max_age=0) if source == "memfile" else KeaLeaseApi(kea.socket)
    builder = ConfigFileBuilder(lab_dir / "modems.csv", processes=0, leases=leases)
    srv, log = serve(lab_dir, builder)
    with srv:
        own = get(srv, f"{A}.cm", "127.0.10.5")  # A's address, A's file
        assert own.ok, own.error
        verify_cm_mic(own.data)
        assert decode(own.data).find("20")[0].value == "127.0.10.5"  # TLV 20: the modem that holds the lease
        theft = get(srv, f"{A}.cm", "127.0.10.6")  # B asks for A's tier
        assert not theft.ok and theft.error_code == TftpErrors.AccessViolation
        stranger = get(srv, f"{A}.cm", "127.0.0.1")  # a host with no lease at all
        assert not stranger.ok and stranger.error_code == TftpErrors.AccessViolation
        assert get(srv, f"{B}.cm", "127.0.10.6").ok  # B's own file still goes to B
        kea.control.command("lease4-del", {"ip-address": "127.0.10.5"})  # A's lease is gone: so is A's file
        gone = get(srv, f"{A}.cm", "127.0.10.5")
        assert not gone.ok and gone.error_code == TftpErrors.AccessViolation
        wait_idle(srv)
    refused = [r for r in records(log.getvalue()) if r["result"] == "refused"]
    assert [(r["client"].split(":")[0], r["file"]) for r in refused] == [
        ("127.0.10.6", f"{A}.cm"), ("127.0.0.1", f"{A}.cm"), ("127.0.10.5", f"{A}.cm")]
    assert f"modem {A}'s" in refused[0]["detail"] and f"modem {B}'s" in refused[0]["detail"]  # why
    assert "holds no active lease" in refused[1]["detail"] and "holds no active lease" in refused[2]["detail"]
    assert [r["result"] for r in records(log.getvalue())].count("ok") == 2


def test_a_modem_gets_its_file_right_after_its_lease(lab):
    """A modem asks for its file milliseconds after the DHCP ACK: the lease table read a moment before
    (and kept up to a second) must not refuse it; a refusal is checked on the file as it is now."""
    lab_dir, kea = lab
    builder = ConfigFileBuilder(lab_dir / "modems.csv", processes=0, leases=MemfileLeases(kea.lease_file))
    srv, _ = serve(lab_dir, builder)
    with srv:
        assert get(srv, f"{A}.cm", "127.0.10.5").ok  # the table is read now, C holds no lease yet
        relay = {"server": kea.server, "relay": "127.0.0.1", "reply_port": kea.reply_port}
        assert acquire4(C, **relay).address == "127.0.10.7"
        fresh = get(srv, f"{C}.cm", "127.0.10.7")
        assert fresh.ok, fresh.error


def test_key_ip_finds_the_modem_by_its_lease(lab):
    """key: ip reads the lease instead of an inventory column: whatever name is asked for, the
    requester gets the file of the modem whose lease it holds, and a host with none gets nothing."""
    lab_dir, kea = lab
    (lab_dir / "modems.csv").write_text(f"mac,tier\n{A},res-50x5\n{B},res-100x10\n")  # no ip column at all
    (lab_dir / "dyn.yaml").write_text(f"inventory: modems.csv\nkey: ip\nprocesses: 0\nleases: {kea.lease_file}\n")
    builder = load_dynamic(lab_dir / "dyn.yaml")
    srv, log = serve(lab_dir, builder)
    with srv:
        a, b = get(srv, "any-name.cm", "127.0.10.5"), get(srv, "any-name.cm", "127.0.10.6")
        assert a.ok and b.ok and a.data != b.data
        assert decode(a.data).find("20")[0].value == "127.0.10.5" and decode(b.data).find("20")[0].value == "127.0.10.6"
        nobody = get(srv, "any-name.cm", "127.0.0.1")
        assert nobody.error_code == TftpErrors.AccessViolation
        wait_idle(srv)
    (refused,) = [r for r in records(log.getvalue()) if r["result"] == "refused"]
    assert refused["client"].startswith("127.0.0.1:") and refused["file"] == "any-name.cm"
    assert "127.0.0.1 holds no active lease" in refused["detail"]


def test_lease_bound_needs_a_lease_source(tmp_path):
    (tmp_path / "modems.csv").write_text(f"mac,tier\n{A},res-50x5\n")
    with pytest.raises(DynamicConfigError, match="lease_bound needs a lease source"):
        ConfigFileBuilder(tmp_path / "modems.csv", processes=0, lease_bound=True)
    (tmp_path / "dyn.yaml").write_text("inventory: modems.csv\nleases: nowhere.csv\n")
    with pytest.raises(DynamicConfigError, match="nowhere.csv: no such lease file"):
        load_dynamic(tmp_path / "dyn.yaml")


def test_the_shipped_lease_bound_example_loads(tmp_path):
    """examples/tftp-lease-bound.yaml as an operator copies it, with the lease file where their Kea writes it."""
    from tests.support import REPO

    example = (REPO / "examples" / "tftp-lease-bound.yaml").read_text()
    leases = tmp_path / "kea-leases4.csv"
    leases.write_text("address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,"
                      "user_context\n")
    text = example.replace("/var/lib/kea/kea-leases4.csv", str(leases), 1)
    text = text.replace("inventory: inventory.csv", f"inventory: {REPO / 'examples' / 'inventory.csv'}")
    text = text.replace("templates: ../templates", f"templates: {REPO / 'templates'}")
    (tmp_path / "dyn.yaml").write_text(text + "processes: 0\n")
    builder = load_dynamic(tmp_path / "dyn.yaml")
    assert builder.lease_bound and builder.key == "filename" and builder.leases.describe() == str(leases)
