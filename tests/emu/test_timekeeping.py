"""The emulated plant's own account of its timing, and the verdict a measurement takes from it.

Without root: a stage released late counts the sending time it lost (on a virtual clock), the
delay line's counters, and the verdict. With root: a lab's delay line runs SCHED_FIFO, says it is
ready, answers its counters over its control socket and counts every packet it carries; a
measurement runs the emulated hosts SCHED_FIFO and carries the account in its result.
"""

from __future__ import annotations

import pytest

from hfcprov.emu import timekeeping
from hfcprov.emu.aqmstage import AqmStage
from hfcprov.emu.timekeeping import Timekeeping, verdict
from tests.emu.test_aqmstage import ipv4
from tests.support import require_tool


def _backlogged(stage: AqmStage, n: int = 50) -> None:
    for _ in range(n):
        stage.offer(ipv4(0, payload=b"x" * 972), 0.0)  # 1000-byte packets, all at t = 0


def test_a_stage_released_on_time_loses_nothing():
    stage = AqmStage("droptail", 8e6, 1_000_000, burst=3000)
    _backlogged(stage)
    for step in range(300):  # every 0.1 ms for 30 ms: never later than the bucket's 2,000 bytes of slack
        stage.release(step * 1e-4)
    tk = stage.timekeeping()
    assert stage.sent == 32  # 3 on the burst, then one per millisecond
    assert tk["lost_bytes"] == 0.0 and tk["backlogged_s"] == pytest.approx(0.0299)


def test_a_stage_released_late_counts_the_sending_time_it_lost():
    stage = AqmStage("droptail", 8e6, 1_000_000, burst=3000, name="24[0]")  # 1 byte per microsecond
    _backlogged(stage)
    stage.release(0.0)  # three packets leave on the burst
    stage.release(0.010)  # woken 10 ms late: 10,000 bytes of tokens, the bucket holds 3,000
    tk = stage.timekeeping()
    assert tk["flow"] == "24[0]" and tk["rate_bps"] == 8e6
    assert tk["lost_bytes"] == pytest.approx(7000, abs=1)  # 7 ms of sending time went by unused
    assert stage.sent == 6  # what it could send from the full bucket, no more


def test_the_delay_line_counts_late_packets_and_reports_the_worst_once():
    clock = Timekeeping("fifo 10")
    for lateness in (0.0, 0.0002, 0.004, 0.0015):
        clock.written(lateness)
    d = clock.as_dict()
    assert (d["packets"], d["late"], d["worst_late_s"], d["scheduling"]) == (4, 2, 0.004, "fifo 10")
    assert d["late_seconds"] == pytest.approx(0.0055)
    assert clock.as_dict()["worst_late_s"] == 0.0  # worst since the previous answer


def _account(packets, late, late_seconds=0.0, lost=0.0, busy=0.0):
    return {"scheduling": "fifo 10", "packets": packets, "late": late, "late_seconds": late_seconds,
            "worst_late_s": 0.012, "refused": 0,
            "stages": [{"flow": "24[0]", "rate_bps": 8e6, "backlogged_s": busy, "lost_bytes": lost}]}


def test_the_verdict_fails_a_plant_that_fell_behind_and_says_how():
    start = _account(1000, 0)
    ok = verdict(start, _account(11000, 50, 0.1, lost=5000, busy=8.0))  # 0.5 % late, 0.06 % lost
    assert ok["ok"] and ok["packets"] == 10000 and ok["late_share"] == 0.005 and "why" not in ok
    late = verdict(start, _account(11000, 500, 1.5))
    assert not late["ok"]
    assert late["why"] == ["500 of 10000 packets left the delay line more than 1 ms late (mean 3.0 ms, worst 12.0 ms)"]
    starved = verdict(start, _account(11000, 0, lost=160_000, busy=8.0))  # 2 % of 8 s at 1 MB/s
    assert not starved["ok"] and starved["stages"][0]["lost_share"] == pytest.approx(0.02)
    assert starved["why"] == ["the AQM stage of 24[0] lost 2.0% of its sending time to late wake-ups"]


# -- root: a lab's delay line ---------------------------------------------------------------------
@pytest.mark.root
def test_a_labs_delay_line_runs_fifo_and_answers_its_account(lab_factory):
    import os

    from hfcprov.emu import netns, topology

    lab = lab_factory(rtt=0.02)
    if lab.caps.delay_method != "tun-delayline":
        pytest.skip("the kernel has netem: no delay line here")
    first = lab.timekeeping()
    assert first["scheduling"] == "fifo 10" and first["stages"] == []
    ping = require_tool("ping", "iputils-ping")
    netns.run([ping, "-c", "3", "-i", "0.2", "-W", "2", topology.ADDR["srv"]], ns=lab.ns("cpe"))
    second = lab.timekeeping()
    assert second["packets"] - first["packets"] == 6  # each echo and its reply cross the line once
    v = verdict(first, second)
    assert v["packets"] == 6 and v["scheduling"] == "fifo 10"
    pid = lab.pids["delayline"]
    assert os.sched_getscheduler(pid) == os.SCHED_FIFO and os.sched_getparam(pid).sched_priority == 10


@pytest.mark.root
@pytest.mark.slow
def test_a_measurement_runs_the_hosts_fifo_and_carries_the_account(lab_factory):
    from hfcprov.emu import shaping
    from hfcprov.emu.measure import measure
    from hfcprov.probe.run import ProbeSpec
    from hfcprov.sim.upload import tier_flow

    lab = lab_factory(rtt=0.02)
    lab.apply([shaping.plan(tier_flow(2e6, 16384))])
    r = measure(lab, ProbeSpec(target=None, flows=1, duration=2.0, warmup=1.0, idle=0.5, cc="reno",
                               adaptive_warmup=0.0))
    assert r.extra["host_scheduling"] == f"fifo {timekeeping.HOST_PRIORITY}"
    if lab.caps.delay_method == "tun-delayline":
        tk = r.extra["timekeeping"]
        assert tk["ok"] and tk["packets"] > 500  # 3.5 s of a 2 Mb/s upload and its ACKs


@pytest.mark.root
def test_a_measurement_the_plant_fell_behind_in_is_taken_again_then_fails_naming_why(lab_factory):
    from hfcprov.emu.measure import measure
    from hfcprov.emu.timekeeping import FellBehind
    from hfcprov.probe.run import ProbeSpec

    lab = lab_factory(rtt=0.02)
    spec = ProbeSpec(target=None, flows=0, duration=0.5, warmup=0.0, idle=0.2)
    # each measurement, the delay line's account: before, after; 5 % of its packets late, then none
    accounts = iter([_account(1000, 0), _account(3000, 100, 0.5), _account(3000, 100, 0.5), _account(5000, 100, 0.5)])
    lab.timekeeping = lambda: next(accounts)
    r = measure(lab, spec)  # the first is thrown away, the second kept
    assert r.extra["timekeeping"]["attempts"] == 2 and r.extra["timekeeping"]["ok"]
    accounts = iter([_account(1000, 0), _account(3000, 100, 0.5)] * 2)
    with pytest.raises(FellBehind, match=r"could not keep time in 2 measurements .*: 100 of 2000 packets left "
                                         r"the delay line more than 1 ms late \(mean 5.0 ms"):
        measure(lab, spec, attempts=2)
