"""Linux's immediate ACKs (TcpOptions.quickack, hfcprov.sim.tcp.LinuxAckState): quick-ACK mode at the first
data segment, after a pause longer than the receiver's RTO and on a spurious retransmission, and one ACK
per segment while receive-buffer autotuning grows the window. Segments are fed to a receiver directly; each
test counts the ACKs it sends."""

from __future__ import annotations

import dataclasses

import pytest

from hfcprov.sim import TcpOptions
from hfcprov.sim.engine import Engine
from hfcprov.sim.hosts import DOCSIS_NS3, LINUX, NS3
from hfcprov.sim.packet import DATA, make
from hfcprov.sim.run import Network
from hfcprov.sim.scenario import FlowSpec, Scenario
from hfcprov.sim.tcp import MAX_QUICKACKS, TcpReceiver

RTT = 0.02
LINUX_OPTS = TcpOptions(**LINUX)


class Acks:
    def __init__(self, eng) -> None:
        self.eng = eng
        self.log = []  # (time, cumulative ACK)

    def send(self, pkt) -> bool:
        self.log.append((self.eng.now, pkt.seq))
        return True


def receiver(opts=LINUX_OPTS, rtt=RTT):
    eng = Engine()
    acks = Acks(eng)
    r = TcpReceiver(eng, 0, acks, opts)
    if r.linux is not None:
        r.linux.path(rtt, opts.min_rto)
    return eng, r, acks


def feed(eng, r, segs, t0: float, gap: float, age: float = RTT / 2) -> float:
    """Segments ``segs`` arrive ``gap`` apart from ``t0``, each sent ``age`` before it arrives."""
    t = t0
    for i in segs:
        eng.run(t)
        r.receive(make(DATA, 0, i, 1500, t - age, False, None))
        t += gap
    return t


def covered(acks, since=0.0) -> list[int]:
    """Segments each ACK sent after ``since`` newly covers (duplicates give 0)."""
    out, last = [], None
    for t, a in acks.log:
        if last is not None and t >= since:
            out.append(a - last)
        last = a
    return out


@pytest.mark.parametrize("first,clamp,singles", [(0, 0, MAX_QUICKACKS + 1), (10, 80480, 27)])
def test_the_first_data_segments_are_acked_one_by_one(first, clamp, singles):
    """tcp_event_data_recv's first segment: quick = min(16, window / 2), and tcp_grow_window sets quick |= 1
    while rcv_ssthresh grows. Starting at the clamp (64 KiB) the window has no room: 16 + 1 single ACKs.
    Starting at 10 segments (Linux's first advertised window, the Linux preset) quick is 5, but rcv_ssthresh
    grows two segments a segment to the 80,480-byte clamp (55.6 segments) over 23 segments, each keeping
    quick at 4-5: 27 single ACKs, then every second segment."""
    opts = dataclasses.replace(LINUX_OPTS, rcv_init_window=first, rcv_window_clamp=clamp)
    eng, r, acks = receiver(opts)
    feed(eng, r, range(40), 0.0, 1e-4)  # 4 ms: within one receiver RTT, no autotuning
    per = [a for _, a in acks.log]
    assert per[:singles] == list(range(1, singles + 1))
    assert per[singles:] == list(range(singles + 2, 41, 2))


def test_the_linux_host_starts_from_the_kernels_first_window():
    assert (LINUX_OPTS.rcv_init_window, LINUX_OPTS.rcv_window_clamp) == (10, 80480)


def test_without_quickack_the_first_segments_are_acked_in_pairs():
    eng, r, acks = receiver(dataclasses.replace(LINUX_OPTS, quickack=False))
    feed(eng, r, range(40), 0.0, 1e-4)
    assert [a for _, a in acks.log] == list(range(2, 41, 2))


STEADY = 1500  # segments by the end of _steady


def _steady(r, eng, acks):
    """The first 40 segments at once, then a steady 1 per ms (20 per RTT) until the window, raised by the
    fast start, has stopped growing."""
    t = feed(eng, r, range(40), 0.0, 1e-4)
    return feed(eng, r, range(40, STEADY), t, 1e-3)


def test_a_pause_longer_than_the_receivers_rto_restarts_quick_acks():
    """After an RTO the sender restarts from one segment: in-order data after a pause above the receiver's
    RTO (RTT + max(2 RTT, 200 ms)) is ACKed at once for 16 ACKs; a shorter pause changes nothing."""
    eng, r, acks = receiver()
    t = _steady(r, eng, acks)
    assert set(covered(acks, since=t - 0.1)) == {2}  # settled: pairs
    t1 = feed(eng, r, range(STEADY, STEADY + 40), t + 0.15, 1e-3)  # 150 ms pause < 240 ms
    assert set(covered(acks, since=t + 0.1)) == {2}
    feed(eng, r, range(STEADY + 40, STEADY + 80), t1 + 0.3, 1e-3)  # 300 ms pause > 240 ms
    after = covered(acks, since=t1 + 0.2)
    assert after[:MAX_QUICKACKS] == [1] * MAX_QUICKACKS
    assert set(after[MAX_QUICKACKS:]) == {2}


def test_a_spurious_retransmission_enters_quick_ack_mode():
    """tcp_data_queue: a segment entirely below rcv_nxt gets a duplicate ACK and 16 quick ACKs follow
    (the duplicate ACK used one of them)."""
    eng, r, acks = receiver()
    t = _steady(r, eng, acks)
    n = len(acks.log)
    eng.run(t)
    r.receive(make(DATA, 0, 100, 1500, t - RTT / 2, True, None))
    assert len(acks.log) == n + 1 and acks.log[-1][1] == STEADY
    feed(eng, r, range(STEADY, STEADY + 40), t + 1e-3, 1e-3)
    after = covered(acks, since=t + 1e-4)
    assert after[:MAX_QUICKACKS - 1] == [1] * (MAX_QUICKACKS - 1)
    assert set(after[MAX_QUICKACKS - 1:]) == {2}


def test_segments_are_acked_one_by_one_while_autotuning_grows_the_window():
    """Slow start: delivery per RTT doubles, so tcp_rcv_space_adjust raises the window clamp every RTT and
    tcp_grow_window ACKs every segment, long after the 16 quick ACKs; once delivery stays flat the window
    stops growing and ACKs go back to pairs."""
    eng, r, acks = receiver()
    t, seq, burst = 0.0, 0, 10
    for _ in range(5):  # 10, 20, 40, 80, 160 segments in successive RTTs
        t = feed(eng, r, range(seq, seq + burst), t, 1e-4)
        seq += burst
        t += RTT - burst * 1e-4 if burst * 1e-4 < RTT else 0.0
        burst *= 2
    singles = sum(1 for c in covered(acks) if c == 1)
    assert singles > 200  # of 310 segments; pairs only would be 0 after the first 17
    mark = len(acks.log)
    for _ in range(40):  # then 150 segments every RTT, for 40 RTTs
        t = feed(eng, r, range(seq, seq + 150), t, RTT / 150)
        seq += 150
    tail = covered(acks)[mark + 2000 // 2:]
    assert tail and set(tail) == {2}


def test_the_growth_stops_while_data_is_held_out_of_order():
    """tcp_space counts the data held out of order: a receiver holding more than the window's room grows
    nothing, so only the duplicate ACKs go out at once (each of them, as on every host)."""
    eng, r, acks = receiver()
    start = r.linux.ssthresh
    r.linux.clamp = start + 4  # four segments of room
    r.linux.last = 0.0
    r.rcv_nxt = 10
    feed(eng, r, range(11, 21), 0.0, 1e-4)  # 10 held above a hole at 10
    # room = clamp - held - rcv_ssthresh: 4 (+2), then 4 - 1 - 2 (+1), then none
    assert r.linux.ssthresh == pytest.approx(start + 3)
    assert r.linux.quick == 0  # the two quick ACKs were the duplicate ACKs of the first two


@pytest.mark.parametrize("host,on", [("linux", True), ("ns3", False), ("docsis-ns3", False)])
def test_only_the_linux_host_has_it(host, on):
    preset = {"linux": LINUX, "ns3": NS3, "docsis-ns3": DOCSIS_NS3}[host]
    assert TcpOptions(**preset).quickack is on


def test_a_far_flows_receiver_takes_its_own_base_rtt():
    sc = Scenario(rate=10e6, buffer=64 * 1024, rtt=0.02, duration=1.0, tcp=LINUX_OPTS,
                  flows=[FlowSpec(), FlowSpec(rtt=0.08)])
    net = Network(sc)
    near, far = (r.linux for r in net.receivers)
    assert (near.back, far.back) == (pytest.approx(0.01), pytest.approx(0.04))
    assert (near.rto, far.rto) == (pytest.approx(0.02 + 0.2), pytest.approx(0.08 + 0.2))
