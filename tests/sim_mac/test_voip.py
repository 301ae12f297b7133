"""E-model (G.107 simplified, Cole-Rosenbluth) and stream scoring."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov.sim import voip


def test_clean_g711_call_scores_toll_quality():
    # 20 ms packetisation + ~20 ms network + small jitter buffer: R ~ 92, MOS ~ 4.4.
    m = voip.mos(60.0, 0.0)
    assert 4.3 < m < 4.45


def test_delay_impairment_bends_at_177ms():
    below = voip.delay_impairment(177.0) - voip.delay_impairment(167.0)
    above = voip.delay_impairment(197.0) - voip.delay_impairment(187.0)
    assert below == pytest.approx(0.24)
    assert above == pytest.approx(0.24 + 1.1)


def test_loss_impairment_g711_plc_known_points():
    # G.107 with Ie=0, Bpl=25.1, random loss: Ppl=1% -> 95*1/26.1
    assert voip.loss_impairment(0.01) == pytest.approx(95 / 26.1)
    assert voip.loss_impairment(0.0) == 0.0
    with pytest.raises(ValueError):
        voip.loss_impairment(1.5)


def test_mos_from_r_mapping_endpoints_and_midpoint():
    assert voip.mos_from_r(-5) == 1.0
    assert voip.mos_from_r(120) == 4.5
    # G.107: R = 50 -> MOS 2.58
    assert voip.mos_from_r(50) == pytest.approx(2.575, abs=0.01)


def test_white_et_al_thresholds():
    """White et al.: degradation starts near 177 ms; < 2.5% loss needed for 'best' quality."""
    assert voip.mos(150, 0.0) > 4.3
    assert voip.mos(400, 0.0) < 3.6  # G.114 'unacceptable' region
    assert voip.mos(50, 0.025) > 4.0 > voip.mos(50, 0.06)


@given(st.floats(0, 2000), st.floats(0, 2000), st.floats(0, 1), st.floats(0, 1))
def test_mos_is_bounded_and_monotone(d1, d2, l1, l2):
    lo_d, hi_d = sorted((d1, d2))
    lo_l, hi_l = sorted((l1, l2))
    assert 1.0 <= voip.mos(hi_d, hi_l) <= voip.mos(lo_d, lo_l) <= 4.5


def test_assess_counts_late_packets_as_lost():
    send = voip.packet_times(0.0, 2.0)
    recv = [s + 0.020 for s in send]
    recv[10] = None  # network loss
    recv[20] = send[20] + 0.500  # far beyond the de-jitter buffer
    q = voip.assess(send, recv, jitter_buffer=0.040, adaptive=False)
    assert q.sent == 100 and q.network_lost == 1 and q.late == 1
    assert q.loss == pytest.approx(0.02)
    assert q.one_way.p50 == pytest.approx(0.020)
    clean = voip.assess(send, [s + 0.020 for s in send], jitter_buffer=0.040, adaptive=False)
    assert clean.loss == 0 and clean.mos > q.mos
    assert clean.jitter == pytest.approx(0.0, abs=1e-12)


def test_standing_queue_costs_delay_not_loss_with_adaptive_buffer():
    send = voip.packet_times(0.0, 4.0)
    recv = [s + 0.800 for s in send]  # 800 ms bufferbloat
    q = voip.assess(send, recv)
    assert q.late == 0 and q.mouth_to_ear > 0.8
    assert q.mos < 2.5  # White et al. Fig 9: MOS collapses with 256 KiB at 1 Mb/s


def test_jitter_rfc3550_alternating_delay():
    send = voip.packet_times(0.0, 20.0)
    recv = [s + (0.010 if i % 2 else 0.030) for i, s in enumerate(send)]
    j = voip.interarrival_jitter(send, recv)
    assert j == pytest.approx(0.020, rel=0.05)  # converges to |D| = 20 ms


def test_g711_rate():
    assert voip.G711.rate_bps == pytest.approx(80_000)
    assert math.isinf(voip.assess([0.0], [None]).mouth_to_ear)
