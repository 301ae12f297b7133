"""bench/sim_vs_emu.py kept honest on four points: the simulator and the emulated modem, given the same
service flow, base RTT, buffer and framing, agree on goodput, the loaded p99 and the idle RTT.

10 Mb/s, 16 KiB, 100 ms is the case that caught two differences (docs/sim.md, "Simulator against Linux"):
kernel flows born BBR stayed paced after switching to CUBIC or Reno (kernel +20% goodput), and a Reno
that grows per ACK instead of per segment acked (simulator -15%)."""

from __future__ import annotations

import importlib.util

import pytest

from tests.support import REPO, require_root

pytestmark = pytest.mark.root


def _bench():
    spec = importlib.util.spec_from_file_location("sim_vs_emu", REPO / "bench" / "sim_vs_emu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# (rate, buffer, rtt, goodput tolerance): the issue's 5% at 2 Mb/s; 8% at 10 Mb/s, 16 KiB, 100 ms, where one
# 8 s window of a 16-segment queue at a 83-segment BDP varies by a few per cent run to run (the grid's
# 10 s windows: -2.7% Reno, -4.5% CUBIC; one CI window once +17% CUBIC) and the faults it guards against
# cost 15-20% in every window
@pytest.mark.parametrize(("rate", "buffer", "rtt", "goodput_tol"),
                         [(2e6, 65536, 0.04, 0.05), (10e6, 16384, 0.1, 0.08)])
@pytest.mark.slow
def test_points_agree_within_the_issue_targets(rate, buffer, rtt, goodput_tol):
    require_root("network namespaces and tc")
    from hfcprov.emu import topology

    b = _bench()
    lab = topology.up(rtt=rtt, prefix="hfemu-tsv", docsis_version=b.DOCSIS_VERSION)
    try:
        for cc in ("reno", "cubic"):  # one flow
            takes = []
            for _take in range(2):  # a second take only when the first is off: one outlier window is not a fault
                emu = b.emulate(lab, rate, buffer, 1, cc, duration=8.0, warmup=3.0, adaptive=5.0)
                # the simulator's median of five seeds: at 16 KiB one seed's window can hold a second loss
                # event that the others do not (a queue one packet fuller at the end of the first recovery:
                # seeds 1-10 of the grid's case read 6.73-8.19 Mb/s, median 7.34, the kernel 7.47)
                sims = [b.simulate(rate, buffer, rtt, 1, cc, 8.0, emu.extra["warmup_used"], seed=seed)
                        for seed in range(1, 6)]
                sim = sorted(sims, key=lambda r: r.goodput_bps)[len(sims) // 2]
                err = b.errors(emu, sim)
                takes.append((round(err["goodput"], 3), emu.goodput_bps, emu.extra.get("timekeeping")))
                if abs(err["goodput"]) < goodput_tol:
                    break
            # a fault in either model (the 15-20% ones above) is off in both takes
            assert abs(err["goodput"]) < goodput_tol, (cc, takes)  # the plant's account too
            assert abs(err["lat_p99"]) < b.LATENCY_TARGET, (cc, err)
            assert abs(err["idle_rtt"]) < b.LATENCY_TARGET, (cc, err)
            assert emu.goodput_bps <= rate * 1448 / 1514 * 1.002  # the probe's bound holds here too
    finally:
        lab.down()
