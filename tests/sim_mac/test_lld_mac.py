"""Low Latency DOCSIS on the request-grant upstream (hfcprov.sim.mulpi + sim.aqm.link.LowLatencyCm):
the CMTS grants a Low Latency aggregate's two flows by its scheduling weight and lays Proactive Grant
Service grants before the best-effort ones; with PGS the low-latency flow's packets skip the
request-grant loop. The scheduler's rules are those CableLabs' docsis-ns3 documents for its CMTS."""

from __future__ import annotations

import pytest

from hfcprov.queue.profile import parse_profile
from hfcprov.sim import FlowSpec, Scenario, ScenarioError, TcpOptions, run
from hfcprov.sim.engine import Engine
from hfcprov.sim.mulpi import Aggregate, CmFlow, Upstream

PROFILE = parse_profile("docsis3.1")  # 2 ms MAPs of whole OFDMA frames


def aggregate(rate=50e6, pgs=None, weight=230):
    up = Upstream(Engine(), PROFILE)
    agg = Aggregate(up, rate, 625_000, None, weight=weight, pgs=pgs)
    classic = CmFlow(agg, shaper=(None, 0, None))
    ll = CmFlow(agg, shaper=(None, 0, None))
    agg.low_latency = ll
    return up, agg, classic, ll


def test_both_flows_wanting_more_than_the_map_split_it_by_the_scheduling_weight():
    up, agg, classic, ll = aggregate(rate=None)  # no rate limit: the MAP is the only bound
    classic.backlog = ll.backlog = 10 * up.per_map * up.slot
    grants = agg.schedule(0.0, 0.0, up.per_map)
    share = {f: sum(m for g, _, m, _ in grants if g is f) for f in (classic, ll)}
    assert share[ll] == int(up.per_map * 230 / 256) and share[classic] == up.per_map - share[ll]
    # one block: the low-latency part first, then the classic part right after it
    (lf, ls, lm, _), (cf, cs, cm, _) = grants
    assert (lf, cf) == (ll, classic) and cs == ls + lm


def test_a_flow_that_wants_less_than_its_share_leaves_the_rest_to_the_other():
    up, agg, classic, ll = aggregate(rate=None)
    classic.backlog = 10 * up.per_map * up.slot
    ll.backlog = 3 * up.slot
    grants = agg.schedule(0.0, 0.0, up.per_map)
    share = {f: sum(m for g, _, m, _ in grants if g is f) for f in (classic, ll)}
    assert share == {ll: 3, classic: up.per_map - 3}


def test_proactive_grants_come_every_interval_before_the_best_effort_ones():
    # GGR 2 Mb/s every frame (about 135 us): a minislot or two each frame
    up, agg, classic, ll = aggregate(pgs=(2e6, up_frame := PROFILE.frame))
    assert agg.pgs_every == 1 and agg.pgs_minislots >= 1
    classic.backlog = 10 * up.per_map * up.slot
    grants = agg.schedule(0.0, 0.0, up.per_map)
    pgs = [(s, m) for f, s, m, _ in grants if f is ll]
    assert [s for s, _ in pgs] == [k * up.per_frame for k in range(up.frames)]  # every frame, unasked
    busy = sorted((s, s + m) for _, s, m, _ in grants)
    assert all(a[1] <= b[0] for a, b in zip(busy, busy[1:]))  # no overlap: classic fills around them
    assert up_frame == up.frame


def test_pgs_needs_an_interval_of_at_least_one_frame():
    with pytest.raises(ValueError, match="shorter than one frame"):
        aggregate(pgs=(1e6, PROFILE.frame / 2))


def lld_scenario(rate=50e6, pgs=None, mac="docsis", seconds=8.0, **kw):
    tcp = TcpOptions(variant="sack", mss=1448, header_bytes=52, min_rto=1.0, delack_timeout=0.2)
    return Scenario(rate=rate, buffer=int(rate * 0.05 / 8), rtt=0.02, burst=int(rate * 0.1 / 8), peak=2 * rate,
                    mac=mac, profile="docsis3.1" if mac == "docsis" else None,
                    flows=[FlowSpec(start=0.2) for _ in range(3)], tcp=tcp, duration=seconds, warmup=3.0,
                    sample_interval=None, aqm="lld", aqm_params={"nqb_probes": True}, pgs=pgs,
                    probe_rate=1 / 0.033, probe_size=110, **kw)


@pytest.mark.slow
def test_pgs_takes_the_request_grant_loop_out_of_the_low_latency_flows_latency():
    """A game-like flow (110-byte NQB packets every 33 ms) beside three bulk uploads in one 50 Mb/s Low
    Latency aggregate, 2 ms MAPs: without PGS each packet waits for a request opportunity, the
    request's trip and a MAP (docsis-ns3: 4.8 ms mean); with a 1 Mb/s Guaranteed Grant Rate it rides
    the next proactive grant (docsis-ns3: 1.4 ms). The bulk uploads keep their goodput."""
    without = run(lld_scenario())
    with_pgs = run(lld_scenario(pgs={"rate": 1e6}))
    lat0 = without.extra["mac"]["ll_upstream_latency"]
    lat1 = with_pgs.extra["mac"]["ll_upstream_latency"]
    assert lat0["packets"] > 100 and lat1["packets"] == lat0["packets"]
    assert lat0["p50"] > 0.0035 and lat1["p99"] < 0.003, (lat0, lat1)
    assert with_pgs.goodput_bps == pytest.approx(without.goodput_bps, rel=0.03)
    assert without.goodput_bps > 0.9 * 50e6 * 1448 / 1518
    # the classic flow waits near its DOCSIS-PIE target plus the loop, far above the low-latency one
    assert without.extra["mac"]["upstream_latency"]["p50"] > 2 * lat0["p50"]


def test_on_the_token_bucket_pgs_changes_nothing():
    """Proactive grants only matter where packets wait for grants: the token bucket has none."""
    a = run(lld_scenario(mac="tokenbucket", seconds=5.0))
    b = run(lld_scenario(mac="tokenbucket", seconds=5.0, pgs={"rate": 1e6}))
    assert (a.goodput_bps, a.extra["aqm"]) == (b.goodput_bps, b.extra["aqm"])


def test_lld_on_the_calibrated_docsis20_profile_is_refused_in_one_line():
    with pytest.raises(ScenarioError, match="aqm: lld on mac: docsis needs a DOCSIS 3.1 profile"):
        run(lld_scenario().replace(profile="docsis2.0"))
    with pytest.raises(ScenarioError, match="needs a DOCSIS 3.1 profile .* not docsis3.0-4ch"):
        run(lld_scenario().replace(profile="docsis3.0-4ch"))
    with pytest.raises(ScenarioError, match="pgs: Proactive Grant Service is for the low-latency flow"):
        run(lld_scenario().replace(aqm="docsis-pie", aqm_params=None, pgs={"rate": 1e6}))


def test_a_pgs_grant_holds_a_game_packet_up_to_its_size_and_a_larger_one_waits_a_grant_more():
    """A 1 Mb/s Guaranteed Grant Rate on 1 ms MAPs grants 125 B a MAP (MAC headers paid): IP packets of up
    to 116 B ride one grant, larger ones wait for the next, 1 ms later (docsis-ns3 steps at the same size:
    0.95 ms below it, 1.82 above). Game packets of 110 +- 20 B (docsis-ns3's game client) straddle it."""
    base = lld_scenario(pgs={"rate": 1e6}, seconds=6.0).replace(profile="docsis3.1:map_interval=1ms")
    mean = {}
    for label, change in (("116", {"probe_size": 116}), ("117", {"probe_size": 117}), ("110+-20", {"probe_size_sd": 20})):
        lat = run(base.replace(**change)).extra["mac"]["ll_upstream_latency"]
        assert lat["packets"] > 80
        mean[label] = lat["mean"]
    assert mean["117"] > mean["116"] + 0.0008, mean
    # about a third of the drawn sizes are above 116 B: between the two, and well away from both
    assert mean["116"] + 0.0002 < mean["110+-20"] < mean["117"] - 0.0002, mean


def test_probe_sizes_below_the_headers_are_refused_in_one_line():
    with pytest.raises(ScenarioError, match="probe_size: must be >= 28 bytes"):
        run(lld_scenario(seconds=4.0).replace(probe_size=20))
    with pytest.raises(ScenarioError, match="probe_size_sd >= 0"):
        run(lld_scenario(seconds=4.0).replace(probe_size_sd=-1))
