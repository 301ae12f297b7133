"""SegmentRanges (the SACK scoreboard and the receiver's out-of-order store) against a set model."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.sim.ranges import SegmentRanges

ops = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, 200), st.integers(1, 12)),
    st.tuples(st.just("hold"), st.integers(0, 200), st.integers(1, 12)),
    st.tuples(st.just("above"), st.integers(0, 200), st.integers(1, 12)),
    st.tuples(st.just("drop"), st.integers(0, 200), st.just(0)),
), max_size=120)


@settings(max_examples=300, deadline=None)
@given(ops, st.integers(1, 4))
def test_ranges_match_a_set_of_segments(seq, k):
    r = SegmentRanges()
    model: set = set()
    floor = 0
    for op, a, n in seq:
        if op == "add":
            a = max(a, floor)
            gaps = r.add(a, a + n)
            new = set(range(a, a + n)) - model
            assert {i for g0, g1 in gaps for i in range(g0, g1)} == new
            model |= new
        elif op == "above":  # the sender's SACK at the top: the new segments are the last k
            a = max(a, floor)
            top_start = max((s0 for s0, _ in r), default=None)
            k_new = r.add_above(a, a + n)
            if top_start is not None and a < top_start:
                assert k_new == -1
            else:
                new = set(range(a, a + n)) - model
                assert new == set(range(a + n - k_new, a + n))
                model |= new
        elif op == "hold":  # the receiver's add: returns the index of the range now holding a
            a = max(a, floor)
            k_new = r.hold(a, a + n)
            model |= set(range(a, a + n))
            s0, e0 = r.at(k_new)
            assert s0 <= a < e0
        else:
            floor = max(floor, a)
            before = len(model)
            model = {i for i in model if i >= a}
            assert r.drop_below(a) == before - len(model)
        got = [(s, e) for s, e in r]
        assert all(e0 < s1 for (_, e0), (s1, _) in itertools.pairwise(got))  # disjoint, not touching
        assert {i for s, e in got for i in range(s, e)} == model
        assert r.count == len(model) == sum(e - s for s, e in got)
        top = sorted(model, reverse=True)
        assert r.kth_from_top(k) == (top[k - 1] if len(top) >= k else None)
        for floor in (floor, floor + k, floor + 2 * k, *model):  # the SACK sender's IsLost step
            mark, holes = r.mark_from_top(k, floor)
            assert mark == r.kth_from_top(k)
            if mark is not None:
                assert {i for g0, g1 in holes for i in range(g0, g1)} == set(range(floor, mark)) - model
        if model:
            x = min(model)
            assert x in r and r.at(r.index(x))[0] <= x
            lo, hi = min(model), max(model) + 3
            assert {i for g0, g1 in r.gaps(lo, hi) for i in range(g0, g1)} == set(range(lo, hi)) - model
