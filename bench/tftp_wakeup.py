#!/usr/bin/env python3
"""What each TFTP server spends when every datagram wakes it: modems coming back one at a time.

In a storm a server finds several datagrams per wake-up; on a quiet node (or in ``tftp_bootstorm.py``'s
``spread-10s``) each ACK arrives at a server that is asleep, and the wake-up is most of what it costs.
This bench isolates that cost. For each server (hfcprov static, tftpd-hpa, atftpd; ``--baseline DIR``
adds another checkout's hfcprov), fresh for every repeat and at the bench's nice value, one in-process
client fetches files one after another (one transfer in flight, windowsize 1, no options):

- ``short``: N files of 100 bytes, one DATA block each (an RRQ and one ACK per transfer);
- ``long``: N files of 8,000 bytes, 16 blocks each (an RRQ and 16 ACKs).

The anchor beside the C servers is ``python-floor``: the least a Python server can do per datagram, a
loop of 40 lines (``tftp_bootstorm.floor_serve``) making hfcprov's system calls per ACK (``epoll_wait``,
``recv_into``, ``send`` on the transfer's connected socket) with nothing else: no options, timers,
log, or checks. hfcprov against it is what its protocol handling costs; it against atftpd is what
the interpreter costs.

The server's CPU comes from its cgroup when root (every thread and child, exact), else its /proc times
(10 ms ticks: use a larger N). Per repeat: microseconds per short transfer, and per extra ACK, the slope
``(long - short) / 15``: what one more datagram costs a server woken for it (the read, the next block's
send and the wake-up). And what the server spends doing nothing: its CPU over ``--idle`` seconds after
one transfer, in milliseconds per second (a thread that polls shows here). Each cell: median [min-max]
over the repeats; the ratio is the medians' against atftpd's.

    nice -n 10 .venv/bin/python bench/tftp_wakeup.py --repeats 5 [--baseline CHECKOUT]   # as root
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tftp_bootstorm as B  # the same servers and CPU meter

from hfcprov.tftp import fetch

SIZES = {"short": 100, "long": 8000}  # 1 and 16 DATA blocks at 512 bytes
EXTRA_ACKS = 15
WARM = 50  # transfers before the meter starts: the server's first datagrams pay for its own start


def make_roots(folder: Path, n: int) -> dict[str, Path]:
    roots = {}
    for kind, size in SIZES.items():
        root = folder / kind
        root.mkdir(parents=True)
        root.chmod(0o755)  # the C servers drop to nobody
        for i in range(n + WARM):
            f = root / f"f{i}.cm"
            f.write_bytes(os.urandom(size))
            f.chmod(0o644)
        roots[kind] = root
    return roots


def one_server(kind: str, root: Path, n: int, args, tmp: Path) -> float:
    """Microseconds of the server's CPU per transfer, over n sequential transfers."""
    srv = B.Server(kind, "static", root, None, n, args, tmp)
    try:
        for i in range(WARM):
            fetch("127.0.0.1", srv.port, f"f{i}.cm", timeout=2.0)
        before = srv.used()
        for i in range(WARM, WARM + n):
            data = fetch("127.0.0.1", srv.port, f"f{i}.cm", timeout=2.0)
            if len(data) != SIZES[root.name]:
                raise SystemExit(f"{kind}: f{i}.cm came back with {len(data)} bytes")
        return (srv.used() - before) * 1e6 / n
    finally:
        srv.stop()


def idle_cpu(kind: str, root: Path, seconds: float, args, tmp: Path) -> float:
    """Milliseconds of the server's CPU per second while it has nothing to do, after one transfer."""
    srv = B.Server(kind, "static", root, None, 1, args, tmp)
    try:
        fetch("127.0.0.1", srv.port, "f0.cm", timeout=2.0)
        time.sleep(0.2)  # the transfer's own after-work (a log flush) is not idle time
        before = srv.used()
        time.sleep(seconds)  # the interval measured
        return (srv.used() - before) * 1e3 / seconds
    finally:
        srv.stop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=400, help="sequential transfers per server, per file size")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--idle", type=float, default=2.0, help="seconds of idle CPU measured per server and repeat")
    ap.add_argument("--baseline", type=Path, help="another checkout's hfcprov (hfcprov@base)")
    ap.add_argument("--atftpd", help="atftpd binary (default: on PATH or /usr/sbin)")
    args = ap.parse_args(argv)
    args.server_priority = os.getpriority(os.PRIO_PROCESS, 0)
    args.atftpd = B.find_atftpd(args.atftpd)
    kinds = ["hfcprov"] + (["hfcprov@base"] if args.baseline else []) + ["python-floor"]
    if shutil.which("in.tftpd") or Path("/usr/sbin/in.tftpd").exists():
        kinds.append("tftpd-hpa")
    if args.atftpd:
        kinds.append("atftpd")
    B.raise_fd_limit()
    got: dict[str, dict[str, list[float]]] = {k: {"short": [], "slope": [], "idle": []} for k in kinds}
    with tempfile.TemporaryDirectory(prefix="tftp-wakeup-") as tmp_name:
        tmp = Path(tmp_name)
        tmp.chmod(0o755)
        roots = make_roots(tmp / "site", args.n)
        load0 = os.getloadavg()
        for r in range(args.repeats):
            for kind in kinds:  # interleaved: the machine's drift falls on every server alike
                short = one_server(kind, roots["short"], args.n, args, tmp)
                long_ = one_server(kind, roots["long"], args.n, args, tmp)
                got[kind]["short"].append(short)
                got[kind]["slope"].append((long_ - short) / EXTRA_ACKS)
                got[kind]["idle"].append(idle_cpu(kind, roots["short"], args.idle, args, tmp))
                print(f"# repeat {r + 1} {kind}: {short:.1f} us per 1-block transfer, "
                      f"{(long_ - short) / EXTRA_ACKS:.1f} us per extra ACK, {got[kind]['idle'][-1]:.2f} ms/s idle", flush=True)
        load1 = os.getloadavg()
    print(f"# {args.n} sequential transfers per server and size, {args.repeats} repeats; load average "
          f"{' '.join(f'{x:.2f}' for x in load0)} before, {' '.join(f'{x:.2f}' for x in load1)} after; "
          f"{os.cpu_count()} cores; servers at nice {args.server_priority}; CPU from {B.CPU_SOURCE.get('kind')}")
    ref = got.get("atftpd")
    print(f"{'server':<14}{'us per 1-block transfer':>26}{'us per extra ACK':>22}{'idle ms/s':>20}"
          f"{'vs atftpd':>14}")
    for kind in kinds:
        cells = []
        for what in ("short", "slope", "idle"):
            xs = got[kind][what]
            digits = 2 if what == "idle" else 1
            cells.append(f"{statistics.median(xs):.{digits}f} [{min(xs):.{digits}f}-{max(xs):.{digits}f}]")
        ratio = ""
        if ref and kind != "atftpd":
            ratio = (f"{statistics.median(got[kind]['short']) / statistics.median(ref['short']):.2f}x, "
                     f"{statistics.median(got[kind]['slope']) / statistics.median(ref['slope']):.2f}x")
        print(f"{kind:<14}{cells[0]:>26}{cells[1]:>22}{cells[2]:>20}{ratio:>14}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
