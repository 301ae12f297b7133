#!/usr/bin/env python3
"""DOCSIS-PIE and Low Latency DOCSIS in hfcprov.sim: validation, ns-3 comparison, speed.

    .venv/bin/python bench/sim_aqm.py [--duration 60] [--ns3-python /work/ns3-venv/bin/python] [--repeat 3]

Prints four tables:
1. validation (RFC 8034's stated behaviour): CUBIC and Reno (SACK recovery) at 10 and
   50 Mb/s, 256 KiB buffer, 40 ms base RTT, two long flows: drop-tail vs DOCSIS-PIE,
   goodput, mean queueing delay (the bottleneck's own), probe RTT p99; target: PIE's
   queueing delay near 10 ms and goodput within a few percent of drop-tail;
2. ns-3 (opt-in: only with ns-3 installed in its own venv, as bench/sim.py uses it):
   the same points through ns-3 3.44's PieQueueDisc configured as close to DOCSIS-PIE
   as its attributes allow (A 0.25, B 2.5, 16 ms updates, 10 ms reference, 142 ms
   burst allowance, de-randomisation, cap drop adjustment); differences in docs/sim.md;
3. low latency: one Prague (L4S) flow beside two CUBIC flows in the LLD dual queue at
   50 Mb/s: each flow's goodput, the low-latency and classic queues' delay p50/p99;
   then the same with an unresponsive ECT(1) TCP flow added (``unresponsive``: no
   reaction to marks or losses): queue protection sanctions its packets to the classic
   queue and the low-latency queue delay stays where it was;
4. speed: the same 50 Mb/s CUBIC scenario with aqm none, docsis-pie and lld, in one
   run: CPU time and events per CPU second, ratio to drop-tail (the issue's bound: AQM
   may cost at most 30 % of the events per second). Median of --repeat.

Senders are Linux-like (200 ms minimum RTO, limited transmit): with RFC 6298's 1 s
minimum, PIE's start-up drops turn into second-long stalls in both simulators.
The machine is shared (2 cores, several users): absolute times are noisy, ratios hold.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from sim import MSS, NS3_PYTHON, ns3_tcp_defaults, rel

POINTS = [(rate, cc) for rate in (10e6, 50e6) for cc in ("cubic", "sack")]
BUFFER = 256 * 1024
RTT = 0.040
FLOWS = 2


# -- ns-3 side (runs inside the ns-3 venv) -------------------------------------------
def ns3_worker(points: list, duration: float, warmup: float) -> list[dict]:
    from ns import ns

    ns.cppyy.cppdef(r"""
    #include "ns3/simulator.h"
    #include "ns3/queue-disc.h"
    #include "ns3/callback.h"
    namespace hfcaqm {
    using namespace ns3;
    // Exact time integral of the bytes in the queue disc from a start time on.
    struct QdiscArea {
      double area = 0; double last = 0; double from = 0; uint32_t bytes = 0;
      void Changed(uint32_t oldv, uint32_t newv) {
        double now = Simulator::Now().GetSeconds();
        double a = last > from ? last : from;
        if (now > a) area += double(oldv) * (now - a);
        last = now; bytes = newv; }
      double Finish(double t) { Changed(bytes, bytes); return area; }
      void Attach(Ptr<QueueDisc> q, double start) {
        from = start;
        q->TraceConnectWithoutContext("BytesInQueue", MakeCallback(&QdiscArea::Changed, this)); }
    };
    }
    """)
    cfg = ns.Config.SetDefault
    ns3_tcp_defaults(ns, sack=True, min_rto=0.2)
    out = []
    for rate, cc, aqm in points:
        tcp = {"cubic": "ns3::TcpCubic", "sack": "ns3::TcpNewReno"}[cc]
        cfg("ns3::TcpL4Protocol::SocketType", ns.StringValue(tcp))
        nodes = ns.NodeContainer()
        nodes.Create(2)
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.StringValue(f"{int(rate)}bps"))
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.Seconds(RTT / 2)))
        p2p.SetQueue("ns3::DropTailQueue", "MaxSize", ns.QueueSizeValue(ns.QueueSize("1p")))
        dev = p2p.Install(nodes)
        ns.InternetStackHelper().Install(nodes)
        tch = ns.TrafficControlHelper()
        if aqm == "pie":
            tch.SetRootQueueDisc(
                "ns3::PieQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{BUFFER}B")),
                "A", ns.DoubleValue(0.25), "B", ns.DoubleValue(2.5), "Tupdate", ns.TimeValue(ns.MilliSeconds(16)),
                "QueueDelayReference", ns.TimeValue(ns.MilliSeconds(10)),
                "MaxBurstAllowance", ns.TimeValue(ns.MilliSeconds(142)), "MeanPktSize", ns.UintegerValue(1024),
                "UseDerandomization", ns.BooleanValue(True), "UseCapDropAdjustment", ns.BooleanValue(True),
                "UseDequeueRateEstimator", ns.BooleanValue(False))
        else:
            tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{BUFFER}B")))
        addr = ns.Ipv4AddressHelper()
        addr.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
        ifs = addr.Assign(dev)  # installs ns-3's default queue disc: replace it
        tch.Uninstall(dev)
        qdiscs = tch.Install(dev.Get(0))
        area = ns.cppyy.gbl.hfcaqm.QdiscArea()
        area.Attach(qdiscs.Get(0), warmup)
        sinks = []
        for i in range(FLOWS):
            sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                       ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 9 + i).ConvertTo())
            sapps = sink.Install(nodes.Get(1))
            sapps.Start(ns.Seconds(0))
            sinks.append(sapps)
            bulk = ns.BulkSendHelper("ns3::TcpSocketFactory",
                                     ns.InetSocketAddress(ifs.GetAddress(1), 9 + i).ConvertTo())
            bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
            bapps = bulk.Install(nodes.Get(0))
            bapps.Start(ns.Seconds(0.5 * i))
        ns.Simulator.Stop(ns.Seconds(warmup))
        ns.Simulator.Run()
        rx0 = [ns.DynamicCast[ns.PacketSink](s.Get(0)).GetTotalRx() for s in sinks]
        ns.Simulator.Stop(ns.Seconds(duration - warmup))
        t0 = time.process_time()
        ns.Simulator.Run()
        cpu = time.process_time() - t0
        rx = sum(ns.DynamicCast[ns.PacketSink](s.Get(0)).GetTotalRx() - rx0[i] for i, s in enumerate(sinks))
        window = duration - warmup
        qbytes = area.Finish(duration) / window
        stats = qdiscs.Get(0).GetStats()
        out.append({"goodput_bps": rx * 8 / window, "queue_delay_mean": qbytes * 8 / rate,
                    "drops": int(stats.nTotalDroppedPackets), "cpu_s": cpu})
        ns.Simulator.Destroy()
    return out


def run_ns3(python: str, points: list, duration: float, warmup: float) -> list[dict]:
    spec = {"points": points, "duration": duration, "warmup": warmup}
    proc = subprocess.run([python, __file__, "--ns3-worker", json.dumps(spec)], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise SystemExit(f"ns-3 worker failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- hfcprov side --------------------------------------------------------------------
def tcp(variant: str):
    from hfcprov.sim import TcpOptions

    return TcpOptions(variant=variant, mss=MSS, min_rto=0.2, limited_transmit=True)


def scenario(rate: float, cc: str, aqm: str, duration: float, warmup: float, rtt: float = RTT, **kw):
    from hfcprov.sim import FlowSpec, Scenario

    flows = kw.pop("flows", None) or [FlowSpec(start=0.5 * i) for i in range(FLOWS)]
    return Scenario(rate=rate, buffer=BUFFER, rtt=rtt, duration=duration, warmup=warmup, aqm=aqm,
                    flows=flows, tcp=tcp(cc), probe_rate=kw.pop("probe_rate", 10), sample_interval=None, **kw)


def validation(duration: float, warmup: float) -> list:
    from hfcprov.sim import run

    rows = []
    print(f"\n1. DOCSIS-PIE vs drop-tail: {FLOWS} flows, {BUFFER // 1024} KiB, {RTT * 1e3:.0f} ms, "
          f"{duration:g} s ({warmup:g} s warm-up)")
    print(f"{'rate':>5} {'tcp':>6} | {'goodput DT':>10} {'PIE':>6} {'PIE/DT':>7} | {'qdelay DT ms':>12} "
          f"{'PIE':>6} | {'RTT p99 DT ms':>13} {'PIE':>6} | {'PIE early drops':>15}")
    for rate, cc in POINTS:
        dt = run(scenario(rate, cc, "none", duration, warmup))
        pie = run(scenario(rate, cc, "docsis-pie", duration, warmup))
        rows.append((rate, cc, dt, pie))
        print(f"{rate / 1e6:4g}M {cc:>6} | {dt.goodput_bps / 1e6:10.2f} {pie.goodput_bps / 1e6:6.2f} "
              f"{pie.goodput_bps / dt.goodput_bps:7.3f} | {dt.extra['queue_delay_mean'] * 1e3:12.1f} "
              f"{pie.extra['queue_delay_mean'] * 1e3:6.1f} | {dt.latency_loaded.p99 * 1e3:13.0f} "
              f"{pie.latency_loaded.p99 * 1e3:6.0f} | {pie.extra['aqm']['early_drops']:15d}")
    return rows


def ns3_table(python: str, rows: list, duration: float, warmup: float) -> None:
    pts = [(rate, cc, aqm) for rate, cc, *_ in rows for aqm in ("fifo", "pie")]
    theirs = run_ns3(python, pts, duration, warmup)
    print("\n2. against ns-3 3.44 PieQueueDisc (DOCSIS-like attributes; FifoQueueDisc for drop-tail)")
    print(f"{'rate':>5} {'tcp':>6} | {'goodput PIE hfc':>15} {'ns-3':>6} {'diff':>6} | {'qdelay PIE hfc ms':>17} "
          f"{'ns-3':>6} | {'qdelay DT hfc ms':>16} {'ns-3':>6} | {'drops PIE hfc':>13} {'ns-3':>6}")
    for i, (rate, cc, dt, pie) in enumerate(rows):
        n_dt, n_pie = theirs[2 * i], theirs[2 * i + 1]
        print(f"{rate / 1e6:4g}M {cc:>6} | {pie.goodput_bps / 1e6:15.2f} {n_pie['goodput_bps'] / 1e6:6.2f} "
              f"{rel(pie.goodput_bps, n_pie['goodput_bps']) * 100:5.1f}% | "
              f"{pie.extra['queue_delay_mean'] * 1e3:17.1f} {n_pie['queue_delay_mean'] * 1e3:6.1f} | "
              f"{dt.extra['queue_delay_mean'] * 1e3:16.1f} {n_dt['queue_delay_mean'] * 1e3:6.1f} | "
              f"{pie.extra['queue_drops']:13d} {n_pie['drops']:6d}")


def low_latency(duration: float, warmup: float) -> None:
    from hfcprov.sim import FlowSpec, run

    rate = 50e6
    print(f"\n3. LLD dual queue, {rate / 1e6:g} Mb/s, 256 KiB classic buffer, 20 ms, {duration:g} s")
    print(f"{'flows':<36} | {'goodput Mb/s each':<26} | {'LL p50/p99 ms':>13} | {'classic p50/p99 ms':>18} | "
          f"{'marks':>6} {'sanctions':>9}")
    for names in (["prague", "cubic", "cubic"], ["prague", "cubic", "cubic", "unresponsive"]):
        flows = [FlowSpec(variant=v, start=0.5 * i) for i, v in enumerate(names)]
        res = run(scenario(rate, "cubic", "lld", duration, warmup, flows=flows, rtt=0.020))
        a = res.extra["aqm"]
        print(f"{' + '.join(names):<36} | {' '.join(f'{f.goodput_bps / 1e6:.2f}' for f in res.flows):<26} | "
              f"{a['ll_delay_p50'] * 1e3:5.2f}/{a['ll_delay_p99'] * 1e3:6.2f} | "
              f"{a['classic_delay_p50'] * 1e3:8.2f}/{a['classic_delay_p99'] * 1e3:8.2f} | "
              f"{a['marks']:6d} {a['sanctioned']:9d}")


def speed(duration: float, repeat: int) -> None:
    from hfcprov.sim import run

    print(f"\n4. speed: 50 Mb/s, CUBIC x {FLOWS}, {duration:g} s simulated, median of {repeat} (one run)")
    print(f"{'aqm':>11} {'cpu s':>7} {'events':>9} {'events/cpu s':>13} {'vs drop-tail':>13} {'cpu ratio':>10}")
    base = None
    for aqm in ("none", "docsis-pie", "lld"):
        runs = [run(scenario(50e6, "cubic", aqm, duration, 1.0, probe_rate=0)) for _ in range(repeat)]
        cpu = statistics.median(r.extra["cpu_s"] for r in runs)
        ev = runs[0].extra["events"]
        eps = ev / cpu
        if base is None:
            base = (eps, cpu)
        print(f"{aqm:>11} {cpu:7.3f} {ev:9d} {eps:13.0f} {eps / base[0]:13.2f} {cpu / base[1]:10.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ns3-worker", help=argparse.SUPPRESS)
    ap.add_argument("--ns3-python", default=NS3_PYTHON)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--warmup", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--speed-duration", type=float, default=20.0)
    args = ap.parse_args()
    if args.ns3_worker:
        spec = json.loads(args.ns3_worker)
        print(json.dumps(ns3_worker([tuple(p) for p in spec["points"]], spec["duration"], spec["warmup"])))
        return
    sys.path.insert(0, str(BENCH.parent))
    rows = validation(args.duration, args.warmup)
    if Path(args.ns3_python).exists():
        ns3_table(args.ns3_python, rows, args.duration, args.warmup)
    else:
        print(f"\n2. ns-3 not found at {args.ns3_python} (opt-in: python3 -m venv /work/ns3-venv && "
              "/work/ns3-venv/bin/pip install ns3); skipped")
    low_latency(args.duration / 2, args.warmup / 2)
    speed(args.speed_duration, args.repeat)


if __name__ == "__main__":
    main()
