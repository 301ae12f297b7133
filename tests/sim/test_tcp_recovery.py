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
