"""Probe accuracy against the named peers on the same emulated path: ``ping`` (idle RTT) and ``iperf3`` (goodput).

Builds one emulated modem (40 ms added RTT, upstream 10 Mb/s with a 64 KiB
Buffer Control target), then alternates runs of each tool and prints medians
and their differences:

- idle RTT: hfcprov's ICMP probe (kernel capture stamps) vs iputils ``ping``, both at 20/s at the same
  time (so both see the same delay line and machine load); target: within 0.5 ms;
- goodput: one cubic TCP flow upstream, warm-up excluded, hfcprov vs ``iperf3 -O``; target: within 3%.

Needs root; installs iperf3 and iputils-ping from Debian (scripts/debian-deps.sh) when missing.

    sudo .venv/bin/python bench/probe_accuracy.py [--runs 5] [--rate 10M] [--buffer 64KiB] [--rtt 40ms]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hfcprov.emu import shaping, topology
from hfcprov.emu.measure import measure
from hfcprov.model import BufferControl, ServiceFlow
from hfcprov.probe.run import ProbeSpec
from hfcprov.units import parse_bytes, parse_duration, parse_rate

REPO = Path(__file__).resolve().parent.parent


def ensure_tools() -> None:
    missing = [pkg for tool, pkg in (("iperf3", "iperf3"), ("ping", "iputils-ping")) if not shutil.which(tool)]
    if missing:
        subprocess.run(["bash", str(REPO / "scripts" / "debian-deps.sh"), *missing], check=True)


def idle_rtt_side_by_side(lab, seconds: float, rate: float) -> tuple[float, float]:
    """Median idle RTT of the probe and of ``ping``, run at the same time so both see the same path."""
    ping = subprocess.Popen(["ip", "netns", "exec", lab.ns("cpe"), "ping", "-n", "-c", str(int(seconds * rate)),
                             "-i", str(1 / rate), topology.ADDR["srv"]], stdout=subprocess.PIPE, text=True)
    r = measure(lab, ProbeSpec(target=None, flows=0, duration=0.1, warmup=0, idle=seconds, rate=rate))
    out, _ = ping.communicate(timeout=60)
    rtts = [float(m) / 1000 for m in re.findall(r"time=([0-9.]+) ms", out)]
    return r.latency_idle.p50, statistics.median(rtts)


def iperf3_goodput(lab, seconds: float, omit: float, cc: str) -> float:
    server = subprocess.Popen(["ip", "netns", "exec", lab.ns("srv"), "iperf3", "-s", "-1", "-p", "5202"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        out = subprocess.run(["ip", "netns", "exec", lab.ns("cpe"), "iperf3", "-c", topology.ADDR["srv"], "-p", "5202",
                              "-t", str(seconds), "-O", str(omit), "-C", cc, "-J"],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)["end"]["sum_received"]["bits_per_second"]
    finally:
        server.wait(timeout=30)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rate", default="10M")
    ap.add_argument("--buffer", default="64KiB")
    ap.add_argument("--rtt", default="40ms")
    ap.add_argument("--duration", default="6s")
    ap.add_argument("--warmup", default="2s")
    ap.add_argument("--cc", default="cubic")
    args = ap.parse_args()
    rate, buffer, rtt = parse_rate(args.rate), parse_bytes(args.buffer), parse_duration(args.rtt)
    duration, warmup = parse_duration(args.duration), parse_duration(args.warmup)
    ensure_tools()
    lab = topology.up(rtt=rtt, prefix="hfemu-bench", docsis_version="3.0")  # drop-tail (no 24.40)
    try:
        lab.apply([shaping.plan(ServiceFlow(direction="upstream", max_sustained_rate=rate,
                                            buffer=BufferControl(target=buffer)))])
        probe_rtt, ping_rtt, probe_gp, iperf_gp = [], [], [], []
        for _ in range(args.runs):
            ours, theirs = idle_rtt_side_by_side(lab, 3.0, 20)
            probe_rtt.append(ours)
            ping_rtt.append(theirs)
            r = measure(lab, ProbeSpec(target=None, flows=1, duration=duration, warmup=warmup, idle=0.2, cc=args.cc))
            probe_gp.append(r.goodput_bps)
            iperf_gp.append(iperf3_goodput(lab, duration + warmup, warmup, args.cc))
    finally:
        lab.down()
    m = statistics.median
    print(f"path: {lab.caps.describe()}; +{rtt * 1e3:g} ms RTT, upstream {rate / 1e6:g} Mb/s, buffer {buffer} B, "
          f"{args.runs} runs each, medians")
    print(f"{'figure':<18}{'hfcprov probe':>16}{'peer':>16}{'peer tool':>12}{'difference':>16}")
    d_rtt = m(probe_rtt) - m(ping_rtt)
    print(f"{'idle RTT':<18}{m(probe_rtt) * 1e3:>13.3f} ms{m(ping_rtt) * 1e3:>13.3f} ms{'ping':>12}"
          f"{d_rtt * 1e3:>+13.3f} ms")
    ratio = m(probe_gp) / m(iperf_gp)
    print(f"{'goodput':<18}{m(probe_gp) / 1e6:>11.3f} Mb/s{m(iperf_gp) / 1e6:>11.3f} Mb/s{'iperf3':>12}"
          f"{(ratio - 1) * 100:>+14.2f} %")
    print(f"per run: probe RTT ms {[round(x * 1e3, 3) for x in probe_rtt]}, ping {[round(x * 1e3, 3) for x in ping_rtt]}")
    print(f"per run: probe Mb/s {[round(x / 1e6, 3) for x in probe_gp]}, iperf3 {[round(x / 1e6, 3) for x in iperf_gp]}")
    ok = abs(d_rtt) <= 0.0005 and abs(ratio - 1) <= 0.03
    print("within targets (0.5 ms, 3%):", "yes" if ok else "NO")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
