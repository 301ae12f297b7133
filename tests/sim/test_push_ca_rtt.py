"""Two Linux details of the sender and receiver (issue 28): the RTT sample congestion control sees
(``TcpOptions.ca_rtt``: Linux's ca_rtt_us, the newest acked segment's age) and PSH with the receiver's
immediate ACK of it (``TcpOptions.push``). Segments and ACKs are handed to one host directly."""

from __future__ import annotations

import dataclasses

import pytest

from hfcprov.sim import FlowSpec, LossSpec, Scenario, TcpOptions
from hfcprov.sim.cc import congestion_control
from hfcprov.sim.engine import Engine
from hfcprov.sim.hosts import DOCSIS_NS3, LINUX, NS3
from hfcprov.sim.packet import ACK, DATA, make
from hfcprov.sim.run import Network
from hfcprov.sim.tcp import TcpReceiver, TcpSender

LINUX_OPTS = TcpOptions(variant="reno", **LINUX)


class Wire:
    """Where a host sends: logs every packet."""

    def __init__(self) -> None:
        self.log = []

    def send(self, pkt) -> bool:
        self.log.append(pkt)
        return True


class SeenRtt:
    """A Reno that records the RTT each ACK hands to congestion control."""

    def __init__(self, opts) -> None:
        self.cc = congestion_control("reno", opts)
        self.rtts = []

    def __getattr__(self, name):
        return getattr(self.cc, name)

    def on_ack(self, s, acked, rtt) -> None:
        self.rtts.append(rtt)
        self.cc.on_ack(s, acked, rtt)


def sender(opts):
    eng = Engine()
    wire = Wire()
    cc = SeenRtt(opts)
    s = TcpSender(eng, 0, wire, opts, cc, None)
    return eng, s, wire, cc


def two_sends_one_ack(opts):
    """Segment 0 leaves at 0, segment 1 at 5 ms (the application hands them over then); one delayed ACK
    covering both arrives at 30 ms, echoing segment 0's timestamp. Returns (cc's RTT, srtt)."""
    eng, s, _, cc = sender(opts)
    s.supply(1)
    s.start()
    eng.run(0.005)
    s.supply(2)
    eng.run(0.030)
    s.receive(make(ACK, 0, 2, 52, 0.0, False, None))
    return cc.rtts[-1], s.srtt


def test_congestion_control_sees_the_newest_acked_segments_age():
    """tcp_clean_rtx_queue: seq_rtt_us (srtt, RTO) from the oldest newly acked segment, ca_rtt_us (what
    pkts_acked and CUBIC's HyStart get) from the newest: 25 ms here, where the echoed timestamp says 30."""
    rtt, srtt = two_sends_one_ack(dataclasses.replace(LINUX_OPTS, ca_rtt="newest", tso_defer=False))
    assert rtt == pytest.approx(0.025)
    assert srtt == pytest.approx(0.030)


def test_with_ca_rtt_oldest_congestion_control_sees_the_echoed_timestamp():
    rtt, srtt = two_sends_one_ack(dataclasses.replace(LINUX_OPTS, ca_rtt="oldest", tso_defer=False))
    assert rtt == pytest.approx(0.030) and srtt == pytest.approx(0.030)


def test_a_retransmission_covered_leaves_no_rtt_sample():
    eng, s, _, cc = sender(dataclasses.replace(LINUX_OPTS, ca_rtt="newest"))
    s.start()
    eng.run(0.03)
    s.receive(make(ACK, 0, 2, 52, 0.0, True, None))
    assert cc.rtts == [None]


def pushed(opts, sends):
    """New data handed over in steps (``sends``: segments per step, each a burst); which segments carry PSH."""
    eng, s, wire, _ = sender(dataclasses.replace(opts, initial_window=100))
    avail = 0
    s.supply(0)
    s.start()
    for k, n in enumerate(sends):
        eng.run(0.001 * (k + 1))
        avail += n
        s.supply(avail)
    return [p.seq for p in wire.log if p.kind == DATA and p.psh]


def test_psh_ends_each_gso_packet_of_two_or_more_segments():
    """Linux cuts a send into GSO packets of the TSO size (2 segments before an RTT is known) from its front
    (tcp_write_xmit, tso_fragment) and forces PSH on every packet of more than one segment
    (__tcp_transmit_skb: tcp_skb_pcount > 1), which GSO leaves on the packet's last segment; a packet of one
    segment gets none. So a burst of 3 is a pair with PSH and a lone segment without, and two marks are
    never one segment apart (the bed's captures: 2, 3 or 4 apart)."""
    on = dataclasses.replace(LINUX_OPTS, push=True, tso_defer=False)
    assert pushed(on, [4]) == [1, 3]
    assert pushed(on, [3]) == [1]
    assert pushed(on, [5]) == [1, 3]
    assert pushed(on, [2, 1, 2]) == [1, 4]
    assert pushed(on, [1, 1]) == []


def test_new_data_sent_in_recovery_leaves_as_gso_packets_too():
    """In SACK recovery new data leaves from the recovery strategy's send (PRR's sndcnt is the window
    tcp_write_xmit sees): cut into GSO packets with PSH as any other send."""
    opts = dataclasses.replace(LINUX_OPTS, push=True, tso_defer=False, recovery="sack", initial_window=2)
    eng, s, wire, _ = sender(opts)
    s.start()  # segments 0 and 1
    s.in_rec = True
    s.cwnd = 7.0 * s.mss  # room for 5 more: packets [2, 3], [4, 5], [6]
    s.rec.send(s)
    assert [p.seq for p in wire.log if p.kind == DATA] == list(range(7))
    assert [p.seq for p in wire.log if p.kind == DATA and p.psh] == [1, 3, 5]


def test_without_push_no_segment_carries_psh():
    assert pushed(dataclasses.replace(LINUX_OPTS, push=False, tso_defer=False), [4, 1, 3]) == []


def receiver(opts):
    eng = Engine()
    wire = Wire()
    r = TcpReceiver(eng, 0, wire, opts)
    r.linux.path(0.02, opts.min_rto)
    return eng, r, wire


def acks_after_a_lone_psh_segment(opts) -> list[int]:
    """Quick-ACK mode used up (pairs), then one in-order full-sized segment with PSH arrives alone."""
    eng, r, wire = receiver(opts)
    for i in range(41):  # 17 quick ACKs, then 12 pairs
        eng.run(i * 1e-4)
        r.receive(make(DATA, 0, i, 1500, i * 1e-4 - 0.01, False, None))
    r.linux.clamp = r.linux.ssthresh  # the window has stopped growing: no tcp_grow_window quick ACKs
    r.linux.quick = 0
    assert r.pending == 0
    n = len(wire.log)
    eng.run(0.01)
    pkt = make(DATA, 0, 41, 1500, 0.0, False, None)
    pkt.psh = True
    r.receive(pkt)
    return [p.seq for p in wire.log[n:]]


def test_the_receiver_acks_an_in_order_psh_segment_at_once():
    """tcp_measure_rcv_mss: a full-sized segment with PSH sets ICSK_ACK_PUSHED, and tcp_cleanup_rbuf ACKs
    it as soon as the application has read it (a bulk reader at once)."""
    assert acks_after_a_lone_psh_segment(dataclasses.replace(LINUX_OPTS, push=True)) == [42]


def test_without_push_the_psh_segment_waits_for_its_pair():
    assert acks_after_a_lone_psh_segment(dataclasses.replace(LINUX_OPTS, push=False)) == []


@pytest.mark.parametrize("preset", [NS3, DOCSIS_NS3, {}])
def test_the_other_hosts_keep_the_echoed_timestamp_and_no_psh(preset):
    opts = TcpOptions(**preset)
    assert (opts.ca_rtt, opts.push) == ("oldest", False)


def test_the_linux_host_acks_a_psh_segment_as_the_kernel_does():
    """The preset carries ``push``: the bed's kernel marks GSO packets' ends and ACKs them at once, and
    with it the 1% loss rows sit at -3.5 / -3.7% of the pooled kernel runs (without it -4.8 / -5.1%)."""
    assert acks_after_a_lone_psh_segment(LINUX_OPTS) == [42]
    assert pushed(LINUX_OPTS, [4]) != []


def test_the_linux_host_takes_ca_rtt_from_the_newest_segment():
    assert LINUX_OPTS.ca_rtt == "newest"


def run_summary(opts, receiver_push: bool):
    """Three Reno flows through 10 Mb/s with 1% plant loss (SACK recovery, tail loss probes); with
    ``receiver_push`` False the receivers ignore PSH. Returns what a result hashes to."""
    sc = Scenario(rate=10e6, buffer=64 * 1024, rtt=0.02, duration=3.0, tcp=opts, flows=[FlowSpec()] * 3, seed=3,
                  data_loss=LossSpec("bernoulli", 0.01))
    net = Network(sc)
    for r in net.receivers:
        r.linux.push = receiver_push
    res = net.run()
    return [f.goodput_bps for f in res.flows], [f.retransmissions for f in res.flows], res.latency_loaded.p50


def test_psh_marks_alone_change_nothing():
    """The sender's side of ``push`` only marks segments: with receivers that ignore PSH the run is the one
    without ``push``, to the digit; every effect of ``push`` is the receiver's ACK."""
    on = dataclasses.replace(LINUX_OPTS, push=True)
    off = dataclasses.replace(LINUX_OPTS, push=False)
    assert run_summary(on, receiver_push=False) == run_summary(off, receiver_push=False)
    assert run_summary(on, receiver_push=True) != run_summary(off, receiver_push=False)
