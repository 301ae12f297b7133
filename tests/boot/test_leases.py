"""Kea memfile lease files read as Kea writes them: last line wins, deletions, expiry, states,
lines appended while reading, the files lease file cleanup (LFC) rotates, DHCPv6 DUIDs.

The headers and line shapes are those Kea 2.2 writes (tests/boot/test_kea_live.py and
tests/tftp/test_lease_bound.py read files a real Kea wrote)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov.boot.leases import LeaseError, MemfileLeases, lease_source, mac_from_duid

HEAD4 = "address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,user_context\n"
HEAD6 = ("address,duid,valid_lifetime,expire,subnet_id,pref_lifetime,lease_type,iaid,prefix_len,fqdn_fwd,fqdn_rev,"
         "hostname,hwaddr,state,user_context,hwtype,hwaddr_source\n")
NOW = 1_800_000_000


def line4(address, mac, lifetime=600, expire=NOW + 300, state=0):
    return f"{address},{mac},,{lifetime},{expire},1,0,0,,{state},\n"


def leases(path, **kw):
    return MemfileLeases(path, max_age=0, clock=lambda: NOW, **kw)


def test_last_line_of_an_address_wins(tmp_path):
    f = tmp_path / "leases4.csv"
    f.write_text(HEAD4 + line4("10.1.0.5", "00:10:95:00:00:01") + line4("10.1.0.6", "00:10:95:00:00:02")
                 + line4("10.1.0.5", "00:10:95:00:00:03"))  # the address moved to another modem
    t = leases(f)
    assert t.lookup("10.1.0.5").mac == "001095000003"
    assert t.lookup("10.1.0.6").mac == "001095000002"
    assert t.lookup("10.1.0.7") is None and t.lookup("not an address") is None


@pytest.mark.parametrize("last, held", [
    (line4("10.1.0.5", "00:10:95:00:00:01", lifetime=0, expire=NOW), False),  # deleted (lease4-del, release)
    (line4("10.1.0.5", "00:10:95:00:00:01", expire=NOW - 1), False),  # expired
    (line4("10.1.0.5", "00:10:95:00:00:01", state=1), False),  # declined
    (line4("10.1.0.5", "00:10:95:00:00:01", state=2), False),  # expired-reclaimed
    (line4("10.1.0.5", "00:10:95:00:00:01", expire=NOW + 1), True),
])
def test_only_an_active_lease_is_held(tmp_path, last, held):
    f = tmp_path / "leases4.csv"
    f.write_text(HEAD4 + line4("10.1.0.5", "00:10:95:00:00:01") + last)
    assert (leases(f).lookup("10.1.0.5") is not None) is held


def test_appended_lines_are_read_and_a_half_written_line_waits(tmp_path):
    f = tmp_path / "leases4.csv"
    f.write_text(HEAD4 + line4("10.1.0.5", "00:10:95:00:00:01"))
    t = leases(f)
    whole = line4("10.1.0.5", "00:10:95:00:00:02")
    with open(f, "a") as out:
        out.write(whole[:20])  # Kea is in the middle of writing this line
        out.flush()
        assert t.lookup("10.1.0.5").mac == "001095000001"
        out.write(whole[20:])
    assert t.lookup("10.1.0.5").mac == "001095000002"


def test_lfc_rotation_keeps_every_lease(tmp_path):
    """Kea's cleanup moves the lease file to .1, starts a new one, and compacts into .2: the state
    is .2, then .1, then the file; a table that read the old file must not lose a lease over it."""
    f = tmp_path / "leases4.csv"
    f.write_text(HEAD4 + line4("10.1.0.5", "00:10:95:00:00:01") + line4("10.1.0.6", "00:10:95:00:00:02"))
    t = leases(f)
    assert t.lookup("10.1.0.6").mac == "001095000002"
    os.rename(f, tmp_path / "leases4.csv.1")
    f.write_text(HEAD4 + line4("10.1.0.7", "00:10:95:00:00:03"))
    assert [t.lookup(a).mac for a in ("10.1.0.5", "10.1.0.6", "10.1.0.7")] == ["001095000001", "001095000002",
                                                                              "001095000003"]
    (tmp_path / "leases4.csv.2").write_text(HEAD4 + line4("10.1.0.5", "00:10:95:00:00:01") +
                                            line4("10.1.0.6", "00:10:95:00:00:02"))
    os.unlink(tmp_path / "leases4.csv.1")
    with open(f, "a") as out:
        out.write(line4("10.1.0.6", "00:10:95:00:00:02", lifetime=0, expire=NOW))  # released after the cleanup
    assert t.lookup("10.1.0.5").mac == "001095000001"
    assert t.lookup("10.1.0.6") is None
    assert t.lookup("10.1.0.7").mac == "001095000003"


def test_dhcpv6_lease_names_the_modem_by_hwaddr_or_duid(tmp_path):
    f = tmp_path / "leases6.csv"
    f.write_text(HEAD6
                 + f"fd00:10::5,00:03:00:01:00:10:95:00:00:01,600,{NOW + 300},1,300,0,1,128,0,0,,00:10:95:00:00:01,0,,1,2\n"
                 + f"fd00:10::6,00:01:00:01:2a:2b:2c:2d:00:10:95:00:00:02,600,{NOW + 300},1,300,0,2,128,0,0,,,0,,,\n"
                 + f"FD00:10:0::7,00:02:00:00:11:8b:01,600,{NOW + 300},1,300,0,3,128,0,0,,,0,,,\n")
    t = leases(f)
    assert t.lookup("fd00:10::5").mac == "001095000001"  # hwaddr column
    assert t.lookup("fd00:10:0:0::6").mac == "001095000002"  # from the DUID-LLT; any spelling of the address
    assert t.lookup("fd00:10::7").mac is None  # a DUID-EN carries no MAC


@given(st.binary(min_size=6, max_size=6), st.sampled_from(["llt", "ll"]))
def test_mac_from_duid(mac, kind):
    duid = (b"\x00\x01\x00\x01\x12\x34\x56\x78" if kind == "llt" else b"\x00\x03\x00\x01") + mac
    assert mac_from_duid(duid.hex(":")) == mac.hex()
    assert mac_from_duid(b"\x00\x03\x00\x06" + mac) is None  # not Ethernet


def test_bad_sources_are_one_clear_error(tmp_path):
    with pytest.raises(LeaseError, match="no such lease file"):
        MemfileLeases(tmp_path / "missing.csv")
    (tmp_path / "other.csv").write_text("mac,tier\n001095000001,gold\n")
    with pytest.raises(LeaseError, match="not a Kea lease file"):
        MemfileLeases(tmp_path / "other.csv")
    with pytest.raises(LeaseError, match="not both"):
        lease_source([tmp_path / "other.csv"], tmp_path / "sock")
    with pytest.raises(LeaseError, match="no Kea control socket"):
        lease_source(None, tmp_path / "sock")
