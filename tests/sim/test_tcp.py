"""TCP sender/receiver behaviour on a hand-built path with chosen losses."""

from __future__ import annotations

import dataclasses

import pytest

from hfcprov.sim import FlowSpec, LossSpec, Scenario, TcpOptions, run
from hfcprov.sim.cc import congestion_control
from hfcprov.sim.engine import Engine
from hfcprov.sim.link import Link
from hfcprov.sim.packet import ACK, DATA
from hfcprov.sim.run import Host
from hfcprov.sim.tcp import TcpReceiver, TcpSender


class DropFirstSend:
    """In front of a link: loses the first transmission of the chosen segments; logs every packet."""

    def __init__(self, link, drop=()):
        self.link = link
        self.drop = set(drop)
        self.log = []  # (time, seq, retx)

    def send(self, pkt):
        self.log.append((self.link.engine.now, pkt.seq, pkt.retx))
        if pkt.kind == DATA and not pkt.retx and pkt.seq in self.drop:
            self.drop.discard(pkt.seq)
            return True
        return self.link.send(pkt)


class CountAcks:
    def __init__(self, link):
        self.link = link
        self.acks = 0

    def send(self, pkt):
        self.acks += pkt.kind == ACK
        return self.link.send(pkt)


def path(opts, size, drop=(), rate=10e6, rtt=0.04, buffer=None, start=0.0):
    eng = Engine()
    a, b = Host(), Host()
    fwd = DropFirstSend(Link(eng, b, capacity=rate, delay=rtt / 2, buffer=buffer), drop)
    rev = CountAcks(Link(eng, a, capacity=1e9, delay=rtt / 2))
    s = TcpSender(eng, 0, fwd, opts, congestion_control(opts.variant, opts), size)
    r = TcpReceiver(eng, 0, rev, opts)
    a.add(s)
    b.add(r)
    eng.at(start, s.start)
    return eng, s, r, fwd, rev


@pytest.mark.parametrize("variant", ["reno", "newreno", "sack"])
def test_lossless_transfer_delivers_every_byte_once(variant):
    opts = TcpOptions(variant=variant)
    eng, s, r, fwd, _ = path(opts, 1_000_000)
    eng.run(30)
    assert s.done_at is not None
    assert r.rcv_nxt == s.total == 685 and s.retransmissions == 0 and s.timeouts == 0
    assert len(fwd.log) == 685
    assert 0.8 < s.done_at < 2.0  # 800 ms of serialisation at 10 Mb/s plus slow start


@pytest.mark.parametrize("variant", ["reno", "newreno", "sack"])
def test_one_loss_in_a_big_window_is_a_fast_retransmit(variant):
    opts = TcpOptions(variant=variant)
    eng, s, _r, _, _ = path(opts, 1_000_000, drop={100})
    eng.run(30)
    assert (s.fast_retransmits, s.timeouts, s.retransmissions) == (1, 0, 1)
    assert s.done_at is not None


@pytest.mark.parametrize("variant,timeouts", [("newreno", 0), ("sack", 0)])
def test_newreno_and_sack_repair_three_losses_in_one_window_without_timeout(variant, timeouts):
    opts = TcpOptions(variant=variant)
    eng, s, _r, _, _ = path(opts, 1_000_000, drop={100, 104, 109})
    eng.run(30)
    assert s.timeouts == timeouts
    assert s.fast_retransmits == 1
    assert s.retransmissions == 3
    assert s.done_at is not None


def test_reno_needs_more_than_one_recovery_for_three_losses():
    opts = TcpOptions(variant="reno")
    eng, s, _r, _, _ = path(opts, 1_000_000, drop={100, 104, 109})
    eng.run(30)
    assert s.fast_retransmits + s.timeouts >= 2
    assert s.done_at is not None


def test_super_fast_retransmit_recovers_where_three_dupacks_cannot():
    # A 2-segment window (socket buffer) yields one dupACK per loss: only dupthresh 1 avoids the RTO.
    base = TcpOptions(variant="reno", socket_buffer=2 * 1460, delayed_ack=False)
    eng, s, *_ = path(base, 200_000, drop={30})
    eng.run(30)
    assert s.timeouts == 1 and s.fast_retransmits == 0
    eng, s, *_ = path(dataclasses.replace(base, dupthresh=1), 200_000, drop={30})
    eng.run(30)
    assert s.timeouts == 0 and s.fast_retransmits == 1


@pytest.mark.parametrize("gran,min_rto,expect", [(0.5, 2.0, 2.0), (0.2, 0.8, 1.2), (0.0, 1.0, 1.3)])
def test_rto_fires_on_the_timer_tick(gran, min_rto, expect):
    # A one-segment transfer whose segment is lost, started at t=0.3 s: no RTT sample yet,
    # so the RTO is max(initial 1 s, min); a coarse timer fires on its k-th tick from now
    # (ticks at 0.4, 0.6, ... for 200 ms: the 5th is 1.2 s), as the BSD slow timer does.
    opts = TcpOptions(variant="reno", timer_granularity=gran, min_rto=min_rto, initial_rto=1.0)
    eng, s, _r, fwd, _ = path(opts, 1000, drop={0}, start=0.3)
    eng.run(10)
    assert s.timeouts == 1
    retx_time = next(t for t, seq, retx in fwd.log if retx)
    assert retx_time == pytest.approx(expect)


def test_delayed_ack_halves_the_acks_and_delays_a_lone_segment():
    opts = TcpOptions(variant="newreno")
    eng, s, _r, fwd, rev = path(opts, 146_000)
    eng.run(10)
    assert rev.acks == pytest.approx(len(fwd.log) / 2, abs=6)
    eng, s, _r, fwd, rev = path(dataclasses.replace(opts, delayed_ack=False), 146_000)
    eng.run(10)
    assert rev.acks == len(fwd.log)
    # One segment alone waits the 200 ms delayed-ACK timer before it is acknowledged.
    eng, s, *_ = path(opts, 500, rtt=0.02)
    eng.run(10)
    assert s.done_at == pytest.approx(0.02 + 0.2, abs=0.002)


def test_socket_buffer_caps_throughput_at_window_over_rtt():
    sc = Scenario(rate=100e6, buffer=None, rtt=0.05, duration=20, warmup=5, sample_interval=None,
                  tcp=TcpOptions(socket_buffer=16 * 1460, delayed_ack=False))
    r = run(sc)
    assert r.goodput_bps == pytest.approx(16 * 1460 * 8 / 0.05, rel=0.03)


def test_a_seed_reproduces_a_lossy_run_bit_for_bit_and_another_seed_differs():
    sc = Scenario(rate=5e6, buffer=32768, rtt=0.04, duration=10, probe_rate=20,
                  flows=[FlowSpec(), FlowSpec(start=1.0, size=500_000)],
                  data_loss=LossSpec("gilbert", 0.01, 3), ack_loss=LossSpec("bernoulli", 0.01))
    a, b = run(sc).to_dict(), run(sc).to_dict()
    for d in (a, b):
        d["extra"].pop("wall_s")
        d["extra"].pop("events_per_s")
        d["extra"].pop("cpu_s")
    assert a == b
    c = run(sc.replace(seed=2))
    assert c.goodput_bps != a["goodput_bps"]


def test_ack_loss_alone_costs_less_than_data_loss():
    # Cohen-Ramanathan section IV: cumulative ACKs cover for lost ACKs; lost data must be resent.
    base = Scenario(rate=10e6, buffer=65536, rtt=0.02, duration=20, sample_interval=None,
                    flows=[FlowSpec(size=2_000_000)], tcp=TcpOptions(variant="reno", socket_buffer=8192))
    ack = [run(base.replace(seed=i, ack_loss=LossSpec("bernoulli", 0.03))).flows[0].goodput_bps for i in range(5)]
    data = [run(base.replace(seed=i, data_loss=LossSpec("bernoulli", 0.03))).flows[0].goodput_bps for i in range(5)]
    assert sum(ack) > 1.5 * sum(data)


# -- choices the RFCs leave open (TcpOptions fields; bench/sim.py sets ns-3's) ----------------
def traced(opts, size, drop=()):
    """``path`` plus one (in_rec, cwnd, ssthresh, SACKed segments, dupacks, una) row after every
    ACK, and the sender's state at each fast-retransmit entry."""
    eng, s, _r, _fwd, rev = path(opts, size, drop)
    rows, entries = [], []
    host_receivers = rev.link.route  # the sender host's per-flow list the reverse link delivers to

    def receive(pkt):
        s.receive(pkt)
        rows.append((s.in_rec, s.cwnd, s.ssthresh, s.rec.sacked(), s.dupacks, s.una))

    host_receivers[0] = receive
    ssthresh = s.cc.ssthresh

    def on_loss(sender):
        value = ssthresh(sender)
        entries.append({"outstanding": sender.nxt - sender.una, "lt_sent": sender.lt_sent,
                        "sacked": sender.rec.sacked(), "ssthresh": value})
        return value

    s.cc.ssthresh = on_loss
    eng.run(30)
    return s, rows, entries


@pytest.mark.parametrize("variant", ["newreno", "sack"])
def test_limited_transmit_turns_a_small_window_timeout_into_a_fast_retransmit(variant):
    # RFC 3042's case: the first of 3 segments is lost, so only 2 duplicate ACKs can come back.
    opts = TcpOptions(variant=variant, initial_window=3, delayed_ack=False)
    eng, s, *_ = path(opts, 100_000, drop={0})
    eng.run(30)
    assert (s.timeouts, s.fast_retransmits) == (1, 0)
    eng, s, _r, fwd, _ = path(dataclasses.replace(opts, limited_transmit=True), 100_000, drop={0})
    eng.run(30)
    assert (s.timeouts, s.fast_retransmits) == (0, 1)
    assert [seq for _t, seq, _retx in fwd.log[:6]] == [0, 1, 2, 3, 4, 0]  # two new segments, then the hole


def test_ssthresh_halves_flightsize_without_limited_transmit_segments_or_pipe():
    opts = TcpOptions(variant="sack", limited_transmit=True)
    _s, _rows, (flight,) = traced(opts, 1_000_000, drop={100})
    assert flight["lt_sent"] >= 1  # limited transmit sent new data on the early duplicate ACKs
    assert flight["ssthresh"] == (flight["outstanding"] - flight["lt_sent"]) * 1460 / 2  # RFC 5681 eq. 4
    _s, _rows, (pipe,) = traced(dataclasses.replace(opts, ssthresh_from="pipe"), 1_000_000, drop={100})
    # pipe: outstanding less the 3 SACKed segments and the hole IsLost() marks
    assert pipe["ssthresh"] == (pipe["outstanding"] - pipe["sacked"] - 1) * 1460 / 2
    assert pipe["sacked"] == 3 and pipe["ssthresh"] < flight["ssthresh"]


def test_a_cumulative_ack_that_sacks_new_data_counts_as_the_first_duplicate_ack():
    # With delayed ACKs the segment after the hole is ACKed at once, cumulatively (its
    # predecessor was pending) and with a SACK block: RFC 6675 counts it as a duplicate ACK,
    # so limited transmit already answers it, and the third SACKed segment triggers fast retransmit.
    opts = TcpOptions(variant="sack", limited_transmit=True)
    both = [traced(opts, 1_000_000, drop={hole}) for hole in (100, 101)]
    first = [rows[i] for _s, rows, _ in both for i in range(1, len(rows))
             if rows[i][5] > rows[i - 1][5] and rows[i][3] and not rows[i][0]]
    assert first and all(row[4] == 1 for row in first)
    assert all(entry["sacked"] == 3 and entry["lt_sent"] == 2 for _s, _rows, (entry,) in both)


def test_integer_cwnd_drops_the_fraction_of_each_congestion_avoidance_step():
    opts = TcpOptions(variant="newreno", initial_ssthresh=10 * 1460)
    exact, *_ = traced(opts, 3_000_000)
    whole, *_ = traced(dataclasses.replace(opts, integer_cwnd=True), 3_000_000)
    assert whole.cwnd == int(whole.cwnd) and exact.cwnd != int(exact.cwnd)
    assert exact.cwnd - 1460 < whole.cwnd < exact.cwnd


def test_grow_on_recovery_exit_adds_one_congestion_avoidance_step_to_ssthresh():
    for grow in (False, True):
        opts = TcpOptions(variant="sack", grow_on_recovery_exit=grow)
        _s, rows, _ = traced(opts, 1_000_000, drop={100})
        k = next(i for i in range(1, len(rows)) if rows[i - 1][0] and not rows[i][0])
        _in_rec, cwnd, ssthresh, *_ = rows[k]
        assert cwnd == (ssthresh + 1460 * 1460 / ssthresh if grow else ssthresh)


def test_count_acked_grows_reno_by_segments_acked_as_linux():
    # Delayed ACKs cover two segments each: per-ACK growth (BSD, ns-3) climbs half as fast as Linux,
    # which counts segments in slow start and in congestion avoidance.
    def after(count_acked, ssthresh):
        opts = TcpOptions(variant="reno", count_acked=count_acked, initial_ssthresh=ssthresh)
        s = TcpSender(Engine(), 0, None, opts, congestion_control("reno", opts), None)
        s.cwnd = 20 * 1460.0
        s.cc.on_ack(s, 2, None)
        return s.cwnd / 1460

    assert after(False, None) == 21 and after(True, None) == 22  # slow start
    assert after(True, 21 * 1460) == pytest.approx(21 + 1 / 21)  # one segment to ssthresh, the other in CA
    assert after(False, 10 * 1460) == pytest.approx(20 + 1 / 20) and after(True, 10 * 1460) == pytest.approx(20 + 2 / 20)


class DropTwice(DropFirstSend):
    """Loses the first transmission and the first retransmission of the chosen segments."""

    def __init__(self, link, drop=()):
        super().__init__(link, drop)
        self.again = set(drop)

    def send(self, pkt):
        if pkt.kind == DATA and pkt.retx and pkt.seq in self.again:
            self.again.discard(pkt.seq)
            self.log.append((self.link.engine.now, pkt.seq, pkt.retx))
            return True
        return super().send(pkt)


def after_rto(opts, drop=100):
    """One flow whose segment ``drop`` and its fast retransmission are lost: recovery sends new data
    (all SACKed) until the RTO. Returns the sender and its (timeouts, cwnd in segments, una) after each ACK."""
    eng = Engine()
    a, b = Host(), Host()
    fwd = DropTwice(Link(eng, b, capacity=10e6, delay=0.02), {drop})
    rev = Link(eng, a, capacity=1e9, delay=0.02)
    s = TcpSender(eng, 0, fwd, opts, congestion_control(opts.variant, opts), 2_000_000)
    r = TcpReceiver(eng, 0, rev, opts)
    rows = []

    def receive(pkt):
        s.receive(pkt)
        rows.append((s.timeouts, s.cwnd / s.mss, s.una))

    a.add(s)
    b.add(r)
    rev.route[0] = receive
    eng.at(0.0, s.start)
    eng.run(30)
    return s, rows


def test_the_ack_after_an_rto_does_not_credit_segments_sacked_before_it():
    # Linux counts a segment towards window growth once, when it is delivered (acked_sacked): the ACK of
    # the RTO's retransmission passes ~900 segments SACKed during the failed recovery, but delivers one.
    # Crediting them all again took cwnd from 1 segment to 59 (ssthresh 27.5 plus congestion avoidance)
    # in one ACK: a window-sized burst into the buffer right after the timeout.
    opts = TcpOptions(variant="sack", count_acked=True, detect_lost_retransmit=False, min_rto=1.0)
    s, rows = after_rto(opts)
    assert s.timeouts == 1
    k = next(i for i, row in enumerate(rows) if row[0] == 1 and row[2] > 100)  # the ACK of the RTO's resend
    assert rows[k][2] - rows[k - 1][2] > 30  # it passes the SACKed segments
    assert rows[k - 1][1] == 1 and rows[k][1] == 2  # one MSS after the RTO, plus the one segment it delivered


def test_loss_exit_from_recover_keeps_one_segment_after_the_rto_as_ns3():
    # ns-3's CA_LOSS exit: the ACK passing the recovery point grows cwnd by the segments beyond it
    # (none here), so one segment goes out and waits for the receiver's delayed ACK (docsis-ns3's 250 ms
    # gaps after each timeout at 2 Mb/s).
    opts = TcpOptions(variant="sack", count_acked=True, detect_lost_retransmit=False, min_rto=1.0,
                      loss_exit_from_recover=True)
    s, rows = after_rto(opts)
    k = next(i for i, row in enumerate(rows) if row[0] == 1 and row[2] > 100)
    assert s.timeouts == 1 and rows[k][2] - rows[k - 1][2] > 30
    assert rows[k][1] == 1 and rows[k + 1][1] == 2  # the next ACK (the delayed one) is slow start's first


def test_ssthresh_from_cwnd_halves_the_window_whatever_sack_flightsize_says():
    # A recovery entered as the last one ends: much is SACKed above the hole, so FlightSize / 2 is above
    # cwnd and the FlightSize rule (capped at cwnd) does not reduce the window at all; Linux's
    # tcp_reno_ssthresh and ns-3's TcpLinuxReno (docsis-ns3's TcpDctcp at alpha 1) halve cwnd.
    def ssthresh(rule):
        opts = TcpOptions(variant="sack", ssthresh_from=rule)
        s = TcpSender(Engine(), 0, None, opts, congestion_control("sack", opts), None)
        s.cwnd, s.una, s.nxt = 20 * 1460.0, 0, 50  # 50 segments outstanding, cwnd 20
        return s.cc.ssthresh(s) / 1460

    assert ssthresh("flightsize") == 20 and ssthresh("cwnd") == 10
