"""The LLD dual queue (coupled AQM, scheduler, classification) and queue protection."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.queue.dualq import (
    CLASSIC,
    LOW_LATENCY,
    LOW_LATENCY_MARKED,
    SANCTIONED,
    DualQParams,
    DualQueue,
    ramp_thresholds,
)
from hfcprov.queue.ecn import CE, ECT0, ECT1, NOT_ECT
from hfcprov.queue.pie import AqmConfigError
from hfcprov.queue.qprotect import QueueProtection, flow_hash


def test_classification_ect1_ce_and_the_nqb_dscp_go_low_latency():
    dq = DualQueue(50e6)
    assert dq.classify(ECT1) and dq.classify(CE) and dq.classify(NOT_ECT, dscp=45)
    assert not dq.classify(ECT0) and not dq.classify(NOT_ECT) and not dq.classify(NOT_ECT, dscp=46)
    assert dq.enqueue("c", 1500, 0.0, flow=1, ecn=ECT0) == CLASSIC
    assert dq.enqueue("l", 1500, 0.0, flow=2, ecn=ECT1) == LOW_LATENCY


def test_ramp_thresholds_floor_at_two_frames_on_slow_links():
    lo, hi = ramp_thresholds(0.001, 19, 2000, 1e9)
    assert lo == pytest.approx(0.001 - 2**19 * 1e-9) and hi == pytest.approx(0.001)
    lo, hi = ramp_thresholds(0.001, 19, 2000, 50e6)
    assert lo == pytest.approx(2 * 2000 * 8 / 50e6) and hi == pytest.approx(lo + 2**19 * 1e-9)
    lo, hi = ramp_thresholds(0.001, 19, 2000, 100e3)  # very slow: capped at 65.535 ms
    assert hi == pytest.approx(0.065535)


def test_native_probability_is_a_ramp():
    dq = DualQueue(1e9)
    mid = (dq.min_th + dq.max_th) / 2
    assert dq.prob_native(dq.min_th * 0.9) == 0.0
    assert dq.prob_native(mid) == pytest.approx(0.5)
    assert dq.prob_native(dq.max_th) == 1.0


def test_low_latency_marks_follow_the_native_ramp_deterministically():
    """A low-latency queue held at the middle of the ramp marks every second packet."""
    dq = DualQueue(1e9, params=DualQParams(queue_protection=False))
    mid = (dq.min_th + dq.max_th) / 2
    size = 1000
    dq.l_bytes = int(mid * 1e9 / 8) - size  # the arriving packet counts too
    outcomes = []
    for i in range(100):
        outcomes.append(dq.enqueue(i, size, 0.0, flow=1, ecn=ECT1))
        dq.lq.pop()
        dq.l_bytes -= size
    marked = outcomes.count(LOW_LATENCY_MARKED)
    assert marked in (49, 50, 51)


def test_coupled_probability_is_k_times_the_square_root_of_the_classic_drop_probability():
    dq = DualQueue(10e6, classic_buffer=1_000_000)
    for _ in range(30):
        dq.c_bytes = 40_000  # 32 ms at 10 Mb/s: PIE raises its probability
        dq.update(dq.pie.next_update)
    assert dq.pie.drop_prob > 0
    assert dq.prob_cl == pytest.approx(min(1.0, 2.0 * math.sqrt(dq.pie.drop_prob)))


def test_not_ect_nqb_packet_is_neither_marked_nor_dropped():
    dq = DualQueue(1e9, params=DualQParams(queue_protection=False))
    dq.l_bytes = int(dq.max_th * 1e9 / 8) + 10_000  # beyond MAXTH: every ECN packet marked ...
    assert dq.enqueue("w", 1000, 0.0, flow=3, ecn=ECT1) == LOW_LATENCY  # ... once the count passes 1
    assert dq.enqueue("x", 1000, 0.0, flow=3, ecn=NOT_ECT, dscp=45) == LOW_LATENCY
    assert dq.enqueue("y", 1000, 0.0, flow=3, ecn=ECT1) == LOW_LATENCY_MARKED


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=1, max_value=255), st.sampled_from([64, 576, 1500]))
def test_scheduler_gives_the_low_latency_queue_its_weight(weight, small):
    """Both queues always backlogged: the low-latency share of bytes is weight/256."""
    dq = DualQueue(1e9, classic_buffer=10**9, ll_buffer=10**9,
                   params=DualQParams(weight=weight, queue_protection=False, iaqm=False))
    ll_bytes = c_bytes = 0
    for _ in range(40):
        dq.enqueue("l", small, 0.0, flow=1, ecn=ECT1)
        dq.enqueue("c", 1500, 0.0, flow=2)
    for _ in range(4000):
        _, size, _, low = dq.dequeue(0.0)
        if low:
            ll_bytes += size
            dq.enqueue("l", small, 0.0, flow=1, ecn=ECT1)
        else:
            c_bytes += size
            dq.enqueue("c", 1500, 0.0, flow=2)
    assert ll_bytes / (ll_bytes + c_bytes) == pytest.approx(weight / 256, abs=0.02)


def test_scheduler_is_work_conserving():
    dq = DualQueue(1e9, params=DualQParams(weight=255))
    for i in range(5):
        dq.enqueue(i, 1500, 0.0, flow=2)
    assert [dq.dequeue(0.0)[0] for _ in range(5)] == [0, 1, 2, 3, 4]
    assert dq.dequeue(0.0) is None


def test_bad_parameters_are_one_error():
    with pytest.raises(AqmConfigError, match="weight"):
        DualQParams(weight=0)
    with pytest.raises(AqmConfigError, match="Max Sustained Rate"):
        DualQueue(0)


# -- queue protection ---------------------------------------------------------------
def test_queue_protection_sanctions_the_flow_that_builds_the_queue():
    qp = QueueProtection(max_th=0.001)
    now, heavy, light = 0.0, 0, 0
    for i in range(20_000):
        now += 0.0001
        # the queue is 2 ms deep (over the 1 ms critical latency), marking everything
        if qp.protect(1, flow_hash(1), 1500, 0.002, 1.0, now):
            heavy += 1
        if i % 50 == 0 and qp.protect(2, flow_hash(2), 100, 0.002, 1.0, now):
            light += 1
    assert heavy > 15_000  # 120 Mb/s of marked bytes: sanctioned almost at once
    assert light == 0  # 8 kb/s: its score drains faster than it fills


def test_queue_protection_leaves_everything_alone_below_the_critical_latency():
    qp = QueueProtection(max_th=0.001)
    assert not any(qp.protect(1, flow_hash(1), 1500, 0.0009, 1.0, i * 1e-5) for i in range(10_000))


def test_queue_protection_scores_age_away():
    qp = QueueProtection(max_th=0.001)
    qp.protect(7, flow_hash(7), 1500, 0.0, 1.0, 0.0)
    s0 = qp.score(7, 0.0)
    assert s0 == pytest.approx(1500 * 2.0**11 * 1e-9)
    assert qp.score(7, s0 / 2) == pytest.approx(s0 / 2)
    assert qp.score(7, 1.0) == 0.0


def test_flows_beyond_the_buckets_share_the_overflow_bucket():
    qp = QueueProtection(max_th=0.001)
    for f in range(200):  # more flows than 32 buckets, all with live scores
        qp.protect(f, flow_hash(f), 1500, 0.0, 1.0, 0.0)
    assert qp.owner[-1] is not None
    assert sum(o is not None for o in qp.owner) == 33


def test_sanctioned_packet_goes_to_the_classic_queue():
    dq = DualQueue(10e6, classic_buffer=10**6, ll_buffer=10**6)
    outcomes = []
    for i in range(400):  # 400 x 1500 B into the LL queue at once: 480 ms of queue
        outcomes.append(dq.enqueue(i, 1500, i * 1e-5, flow=9, ecn=ECT1))
    assert SANCTIONED in outcomes
    assert dq.sanctioned == outcomes.count(SANCTIONED)
    assert len(dq.cq) == outcomes.count(SANCTIONED)


def test_random_streams_do_not_change_deterministic_marking():
    """Marking uses no coin toss: two queues with different RNGs mark identically."""
    a = DualQueue(1e9, rng=random.Random(1), params=DualQParams(queue_protection=False))
    b = DualQueue(1e9, rng=random.Random(2), params=DualQParams(queue_protection=False))
    for dq in (a, b):
        dq.l_bytes = int((dq.min_th + 0.3 * (dq.max_th - dq.min_th)) * 1e9 / 8)
    sa = [a.enqueue(i, 200, 0.0, ecn=ECT1) for i in range(300)]
    sb = [b.enqueue(i, 200, 0.0, ecn=ECT1) for i in range(300)]
    assert sa == sb
