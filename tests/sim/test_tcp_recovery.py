"""Recovery strategies (hfcprov.sim.recovery): chosen by name, pluggable, and clean after use."""

from __future__ import annotations

import pytest

from hfcprov.sim import Scenario, ScenarioError, TcpOptions, run
from hfcprov.sim.recovery import RECOVERIES, NewReno, Reno, Sack
from tests.sim.test_tcp import path


@pytest.mark.parametrize("opts,cls", [
    (TcpOptions(variant="reno"), Reno),
    (TcpOptions(variant="newreno"), NewReno),
    (TcpOptions(variant="sack"), Sack),
    (TcpOptions(variant="cubic"), Sack),  # the recovery follows the variant unless named
    (TcpOptions(variant="cubic", recovery="newreno"), NewReno),
])
def test_the_sender_gets_the_strategy_its_options_name(opts, cls):
    _eng, s, *_ = path(opts, 100_000)
    assert type(s.rec) is cls


def test_an_unknown_recovery_is_a_scenario_error_naming_the_key():
    sc = Scenario(rate=10e6, buffer=65536, duration=1, tcp=TcpOptions(recovery="fack"))
    with pytest.raises(ScenarioError, match=r"tcp\.recovery: unknown recovery 'fack' \(known: reno, newreno, sack, prr, rack"):
        run(sc)


def test_a_registered_strategy_drives_the_sender(monkeypatch):
    class CountingNewReno(NewReno):
        partial = 0

        def on_partial_ack(self, s, ack, acked):
            CountingNewReno.partial += 1
            return super().on_partial_ack(s, ack, acked)

    monkeypatch.setitem(RECOVERIES, "newreno", CountingNewReno)
    eng, s, *_ = path(TcpOptions(variant="newreno"), 1_000_000, drop={100, 104, 109})
    eng.run(30)
    assert CountingNewReno.partial == 2  # three holes: two partial ACKs, then the full one
    assert (s.fast_retransmits, s.timeouts, s.retransmissions) == (1, 0, 3)


def test_sack_scoreboard_is_empty_once_every_hole_is_repaired():
    eng, s, *_ = path(TcpOptions(variant="sack"), 1_000_000, drop={100, 104, 109, 300})
    eng.run(30)
    rec = s.rec
    assert s.done_at is not None and s.fast_retransmits == 2
    assert (rec.holding, rec.lost_n, rec.sacked(), rec.state) == (False, 0, 0, {})


def test_a_loss_never_raises_renos_window_above_cwnd():
    """RFC 5681 eq. 4 halves FlightSize; with SACK it counts what the receiver holds, and a recovery entered
    as the last one ends can see twice the window in flight: ssthresh stays at most cwnd."""
    from types import SimpleNamespace

    from hfcprov.sim.cc import Reno as RenoWindow

    reno = RenoWindow()
    mss = 1448

    def state(cwnd, flight):
        return SimpleNamespace(mss=mss, cwnd=cwnd * mss, flight_bytes=lambda: flight * mss)

    assert reno.ssthresh(state(40, 40)) == 20 * mss  # the usual halving
    assert reno.ssthresh(state(40, 120)) == 40 * mss  # not 60: no loss grows the window
    assert reno.ssthresh(state(1, 1)) == 2 * mss  # the floor


def test_linux_matched_reno_with_sack_under_docsis_pie_keeps_its_rate():
    """Issue 28's case (2 Mb/s, 64 KiB, 40 ms, one upload, DOCSIS-PIE on the request-grant MAC) with the
    Linux-matched Reno (count_acked, SACK): ssthresh from a SACK FlightSize above cwnd chained into a window
    without bound, 2,320 queue drops, 8 timeouts, 1.00 Mb/s and 139 ms of queue; with the cap 252 drops,
    no timeout, 1.91 Mb/s at 33 ms (docsis-ns3: 1.82-2.03 Mb/s at 17-31 ms)."""
    sc = Scenario.from_dict({"rate": "2M", "buffer": "64KiB", "rtt": "40ms", "duration": "20s", "warmup": "5s",
                             "mac": "docsis", "aqm": "docsis-pie",
                             "tcp": {"variant": "reno", "count_acked": True, "recovery": "sack"}})
    r = run(sc)
    assert r.extra["timeouts"] == 0 and r.extra["queue_drops"] < 600
    assert r.goodput_bps > 0.9 * 2e6 and r.extra["queue_delay_mean"] < 0.05


def test_timeouts_under_docsis_pie_do_not_burst_a_window_into_the_modem():
    """Table 2's 2 Mb/s case (bench/docsis_ns3.py: 64 KiB, 40 ms, one upload, DOCSIS-PIE on the DOCSIS 3.1
    request-grant MAC) with Linux's growth, SACK and no lost-retransmission detection, as docsis-ns3's
    hosts: a PIE drop of a retransmission ends in an RTO over a window of SACKed data. When the ACK of the
    RTO's resend credited those segments again, cwnd went from one segment to tens in one ACK and the
    burst filled the buffer: p99 upstream latency 129-206 ms over seeds 1-4 (docsis-ns3: 71-73 ms); the
    segments newly delivered only: 70-74 ms."""
    sc = Scenario.from_dict({"rate": "2M", "buffer": "64KiB", "rtt": "40ms", "duration": "40s", "warmup": "10s",
                             "mac": "docsis", "aqm": "docsis-pie",
                             "tcp": {"variant": "sack", "count_acked": True, "detect_lost_retransmit": False,
                                     "min_rto": "1s"}})
    r = run(sc)
    assert r.extra["timeouts"] >= 1  # the case the test is about happened
    assert r.extra["mac"]["upstream_latency"]["p99"] < 0.1
