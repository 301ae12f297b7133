"""How the receiver ACKs, kernel against simulator: per ACK, the segments it covers and what sent it.

The kernel side (root) runs one case of ``bench/sim_vs_emu.py`` on its bed (a single flow with random
plant loss, or ``--near-far``) with a capture at the receiving server's ``net0`` (data as it arrives,
ACKs as they leave); ``--sim`` runs the same case in the simulator and records its receivers the same
way. Each ACK is put in one class by what the receiver held when it left:

- ``start``: new data before the receiver's first hole (the first slow start);
- ``ooo``: data held out of order (duplicate ACKs, and SACK while a hole is open);
- ``fill``: the ACK that fills a hole (or part of it);
- ``post``: the first 16 ACKs of in-order data after a hole filled (the sender's window just cut);
- ``gap``: the first 16 ACKs of in-order data after more than 150 ms without data (after an RTO);
- ``steady``: the rest of in-order data;
- ``spur``: a segment entirely below what was already ACKed (a spurious retransmission).

Per class it prints how many ACKs, the share covering 1, 2 and 3+ new segments, the share sent
within 0.5 ms of the last data segment's arrival ("at once") rather than by a timer, how long the
first segment an ACK of 2+ covers waited for it (p50/p90), and, for the kernel, of the single-segment
ACKs the share that followed a segment with PSH set (``tcp_measure_rcv_mss``'s ICSK_ACK_PUSHED: ACKed
once the application has read everything, ``tcp_cleanup_rbuf``) and the share that raised the
advertised window (``tcp_grow_window``); with the share of data segments carrying PSH.

    sudo nice -n 10 .venv/bin/python bench/ack_capture.py --cc reno --loss 1%
    nice -n 10 .venv/bin/python bench/ack_capture.py --cc reno --loss 1% --sim --seeds 3
    sudo nice -n 10 .venv/bin/python bench/ack_capture.py --near-far 20ms,80ms --rate 10M --cc cubic
    sudo nice -n 10 .venv/bin/python bench/ack_capture.py --rate 10M --rtt 40ms --loss 0 --flows 10

With ``--flows N`` the N connections to the one server are each analysed and their ACKs counted
together; each prints its share of data segments with PSH and the gaps between them.
"""

from __future__ import annotations

import argparse
import collections
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import near_far_capture as nfc  # noqa: E402
import sim_vs_emu as sve  # noqa: E402

from hfcprov.probe import DEFAULT_PORT  # noqa: E402
from hfcprov.units import parse_bytes, parse_duration, parse_rate  # noqa: E402

MSS = 1448
GAP = 0.15  # s without data before in-order data counts as after an RTO
GAP_ACKS = 16  # ACKs counted in the "gap" class after such a pause
AT_ONCE = 0.0005  # s: an ACK this soon after a data segment's arrival was sent by that arrival
POST_ACKS = 16  # ACKs counted in the "post" class after a hole fills
CLASSES = ("start", "ooo", "fill", "post", "gap", "steady", "spur")


def classify(events) -> dict:
    """``events``: time-ordered ``(t, "d", start, end)`` data arrivals and ``(t, "a", ack, 0)`` ACKs
    leaving, in segments. Returns per class a list of ``(new segments covered, sent at once)``."""
    out = collections.defaultdict(list)
    rcv_nxt = acked = 0.0
    held = []  # (start, end) above rcv_nxt
    seen_hole = False
    last_data = None
    gap_left = post_left = 0
    pending_cls = None
    psh = False
    last_win = None
    first_unacked = None  # arrival of the oldest in-order segment not yet ACKed
    for t, kind, a, b, x in events:
        if kind == "d":
            psh = x
            if last_data is not None and t - last_data > GAP:
                gap_left = GAP_ACKS
            last_data = t
            if first_unacked is None and b > acked + 1e-6 and a <= rcv_nxt + 1e-6:
                first_unacked = t
            if b <= acked + 1e-6:
                pending_cls = "spur"
            elif a <= rcv_nxt + 1e-6:
                rcv_nxt = max(rcv_nxt, b)
                filled = False
                for s, e in sorted(held):
                    if s <= rcv_nxt + 1e-6:
                        rcv_nxt = max(rcv_nxt, e)
                        filled = True
                held = [(s, e) for s, e in held if e > rcv_nxt + 1e-6]
                pending_cls = "fill" if filled else ("start" if not seen_hole else "steady")
                if pending_cls == "steady" and gap_left:
                    pending_cls = "gap"
                elif pending_cls == "steady" and post_left:
                    pending_cls = "post"
                if filled and not held:
                    post_left = POST_ACKS
                if held:
                    pending_cls = "fill" if filled else "ooo"
            else:
                seen_hole = True
                held.append((a, b))
                pending_cls = "ooo"
            continue
        new = a - acked
        cls = pending_cls or "steady"
        if new <= 1e-6 and cls not in ("spur",):
            cls = "ooo"
        if cls == "gap":
            gap_left -= 1
        elif cls == "post":
            post_left -= 1
        hold = t - first_unacked if first_unacked is not None and new > 1e-6 else None
        out[cls].append((round(new), last_data is not None and t - last_data <= AT_ONCE, psh,
                         last_win is not None and x > last_win, hold))
        if new > 1e-6:
            first_unacked = None
        last_win = x
        acked = max(acked, a)
    return out


def summarise(name: str, per_class: dict) -> None:
    print(name)
    for cls in CLASSES:
        v = per_class.get(cls, [])
        if not v:
            continue
        n = len(v)
        one = sum(1 for c, *_ in v if c == 1) / n
        two = sum(1 for c, *_ in v if c == 2) / n
        more = sum(1 for c, *_ in v if c >= 3) / n
        now = sum(1 for _, q, *_ in v if q) / n
        ones = [x for x in v if x[0] == 1] or [(0, 0, 0, 0, None)]
        holds = sorted(x[4] * 1e3 for x in v if x[4] is not None and x[0] >= 2)
        hold = (f"  held (2+): p50 {holds[len(holds) // 2]:.1f} p90 {holds[int(len(holds) * 0.9)]:.1f} ms"
                if holds else "")
        psh = sum(1 for x in ones if x[2]) / len(ones)
        win = sum(1 for x in ones if x[3]) / len(ones)
        print(f"  {cls:<7} {n:6d} ACKs  covering 1: {one:5.1%}  2: {two:5.1%}  3+: {more:5.1%}  "
              f"at once: {now:5.1%}  (of the 1s: after PSH {psh:5.1%}, window grew {win:5.1%})" + hold)


def merge(into: dict, more: dict) -> None:
    for k, v in more.items():
        into.setdefault(k, []).extend(v)


def kernel(args) -> int:
    rate, buffer = parse_rate(args.rate), parse_bytes(args.buffer)
    window = parse_duration(args.duration)
    near_far = args.near_far is not None
    if near_far:
        near, far = (parse_duration(x) for x in args.near_far.split(","))
        lab = sve.topology.up(rtt=near, prefix="hfemu-ack", docsis_version=sve.DOCSIS_VERSION)
    else:
        lab = sve.topology.up(rtt=parse_duration(args.rtt), loss=args.loss, prefix="hfemu-ack",
                              docsis_version=sve.DOCSIS_VERSION)
    pid, caps, found = None, [], {}
    try:
        if near_far:
            pid = sve.add_far_server(lab, (far - near) / 2)
        with tempfile.TemporaryDirectory(prefix="hfemu-ack-") as tmp:
            for node in ("srv", "far") if near_far else ("srv",):
                path = Path(tmp) / f"{node}.pcap"
                proc = subprocess.Popen(["ip", "netns", "exec", lab.ns(node), "dumpcap", "-q", "-i", "net0",
                                         "-s", "96", "-P", "-B", "64", "-f", "tcp", "-w", str(path)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                caps.append((node, proc, path))
            time.sleep(1.0)  # dumpcap is listening
            if near_far:
                res = sve.emulate_near_far(lab, rate, buffer, args.cc, window, 3.0)
                label = f"near/far ratio {res[0].goodput_bps / res[1].goodput_bps:.2f}"
            else:
                res = sve.emulate(lab, rate, buffer, args.flows, args.cc, window, 3.0, 5.0)
                label = f"goodput {res.goodput_bps / 1e6:.2f} Mb/s"
            for _, proc, _ in caps:
                proc.send_signal(signal.SIGINT)
                proc.wait(10)
            for node, _, path in caps:
                found[node] = nfc.read_pcap(path)
    finally:
        for _, proc, _ in caps:
            if proc.poll() is None:
                proc.kill()
        if pid is not None:
            sve.remove_far_server(lab, pid)
        lab.down()
    print(f"kernel, {args.rate} {args.buffer} {args.cc}, {label}")
    for node, pkts in found.items():
        conns = collections.Counter((p[1], p[3]) for p in pkts if p[4] == DEFAULT_PORT and p[7] > 0)
        per, dts_all = {}, []
        for (src, sport), _ in conns.most_common(1 if near_far else args.flows):  # the data connections
            dts = _kernel_flow(pkts, src, sport, per)
            dts_all.extend(dts)
        if dts_all:
            summarise(f"  receiver {node} ({'near' if node == 'srv' else 'far'})" if near_far else
                      f"  receiver ({len(conns.most_common(args.flows))} flows)", per)
    return 0


def _kernel_flow(pkts, src, sport, per) -> list:
    """One connection's data arrivals and ACKs: prints its PSH figures, adds its ACK classes to ``per``."""
    base = min(p[5] for p in pkts if p[1] == src and p[3] == sport and p[7] > 0)
    events = []
    for t, s, d, sp, dp, seq, ack, payload, _, flags, win in pkts:
        if s == src and sp == sport and payload > 0:
            events.append((t, "d", (seq - base) / MSS, (seq - base + payload) / MSS, bool(flags & 8)))
        elif d == src and dp == sport and payload == 0 and (ack - base) % 2**32 < 2**31:
            events.append((t, "a", ((ack - base) % 2**32) / MSS, 0, win))
    events.sort(key=lambda e: e[0])
    dts = [e for e in events if e[1] == "d"]
    last = [a for a, b in zip(dts, dts[1:]) if b[0] - a[0] > 0.001]
    print(f"  data segments {len(dts)}, with PSH {sum(e[4] for e in dts) / len(dts):.1%}; "
          f"last of a burst (next > 1 ms later) {len(last)}, with PSH {sum(e[4] for e in last) / max(1, len(last)):.1%}")
    print(f"  segments from one PSH to the next (new data): {psh_spacing(dts)}")
    merge(per, classify(events))
    return dts


def psh_spacing(dts) -> str:
    """Where PSH falls in the sequence space: the share of gaps of n segments between the ends of
    consecutive new (never seen before) data segments carrying PSH."""
    high, last, gaps = 0.0, None, collections.Counter()
    for e in dts:
        if e[3] <= high:
            continue
        high = e[3]
        if e[4]:
            if last is not None:
                gaps[min(round(high - last), 9)] += 1
            last = high
    n = sum(gaps.values()) or 1
    return ", ".join(f"{k}{'+' if k == 9 else ''}: {v / n:.0%}" for k, v in sorted(gaps.items()))


class _Recorder:
    """The simulated receivers' side of the capture: data in, ACKs out, per flow."""

    def __init__(self, net) -> None:
        from hfcprov.sim.link import Propagation

        self.events = collections.defaultdict(list)
        clock = net.engine
        hosts = net.recv_host.receivers
        for r in net.receivers:
            recv, link, ev = r.receive, r.link, self.events[r.flow]

            def receive(pkt, recv=recv, ev=ev):
                ev.append((clock.now, "d", pkt.seq, pkt.seq + getattr(pkt, "n", 1), pkt.psh))
                recv(pkt)

            def send(pkt, link=link, ev=ev):
                ev.append((clock.now, "a", pkt.seq, 0, 0))
                return link.send(pkt)

            hop = getattr(hosts[r.flow], "__self__", None)
            if isinstance(hop, Propagation):  # a far server: record after its own stretch
                hop.deliver = receive
            else:
                hosts[r.flow] = receive
            r.link = _Send(send)
        self.silences = collections.Counter()  # the senders' pauses over GAP, by what ended them
        self.senders = net.senders
        for snd in net.senders:
            snd.link = _Watched(snd, snd.link, clock, self.silences)

    def counters(self) -> str:
        """Per run: the senders' recoveries, RTOs, tail loss probes, and their pauses over ``GAP`` between
        two sends, by what ended them (an ACK, a probe, the RTO)."""
        ss, sil = self.senders, self.silences
        probes = sum(getattr(s.rec, "probes", 0) for s in ss)
        return (f"senders: recoveries {sum(s.fast_retransmits for s in ss)}, RTOs {sum(s.timeouts for s in ss)}, "
                f"probes {probes}; pauses over {GAP * 1e3:.0f} ms between sends {sum(sil.values())} "
                f"(ended by an ACK {sil['ack']}, a probe {sil['probe']}, the RTO {sil['rto']})")


class _Watched:
    """A sender's link, watched: a pause of over ``GAP`` between two of its sends is filed by what ended it."""

    __slots__ = ("clock", "last", "link", "sender", "silences", "state")

    def __init__(self, sender, link, clock, silences) -> None:
        self.sender, self.link, self.clock, self.silences = sender, link, clock, silences
        self.last = None
        self.state = (0, 0)

    def _note(self) -> None:
        s, now = self.sender, self.clock.now
        state = (s.timeouts, getattr(s.rec, "probes", 0))
        if self.last is not None and now - self.last > GAP:
            why = "rto" if state[0] > self.state[0] else "probe" if state[1] > self.state[1] else "ack"
            self.silences[why] += 1
        self.last, self.state = now, state

    def send(self, pkt):
        self._note()
        return self.link.send(pkt)

    def send_train(self, train):
        self._note()
        return self.link.send_train(train)

    def __getattr__(self, name):
        return getattr(self.link, name)


class _Send:
    __slots__ = ("send",)

    def __init__(self, send) -> None:
        self.send = send


def simulated(args) -> int:
    from hfcprov.sim.run import Network

    rate, buffer = parse_rate(args.rate), parse_bytes(args.buffer)
    window = parse_duration(args.duration)
    rec = {}
    real_run = sve.run

    def run(sc):
        net = Network(sc)
        rec["r"] = _Recorder(net)
        return net.run()

    sve.run = run
    total = collections.defaultdict(dict)
    try:
        for seed in range(1, args.seeds + 1):
            if args.near_far:
                near, far = (parse_duration(x) for x in args.near_far.split(","))
                r = sve.simulate_near_far(rate, buffer, near, far, args.cc, window, 3.0, seed=seed)
                print(f"simulator seed {seed}: near/far ratio {r.flows[0].goodput_bps / r.flows[1].goodput_bps:.2f}; "
                      f"{rec['r'].counters()}")
                flows = {0: "near", 1: "far"}
            else:
                r = sve.simulate(rate, buffer, parse_duration(args.rtt), args.flows, args.cc, window, 3.0, seed=seed,
                                 loss=args.loss)
                print(f"simulator seed {seed}: goodput {r.goodput_bps / 1e6:.2f} Mb/s; {rec['r'].counters()}")
                flows = {k: "flow" for k in range(args.flows)}
            for k, f in flows.items():
                events = sorted(rec["r"].events[k], key=lambda e: e[0])
                dts = [e for e in events if e[1] == "d"]
                last = [a for a, b in zip(dts, dts[1:]) if b[0] - a[0] > 0.001]
                print(f"  {f}: data segments {len(dts)}, with PSH {sum(e[4] for e in dts) / max(1, len(dts)):.1%}; "
                      f"last of a burst (next > 1 ms later) {len(last)}, with PSH "
                      f"{sum(e[4] for e in last) / max(1, len(last)):.1%}; "
                      f"segments from one PSH to the next (new data): {psh_spacing(dts)}")
                merge(total[f], classify(events))
    finally:
        sve.run = real_run
    for f, per in total.items():
        summarise(f"simulator, {args.rate} {args.buffer} {args.cc}, seeds 1-{args.seeds}, {f}", per)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rate", default="50M")
    ap.add_argument("--buffer", default="256KiB")
    ap.add_argument("--rtt", default="20ms")
    ap.add_argument("--loss", default="1%", help="random loss per direction (single flow)")
    ap.add_argument("--near-far", metavar="NEAR,FAR", help="instead: the near/far pair, no plant loss")
    ap.add_argument("--cc", default="reno")
    ap.add_argument("--flows", type=int, default=1, help="flows to the one server (not with --near-far)")
    ap.add_argument("--duration", default="30s", help="measured window")
    ap.add_argument("--sim", action="store_true", help="the simulator's side instead of the kernel's")
    ap.add_argument("--seeds", type=int, default=1, help="--sim: seeds 1..n")
    ap.add_argument("--sim-tcp", action="append", default=[], metavar="KEY=VALUE",
                    help="--sim: change the simulated hosts' TcpOptions, as bench/sim_vs_emu.py's")
    args = ap.parse_args()
    args.loss = sve._loss(args.loss)
    sve.set_sim_tcp(args.sim_tcp)
    return simulated(args) if args.sim else kernel(args)


if __name__ == "__main__":
    sys.exit(main())
