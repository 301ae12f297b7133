"""Kea reservations from the inventory: placement in an operator's config, what Kea -t accepts,
errors that name the row, and the one file-name rule shared with `build` and the TFTP server."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hfcprov.boot.dhcp import BootServers, DhcpExportError, kea_config, plan_reservations
from hfcprov.boot.kea import KeaError, check_config, parse_config, strip_comments
from tests.support import require_tool

SERVERS = BootServers(tftp=("10.0.0.1", "fd00::1"))


def inventory(tmp_path, text):
    p = tmp_path / "modems.csv"
    p.write_text(text)
    return p


def hfcprov(*args):
    return subprocess.run([sys.executable, "-m", "hfcprov", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def reservations(config, family=4):
    key = "subnet4" if family == 4 else "subnet6"
    return {s["subnet"]: s.get("reservations", []) for s in config[f"Dhcp{family}"][key]}


def test_each_reservation_goes_to_the_subnet_that_holds_its_address(tmp_path):
    inv = inventory(tmp_path, "mac,tier,ip\n001095000001,gold,10.1.0.5\n001095000002,gold,10.2.0.5\n"
                              "001095000003,gold,\n")
    base = {"Dhcp4": {"shared-networks": [{"name": "node-a", "subnet4": [{"id": 4, "subnet": "10.1.0.0/24"}]}],
                      "subnet4": [{"id": 9, "subnet": "10.0.0.0/8"}, {"id": 2, "subnet": "10.2.0.0/24"}]}}
    config, summary = kea_config(plan_reservations(inv, 4), 4, SERVERS, base=base, subnets=["10.9.0.0/24"])
    shared = config["Dhcp4"]["shared-networks"][0]["subnet4"][0]["reservations"]
    assert [r["hw-address"] for r in shared] == ["00:10:95:00:00:01"]  # the most specific subnet, in its network
    placed = reservations(config)
    assert [r["ip-address"] for r in placed["10.2.0.0/24"]] == ["10.2.0.5"]
    assert placed["10.0.0.0/8"] == [] and placed["10.9.0.0/24"][0]["hw-address"] == "00:10:95:00:00:03"
    assert summary.subnets_added == ["10.9.0.0/24"]  # an address-less row: the only --subnet, added with a new id
    assert config["Dhcp4"]["subnet4"][-1]["id"] == 10
    assert base["Dhcp4"]["subnet4"][0] == {"id": 9, "subnet": "10.0.0.0/8"}  # the caller's base is not touched


def test_a_second_export_replaces_its_own_and_keeps_the_operators(tmp_path):
    inv = inventory(tmp_path, "mac,tier,ip\n001095000001,gold,10.1.0.5\n001095000002,gold,10.1.0.6\n")
    base = {"Dhcp4": {"subnet4": [{"id": 1, "subnet": "10.1.0.0/24", "reservations": [
        {"hw-address": "02:00:00:00:00:99", "ip-address": "10.1.0.99"},  # the operator's own
        {"hw-address": "00-10-95-00-00-02", "ip-address": "10.1.0.66"}]}]}}  # hand-written for an inventory modem
    first, s1 = kea_config(plan_reservations(inv, 4), 4, SERVERS, base=base)
    assert s1.replaced == 1
    inv.write_text("mac,tier,ip\n001095000001,gold,10.1.0.7\n")  # 0002 left the inventory, 0001 moved
    second, s2 = kea_config(plan_reservations(inv, 4), 4, SERVERS, base=first)
    got = {r["hw-address"]: r.get("ip-address") for r in reservations(second)["10.1.0.0/24"]}
    assert got == {"02:00:00:00:00:99": "10.1.0.99", "00:10:95:00:00:01": "10.1.0.7"}
    assert (s2.replaced, s2.removed, s2.reservations) == (0, 1, 1)


@pytest.mark.parametrize("text, base, message", [
    ("mac,ip\n001095000001,10.5.0.5\n", None, "modems.csv line 2: no subnet holds 10.5.0.5"),
    ("mac,ip\n001095000001,\n", {"Dhcp4": {"subnet4": [{"subnet": "10.3.0.0/24"}, {"subnet": "10.2.0.0/24"}]}},
     "modems.csv line 2: no address and no subnet column, and 2 subnets to choose from"),
    ("mac,ip\n001095000001,10.1.0.5\n001095000002,10.1.0.5\n", None, "line 3: 10.1.0.5 is already reserved on"),
    ("mac,ip\n001095000001,10.1.0.99\n", {"Dhcp4": {"subnet4": [{"subnet": "10.1.0.0/24", "reservations": [
        {"hw-address": "02:00:00:00:00:99", "ip-address": "10.1.0.99"}]}]}},
     "10.1.0.99 is already reserved for 02:00:00:00:00:99 in the base config"),
    ("mac,ip\n001095000001,10.1.0.300\n", None, "modems.csv line 2: ip '10.1.0.300' is not an IP address"),
    ("mac,ip,subnet\n001095000001,10.1.0.5,10.2.0.0/24\n", None, "10.1.0.5 is not in its subnet 10.2.0.0/24"),
    ("mac,ip\n001095000001,10.1.0.5\n", {"Dhcp6": {}}, "no Dhcp4 map (it is a Dhcp6 config: use --format kea6)"),
])
def test_rows_and_bases_the_export_cannot_place_are_named(tmp_path, text, base, message):
    inv = inventory(tmp_path, text)
    with pytest.raises(DhcpExportError) as err:
        kea_config(plan_reservations(inv, 4), 4, SERVERS, base=base, subnets=[] if base else ["10.1.0.0/24"])
    assert message in str(err.value)


@pytest.mark.parametrize("family", [4, 6])
def test_kea_accepts_the_export(tmp_path, family):
    require_tool(f"kea-dhcp{family}", f"kea-dhcp{family}-server")
    inv = inventory(tmp_path, "mac,tier,ip,ipv6,duid\n001095000001,gold,10.1.0.5,fd00:10::5,\n"
                              "001095000002,gold,,,00:03:00:01:00:10:95:00:00:02\n")
    servers = BootServers(tftp=("10.0.0.1", "fd00::1"), log=("10.0.0.2", "fd00::2"), routers=("10.1.0.1",),
                          mta_dhcp=("10.0.0.3", "10.0.0.4"), time_offset=-3600)
    config, _ = kea_config(plan_reservations(inv, family), family, servers, subnets=["10.1.0.0/24", "fd00:10::/64"])
    check_config(config, family)  # raises with Kea's reason if refused
    broken = json.loads(json.dumps(config))
    subnet = broken[f"Dhcp{family}"][f"subnet{family}"][0]
    subnet["reservations"][0]["option-data"][1]["space"] = "no-such-space"
    with pytest.raises(KeaError, match=f"kea-dhcp{family} -t refused the config"):
        check_config(broken, family)  # the check can fail


def test_dhcpv6_reserves_by_duid_when_the_row_gives_one(tmp_path):
    inv = inventory(tmp_path, "mac,ipv6,duid\n001095000001,fd00:10::5,\n001095000002,,00-03-00-01-00-10-95-00-00-02\n")
    config, _ = kea_config(plan_reservations(inv, 6), 6, SERVERS, subnets=["fd00:10::/64"])
    first, second = reservations(config, 6)["fd00:10::/64"]
    assert first["hw-address"] == "00:10:95:00:00:01" and first["ip-addresses"] == ["fd00:10::5"]
    assert second["duid"] == "00:03:00:01:00:10:95:00:00:02" and "ip-addresses" not in second
    options = {(o.get("space", "dhcp6"), o["name"]): o["data"] for o in first["option-data"]}
    assert options[("vendor-4491", "config-file")] == "001095000001.cm"
    assert options[("dhcp6", "vendor-opts")] == "4491"


def test_kea_comments_are_read_as_kea_reads_them():
    text = '{ // c\n "a": "x // not a comment", # c\n /* c\n c */ "b": "y /* nor this */" }'
    assert parse_config(text) == {"a": "x // not a comment", "b": "y /* nor this */"}
    assert strip_comments(text).count("\n") == text.count("\n")  # errors keep their line numbers
    with pytest.raises(KeaError, match="line 3 column 1: not valid JSON"):
        parse_config('{\n "a": 1,\n}')
    with pytest.raises(KeaError, match="line 2: <.include.> is not followed"):
        parse_config('{\n <?include "/etc/kea/subnets.json"?>\n}')


def test_the_boot_file_name_is_the_file_build_writes(tmp_path):
    """One rule: `build --pattern P` writes the files, `dhcp export --pattern P` hands out their names."""
    inv = inventory(tmp_path, "mac,tier,ip\n00:10:95:00:00:01,res-50x5,10.1.0.5\n0010.9500.0002,res-100x10,10.1.0.6\n")
    pattern = "{tier}-{mac}.cm"
    r = hfcprov("build", "-i", inv, "-o", tmp_path / "tftp", "--pattern", pattern, "--no-cmts-mic")
    assert r.returncode == 0, r.stderr
    r = hfcprov("dhcp", "export", "--format", "kea4", "-i", inv, "-o", tmp_path / "kea4.json", "--pattern", pattern,
                "--tftp-server", "10.0.0.1", "--subnet", "10.1.0.0/24", "--no-check")
    assert r.returncode == 0, r.stderr
    names = [res["boot-file-name"] for res in reservations(json.loads((tmp_path / "kea4.json").read_text()))["10.1.0.0/24"]]
    assert names == ["res-50x5-001095000001.cm", "res-100x10-001095000002.cm"]
    assert all((tmp_path / "tftp" / n).is_file() for n in names)


def test_cli_errors_are_one_line_and_write_nothing(tmp_path):
    inv = inventory(tmp_path, "mac,ip\n001095000001,10.5.0.5\nnot-a-mac,10.1.0.6\n")
    out = tmp_path / "kea4.json"
    r = hfcprov("dhcp", "export", "--format", "kea4", "-i", inv, "-o", out, "--tftp-server", "10.0.0.1",
                "--subnet", "10.1.0.0/24")
    assert r.returncode == 1 and not out.exists()
    assert r.stderr.strip() == "hfcprov: error: modems.csv line 3: bad MAC address 'not-a-mac'"
    r = hfcprov("dhcp", "export", "--format", "kea6", "-i", inv, "-o", out, "--tftp-server", "10.0.0.1")
    assert r.returncode == 1 and "needs an IPv6 --tftp-server" in r.stderr and not out.exists()
    (tmp_path / "base.json").write_text('{"Dhcp4": {"subnet4": [}')
    inv.write_text("mac,ip\n001095000001,10.1.0.5\n")
    r = hfcprov("dhcp", "export", "--format", "kea4", "-i", inv, "-o", out, "--tftp-server", "10.0.0.1",
                "--base", tmp_path / "base.json")
    assert r.returncode == 1 and "base.json line 1 column 24: not valid JSON" in r.stderr and not out.exists()
