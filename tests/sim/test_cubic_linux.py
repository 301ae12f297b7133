"""CUBIC in Linux's integer arithmetic (TcpOptions.cubic_arithmetic) against RFC 9438's exact curve."""

from __future__ import annotations

import pytest

from hfcprov.sim import LossSpec, Scenario, TcpOptions, run
from hfcprov.sim.cc import congestion_control
from hfcprov.sim.tcp_cubic import Cubic, LinuxCubic, Ns3Cubic

MSS = 1448


class Clock:
    now = 0.0


class Sender:
    """What a congestion control reads of its sender."""

    def __init__(self, cwnd_segments: int) -> None:
        self.mss = MSS
        self.cwnd = float(cwnd_segments * MSS)
        self.ssthresh = 20.0 * MSS  # congestion avoidance from the start
        self.engine = Clock()
        self.srtt = self.min_rtt = 0.02

    def flight_bytes(self) -> float:
        return self.cwnd


def after_a_loss(cc, rtts: int, rtt: float = 0.02) -> list[float]:
    """A loss at 40 segments, recovery ends at ssthresh, then one ACK per segment for ``rtts``
    round trips (no delayed ACKs): cwnd in segments at the end of each round trip."""
    s = Sender(40)
    cc.on_ack(s, 1, rtt)  # the epoch before the loss
    s.ssthresh = cc.ssthresh(s)
    cc.on_recovery_exit(s)
    out = []
    for _ in range(rtts):
        n = int(s.cwnd // MSS)
        for _ in range(n):
            s.engine.now += rtt / n
            cc.on_ack(s, 1, rtt)
        out.append(s.cwnd / MSS)
    return out


def test_the_option_selects_the_kernel_arithmetic():
    assert type(congestion_control("cubic", TcpOptions(variant="cubic"))) is Cubic
    assert type(congestion_control("cubic", TcpOptions(variant="cubic", cubic_arithmetic="linux"))) is LinuxCubic
    assert type(congestion_control("cubic", TcpOptions(variant="cubic", cubic_arithmetic="ns3"))) is Ns3Cubic


def test_linux_follows_the_reno_friendly_estimate_a_step_behind_in_whole_segments():
    rfc = after_a_loss(congestion_control("cubic", TcpOptions(variant="cubic")), 30)
    linux = after_a_loss(congestion_control("cubic", TcpOptions(variant="cubic", cubic_arithmetic="linux")), 30)
    assert linux[0] >= 28 and all(w == int(w) for w in linux)  # 40 * 717 / 1024 = 28, whole segments
    # RFC 9438: ~0.53 segments per RTT from 28 (the cubic term is flat here: K = 3.1 s)
    assert rfc[-1] - 28 == pytest.approx(30 * 0.53, abs=1.5)
    # Linux: the same slope, but its estimate counts whole segments and cnt waits up to HZ/32 (28 ms)
    # while cwnd holds, so cwnd trails the curve by most of a segment (at 1% loss, a window of ~12)
    lag = [r - w for r, w in zip(rfc, linux)]
    assert all(d > -0.6 for d in lag) and 0.5 <= sum(lag) / len(lag) <= 1.5
    assert linux[-1] - linux[9] == pytest.approx(rfc[-1] - rfc[9], abs=1.5)


def test_frequent_losses_cost_linux_cubic_more_goodput():
    # 50 Mb/s, 20 ms, 1% random loss: Reno-friendly territory, where the two arithmetics part most
    # (kernel CUBIC through the emulated modem: 5.7-5.8 Mb/s, docs/sim.md)
    def goodput(linux: bool) -> float:
        sc = Scenario(rate=50e6, buffer=256 * 1024, rtt=0.02, duration=20, warmup=2, sample_interval=None,
                      tcp=TcpOptions(variant="cubic", cubic_arithmetic="linux" if linux else "rfc9438",
                                     recovery="rack", min_rto=0.2,
                                     rto_rule="linux", delack_timeout=0.04, count_acked=True),
                      data_loss=LossSpec("bernoulli", 0.01))
        return run(sc).goodput_bps

    assert goodput(True) < 0.93 * goodput(False)


def test_ns3s_port_has_no_tick_hold_so_it_trails_less_than_the_kernel():
    rfc = after_a_loss(congestion_control("cubic", TcpOptions(variant="cubic")), 30)
    ns3 = after_a_loss(congestion_control("cubic", TcpOptions(variant="cubic", cubic_arithmetic="ns3")), 30)
    linux = after_a_loss(congestion_control("cubic", TcpOptions(variant="cubic", cubic_arithmetic="linux")), 30)
    assert all(w == int(w) for w in ns3)
    lag = {name: sum(r - w for r, w in zip(rfc, wins)) / len(rfc) for name, wins in (("ns3", ns3), ("linux", linux))}
    assert 0 < lag["ns3"] < lag["linux"]


def test_an_unknown_arithmetic_is_named():
    from hfcprov.sim import ScenarioError

    with pytest.raises(ScenarioError, match=r"tcp\.cubic_arithmetic: 'bsd' is not one of rfc9438, linux, ns3"):
        Scenario.from_dict({"rate": "10M", "buffer": "64KiB", "tcp": {"cubic_arithmetic": "bsd"}}, source="f.yaml")
