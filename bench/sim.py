#!/usr/bin/env python3
"""Benchmark and cross-check of hfcprov.sim against ns-3 (NewReno over a rate-limited drop-tail bottleneck).

    .venv/bin/python bench/sim.py [--ns3-python /work/ns3-venv/bin/python] [--sweep 200] [--repeat 5]
    .venv/bin/python bench/sim.py --grid-only        # issue 15's 48-case grid (table 4) alone

Prints three tables:
1. speed: 60 simulated seconds of one NewReno flow at 10 Mb/s, 64 KiB, 40 ms:
   CPU time of the run (process time: the machine is shared) and events/s of hfcprov.sim and of ns-3
   (median of --repeat runs), ratio;
2. agreement: goodput and mean queueing delay of both over a grid of rates 2-10 Mb/s,
   buffers 16-256 KiB, RTT 40-100 ms (target: within 5%);
3. sweep: wall and CPU time of a --sweep point grid with run_many; ns-3 on a tenth of it.

ns-3 runs in its own venv (``pip install ns3`` into /work/ns3-venv, never the test
install): this file re-runs itself there with ``--ns3-worker`` and reads JSON back.
Both simulators get the same scenario: a point-to-point bottleneck of ``rate``, a
drop-tail device queue of ``buffer`` bytes (ns-3: traffic control removed), 2 bytes
of framing (PPP), one-way delay rtt/2 each way, MSS 1460, SACK on (off with
``--recovery newreno``), no timestamps, initial window 10, delayed ACK every 2nd
segment / 200 ms, minimum RTO 1 s, ns-3's TcpClassicRecovery (cwnd = ssthresh, pipe
with SACK). ns-3 opens the connection with a handshake, so hfcprov's flow starts one
RTT later; goodput is application bytes received over the whole run in both.

Where the RFCs leave a choice, hfcprov is set to ns-3 3.44's (``hfcprov.sim.hosts.NS3``, TcpOptions
fields; read off ns-3's cwnd/ssthresh/state traces, see docs/sim.md):
- ``limited_transmit``: with SACK, ns-3 sends new data whenever BytesInFlight (pipe) < cwnd,
  also on the duplicate ACKs before fast retransmit (RFC 6675 section 5 step 3); its
  LimitedTransmit attribute (off here) only governs the non-SACK path. On with SACK only.
- ``ssthresh_from: pipe``: TcpNewReno::GetSsThresh halves BytesInFlight() (pipe: outstanding
  - SACKed - lost), not RFC 5681's FlightSize.
- ``integer_cwnd``: ns-3's cwnd is a uint32, so congestion avoidance adds the truncated
  MSS*MSS/cwnd (up to 6% slower growth at 150-250 KB windows).
- ``grow_on_recovery_exit``: after ExitRecovery sets cwnd = ssthresh, the same ACK goes
  through IncreaseWindow.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

NS3_PYTHON = os.environ.get("HFCPROV_NS3_PYTHON", "/work/ns3-venv/bin/python")
if not Path(NS3_PYTHON).exists() and importlib.util.find_spec("ns") is not None:
    NS3_PYTHON = sys.executable  # `pip install '.[ns3]'` put ns-3 in this venv
GRID = [(rate, buf, rtt) for rate in (2e6, 5e6, 10e6) for buf in (16384, 65536, 262144) for rtt in (0.04, 0.1)]
SPEED_POINT = (10e6, 65536, 0.04)
MSS = 1460
RECOVERY = "sack"  # or "newreno" (--recovery): loss recovery on both sides
SAMPLE = 0.01  # s between queue samples (loaded latency: mean, p50, p99)
# issue 15's grid: 2 and 10 Mb/s; 16, 64, 256 KiB; 40 and 100 ms; 1 and 10 flows; Reno(+SACK) and CUBIC
ISSUE15_GRID = [(rate, buf, rtt, flows, variant) for variant in ("newreno", "cubic") for flows in (1, 10)
                for rate in (2e6, 10e6) for buf in (16384, 65536, 262144) for rtt in (0.04, 0.1)]


# -- ns-3 side (runs inside the ns-3 venv) -------------------------------------------
def ns3_tcp_defaults(ns, *, sack: bool, min_rto: float) -> None:
    """The end hosts every ns-3 bench here shares: MSS, IW10, delayed ACK every 2nd segment,
    socket buffers out of the way, no timestamps; SACK and the minimum RTO as the bench asks."""
    cfg = ns.Config.SetDefault
    cfg("ns3::TcpSocket::SegmentSize", ns.UintegerValue(MSS))
    cfg("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    cfg("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    cfg("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 27))
    cfg("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 27))
    cfg("ns3::TcpSocketBase::Sack", ns.BooleanValue(sack))
    cfg("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    cfg("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(min_rto)))


def ns3_worker(points: list, duration: float, sack: bool, warmup: float | None = None) -> list[dict]:
    """Each point is (rate, buffer, rtt[, flows, variant]); variant newreno (with SACK recovery) or cubic."""
    from ns import ns

    ns.cppyy.cppdef(r"""
    #include "ns3/simulator.h"
    #include "ns3/queue.h"
    #include "ns3/packet.h"
    #include "ns3/callback.h"
    namespace hfcbench {
    using namespace ns3;
    // Exact time integral of the bytes waiting in the device queue.
    struct QueueArea {
      double area = 0; double last = 0; uint32_t bytes = 0;
      void Changed(uint32_t oldv, uint32_t newv) {
        double now = Simulator::Now().GetSeconds();
        area += double(oldv) * (now - last); last = now; bytes = newv; }
      double Finish(double t) { area += double(bytes) * (t - last); last = t; return area; }
      void Attach(Ptr<Queue<Packet>> q) {
        q->TraceConnectWithoutContext("BytesInQueue", MakeCallback(&QueueArea::Changed, this)); }
    };
    // Bytes waiting in the device queue every `interval` s from `from` on: the latency a probe sees.
    struct QueueSampler {
      std::vector<double> q; Ptr<Queue<Packet>> queue; double interval = 0.01; double until = 0;
      void Tick() {
        q.push_back(double(queue->GetNBytes()));
        if (Simulator::Now().GetSeconds() + interval <= until) Simulator::Schedule(Seconds(interval), &QueueSampler::Tick, this); }
      void Start(Ptr<Queue<Packet>> qq, double from, double iv, double u) {
        queue = qq; interval = iv; until = u; Simulator::Schedule(Seconds(from), &QueueSampler::Tick, this); }
    };
    }
    """)
    cfg = ns.Config.SetDefault
    ns3_tcp_defaults(ns, sack=sack, min_rto=1.0)
    cfg("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
    cfg("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    cfg("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpClassicRecovery")))
    out = []
    for point in points:
        rate, buf, rtt, nflows, variant = normalise(point)
        socket = {"newreno": "ns3::TcpNewReno", "cubic": "ns3::TcpCubic"}[variant]
        cfg("ns3::TcpL4Protocol::SocketType", ns.StringValue(socket))
        nodes = ns.NodeContainer()
        nodes.Create(2)
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.StringValue(f"{int(rate)}bps"))
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.Seconds(rtt / 2)))
        p2p.SetQueue("ns3::DropTailQueue", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{buf}B")))
        dev = p2p.Install(nodes)
        ns.InternetStackHelper().Install(nodes)
        addr = ns.Ipv4AddressHelper()
        addr.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
        ifs = addr.Assign(dev)
        ns.TrafficControlHelper().Uninstall(dev)
        queue = dev.Get(0).GetObject[ns.PointToPointNetDevice]().GetQueue()
        area = ns.cppyy.gbl.hfcbench.QueueArea()
        area.Attach(queue)
        sampler = ns.cppyy.gbl.hfcbench.QueueSampler()
        if warmup is not None:  # the latency samples cost events: only when asked
            sampler.Start(queue, warmup, SAMPLE, duration)
        sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                   ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 9).ConvertTo())
        sapps = sink.Install(nodes.Get(1))
        sapps.Start(ns.Seconds(0))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ifs.GetAddress(1), 9).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        for _ in range(nflows):
            bapps = bulk.Install(nodes.Get(0))
            bapps.Start(ns.Seconds(0))
        ns.Simulator.Stop(ns.Seconds(duration))
        events0 = ns.Simulator.GetEventCount()
        t0 = time.process_time()
        ns.Simulator.Run()
        cpu = time.process_time() - t0
        rx = ns.DynamicCast[ns.PacketSink](sapps.Get(0)).GetTotalRx()
        qbytes = area.Finish(duration) / duration
        out.append({"goodput_bps": rx * 8 / duration, "queue_bytes_mean": qbytes,
                    "queue_delay_mean": qbytes * 8 / rate, "cpu_s": cpu, "events": int(ns.Simulator.GetEventCount() - events0),
                    **(latency([float(x) for x in sampler.q], rate, rtt) if warmup is not None else {})})
        ns.Simulator.Destroy()
    return out


def ns3_paths_worker(cases: list[dict]) -> list[dict]:
    """Plant loss and near/far pairs: per case ``rate, buf, rtt, variant, loss, far_rtt, seed, duration,
    warmup``. The sender's device is the bottleneck (drop-tail ``buf``, one-way delay rtt/2); a router
    behind it reaches the near server at once and the far one over (far_rtt - rtt)/2 more, each way, on
    100 Gb/s links. Random loss: a RateErrorModel (packets) on both ends of the bottleneck, data and ACKs.
    Each flow's goodput counts the bytes its sink received from ``warmup`` to ``duration``."""
    from ns import ns

    cfg = ns.Config.SetDefault
    ns3_tcp_defaults(ns, sack=True, min_rto=1.0)
    cfg("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(False))
    cfg("ns3::TcpL4Protocol::RecoveryType", ns.TypeIdValue(ns.TypeId.LookupByName("ns3::TcpClassicRecovery")))
    out = []
    for c in cases:
        ns.RngSeedManager.SetSeed(1)
        ns.RngSeedManager.SetRun(c["seed"])
        socket = {"newreno": "ns3::TcpNewReno", "cubic": "ns3::TcpCubic"}[c["variant"]]
        cfg("ns3::TcpL4Protocol::SocketType", ns.StringValue(socket))
        far = c.get("far_rtt")
        nodes = ns.NodeContainer()
        nodes.Create(4 if far else 2)  # sender, router (or the one server), near server, far server
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.StringValue(f"{int(c['rate'])}bps"))
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.Seconds(c["rtt"] / 2)))
        p2p.SetQueue("ns3::DropTailQueue", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{c['buf']}B")))
        bottleneck = p2p.Install(nodes.Get(0), nodes.Get(1))
        ns.InternetStackHelper().Install(nodes)
        addr = ns.Ipv4AddressHelper()
        addr.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
        ifs = addr.Assign(bottleneck)
        ns.TrafficControlHelper().Uninstall(bottleneck)
        if c["loss"]:
            for k in (0, 1):
                em = ns.CreateObject[ns.RateErrorModel]()
                em.SetAttribute("ErrorRate", ns.DoubleValue(c["loss"]))
                em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
                bottleneck.Get(k).SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
        servers = [(nodes.Get(1), ifs.GetAddress(1))]
        if far:
            fast = ns.PointToPointHelper()
            fast.SetDeviceAttribute("DataRate", ns.StringValue("100Gbps"))
            fast.SetQueue("ns3::DropTailQueue", "MaxSize", ns.QueueSizeValue(ns.QueueSize("100000p")))
            servers = []
            for k, extra in ((2, 0.0), (3, (far - c["rtt"]) / 2)):
                fast.SetChannelAttribute("Delay", ns.TimeValue(ns.Seconds(extra)))
                dev = fast.Install(nodes.Get(1), nodes.Get(k))
                addr.SetBase(ns.Ipv4Address(f"10.1.{k}.0"), ns.Ipv4Mask("255.255.255.0"))
                servers.append((nodes.Get(k), addr.Assign(dev).GetAddress(1)))
            ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
        sinks = []
        for node, ip in servers:
            sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                       ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 9).ConvertTo())
            app = sink.Install(node)
            app.Start(ns.Seconds(0))
            sinks.append(app)
            bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ip, 9).ConvertTo())
            bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
            bulk.Install(nodes.Get(0)).Start(ns.Seconds(c.get("starts", [0.0, 0.0])[len(sinks) - 1]))

        def rx():
            return [ns.DynamicCast[ns.PacketSink](a.Get(0)).GetTotalRx() for a in sinks]

        t0 = time.process_time()
        ns.Simulator.Stop(ns.Seconds(c["warmup"]))
        ns.Simulator.Run()
        before = rx()
        ns.Simulator.Stop(ns.Seconds(c["duration"] - c["warmup"]))
        ns.Simulator.Run()
        span = c["duration"] - c["warmup"]
        out.append({"flows": [(b - a) * 8 / span for a, b in zip(before, rx())], "cpu_s": time.process_time() - t0})
        ns.Simulator.Destroy()
    return out


def normalise(point) -> tuple:
    """(rate, buffer, rtt) or (rate, buffer, rtt, flows, variant) -> the five."""
    return tuple(point) + (1, "newreno")[len(point) - 3:] if len(point) < 5 else tuple(point)


def latency(samples: list, rate: float, rtt: float) -> dict:
    """Loaded latency a probe would see: base RTT + the sampled queue's bytes at the rate."""
    if not samples:
        return {"lat_mean": None, "lat_p50": None, "lat_p99": None}
    lat = sorted(rtt + b * 8 / rate for b in samples)
    return {"lat_mean": statistics.fmean(lat), "lat_p50": lat[len(lat) // 2],
            "lat_p99": lat[min(len(lat) - 1, int(0.99 * len(lat)))]}


def run_ns3(python: str, points: list, duration: float, warmup: float | None = None) -> list[dict]:
    spec = {"points": points, "duration": duration, "sack": RECOVERY == "sack", "warmup": warmup}
    cmd = [python, __file__, "--ns3-worker", json.dumps(spec)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"ns-3 worker failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_ns3_paths(python: str, cases: list[dict]) -> list[dict]:
    proc = subprocess.run([python, __file__, "--ns3-worker", json.dumps({"paths": cases})],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"ns-3 worker failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- hfcprov side --------------------------------------------------------------------
def scenario(rate: float, buf: int, rtt: float, duration: float, seed: int = 1, flows: int = 1,
             variant: str = "newreno", sample: float | None = None):
    from hfcprov.sim import FlowSpec, Scenario, TcpOptions
    from hfcprov.sim.hosts import NS3  # ns-3 3.44's choices where the RFCs leave room (module docstring)

    growth = {"newreno": RECOVERY, "cubic": "cubic"}[variant]
    return Scenario(rate=rate, buffer=buf, rtt=rtt, burst=1 << 30, overhead=2, channel=rate,
                    reverse_channel=rate, flows=[FlowSpec(start=rtt) for _ in range(flows)], duration=duration,
                    sample_interval=sample, seed=seed, start_jitter=0.0,
                    tcp=TcpOptions(variant=growth, recovery=RECOVERY, mss=MSS, initial_window=10, min_rto=1.0,
                                   **{**NS3, "limited_transmit": RECOVERY == "sack"}))


def run_hfc_paths(cases: list[dict]) -> list[dict]:
    """The hfcprov side of ``ns3_paths_worker``'s cases: the same path, hosts and window."""
    from hfcprov.sim import FlowSpec, LossSpec, run

    out = []
    for c in cases:
        sc = scenario(c["rate"], c["buf"], c["rtt"], c["duration"], seed=c["seed"], variant=c["variant"])
        far = c.get("far_rtt")
        starts = c.get("starts", [0.0, 0.0])  # + the handshake's round trip, which ns-3 makes and hfcprov skips
        flows = [FlowSpec(start=starts[0] + c["rtt"])] + ([FlowSpec(start=starts[1] + far, rtt=far)] if far else [])
        plant = LossSpec("bernoulli", c["loss"]) if c["loss"] else LossSpec()
        r = run(sc.replace(flows=flows, warmup=c["warmup"], data_loss=plant, ack_loss=plant))
        out.append({"flows": [f.goodput_bps for f in r.flows], "cpu_s": r.extra["cpu_s"]})
    return out


def speed_rates(args, have_ns3: bool) -> None:
    """Issue 28 item 7: CPU of the same one-flow scenario on both sides at each rate (median of --repeat;
    ratios run by run). ns-3's import and JIT are not counted (one worker process per side and rate)."""
    from hfcprov.units import parse_rate

    print(f"speed by rate: one NewReno flow ({RECOVERY} recovery), 40 ms, one-BDP buffer, median of {args.repeat} "
          "(CPU s of the run)")
    print(f"{'rate':>8} {'sim s':>6} {'buffer':>8} | {'hfcprov':>8} {'ns-3':>8} {'ratio':>6} {'min-max':>11} | "
          f"{'goodput hfc':>11} {'ns-3':>7}")
    for text in args.speed_rates.split(","):
        rate = parse_rate(text)
        buf = max(65536, int(rate * 0.04 / 8))
        duration = max(5.0, args.duration * 10e6 / rate)
        point = (rate, buf, 0.04)
        hfc = [run_hfc([point], duration)[0] for _ in range(args.repeat)]
        ref = run_ns3(args.ns3_python, [point] * args.repeat, duration) if have_ns3 else []
        h = statistics.median(r["cpu_s"] for r in hfc)
        if ref:
            n = statistics.median(r["cpu_s"] for r in ref)
            pairs = sorted(b["cpu_s"] / a["cpu_s"] for a, b in zip(hfc, ref))
            print(f"{rate / 1e6:7g}M {duration:6g} {buf // 1024:7d}K | {h:8.3f} {n:8.3f} {n / h:5.1f}x "
                  f"{pairs[0]:5.1f}-{pairs[-1]:<5.1f} | {hfc[0]['goodput_bps'] / 1e6:11.2f} "
                  f"{ref[0]['goodput_bps'] / 1e6:7.2f}", flush=True)
        else:
            print(f"{rate / 1e6:7g}M {duration:6g} {buf // 1024:7d}K | {h:8.3f} {'-':>8}", flush=True)


def loss_table(args, have_ns3: bool) -> None:
    """Plant loss against ns-3, the ns-3-matched hosts: goodput per case, min/median/max over seeds."""
    if not have_ns3:
        print("loss table: ns-3 is not installed (see above)")
        return
    losses = [float(x.rstrip("%")) / 100 for x in args.losses.split(",")]
    cases = [{"rate": 50e6, "buf": 262144, "rtt": 0.02, "variant": v, "loss": p, "far_rtt": None, "seed": k + 1,
              "duration": args.loss_duration, "warmup": 10.0}
             for p in losses for v in ("newreno", "cubic") for k in range(args.seeds)]
    hfc, ref = run_hfc_paths(cases), run_ns3_paths(args.ns3_python, cases)
    print(f"\n5. plant loss against ns-3 3.44 (50 Mb/s, 256 KiB, 20 ms, one flow, random loss on data and ACKs; "
          f"{args.loss_duration:g} s, goodput from 10 s; seeds 1..{args.seeds} on each side)")
    print(f"{'loss':>6} {'tcp':<8} | {'hfcprov min / median / max':>27} | {'ns-3 min / median / max':>27} | "
          f"{'median diff':>11}")
    worst = 0.0
    for p in losses:
        for v in ("newreno", "cubic"):
            idx = [i for i, c in enumerate(cases) if c["loss"] == p and c["variant"] == v]
            h = sorted(hfc[i]["flows"][0] / 1e6 for i in idx)
            n = sorted(ref[i]["flows"][0] / 1e6 for i in idx)
            d = statistics.median(h) / statistics.median(n) - 1
            worst = max(worst, abs(d))
            print(f"{p * 100:5g}% {v:<8} | {h[0]:8.2f} {statistics.median(h):8.2f} {h[-1]:8.2f} | "
                  f"{n[0]:8.2f} {statistics.median(n):8.2f} {n[-1]:8.2f} | {d * 100:+10.1f}%")
    print(f"worst median difference {worst * 100:.1f}%; CPU hfcprov {sum(h['cpu_s'] for h in hfc):.1f} s, "
          f"ns-3 {sum(n['cpu_s'] for n in ref):.1f} s")


def near_far_table(args, have_ns3: bool) -> None:
    """Two flows behind one bottleneck to a near and a far server: each flow's goodput and the ratio."""
    if not have_ns3:
        print("near/far table: ns-3 is not installed (see above)")
        return
    import random

    # two drop-tail flows lock into phase patterns a small start offset changes (Floyd and Jacobson's
    # phase effects): each seed starts them up to 100 ms apart, the same on both sides, and the table
    # gives the median over seeds
    groups = [(rate, buf, v) for rate in (10e6, 50e6) for buf in (65536, 262144) for v in ("newreno", "cubic")]
    cases = []
    for rate, buf, v in groups:
        for k in range(args.seeds):
            rng = random.Random(k + 1)
            cases.append({"rate": rate, "buf": buf, "rtt": 0.02, "variant": v, "loss": 0.0, "far_rtt": 0.08,
                          "seed": k + 1, "starts": [rng.uniform(0, 0.1), rng.uniform(0, 0.1)],
                          "duration": args.loss_duration, "warmup": 10.0})
    hfc, ref = run_hfc_paths(cases), run_ns3_paths(args.ns3_python, cases)
    print(f"\n6. near (20 ms) and far (80 ms) server behind one bottleneck, one flow each, against ns-3 3.44 "
          f"({args.loss_duration:g} s, goodput from 10 s; {args.seeds} seeds: starts up to 100 ms apart; "
          "median goodput and near/far ratio [min-max])")
    print(f"{'rate':>5} {'buf':>5} {'tcp':<8} | {'hfcprov near / far':>19} {'ratio':>17} | "
          f"{'ns-3 near / far':>16} {'ratio':>17} | {'ratio diff':>10}")
    worst = 0.0
    for rate, buf, v in groups:
        idx = [i for i, c in enumerate(cases) if (c["rate"], c["buf"], c["variant"]) == (rate, buf, v)]

        def cols(res):
            near = statistics.median(res[i]["flows"][0] for i in idx) / 1e6
            far = statistics.median(res[i]["flows"][1] for i in idx) / 1e6
            ratios = sorted(res[i]["flows"][0] / res[i]["flows"][1] for i in idx)
            return f"{near:7.2f} / {far:6.2f}  {statistics.median(ratios):5.2f} [{ratios[0]:.2f}-{ratios[-1]:.2f}]", \
                statistics.median(ratios)

        (th, rh), (tn, rn) = cols(hfc), cols(ref)
        worst = max(worst, abs(rh / rn - 1))
        print(f"{rate / 1e6:4g}M {buf // 1024:4d}K {v:<8} | {th:>37} | {tn:>34} | {(rh / rn - 1) * 100:+9.1f}%")
    print(f"worst ratio difference {worst * 100:.1f}%; CPU hfcprov {sum(h['cpu_s'] for h in hfc):.1f} s, "
          f"ns-3 {sum(n['cpu_s'] for n in ref):.1f} s")


def run_hfc(points: list, duration: float, warmup: float | None = None) -> list[dict]:
    """``warmup`` given: also sample the queue from then on for the loaded latency (costs events)."""
    from hfcprov.sim import run

    out = []
    for point in points:
        rate, buf, rtt, flows, variant = normalise(point)
        r = run(scenario(rate, buf, rtt, duration, flows=flows, variant=variant,
                         sample=SAMPLE if warmup is not None else None))
        b = r.extra["queue_bytes_mean"]
        samples = [q for t, q in r.series.get("queue_bytes", ()) if t >= warmup - 1e-9] if warmup is not None else []
        out.append({"goodput_bps": r.goodput_bps, "queue_bytes_mean": b, "queue_delay_mean": b * 8 / rate,
                    "drops": r.extra["queue_drops"], "cpu_s": r.extra["cpu_s"], "events": r.extra["events"],
                    **(latency(samples, rate, rtt) if warmup is not None else {})})
    return out


def grid15(args, have_ns3: bool) -> None:
    """Issue 15's grid against ns-3: goodput (target 3%) and loaded latency mean/p50/p99 (10%)."""
    if not have_ns3:
        print("grid: ns-3 is not installed (see above)")
        return
    cases = ISSUE15_GRID
    dur, warm = args.grid_duration, args.grid_warmup
    hfc = run_hfc(cases, dur, warm)
    ref = run_ns3(args.ns3_python, cases, dur, warm)
    keys = (("goodput_bps", 0.03), ("lat_mean", 0.10), ("lat_p50", 0.10), ("lat_p99", 0.10))
    print(f"\n4. issue 15 grid against ns-3 3.44 ({dur:g} s, latency = base RTT + sampled queue from {warm:g} s; "
          "targets: goodput 3%, latency 10%)")
    print(f"{'cc':<7} {'n':>2} {'rate':>4} {'buf':>5} {'rtt':>4} | {'goodput hfc':>11} {'ns-3':>6} {'diff':>6} | "
          f"{'mean ms hfc':>11} {'ns-3':>6} {'diff':>6} | {'p50 diff':>8} | {'p99 ms hfc':>10} {'ns-3':>6} {'diff':>6} | miss")
    errs = {k: [] for k, _ in keys}
    worst = (0.0, None)
    for case, h, n in zip(cases, hfc, ref):
        rate, buf, rtt, flows, variant = case
        d = {k: rel(h[k], n[k]) for k, _ in keys}
        for k, _ in keys:
            errs[k].append(d[k])
        miss = [k for k, lim in keys if d[k] > lim]
        score = max(d[k] / lim for k, lim in keys)
        if score > worst[0]:
            worst = (score, case, d)
        print(f"{variant:<7} {flows:2d} {rate / 1e6:3g}M {buf // 1024:4d}K {rtt * 1e3:4.0f} | "
              f"{h['goodput_bps'] / 1e6:11.3f} {n['goodput_bps'] / 1e6:6.3f} {d['goodput_bps'] * 100:5.1f}% | "
              f"{h['lat_mean'] * 1e3:11.1f} {n['lat_mean'] * 1e3:6.1f} {d['lat_mean'] * 100:5.1f}% | "
              f"{d['lat_p50'] * 100:7.1f}% | {h['lat_p99'] * 1e3:10.1f} {n['lat_p99'] * 1e3:6.1f} "
              f"{d['lat_p99'] * 100:5.1f}% | {','.join(m.replace('_bps', '') for m in miss)}")
    inside = sum(all(e[i] <= lim for (k, lim), e in zip(keys, (errs[k] for k, _ in keys))) for i in range(len(cases)))
    print("median error: " + ", ".join(f"{k.replace('_bps', '')} {statistics.median(v) * 100:.1f}%" for k, v in errs.items()))
    print("worst error:  " + ", ".join(f"{k.replace('_bps', '')} {max(v) * 100:.1f}%" for k, v in errs.items()))
    if worst[1] is not None:
        rate, buf, rtt, flows, variant = worst[1]
        print(f"worst case (error / target): {variant} x{flows} {rate / 1e6:g} Mb/s {buf // 1024} KiB {rtt * 1e3:.0f} ms: "
              + ", ".join(f"{k.replace('_bps', '')} {v * 100:.1f}%" for k, v in worst[2].items()))
    print(f"{inside} of {len(cases)} cases inside every target; CPU: hfcprov {sum(h['cpu_s'] for h in hfc):.1f} s, "
          f"ns-3 {sum(n['cpu_s'] for n in ref):.1f} s")


def rel(a: float, b: float) -> float:
    return abs(a - b) / b if b else (0.0 if a == b else float("inf"))


def main() -> None:
    global RECOVERY
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ns3-worker", help=argparse.SUPPRESS)
    ap.add_argument("--ns3-python", default=NS3_PYTHON)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sweep", type=int, default=200)
    ap.add_argument("--duration", type=float, default=60.0, help="simulated seconds for tables 1 and 2")
    ap.add_argument("--sweep-duration", type=float, default=20.0, help="simulated seconds per sweep point")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--grid", action="store_true",
                    help="issue 15's 48-case grid (Reno+SACK and CUBIC, 1 and 10 flows): goodput and loaded latency")
    ap.add_argument("--grid-duration", type=float, default=40.0)
    ap.add_argument("--grid-warmup", type=float, default=10.0, help="latency samples start here")
    ap.add_argument("--grid-only", action="store_true", help="skip tables 1-3")
    ap.add_argument("--loss", action="store_true", help="only table 5: plant loss 0.01-1%% at 50 Mb/s, 20 ms")
    ap.add_argument("--near-far", action="store_true", help="only table 6: a near (20 ms) and a far (80 ms) server")
    ap.add_argument("--losses", default="0.01%,0.1%,1%")
    ap.add_argument("--seeds", type=int, default=5, help="tables 5 and 6: runs per case on each side")
    ap.add_argument("--loss-duration", type=float, default=70.0, help="tables 5 and 6: simulated seconds")
    ap.add_argument("--speed-rates", metavar="RATES",
                    help="only the speed table, at each of these rates (e.g. 10M,100M,1G): one NewReno flow, 40 ms, "
                         "a buffer of one BDP (64 KiB at 10 Mb/s), the same packets at each rate (60 s at 10 Mb/s; "
                         "at least 5 s)")
    ap.add_argument("--recovery", choices=("sack", "newreno"), default=RECOVERY,
                    help="NewReno window growth with SACK (ns-3 default) or RFC 6582 recovery")
    args = ap.parse_args()
    RECOVERY = args.recovery
    if args.ns3_worker:
        spec = json.loads(args.ns3_worker)
        if "paths" in spec:
            print(json.dumps(ns3_paths_worker(spec["paths"])))
            return
        print(json.dumps(ns3_worker([tuple(p) for p in spec["points"]], spec["duration"], spec["sack"],
                                    spec.get("warmup"))))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    have_ns3 = Path(args.ns3_python).exists()
    if not have_ns3:
        print(f"ns-3 not found at {args.ns3_python}: python3 -m venv /work/ns3-venv && "
              "/work/ns3-venv/bin/pip install ns3 (about 2 min, 500 MB)")

    if args.grid_only:
        grid15(args, have_ns3)
        return
    if args.speed_rates:
        speed_rates(args, have_ns3)
        return
    if args.loss or args.near_far:
        if args.loss:
            loss_table(args, have_ns3)
        if args.near_far:
            near_far_table(args, have_ns3)
        return
    # 1. speed on one scenario
    hfc_runs = [run_hfc([SPEED_POINT], args.duration)[0] for _ in range(args.repeat)]
    ns3_runs = run_ns3(args.ns3_python, [SPEED_POINT] * args.repeat, args.duration) if have_ns3 else []
    print(f"\n1. speed: {args.duration:g} s simulated, NewReno ({RECOVERY} recovery), 10 Mb/s, 64 KiB, 40 ms "
          f"(median of {args.repeat})")
    print(f"{'simulator':<10} {'cpu s':>8} {'events':>9} {'events/s':>10} {'goodput Mb/s':>13} {'queue ms':>9}")
    rows = [("hfcprov", hfc_runs)] + ([("ns-3", ns3_runs)] if ns3_runs else [])
    med = {}
    for name, runs in rows:
        wall = statistics.median(r["cpu_s"] for r in runs)
        ev = runs[0]["events"]
        med[name] = wall
        print(f"{name:<10} {wall:8.3f} {ev:9d} {ev / wall:10.0f} {runs[0]['goodput_bps'] / 1e6:13.3f} "
              f"{runs[0]['queue_delay_mean'] * 1e3:9.2f}")
    if "ns-3" in med:
        pairs = sorted(n["cpu_s"] / h["cpu_s"] for h, n in zip(hfc_runs, ns3_runs))
        print(f"hfcprov is {med['ns-3'] / med['hfcprov']:.1f}x faster than ns-3 (CPU time of the run; "
              "ns-3's ~12 s of import and JIT not counted); run by run (i-th against i-th) "
              f"{pairs[0]:.1f} / {statistics.median(pairs):.1f} / {pairs[-1]:.1f}x (min / median / max)")

    # 2. agreement over the grid
    if have_ns3:
        hfc = run_hfc(GRID, args.duration)
        ns3 = run_ns3(args.ns3_python, GRID, args.duration)
        print(f"\n2. agreement with ns-3 ({args.duration:g} s each; target within 5%)")
        print(f"{'rate':>6} {'buffer':>7} {'rtt':>5} | {'goodput hfc':>11} {'ns-3':>7} {'diff':>6} | "
              f"{'qdelay hfc ms':>13} {'ns-3':>7} {'diff':>6} | {'drops hfc':>9}")
        worst_g = worst_q = 0.0
        for (rate, buf, rtt), h, n in zip(GRID, hfc, ns3):
            dg = rel(h["goodput_bps"], n["goodput_bps"])
            dq = rel(h["queue_delay_mean"], n["queue_delay_mean"])
            worst_g, worst_q = max(worst_g, dg), max(worst_q, dq)
            print(f"{rate / 1e6:5g}M {buf // 1024:6d}K {rtt * 1e3:4.0f}m | {h['goodput_bps'] / 1e6:11.3f} "
                  f"{n['goodput_bps'] / 1e6:7.3f} {dg * 100:5.1f}% | {h['queue_delay_mean'] * 1e3:13.2f} "
                  f"{n['queue_delay_mean'] * 1e3:7.2f} {dq * 100:5.1f}% | {h['drops']:9d}")
        print(f"worst: goodput {worst_g * 100:.1f}%, queueing delay {worst_q * 100:.1f}%")
        hfc_t = sum(h["cpu_s"] for h in hfc)
        ns3_t = sum(n["cpu_s"] for n in ns3)
        print(f"grid CPU time: hfcprov {hfc_t:.2f} s, ns-3 {ns3_t:.2f} s ({ns3_t / hfc_t:.1f}x)")

    if args.grid:
        grid15(args, have_ns3)
    if args.sweep <= 0:
        return
    # 3. a sweep of --sweep points through run_many
    from hfcprov.sim import run_many

    pts = []
    rates = (1e6, 2e6, 5e6, 10e6, 20e6)
    bufs = (8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576)
    rtts = (0.02, 0.04, 0.1, 0.2, 0.3)
    for rate in rates:
        for buf in bufs:
            for rtt in rtts:
                pts.append((rate, buf, rtt))
    pts = (pts * (args.sweep // len(pts) + 1))[: args.sweep]
    dur = args.sweep_duration
    scs = [scenario(r, b, t, dur, seed=i) for i, (r, b, t) in enumerate(pts)]
    t0 = time.perf_counter()
    res = run_many(scs, jobs=args.jobs)
    wall = time.perf_counter() - t0
    events = sum(r.extra["events"] for r in res)
    cpu = sum(r.extra["cpu_s"] for r in res)
    print(f"\n3. sweep: {len(scs)} scenarios (rates 1-20 Mb/s, buffers 8 KiB-1 MiB, RTT 20-300 ms) "
          f"x {dur:g} s simulated, run_many jobs={args.jobs}")
    print(f"wall {wall:.2f} s; CPU {cpu:.2f} s = {cpu / len(scs) * 1e3:.1f} ms per scenario; "
          f"{events / cpu:.0f} events per CPU second")
    if have_ns3:
        sample = list(range(0, len(pts), max(1, len(pts) // 10)))
        theirs = run_ns3(args.ns3_python, [pts[i] for i in sample], dur)
        ours = sum(res[i].extra["cpu_s"] for i in sample)
        ns3_cpu = sum(n["cpu_s"] for n in theirs)
        print(f"ns-3 on every {max(1, len(pts) // 10)}th point ({len(sample)} scenarios): CPU {ns3_cpu:.2f} s vs "
              f"hfcprov {ours:.2f} s ({ns3_cpu / ours:.1f}x); the whole sweep would take ns-3 about "
              f"{ns3_cpu / ours * cpu:.0f} CPU s")


if __name__ == "__main__":
    main()
