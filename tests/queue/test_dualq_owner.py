"""The dual queue's decisions for an owner that keeps the two queues itself (a request-grant CM,
whose grants drain each queue on their own): ``admit``/``departed`` decide exactly as
``enqueue``/``dequeue``; and the CM's virtual-queue estimate of the low-latency delay (Annex N.3)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.queue.dualq import DROPPED, LOW_LATENCY, LOW_LATENCY_MARKED, DualQParams, DualQueue
from hfcprov.queue.ecn import ECT1, NOT_ECT

EVENTS = st.lists(st.tuples(st.sampled_from(["in", "out"]), st.integers(64, 1500), st.sampled_from([NOT_ECT, ECT1]),
                            st.integers(0, 7), st.floats(0, 0.004)), min_size=1, max_size=400)


@settings(max_examples=60, deadline=None)
@given(EVENTS)
def test_admit_and_departed_decide_as_enqueue_and_dequeue(events):
    inner = DualQueue(10e6, 30_000, 15_000, rng=random.Random(3))
    owner = DualQueue(10e6, 30_000, 15_000, rng=random.Random(3))
    mine = {True: [], False: []}  # the owner's own two queues
    now = 0.0
    for kind, size, ecn, flow, dt in events:
        now += dt
        if kind == "in":
            a = inner.enqueue(object(), size, now, flow, ecn)
            b = owner.admit(size, now, flow, ecn)
            assert a == b
            if b != DROPPED:
                mine[b in (LOW_LATENCY, LOW_LATENCY_MARKED)].append(size)
        else:
            got = inner.dequeue(now)
            if got is None:
                assert not mine[True] and not mine[False]
                continue
            _item, size, _t, ll = got
            assert mine[ll] and mine[ll][0] == size
            owner.departed(mine[ll].pop(0), ll)
        assert (inner.c_bytes, inner.l_bytes, inner.marks, inner.early_drops, inner.sanctioned) == \
            (owner.c_bytes, owner.l_bytes, owner.marks, owner.early_drops, owner.sanctioned)


def test_the_cms_virtual_queue_forgets_packets_that_only_wait_for_their_grant():
    """Packets waiting a request-grant loop for their grant sit in the CM's low-latency queue; the
    virtual queue drains at the maximum rate meanwhile, so they are not taken for congestion."""
    real = DualQueue(20e6, params=DualQParams(queue_protection=False))
    virtual = DualQueue(20e6, params=DualQParams(queue_protection=False, ll_estimator="virtual"))
    for q in (real, virtual):
        for i in range(20):  # 20 x 1500 B arriving 1 ms apart (12 Mb/s offered to a 20 Mb/s flow)...
            q.admit(1500, i * 0.001, 1, ECT1)
    # ...none departed yet (no grant): 30 kB in the queue is 12 ms at 20 Mb/s; the virtual queue
    # never holds more than one packet's 0.6 ms (arrivals are slower than the rate), and drains
    assert real.qdelay_l(0, 0.020) == 20 * 1500 * 8 / 20e6
    assert virtual.qdelay_l(0, 0.0195) <= 1500 * 8 / 20e6
    assert virtual.qdelay_l(0, 0.030) == 0.0
