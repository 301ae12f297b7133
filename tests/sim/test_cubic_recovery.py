"""CUBIC with SACK recovery: the collapse of issue 15 and the three faults behind it.

``rate: 20M, buffer: 32KiB, rtt: 30ms, tcp.variant: cubic`` gave 0.83 Mb/s and 8 timeouts:
the slow-start overshoot drops every other segment; CUBIC's 0.7 cut keeps more in flight
than the path holds, so resent segments were dropped again and, undetected, waited for the
RTO; the RTO resent SACKed data too; and the cumulative ACK that then leapt ~1500 segments
went whole into CUBIC's slow start (cwnd 50 -> 1555 segments), so the next burst lost a
thousand packets and the cycle repeated.
"""

from __future__ import annotations

import pytest

from hfcprov.sim import Scenario, TcpOptions, run
from hfcprov.sim.cc import congestion_control
from hfcprov.sim.engine import Engine
from hfcprov.sim.link import Link
from hfcprov.sim.packet import DATA
from hfcprov.sim.run import Host
from hfcprov.sim.tcp import TcpReceiver, TcpSender
from hfcprov.sim.tcp_cubic import CubicWindow


def test_issue_15_scenario_cubic_fills_the_link_without_a_timeout():
    sc = Scenario.from_dict({"rate": "20M", "buffer": "32KiB", "rtt": "30ms", "duration": "10s",
                             "warmup": "3s", "tcp": {"variant": "cubic"}})
    r = run(sc)
    assert r.utilization > 0.9
    assert r.extra["timeouts"] == 0


@pytest.mark.parametrize("rate,buffer,rtt", [(2e6, 262144, 0.04), (2e6, 65536, 0.04), (50e6, 65536, 0.02)])
@pytest.mark.slow
def test_cubic_with_sack_is_within_a_few_percent_of_cubic_with_newreno_recovery(rate, buffer, rtt):
    sc = Scenario(rate=rate, buffer=buffer, rtt=rtt, duration=20, warmup=5, sample_interval=None,
                  tcp=TcpOptions(variant="cubic"))
    sack = run(sc).goodput_bps
    newreno = run(sc.replace(tcp=TcpOptions(variant="cubic", recovery="newreno"))).goodput_bps
    assert sack > 0.97 * newreno


def test_cubic_slow_start_stops_at_ssthresh_on_a_large_cumulative_ack():
    w = CubicWindow(cwnd=50.0, ssthresh=91.8)
    w.on_ack(1.0, 1555.0, 0.03)
    assert 91.8 <= w.cwnd < 1.2 * 91.8  # the rest of the ACK goes into congestion avoidance


class DropTransmissions:
    """In front of a link: loses the chosen transmissions (0 = first) of chosen segments."""

    def __init__(self, link, drops):
        self.link = link
        self.drops = {seq: set(ns) for seq, ns in drops.items()}
        self.sent: dict = {}
        self.log = []

    def send(self, pkt):
        if pkt.kind == DATA:
            n = self.sent.get(pkt.seq, 0)
            self.sent[pkt.seq] = n + 1
            self.log.append((pkt.seq, pkt.retx))
            if n in self.drops.get(pkt.seq, ()):
                return True
        return self.link.send(pkt)


def sack_path(opts, size, drops):
    eng = Engine()
    a, b = Host(), Host()
    fwd = DropTransmissions(Link(eng, b, capacity=10e6, delay=0.02), drops)
    rev = Link(eng, a, capacity=1e9, delay=0.02)
    s = TcpSender(eng, 0, fwd, opts, congestion_control(opts.variant, opts), size)
    r = TcpReceiver(eng, 0, rev, opts)
    a.add(s)
    b.add(r)
    eng.at(0.0, s.start)
    eng.run(30)
    return s, fwd


def test_a_lost_retransmission_is_resent_once_later_data_is_sacked_not_after_an_rto():
    opts = TcpOptions(variant="sack")
    s, _ = sack_path(opts, 1_000_000, {100: {0, 1}})  # the segment and its first resend are lost
    assert s.done_at is not None
    assert (s.timeouts, s.rec.lost_retransmits, s.retransmissions) == (0, 1, 2)
    s, _ = sack_path(TcpOptions(variant="sack", detect_lost_retransmit=False), 1_000_000, {100: {0, 1}})
    assert s.timeouts == 1 and s.done_at is not None


def test_after_an_rto_sack_resends_only_what_was_not_sacked():
    opts = TcpOptions(variant="sack", detect_lost_retransmit=False)
    s, fwd = sack_path(opts, 1_000_000, {100: {0, 1}, 110: {0}})
    assert s.timeouts == 1 and s.done_at is not None
    resent = sorted({seq for seq, retx in fwd.log if retx})
    assert resent == [100, 110]  # go-back-N would resend the whole window after the RTO


def test_linux_rto_rule_keeps_a_full_buffer_from_firing_spurious_timeouts():
    # 2 Mb/s, 64 KiB, 40 ms (issue 16's emulated-modem case): behind a full buffer the RTT is a
    # steady ~300 ms, RFC 6298's rttvar decays to ~0 and RTO -> srtt, so a resent segment queued
    # behind 44 KB times out; Linux keeps rttvar >= rto_min (RTO >= srtt + 200 ms): the kernel
    # resent 16 segments in that case.
    def cubic(rule):
        sc = Scenario(rate=2e6, buffer=65536, rtt=0.04, overhead=14, duration=20, warmup=5, sample_interval=None,
                      tcp=TcpOptions(variant="cubic", mss=1448, header_bytes=52, min_rto=0.2, delack_timeout=0.04,
                                     rto_rule=rule))
        return run(sc)

    rfc, linux = cubic("rfc6298"), cubic("linux")
    assert rfc.extra["timeouts"] >= 1 and rfc.extra["retransmissions"] > 2 * rfc.extra["queue_drops"]
    assert linux.extra["timeouts"] == 0 and linux.extra["retransmissions"] <= linux.extra["queue_drops"] + 2
    assert linux.extra["retransmissions"] < 30
