"""The AQM hops in the simulator: PieLink's lazy updates, the dual-queue link, and whole runs."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.queue.ecn import CE, ECT1
from hfcprov.sim.aqm.link import DualQueueLink, PieLink
from hfcprov.sim.engine import Engine
from hfcprov.sim.packet import DATA, Packet
from hfcprov.sim.scenario import FlowSpec, TcpOptions

from .support import aqm_run, percentile


class Sink:
    def __init__(self, engine):
        self.engine = engine
        self.got = []

    def receive(self, pkt):
        self.got.append((self.engine.now, pkt.flow, pkt.seq, pkt.ecn))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=0.004), min_size=50, max_size=600),
       st.integers(min_value=0, max_value=1000))
def test_lazy_updates_equal_a_timer_every_interval(gaps, seed):
    """PieLink runs its 16 ms updates when a packet arrives; a link driven by a real timer
    at every boundary makes the same decisions, packet for packet."""
    outcomes = []
    for timer in (False, True):
        eng = Engine()
        link = PieLink(eng, Sink(eng), capacity=100e6, rate=4e6, burst=3044, buffer=60_000,
                       rng=random.Random(seed))
        link.pie.drop_prob = 0.05  # start where early drops can happen
        link.pie.burst_state = 1
        if timer:
            def tick(_=None, link=link, eng=eng):
                link.pie.advance(eng.now, link.qdelay_at)
                eng.after(link.pie.p.interval, tick)
            eng.at(link.pie.p.interval, tick)
        t, sent = 0.0, []
        for i, g in enumerate(gaps):
            t += g
            eng.at(t, lambda i, link=link, sent=sent, eng=eng:
                   sent.append(link.send(Packet(DATA, 0, i, 1500, eng.now))), i)
        eng.run(t + 1.0)
        link.pie.advance(eng.now, link.qdelay_at)  # the lazy one catches up at the end
        outcomes.append((sent, round(link.pie.drop_prob, 12)))
    assert outcomes[0] == outcomes[1]


def test_pie_link_drops_early_only_beyond_a_third_of_the_buffer():
    eng = Engine()
    link = PieLink(eng, Sink(eng), capacity=10e6, rate=10e6, buffer=300_000)
    for i in range(60):  # 90 kB at once: under a third of the buffer
        link.send(Packet(DATA, 0, i, 1500, 0.0))
    eng.run(1.0)
    assert link.early_drops == 0 and link.dropped == 0


def test_dual_queue_link_lets_low_latency_overtake_and_marks_ce():
    eng = Engine()
    sink = Sink(eng)
    link = DualQueueLink(eng, sink, capacity=10e6, rate=10e6, classic_buffer=10**6)
    for i in range(50):
        link.send(Packet(DATA, 1, i, 1500, 0.0))  # classic backlog
    eng.run(0.01)
    ll = Packet(DATA, 2, 0, 1500, eng.now, ecn=ECT1)
    link.send(ll)
    eng.run(1.0)
    order = [(f, s) for _, f, s, _ in sink.got]
    assert order.index((2, 0)) < 15  # not behind the 40-odd classic packets left
    assert link.l_waits and max(link.l_waits) < 0.003


def test_unresponsive_low_latency_flow_is_caught_by_queue_protection():
    """An ECT(1) source sending 15 Mb/s into a 10 Mb/s aggregate flow, beside a light
    paced low-latency flow: queue protection moves the heavy flow's packets to the
    classic queue and the light flow keeps a sub-millisecond-scale queue delay."""
    eng = Engine()
    sink = Sink(eng)
    link = DualQueueLink(eng, sink, capacity=10e6, rate=10e6, classic_buffer=200_000)

    def source(flow, size, gap, until):
        def tick(i):
            link.send(Packet(DATA, flow, i, size, eng.now, ecn=ECT1))
            if eng.now + gap < until:
                eng.after(gap, tick, i + 1)
        eng.at(0.001 * flow, tick, 0)

    source(1, 1500, 1500 * 8 / 15e6, 5.0)  # unresponsive, 150 % of the rate
    source(2, 200, 0.01, 5.0)  # 160 kb/s, paced
    link.measure_from = 1.0
    eng.run(6.0)
    qp = link.qd.qp
    assert qp.sanctions_by_flow.get(1, 0) > 1000
    assert qp.sanctions_by_flow.get(2, 0) == 0
    # the low-latency queue is held around the critical latency (MAXTH: 3.7 ms at 10 Mb/s)
    assert percentile(link.l_waits, 99) < 2 * link.qd.max_th
    got = {f: sum(1 for _, g, _, _ in sink.got if g == f) for f in (1, 2)}
    assert got[2] >= 495  # the light flow lost nothing


# -- whole runs (TCP over the AQM hop) ---------------------------------------------------
@pytest.mark.parametrize("variant", ["cubic", "sack"])
def test_pie_holds_its_latency_target_where_drop_tail_bloats(variant):
    """10 Mb/s, 256 KiB buffer, two long flows: drop-tail queues ~200 ms, DOCSIS-PIE
    holds the queue near its 10 ms target with goodput within a few percent. Senders
    as Linux's (200 ms minimum RTO, limited transmit): with RFC 6298's 1 s minimum,
    PIE's start-up drops become second-long stalls."""
    tcp = TcpOptions(variant=variant, min_rto=0.2, limited_transmit=True)
    kw = {"rate": 10e6, "buffer": 256 * 1024, "rtt": 0.04, "duration": 25, "warmup": 8,
          "flows": [FlowSpec(), FlowSpec(start=0.5)], "tcp": tcp}
    droptail = aqm_run(aqm="none", **kw)
    pie = aqm_run(aqm="docsis-pie", **kw)
    assert droptail.extra["queue_delay_mean"] > 0.1
    assert 0.004 < pie.extra["queue_delay_mean"] < 0.020
    assert pie.goodput_bps > 0.92 * droptail.goodput_bps


@pytest.mark.slow
def test_low_latency_flow_keeps_low_delay_beside_classic_bulk_flows():
    """One Prague flow in the low-latency queue beside two CUBIC flows (50 Mb/s): its
    queue delay p99 stays near a millisecond, the classic flows keep a fair share."""
    res, net = aqm_run(aqm="lld", rate=50e6, buffer=256 * 1024, rtt=0.02, duration=20, warmup=5,
                       flows=[FlowSpec(variant="prague"), FlowSpec(), FlowSpec()],
                       tcp=TcpOptions(variant="cubic"), keep=True)
    link = net.bottleneck
    assert percentile(link.l_waits, 99) < 0.002
    shares = [f.goodput_bps / res.goodput_bps for f in res.flows]
    assert min(shares[1:]) > 0.15  # each classic flow keeps a real share of the rate
    assert res.goodput_bps > 0.9 * 50e6 * 1460 / 1518
    assert link.qd.marks > 0 and CE == 3


def test_example_unresponsive_tcp_flow_is_sanctioned_and_the_low_latency_queue_stays_low():
    """examples/sim-lld-unresponsive.yaml, shortened: an ECT(1) TCP flow that ignores marks and
    losses joins Prague and two CUBIC flows; queue protection sanctions it (and hardly Prague)."""
    import yaml

    from hfcprov.sim import Scenario
    from tests.support import REPO

    d = yaml.safe_load((REPO / "examples" / "sim-lld-unresponsive.yaml").read_text())
    d.update(duration="10s", warmup="3s", probe_rate=0)
    res, net = aqm_run(keep=True, **Scenario.from_dict(d).__dict__)
    qp = net.bottleneck.qd.qp
    bad = qp.sanctions_by_flow.get(3, 0)
    assert bad > 10_000, qp.sanctions_by_flow
    assert qp.sanctions_by_flow.get(0, 0) < bad / 100
    assert res.extra["aqm"]["ll_delay_p99"] < 0.002


def test_docsis_pie_on_the_request_grant_cable_modem():
    """mac: docsis with aqm: docsis-pie: PIE in front of the CM's queue, estimating from its rate."""
    from hfcprov.sim import ScenarioError

    kw = {"rate": 5e6, "buffer": 256 * 1024, "rtt": 0.04, "duration": 25, "warmup": 8, "mac": "docsis",
          "mac_params": {"preset": "docsis30"}, "flows": [FlowSpec(), FlowSpec(start=0.5)],
          "tcp": TcpOptions(variant="cubic", min_rto=0.2, limited_transmit=True), "sample_interval": None}
    droptail = aqm_run(aqm="none", **kw)
    pie = aqm_run(aqm="docsis-pie", **kw)
    assert droptail.extra["queue_delay_mean"] > 0.15
    assert pie.extra["queue_delay_mean"] < 0.040  # the target plus the request-grant cycle
    assert pie.extra["aqm"]["early_drops"] > 0
    assert pie.goodput_bps > 0.85 * droptail.goodput_bps
    with pytest.raises(ScenarioError, match="lld needs mac: tokenbucket"):
        aqm_run(aqm="lld", **kw)
