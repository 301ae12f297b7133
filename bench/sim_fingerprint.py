#!/usr/bin/env python3
"""A fingerprint of the simulator's and the AQM stage's results: proof that a refactoring changed no figure.

    nice -n 10 .venv/bin/python bench/sim_fingerprint.py [--out hashes.json] [--compare hashes.json]

Runs, in one process and deterministically (every scenario seeded):

- ``mixed``: 22 scenarios across the simulator's parts: every example scenario file
  (``examples/sim-*.yaml``: DOCSIS-PIE, LLD with Prague and queue protection, the request-grant
  MAC with a voice call, the CMTS downstream, Cohen's losses), Reno/NewReno/SACK/CUBIC/FAST/
  Prague with plant loss and TSO, DOCSIS-PIE in front of the request-grant CM, the Linux-matched
  hosts under plant loss (RACK-TLP, PRR, Linux's CUBIC), a near and a far server with path
  jitter, a config file's
  flow (``examples/buffer-control.cfg`` on a DOCSIS 3.0 and a 3.1 modem) and the upload
  experiment a campaign point and ``buffer advise --model sim`` run;
- ``grid``: the hfcprov side of ``bench/sim.py``'s grids (18 agreement cases and issue 15's 48, 10 s each);
- ``stage``: the emulator's userspace AQM stage (drop-tail, DOCSIS-PIE, dual queue) fed one fixed
  packet schedule on a virtual clock.

Each case hashes its whole result (``RunResult.to_dict()`` with the series, less the wall and CPU
times); the last line is the hash of all of them. ``--out`` keeps the per-case hashes,
``--compare`` names every case that differs from a kept file (exit status 1).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TIMES = ("wall_s", "cpu_s", "events_per_s")  # differ run to run: not part of a result


def digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=repr).encode()).hexdigest()


def result_hash(result) -> str:
    d = result.to_dict(series=True)
    for k in TIMES:
        d["extra"].pop(k, None)
    return digest(d)


def mixed_scenarios() -> list[tuple[str, object]]:
    from hfcprov.sim import FlowSpec, LossSpec, Scenario, TcpOptions
    from hfcprov.sim.fromconfig import scenario_from_config
    from hfcprov.sim.hosts import LINUX
    from hfcprov.sim.sweep import load_scenario
    from hfcprov.sim.upload import tier_flow, upload_scenario

    out = []
    for path in sorted((ROOT / "examples").glob("sim-*.yaml")):
        if path.name != "sim-sweep.yaml":
            out.append((path.stem, load_scenario(path)))
    lossy = LossSpec(model="bernoulli", rate=0.005)
    for variant in ("reno", "sack", "fast"):
        out.append((f"loss-{variant}", Scenario(rate=5e6, buffer=65536, rtt=0.04, duration=12.0, warmup=2.0,
                                                 data_loss=lossy, flows=[FlowSpec(), FlowSpec(start=0.5)],
                                                 tcp=TcpOptions(variant=variant), probe_rate=10, seed=3)))
    out.append(("tso-cubic", Scenario(rate=50e6, buffer=262144, rtt=0.02, duration=8.0, warmup=2.0,
                                      tcp=TcpOptions(variant="cubic", tso=44), probe_rate=10, seed=2)))
    out.append(("pie-docsis-mac", Scenario(rate=10e6, buffer=131072, rtt=0.04, duration=12.0, warmup=3.0,
                                           mac="docsis", aqm="docsis-pie", aqm_params={"latency_target": 0.015},
                                           tcp=TcpOptions(variant="cubic"), probe_rate=10, seed=4)))
    for variant in ("sack", "cubic"):  # the Linux-matched hosts under plant loss: RACK-TLP, PRR, Linux's CUBIC
        out.append((f"linux-loss-{variant}", Scenario(rate=50e6, buffer=262144, rtt=0.02, duration=12.0, warmup=2.0,
                                                      data_loss=LossSpec("bernoulli", 0.002),
                                                      ack_loss=LossSpec("bernoulli", 0.002), overhead=14,
                                                      tcp=TcpOptions(variant=variant, **LINUX), probe_rate=10, seed=6)))
    out.append(("near-far-jitter", Scenario(rate=10e6, buffer=65536, rtt=0.02, duration=12.0, warmup=2.0, jitter=0.0005,
                                            flows=[FlowSpec(), FlowSpec(rtt=0.08)], tcp=TcpOptions(variant="cubic"),
                                            probe_rate=10, seed=7)))
    cfg = ROOT / "examples" / "buffer-control.cfg"
    for version in ("3.0", "3.1"):
        out.append((f"config-{version}", scenario_from_config(cfg, None, ["duration=10s"], version)))
    for aqm in ("none", "docsis-pie", "lld"):
        mac = "docsis" if aqm != "lld" else "tokenbucket"
        out.append((f"upload-{aqm}", upload_scenario(tier_flow(20e6, 65536), rtt=0.04, flows=2,
                                                     congestion_control="cubic", mac=mac, aqm=aqm,
                                                     duration=8.0, warmup=2.0, seed=5)))
    return out


def grid_scenarios() -> list[tuple[str, object]]:
    spec = importlib.util.spec_from_file_location("bench_sim", ROOT / "bench" / "sim.py")
    bench_sim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_sim)
    out = []
    for point in bench_sim.GRID:
        rate, buf, rtt, flows, variant = bench_sim.normalise(point)
        out.append((f"grid {rate:g} {buf} {rtt:g}", bench_sim.scenario(rate, buf, rtt, 10.0)))
    for rate, buf, rtt, flows, variant in bench_sim.ISSUE15_GRID:
        out.append((f"issue15 {rate:g} {buf} {rtt:g} x{flows} {variant}",
                    bench_sim.scenario(rate, buf, rtt, 10.0, flows=flows, variant=variant, sample=bench_sim.SAMPLE)))
    return out


def stage_cases() -> list[tuple[str, str]]:
    """The emulator's AQM stage on a virtual clock: a 30 Mb/s burst of mixed packets into 10 Mb/s."""
    from hfcprov.emu.aqmstage import AqmStage

    out = []
    for kind in ("droptail", "pie", "dualq"):
        rng = random.Random(7)
        stage = AqmStage(kind, 10e6, 65536, seed=1)
        now, log = 0.0, []
        for i in range(20000):
            ecn = 1 if kind == "dualq" and i % 3 == 0 else 0
            size = rng.choice((64, 576, 1500, 1500, 1500))
            pkt = bytes((0x45, ecn)) + bytes(7) + bytes((6,)) + bytes(2) + bytes((10, 0, 0, i % 5)) + bytes(size - 16)
            log.append(stage.offer(pkt, now))
            now += rng.expovariate(30e6 / 8 / 1200)
            if (t := stage.next_time(now)) is not None and t <= now:
                log.append([len(p) for p in stage.release(now)])
        log.append([stage.offered, stage.dropped, stage.marked, stage.sent, stage.sent_bytes, list(stage.waits)])
        out.append((f"stage-{kind}", digest(log)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="write the per-case hashes (JSON) here")
    ap.add_argument("--compare", help="a file --out wrote: name every case that differs")
    args = ap.parse_args()
    from hfcprov.sim import run

    hashes = {}
    c0 = time.process_time()
    for group, cases in (("mixed", mixed_scenarios()), ("grid", grid_scenarios())):
        for name, sc in cases:
            hashes[f"{group}: {name}"] = result_hash(run(sc))
    for name, h in stage_cases():
        hashes[f"stage: {name}"] = h
    cpu = time.process_time() - c0
    counts = {g: sum(1 for k in hashes if k.startswith(g + ":")) for g in ("mixed", "grid", "stage")}
    print(f"{'case':<48} sha256")
    for name, h in hashes.items():
        print(f"{name:<48} {h[:16]}")
    print(f"cases: {counts['mixed']} mixed, {counts['grid']} grid, {counts['stage']} stage; CPU {cpu:.1f} s")
    print(f"fingerprint: {digest(hashes)}")
    if args.out:
        from hfcprov.fileio import atomic_write

        atomic_write(args.out, json.dumps(hashes, indent=1) + "\n")
    if args.compare:
        kept = json.loads(Path(args.compare).read_text())
        differ = [k for k in sorted(set(kept) | set(hashes)) if kept.get(k) != hashes.get(k)]
        for k in differ:
            print(f"differs: {k}")
        print(f"compared with {args.compare}: {len(differ)} of {len(hashes)} differ")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
