"""Seeds: every random draw of a run comes from Scenario.seed; same seed, same result; seeds differ.

Before issue 15 a loss-free token-bucket run drew nothing at all, so every repetition of
a campaign point was the same number; now flow start times (start_jitter), the coarse
timers' tick phases, the probes' phase and the MAC's request collisions come from the seed.
"""

from __future__ import annotations

import statistics

import pytest

from hfcprov.sim import FlowSpec, LossSpec, Scenario, TcpOptions, run


def _strip(r):
    d = r.to_dict()
    for k in ("wall_s", "events_per_s", "cpu_s"):
        d["extra"].pop(k)
    return d


SCENARIOS = {
    "token bucket, 2 flows": Scenario(rate=5e6, buffer=32768, rtt=0.04, duration=8, warmup=2, probe_rate=10,
                                      flows=[FlowSpec(), FlowSpec(start=1.0)], tcp=TcpOptions(variant="cubic")),
    "request-grant MAC": Scenario(rate=10e6, buffer=16384, rtt=0.04, duration=8, warmup=2, mac="docsis",
                                  tcp=TcpOptions(variant="cubic", min_rto=0.2)),
    "coarse BSD timers, ACK loss": Scenario(rate=25e6, buffer=1 << 20, rtt=0.02, duration=20, direction="downstream",
                                            flows=[FlowSpec(size=1_000_000)],
                                            tcp=TcpOptions(variant="reno", socket_buffer=8192, timer_granularity=0.5,
                                                           min_rto=2.0, initial_window=1)),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_same_seed_same_result_bit_for_bit(name):
    sc = SCENARIOS[name]
    assert _strip(run(sc)) == _strip(run(sc))


def test_seeds_differ_on_a_loss_free_token_bucket_path():
    sc = SCENARIOS["token bucket, 2 flows"]
    runs = [run(sc.replace(seed=s)) for s in range(1, 6)]
    fingerprints = {(r.goodput_bps, r.extra["queue_drops"], r.extra["retransmissions"], r.latency_loaded.p50,
                     r.flows[1].bytes_delivered) for r in runs}
    assert len(fingerprints) == 5  # every repetition differs (was one result five times)
    goodputs = [r.goodput_bps for r in runs]
    assert statistics.pstdev(goodputs) / statistics.mean(goodputs) < 0.05  # by a little, as real runs do
    shares = [r.flows[1].bytes_delivered / r.flows[0].bytes_delivered for r in runs]
    assert max(shares) - min(shares) > 0.01  # how two flows split the link depends on their start phase


def test_start_jitter_comes_from_the_seed_and_zero_turns_it_off():
    sc = SCENARIOS["token bucket, 2 flows"].replace(duration=3, warmup=0)
    from hfcprov.sim.run import Network

    starts = set()
    for seed in (1, 2, 3):
        net = Network(sc.replace(seed=seed))
        net.run()
        starts.add(tuple(s.started for s in net.senders))
        assert all(0 <= s.started - f.start < sc.start_jitter for s, f in zip(net.senders, sc.flows))
    assert len(starts) == 3
    net = Network(sc.replace(start_jitter=0.0))
    net.run()
    assert [s.started for s in net.senders] == [0.0, 1.0]


def test_coarse_timer_phases_differ_by_seed():
    sc = SCENARIOS["coarse BSD timers, ACK loss"].replace(ack_loss=LossSpec("bernoulli", 0.2))
    completions = {run(sc.replace(seed=s, duration=120)).flows[0].completion_time for s in range(1, 6)}
    assert len(completions) == 5 and None not in completions


def test_mac_runs_differ_by_seed_with_collisions_on_by_default():
    sc = SCENARIOS["request-grant MAC"]
    a, b = run(sc), run(sc.replace(seed=2))
    assert a.goodput_bps != b.goodput_bps
