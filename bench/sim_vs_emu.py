"""Simulator vs emulated modem, point by point: the same service flow, base RTT, buffer and framing.

The emulated modem (network namespaces, tc htb + bfifo, kernel TCP) is measured by the probe;
the simulator runs the same ``ServiceFlow`` (``Scenario.from_service_flow``: the queue is
``hfcprov.model``'s ``queue_size``, the one the emulator applies), the same base RTT, Linux's
framing (14-byte Ethernet header counted by htb, 1448-byte segments with 52 bytes of IP/TCP
headers with timestamps), Linux's timers (200 ms minimum RTO kept above srtt, 40 ms delayed ACK) and window
growth per segment acked, the same
flows and congestion control, idle phase, warm-up (the probe's adaptive one, as used) and
measured window. Per point it prints both and the error for goodput, loaded latency (mean,
p50, p99) and idle RTT.

The emulator side is also the Linux reference for the simulator's own validation (issue 15):
``--linux-only`` measures just the kernel and ``--json FILE`` writes every case's figures
(``RunResult.to_dict`` per case, keyed by the case's name) for other benches to read.

The measured window is at least ``--duration`` and covers ``--cycles`` sawtooth periods of the
case's TCP (``sawtooth_period``: a Reno cycle over a 256 KiB buffer at 2 Mb/s lasts over a
minute), up to ``--max-window``: a shorter window samples the two sides at different phases.

Needs root. CPU-heavy (real time: about window + warm-up + 8 s per case); on a shared
machine the kernel's figures are what they are, the simulator's do not depend on load.
``--sim-from FILE`` re-runs only the simulator against the kernel figures a ``--json`` run saved.

    sudo .venv/bin/python bench/sim_vs_emu.py --small                 # 4 cases, ~2 min
    sudo .venv/bin/python bench/sim_vs_emu.py --json grid.json        # the 48-case grid, ~25 min
    .venv/bin/python bench/sim_vs_emu.py --sim-from grid.json         # simulator side only, seconds
    sudo .venv/bin/python bench/sim_vs_emu.py --linux-only --json linux.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hfcprov.emu import netns, shaping, timekeeping, topology  # noqa: E402
from hfcprov.emu.offload import offloads_off  # noqa: E402
from hfcprov.emu.measure import measure  # noqa: E402
from hfcprov.fileio import atomic_write
from hfcprov.probe import DEFAULT_PORT  # noqa: E402
from hfcprov.probe.run import ProbeSpec  # noqa: E402
from hfcprov.results import RunResult  # noqa: E402
from hfcprov.sim import FlowSpec, LossSpec, Scenario, TcpOptions, run  # noqa: E402
from hfcprov.sim.hosts import LINUX  # noqa: E402
from hfcprov.sim.upload import tier_flow  # noqa: E402
from hfcprov.units import format_bytes, format_duration, format_rate, parse_bytes, parse_duration, parse_rate  # noqa: E402

# How Linux frames a segment on the emulated link: htb counts the 14-byte Ethernet header;
# timestamps make the TCP header 32 bytes, so 1500 - 52 = 1448 bytes of payload.
LINUX_FRAMING = {"overhead": 14}
# The Linux-matched hosts (hfcprov.sim.hosts.LINUX): Linux's timers (200 ms minimum RTO kept above srtt,
# 40 ms delayed ACK); window growth per segment acked (tcp_slow_start, tcp_cong_avoid_ai), not per ACK: with
# delayed ACKs a per-ACK Reno climbs half as fast (10 Mb/s, 16 KiB, 100 ms: -15% goodput); CUBIC in the
# kernel's integer arithmetic, which grows >= 5% per RTT until its first loss (10 Mb/s, 256 KiB, 40 ms after a
# HyStart exit: mean -11% without) and trails RFC 9438 under frequent losses (50 Mb/s, 20 ms, 1%: +13%
# without); RACK-TLP loss detection with PRR; new data in TSO-sized chunks (tso_defer: at 50 Mb/s the kernel's
# near flow sends 3-4 segments every other ACK, docs/sim.md)
LINUX_TCP = dict(LINUX)


def set_sim_tcp(assignments: list[str]) -> None:
    """``--sim-tcp KEY=VALUE`` items (this bench's and bench/near_far_capture.py's, bench/ack_capture.py's):
    the simulated hosts' TcpOptions for this run, read and checked as ``sim run --set tcp.KEY=VALUE`` is;
    a misspelt key or a bad value ends the bench in one line."""
    from hfcprov.sim.scenario import ScenarioError, apply_overrides

    try:
        d = apply_overrides({"rate": 1e6, "buffer": 65536, "tcp": {}}, [f"tcp.{a}" for a in assignments],
                            "--sim-tcp")
        opts = Scenario.from_dict(d, "--sim-tcp").tcp
    except ScenarioError as err:
        raise SystemExit(f"{Path(sys.argv[0]).name}: {err}") from None
    for key in d["tcp"]:
        if key in ("variant", "host"):
            raise SystemExit(f"{Path(sys.argv[0]).name}: --sim-tcp {key}: the hosts are Linux's, the TCP is --cc's")
        LINUX_TCP[key] = getattr(opts, key)
# the kernel's reno is NewReno with SACK; the simulator's "sack" is that
SIM_VARIANT = {"reno": "sack", "cubic": "cubic"}
# Both sides model the same modem (hfcprov.model.upstream_aqm): a DOCSIS 3.0 one, drop-tail for these
# flows without 24.40 (htb + bfifo on the emulator), the queue White et al.'s figures are about
DOCSIS_VERSION = "3.0"
# The emulated path's timing noise (its userspace delay line releases a packet up to a few tenths of a ms
# late: idle RTT p50 20.3-20.5 ms on a 20 ms line), as the simulator's jitter: without it two drop-tail
# flows lock into phase in the simulator and not on the bed (near/far pairs: docs/sim.md)
JITTER = 0.0005
HOST_PRIORITY = timekeeping.HOST_PRIORITY  # the emulated hosts' SCHED_FIFO priority (None: normal)
IDLE = 1.0  # s of probes before any load
PROBE_RATE = 10.0  # probes/s

GOODPUT_TARGET, LATENCY_TARGET = 0.05, 0.10  # issue 16: within 5% and 10%, every point


FRAME = 1514  # bytes a full segment occupies in the emulated queue (1448 + 52 + 14)


def sawtooth_period(rate: float, buffer: int, rtt: float, flows: int, cc: str) -> float:
    """Seconds between two losses of one flow in steady state, roughly: Reno halves and climbs one
    segment per loaded RTT back to the window that fills pipe + buffer; CUBIC returns to W_max in
    K = cbrt(W_max (1 - 0.7) / 0.4) s (RFC 9438), whatever the RTT."""
    pipe, queue = rate * rtt / 8 / FRAME, buffer / FRAME
    w_max = (pipe + queue) / flows  # segments per flow when the buffer overflows
    if cc == "cubic":
        return (w_max * 0.3 / 0.4) ** (1 / 3)
    loaded_rtt = rtt + 0.75 * buffer * 8 / rate  # the queue spends most of a cycle nearly full
    return w_max / 2 * loaded_rtt


LOSS_WINDOW = 30.0  # s: the shortest window of a case with random loss (at most --max-window)


def window_for(rate, buffer, rtt, flows, cc, duration: float, cycles: float, longest: float,
               loss: float = 0.0) -> float:
    """The measured window of a case: ``duration``, or ``cycles`` sawtooth periods if longer, at most ``longest``.

    With random loss the buffer's sawtooth does not set the cycle, the losses do, and a window of a few
    sawtooth periods holds too few of them: five kernel runs at 30 Mb/s, 30 ms, 0.2% (Reno) read 8.65-13.09
    Mb/s in 14 s windows and 9.12-11.66 in 30 s ones, so such a case is measured for ``LOSS_WINDOW``."""
    floor = max(duration, min(longest, LOSS_WINDOW)) if loss else duration
    return round(max(floor, min(longest, cycles * sawtooth_period(rate, buffer, rtt, flows, cc))), 1)


def case_name(rate, buffer, rtt, flows, cc, loss=0.0) -> str:
    name = f"{format_rate(rate)}/{format_bytes(buffer)}/{format_duration(rtt)}/{flows}x{cc}".replace(" ", "")
    return f"{name}/loss{loss * 100:g}%" if loss else name


def emulate(lab, rate, buffer, flows, cc, duration, warmup, adaptive):
    lab.apply([shaping.plan(tier_flow(rate, buffer))])
    return measure(lab, ProbeSpec(target=None, flows=flows, duration=duration, warmup=warmup, idle=IDLE, cc=cc,
                                  probe="icmp", rate=PROBE_RATE, adaptive_warmup=adaptive))


def simulate(rate, buffer, rtt, flows, cc, duration, warmup_used, seed=1, trace=False, loss=0.0):
    """The simulator's side; ``loss``: random loss on both directions, as the emulated plant drops
    every packet the CMTS forwards (data and ACKs) with that probability."""
    plant = {"data_loss": LossSpec("bernoulli", loss), "ack_loss": LossSpec("bernoulli", loss)} if loss else {}
    sc = Scenario.from_service_flow(
        tier_flow(rate, buffer), rtt=rtt, flows=[FlowSpec(start=IDLE) for _ in range(flows)],
        tcp=TcpOptions(variant=SIM_VARIANT[cc], **LINUX_TCP), probe_rate=PROBE_RATE,
        duration=IDLE + warmup_used + duration, warmup=IDLE + warmup_used, seed=seed,
        sample_interval=0.05 if trace else None, docsis_version=DOCSIS_VERSION, jitter=JITTER,
        **plant, **LINUX_FRAMING)
    return run(sc)


def _retx(r) -> str:
    """Retransmitted segments over the whole run (emu: the kernel's tcpi_total_retrans; sim: its count)."""
    counts = [f.retransmissions for f in r.flows if f.retransmissions is not None]
    return str(sum(counts)) if counts else "-"


def write_trace(path: Path, emu, sim, rate: float, measured_from: float) -> None:
    """The case's traces side by side, ms from load start: the probe's RTTs on the emulated modem
    and the simulator's queue as delay at the rate plus its probes' base RTT."""
    base = sim.latency_idle.p50 or 0.0
    lines = ["source,t_s,delay_ms"]
    lines += [f"emu,{t:.3f},{v * 1e3:.2f}" for t, v in emu.series.get("rtt", [])]
    lines += [f"sim,{t:.3f},{(q * 8 / rate + base) * 1e3:.2f}" for t, q in sim.series.get("queue_bytes", [])]
    path.write_text("\n".join(lines) + "\n")
    print(f"  trace: {path} (the measured window starts at {measured_from:.1f} s)")


# -- a near and a far server behind one tier ----------------------------------------------------------
FAR_ADDR = ("10.10.4.1", "10.10.4.2")  # the CMTS's side and the far server, on their own link
FAR_DEV = "dlfar"  # the far stretch's delay line, a TUN device in the CMTS namespace


def add_far_server(lab, extra_one_way: float) -> int:
    """A second server beside the lab's: its own namespace (``<lab>-far``) on a link from the CMTS; every
    packet to or from it crosses a userspace delay line in the CMTS namespace (``extra_one_way`` each way,
    on top of the lab's own delay). Returns the delay line's pid; ``remove_far_server`` undoes it."""
    cmts, far = lab.ns("cmts"), lab.ns("far")
    netns.add(far)
    netns.run(["ip", "-n", cmts, "link", "add", "far", "type", "veth", "peer", "name", "net0", "netns", far])
    for ns, dev, addr in ((cmts, "far", FAR_ADDR[0]), (far, "net0", FAR_ADDR[1])):
        netns.run(["ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev])
        netns.run(["ip", "-n", ns, "link", "set", dev, "up"])
        offloads_off(ns, dev)
    netns.run(["ip", "-n", far, "route", "add", "default", "via", FAR_ADDR[0]])
    netns.run(["sysctl", "-q", "-w", "net.ipv4.tcp_no_metrics_save=1", "net.ipv6.conf.all.disable_ipv6=1"], ns=far)
    netns.run(["ip", "tuntap", "add", "dev", FAR_DEV, "mode", "tun"], ns=cmts)
    netns.run(["ip", "link", "set", FAR_DEV, "up", "txqueuelen", "10000"], ns=cmts)
    netns.run(["sysctl", "-q", "-w", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
               f"net.ipv4.conf.{FAR_DEV}.rp_filter=0", f"net.ipv4.conf.{FAR_DEV}.accept_local=1"], ns=cmts)
    netns.run(["ip", "route", "add", "default", "dev", FAR_DEV, "table", "101"], ns=cmts)
    netns.run(["ip", "rule", "add", "pref", "100", "iif", "far", "lookup", "101"], ns=cmts)
    netns.run(["ip", "rule", "add", "pref", "101", "iif", "rf", "to", f"{FAR_ADDR[1]}/32", "lookup", "101"], ns=cmts)
    lab.state_dir.mkdir(parents=True, exist_ok=True)
    pid = lab.spawn("cmts", [sys.executable, "-m", "hfcprov.emu.delayline", "--dev", FAR_DEV,
                             "--delay", repr(extra_one_way), "--control", str(far_control(lab))])
    deadline = time.monotonic() + 10
    while "NO-CARRIER" in netns.run(["ip", "link", "show", FAR_DEV], ns=cmts):
        if time.monotonic() > deadline:
            raise SystemExit("the far server's delay line did not start")
        time.sleep(0.02)
    return pid


def far_control(lab) -> Path:
    """The far delay line's control socket (``hfcprov.emu.timekeeping``)."""
    return lab.state_dir / "far-delayline.sock"


def remove_far_server(lab, pid: int) -> None:
    _stop(pid)
    subprocess.run(["ip", "netns", "del", lab.ns("far")], check=False, capture_output=True)


def _stop(pid: int) -> None:
    """End a helper this bench started (by its pid) and reap it."""
    try:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def emulate_near_far(lab, rate, buffer, cc, window, warmup, priority=HOST_PRIORITY):
    """One kernel flow to each server at once, each measured by its own probe (same start, same window):
    ``(near, far)`` RunResults. ``priority``: the hosts' (probes', responders') SCHED_FIFO priority, as
    ``hfcprov.emu.measure`` runs them; None leaves them at normal scheduling."""
    lab.apply([shaping.plan(tier_flow(rate, buffer))])
    port = str(DEFAULT_PORT)  # where the probe connects
    responder = lab.spawn("far", [sys.executable, "-m", "hfcprov.probe.responder", "--port", port],
                          priority=priority)
    near_resp = lab.spawn("srv", [sys.executable, "-m", "hfcprov.probe.responder", "--port", port],
                          priority=priority)
    try:
        deadline = time.monotonic() + 10
        listening = f":{DEFAULT_PORT:04X} "  # /proc/net/tcp's local port, in hex
        while any(listening not in netns.run(["cat", "/proc/net/tcp"], ns=lab.ns(n)) for n in ("far", "srv")):
            if time.monotonic() > deadline:
                raise SystemExit("probe responders did not start")
            time.sleep(0.05)
        with tempfile.TemporaryDirectory(prefix="hfemu-nf-") as tmp:
            procs = []
            for name, target in (("near", topology.ADDR["srv"]), ("far", FAR_ADDR[1])):
                spec = ProbeSpec(target=target, flows=1, duration=window, warmup=warmup, idle=IDLE, cc=cc,
                                 probe="icmp", rate=PROBE_RATE, adaptive_warmup=0.0, source="emu",
                                 shaped_rate_bps=rate)
                out = Path(tmp) / f"{name}.json"
                argv = ["ip", "netns", "exec", lab.ns("cpe"), sys.executable, "-m", "hfcprov.probe.worker",
                        json.dumps(asdict(spec)), str(out)]
                proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                if priority is not None:
                    timekeeping.raise_priority(priority, proc.pid)
                procs.append((proc, out))
            results = []
            for proc, out in procs:
                _, err = proc.communicate(timeout=IDLE + warmup + window + 60)
                if proc.returncode != 0 or not out.exists():
                    raise SystemExit(f"probe failed: {err.strip().splitlines()[-1:] or 'no output'}")
                results.append(RunResult.from_dict(json.loads(out.read_text())))
            return tuple(results)
    finally:
        _stop(responder)
        _stop(near_resp)


def simulate_near_far(rate, buffer, near, far, cc, window, warmup, seed=1, start="handshake"):
    """The simulator's side of ``emulate_near_far``. Each flow's data starts one base RTT after the load
    phase, as the bed's do after their handshake: the far flow 60 ms after the near one at 20/80 ms
    (captures on the bed: its first segment 60-79 ms after the near flow's, with 0.5-18 ms of process
    start skew, which ``start_jitter`` covers); starting both at once hands the far flow the first
    slow start's share (docs/sim.md). ``start="together"``: both at once (this bench before November 2026)."""
    lag = (near, far) if start == "handshake" else (0.0, 0.0)
    sc = Scenario.from_service_flow(
        tier_flow(rate, buffer), rtt=near,
        flows=[FlowSpec(start=IDLE + lag[0]), FlowSpec(start=IDLE + lag[1], rtt=far)],
        tcp=TcpOptions(variant=SIM_VARIANT[cc], **LINUX_TCP), probe_rate=PROBE_RATE,
        duration=IDLE + warmup + window, warmup=IDLE + warmup, seed=seed, sample_interval=None,
        docsis_version=DOCSIS_VERSION, jitter=JITTER, **LINUX_FRAMING)
    return run(sc)


def near_far_main(args, rates, buffers, ccs) -> int:
    """``--near-far NEAR,FAR``: the kernel and the simulator with one flow to each server (``--runs 0``: the
    simulator only, ``--sim-seeds`` seeds). ``--json`` keeps the kernel's goodput pairs per case, ``--sim-from``
    compares the simulator with a kept file's instead of running the bed (its cases, window and warm-up)."""
    near, far = (parse_duration(x) for x in args.near_far.split(","))
    window, warmup = parse_duration(args.duration), parse_duration(args.warmup)
    saved = json.loads(Path(args.sim_from).read_text()) if args.sim_from else None
    if saved is not None:
        window, warmup = saved["window"], saved["warmup"]
    bed = args.runs and saved is None
    lab = topology.up(rtt=near, prefix="hfemu-sve", docsis_version=DOCSIS_VERSION) if bed else None
    pid = None
    rows = []
    kept: dict = {"near": near, "far": far, "window": window, "warmup": warmup, "cases": {}}
    try:
        if lab is not None:
            pid = add_far_server(lab, (far - near) / 2)
        for rate, buffer, cc in itertools.product(rates, buffers, ccs):
            name = f"{case_name(rate, buffer, near, 1, cc)}+far{format_duration(far).replace(' ', '')}"
            if saved is not None:
                if name not in saved["cases"]:
                    continue
                case = saved["cases"][name]
                kernel, loads = [tuple(k) for k in case["kernel"]], case["loads"]
                sims = [simulate_near_far(rate, buffer, near, far, cc, window, warmup, seed=k + 1,
                                          start=args.sim_start)
                        for k in range(args.sim_seeds or len(kernel))]
                rows.append((rate, buffer, cc, kernel, [(r.flows[0].goodput_bps, r.flows[1].goodput_bps)
                                                        for r in sims], loads))
                continue
            kernel, loads = [], []
            for _ in range(args.runs if bed else 0):
                n_res, f_res = emulate_near_far(lab, rate, buffer, cc, window, warmup)
                kernel.append((n_res.goodput_bps, f_res.goodput_bps))
                loads.append(os.getloadavg()[0])
                print(f"{name}  emu near "
                      f"{n_res.goodput_bps / 1e6:7.2f} far {f_res.goodput_bps / 1e6:7.2f} Mb/s  ratio "
                      f"{n_res.goodput_bps / f_res.goodput_bps:5.2f}  idle {n_res.latency_idle.p50 * 1e3:.1f} / "
                      f"{f_res.latency_idle.p50 * 1e3:.1f} ms  load {loads[-1]:.1f}", flush=True)
            sims = []
            for k in range(args.sim_seeds or args.runs):
                r = simulate_near_far(rate, buffer, near, far, cc, window, warmup, seed=k + 1, start=args.sim_start)
                sims.append((r.flows[0].goodput_bps, r.flows[1].goodput_bps))
            rows.append((rate, buffer, cc, kernel, sims, loads))
            kept["cases"][name] = {"kernel": kernel, "loads": loads}
    finally:
        if pid is not None:
            remove_far_server(lab, pid)
        if lab is not None:
            lab.down()
    if args.json and bed:
        atomic_write(args.json, json.dumps(kept, indent=1))  # a run stopped midway leaves the last whole file
    print(f"\nnear ({format_duration(near)}) and far ({format_duration(far)}) server, one flow each, "
          f"{len(rows[0][3]) if rows else 0} kernel runs, simulator seeds 1..{len(rows[0][4]) if rows else 0}; "
          "goodput Mb/s and near/far "
          "ratio, median [min-max]")
    print(f"{'case':<24}{'kernel near / far':>20}{'ratio':>19}{'sim near / far':>18}{'ratio':>19}"
          f"{'ratio err':>10}{'load':>10}")
    for rate, buffer, cc, kernel, sims, loads in rows:
        def pair(v):
            return (f"{statistics.median(a for a, _ in v) / 1e6:.2f} / "
                    f"{statistics.median(b for _, b in v) / 1e6:.2f}")

        def ratio(v):
            if not v:
                return None, "-"
            rs = sorted(a / b for a, b in v)
            return statistics.median(rs), f"{statistics.median(rs):.2f} [{rs[0]:.2f}-{rs[-1]:.2f}]"

        (rk, tk), (rs, ts) = ratio(kernel), ratio(sims)
        err = f"{rs / rk - 1:>+10.1%}" if rk else f"{'-':>10}"
        print(f"{f'{format_rate(rate)}/{format_bytes(buffer)}/{cc}'.replace(' ', ''):<24}"
              f"{pair(kernel) if kernel else '-':>20}{tk:>19}{pair(sims):>18}{ts:>19}{err}"
              f"{f'{min(loads):.1f}-{max(loads):.1f}' if loads else '-':>10}")
    return 0


FIGURES = (  # name, how to read it, tolerance
    ("goodput", lambda r: r.goodput_bps, GOODPUT_TARGET),
    ("lat_mean", lambda r: r.latency_loaded.mean, LATENCY_TARGET),
    ("lat_p50", lambda r: r.latency_loaded.p50, LATENCY_TARGET),
    ("lat_p99", lambda r: r.latency_loaded.p99, LATENCY_TARGET),
    ("idle_rtt", lambda r: r.latency_idle.p50, LATENCY_TARGET),
)


def errors(emu, sim) -> dict:
    out = {}
    for name, get, _tol in FIGURES:
        e, s = get(emu), get(sim)
        out[name] = None if not e or s is None else s / e - 1
    return out


def _row(label: str, r, retx: str, source: str) -> str:
    return (f"{label:<28}{source:>5}{r.goodput_bps / 1e6:>10.3f}"
            + "".join(f"{(get(r) or 0) * 1e3:>10.1f}" for _, get, _ in FIGURES[1:4])
            + f"{(r.latency_idle.p50 or 0) * 1e3:>9.1f}{retx:>6}")


def summary(errs: dict) -> list[str]:
    """Per figure: cases within target, the median |error| and the worst case."""
    lines = [f"{'figure':<10}{'target':>8}{'within':>9}{'median |err|':>14}   worst case"]
    for fname, _get, tol in FIGURES:
        vals = [(abs(e[fname]), e[fname], name) for name, e in errs.items() if e.get(fname) is not None]
        if not vals:
            continue
        within = sum(v <= tol for v, _, _ in vals)
        worst = max(vals)
        lines.append(f"{fname:<10}{tol:>8.0%}{f'{within}/{len(vals)}':>9}{statistics.median(v for v, _, _ in vals):>14.1%}"
                     f"   {worst[1]:+.1%} {worst[2]}")
    return lines


def _loss(text: str) -> float:
    """A loss fraction (0.001) or percentage (0.1%)."""
    text = text.strip()
    return float(text[:-1]) / 100 if text.endswith("%") else float(text)


def _median_result(results: list) -> RunResult:
    """One run standing for several: each figure of ``FIGURES`` is the median over the runs."""
    if len(results) == 1:
        return results[0]
    mid = RunResult.from_dict(results[0].to_dict(series=False))
    mid.goodput_bps = statistics.median(r.goodput_bps for r in results)
    for part in ("latency_loaded", "latency_idle"):
        for stat in ("mean", "p50", "p99"):
            vals = [getattr(getattr(r, part), stat) for r in results if getattr(getattr(r, part), stat) is not None]
            setattr(getattr(mid, part), stat, statistics.median(vals) if vals else None)
    return mid


def main() -> int:
    global JITTER
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rates", default="2M,10M")
    ap.add_argument("--buffers", default="16KiB,64KiB,256KiB")
    ap.add_argument("--rtts", default="40ms,100ms")
    ap.add_argument("--flows", default="1,10")
    ap.add_argument("--cc", default="reno,cubic")
    ap.add_argument("--duration", default="10s", help="shortest measured window per case")
    ap.add_argument("--cycles", type=float, default=2.0,
                    help="the window covers at least this many sawtooth periods (sawtooth_period)")
    ap.add_argument("--max-window", default="120s", help="longest measured window per case")
    ap.add_argument("--warmup", default="3s", help="warm-up (the probe adapts it, up to --adaptive more)")
    ap.add_argument("--adaptive", default="5s")
    ap.add_argument("--small", action="store_true", help="2 Mb/s and 10 Mb/s, 64 KiB, 40 ms, 1 flow, reno and cubic (4 cases)")
    ap.add_argument("--linux-only", action="store_true", help="measure the kernel only (the Linux reference)")
    ap.add_argument("--json", help="write every case's figures (emu and sim RunResults; with --near-far the kernel's "
                                   "goodput pairs) here")
    ap.add_argument("--sim-from", metavar="FILE", help="no emulator: compare the simulator with the kernel figures "
                                                       "a --json run saved in FILE (its cases and windows; with --near-far a near/far "
                                                       "run's)")
    ap.add_argument("--losses", default="0", help="random loss per direction on the plant, e.g. 0.01%%,0.1%%,1%% "
                                                   "(the emulator drops in the CMTS's forward path, both ways)")
    ap.add_argument("--runs", type=int, default=1, help="kernel runs per case (and simulator seeds 1..n); "
                                                        "the error compares medians")
    ap.add_argument("--sim-tcp", action="append", default=[], metavar="KEY=VALUE",
                    help="change the simulated hosts' TcpOptions (repeatable), e.g. recovery=sack to compare "
                         "with RFC 6675 recovery")
    ap.add_argument("--sim-jitter", default=None, help=f"the simulated path's timing noise (default {JITTER * 1e3:g}ms)")
    ap.add_argument("--sim-seeds", type=int, default=0, help="simulator runs per case (seeds 1..n; default: as "
                                                              "many as kernel runs)")
    ap.add_argument("--near-far", metavar="NEAR,FAR", help="instead of the grid: one flow to a near and one to a "
                    "far server (base RTTs, e.g. 20ms,80ms) for each rate, buffer and cc")
    ap.add_argument("--sim-start", choices=("handshake", "together"), default="handshake",
                    help="--near-far: each simulated flow starts one base RTT late, as after the bed's handshake "
                         "(default), or both at once")
    ap.add_argument("--trace", metavar="CASE", help="write CASE's delay traces (emu probes, sim queue) as CSV, "
                                                     "e.g. 2Mb/s/64KiB/40ms/1xcubic")
    args = ap.parse_args()
    if args.small:
        args.buffers, args.rtts, args.flows, args.cc = "64KiB", "40ms", "1", "reno,cubic"
    rates = [parse_rate(x) for x in args.rates.split(",")]
    buffers = [parse_bytes(x) for x in args.buffers.split(",")]
    rtts = [parse_duration(x) for x in args.rtts.split(",")]
    flows = [int(x) for x in args.flows.split(",")]
    ccs = args.cc.split(",")
    duration, warmup, adaptive, longest = (parse_duration(args.duration), parse_duration(args.warmup),
                                           parse_duration(args.adaptive), parse_duration(args.max_window))
    if args.sim_jitter is not None:
        JITTER = parse_duration(args.sim_jitter)
    set_sim_tcp(args.sim_tcp)  # the simulated hosts for this run (hfcprov.sim.hosts.LINUX by default)
    if args.near_far:
        return near_far_main(args, rates, buffers, ccs)
    losses = [_loss(x) for x in args.losses.split(",")]
    saved = json.loads(Path(args.sim_from).read_text()) if args.sim_from else None
    out: dict = {}
    errs: dict = {}
    spreads: dict = {}
    print(f"{'case':<28}{'':>5}{'goodput':>10}{'lat mean':>10}{'lat p50':>10}{'lat p99':>10}{'idle':>9}"
          f"{'retx':>6}{'warm':>6}{'window':>7}{'load':>6}")
    misses = 0
    started = time.monotonic()
    for rtt, loss in itertools.product(rtts, losses):
        cases = [(case_name(rate, buffer, rtt, n, cc, loss), rate, buffer, n, cc)
                 for rate, buffer, n, cc in itertools.product(rates, buffers, flows, ccs)]
        if saved is not None:
            cases = [c for c in cases if c[0] in saved]
            if not cases:
                continue
        lab = None if saved is not None else topology.up(rtt=rtt, loss=loss, prefix="hfemu-sve",
                                                          docsis_version=DOCSIS_VERSION)
        try:
            for name, rate, buffer, n, cc in cases:
                if saved is not None:
                    row = saved[name]
                    window = row["window"]
                    kernel = [(RunResult.from_dict(k["emu"]), k["warmup_used"], k.get("load"))
                              for k in row.get("runs") or [row]]
                else:
                    window = window_for(rate, buffer, rtt, n, cc, duration, args.cycles, longest, loss)
                    kernel = []
                    for _ in range(args.runs):
                        emu = emulate(lab, rate, buffer, n, cc, window, warmup, adaptive)
                        kernel.append((emu, emu.extra.get("warmup_used", warmup), os.getloadavg()[0]))
                    row = {"emu": kernel[0][0].to_dict(series=False), "warmup_used": kernel[0][1], "window": window}
                    if args.runs > 1:
                        row["runs"] = [{"emu": e.to_dict(series=False), "warmup_used": u, "load": ld}
                                       for e, u, ld in kernel]
                for emu, used, load in kernel:
                    print(_row(name, emu, _retx(emu), "emu") + f"{used:>6.1f}{window:>7.0f}"
                          + (f"{load:>6.1f}" if load is not None else ""), flush=True)
                if args.linux_only:
                    out[name] = row
                    continue
                seeds = args.sim_seeds or len(kernel)
                sims = [simulate(rate, buffer, rtt, n, cc, window, kernel[k % len(kernel)][1], seed=k + 1,
                                 trace=args.trace == name, loss=loss) for k in range(seeds)]
                for sim in sims:
                    print(_row("", sim, _retx(sim), "sim"))
                emu_mid, sim_mid = _median_result([e for e, _, _ in kernel]), _median_result(sims)
                err = errors(emu_mid, sim_mid)
                row.update(sim=sims[0].to_dict(series=False), error=err)
                if len(sims) > 1 or len(kernel) > 1:
                    row["sim_runs"] = [r.to_dict(series=False) for r in sims]
                    spreads[name] = ([e.goodput_bps for e, _, _ in kernel], [r.goodput_bps for r in sims],
                                     [ld for _, _, ld in kernel if ld is not None])
                errs[name] = err
                if args.trace == name:
                    write_trace(Path(f"{name.replace('/', '_')}.trace.csv"), kernel[0][0], sims[0], rate,
                                IDLE + kernel[0][1])
                flags = []
                for fname, _get, tol in FIGURES:
                    e = err[fname]
                    flags.append(f"{'' if e is None else f'{e:+.1%}':>{10 if fname != 'idle_rtt' else 9}}"
                                 + ("*" if e is not None and abs(e) > tol else " "))
                    misses += e is not None and abs(e) > tol
                print(f"{'':<28}{'err' if len(sims) == 1 else 'e(m)':>5}" + "".join(flags).replace("* ", "*").rstrip(),
                      flush=True)
                out[name] = row
        finally:
            if lab is not None:
                lab.down()
    if spreads:
        print("\ngoodput, Mb/s, min / median / max (kernel runs one after another; simulator seeds 1..n), "
              "load average (1 min) over the kernel runs")
        print(f"{'case':<40}{'kernel':>22}{'simulator':>22}{'median err':>12}{'load':>12}")
        for name, (k, sm, ld) in spreads.items():
            def mmm(v):
                return f"{min(v) / 1e6:.2f} / {statistics.median(v) / 1e6:.2f} / {max(v) / 1e6:.2f}"
            print(f"{name:<40}{mmm(k):>22}{mmm(sm):>22}{statistics.median(sm) / statistics.median(k) - 1:>+12.1%}"
                  f"{(f'{min(ld):.1f}-{max(ld):.1f}' if ld else '-'):>12}")
    print(f"\n{len(out)} cases in {time.monotonic() - started:.0f} s; targets: goodput within "
          f"{GOODPUT_TARGET:.0%}, latency within {LATENCY_TARGET:.0%}; * marks a miss ({misses} figures missed)")
    if errs:
        print("\n".join(summary(errs)))
    print("Note: helpers share 2 cores today: the kernel's figures carry that load; the simulator's do not.")
    if args.json:
        atomic_write(args.json, json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
