"""Goodput read off a receiver's byte timeline."""

from hypothesis import given
from hypothesis import strategies as st

from hfcprov.probe.timeline import Timeline


def test_constant_rate_gives_that_rate_in_any_window():
    tl = Timeline(step=0.0)
    tl.start(now=0.0)
    for i in range(1, 1001):  # 1250 bytes every 10 ms = 1 Mb/s
        tl.add(1250, now=i * 0.01)
    assert abs(tl.goodput(2.0, 7.0) - 1e6) < 1
    assert abs(tl.goodput(2.005, 3.333) - 1e6) < 1e3  # window edges between records
    per_s = tl.per_second(2.0, 7.0, origin=0.0)
    assert [t for t, _ in per_s] == [3.0, 4.0, 5.0, 6.0, 7.0]
    assert all(abs(v - 1e6) < 1 for _, v in per_s)


def test_nothing_after_the_flow_ends():
    tl = Timeline(step=0.0)
    tl.start(now=0.0)
    tl.add(1000, now=1.0)
    assert tl.goodput(2.0, 3.0) == 0.0
    assert tl.at(-1.0) == 0.0


@given(st.lists(st.tuples(st.floats(0.001, 1.0), st.integers(0, 100000)), min_size=1, max_size=50),
       st.floats(0.01, 0.1))
def test_bytes_are_conserved_and_monotonic(steps, step):
    tl = Timeline(step=step)
    tl.start(now=0.0)
    t = 0.0
    for dt, n in steps:
        t += dt
        tl.add(n, now=t)
    total = sum(n for _, n in steps)
    assert tl.at(t + 1) == total
    assert abs(tl.goodput(0.0, t) * t / 8 - total) < 1e-6 * max(total, 1)
    back = Timeline.from_pairs(tl.to_pairs())
    samples = [i * t / 20 for i in range(21)]
    values = [back.at(s) for s in samples]
    assert values == sorted(values)
