"""PRR (RFC 9937) and RACK-TLP (RFC 8985): what leaves in recovery, and losses found without the RTO."""

from __future__ import annotations

import pytest

from hfcprov.sim import TcpOptions
from hfcprov.sim.recovery import Prr, Rack, wants_sack
from hfcprov.sim.tcp import TcpReceiver
from tests.sim.test_tcp import path

MSS = 1460


def recovery_sends(recovery: str):
    """One loss in a ~30-segment window below the 34-segment BDP (10 Mb/s, 40 ms): the segments the
    sender puts out from the fast retransmit to the end of recovery, with their times."""
    opts = TcpOptions(variant="sack", recovery=recovery, initial_ssthresh=30 * MSS, delayed_ack=False)
    eng, s, _r, fwd, _ = path(opts, 2_000_000, drop={400})
    exit_state = {}

    def watch(_=None):
        if s.in_rec:
            exit_state["seen"] = True
        elif exit_state.get("seen") and "cwnd" not in exit_state:
            exit_state.update(cwnd=s.cwnd, ssthresh=s.ssthresh, pipe=s.nxt - s.una - s.rec.sacked() - s.rec.lost_n)
        if eng.now < 5:
            eng.at(eng.now + 0.0005, watch)

    eng.at(0.0, watch)
    eng.run(30)
    t0 = next(t for t, seq, retx in fwd.log if retx and seq == 400)
    rtt = 0.04
    sent = [(t - t0, seq) for t, seq, retx in fwd.log if t0 < t <= t0 + rtt and not retx]
    return s, sent, exit_state


def test_prr_spreads_the_window_reduction_over_the_recovery_round_trip():
    sack, sack_sent, _ = recovery_sends("sack")
    prr, prr_sent, prr_exit = recovery_sends("prr")
    assert sack.fast_retransmits == prr.fast_retransmits == 1 and sack.timeouts == prr.timeouts == 0
    # RFC 6675 drops cwnd to ssthresh at once: silence until pipe falls below it, half a round trip
    assert not [t for t, _ in sack_sent if t < 0.015]
    # PRR sends ~ssthresh/RecoverFS (one half) of what each ACK delivers from the first ACK on
    early = [t for t, _ in prr_sent if t < 0.015]
    assert 4 <= len(early) <= 10
    # both send about ssthresh in the round trip, and PRR ends with cwnd = ssthresh, the flight there too
    assert abs(len(prr_sent) - len(sack_sent)) <= 2
    assert prr_exit["cwnd"] == prr_exit["ssthresh"]
    assert abs(prr_exit["pipe"] * MSS - prr_exit["ssthresh"]) <= 2 * MSS


def test_prr_and_rack_are_sack_strategies_the_receiver_answers():
    for name in ("prr", "rack"):
        assert wants_sack(name)
        assert TcpReceiver(None, 0, None, TcpOptions(variant="sack", recovery=name)).sack
    assert not wants_sack("newreno") and not wants_sack("no-such")


@pytest.mark.parametrize("recovery,timeouts", [("sack", 1), ("prr", 1), ("rack", 0)])
def test_a_lost_last_segment_is_repaired_by_the_tail_loss_probe(recovery, timeouts):
    # nothing follows the last segment, so no SACK can reveal its loss: RFC 6675 waits for the
    # RTO (1 s minimum); RACK-TLP resends it 2 srtt after the last ACK
    opts = TcpOptions(variant="sack", recovery=recovery)
    eng, s, _r, fwd, _ = path(opts, 100 * MSS, drop={99})
    eng.run(30)
    assert s.done_at is not None and s.timeouts == timeouts
    resent = next(t for t, seq, retx in fwd.log if retx and seq == 99)
    last_ack = max(t for t, seq, retx in fwd.log if seq == 98 and not retx) + 0.04
    if recovery == "rack":
        assert s.rec.probes == 1
        assert resent - last_ack == pytest.approx(2 * s.srtt, abs=0.01)  # PTO = 2 srtt
        assert s.done_at < 0.6
    else:
        assert resent - last_ack > 0.9


@pytest.mark.parametrize("recovery,timeouts,fast", [("sack", 1, 0), ("rack", 0, 1)])
def test_rack_finds_a_loss_fewer_than_dupthresh_segments_from_the_end(recovery, timeouts, fast):
    # two segments follow the hole: two SACKs, one short of dupthresh. RACK deems it lost a quarter
    # of the minimum RTT after the first SACK (its reordering window) and recovers without the RTO
    opts = TcpOptions(variant="sack", recovery=recovery, delayed_ack=False)
    eng, s, _r, fwd, _ = path(opts, 100 * MSS, drop={97})
    first_sack = []
    on_sack = s.rec.on_sack

    def record(sender, blocks):
        first_sack.append(eng.now)
        return on_sack(sender, blocks)

    s.rec.on_sack = record
    eng.run(30)
    assert (s.timeouts, s.fast_retransmits) == (timeouts, fast) and s.done_at is not None
    if recovery == "rack":
        resent = next(t for t, seq, retx in fwd.log if retx and seq == 97)
        assert resent - first_sack[0] == pytest.approx(s.min_rtt / 4)


def test_rack_deems_every_hole_below_the_highest_sacked_segment_lost_in_recovery():
    # two holes 20 segments apart; once the first has started recovery, RFC 6675's IsLost waits for
    # three SACKed segments above the second, RACK resends it as soon as one above it is SACKed
    # (both with PRR, so only the detection differs)
    times = {}
    for recovery in ("prr", "rack"):
        opts = TcpOptions(variant="sack", recovery=recovery, delayed_ack=False)
        eng, s, _r, fwd, _ = path(opts, 1_000_000, drop={100, 120})
        eng.run(30)
        assert s.timeouts == 0 and s.fast_retransmits == 1
        sent = next(t for t, seq, retx in fwd.log if seq == 120 and not retx)
        times[recovery] = next(t for t, seq, retx in fwd.log if retx and seq == 120) - sent
    assert times["prr"] - times["rack"] == pytest.approx(2 * (MSS + 40) * 8 / 10e6, rel=0.01)  # two segment times


def test_one_probe_then_the_rto_when_no_ack_comes_back():
    # the path goes dead at segment 50 for three seconds (every data packet lost, resent or not):
    # one probe of new data (cwnd does not hold it back), then the RTO and its back-off, no more probes
    opts = TcpOptions(variant="sack", recovery="rack")
    eng, s, _r, fwd, _ = path(opts, 200 * MSS)
    inner = fwd.send
    dead = []  # (probes sent so far, seq, resent) of every packet the dead path ate

    def send(pkt):
        if pkt.kind == 0 and pkt.seq >= 50 and eng.now < 3:
            dead.append((s.rec.probes, pkt.seq, pkt.retx))
            return True
        return inner(pkt)

    fwd.send = send
    eng.run(30)
    assert dead[-1][0] == 1 and s.timeouts >= 2 and s.done_at is not None
    probe = next(d for d in dead if d[0] == 1)
    assert probe[2] is False and probe[1] > max(seq for n, seq, _ in dead if n == 0)  # the next new segment
    assert isinstance(s.rec, Rack) and isinstance(s.rec, Prr)
