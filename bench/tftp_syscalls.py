#!/usr/bin/env python3
"""What each TFTP server does per transfer in a storm of real clients: system calls by name, user and system CPU.

For each server (hfcprov static, tftpd-hpa, atftpd; ``--baseline DIR`` adds another checkout's hfcprov),
fresh for every storm, N real client processes (``--client tftp`` or ``atftp``) fetch the same static
files as ``tftp_bootstorm.py`` serves:

- a storm with the server's system calls counted (every thread and child it starts): calls per
  completed transfer, by name. ``perf stat`` of the ``syscalls:sys_enter_*`` tracepoints counts in the
  kernel and leaves the server at its speed; ``--tracer strace`` (``strace -f -c``) slows it, so it
  batches more datagrams per wake-up than it would untraced. perf also counts the server's context
  switches (every thread, voluntary or not: each is a wake-up that starts with cold caches);
- ``--repeats`` storms untraced: the server's user and system CPU per transfer, from the server's
  cgroup (cpuacct.stat: every thread and child process), else /proc/PID/stat, in ms; both are clock
  ticks split by sampling, so a storm needs a few hundred transfers per tick. ``total`` is the
  bench's exact figure (cgroup cpuacct.usage), as ``tftp_bootstorm.py`` reports it.

    nice -n 10 .venv/bin/python bench/tftp_syscalls.py -n 1000 --repeats 5 --client tftp atftp   # as root
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tftp_bootstorm as B  # noqa: E402 - the same site, servers and client processes


def cpu_ticks(srv) -> tuple[int, int]:
    """(user, system) clock ticks of the server: its cgroup's (every thread and child, exited or not;
    tftpd-hpa does not wait for its children) or /proc/PID/stat's (with the children it reaped)."""
    group = srv.cpu.group
    if group is not None and (group / "cpuacct.stat").exists():
        stat = dict(line.split() for line in (group / "cpuacct.stat").read_text().splitlines())
        return int(stat["user"]), int(stat["system"])
    fields = Path(f"/proc/{srv.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[13]), int(fields[12]) + int(fields[14])


def perf_counts(path: Path) -> dict[str, int]:
    """perf stat -x, 's table: calls by system call name."""
    counts = {}
    for line in path.read_text().splitlines():
        cols = line.split(",")
        if len(cols) > 2 and cols[0].isdigit() and cols[2].startswith("syscalls:sys_enter_"):
            counts[cols[2][len("syscalls:sys_enter_"):]] = int(cols[0])
        elif len(cols) > 2 and cols[0].isdigit() and cols[2] == "context-switches":
            counts["(context switches)"] = int(cols[0])
    return counts


def strace_counts(path: Path) -> dict[str, int]:
    """strace -c's table: calls by system call name."""
    counts = {}
    for line in path.read_text().splitlines():
        cols = line.split()
        if len(cols) >= 5 and re.fullmatch(r"[\d.]+", cols[0]) and cols[-1] != "total":
            counts[cols[-1]] = int(cols[3])
    return counts


def storm(kind: str, root: Path, names, sizes, client: str, args, tmp: Path, trace: bool) -> dict:
    srv = B.Server(kind, "static", root, None, len(names), args, tmp)
    tracer = None
    try:
        if trace:
            out = tmp / f"trace-{kind}-{srv.port}.txt"
            if args.tracer == "perf":
                cmd = ["perf", "stat", "-x,", "-o", str(out), "-e", "syscalls:sys_enter_*,context-switches",
                       "-p", str(srv.proc.pid)]
            else:
                cmd = ["strace", "-f", "-c", "-o", str(out), "-p", str(srv.proc.pid)]
            tracer = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
            time.sleep(1.0)  # attached to every thread before the storm
        u0, s0, c0 = *cpu_ticks(srv), srv.used()
        r = B.processes_run(srv.port, names, sizes, tmp, [client], [0.0] * len(names))
        time.sleep(0.3)  # the last ACKs are handled, tftpd-hpa's children reaped
        u1, s1, c1 = *cpu_ticks(srv), srv.used()
        if tracer is not None:
            tracer.send_signal(signal.SIGINT)
            tracer.wait(30)
            r["calls"] = (perf_counts if args.tracer == "perf" else strace_counts)(out)
    finally:
        srv.stop()
    tick = os.sysconf("SC_CLK_TCK")
    r["user"], r["sys"], r["total"] = (u1 - u0) / tick, (s1 - s0) / tick, c1 - c0
    return r


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=400, help="client processes per storm")
    ap.add_argument("--client", nargs="+", default=["tftp"], choices=["tftp", "atftp"])
    ap.add_argument("--repeats", type=int, default=3, help="untraced storms per server for the CPU split")
    ap.add_argument("--tracer", choices=["perf", "strace"], default="perf" if shutil.which("perf") else "strace",
                    help="perf stat: counted in the kernel, the server runs at its speed (default when present); "
                         "strace -f -c: slows the server")
    ap.add_argument("--atftpd", default=None)
    ap.add_argument("--baseline", type=Path, default=None, help="another hfcprov checkout (hfcprov@base)")
    ap.add_argument("--server-priority", type=int, default=os.getpriority(os.PRIO_PROCESS, 0))
    args = ap.parse_args(argv)
    if os.geteuid() != 0 or not shutil.which(args.tracer):
        raise SystemExit(f"needs root (the C servers drop to nobody; {args.tracer} attaches) and {args.tracer}")
    args.atftpd = B.find_atftpd(args.atftpd)
    B.raise_fd_limit(65536)
    kinds = ["hfcprov"] + (["hfcprov@base"] if args.baseline else []) + ["tftpd-hpa"]
    kinds += ["atftpd"] if args.atftpd else []
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="hfcprov-syscalls-") as tmpname:
        tmp = Path(tmpname)
        os.chmod(tmp, 0o755)
        _, root, _ = B.make_site(tmp / "site", args.n)
        names = sorted(p.name for p in root.glob("*.cm"))
        sizes = {n: (root / n).stat().st_size for n in names}
        for client in args.client:
            traced, split = {}, {k: [] for k in kinds}
            for kind in kinds:
                traced[kind] = storm(kind, root, names, sizes, client, args, tmp, trace=True)
            for _ in range(args.repeats):
                for kind in kinds:  # interleaved: the machine's drift falls on all alike
                    split[kind].append(storm(kind, root, names, sizes, client, args, tmp, trace=False))
            report(client, args.n, kinds, traced, split,
                   "perf stat (syscalls:sys_enter_*)" if args.tracer == "perf" else "strace -f -c")
    load1 = os.getloadavg()
    print(f"# load average before {load0[0]:.2f}, after {load1[0]:.2f}; {os.cpu_count()} cores")
    return 0


def report(client: str, n: int, kinds, traced, split, tracer: str) -> None:
    print(f"\n## {n} {client} client processes, one storm each under {tracer}: system calls per transfer")
    names = sorted({c for k in kinds for c in traced[k].get("calls", {})},
                   key=lambda c: -max(traced[k]["calls"].get(c, 0) / max(traced[k]["done"], 1) for k in kinds))
    print(f"{'syscall':<18}" + "".join(f"{k:>14}" for k in kinds))
    for call in names:
        row = [traced[k]["calls"].get(call, 0) / max(traced[k]["done"], 1) for k in kinds]
        if max(row) >= 0.01:
            print(f"{call:<18}" + "".join(f"{v:>14.2f}" for v in row))
    totals = [sum(v for c, v in traced[k]["calls"].items() if not c.startswith("(")) / max(traced[k]["done"], 1)
              for k in kinds]
    print(f"{'total':<18}" + "".join(f"{v:>14.2f}" for v in totals))
    print(f"{'done/failed':<18}" + "".join(f"{traced[k]['done']:>9}/{traced[k]['failures']:<4}" for k in kinds))
    print(f"\n## {n} {client} client processes, untraced, {len(split[kinds[0]])} storms: CPU ms per transfer "
          "(median [min-max])")
    for key in ("user", "sys", "total"):
        cells = []
        for k in kinds:
            v = [r[key] * 1000 / r["done"] for r in split[k] if r["done"]]
            cells.append(f"{statistics.median(v):.3f} [{min(v):.3f}-{max(v):.3f}]" if v else "-")
        print(f"{key + ' ms':<18}" + "".join(f"{c:>24}" for c in cells))
    fails = [sum(r["failures"] for r in split[k]) for k in kinds]
    print(f"{'failures':<18}" + "".join(f"{f:>24}" for f in fails))


if __name__ == "__main__":
    sys.exit(main())
