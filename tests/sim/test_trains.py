"""Segment trains (TcpOptions.tso): TSO/GRO-sized packets, one event per train on a FIFO link."""

from __future__ import annotations

import pytest

from hfcprov.sim import FlowSpec, LossSpec, Scenario, TcpOptions, run
from hfcprov.sim.run import Network


def _sc(tso, **kw):
    base = {"rate": 1e9, "buffer": int(1e9 * 0.02 / 8), "rtt": 0.02, "duration": 3, "warmup": 1,
            "sample_interval": None, "burst": 1 << 20,
            "tcp": TcpOptions(variant="cubic", tso=tso, min_rto=0.2, delack_timeout=0.04)}
    base.update(kw)
    return Scenario(**base)


def test_a_transfer_in_trains_delivers_every_byte_once_with_far_fewer_events():
    one = Network(_sc(1, flows=[FlowSpec(size=20_000_000)]))
    r1 = one.run()
    many = Network(_sc(44, flows=[FlowSpec(size=20_000_000)]))
    r44 = many.run()
    for net, r in ((one, r1), (many, r44)):
        s, rcv = net.senders[0], net.receivers[0]
        assert s.done_at is not None and rcv.rcv_nxt == s.total
        assert s.retransmissions <= r.extra["queue_drops"]  # nothing resent that arrived
        assert r.flows[0].bytes_delivered == 20_000_000
    assert r44.extra["events"] < r1.extra["events"] / 10
    # mostly slow start (0.16 s of data at 1 Gb/s): GRO acks each train at once, ~11% sooner here
    assert r44.flows[0].completion_time == pytest.approx(r1.flows[0].completion_time, rel=0.15)


@pytest.mark.parametrize("loss", [1e-4, 1e-3])
def test_trains_under_random_loss_recover_and_keep_the_goodput(loss):
    sc = _sc(1, data_loss=LossSpec("bernoulli", loss))
    r1, r44 = run(sc), run(sc.replace(tcp=TcpOptions(variant="cubic", tso=44, min_rto=0.2)))
    assert r44.extra["plant_losses"] > 0 and r44.extra["fast_retransmits"] > 0
    assert r44.goodput_bps == pytest.approx(r1.goodput_bps, rel=0.15)


def test_the_buffer_takes_the_part_of_a_train_that_fits():
    sc = _sc(44, buffer=30_000, rate=10e6, duration=4, warmup=0, tcp=TcpOptions(variant="sack", tso=44))
    r = run(sc)
    assert r.extra["queue_drops"] > 0 and r.extra["timeouts"] == 0
    assert r.utilization > 0.8


def test_trains_are_off_on_a_request_grant_mac():
    net = Network(_sc(44, rate=10e6, mac="docsis"))
    assert net.senders[0].tso == 1
