"""What the request-grant CM's AQM queue holds (hfcprov.sim.mulpi): a packet leaves it when the CM takes its
first byte for a burst, as in CableLabs' docsis-ns3, whose CM moves a packet from its queue disc to the
device's staging buffer at burst preparation. At 2 Mb/s a grant is ~500 B, so a 1518-byte frame spends
three MAPs in the MAC: counted in the queue it made the CM drop as if it held one packet more
(docs/calibration.md section 9). The delay estimate reads the request shaper's tokens as its last request
left them."""

from __future__ import annotations

import pytest

from hfcprov.queue.dualq import DualQueue
from hfcprov.queue.pie import IN_BURST, PieParams, qdelay_estimate
from hfcprov.queue.profile import parse_profile
from hfcprov.sim.aqm.link import LowLatencyCm, PieCm
from hfcprov.sim.engine import Engine
from hfcprov.sim.mulpi import Aggregate, CmFlow, Upstream, make_low_latency
from hfcprov.sim.packet import DATA, Packet

PROFILE = parse_profile("docsis3.1")
RATE = 2e6  # table 2's tier: MSR 2 Mb/s, peak 4 Mb/s, burst 100 ms of the rate
FRAME = 1500 + 18 + PROFILE.mac_header  # a 1500-byte packet as a MAC frame


class Sink:
    def __init__(self) -> None:
        self.got = []

    def receive(self, pkt) -> None:
        self.got.append(pkt)


def packet(seq: int, size: int = 1500) -> Packet:
    return Packet(DATA, 0, seq, size, 0.0)


def cm(buffer: int | None) -> tuple[Engine, CmFlow]:
    eng = Engine()
    agg = Aggregate(Upstream(eng, PROFILE), RATE, int(RATE * 0.1 / 8), 2 * RATE)
    return eng, CmFlow(agg, Sink(), buffer=buffer)


def until_fragmented(eng: Engine, flow) -> None:
    """Run until the CM has sent part of its head packet (a grant smaller than the frame)."""
    for _ in range(200):
        if flow.head_sent:
            return
        eng.run(eng.now + PROFILE.frame)
    raise AssertionError("no fragment within 200 frames")


def test_a_packet_the_cm_has_begun_to_send_no_longer_fills_the_target_buffer():
    eng, flow = cm(buffer=2 * FRAME)
    assert flow.send(packet(0)) and flow.send(packet(1))
    assert not flow.has_room(1500)  # two frames fill it
    until_fragmented(eng, flow)
    assert 0 < flow.head_sent < FRAME  # the first grant (the peak's 1000 B at most) holds part of it
    assert flow.has_room(1500) and flow.send(packet(2))  # the head is in the MAC: one frame's room again
    assert not flow.has_room(1500)


def test_docsis_pie_spares_a_queue_of_two_packets_behind_the_one_in_a_burst():
    """RFC 8034 / MULPI Annex M never drop early with at most 2 x MEAN_PKTSIZE (2048 B) queued: two 1000-byte
    packets queued behind the one in a burst are spared, however much of the head is left to send."""
    eng, flow = cm(buffer=65536)
    pie = PieCm(flow, PieParams())
    assert pie.send(packet(0))
    until_fragmented(eng, flow)
    assert pie.send(packet(1, 1000)) and pie.send(packet(2, 1000))
    small = 1000 + 18
    assert flow.aqm_bytes() == 1518 - flow.head_sent + 2 * small > 2048  # the estimate counts every unsent byte
    c = pie.pie  # a controller that drops the next packet it may: high probability, delay over the target
    c.drop_prob, c.accu_prob, c.qdelay_old, c.burst_state = 1.0, 9.0, 0.05, IN_BURST
    assert pie.send(packet(3))
    assert c.early_drops == 0
    assert flow.aqm_queue_bytes() == 2 * small + 1518
    assert not pie.send(packet(4))  # 3554 B queued: now it drops
    assert c.early_drops == 1


def test_the_delay_estimate_reads_the_tokens_the_last_request_left():
    """docsis-ns3's CM brings its MSR bucket up to date when it shapes a request; between requests the
    estimate reads the tokens as that request left them, not refilled to the instant."""
    eng, flow = cm(buffer=65536)
    for i in range(6):
        flow.send(packet(i))
    flow.tokens = 0.0  # as a request that took every token left them at t = 0
    first = flow.aqm_delay()
    # every byte at the sustained rate as configured: it counts Ethernet frames, as the queue bytes do
    assert first == pytest.approx(6 * 1518 * 8 / RATE)
    eng.run(0.0019)  # no request before the first MAP's contention opportunity (2.025 ms)
    assert flow.requests_contention == flow.requests_piggyback == 0
    assert flow.aqm_delay() == first
    flow.tokens = 3000.0  # what a request leaves covers bytes at the peak rate
    assert flow.aqm_delay() == pytest.approx(qdelay_estimate(6 * 1518, RATE, 2 * RATE, 3000.0))


class NoLuck:
    """A random source that never draws a random drop: only de-randomisation's PROB_HIGH drops."""

    def random(self) -> float:
        return 0.999


def test_docsis_pie_weighs_a_packet_by_its_ethernet_frame():
    """The drop probability scales with the packet's size as the queue counts it: a 1500-byte IP packet is a
    1518-byte frame, whose share of PROB_HIGH tips the de-randomised sum where 1500 would not."""
    _, flow = cm(buffer=65536)
    pie = PieCm(flow, PieParams(), NoLuck())
    for i in range(3):
        assert pie.send(packet(i))
    c = pie.pie
    c.drop_prob, c.qdelay_old, c.burst_state = 0.5, 0.05, IN_BURST
    c.accu_prob = 8.5 - 0.5 * 1509 / 1024  # between 1500's and 1518's share short of PROB_HIGH
    assert not pie.send(packet(3))
    assert c.early_drops == 1


def test_a_low_latency_aggregates_dual_queue_lets_go_of_a_packet_taken_for_a_burst():
    """The dual queue (MULPI Annex N/O) counts what is in its queues: a classic packet leaves the classic
    queue's count when the CM takes it for a burst, not when its last fragment is sent."""
    eng = Engine()
    classic, ll = make_low_latency(eng, PROFILE, sink=Sink(), delay=0.0, rate=RATE, burst=int(RATE * 0.1 / 8),
                                   peak=2 * RATE, classic_rate=None, weight=None, pgs=None, loss=None, seed=1)
    qd = DualQueue(RATE, 65536, 16384)
    link = LowLatencyCm(eng, classic, ll, qd)
    assert link.send(packet(0)) and link.send(packet(1))
    assert qd.c_bytes == 2 * 1518
    until_fragmented(eng, classic)
    assert 0 < classic.head_sent < FRAME
    assert qd.c_bytes == 1518
