"""What a loss halves in the Linux host (issue 28, plant loss): cwnd, as Linux's tcp_reno_ssthresh does
(max(snd_cwnd / 2, 2)), not the flight of whole segments the RFC 5681 rule halves."""

from __future__ import annotations

import pytest

from hfcprov.sim import TcpOptions
from hfcprov.sim.cc import congestion_control
from hfcprov.sim.engine import Engine
from hfcprov.sim.hosts import HOSTS, LINUX
from hfcprov.sim.tcp import TcpSender


def ssthresh_after_a_loss(preset: dict, cwnd: float, outstanding: int) -> float:
    """ssthresh in segments when a Reno sender of ``preset`` with ``cwnd`` segments and ``outstanding``
    segments in flight (none SACKed) meets a loss."""
    opts = TcpOptions(**{"variant": "sack", **preset})
    s = TcpSender(Engine(), 0, None, opts, congestion_control("sack", opts), None)
    s.cwnd, s.una, s.nxt = cwnd * opts.mss, 0, outstanding
    return s.cc.ssthresh(s) / opts.mss


def test_the_linux_host_keeps_the_growth_since_cwnds_last_whole_step():
    # cwnd 11.8 segments, 11 whole ones in flight (the window sends whole segments): half of cwnd, 5.9,
    # where halving the flight gives 5.5 and drops the 0.8 segment congestion avoidance had earned
    assert ssthresh_after_a_loss(LINUX, 11.8, 11) == pytest.approx(5.9)


def test_the_linux_host_halves_cwnd_when_the_flight_is_short():
    # TSO deferral or the application left the flight at 8 of 12: Linux still halves its cwnd
    assert ssthresh_after_a_loss(LINUX, 12.0, 8) == pytest.approx(6.0)


@pytest.mark.parametrize("host", ["ns3", "docsis-ns3"])
def test_the_other_hosts_keep_their_rule(host):
    rule = {"ns3": 5.5, "docsis-ns3": 5.9}[host]  # ns-3's pipe (the flight here); docsis-ns3's TcpDctcp: cwnd
    assert ssthresh_after_a_loss(HOSTS[host], 11.8, 11) == pytest.approx(rule)
