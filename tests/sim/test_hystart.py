"""CUBIC's slow-start exit: Linux HyStart (ACK train + delay) by default, RFC 9406 HyStart++ as an option."""

from __future__ import annotations

import pytest

from hfcprov.sim import Scenario, TcpOptions
from hfcprov.sim.hystart import HyStartPlusPlus, LinuxHyStart
from hfcprov.sim.run import Network


def _slow_start(rate, buffer, rtt, hystart="auto", hs=None, duration=4.0):
    sc = Scenario(rate=rate, buffer=buffer, rtt=rtt, duration=duration, sample_interval=None,
                  tcp=TcpOptions(variant="cubic", hystart=hystart))
    net = Network(sc)
    if hs is not None:
        net.senders[0].cc.hs = hs
    return net, net.run()


@pytest.mark.parametrize("rate,buffer,rtt", [(10e6, 1 << 20, 0.1), (2e6, 262144, 0.04), (100e6, 1 << 20, 0.05)])
@pytest.mark.slow
def test_linux_hystart_leaves_slow_start_before_a_large_buffer_overflows(rate, buffer, rtt):
    _, plain = _slow_start(rate, buffer, rtt, "off")
    net, hs = _slow_start(rate, buffer, rtt)
    assert plain.extra["queue_drops"] > 100  # standard slow start overshoots by up to a window
    assert hs.extra["queue_drops"] == 0
    assert net.senders[0].cc.hs.found
    assert hs.goodput_bps >= 0.98 * plain.goodput_bps
    assert hs.extra["queue_bytes_mean"] < 0.5 * plain.extra["queue_bytes_mean"]


class FakeSender:
    def __init__(self):
        self.mss, self.cwnd, self.ssthresh, self.una, self.nxt = 1460, 100 * 1460.0, 1e18, 0, 100
        self.engine = type("E", (), {"now": 0.0})()


@pytest.mark.parametrize("spacing,found_at", [(0.001, 0.026), (0.003, None)])
def test_ack_train_fires_when_closely_spaced_acks_span_half_the_min_rtt(spacing, found_at):
    s = FakeSender()
    hs = LinuxHyStart(ack_train=True, delay=False)
    t, found = 0.0, None
    while t < 0.05 and found is None:
        s.engine.now = t
        s.una += 1  # ACKs inside one round (una stays below the round's end after the first)
        hs.growth(s, 1.0, 0.050)
        if hs.found:
            found = t
        t += spacing
    # 50 ms min RTT: the train must last past (50 + 1) / 2 = 25.5 ms with gaps of at most 2 ms
    assert found == (pytest.approx(found_at) if found_at else None)
    assert (s.ssthresh == s.cwnd) == (found is not None)


def test_delay_test_needs_the_round_min_rtt_clamp_above_the_flow_min():
    s = FakeSender()
    hs = LinuxHyStart(ack_train=False, delay=True)
    rtts = [0.040] * 8 + [0.0449] * 10  # round 1: minimum 40 ms
    for k, rtt in enumerate(rtts):
        s.engine.now = k * 0.004
        s.una = 1 if k < 8 else 200  # round 2 begins (una passes the first round's HighData)
        s.nxt = 100 if k < 8 else 300
        hs.growth(s, 1.0, rtt)
    assert not hs.found  # +4.9 ms < clamp(40/8, 4, 16) = 5 ms
    s.una, s.nxt = 301, 400  # round 3
    for _ in range(9):
        s.engine.now += 0.004
        hs.growth(s, 1.0, 0.0451)
    assert hs.found  # a round whose minimum is 45.1 ms > 40 + 5


@pytest.mark.parametrize("rounds,fires", [("low_window", True), ("always", False)])
def test_rounds_counted_below_the_low_window_start_at_each_flight_head(rounds, fires):
    # Each flight's ACKs see the flight's own queue build: 40 ms at its head, 1.5 ms more per ACK; the
    # window reaches 16 at the third ACK of the first flight. Counted from there (Linux 6.6-6.13) a round
    # starts mid-flight and its first 8 samples (46-56.5 ms) are all over 40 + 5 ms; counted from the first
    # ACK (Linux 6.14 on, ns-3) every round starts at a flight's head (40 ms) and the delay test stays quiet.
    s = FakeSender()
    s.una, s.nxt = 0, 10
    hs = LinuxHyStart(ack_train=False, delay=True, rounds=rounds)
    for flight in (range(1, 11), range(11, 31), range(31, 71)):
        for j, seg in enumerate(flight):
            s.una, s.cwnd = seg, (13 + seg) * s.mss
            s.engine.now += 0.001
            hs.growth(s, 1.0, 0.040 + 0.0015 * j)
            s.nxt = 10 + 2 * seg  # each ACK releases two segments
    assert hs.found is fires


def test_hystart_rounds_is_a_scenario_option_that_reaches_cubic():
    sc = Scenario.from_dict({"rate": "2M", "buffer": "64KiB", "tcp": {"variant": "cubic", "hystart_rounds": "always"}})
    assert Network(sc).senders[0].cc.hs.all_rounds is True
    assert Network(sc.replace(tcp=TcpOptions(variant="cubic"))).senders[0].cc.hs.all_rounds is False
    from hfcprov.sim.hosts import HOSTS

    assert {name: host.get("hystart_rounds", "low_window") for name, host in HOSTS.items()} == {
        "linux": "always", "ns3": "low_window", "docsis-ns3": "low_window"}  # Linux 6.14 on; the others as before


def test_at_2mbps_acks_never_form_a_train_so_the_delay_test_ends_slow_start():
    # two segments take 12 ms at 2 Mb/s: ACKs are never within 2 ms of each other
    net, r = _slow_start(2e6, 262144, 0.04, hs=LinuxHyStart(ack_train=True, delay=False))
    assert not net.senders[0].cc.hs.found and r.extra["queue_drops"] > 0
    net, r = _slow_start(2e6, 262144, 0.04, hs=LinuxHyStart(ack_train=False, delay=True))
    assert net.senders[0].cc.hs.found and r.extra["queue_drops"] == 0


def test_hystart_plus_plus_goes_through_conservative_slow_start_into_avoidance():
    net, r = _slow_start(2e6, 262144, 0.04, "rfc9406")
    s = net.senders[0]
    assert isinstance(s.cc.hs, HyStartPlusPlus)
    assert s.cc.hs.in_css and s.cc.hs.css_rounds >= HyStartPlusPlus.CSS_ROUNDS
    assert s.ssthresh < 1e17 and r.extra["queue_drops"] == 0


def test_hystart_is_a_scenario_option_with_named_choices():
    sc = Scenario.from_dict({"rate": "2M", "buffer": "64KiB", "tcp": {"variant": "cubic", "hystart": "rfc9406"}})
    assert sc.tcp.hystart == "rfc9406"
    assert Scenario.from_dict({"rate": "2M", "buffer": "64KiB", "tcp": {"hystart": False}}).tcp.hystart == "off"
    from hfcprov.sim.scenario import ScenarioError

    with pytest.raises(ScenarioError, match="tcp.hystart: 'hybla' is not one of"):
        Scenario.from_dict({"rate": "2M", "buffer": "64KiB", "tcp": {"hystart": "hybla"}}, source="f.yaml")


def test_cubic_linux_floor_grows_5_percent_per_rtt_until_the_first_loss():
    # Linux's bictcp_update caps cnt at 20 while no loss has set last_max_cwnd (after a HyStart exit):
    # congestion avoidance then adds at least acked/20 per ACK; the RFC 9438 curve from K = 0 adds ~nothing.
    from hfcprov.sim.tcp_cubic import CubicWindow

    def grow(floor, lost=False):
        w = CubicWindow(cwnd=100.0, ssthresh=100.0, floor_until_loss=floor)
        if lost:
            w.on_loss(0.0)
            w.ssthresh = w.cwnd = 100.0
        w.on_ack(1.0, 1.0, 0.05)
        return w.cwnd - 100.0

    assert grow(False) < 0.01 and grow(True) == pytest.approx(1 / 20)
    assert grow(True, lost=True) < 0.01  # after a loss the curve alone decides again


def test_the_scenario_option_reaches_cubic():
    sc = Scenario(rate=10e6, buffer=262144, rtt=0.04, duration=1, tcp=TcpOptions(variant="cubic", cubic_linux_floor=True))
    assert Network(sc).senders[0].cc.w.floor_until_loss is True
    assert Network(sc.replace(tcp=TcpOptions(variant="cubic"))).senders[0].cc.w.floor_until_loss is False
