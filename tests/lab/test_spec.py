"""The campaign file: grid expansion, units at the edge, one clear line per mistake."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.lab.spec import CampaignError, load_campaign, parse_campaign
from tests.lab.conftest import write


def test_grid_expands_every_combination_with_units_parsed(small_spec):
    camp = load_campaign(small_spec)
    points = camp.points()
    assert len(points) == 2 * 3 * 2
    assert {p.upstream_rate for p in points} == {1e6, 5e6}
    assert {p.buffer for p in points} == {16384, 65536, 262144}
    assert {p.rtt for p in points} == {0.04, 0.1}
    assert camp.traffic.duration == 4.0 and camp.traffic.warmup == 1.0
    assert [p.index for p in points] == list(range(12))
    assert len({p.key for p in points}) == 12
    # grouped by rate: the first half of the points is the first rate
    assert {p.upstream_rate for p in points[:6]} == {1e6}


def test_repetitions_get_their_own_points_and_seeds(tmp_path):
    camp = parse_campaign("grid: {upstream_rate: 2M, buffer: 32K}\nrepetitions: 3\nseed: 7\n")
    pts = camp.points()
    assert [(p.rep, p.seed) for p in pts] == [(0, 7), (1, 8), (2, 9)]
    assert len({p.key for p in pts}) == 3


@pytest.mark.parametrize("text, where, what", [
    ("grid:\n  upstream_rate: 1M\n  buffer: [16K, 64KX]\n", ":3: grid.buffer[1]", "bad size '64KX'"),
    ("grid:\n  upstream_rate: fast\n  buffer: 16K\n", ":2: grid.upstream_rate", "bad rate 'fast'"),
    ("grid: {upstream_rate: 1M}\n", "grid", "needs buffer"),
    ("grid: {upstream_rate: 1M, buffer: 16K}\ntraffic:\n  duration: 0\n", ":3: traffic.duration", "greater than 0"),
    ("grid: {upstream_rate: 1M, buffer: 16K, congestion_control: vegas}\n", "congestion_control", "vegas"),
    ("grid: {upstream_rate: 1M, buffer: 16K}\ntarget: {kind: modem}\n", "target.modems", "at least one modem"),
    ("grid: {upstream_rate: 1M, buffer: 16K}\ntarget:\n  snmp: {version: 3, user: u}\n", ":3: target.snmp.auth_key",
     "needs an auth key"),
    ("grid: {upstream_rate: 1M, buffer: 16K}\ntarget:\n  snmp: {version: 3, community: c, user: u, auth_key: k}\n",
     ":3: target.snmp.community", "SNMPv3 has no community"),
    ("grid: {upstream_rate: 1M, buffer: 16K}\ntarget:\n  snmp: {version: 3, auth_key: k}\n", "target.snmp.user",
     "needs a user"),
    ("grid: {upstream_rate: 1M, buffer: 16K}\ntarget:\n  snmp: {user: u}\n", "target.snmp.user", "set version: 3"),
    ("grid: {upstream_rate: 1M, buffer: 16K}\ntarget:\n  snmp: {version: 1}\n", "target.snmp.version",
     "unknown SNMP version"),
    ("grid: {upstream_rate: 1M, buffer: 16K}\ntarget:\n  snmp: {version: 3, user: u, auth_key: k, auth_protocol: SHA1}\n",
     "target.snmp.auth_protocol", "unknown auth protocol 'SHA1'"),
    ("grid: {upstream_rate: 1M, buffer: 16K}\ntarget:\n  probe: {srv: x}\n", "target.probe.srv", "unknown key"),
    ("grid: {upstream_rate: 1M, buffer: 16K}\ntarget:\n  tftp: {port: sixty-nine}\n", "target.tftp.port",
     "whole number"),
    ("grid: {upstream_rate: 1M, buffer: 16K}\ntarget: {kind: emu}\n", "template", "needs a tier template"),
    ("grid: {upstream_rate: 1M, buffer: 16K}\nrepetitions: 0\n", ":2: repetitions", "whole number >= 1"),
    ("grid: {upstream_rate: 1M, buffer: [16K, 16KiB]}\n", "grid.buffer[1]", "appears twice"),
    ("grid: {upstream_rate: 1M, buffer: 16K, loss: 150%}\n", "grid.loss", "must be in [0, 1)"),
    ("grid: {upstream_rate: 1M, buffer: 16K}\nbufer: 3\n", ":2: bufer", "unknown key"),
    ("grid: [1, 2\n", "c.yaml:2", "not valid YAML"),
])
def test_mistakes_are_one_line_with_line_and_key(text, where, what):
    with pytest.raises(CampaignError) as info:
        parse_campaign(text, source="c.yaml")
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("c.yaml")
    assert where in msg and what in msg


def test_missing_file_names_it(tmp_path):
    with pytest.raises(CampaignError, match="nope.yaml: cannot read"):
        load_campaign(tmp_path / "nope.yaml")


def test_loss_as_percentage(tmp_path):
    camp = parse_campaign("grid: {upstream_rate: 1M, buffer: 16K, loss: [0, 1%, 0.02]}\n")
    assert camp.grid["loss"] == (0.0, 0.01, 0.02)


def test_fingerprint_ignores_description_but_not_grid():
    a = parse_campaign("description: x\ngrid: {upstream_rate: 1M, buffer: 16K}\n")
    b = parse_campaign("description: y\njobs: 4\ngrid: {upstream_rate: 1M, buffer: 16K}\n")
    c = parse_campaign("grid: {upstream_rate: 1M, buffer: 32K}\n")
    assert a.fingerprint == b.fingerprint != c.fingerprint


def test_secrets_stay_out_of_the_record(tmp_path):
    tpl = write(tmp_path, "Main { }\n", "tier.j2")
    camp = parse_campaign(
        f"template: {tpl}\ntarget:\n  kind: modem\n  secret: hunter2\n  modems: [{{mac: '00:11:22:33:44:55', ip: 10.0.0.2}}]\n"
        "  snmp: {community: public, write_community: s3cret}\n  tftp: {root: /srv/tftp}\n  probe: {server: 10.0.1.1}\n"
        "  cmts: {address: 10.0.0.1, snmp: {version: 3, user: u, auth_key: authkey99, priv_key: privkey99}}\n"
        "grid: {upstream_rate: 1M, buffer: 16K}\n")
    rec = str(camp.to_record())
    assert "hunter2" not in rec and "s3cret" not in rec and "authkey99" not in rec and "privkey99" not in rec
    assert camp.target.secret == "hunter2" and camp.target.cmts.snmp.auth_key == "authkey99"


rates = st.lists(st.integers(min_value=1000, max_value=10**9), min_size=1, max_size=4, unique=True)
sizes = st.lists(st.integers(min_value=1, max_value=2**24), min_size=1, max_size=4, unique=True)
rtts = st.lists(st.integers(min_value=0, max_value=2000), min_size=1, max_size=3, unique=True)


@settings(max_examples=60, deadline=None)
@given(rates, sizes, rtts, st.integers(min_value=1, max_value=3))
def test_grid_is_a_full_product_with_unique_keys(us, bufs, rtt_ms, reps):
    text = (f"grid:\n  upstream_rate: {us}\n  buffer: {bufs}\n  rtt: {[f'{r}ms' for r in rtt_ms]}\n"
            f"repetitions: {reps}\n")
    camp = parse_campaign(text)
    pts = camp.points()
    assert len(pts) == len(us) * len(bufs) * len(rtt_ms) * reps
    assert len({p.key for p in pts}) == len(pts)
    assert {p.upstream_rate for p in pts} == {float(u) for u in us}
    assert {p.buffer for p in pts} == set(bufs)
    assert all(any(math.isclose(p.rtt, r / 1000) for r in rtt_ms) for p in pts)


def test_shipped_examples_load():
    from tests.support import REPO

    kinds = {}
    for path in sorted((REPO / "examples").glob("*campaign*.yaml")) + [REPO / "examples" / "buffer-sweep.yaml"]:
        camp = load_campaign(path)
        kinds[path.name] = camp.target.kind
        assert camp.points()
    assert kinds == {"buffer-sweep.yaml": "sim", "campaign-aqm.yaml": "sim", "emu-campaign.yaml": "emu",
                     "lab-campaign.yaml": "modem"}
    lab = load_campaign(REPO / "examples" / "lab-campaign.yaml")
    assert "env:" in lab.target.secret and len(lab.points()) == 4 * 6 * 3


def test_a_key_keeps_values_the_display_rounds_apart():
    camp = parse_campaign("grid:\n  upstream_rate: [1000000, 1000001]\n  buffer: 16KiB\n  rtt: [1000ms, 1001ms, 40ms]\n")
    keys = [p.key for p in camp.points()]
    assert len(set(keys)) == 6
    assert any("us=1 Mb/s" in k and "rtt=40 ms" in k for k in keys)  # round values keep their display form
    assert any("rtt=1.001 s" in k and "us=1000001 b/s" in k for k in keys)


def _modem(tmp_path, extra: str = "", modem: str = "{mac: '00:11:22:33:44:55', ip: 10.0.0.2}") -> str:
    tpl = write(tmp_path, "Main { }\n", "tier.j2")
    return (f"template: {tpl}\ngrid: {{upstream_rate: 1M, buffer: 16K}}\ntarget:\n  kind: modem\n"
            f"  modems: [{modem}]\n  tftp: {{root: {tmp_path}}}\n  probe: {{server: 10.0.1.1}}\n{extra}")


def test_a_modem_campaign_needs_every_role(tmp_path):
    for text, where, what in [
        (_modem(tmp_path).replace(f"  tftp: {{root: {tmp_path}}}\n", ""), "target.tftp", "give root"),
        (_modem(tmp_path).replace("  probe: {server: 10.0.1.1}\n", ""), "target.probe.server", "answers the probe"),
        (_modem(tmp_path, modem="{mac: '00:11:22:33:44:55'}"), "target.modems[0]", "target.cmts to find it"),
        (_modem(tmp_path, "  cmts: {snmp: {port: 1161}}\n"), "target.cmts.address", "address is needed"),
        (_modem(tmp_path).replace("root: ", "filename: '{serial}.cm', root: "), "target.tftp.filename", "{serial}"),
    ]:
        with pytest.raises(CampaignError) as info:
            parse_campaign(text, source="c.yaml")
        assert where in str(info.value) and what in str(info.value), str(info.value)


def test_snmpv3_is_kept_never_turned_into_v2c(tmp_path):
    camp = parse_campaign(_modem(tmp_path, "  snmp: {version: 3, user: lab, auth_protocol: sha256, auth_key: env:A,\n"
                                           "         priv_protocol: aes256, key_file: keys/lab.v3, namespace: mgmt}\n"
                                           "  cmts: 10.0.0.1\n"), source=str(tmp_path / "c.yaml"))
    snmp = camp.target.snmp
    assert (snmp.version, snmp.user, snmp.auth_protocol, snmp.priv_protocol) == ("3", "lab", "SHA256", "AES256")
    assert snmp.key_file == str(tmp_path / "keys" / "lab.v3") and snmp.namespace == "mgmt"
    # the CMTS takes the modem's SNMP unless its own section says otherwise
    assert camp.target.cmts.address == "10.0.0.1" and camp.target.cmts.snmp == snmp
    camp = parse_campaign(_modem(tmp_path, "  snmp: {version: 3, user: lab, auth_key: env:A}\n"
                                           "  cmts: {address: 10.0.0.1, snmp: {version: 2c, community: env:C}}\n"))
    assert camp.target.cmts.snmp.version == "2c" and camp.target.snmp.version == "3"
