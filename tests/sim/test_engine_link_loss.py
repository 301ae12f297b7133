"""The engine's ordering, the token-bucket link's arithmetic and the loss models' statistics."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.sim.engine import Engine
from hfcprov.sim.link import Link
from hfcprov.sim.loss import Bernoulli, GilbertElliott
from hfcprov.sim.packet import DATA, Packet


class Recorder:
    def __init__(self, engine):
        self.engine = engine
        self.got = []

    def receive(self, pkt):
        self.got.append((self.engine.now, pkt.seq, pkt.size))


def test_engine_runs_in_time_order_and_ties_in_scheduling_order():
    eng = Engine()
    seen = []
    for t, name in [(2.0, "c"), (1.0, "a"), (1.0, "b"), (3.0, "late")]:
        eng.at(t, seen.append, name)
    eng.run(2.5)
    assert seen == ["a", "b", "c"]
    assert eng.now == 2.5 and eng.events == 3
    eng.run(3.0)
    assert seen[-1] == "late"


def test_link_serialises_at_channel_rate_and_adds_delay():
    eng = Engine()
    rec = Recorder(eng)
    link = Link(eng, rec, capacity=8e6, delay=0.01)  # 1 byte per microsecond
    for i in range(3):
        assert link.send(Packet(DATA, 0, i, 1000, 0.0))
    eng.run(1.0)
    assert [round(t, 9) for t, _, _ in rec.got] == [0.011, 0.012, 0.013]


def test_token_bucket_lets_the_burst_through_at_line_rate_then_holds_the_sustained_rate():
    eng = Engine()
    rec = Recorder(eng)
    # 1 Mb/s sustained, 3000-byte burst, 100 Mb/s channel: 3 packets of 1000 B go at once.
    link = Link(eng, rec, capacity=100e6, rate=1e6, burst=3000)
    for i in range(10):
        link.send(Packet(DATA, 0, i, 1000, 0.0))
    eng.run(10.0)
    times = [t for t, _, _ in rec.got]
    assert times[2] < 0.001  # the burst
    gaps = [b - a for a, b in itertools.pairwise(times[3:])]
    assert all(abs(g - 0.008) < 1e-9 for g in gaps)  # 1000 B at 1 Mb/s = 8 ms


def test_peak_rate_spaces_the_burst():
    eng = Engine()
    rec = Recorder(eng)
    link = Link(eng, rec, capacity=100e6, rate=1e6, burst=30000, peak=10e6, peak_burst=1000)
    for i in range(5):
        link.send(Packet(DATA, 0, i, 1000, 0.0))
    eng.run(1.0)
    times = [t for t, _, _ in rec.got]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(abs(g - 0.0008) < 1e-9 for g in gaps)  # 1000 B at 10 Mb/s peak


def test_drop_tail_counts_waiting_bytes_including_overhead():
    eng = Engine()
    rec = Recorder(eng)
    link = Link(eng, rec, capacity=1e6, buffer=2100, overhead=50)  # room for two 1050-byte frames
    results = [link.send(Packet(DATA, 0, i, 1000, 0.0)) for i in range(5)]
    assert results == [True, True, True, False, False]  # one in service, two waiting, then full
    assert link.dropped == 2
    assert link.waiting_bytes() == 2100
    eng.run(0.0085)  # the first frame is done (8.4 ms), the second is being sent
    assert link.waiting_bytes() == 1050
    assert link.send(Packet(DATA, 0, 5, 1000, 0.0))


@settings(max_examples=60, deadline=None)
@given(
    arrivals=st.lists(st.tuples(st.floats(0, 2.0), st.integers(40, 1500)), min_size=1, max_size=80),
    rate=st.floats(1e5, 1e7), burst=st.integers(1500, 20000),
)
def test_shaper_never_exceeds_burst_plus_rate_and_keeps_fifo(arrivals, rate, burst):
    eng = Engine()
    rec = Recorder(eng)
    link = Link(eng, rec, capacity=1e9, rate=rate, burst=burst)
    for i, (t, size) in enumerate(sorted(arrivals)):
        eng.at(t, lambda a: link.send(Packet(DATA, 0, a[0], a[1], 0.0)), (i, size))
    eng.run(1e6)
    got = [(t - size * 8 / 1e9, seq, size) for t, seq, size in rec.got]  # start of transmission
    assert [s for _, s, _ in got] == sorted(s for _, s, _ in got)  # FIFO
    # Packets starting within any window [t_i, t_j] carry at most burst + rate * (t_j - t_i) bytes.
    for i in range(len(got)):
        total = 0
        for j in range(i, len(got)):
            total += got[j][2]
            assert total <= burst + rate / 8 * (got[j][0] - got[i][0]) + 1e-6


def test_bernoulli_mean():
    loss = Bernoulli(0.05, random.Random(3))
    n = sum(loss.lost() for _ in range(100_000))
    assert abs(n / 100_000 - 0.05) < 0.004


def test_gilbert_elliott_mean_and_burst_length():
    loss = GilbertElliott(0.02, 4.0, random.Random(5))
    seq = [loss.lost() for _ in range(400_000)]
    rate = sum(seq) / len(seq)
    bursts, run = [], 0
    for x in seq:
        if x:
            run += 1
        elif run:
            bursts.append(run)
            run = 0
    assert abs(rate - 0.02) < 0.004
    assert abs(sum(bursts) / len(bursts) - 4.0) < 0.4  # bursty, unlike Bernoulli's ~1.02
