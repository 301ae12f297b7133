"""Why a near and a far flow share a tier as they do: packet-level figures for one near/far case.

The kernel side (root; the bed of ``bench/sim_vs_emu.py --near-far``) runs the case once with
captures at the CPE's ``lan0`` (what the hosts send and receive) and at the CMTS's ``rf`` (what
left the modem's queue), and optionally on the modem's delay line (``--delay-line``); the
simulator side (``--sim``, no root) runs the same case with ``bench/sim_vs_emu.simulate_near_far``.
Per flow it prints: goodput, segments dropped at the bottleneck, loss events (drops less than
200 ms apart are one event) and how many of them fell within 100 ms of the other flow's, the
share of data packets sent in bursts of n (packets under 100 us apart), the first data segment's
time, and (kernel) single-segment ACKs in the first 2 s, the delay line's lateness per pass, and
from ``ss -tin`` on the CPE every 250 ms each socket's cwnd in the first second and median srtt.

    sudo nice -n 10 .venv/bin/python bench/near_far_capture.py --rate 50M --cc reno --delay-line
    nice -n 10 .venv/bin/python bench/near_far_capture.py --rate 50M --cc reno --sim --seeds 3
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import struct
import subprocess
import sys
import statistics
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sim_vs_emu as sve  # noqa: E402

from hfcprov.probe import DEFAULT_PORT  # noqa: E402
from hfcprov.units import parse_bytes, parse_duration, parse_rate  # noqa: E402

BURST_GAP = 100e-6  # s: packets of one flow closer than this left as one burst
EVENT_GAP = 0.2  # s: drops closer than this are one loss event
TOGETHER = 0.1  # s: two flows' loss events this close hit both


def read_pcap(path: Path, raw: bool = False):
    """(time, src, dst, sport, dport, seq, ack, payload, ip id, TCP flags, window) of each TCP packet of a
    pcap file."""
    out = []
    data = path.read_bytes()
    nano = struct.unpack_from("<I", data)[0] == 0xA1B23C4D
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack_from("<IIII", data, off)
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        ip = pkt if raw else pkt[14:]
        if len(ip) < 40 or ip[0] >> 4 != 4 or ip[9] != 6 or (not raw and pkt[12:14] != b"\x08\x00"):
            continue
        ihl = (ip[0] & 15) * 4
        total, ip_id = struct.unpack_from(">HH", ip, 2)
        sport, dport, seq, ack, doff, flags, win = struct.unpack_from(">HHIIBBH", ip, ihl)
        out.append((sec + frac * (1e-9 if nano else 1e-6), ip[12:16], ip[16:20], sport, dport, seq, ack,
                    total - ihl - (doff >> 4) * 4, ip_id, flags, win))
    return out


def _addr(b: bytes) -> str:
    return ".".join(map(str, b))


def events(times: list[float]) -> list[list[float]]:
    ev: list[list[float]] = []
    for t in sorted(times):
        if ev and t - ev[-1][-1] <= EVENT_GAP:
            ev[-1].append(t)
        else:
            ev.append([t])
    return ev


def bursts(times: list[float]) -> dict[int, float]:
    """Share of packets that left in a burst of n."""
    sizes, n = [], 1
    for a, b in zip(times, times[1:]):
        if b - a < BURST_GAP:
            n += 1
        else:
            sizes.append(n)
            n = 1
    sizes.append(n)
    c = collections.Counter(sizes)
    return {k: round(k * v / len(times), 3) for k, v in sorted(c.items()) if k * v / len(times) >= 0.005}


def report(name: str, goodput: dict, drops: dict, sent: dict, first: dict, start: float, extra: dict,
           retx: dict | None = None) -> None:
    """``retx``: each flow's sender's count of retransmitted segments (beside the drops the captures saw: a
    sender that resends more than was dropped resent spuriously)."""
    print(name)
    flows = list(goodput)
    ev = {f: events(drops[f]) for f in flows}
    for f in flows:
        other = [o for o in flows if o != f]
        with_other = sum(any(abs(e[0] - o[0]) <= TOGETHER for x in other for o in ev[x]) for e in ev[f])
        resent = f" (resent {retx[f]})" if retx and retx.get(f) is not None else ""
        print(f"  {f:<5} goodput {goodput[f] / 1e6:6.2f} Mb/s  dropped {len(drops[f])}{resent}  first data at "
              f"{(first[f] - start) * 1e3:6.1f} ms  loss events {len(ev[f])} ({with_other} with the other flow's): "
              + " ".join(f"{e[0] - start:.2f}({len(e)})" for e in ev[f]))
        skip = len(sent[f]) // 10  # after the first slow start
        print(f"        bursts (n: share of packets) {bursts(sent[f][skip:])}" + extra.get(f, ""))


def _sample_ss(lab, until: threading.Event, out: list) -> None:
    """(monotonic time, destination, cwnd, srtt ms) of each probe socket on the CPE, every 250 ms."""
    while not until.wait(0.25):
        text = subprocess.run(["ip", "netns", "exec", lab.ns("cpe"), "ss", "-tinH", "dport", f"= :{DEFAULT_PORT}"],
                              capture_output=True, text=True).stdout
        now, dst = time.monotonic(), None
        for line in text.splitlines():
            words = line.split()
            if len(words) >= 5 and f":{DEFAULT_PORT}" in words[4]:
                dst = words[4].rsplit(":", 1)[0]
            elif dst:
                info = dict(w.split(":", 1) for w in words if ":" in w)
                if "cwnd" in info and "rtt" in info:
                    out.append((now, dst, int(info["cwnd"]), float(info["rtt"].split("/")[0])))
                dst = None


def kernel(args) -> int:
    rate, buffer = parse_rate(args.rate), parse_bytes(args.buffer)
    near, far = (parse_duration(x) for x in args.near_far.split(","))
    lab = sve.topology.up(rtt=near, prefix="hfemu-nfc", docsis_version=sve.DOCSIS_VERSION)
    pid = None
    caps = []
    try:
        pid = sve.add_far_server(lab, (far - near) / 2)
        with tempfile.TemporaryDirectory(prefix="hfemu-nfc-") as tmp:
            points = [("cpe", "lan0"), ("cmts", "rf")] + ([("cm", sve.topology.TUN)] if args.delay_line else [])
            for node, dev in points:
                path = Path(tmp) / f"{node}-{dev}.pcap"
                proc = subprocess.Popen(["ip", "netns", "exec", lab.ns(node), "dumpcap", "-q", "-i", dev, "-s", "96",
                                         "-P", "-B", "64", "-f", "tcp", "-w", str(path)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                caps.append((proc, path))
            time.sleep(1.0)  # dumpcap is listening
            stop, samples = threading.Event(), []
            sampler = threading.Thread(target=_sample_ss, args=(lab, stop, samples), daemon=True)
            sampler.start()
            t0 = time.monotonic()
            try:
                n_res, f_res = sve.emulate_near_far(lab, rate, buffer, args.cc, parse_duration(args.duration), 3.0)
            finally:
                stop.set()
                sampler.join()
            # the kernel's own HyStart exits (both flows leave from the CPE's namespace, fresh for this run)
            got = subprocess.run(["ip", "netns", "exec", lab.ns("cpe"), "nstat", "-az", "TcpExtTCPHystart*"],
                                 capture_output=True, text=True)
            nstat = got.stdout
            if got.returncode:  # the run's figures stand; only the kernel's HyStart counts are missing
                print(f"nstat in {lab.ns('cpe')}: exit {got.returncode}: "
                      f"{got.stderr.strip().splitlines()[-1] if got.stderr.strip() else 'no message'} "
                      "(HyStart exits not shown)", file=sys.stderr)
            for proc, _ in caps:
                proc.send_signal(signal.SIGINT)
                proc.wait(10)
            sent_pk, past_pk = read_pcap(caps[0][1]), read_pcap(caps[1][1])
            tun_pk = read_pcap(caps[2][1], raw=True) if args.delay_line else []
    finally:
        for proc, _ in caps:
            if proc.poll() is None:
                proc.kill()
        if pid is not None:
            sve.remove_far_server(lab, pid)
        lab.down()
    names = {sve.topology.ADDR["srv"]: "near", sve.FAR_ADDR[1]: "far"}
    arrived = {(p[2], p[3], p[5], p[8]) for p in past_pk if p[7] > 0}
    sent, drops, first = collections.defaultdict(list), collections.defaultdict(list), {}
    acks = collections.defaultdict(list)
    for t, src, dst, sport, dport, seq, ack, payload, ip_id, *_ in sent_pk:
        if dport == DEFAULT_PORT and payload > 0 and _addr(dst) in names:
            f = names[_addr(dst)]
            sent[f].append(t)
            first.setdefault(f, t)
            if (dst, sport, seq, ip_id) not in arrived:
                drops[f].append(t)
        elif sport == DEFAULT_PORT and payload == 0 and _addr(src) in names:
            acks[names[_addr(src)]].append((t, ack))
    start = min(first.values())
    extra = {}
    load_at = t0 + sve.IDLE  # the probes' load phase (their first data follows within ~0.1 s)
    for dst, f in names.items():
        mine = [(t - load_at, cwnd, srtt) for t, d, cwnd, srtt in samples if d == dst]
        early = " ".join(f"{t:.2f}s:{cwnd}" for t, cwnd, _ in mine if 0 < t < 1.05)
        later = [srtt for t, _, srtt in mine if t > 4.0]
        extra[f] = (f"\n        ss: cwnd in the first second {early}; median srtt after 4 s "
                    f"{statistics.median(later) if later else float('nan'):.1f} ms")
    for f, a in acks.items():
        singles = sum(1 for (t0, a0), (t1, a1) in zip(a, a[1:]) if t1 - start < 2.0 and a1 - a0 == 1448)
        extra[f] = extra.get(f, "") + f"\n        single-segment ACKs in the first 2 s: {singles}"
    if tun_pk:  # each packet crosses the TUN device twice: into the delay line, and out after the delay
        seen, late = {}, collections.defaultdict(list)
        for t, src, dst, sport, dport, seq, ack, payload, ip_id, *_ in tun_pk:
            key = (src, dst, sport, dport, seq, ack, ip_id)
            if key in seen:
                late[names.get(_addr(dst), names.get(_addr(src)))].append(t - seen.pop(key) - near / 2)
            else:
                seen[key] = t
        for f, v in late.items():
            v.sort()
            q = [v[int(p * (len(v) - 1))] * 1e6 for p in (0.1, 0.5, 0.9, 0.99)]
            extra[f] = extra.get(f, "") + ("\n        delay line lateness per pass p10/p50/p90/p99 "
                                           f"{q[0]:.0f}/{q[1]:.0f}/{q[2]:.0f}/{q[3]:.0f} us ({len(v)} packets)")
    hystart = {w[0].removeprefix("TcpExtTCPHystart"): int(w[1]) for w in map(str.split, nstat.splitlines())
               if len(w) > 1 and w[0].startswith("TcpExtTCPHystart")}
    if hystart:  # ...Detect counts exits by that test, ...Cwnd sums the windows they left at
        print(f"HyStart exits (nstat): ACK train {hystart.get('TrainDetect', 0)} (cwnd sum "
              f"{hystart.get('TrainCwnd', 0)}), delay {hystart.get('DelayDetect', 0)} (cwnd sum {hystart.get('DelayCwnd', 0)})")
    report(f"kernel, {args.rate} {args.buffer} {args.cc}, near/far ratio "
           f"{n_res.goodput_bps / f_res.goodput_bps:.2f} (load {os.getloadavg()[0]:.1f})",
           {"near": n_res.goodput_bps, "far": f_res.goodput_bps}, drops, sent, first, start, extra,
           {"near": n_res.flows[0].retransmissions, "far": f_res.flows[0].retransmissions})
    return 0


class _Watch:
    """Between the simulated senders and the bottleneck: notes each data packet and each drop."""

    def __init__(self, net, hop) -> None:
        self.net, self.hop = net, hop
        self.sent, self.drops = collections.defaultdict(list), collections.defaultdict(list)

    def send(self, pkt) -> bool:
        now = self.net.engine.now
        self.sent[pkt.flow].append(now)
        ok = self.hop(pkt)
        if not ok:
            self.drops[pkt.flow].append(now)
        return ok

    receive = send_train = send


def simulated(args) -> int:
    from hfcprov.sim import hystart
    from hfcprov.sim.run import Network

    rate, buffer = parse_rate(args.rate), parse_bytes(args.buffer)
    near, far = (parse_duration(x) for x in args.near_far.split(","))
    captured = {}
    real_run = sve.run

    def run(sc):  # simulate_near_far's run, with the watch in front of the bottleneck
        net = Network(sc)
        entry = net.entry
        watch = _Watch(net, entry.deliver if hasattr(entry, "deliver") else entry.receive)
        if hasattr(entry, "deliver"):  # the path's jitter: the watch sits after it, at the queue
            entry.deliver = watch.send
        else:
            for s in net.senders:
                s.link = watch
        captured["watch"] = watch
        return net.run()

    exits = {}
    real_exit = hystart.LinuxHyStart._exit

    def hystart_exit(self, s):  # where HyStart ends each flow's slow start
        if not self.found:
            exits.setdefault(s.flow, (s.engine.now, s.cwnd / s.mss))
        real_exit(self, s)

    sve.run = run
    hystart.LinuxHyStart._exit = hystart_exit
    try:
        for seed in range(1, args.seeds + 1):
            exits.clear()
            r = sve.simulate_near_far(rate, buffer, near, far, args.cc, parse_duration(args.duration), 3.0, seed=seed)
            w = captured["watch"]
            names = {0: "near", 1: "far"}  # flow 2 is the probe
            sent = {f: w.sent[k] for k, f in names.items()}
            first = {f: v[0] for f, v in sent.items()}
            extra = {f: (f"\n        HyStart ended slow start at cwnd {exits[k][1]:.0f}, "
                         f"{exits[k][0] - first[f]:.2f} s after its first segment") for k, f in names.items()
                     if k in exits}
            report(f"simulator, {args.rate} {args.buffer} {args.cc}, seed {seed}, near/far ratio "
                   f"{r.flows[0].goodput_bps / r.flows[1].goodput_bps:.2f}",
                   {"near": r.flows[0].goodput_bps, "far": r.flows[1].goodput_bps},
                   {f: w.drops[k] for k, f in names.items()}, sent, first, min(first.values()), extra,
                   {f: r.flows[k].retransmissions for k, f in names.items()})
    finally:
        sve.run = real_run
        hystart.LinuxHyStart._exit = real_exit
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--near-far", default="20ms,80ms")
    ap.add_argument("--rate", default="50M")
    ap.add_argument("--buffer", default="256KiB")
    ap.add_argument("--cc", default="reno")
    ap.add_argument("--duration", default="30s", help="measured window")
    ap.add_argument("--delay-line", action="store_true", help="kernel: capture on the modem's delay line too")
    ap.add_argument("--sim", action="store_true", help="the simulator's side instead of the kernel's")
    ap.add_argument("--seeds", type=int, default=1, help="--sim: seeds 1..n")
    ap.add_argument("--sim-jitter", default=None, help="--sim: the path's jitter (bench/sim_vs_emu.py's JITTER)")
    ap.add_argument("--sim-tcp", action="append", default=[], metavar="KEY=VALUE",
                    help="--sim: change the simulated hosts' TcpOptions, as bench/sim_vs_emu.py's")
    args = ap.parse_args()
    sve.set_sim_tcp(args.sim_tcp)
    if args.sim_jitter is not None:
        sve.JITTER = parse_duration(args.sim_jitter)
    return simulated(args) if args.sim else kernel(args)


if __name__ == "__main__":
    sys.exit(main())
