"""Linux's TSO deferral on the Linux-matched hosts: new data leaves in ~1 ms chunks, not pairs."""

from __future__ import annotations

from collections import Counter

import pytest

from hfcprov.sim import FlowSpec, Scenario, TcpOptions, run
from hfcprov.sim.hosts import LINUX
from hfcprov.sim.run import Network


def _scenario(**tcp) -> Scenario:
    return Scenario(rate=50e6, buffer=256 * 1024, rtt=0.02, duration=6, warmup=2, flows=[FlowSpec(start=0.5)],
                    tcp=TcpOptions(variant="sack", **{**LINUX, **tcp}), probe_rate=0, sample_interval=None)


class _Departures:
    """Stands between a sender and its first hop and notes when each data packet left."""

    def __init__(self, engine, hop) -> None:
        self.engine, self.hop, self.times = engine, hop, []

    def send(self, pkt) -> bool:
        self.times.append(self.engine.now)
        return self.hop.send(pkt)


def _burst_shares(**tcp) -> Counter:
    """Share of data packets (after slow start) that left in a burst of n at one instant."""
    net = Network(_scenario(**tcp))
    s = net.senders[0]
    s.link = rec = _Departures(net.engine, s.link)
    net.run()
    times = [t for t in rec.times if t >= 2.0]
    sizes, n = [], 1
    for a, b in zip(times, times[1:]):
        if b == a:
            n += 1
        else:
            sizes.append(n)
            n = 1
    sizes.append(n)
    return Counter({k: k * v / len(times) for k, v in Counter(sizes).items()})


def test_a_linux_sender_waits_for_a_tso_sized_chunk_of_window():
    # 50 Mb/s over a 20 ms path: 1 ms of the pacing rate (1.2 cwnd/srtt) is about 5 segments; the
    # kernel's sender (capture on the bed: docs/sim.md) sends 3-4 at once every other delayed ACK
    deferred = _burst_shares()
    assert sum(v for k, v in deferred.items() if k >= 3) > 0.8
    every_ack = _burst_shares(tso_defer=False)
    assert sum(v for k, v in every_ack.items() if k >= 3) < 0.1


@pytest.mark.parametrize("size", [None, 100_000])
def test_deferral_costs_no_goodput_and_never_holds_the_last_segments(size):
    base = _scenario().replace(flows=[FlowSpec(start=0.5, size=size)], rate=10e6, buffer=64 * 1024, rtt=0.04)
    on, off = run(base), run(base.replace(tcp=TcpOptions(variant="sack", **{**LINUX, "tso_defer": False})))
    if size is None:
        assert on.goodput_bps == pytest.approx(off.goodput_bps, rel=0.01)
    else:
        assert on.flows[0].completion_time == pytest.approx(off.flows[0].completion_time, rel=0.05)


def test_a_sender_whose_acks_are_over_1_ms_apart_holds_nothing_back():
    # 1% loss both ways keeps cwnd near 12 segments at 50 Mb/s and 20 ms: an ACK every ~3 ms, so
    # Linux (the next ACK not due within min(1 ms, srtt/2)) sends at once; holding an odd segment
    # back every ACK (the rule before October 2025: "head sent less than srtt/2 ago") cost 9%
    from hfcprov.sim import LossSpec

    lossy = _scenario().replace(duration=20, warmup=3, data_loss=LossSpec("bernoulli", 0.01),
                                ack_loss=LossSpec("bernoulli", 0.01), overhead=14)
    on = run(lossy)
    off = run(lossy.replace(tcp=TcpOptions(variant="sack", **{**LINUX, "tso_defer": False})))
    assert on.goodput_bps == pytest.approx(off.goodput_bps, rel=0.03)
