"""bench/sim_vs_emu.py kept honest on two points: the simulator and the emulated modem, given the same
service flow, base RTT, buffer and framing, agree on goodput, the loaded p99 and the idle RTT."""

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


def test_two_points_agree_within_the_issue_targets():
    require_root("network namespaces and tc")
    from hfcprov.emu import topology

    b = _bench()
    lab = topology.up(rtt=0.04, prefix="hfemu-tsv", docsis_version=b.DOCSIS_VERSION)
    try:
        for cc in ("reno", "cubic"):  # 2 Mb/s, 64 KiB, 40 ms, one flow
            emu = b.emulate(lab, 2e6, 65536, 1, cc, duration=8.0, warmup=3.0, adaptive=5.0)
            sim = b.simulate(2e6, 65536, 0.04, 1, cc, 8.0, emu.extra["warmup_used"])
            err = b.errors(emu, sim)
            assert abs(err["goodput"]) < b.GOODPUT_TARGET, (cc, err)
            assert abs(err["lat_p99"]) < b.LATENCY_TARGET, (cc, err)
            assert abs(err["idle_rtt"]) < b.LATENCY_TARGET, (cc, err)
            assert emu.goodput_bps <= 2e6 * 1448 / 1514 * 1.002  # the probe's bound holds here too
    finally:
        lab.down()
