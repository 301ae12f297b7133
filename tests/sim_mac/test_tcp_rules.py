"""CUBIC (RFC 9438) and FAST (Atov-Kennedy eq. 1) window rules as pure functions."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov.sim import tcp_cubic as cu
from hfcprov.sim import tcp_fast as fa


def test_cubic_k_and_plateau_at_w_max():
    k = cu.cubic_k(100.0, 70.0)
    assert k == pytest.approx((30 / 0.4) ** (1 / 3))
    assert cu.w_cubic(0.0, 100.0, k) == pytest.approx(70.0)
    assert cu.w_cubic(k, 100.0, k) == pytest.approx(100.0)
    # concave before K, convex after: growth is slowest around W_max
    assert cu.w_cubic(k + 1, 100, k) - cu.w_cubic(k, 100, k) < cu.w_cubic(1, 100, k) - cu.w_cubic(0, 100, k)


@given(st.floats(2, 1e4), st.floats(0, 30), st.floats(1e-3, 1), st.floats(2, 1e4))
def test_cubic_target_clamped(cwnd, t, rtt, w_max):
    k = cu.cubic_k(w_max, cwnd)
    assert cwnd <= cu.target(cwnd, t, rtt, w_max, k) <= 1.5 * cwnd


def test_cubic_loss_and_recovery_to_w_max():
    c = cu.CubicWindow(cwnd=1000.0, ssthresh=50.0)
    c.on_loss(0.0)
    assert c.cwnd == pytest.approx(700.0) and c.w_max == pytest.approx(1000.0)
    # ACK clock with rtt 50 ms: one window of ACKs per RTT
    now, rtt = 0.0, 0.05
    half_way = None
    while now < c.k + 0.5:
        c.on_ack(now, c.cwnd / 10, rtt)
        now += rtt / 10
        if half_way is None and now >= c.k / 2:
            half_way = c.cwnd
    assert 990 < c.cwnd < 1030  # back at the plateau around K, not far beyond it
    assert half_way > 700 + 0.5 * (1000 - 700)  # concave: most of the way back by K/2


def test_cubic_fast_convergence_releases_bandwidth():
    c = cu.CubicWindow(cwnd=80.0, ssthresh=10.0, w_max=100.0)
    c.on_loss(0.0)
    assert c.w_max == pytest.approx(80 * 1.7 / 2)
    c2 = cu.CubicWindow(cwnd=80.0, ssthresh=10.0, w_max=100.0, fast_convergence=False)
    c2.on_loss(0.0)
    assert c2.w_max == 80.0


def test_cubic_reno_friendly_at_small_bdp():
    # Short RTT, small window: CUBIC's curve is slow, the Reno estimate dominates.
    c = cu.CubicWindow(cwnd=10.0, ssthresh=10.0, w_max=10.0)
    now = 0.0
    for _ in range(200):  # 20 RTTs of 2 ms
        c.on_ack(now, c.cwnd / 10, 0.002)
        now += 0.0002
    assert c.cwnd > 10 + 0.5 * 20 * cu.ALPHA_RENO


def test_fast_rule_fixed_point_keeps_alpha_packets_queued():
    base, alpha, pkt_time = 0.1, 10.0, 0.004  # 3 Mb/s, 1500 B packets
    bdp = base / pkt_time  # 25 packets
    w = 2.0
    for _ in range(200):
        queued = max(0.0, w - bdp)
        D = base + queued * pkt_time
        w = fa.fast_window(w, base, D, alpha, integer=False)
    assert w - bdp == pytest.approx(alpha, rel=0.01)


def _settle(alpha, w=2.0, base=0.1, pkt_time=0.004):
    bdp = base / pkt_time
    for _ in range(300):
        D = base + max(0.0, w - bdp) * pkt_time
        w = fa.fast_window(w, base, D, alpha)
    return w, bdp


def test_fast_integer_arithmetic_falls_short():
    """Atov-Kennedy: the floor can leave the window up to two packets short of bdp + alpha."""
    w, bdp = _settle(3.0)
    assert bdp + 3 - 2 <= w <= bdp + 3
    assert w == int(w)
    # alpha = 1: floor((2w + 1) / 2) = w below the BDP, so the window never opens
    w1, _ = _settle(1.0, w=10.0)
    assert w1 == 10.0


@given(st.floats(1, 1e4), st.floats(1e-3, 1), st.floats(0, 1), st.floats(0.5, 50))
def test_fast_window_bounds(w, base, extra, alpha):
    D = base * (1 + extra)
    nxt = fa.fast_window(w, base, D, alpha, integer=False)
    assert nxt <= 2 * w
    # moves toward the equilibrium, never past it from below when w < w*
    weq = fa.equilibrium_window(alpha, base, D)
    if w < weq:
        assert w <= nxt or math.isclose(nxt, 2 * w)


def test_fast_state_uses_min_rtt_as_base():
    f = fa.FastWindow(alpha=3, cwnd=10)
    f.on_ack(0.0, 1, 0.120)  # first update at once: base = mean, w -> floor((10 + 10 + 3) / 2)
    assert f.cwnd == 11
    f.on_ack(0.01, 1, 0.100)
    assert f.base_rtt == 0.100 and f.cwnd == 11  # not yet: one update per RTT
    f.on_ack(0.2, 1, 0.110)
    assert f.cwnd == math.floor(0.5 * (11 + 0.100 / 0.105 * 11 + 3))
