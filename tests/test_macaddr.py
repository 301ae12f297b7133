"""One MAC key: every spelling a user types names the same file, inventory row and CMTS record."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov import macaddr
from hfcprov.lab.spec import CampaignError, parse_campaign
from hfcprov.snmp.agentdata import cmts_snmprec
from hfcprov.tiers.inventory import check_row, InventoryRow


def spellings(raw: bytes, upper: bool) -> list[str]:
    h = raw.hex().upper() if upper else raw.hex()
    pairs = [h[i : i + 2] for i in range(0, 12, 2)]
    return [":".join(pairs), "-".join(pairs), h, f"{h[0:4]}.{h[4:8]}.{h[8:12]}", " ".join(pairs)]


@given(st.binary(min_size=6, max_size=6), st.booleans())
def test_every_spelling_is_one_key(raw, upper):
    keys = {macaddr.normalize(s) for s in spellings(raw, upper)}
    assert keys == {raw.hex()}
    assert macaddr.normalize(raw) == raw.hex()
    assert macaddr.octets(raw.hex()) == raw
    assert macaddr.oid_index(raw.hex()) == ".".join(str(b) for b in raw)
    assert macaddr.colon(raw.hex().upper()) == ":".join(f"{b:02x}" for b in raw)


@pytest.mark.parametrize("bad", ["00:11:22:33:44", "00:11:22:33:44:5g", "", "001122334455667", b"\x00\x11"])
def test_not_a_mac_is_one_error(bad):
    with pytest.raises(macaddr.MacAddressError, match="bad MAC address"):
        macaddr.normalize(bad)


SOURCE = str(Path(__file__).resolve().parent.parent / "c.yaml")  # template paths are relative to it
CAMPAIGN = """
name: t
target:
  kind: modem
  modems:
    - {{mac: "{mac}", ip: 10.1.0.50}}
  tftp: {{root: /srv/tftp}}
  probe: {{server: 198.51.100.20}}
template: templates/res-50x5.j2
grid:
  upstream_rate: [1M]
  buffer: [8KiB]
  rtt: 40ms
"""


@pytest.mark.parametrize("spelling", ["00:11:22:AA:BB:CC", "00-11-22-aa-bb-cc", "0011.22aa.bbcc", "001122AABBCC"])
def test_campaign_inventory_and_cmts_agree_on_the_key(spelling):
    campaign = parse_campaign(CAMPAIGN.format(mac=spelling), source=SOURCE)
    assert campaign.target.modems[0]["mac"] == "001122aabbcc"
    assert check_row(InventoryRow("inv line 2", {"mac": spelling, "tier": "x"}))["mac"] == "001122aabbcc"
    assert "|4x|001122aabbcc" in cmts_snmprec([{"mac": spelling, "ip": "10.1.0.50", "status": 8}])


def test_campaign_with_a_bad_mac_names_the_key():
    with pytest.raises(CampaignError, match=r"c.yaml:6: target\.modems\[0\]\.mac: bad MAC address"):
        parse_campaign(CAMPAIGN.format(mac="00:11:22"), source=SOURCE)
