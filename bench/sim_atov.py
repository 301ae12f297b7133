"""Atov-Kennedy 2006: the FAST alpha each flow needs to fill a 3 Mb/s download, against N flows.

Their Table I (one CM, Cisco uBR7100 CMTS, DOCSIS 1.1, 3 Mb/s down / 512 kb/s up, 100 ms,
1024 ms of shaping buffer): per-flow alpha 13, 22, 12, 9, 9, 8 for N = 1, 2, 4, 6, 8, 10
(total 13, 44, 48, 54, 72, 80); on a simple 3 Mb/s link alpha = 3 (Figs. 3-7).

Four paths, same hosts (Linux 2.6 + Caltech FAST: eq. 1 with integer arithmetic, initial
window 3 as RFC 3390 gives a 1460-byte MSS, 40 ms delayed-ACK timer):

- ``simple``: a 3 Mb/s shaper with 1024 ms of buffer each way (their Dummynet link);
- ``acks``: the same downstream, ACKs up through a DOCSIS 1.1 CM at 512 kb/s (``reverse_mac``);
- ``cmts-1ms``/``cmts-16ms``: the download through the CMTS (``mac: cmts``: Cisco's shaper,
  calendar slots of 1 or 16 ms, the bounds Cisco allows; 64-QAM channel with MPEG framing,
  MAPs, interleaver; max-delay 1024 ms) and the ACKs through the DOCSIS 1.1 CM;
- ``cmts-16ms-nc``: as ``cmts-16ms`` with an ACK CM that does not concatenate (one frame per
  grant) on a 6 ms MAP advance: ~8 ms per request-grant cycle, ~125 bursts/s, the delayed-ACK
  rate of a full 3 Mb/s download (a sensitivity case, not a claim about their CM).

"Full" is 97% of the goodput the rate allows (1460 of each 1518-byte frame), median of the
seeds. Run: ``.venv/bin/python bench/sim_atov.py [--seeds 3] [--duration 60] [--jobs 2]``.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys

from hfcprov.sim import FlowSpec, Scenario, TcpOptions, run_many

RATE, UP, RTT = 3e6, 512e3, 0.1
FULL = 0.97 * RATE * 1460 / 1518
ALPHAS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30)
FLOWS = (1, 2, 4, 6, 8, 10)
PAPER_TABLE_I = {1: 13, 2: 22, 4: 12, 6: 9, 8: 9, 10: 8}  # per-flow alpha, one CM
PAPER_SIMPLE = 3  # "alpha of at least three packets" on the simple link
PATHS = ("simple", "acks", "cmts-1ms", "cmts-16ms", "cmts-16ms-nc")
# The 2006 hosts: Linux 2.6's RFC 3390 initial window (3 x 1460 B) and 40 ms delayed-ACK timer.
HOST_TCP = {"variant": "fast", "initial_window": 3, "delack_timeout": 0.04}


def scenario(path: str, n: int, alpha: float, seed: int = 1, duration: float = 60.0) -> Scenario:
    """One run: ``n`` FAST flows with ``alpha`` downloading over ``path`` (``nc<ms>[x<k>]``: the
    ``cmts-16ms`` path with a non-concatenating ACK CM on a MAP advance of that many ms; with
    ``x<k>`` the flows' ACKs spread over k such CMs on one upstream channel)."""
    sc = Scenario(rate=RATE, buffer=int(RATE * 1.024 / 8), rtt=RTT, direction="downstream",
                  reverse_rate=UP, reverse_buffer=int(UP * 1.024 / 8), duration=duration,
                  warmup=min(20.0, duration / 3), flows=[FlowSpec() for _ in range(n)],
                  sample_interval=None, seed=seed, tcp=TcpOptions(fast_alpha=alpha, **HOST_TCP))
    if path == "simple":
        return sc
    ack_cm = {"preset": "docsis11"}
    if path.endswith("-nc"):  # a CM that sends one frame per grant, on a slower request-grant cycle
        ack_cm.update(concatenation=False, map_advance=0.006)
    if path.startswith("nc"):  # nc<ms>[x<cms>]
        advance, _, cms = path[2:].partition("x")
        ack_cm.update(concatenation=False, map_advance=float(advance) / 1000, cms=int(cms or 1))
        path = "cmts-16ms"
    sc = sc.replace(reverse_mac="docsis", reverse_mac_params=ack_cm)
    if path.startswith("cmts"):
        g = 0.001 if path == "cmts-1ms" else 0.016
        sc = sc.replace(mac="cmts", buffer=None, mac_params={"granularity": g, "max_delay": 1.024})
    return sc


def alpha_needed(path: str, n: int, seeds=(1, 2, 3), duration: float = 60.0, jobs: int = 1,
                 alphas=ALPHAS) -> tuple[int | None, dict]:
    """Smallest alpha whose median goodput over ``seeds`` is full; and goodput (b/s) per alpha tried."""
    tried = {}
    for a in alphas:
        res = run_many([scenario(path, n, a, s, duration) for s in seeds], jobs=jobs)
        tried[a] = statistics.median(r.goodput_bps for r in res)
        if tried[a] >= FULL:
            return a, tried
    return None, tried


def _cpu() -> float:
    """CPU seconds of this process and its finished worker processes."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--paths", default=",".join(PATHS),
                    help="comma-separated; also nc<ms>[x<k>]: cmts-16ms with a non-concatenating ACK CM on that "
                         "MAP advance (flow i's ACKs through CM i %% k of k on one upstream channel)")
    args = ap.parse_args(argv)
    seeds = tuple(range(1, args.seeds + 1))
    paths = args.paths.split(",")
    c0 = _cpu()
    need, best = {}, {}
    for path in paths:
        for n in FLOWS:
            need[path, n], tried = alpha_needed(path, n, seeds, args.duration, args.jobs)
            best[path, n] = max(tried.values()) / (RATE * 1460 / 1518)
    print(f"FAST alpha per flow for full utilisation (>= {FULL / 1e6:.2f} Mb/s), 3 Mb/s down / 512 kb/s up,"
          f" 100 ms; median of {len(seeds)} seeds, {args.duration:g} s runs")
    head = f"{'N':>3} | {'paper DOCSIS':>12} {'(total)':>7} | {'paper simple':>12}"
    for path in paths:
        head += f" | {path:>9} {'(total)':>7}"
    print(head)
    for n in FLOWS:
        row = f"{n:>3} | {PAPER_TABLE_I[n]:>12} {PAPER_TABLE_I[n] * n:>7} | {PAPER_SIMPLE:>12}"
        for path in paths:
            a = need[path, n]
            row += f" | {a if a else '>30':>9} {a * n if a else f'({best[path, n]:.0%})':>7}"
        print(row)
    print("(>30: not full at any alpha tried; in brackets the best share of the rate reached)")
    print(f"(CPU {_cpu() - c0:.1f} s, worker processes included; jobs={args.jobs}; 2 shared cores: noisy)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
