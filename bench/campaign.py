"""Campaign runner overhead: ``hfcprov campaign run`` against bare ``hfcprov.sim.run_many``, in the same run.

    python bench/campaign.py [--runs 3] [--jobs 2] [--duration 30s] [--dask]

The same White et al. grid (4 rates x 6 buffers x 2 RTTs = 48 points) is run as:

- sim.run_many --jobs N: the simulator's own process-pool runner, results kept in memory (the peer);
- campaign run --jobs N: the lab runner: spec points, SQLite WAL store with a durable
  (synchronous=FULL) commit per point, series stored, resumable;
- campaign run --scheduler (with --dask): the same on a Dask LocalCluster of N worker processes,
  cluster start-up excluded.

Every figure is the median wall time of ``--runs`` runs; the ratio is against the peer.
The stored results are checked to equal the peer's (the wall-clock figures aside).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hfcprov.lab import backends
from hfcprov.lab.runner import results_of, run_campaign
from hfcprov.lab.spec import parse_campaign
from hfcprov.lab.store import Store
from hfcprov.sim import run_many

SPEC = """
name: bench
grid:
  upstream_rate: [1M, 2M, 5M, 10M]
  buffer: [8KiB, 16KiB, 32KiB, 64KiB, 128KiB, 256KiB]
  rtt: [40ms, 100ms]
  congestion_control: newreno
traffic: {{duration: {duration}, warmup: 5s}}
"""


def _plain(r) -> dict:
    d = r.to_dict(series=False)
    d["extra"] = {k: v for k, v in d["extra"].items() if k not in ("wall_s", "cpu_s", "events_per_s")}
    return d


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--duration", default="30s")
    ap.add_argument("--dask", action="store_true")
    args = ap.parse_args()
    camp = parse_campaign(SPEC.format(duration=args.duration))
    points = camp.points()
    scenarios = [backends.sim_scenario(camp, p) for p in points]
    times: dict[str, list[float]] = {}
    peer_results = None
    with tempfile.TemporaryDirectory(prefix="hfcprov-bench-campaign-") as tmp:
        for run in range(args.runs):
            t = time.perf_counter()
            peer_results = run_many(scenarios, jobs=args.jobs)
            times.setdefault(f"sim.run_many --jobs {args.jobs}", []).append(time.perf_counter() - t)

            db = Path(tmp) / f"c{run}.db"
            t = time.perf_counter()
            with Store(db) as store:
                run_campaign(camp, store, jobs=args.jobs)
            times.setdefault(f"campaign run --jobs {args.jobs} (SQLite)", []).append(time.perf_counter() - t)
            with Store(db) as store:
                ours = results_of(store)
            assert all(_plain(ours[p.index]["sim"]) == _plain(r) for p, r in zip(points, peer_results)), \
                "campaign results differ from run_many's"
        if args.dask:
            from distributed import LocalCluster

            with LocalCluster(n_workers=args.jobs, threads_per_worker=1, processes=True,
                              dashboard_address=None, silence_logs=40) as cluster:
                for run in range(args.runs):
                    db = Path(tmp) / f"d{run}.db"
                    t = time.perf_counter()
                    with Store(db) as store:
                        run_campaign(camp, store, scheduler=cluster.scheduler_address)
                    times.setdefault(f"campaign run --scheduler (Dask, {args.jobs} workers)", []).append(
                        time.perf_counter() - t)
    peer = statistics.median(next(iter(times.values())))
    print(f"{len(points)} points, {args.duration} measured + 5 s warm-up each, median of {args.runs} runs\n")
    print(f"{'runner':46} {'median s':>9} {'points/s':>9} {'vs peer':>8}")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:46} {m:9.2f} {len(points) / m:9.1f} {m / peer:7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
