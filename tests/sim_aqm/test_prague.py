"""The scalable sender: DCTCP's reaction to CE marks, and the ECN wiring around plain TCP."""

from __future__ import annotations

import pytest

from hfcprov.queue.ecn import CE, ECT1
from hfcprov.sim.aqm.ecn import attach
from hfcprov.sim.cc import congestion_control
from hfcprov.sim.packet import ACK, DATA, Packet
from hfcprov.sim.tcp_prague import G


class FakeSender:
    def __init__(self):
        self.mss = 1000
        self.cwnd = 100_000.0
        self.ssthresh = 1e18
        self.una = 0
        self.nxt = 100
        self.flow = 0
        self.link = None
        self.cc = congestion_control("prague")
        self.got = []

    def receive(self, pkt):
        self.got.append(pkt.seq)

    def flight_bytes(self):
        return (self.nxt - self.una) * self.mss


def test_registered_and_ecn_capable():
    assert congestion_control("prague").ecn and congestion_control("unresponsive").ecn
    assert not congestion_control("cubic").ecn


def test_every_congestion_control_declares_the_ecn_hook():
    """ECN is part of the congestion-control interface (issue 24): a flag and on_ce on the base class,
    so the network reads ``cc.ecn`` and the echo calls ``on_ce`` without looking for either."""
    from hfcprov.sim.cc import CONGESTION_CONTROLS, CongestionControl

    assert CongestionControl.ecn is False and callable(CongestionControl.on_ce)
    for name in CONGESTION_CONTROLS:
        cc = congestion_control(name)
        assert isinstance(cc, CongestionControl) and isinstance(cc.ecn, bool)
        if not cc.ecn:  # a classic control ignores marks (it never gets any: its data leave Not-ECT)
            s = FakeSender()
            cc.on_ce(s, 3)
            assert s.cwnd == 100_000


def test_one_cut_per_round_trip_by_alpha_over_two():
    s = FakeSender()
    cc = s.cc
    cc.on_ce(s, 1)
    assert s.cwnd == pytest.approx(100_000 * (1 - 1.0 / 2))  # alpha starts at 1
    cc.on_ce(s, 5)  # the same window: no second cut
    assert s.cwnd == pytest.approx(50_000)
    s.una = 101  # the window that saw the cut is acknowledged
    cc.on_ce(s, 1)
    assert s.cwnd == pytest.approx(25_000)


def test_alpha_tracks_the_marked_fraction():
    s = FakeSender()
    cc = s.cc
    for rnd in range(1, 200):
        s.una, s.nxt = rnd * 100, (rnd + 1) * 100
        cc.marked += 10  # 10 % of each window marked
        cc.on_ack(s, 100, 0.02)
    assert cc.alpha == pytest.approx(0.1, abs=0.01)
    assert 0 < G < 1


def test_marks_are_echoed_and_reach_the_congestion_control():
    class Link:
        def __init__(self):
            self.sent = []

        def send(self, pkt):
            self.sent.append(pkt)
            return True

    class Receiver:
        def __init__(self):
            self.link = Link()
            self.flow = 0

        def receive(self, pkt):
            self.link.send(Packet(ACK, 0, pkt.seq + 1, 40, pkt.ts))

    s, r = FakeSender(), Receiver()
    s.link = Link()
    send_r, recv_r = [s.receive], [r.receive]
    attach(s, r, send_r, recv_r)
    s.link.send(Packet(DATA, 0, 0, 1040, 0.0))
    assert s.link.link.sent[0].ecn == ECT1  # data leave ECT(1)
    recv_r[0](Packet(DATA, 0, 0, 1040, 0.0, ecn=CE))  # the AQM marked it
    recv_r[0](Packet(DATA, 0, 1, 1040, 0.0, ecn=ECT1))
    acks = r.link.link.sent
    assert [a.ecn for a in acks] == [1, 1]  # the running CE count
    before = s.cwnd
    for a in acks:
        send_r[0](a)
    assert s.cwnd < before and s.got == [1, 2]  # one cut, and the ACKs still reach TCP
