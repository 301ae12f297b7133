#!/usr/bin/env python3
"""Fingerprint of the simulator's results: one hash per scenario over a mixed set, and one for all.

A change that should not move any result (a refactor, a speed-up, a new option that is off by
default) must leave every line the same. Run it before and after and compare the output:

    .venv/bin/python bench/sim_fingerprint.py > before.txt      # on the old commit
    .venv/bin/python bench/sim_fingerprint.py > after.txt
    diff before.txt after.txt                                   # empty: no result moved

The set: every TCP variant and recovery (Reno, NewReno, SACK, CUBIC with HyStart and the
Linux-matched options, FAST, Prague), plant loss on data and ACKs (Bernoulli, Gilbert), timeouts,
finite transfers, segment trains, the request-grant MAC, the CMTS downstream, DOCSIS-PIE, LLD, a
voice call, the shipped example scenarios, and with ``--grids`` the hfcprov side of
``bench/sim.py``'s two ns-3 grids (66 cases, ~10 CPU s more). A hash covers goodput per flow,
retransmissions, timeouts, drops, plant and ACK losses, queue delay, probe latencies and events,
printed to 12 significant digits (repr-exact floats would also catch last-bit noise that no
figure shows).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hfcprov.sim import FlowSpec, LossSpec, Scenario, TcpOptions, run  # noqa: E402
from hfcprov.sim.sweep import load_scenario  # noqa: E402

LINUX = {"mss": 1448, "header_bytes": 52, "min_rto": 0.2, "rto_rule": "linux", "delack_timeout": 0.04,
         "count_acked": True, "cubic_linux_floor": True}
NS3 = {"ssthresh_from": "pipe", "integer_cwnd": True, "grow_on_recovery_exit": True, "limited_transmit": True}


def scenarios() -> dict[str, Scenario]:
    def sc(**kw) -> Scenario:
        base = {"rate": 10e6, "buffer": 64 * 1024, "rtt": 0.04, "duration": 20.0, "warmup": 2.0, "probe_rate": 10,
                "sample_interval": None}
        return Scenario(**{**base, **kw})

    bern = LossSpec("bernoulli", 0.01)
    out = {
        "reno": sc(tcp=TcpOptions(variant="reno")),
        "newreno-loss": sc(tcp=TcpOptions(variant="newreno"), data_loss=bern),
        "sack-loss-acks": sc(tcp=TcpOptions(variant="sack"), data_loss=bern, ack_loss=LossSpec("bernoulli", 0.05)),
        "sack-gilbert": sc(tcp=TcpOptions(variant="sack"), data_loss=LossSpec("gilbert", 0.02, 3)),
        "cubic-4flows": sc(flows=[FlowSpec() for _ in range(4)], tcp=TcpOptions(variant="cubic")),
        "cubic-linux-loss": sc(rate=50e6, buffer=256 * 1024, rtt=0.02, tcp=TcpOptions(variant="cubic", **LINUX),
                               data_loss=LossSpec("bernoulli", 0.001), ack_loss=LossSpec("bernoulli", 0.001)),
        "sack-linux-loss": sc(rate=50e6, buffer=256 * 1024, rtt=0.02, tcp=TcpOptions(variant="sack", **LINUX),
                              data_loss=LossSpec("bernoulli", 0.001), ack_loss=LossSpec("bernoulli", 0.001)),
        "sack-ns3": sc(rate=2e6, buffer=16384, tcp=TcpOptions(variant="sack", **NS3)),
        "coarse-timeouts": sc(rate=2e6, buffer=8192, tcp=TcpOptions(variant="reno", timer_granularity=0.5,
                                                                        min_rto=2.0), data_loss=LossSpec("bernoulli", 0.03)),
        "transfers": sc(flows=[FlowSpec(start=0.5, size=3_000_000), FlowSpec(start=1.0, size=500_000, variant="cubic")]),
        "fast": sc(rate=3e6, buffer=None, tcp=TcpOptions(variant="fast")),
        "tso-1g": sc(rate=1e9, buffer=2_500_000, rtt=0.02, duration=3.0, warmup=1.0,
                     tcp=TcpOptions(variant="cubic", tso=44), data_loss=LossSpec("bernoulli", 1e-5)),
        "docsis-mac": sc(rate=5e6, buffer=128 * 1024, mac="docsis", tcp=TcpOptions(variant="cubic")),
        "cmts-down": sc(rate=20e6, buffer=256 * 1024, direction="downstream", mac="cmts"),
        "pie": sc(aqm="docsis-pie", buffer=256 * 1024, flows=[FlowSpec(), FlowSpec()], tcp=TcpOptions(variant="cubic")),
        "lld-prague": sc(rate=50e6, rtt=0.02, aqm="lld", buffer=256 * 1024,
                         flows=[FlowSpec(variant="prague"), FlowSpec(variant="cubic")]),
    }
    for path in sorted((ROOT / "examples").glob("sim-*.yaml")):
        if path.name != "sim-sweep.yaml":
            out[f"example:{path.stem}"] = load_scenario(path)
    return out


def digest(r) -> str:
    fields = [r.goodput_bps, r.extra.get("queue_drops"), r.extra.get("plant_losses"), r.extra.get("ack_losses"),
              r.extra.get("queue_delay_mean"), r.extra.get("events"), r.latency_loaded.p50, r.latency_loaded.p99,
              r.latency_idle.p50, r.mos]
    for f in r.flows:
        fields += [f.goodput_bps, f.retransmissions, f.timeouts, f.completion_time]
    text = ",".join(f"{x:.12g}" if isinstance(x, float) else repr(x) for x in fields)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grids", action="store_true", help="also bench/sim.py's 18- and 48-case grids (hfcprov side)")
    args = ap.parse_args()
    total = hashlib.sha256()
    for name, sc in scenarios().items():
        h = digest(run(sc))
        total.update(h.encode())
        print(f"{name:<36} {h}")
    if args.grids:
        sys.path.insert(0, str(ROOT / "bench"))
        import sim as ns3bench

        for label, cases, kw in (("grid18", ns3bench.GRID, {"duration": 60.0}),
                                 ("grid48", ns3bench.ISSUE15_GRID, {"duration": 40.0, "warmup": 10.0})):
            rows = ns3bench.run_hfc(cases, **kw)
            text = ";".join(",".join(f"{v:.12g}" if isinstance(v, float) else repr(v) for k, v in sorted(row.items())
                                     if k != "cpu_s") for row in rows)
            h = hashlib.sha256(text.encode()).hexdigest()[:16]
            total.update(h.encode())
            print(f"{label:<36} {h}")
    print(f"{'all':<36} {total.hexdigest()[:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
