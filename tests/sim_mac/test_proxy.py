"""Cohen-Ramanathan's split-connection proxy findings, reproduced on the simulator."""

import pytest

from hfcprov.sim.proxy import ProxyError, ProxyScenario, run_proxy

SEEDS = (1, 2, 3)


def kbps(**kw):
    return sum(run_proxy(ProxyScenario(seed=s, **kw)).goodput_bps for s in SEEDS) / len(SEEDS) / 1e3


def test_one_percent_local_loss_halves_direct_but_barely_touches_store_and_forward():
    """Section 3.5 / Figure 8: ~50% loss of throughput direct, under 5% through the proxy."""
    direct0, direct1 = kbps(mode="direct"), kbps(mode="direct", local_loss=0.01)
    store0, store1 = kbps(mode="store"), kbps(mode="store", local_loss=0.01)
    assert 0.35 < direct1 / direct0 < 0.65
    # paper: under 5%; this model: ~5.4% over 10 seeds (docs/calibration.md), so 10% here
    assert store1 / store0 > 0.90
    assert store0 > direct0  # pipelining over two shorter RTTs helps even without loss (Figure 5)


def test_hfc_tunings_at_the_proxy_roughly_double_throughput_at_3_percent():
    """Section 3.6 / Figure 9: 200 ms timer + first-dupACK retransmit, ~2x at 3% and above."""
    for mode in ("store", "buffer"):
        plain = kbps(mode=mode, local_loss=0.03)
        tuned = kbps(mode=mode, local_loss=0.03, tuned=True)
        # paper: "almost two-fold"; this model gives 2.7-3.2x (its 500 ms timer's 2 s minimum
        # RTO against 0.8 s when tuned; see docs/calibration.md), so the band is wide
        assert 1.6 < tuned / plain < 3.6, mode


def test_buffer_and_forward_approaches_store_and_forward_once_tuned():
    plain_gap = 1 - kbps(mode="buffer", local_loss=0.01) / kbps(mode="store", local_loss=0.01)
    tuned_gap = 1 - kbps(mode="buffer", local_loss=0.01, tuned=True) / kbps(mode="store", local_loss=0.01, tuned=True)
    assert plain_gap > 0.15
    assert tuned_gap < plain_gap / 2


def test_larger_proxy_socket_buffer_four_fold_without_loss_and_closes_the_gap():
    """Section 4.3 / Figure 13: 8 KB -> 32 KB for the remote side."""
    small, big = kbps(mode="store"), kbps(mode="store", proxy_buffer=32768)
    assert 3.0 < big / small < 4.5
    s, b = kbps(mode="store", local_loss=0.03, proxy_buffer=32768), kbps(mode="buffer", local_loss=0.03, proxy_buffer=32768)
    assert b / s > 0.95


def test_direct_suffers_remote_and_local_loss_alike_proxy_prefers_local_loss():
    """Section 4.4 / Figure 14: direct sees the sum; the proxy handles local loss better."""
    d15 = kbps(mode="direct", local_loss=0.01, remote_loss=0.05, size=1_000_000)
    d51 = kbps(mode="direct", local_loss=0.05, remote_loss=0.01, size=1_000_000)
    assert d15 == pytest.approx(d51, rel=0.3)
    p15 = kbps(mode="store", local_loss=0.01, remote_loss=0.05, size=1_000_000, tuned=True)
    p51 = kbps(mode="store", local_loss=0.05, remote_loss=0.01, size=1_000_000, tuned=True)
    assert p51 > p15 and min(p15, p51) > max(d15, d51)


def test_bad_proxy_scenarios_name_the_field():
    with pytest.raises(ProxyError, match="mode"):
        run_proxy(ProxyScenario(mode="cache"))
    with pytest.raises(ProxyError, match="local_loss"):
        run_proxy(ProxyScenario(local_loss=1.5))
    with pytest.raises(ProxyError, match="proxy_buffer"):
        run_proxy(ProxyScenario(mode="buffer", proxy_buffer=100))
