"""DOCSIS-PIE's controller against RFC 8034's rules, one rule per test."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.queue.pie import (
    IN_BURST,
    IN_BURST_PROTECTING,
    NO_BURST,
    AqmConfigError,
    DocsisPie,
    PieParams,
    PieQueue,
    qdelay_estimate,
)


def test_defaults_are_the_rfc_constants():
    p = PieParams()
    assert (p.latency_target, p.interval, p.max_burst, p.alpha, p.beta) == (0.010, 0.016, 0.142, 0.25, 2.5)
    assert p.max_prob == pytest.approx(0.85 * 1024 / 64)


def test_first_step_is_scaled_down_by_2048_below_one_in_a_million():
    pie = DocsisPie()
    pie.update(0.020)  # 10 ms over target, 20 ms up since the last update
    assert pie.drop_prob == pytest.approx((0.25 * 0.010 + 2.5 * 0.020) / 2048)


@pytest.mark.parametrize(("prob", "factor"), [(5e-7, 2048), (5e-6, 512), (5e-5, 128), (5e-4, 32),
                                              (5e-3, 8), (5e-2, 2), (0.5, 0.5), (5.0, 0.125), (12.0, 0.03125)])
def test_auto_tuning_table(prob, factor):
    pie = DocsisPie()
    pie.drop_prob = prob
    pie.qdelay_old = 0.011
    pie.update(0.009)  # a small downward step (never capped)
    step = 0.25 * (0.009 - 0.010) + 2.5 * (0.009 - 0.011)
    assert pie.drop_prob == pytest.approx(max(0.0, prob + step / factor))


def test_upward_step_capped_at_two_percent_once_high():
    pie = DocsisPie()
    pie.drop_prob = 0.3
    pie.qdelay_old = 0.050
    pie.update(0.150)  # a huge rise: uncapped it would be +0.55
    assert pie.drop_prob == pytest.approx(0.32)


def test_above_latency_high_adds_two_percent_and_below_latency_low_decays():
    pie = DocsisPie()
    pie.drop_prob = 0.05
    pie.qdelay_old = 0.300
    pie.update(0.300)
    assert pie.drop_prob == pytest.approx(0.05 + (0.25 * 0.290) / 2 + 0.02)
    pie.drop_prob = 0.05
    pie.qdelay_old = 0.001
    pie.update(0.001)
    assert pie.drop_prob == pytest.approx((0.05 + 0.25 * -0.009 / 2) * 0.98)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=300))
def test_probability_stays_within_its_bounds(delays):
    pie = DocsisPie()
    for d in delays:
        pie.update(d)
        assert 0.0 <= pie.drop_prob <= pie.p.max_prob


def test_probability_settles_to_zero_on_an_empty_queue():
    pie = DocsisPie()
    pie.drop_prob = 0.4
    for _ in range(2000):
        pie.update(0.0)
    assert pie.drop_prob == 0.0


def test_no_early_drop_below_a_third_of_the_buffer_until_the_burst_state_moves():
    pie = DocsisPie(buffer_size=90_000)
    pie.drop_prob = 1.0
    pie.qdelay_old = 0.050
    assert not any(pie.drop_early(1500, 29_000) for _ in range(100))
    assert pie.burst_state == NO_BURST
    pie.drop_prob = 0.01  # too small to drop this one packet
    assert not pie.drop_early(1500, 31_000)
    assert pie.burst_state == IN_BURST


def test_first_early_drop_opens_the_burst_allowance():
    pie = DocsisPie(buffer_size=90_000)
    pie.drop_prob = 2.0
    pie.qdelay_old = 0.050
    dropped = [pie.drop_early(1024, 60_000) for _ in range(10)]
    assert dropped.index(True) >= 0
    assert pie.burst_state == IN_BURST_PROTECTING
    assert pie.burst_allowance == pytest.approx(0.142)
    assert not any(pie.drop_early(1024, 60_000) for _ in range(100))  # allowance: no early drops
    for _ in range(8):
        pie.update(0.050)
        assert pie.drop_prob == 0.0
    pie.update(0.050)  # 9 x 16 ms > 142 ms: the allowance is used up
    assert pie.burst_allowance == 0.0


def test_burst_state_resets_after_a_quiet_second():
    pie = DocsisPie()
    pie.burst_state = IN_BURST_PROTECTING
    pie.update(0.0)
    assert pie.burst_state == IN_BURST
    for _ in range(62):  # 1 s / 16 ms = 62 intervals, reset after more than that
        pie.update(0.0)
    assert pie.burst_state == IN_BURST
    pie.update(0.0)
    assert pie.burst_state == NO_BURST


def test_safeguards_small_delay_or_a_couple_of_packets():
    pie = DocsisPie()
    pie.burst_state = IN_BURST
    pie.drop_prob = 0.15
    pie.qdelay_old = 0.004  # under half the target with a probability under 20 %
    assert not any(pie.drop_early(1500, 50_000) for _ in range(200))
    pie.qdelay_old = 0.020
    assert not any(pie.drop_early(1500, 2048) for _ in range(200))  # 2 x MEAN_PKTSIZE or less


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.floats(min_value=0.01, max_value=0.5))
def test_derandomised_gaps_between_drops(seed, prob):
    """No drop before the accumulated probability reaches 0.85; always one by 8.5."""
    pie = DocsisPie(rng=random.Random(seed))
    pie.burst_state = IN_BURST
    pie.drop_prob = prob
    pie.qdelay_old = 0.020
    gaps, n = [], 0
    for _ in range(3000):
        n += 1
        if pie.drop_early(1024, 50_000):
            gaps.append(n)
            n = 0
            pie.burst_allowance = 0.0  # keep measuring gaps, not the allowance
    assert gaps
    assert min(gaps) >= math.ceil(0.85 / prob - 1e-9)
    assert max(gaps) <= math.ceil(8.5 / prob) + 1  # +1: the float sum may fall a hair short


def test_packet_size_scales_the_probability():
    """A 64-byte packet's probability is 16 times smaller than a 1024-byte one's (the
    de-randomisation bends the ratio of drop counts a little: no drop before 0.85)."""
    counts = {}
    for size in (64, 1024):
        pie = DocsisPie(rng=random.Random(5))
        pie.burst_state = IN_BURST
        pie.drop_prob = 0.5
        pie.qdelay_old = 0.020
        drops = 0
        for _ in range(20_000):
            if pie.drop_early(size, 50_000):
                drops += 1
                pie.burst_allowance = 0.0
        counts[size] = drops
    assert 12 < counts[1024] / counts[64] < 24


def test_qdelay_estimate_uses_the_configured_rates():
    assert qdelay_estimate(125_000, msr=10e6) == pytest.approx(0.1)
    # 25 kB within the MSR bucket leave at the 100 Mb/s peak, the other 100 kB at 10 Mb/s
    assert qdelay_estimate(125_000, msr=10e6, peak=100e6, msr_tokens=25_000) == pytest.approx(0.08 + 0.002)
    assert qdelay_estimate(20_000, msr=10e6, peak=100e6, msr_tokens=25_000) == pytest.approx(0.0016)
    assert qdelay_estimate(0, msr=10e6) == 0.0


def test_advance_catches_up_every_interval_and_skips_a_settled_idle_gap():
    pie = DocsisPie()
    seen = []
    pie.advance(0.050, lambda t: seen.append(round(t, 6)) or 0.02)
    assert seen == [0.016, 0.032, 0.048]
    assert pie.next_update == pytest.approx(0.064)
    idle = DocsisPie()
    idle.advance(100.0, lambda t: 0.0)  # settled from the start: no 6000 iterations
    assert idle.next_update == pytest.approx(100.0 + 0.016, abs=0.0161)
    assert idle.next_update > 100.0


def test_bad_parameters_are_one_error():
    with pytest.raises(AqmConfigError, match="latency target"):
        PieParams(latency_target=0)
    with pytest.raises(AqmConfigError, match="Max Sustained Rate"):
        PieQueue(rate=0, buffer=10_000)


def test_pie_queue_holds_a_standing_queue_near_the_target():
    """An unresponsive 12 Mb/s source into a 10 Mb/s PieQueue: PIE drops until the
    queue delay sits near its 10 ms target instead of the buffer's 200 ms."""
    rate, buffer = 10e6, 250_000
    q = PieQueue(rate, buffer, rng=random.Random(1))
    now, t_next_dep, delays = 0.0, 0.0, []
    arrival_gap = 1500 * 8 / 12e6
    while now < 20.0:
        now += arrival_gap
        while q.items and t_next_dep <= now:
            _, size, t_in = q.dequeue(t_next_dep)
            if t_next_dep > 10.0:
                delays.append(t_next_dep - t_in)
            t_next_dep += size * 8 / rate
        q.enqueue(None, 1500, now)
        if not q.items or t_next_dep < now - 1500 * 8 / rate:
            t_next_dep = max(t_next_dep, now)
    mean = sum(delays) / len(delays)
    assert 0.005 < mean < 0.030, mean
    assert q.early_drops > 0


# docsis-ns3's own DOCSIS-PIE updates (its CalculatePState trace: estimate s, drop probability printed to
# 4 places) in table 2's 2 Mb/s case, seed 1 (bench/docsis_ns3.py --pie-trace 2M,1), 12.448-12.912 s:
# from the end of a burst allowance (probability exactly 0) through the climb to the next drop.
NS3_UPDATES = [
    (0.063494, 0.0), (0.045874, 0.0), (0.031648, 0.0), (0.014218, 0.0), (0.017366, 0.0), (0.018375, 0.0),
    (0.012820, 0.0), (0.023525, 0.0), (0.028317, 0.0001), (0.025774, 0.0001), (0.028731, 0.0002),
    (0.032760, 0.0007), (0.030789, 0.0007), (0.027713, 0.0006), (0.033650, 0.0012), (0.035462, 0.0026),
    (0.033301, 0.0026), (0.042099, 0.0064), (0.037267, 0.0057), (0.032093, 0.0048), (0.045588, 0.0101),
    (0.041940, 0.0096), (0.036917, 0.0088), (0.044570, 0.0123), (0.041304, 0.0121), (0.037807, 0.0112),
    (0.052637, 0.0351), (0.047273, 0.0331), (0.054886, 0.0482), (0.051048, 0.0485),
]


def test_the_controller_gives_docsis_ns3s_probabilities_on_its_own_estimates():
    # The control path (auto-tuned PI steps, the decay below LATENCY_LOW) against the reference's, on the
    # reference's input: what is left between the two simulators then lies in the queues that feed them.
    pie = DocsisPie()
    pie.burst_state = IN_BURST_PROTECTING
    pie.qdelay_old = NS3_UPDATES[0][0]
    got = []
    for qdelay, _ in NS3_UPDATES[1:]:
        pie.update(qdelay)
        got.append(pie.drop_prob)
    assert got == pytest.approx([p for _, p in NS3_UPDATES[1:]], abs=6e-5)
