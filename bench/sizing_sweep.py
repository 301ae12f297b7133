"""The buffer each README-campaign tier needs, found on a fine ladder: the check behind docs/sizing.md.

Runs examples/buffer-sweep.yaml's own simulator scenarios (``lab.backends.sim_scenario``: its traffic,
VoIP call, warm-up, seeds) at buffers from 4 KiB in 2 KiB steps to 48 KiB, then 4 KiB steps to 128 KiB,
plus 256 KiB, and prints per tier the smallest size keeping 95% of the best median goodput, beside the
sizing rule's sum (``queue.sizing.rule_bytes``: fluid share + 3 packets, + rate x the MAC's access delay) before
it goes on the ladder. About 3 CPU minutes per model.

    nice -n 10 .venv/bin/python bench/sizing_sweep.py --cc cubic --mac docsis
    nice -n 10 .venv/bin/python bench/sizing_sweep.py --cc cubic --mac tokenbucket
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hfcprov.lab import backends  # noqa: E402
from hfcprov.lab.spec import load_campaign  # noqa: E402
from hfcprov.queue.inputs import SizingInputs  # noqa: E402
from hfcprov.queue.sizing import THROUGHPUT_SHARE, rule_bytes  # noqa: E402

KiB = 1024
SIZES = [k * KiB for k in range(4, 48, 2)] + [k * KiB for k in range(48, 132, 4)] + [256 * KiB]
CAMPAIGN = Path(__file__).resolve().parent.parent / "examples" / "buffer-sweep.yaml"


def _run(job):
    key, scenario, voice = job
    return key, backends.simulate(scenario, voice).goodput_bps


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cc", default="cubic")
    ap.add_argument("--mac", default="docsis", choices=("docsis", "tokenbucket"))
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    camp = load_campaign(CAMPAIGN)
    jobs = []
    for p in camp.points():
        if p.buffer != camp.points()[0].buffer:
            continue  # one point per (tier, rtt, rep); the sizes come from SIZES
        for b in SIZES:
            q = dataclasses.replace(p, buffer=b, congestion_control=args.cc, mac=args.mac)
            jobs.append(((p.upstream_rate, p.rtt, p.rep, b), backends.sim_scenario(camp, q), camp.traffic.voip))
    with Pool(args.jobs) as pool:
        res = dict(pool.map(_run, jobs, chunksize=8))
    reps = sorted({k[2] for k in res})
    print(f"{args.cc} through {args.mac}: smallest size keeping {THROUGHPUT_SHARE:.0%} of the best (median of "
          f"{len(reps)} seeds) and the rule's sum before the ladder")
    for rtt in sorted({k[1] for k in res}):
        for rate in sorted({k[0] for k in res}):
            med = {b: statistics.median(res[(rate, rtt, r, b)] for r in reps) for b in SIZES}
            best = max(med.values())
            need = next(b for b in SIZES if med[b] >= THROUGHPUT_SHARE * best)
            rule = rule_bytes(SizingInputs(rate, rtt, 1, args.cc, args.mac))
            print(f"{rate / 1e6:>4g} Mb/s {rtt * 1e3:>4.0f} ms  simulator {need // KiB:>3} KiB  rule {rule / KiB:>5.1f} KiB  "
                  + " ".join(f"{b // KiB}:{med[b] / best:.2f}" for b in SIZES if b <= 2 * need))
    return 0


if __name__ == "__main__":
    sys.exit(main())
