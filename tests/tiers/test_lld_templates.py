"""The shipped Low Latency DOCSIS tiers emit what MULPI provisions: TLV 70/71 aggregate service flows,
each with a classic and a low-latency flow naming it (24/25.36), the low-latency flow's classifiers
(ECT(1)/CE and DSCP 45); the codec decodes the encoded file back into the same aggregates."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.config import decode, encode
from hfcprov.emu.aqmstage import packet_matches
from hfcprov.model import (
    aggregate_service_flows,
    classifiers,
    lld_findings,
    low_latency_aggregates,
    modem_settings,
    service_flows,
)
from hfcprov.tiers import render_tree
from hfcprov.tiers.templates import SHIPPED

LLD_TIERS = sorted(p.stem for p in SHIPPED.glob("lld-*.j2"))
MAC = {"mac": "001122aabbcc"}


def decoded(tier: str, variables: dict):
    tree = decode(encode(render_tree(tier, {**MAC, **variables})))
    return tree, service_flows(tree), aggregate_service_flows(tree)


def ipv4(tos: int) -> bytes:
    return bytes([0x45, tos]) + b"\0" * 18


def test_lld_tiers_are_shipped():
    assert LLD_TIERS == ["lld-1000x50", "lld-100x10", "lld-300x20"]


@pytest.mark.parametrize("tier", LLD_TIERS + ["res-100x10"])
def test_a_low_latency_tier_encodes_70_and_71_that_decode_into_aggregates(tier):
    variables = {"aqm": "lld"} if tier.startswith("res-") else {}
    tree, flows, asfs = decoded(tier, variables)
    assert [t.code for t in tree.tlvs].count(70) == 1 and [t.code for t in tree.tlvs].count(71) == 1
    up, down = asfs
    assert (up.direction, down.direction) == ("upstream", "downstream")
    for asf in asfs:
        members = [f for f in flows if f.direction == asf.direction and f.asf_ref == asf.ref]
        assert len(members) == 2 and asf.low_latency_ref in {f.ref for f in members}
        assert [f.low_latency for f in members] == [False, True]
        ll = members[1]
        rules = [c for c in classifiers(tree) if c.direction == asf.direction and c.sf_ref == ll.ref]
        # ECT(1) and CE and DSCP 45 reach the low-latency flow; ECT(0), Not-ECT and other DSCPs do not
        hits = {tos: any(packet_matches(c, ipv4(tos)) for c in rules) for tos in (0, 1, 2, 3, 45 << 2, 46 << 2)}
        assert hits == {0: False, 1: True, 2: False, 3: True, 45 << 2: True, 46 << 2: False}
    (lla,) = low_latency_aggregates(flows, asfs, modem_settings(tree))
    assert lla.asf is up and (lla.coupling, lla.weight, lla.queue_protection) == (2.0, 230, True)
    assert lla.rate == lla.classic.max_sustained_rate and lla.classic_buffer() == lla.classic.target_buffer
    assert lla.pgs is None and lld_findings(flows, asfs) == []


@settings(max_examples=25, deadline=None)
@given(rate=st.integers(5, 600).map(lambda m: f"{m}M"), buffer=st.integers(16, 1024).map(lambda k: f"{k}KiB"),
       pgs=st.none() | st.tuples(st.integers(100, 5000).map(lambda k: f"{k}k"),
                                  st.sampled_from([None, "500us", "1ms", "2ms"])))
def test_the_tier_variables_reach_the_aggregate(rate, buffer, pgs):
    variables = {"us_rate": rate, "us_buffer": buffer}
    if pgs is not None:
        variables.update(pgs_rate=pgs[0], pgs_interval=pgs[1])
    tree, flows, asfs = decoded("lld-300x20", variables)
    (lla,) = low_latency_aggregates(flows, asfs, modem_settings(tree))
    mbps, kib = int(rate[:-1]), int(buffer[:-3])
    assert (lla.rate, lla.classic_buffer()) == (mbps * 1e6, kib * 1024)
    if pgs is None:
        assert lla.pgs is None
    else:
        assert lla.pgs.rate == int(pgs[0][:-1]) * 1e3
        assert lla.pgs.interval == ({None: None, "500us": 0.0005, "1ms": 0.001, "2ms": 0.002}[pgs[1]])
