"""The sizing policy (size_buffer) and the analytic latency/utilization model, against White et al. 2011."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.queue.inputs import SizingError, SizingInputs
from hfcprov.queue.predict import (
    buffer_table,
    latency_under_load,
    predict,
    reno_utilization,
)
from hfcprov.queue.sizing import CM_GUARANTEED_MINIMUM_BUFFER, size_buffer

KiB = 1024


# White et al.'s plant and hosts: a DOCSIS 3.0 modem on one SC-QAM channel (the docsis2.0 profile, the
# calibrated MAC), drop-tail, Reno; the defaults today's entry points take are tested in test_one_answer.py
WHITE = {"profile": "docsis2.0", "congestion_control": "reno", "aqm_latency_target": None}


def advise(rate, rtt, flows=1, min_buffer=False, **inputs):
    return size_buffer(SizingInputs(rate, rtt, flows, **{**WHITE, **inputs}), min_buffer=min_buffer)


def test_papers_latency_example_256k_at_2m():
    # White et al.: a 256 KiB buffer at 2 Mb/s adds about 1 s of upstream latency
    assert latency_under_load(256 * KiB, 2e6) == pytest.approx(1.048576)


def test_bdp_rule_of_thumb_5m_40ms():
    # White et al.: 5000 kb/s * 0.04 s = 200 kb = 24.4 KiB
    a = advise(5e6, 0.040)
    assert a.bdp == pytest.approx(25_000)
    assert a.target == 32 * KiB  # the sizing policy: the ladder size holding one BDP (docs/sizing.md)
    assert a.minimum is None  # omitted unless asked: the modem cannot reject the flow
    assert any("bandwidth-delay product" in r for r in a.reasoning)


def test_target_tracks_white_findings_for_single_flow():
    # 16 KiB sufficed at 1-2 Mb/s; 10 Mb/s needed 64 KiB at 40 ms and 256 KiB at 100 ms
    assert advise(1e6, 0.040).target <= 16 * KiB
    assert advise(2e6, 0.100).target <= 32 * KiB
    assert 32 * KiB < advise(10e6, 0.040).target <= 64 * KiB
    assert 64 * KiB < advise(10e6, 0.100).target <= 256 * KiB
    texts = " ".join(advise(10e6, 0.100).reasoning)
    assert "256 KiB at 100 ms" in texts


def test_latency_budget_caps_the_buffer():
    a = advise(1e6, 0.200, latency_budget=0.150)
    assert a.maximum == 6_250  # 1 Mb/s * (150 ms - 200 ms / 2) / 8: the path's own delay is spent first
    assert a.target <= a.maximum
    assert latency_under_load(a.target, 1e6) <= 0.050 + 1e-9
    assert any("budget, not the BDP" in r for r in a.reasoning)


def test_min_buffer_never_above_the_docsis_guarantee():
    a = advise(100e6, 0.040, min_buffer=True, profile="docsis3.1")
    assert a.target > CM_GUARANTEED_MINIMUM_BUFFER
    assert a.minimum == CM_GUARANTEED_MINIMUM_BUFFER
    small = advise(1e6, 0.040, min_buffer=True)
    assert small.minimum == small.target


def test_more_flows_need_less_buffer():
    assert advise(10e6, 0.100, flows=4).target < advise(10e6, 0.100, flows=1).target


def test_reno_model_known_points():
    assert reno_utilization(10e6, 0, 0.040) == pytest.approx(0.75)  # no buffer: the textbook 3/4
    assert reno_utilization(10e6, 50_000, 0.040) == 1.0  # one BDP fills the link
    # more flows desynchronise: with no buffer, n flows reach 1 - 1/(4n)-ish, above 3/4
    assert reno_utilization(10e6, 0, 0.040, flows=10) > 0.9


@given(
    st.floats(min_value=1e5, max_value=1e9),
    st.integers(min_value=0, max_value=2**22),
    st.integers(min_value=0, max_value=2**22),
    st.floats(min_value=0.001, max_value=0.5),
)
def test_more_buffer_never_lowers_utilization_and_always_adds_latency(rate, b1, b2, rtt):
    lo, hi = sorted((b1, b2))
    p_lo, p_hi = predict(rate, lo, rtt), predict(rate, hi, rtt)
    assert 0.75 - 1e-9 <= p_lo.utilization <= p_hi.utilization + 1e-12 <= 1 + 1e-9
    assert p_lo.latency_under_load <= p_hi.latency_under_load


def test_table_order_and_pluggable_model():
    tiers = [SizingInputs(rate, rtt) for rtt in (0.04, 0.1) for rate in (1e6, 10e6)]
    cells = buffer_table(tiers, [8 * KiB, 64 * KiB])
    assert len(cells) == 8
    assert [(c.rtt, c.rate, c.buffer) for c in cells[:2]] == [(0.04, 1e6, 8 * KiB), (0.04, 1e6, 64 * KiB)]
    calls = []

    def model(given):
        calls.append(list(given))
        return [predict(t.rate, b, t.rtt, t.flows) for t, b in given]

    buffer_table([SizingInputs(5e6, 0.04, 2, "cubic")], [16 * KiB], model=model)
    assert calls == [[(SizingInputs(5e6, 0.04, 2, "cubic"), 16 * KiB)]]  # the whole tier reaches the model


def test_bad_inputs():
    for bad in ({"rate": 0, "rtt": 0.04}, {"rate": 5e6, "rtt": 0.04, "flows": 0}, {"rate": 5e6, "rtt": -1},
                {"rate": 5e6, "rtt": 0.04, "congestion_control": "bbr"}, {"rate": 5e6, "rtt": 0.04, "mac": "wifi"},
                {"rate": 5e6, "rtt": 0.04, "latency_budget": 0}, {"rate": 5e6, "rtt": 0.04, "aqm_latency_target": 0}):
        with pytest.raises(SizingError):
            SizingInputs(**bad)


def test_budget_below_one_frame_still_gives_a_usable_buffer():
    a = advise(64e3, 0.040, latency_budget=0.100)
    assert a.target == a.maximum == 1518
    assert any("cannot be met" in r for r in a.reasoning)


def test_a_path_that_spends_the_budget_has_no_queue():
    """A path whose one-way delay alone spends the budget has no queue that fits (the templates once
    gave 1518 bytes here where the CLI refused)."""
    with pytest.raises(SizingError, match="already spends the 150 ms budget"):
        advise(5e6, 0.4)


def test_a_tier_faster_than_its_upstream_is_refused_not_sized():
    """One SC-QAM channel carries ~30 Mb/s: no buffer makes it carry 100 Mb/s, so the advice is an error
    naming the profile, not a size; the DOCSIS 3.1 OFDMA channel (668 Mb/s) carries it."""
    with pytest.raises(SizingError, match="docsis2.0.*cannot carry a 100 Mb/s tier"):
        advise(100e6, 0.040)
    assert advise(100e6, 0.040, profile="docsis3.1").target > 0
    with pytest.raises(SizingError, match="cannot carry a 1 Gb/s tier"):
        advise(1e9, 0.020, profile="docsis3.1")
    assert advise(1e9, 0.020, profile="docsis3.1-highsplit").target > 0


def test_a_burst_too_small_for_the_rate_is_a_warning_with_the_size_that_fixes_it():
    """docsis-ns3's CMTS grants at most the token bucket's content per MAP: 3044 B (MULPI's default) caps a
    50 Mb/s flow near 11-12 Mb/s on a 2 ms MAP; two MAPs at the rate do not cap it."""
    a = advise(50e6, 0.010, profile="docsis3.1", burst=3044)
    (warning,) = a.warnings
    assert "MaxTrafficBurst 3044 B caps" in warning and "26000 B" in warning
    assert any(r.startswith("warning: MaxTrafficBurst") for r in a.reasoning)
    assert advise(50e6, 0.010, profile="docsis3.1", burst=26000).warnings == []
    assert advise(50e6, 0.010, profile="docsis3.1").warnings == []  # the tier default: 100 ms at the rate
    assert advise(50e6, 0.010, profile="docsis3.1", burst=3044, mac="tokenbucket").warnings == []


def test_a_config_files_upstream_flow_is_checked_for_a_capping_burst():
    """The rule a config check applies to each upstream flow: MULPI's default burst caps a 50 Mb/s tier."""
    from hfcprov.model import ServiceFlow
    from hfcprov.queue.sizing import flow_warnings

    def flow(rate, burst=None):
        return ServiceFlow(direction="upstream", max_sustained_rate=rate, max_traffic_burst=burst)

    (w,) = flow_warnings(flow(50e6))
    assert "MaxTrafficBurst 3044 B caps" in w
    assert flow_warnings(flow(50e6, 30000)) == [] and flow_warnings(flow(5e6)) == []
    assert "cannot carry" in flow_warnings(flow(1e9, 12_500_000))[0]
    assert flow_warnings(ServiceFlow(direction="downstream", max_sustained_rate=50e6)) == []



@settings(max_examples=200, deadline=None)
@given(
    st.floats(min_value=1e5, max_value=2e9),
    st.floats(min_value=0.0, max_value=0.3),
    st.integers(min_value=1, max_value=16),
    st.sampled_from(["reno", "cubic"]),
    st.sampled_from(["docsis", "tokenbucket"]),
    st.sampled_from([None, 0.005, 0.010, 0.020, "modem"]),
    st.sampled_from(["docsis3.1", "docsis3.0-4ch", "docsis2.0"]),
    st.booleans(),
)
def test_an_advice_without_its_table_is_the_same_advice(rate, rtt, flows, cc, mac, aqm, profile, min_buffer):
    """``size_buffer(..., table=False)`` (a tier template's advice) differs from the full advice only by the
    table of candidate predictions: the same target, maximum, need, reasons and warnings, or the same error."""
    from dataclasses import asdict

    def advice(**kw):
        try:
            tier = SizingInputs(rate, rtt, flows, cc, mac, aqm, profile=profile)
            return asdict(size_buffer(tier, min_buffer=min_buffer, **kw))
        except SizingError as err:
            return str(err)

    full, lean = advice(), advice(table=False)
    if isinstance(full, dict):
        assert full["candidates"] and lean["candidates"] == []
        full["candidates"] = lean["candidates"] = None
    assert lean == full


def test_a_vanishing_round_trip_is_no_pipe_not_a_division_by_zero():
    """A round trip so short that the model's arithmetic underflows (an inventory's rtt="1e-261s") is
    the zero pipe the model already answers for, not a ZeroDivisionError traceback."""
    tier = SizingInputs(4530685.0, 1.504547666064782e-261, 1, "reno", "docsis", None, profile="docsis2.0")
    assert size_buffer(tier).target == size_buffer(tier, table=False).target
    assert 0 < reno_utilization(4530685.0, 0, 1e-300) <= 1


@settings(max_examples=200, deadline=None)
@given(
    st.floats(min_value=1e5, max_value=1e9),
    st.floats(min_value=0.001, max_value=0.3),
    st.integers(min_value=1, max_value=16),
    st.sampled_from(["reno", "cubic"]),
    st.sampled_from(["docsis", "tokenbucket"]),
    st.sampled_from([None, 0.010]),
    st.sampled_from(["docsis3.1", "docsis3.0-4ch", "docsis2.0", "docsis3.1:map_interval=1ms"]),
)
def test_the_analytic_table_keeps_95_percent_first_at_the_rules_need(rate, rtt, flows, cc, mac, aqm, profile):
    """The candidate table ``buffer advise`` prints beside the rule is the rule's own arithmetic: its
    utilization never falls as the buffer grows, and the first ladder size it gives 95% is the rule's
    need (with DOCSIS-PIE: the need plus the standing queue). It once showed 94% at 8 KiB for a
    300 Mb/s tier the rule sized at 512 KiB, and 100% at 64 KiB where the rule said 128 KiB."""
    from hfcprov.queue.predict import analytic
    from hfcprov.queue.sizing import LADDER, on_ladder, rule_bytes

    try:
        tier = SizingInputs(rate, rtt, flows, cc, mac, aqm, profile=profile)
    except SizingError:
        return
    rows = analytic([(tier, s) for s in LADDER])
    utils = [p.utilization for p in rows]
    assert all(0 <= u <= 1 for u in utils)
    assert utils == sorted(utils)
    need = rule_bytes(tier) + (rate * aqm / 8 if aqm else 0)
    first = next((p.buffer for p in rows if p.utilization >= 0.95), None)
    assert first == (on_ladder(need) if on_ladder(need) in LADDER else None)
