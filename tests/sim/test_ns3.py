"""Opt-in cross-check against ns-3 (HFCPROV_NS3=1; ns-3 lives in its own venv, see bench/sim.py).

NewReno window growth with SACK recovery over a rate-limited drop-tail bottleneck:
goodput and mean queueing delay of ns-3 on a small grid. Issue 6 asks for 5%; with
hfcprov set to ns-3's choices (``hfcprov.sim.hosts.NS3``, as bench/sim.py: pipe
ssthresh, whole-byte cwnd, growth on the recovery-ending ACK) the 18-point grid agrees
within 0.2%, so the test holds it to 2%. The small-buffer 40 ms point is the one that
needed all of them (5.5% off with RFC 5681's FlightSize and no limited transmit).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NS3_PYTHON = os.environ.get("HFCPROV_NS3_PYTHON", "/work/ns3-venv/bin/python")
POINTS = [(2e6, 16384, 0.04), (2e6, 16384, 0.1), (5e6, 65536, 0.04), (10e6, 262144, 0.1)]
# issue 15's grid (bench/sim.py --grid-only: 48 of 48 inside 3% goodput / 10% latency): CUBIC and 10 flows
GRID_POINTS = [(10e6, 65536, 0.04, 1, "cubic"), (2e6, 262144, 0.04, 1, "cubic"), (10e6, 16384, 0.1, 10, "newreno"),
               (2e6, 262144, 0.1, 10, "cubic")]


def _bench_or_skip():
    if os.environ.get("HFCPROV_NS3") != "1":
        pytest.skip("opt-in: set HFCPROV_NS3=1 (needs ns-3 in its own venv: pip install ns3)")
    if not Path(NS3_PYTHON).exists():
        pytest.skip(f"no ns-3 python at {NS3_PYTHON}: python3 -m venv /work/ns3-venv && "
                    "/work/ns3-venv/bin/pip install ns3")
    return _bench()


def _bench():
    spec = importlib.util.spec_from_file_location("hfcprov_bench_sim", REPO / "bench" / "sim.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_goodput_and_queueing_delay_agree_with_ns3_within_2_percent():
    bench = _bench_or_skip()
    ours = bench.run_hfc(POINTS, 30.0)
    theirs = bench.run_ns3(NS3_PYTHON, POINTS, 30.0)
    for point, h, n in zip(POINTS, ours, theirs):
        assert h["goodput_bps"] == pytest.approx(n["goodput_bps"], rel=0.02), point
        assert h["queue_delay_mean"] == pytest.approx(n["queue_delay_mean"], rel=0.02), point


@pytest.mark.slow
def test_cubic_and_ten_flows_agree_with_ns3_on_goodput_and_loaded_latency():
    bench = _bench_or_skip()
    ours = bench.run_hfc(GRID_POINTS, 40.0, 10.0)
    theirs = bench.run_ns3(NS3_PYTHON, GRID_POINTS, 40.0, 10.0)
    for point, h, n in zip(GRID_POINTS, ours, theirs):
        assert h["goodput_bps"] == pytest.approx(n["goodput_bps"], rel=0.03), point
        for key in ("lat_mean", "lat_p50", "lat_p99"):
            assert h[key] == pytest.approx(n[key], rel=0.10), (point, key)
