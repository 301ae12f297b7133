"""The simulator against the papers in ../shared/papers, with the tolerances stated in each test.

White et al. 2011 (right-sizing CM buffers), Cohen & Ramanathan 1998 (TCP over HFC).
"""

from __future__ import annotations

import dataclasses
import itertools
import statistics

import pytest

from hfcprov.sim import FlowSpec, LossSpec, Scenario, TcpOptions, run

PAYLOAD_SHARE = 1460 / (1460 + 40 + 18)  # goodput / shaped rate at best: TCP/IP headers and Ethernet framing


@pytest.mark.parametrize("kib", [16, 64, 256])
def test_white_latency_under_load_is_buffer_over_rate(kib):
    # White et al. section 4: 2 Mb/s upstream, 16/64/256 KiB buffers, pings under upstream TCP load.
    buf = kib * 1024
    sc = Scenario(rate=2e6, buffer=buf, rtt=0.04, duration=40, warmup=10, probe_rate=10, seed=1,
                  flows=[FlowSpec(start=5) for _ in range(4)], tcp=TcpOptions(variant="sack"))
    r = run(sc)
    full = buf * 8 / 2e6
    assert r.latency_idle.p50 == pytest.approx(0.04, abs=0.002)  # idle: the base RTT
    # A full buffer adds buffer/rate: the loaded 90th percentile sits within 15% of it.
    assert r.latency_loaded.p90 - 0.04 == pytest.approx(full, rel=0.15)
    assert r.latency_loaded.max - 0.04 <= full * 1.05 + 0.01
    assert r.utilization > 0.95 * PAYLOAD_SHARE


def test_single_flow_utilization_rises_with_buffer_as_the_bdp_rule_predicts():
    # 10 Mb/s, 100 ms: BDP = 125 KB. Compare with the analytic Reno sawtooth model of the
    # buffer advisor (hfcprov.queue.predict), within 0.05 of utilization.
    from hfcprov.queue.predict import reno_utilization

    utils = []
    for buf in (8192, 16384, 32768, 65536, 131072, 262144):
        sc = Scenario(rate=10e6, buffer=buf, rtt=0.1, duration=60, warmup=10, sample_interval=None,
                      tcp=TcpOptions(variant="newreno"))
        u = run(sc).utilization / PAYLOAD_SHARE
        assert u == pytest.approx(reno_utilization(10e6, buf, 0.1, 1), abs=0.05), buf
        utils.append(u)
    assert all(b >= a - 0.01 for a, b in itertools.pairwise(utils))
    assert utils[0] < 0.85 and utils[-1] > 0.98


def _cohen(loss: float, seed: int, timer: str = "coarse", sfr: bool = False) -> Scenario:
    # Section III: 25 Mb/s down / 3 Mb/s up, 20 ms RTT, Reno with delayed ACKs, 1460-byte
    # segments, "3-Mb" transfers, 8 KB socket buffer, Poisson (Bernoulli) loss on downstream data.
    # The paper's "kb" is kilobytes ("30 kb ... approximately 20 packets of 1.5 kb each"), so 3 MB.
    return Scenario.from_dict({
        "direction": "downstream", "rate": "25M", "buffer": "1MiB", "rtt": "20ms", "reverse_rate": "3M",
        "flows": [{"size": 3_000_000}], "data_loss": loss, "duration": "300s", "sample_interval": None,
        "seed": seed, "tcp": {"variant": "reno", "socket_buffer": "8KiB", "initial_window": 1,
                              "timer": timer, "super_fast_retransmit": sfr}})


def _mean(loss, timer="coarse", sfr=False, seeds=range(1, 21)):
    runs = [run(_cohen(loss, s, timer, sfr)).flows[0] for s in seeds]
    assert all(f.completion_time is not None for f in runs)
    return statistics.mean(f.goodput_bps for f in runs), statistics.mean(f.timeouts for f in runs)


def test_cohen_data_loss_costs_throughput_through_timeouts():
    clean, clean_to = _mean(0.0, seeds=[1])
    one, one_to = _mean(0.01)
    three, three_to = _mean(0.03)
    assert clean_to == 0
    # Paper: 1% costs "over 50%" with one timeout in its trace; here the mean of 20 transfers
    # loses ~38% with ~3 timeouts each.
    assert one < 0.7 * clean and one_to >= 1
    # 3%: 11 timeouts and five times the transfer time of 1% in their trace; here ~24 and ~3.3x.
    assert three_to >= 11 and three < 0.4 * one


def test_cohen_200ms_timer_and_super_fast_retransmit_roughly_double_throughput_at_3pct():
    coarse, coarse_to = _mean(0.03)
    fine, _ = _mean(0.03, timer="200ms")
    both, both_to = _mean(0.03, timer="200ms", sfr=True)
    assert fine > 1.3 * coarse  # shorter timeouts (section VI.C)
    assert both > 1.8 * coarse  # and fewer of them (Fig. 17)
    assert both_to < 0.5 * coarse_to


def test_cohen_ack_loss_is_survivable_with_the_papers_tunings():
    # Section VI: with a 200 ms timer, super fast retransmit and a small MSS, "even a 20% loss of
    # ACK's ... results in less than 10% reduction". Here: ~19% (untuned: ~79%); 10% ACK loss
    # untuned costs ~24% (paper's Fig. 3: about 10%). docs/sim.md lists the gap.
    def goodput(ack, **tcp):
        runs = []
        for seed in range(1, 11):
            sc = _cohen(0.0, seed).replace(ack_loss=LossSpec("bernoulli", ack))
            if tcp:
                sc = sc.replace(tcp=dataclasses.replace(sc.tcp, **tcp))
            runs.append(run(sc).flows[0].goodput_bps)
        return statistics.mean(runs)

    tuned = {"timer_granularity": 0.2, "min_rto": 0.8, "dupthresh": 1, "mss": 536}
    assert goodput(0.2) < 0.5 * goodput(0.0)
    assert goodput(0.2, **tuned) > 0.75 * goodput(0.0, **tuned)
    assert goodput(0.1) > 0.65 * goodput(0.0)


def test_cohen_fig9_socket_buffer_above_cm_buffer_times_out_in_slow_start_and_the_rule_avoids_it():
    # Section V: 25 Mb/s HFC downstream into a CM with a 10 KB buffer, 10 Mb/s 10Base-T to the PC.
    from hfcprov.queue.socketbuf import socket_buffer_limit

    rule = socket_buffer_limit(10 * 1024, 25e6, 10e6)

    def transfer(sock):
        sc = Scenario.from_dict({
            "direction": "downstream", "access_rate": "25M", "rate": "10M", "burst": "1MiB", "overhead": 0,
            "buffer": "10KiB", "rtt": "20ms", "reverse_rate": "3M", "flows": [{"size": 1_000_000}],
            "duration": "30s", "sample_interval": None,
            "tcp": {"variant": "reno", "socket_buffer": sock, "initial_window": 1, "timer": "coarse"}})
        return run(sc)

    big = transfer(48 * 1024)
    assert big.flows[0].timeouts >= 1 and big.extra["queue_drops"] >= 2  # several drops in one window
    sized = transfer(rule.setting_bytes)
    assert sized.flows[0].timeouts == 0 and sized.extra["queue_drops"] == 0
    assert sized.flows[0].goodput_bps > 1.5 * big.flows[0].goodput_bps


def test_gilbert_burst_loss_hurts_reno_more_than_the_same_mean_bernoulli_loss():
    base = _cohen(0.0, 1)
    bern = [run(base.replace(seed=s, data_loss=LossSpec("bernoulli", 0.02))).flows[0].timeouts for s in range(1, 21)]
    ge = [run(base.replace(seed=s, data_loss=LossSpec("gilbert", 0.02, 4))).flows[0].timeouts for s in range(1, 21)]
    assert statistics.mean(ge) > statistics.mean(bern)
