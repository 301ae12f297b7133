"""CUBIC inside the simulator: at a large bandwidth-delay product it regains the window far faster than Reno."""

from hfcprov.sim import Scenario, TcpOptions, run


def goodput(variant):
    # 20 Mb/s, 200 ms: BDP 500 KB against a 100 KB buffer, so every loss halves (Reno) or
    # cuts by 0.3 (CUBIC) a window that Reno then regrows by one segment per 200 ms.
    sc = Scenario(rate=20e6, buffer=100_000, rtt=0.2, duration=40, warmup=10, sample_interval=None,
                  tcp=TcpOptions(variant=variant, min_rto=0.2))
    return run(sc)


def test_cubic_beats_reno_at_large_bdp():
    reno, cubic = goodput("newreno"), goodput("cubic")
    assert cubic.goodput_bps > 0.85 * 20e6
    assert cubic.goodput_bps > 1.3 * reno.goodput_bps
    assert cubic.extra["fast_retransmits"] > reno.extra["fast_retransmits"]  # it probes for more, more often
