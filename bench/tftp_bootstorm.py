#!/usr/bin/env python3
"""Boot storm: N modems fetch their 1-10 KB config file at once, from hfcprov and from two C servers.

Peers in the same run, on the same root and the same load generator: tftpd-hpa
(``in.tftpd``, one process per transfer) and atftpd (one thread per transfer,
``--maxthread`` raised to N). hfcprov serves static files (built by the bulk builder
into the root) and dynamic files (the same configs from template + inventory, stamped
per request with TLV 19/20 and MICs). The C servers serve static files only.

A running server is faster than a fresh one (on 2 cores a static server's second
storm ran about 40% faster than its first), so each comparison pairs like with like:

- ``static``: a fresh server's first storm; the C servers are fresh too.
- ``primed``: one static server started before the runs that has served one storm.
- ``dynamic``: one server started before the runs that has built every modem's file
  (``--warm``) and served one storm (a headend server outlives a node's power outage);
  compared with ``primed``.
- ``dyn-cold`` (``--cold``): a fresh server that has built nothing; compared with ``static``.

Arrival patterns: ``burst`` (all RRQs back to back) and ``staggered`` (one RRQ every
``--stagger`` seconds). The load generator is ``hfcprov.tftp.fetch_many`` (one
socket per modem, 1 s retransmission timeout, 5 retries, as modems do). Reported
per cell over ``--repeats`` runs (the servers' runs interleaved): completed transfers/s (from first RRQ to
last file) as median and min-max, failures, client retransmissions, p50/p99 transfer time and the
listening socket's kernel drop count (``/proc/net/udp``), as medians.

``--contend``: one CPU-bound process per core at normal priority runs through every storm
(a headend server is never idle: a DHCP server, a log shipper). ``--niceness 10 0`` adds a
fresh dynamic row per build-worker niceness (``dyn-cold/nN``; the default row is 10).
``--cross-check N``: the fresh static and dynamic servers are also measured with N real client
processes (tftp-hpa's ``tftp`` and ``atftp``, all started at once), an independent load generator
to check ``fetch_many``'s ratios against.

    sudo .venv/bin/python bench/tftp_bootstorm.py                 # N = 100, 1000, 2000
    sudo .venv/bin/python bench/tftp_bootstorm.py -n 1000 --repeats 5
    sudo .venv/bin/python bench/tftp_bootstorm.py -n 1000 2000 --cold-only --arrival burst   # dyn-cold vs static only
    sudo .venv/bin/python bench/tftp_bootstorm.py -n 1000 --cold-only --arrival burst --contend --niceness 10 0 \
        --cross-check 100 --repeats 3                                # under contention, checked by real clients

tftpd-hpa and atftpd conflict as Debian packages; install tftpd-hpa and give atftpd's
binary with ``--atftpd`` (``apt-get download atftpd && dpkg-deb -x atftpd_*.deb /opt/atftpd``).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hfcprov.results import percentile
from hfcprov.tftp import fetch_many, raise_fd_limit
from hfcprov.udpstat import udp_drops

BENCH_TEMPLATE = (REPO / "bench" / "padded-tier.j2").read_text()  # configs of 1-10 KB


def make_site(folder: Path, n: int, seed: int = 7) -> tuple[Path, Path, Path]:
    """Inventory of n modems, template folder, and a root with their files prebuilt (static)."""
    from hfcprov.tiers.bulk import build

    tiers = folder / "tiers"
    tiers.mkdir(parents=True)
    (tiers / "bench.j2").write_text(BENCH_TEMPLATE)
    rng = random.Random(seed)
    inv = folder / "inventory.csv"
    # ~27 bytes per filler object: 30..360 objects -> about 1 to 10 KB per file
    inv.write_text("mac,tier,filler\n" + "".join(
        f"00:10:95:{i >> 16 & 255:02x}:{i >> 8 & 255:02x}:{i & 255:02x},bench,{rng.randint(30, 360)}\n"
        for i in range(n)))
    root = folder / "root"
    summary = build(inv, root, template=tiers, jobs=2)
    if summary.failed:
        raise SystemExit(f"bench site build failed: {summary.failed[0][1]}")
    for p in [folder, tiers, root, *root.iterdir()]:
        p.chmod(0o755 if p.is_dir() else 0o644)  # the C servers drop to nobody
    (folder / "dyn.yaml").write_text("inventory: inventory.csv\ntemplates: tiers\n")
    (folder / "empty").mkdir(mode=0o755)
    return inv, root, folder / "dyn.yaml"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SERVER_ARGS: list[str] = []  # --server-priority: passed to every hfcprov server


def start_server(kind: str, root: Path, dyn: Path | None, port: int, n: int, atftpd: str | None, tmp: Path,
                 *extra: str):
    if kind == "hfcprov":
        args = [sys.executable, "-m", "hfcprov", "tftp", "serve", "--root", str(root),
                "--listen", f"127.0.0.1:{port}", "--log", str(tmp / f"hfcprov-{port}.jsonl"), *SERVER_ARGS]
        if dyn:
            args += ["--dynamic", str(dyn), *extra]
        proc = subprocess.Popen(args, cwd=REPO, stderr=subprocess.PIPE, text=True)
        line = proc.stderr.readline()
        if "serving" not in line:
            stop_server(proc)
            raise RuntimeError(f"hfcprov tftp serve did not start: {line.strip()}")
        return proc
    if kind == "tftpd-hpa":
        proc = subprocess.Popen([shutil.which("in.tftpd") or "/usr/sbin/in.tftpd", "-L", "-a", f"127.0.0.1:{port}",
                                 "-s", "-u", "nobody", str(root)], stderr=subprocess.DEVNULL)
    else:
        proc = subprocess.Popen([atftpd, "--daemon", "--no-fork", "--port", str(port), "--bind-address", "127.0.0.1",
                                 "--maxthread", str(max(n + 100, 100)), "--logfile", "/dev/null",
                                 "--user", "nobody", "--group", "nogroup", str(root)], stderr=subprocess.DEVNULL)
    _wait_listening(port)
    return proc


def _wait_listening(port: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if udp_drops(port) is not None:
            return
        time.sleep(0.05)
    raise RuntimeError(f"no server listening on UDP {port}")


def stop_server(proc) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def start_contention(n: int | None = None) -> list:
    """One busy process per core at normal priority (ours: stopped by stop_contention)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
            for _ in range(n or os.cpu_count() or 1)]


def stop_contention(procs) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()


def client_processes_run(port: int, names: list[str], root_files: Path | None, tmp: Path, which: str) -> dict:
    """N real client processes started at once (tftp-hpa's tftp or atftp), each fetching one file;
    rate = files / (first start to last exit). A file is good when it has the size the server's
    static copy (or, for dynamic files, the fetch_many copy) has."""
    out = tmp / f"cc-{which}-{port}"
    out.mkdir()
    procs = []
    t0 = time.monotonic()
    for name in names:
        dest = out / name
        if which == "tftp":
            cmd = [shutil.which("tftp"), "-m", "binary", "127.0.0.1", str(port), "-c", "get", name, str(dest)]
        else:
            cmd = [shutil.which("atftp"), "-g", "-r", name, "-l", str(dest), "127.0.0.1", str(port)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      stdin=subprocess.DEVNULL))
    ok = 0
    for p, name in zip(procs, names):
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        dest = out / name
        if p.returncode == 0 and dest.exists() and dest.stat().st_size > 0:
            ok += 1
    span = time.monotonic() - t0
    shutil.rmtree(out, ignore_errors=True)
    return {"rate": ok / span if span > 0 else 0.0, "failures": len(names) - ok}


def one_run(port: int, names: list[str], pattern: str, stagger: float) -> dict:
    interval = stagger if pattern == "staggered" else 0.0
    got = fetch_many("127.0.0.1", port, names, timeout=1.0, retries=5, interval=interval, deadline=120)
    ok = [f for f in got if f.ok]
    span = (max(f.finished for f in ok) - min(f.started for f in got)) if ok else float("nan")
    times = sorted(f.duration for f in ok)
    return {"rate": len(ok) / span if ok else 0.0, "failures": len(got) - len(ok),
            "retransmits": sum(f.retransmits for f in got),
            "p50": percentile(times, 50) if times else float("nan"), "p99": percentile(times, 99) if times else float("nan"),
            "drops": udp_drops(port) or 0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, nargs="+", default=[100, 1000, 2000], help="modems per storm")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--stagger", type=float, default=0.001, help="seconds between arrivals, staggered pattern")
    ap.add_argument("--atftpd", default=shutil.which("atftpd") or os.environ.get("ATFTPD") or
                    ("/opt/atftpd-x/usr/sbin/atftpd" if Path("/opt/atftpd-x/usr/sbin/atftpd").exists() else None))
    ap.add_argument("--cold", action="store_true", help="also dynamic files on a fresh server (nothing rendered yet)")
    ap.add_argument("--cold-only", action="store_true",
                    help="hfcprov static vs dynamic on a fresh server only (no warmed server, no C peers)")
    ap.add_argument("--arrival", nargs="+", choices=("burst", "staggered"), default=["burst", "staggered"])
    ap.add_argument("--contend", action="store_true",
                    help="a CPU-bound process per core at normal priority during the storms")
    ap.add_argument("--niceness", type=int, nargs="+", default=[],
                    help="fresh dynamic rows with these build-worker niceness values (dyn-cold/nN)")
    ap.add_argument("--cross-check", type=int, default=0, metavar="N",
                    help="also N real tftp/atftp client processes against the fresh static and dynamic servers")
    ap.add_argument("--server-priority", type=int, default=None,
                    help="nice value for every hfcprov server (default: the server's own: -10 as root)")
    args = ap.parse_args(argv)
    if args.server_priority is not None:
        SERVER_ARGS[:] = ["--priority", str(args.server_priority)]
    raise_fd_limit(65536)
    servers = [("hfcprov", "static")] + ([] if args.cold_only else [("hfcprov", "primed"), ("hfcprov", "dynamic")])
    if args.cold or args.cold_only:
        servers.append(("hfcprov", "dyn-cold"))
    servers += [("hfcprov", f"dyn-cold/n{n}") for n in args.niceness]
    if not args.cold_only:
        if shutil.which("in.tftpd") or Path("/usr/sbin/in.tftpd").exists():
            servers.append(("tftpd-hpa", "static"))
        else:
            print("# tftpd-hpa (in.tftpd) not found: skipped", file=sys.stderr)
        if args.atftpd:
            servers.append(("atftpd", "static"))
        else:
            print("# atftpd not found: skipped (see --atftpd)", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory(prefix="hfcprov-bootstorm-") as tmpname:
        tmp = Path(tmpname)
        os.chmod(tmp, 0o755)
        nmax = max(args.n)
        t0 = time.perf_counter()
        _, root, dyn = make_site(tmp / "site", nmax)
        sizes = [p.stat().st_size for p in root.glob("*.cm")]
        print(f"# {len(sizes)} config files, {min(sizes)}-{max(sizes)} bytes (median {statistics.median(sizes):.0f}),"
              f" built in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        all_names = sorted(p.name for p in root.glob("*.cm"))
        dyns = {"dyn-cold": dyn, "dynamic": dyn}
        for nice in args.niceness:
            alt = dyn.with_name(f"dyn-n{nice}.yaml")
            alt.write_text(dyn.read_text() + f"niceness: {nice}\n")
            dyns[f"dyn-cold/n{nice}"] = alt
        contention = start_contention() if args.contend else []
        if contention:
            print(f"# contention: {len(contention)} CPU-bound processes at normal priority", file=sys.stderr)
        # Running servers, measured in their turn: static files, and dynamic files once every modem's
        # tree is rendered (--warm). Each serves one storm first. --cold shows a fresh dynamic server.
        running: dict[str, tuple] = {}  # files -> (port, process)
        if not args.cold_only:
            for files, folder, extra in (("primed", root, ()), ("dynamic", tmp / "site" / "empty", ("--warm",))):
                port = free_port()
                t0 = time.perf_counter()
                running[files] = (port, start_server("hfcprov", folder, dyn if extra else None, port, nmax, None,
                                                     tmp, *extra))
                if extra:
                    wait_for_event(tmp / f"hfcprov-{port}.jsonl", "warm", timeout=1800)
                    print(f"# dynamic server warmed ({nmax} modems) in {time.perf_counter() - t0:.1f}s",
                          file=sys.stderr)
                one_run(port, all_names, "burst", args.stagger)
        for n in args.n:
            names = all_names[:n]
            for pattern in args.arrival:
                # Interleaved (one run of each server, then again): the machine's drift from minute to
                # minute falls on every server alike instead of on whichever ran last.
                runs = {server: [] for server in servers}
                for _ in range(args.repeats):
                    for kind, files in servers:
                        if files in running:
                            port, proc = running[files]
                        else:
                            port = free_port()
                            proc = start_server(kind, tmp / "site" / "empty" if files != "static" else root,
                                                dyns.get(files), port, n, args.atftpd, tmp)
                        try:
                            runs[kind, files].append(one_run(port, names, pattern, args.stagger))
                        finally:
                            if files not in running:
                                stop_server(proc)
                for (kind, files), done in runs.items():
                    med = {k: statistics.median(r[k] for r in done) for k in done[0]}
                    med["rate_min"], med["rate_max"] = min(r["rate"] for r in done), max(r["rate"] for r in done)
                    rows.append((n, pattern, kind, files, med))
                    print(f"# n={n} {pattern} {kind} {files}: {med['rate']:.0f}/s fail={med['failures']:.0f}",
                          file=sys.stderr)
        for _, proc in running.values():
            stop_server(proc)
        checks = cross_check(args, all_names, root, dyns, tmp) if args.cross_check else []
        stop_contention(contention)
    print_table(rows)
    if checks:
        print_checks(checks)
    return 0


def cross_check(args, all_names, root, dyns, tmp) -> list:
    """fetch_many against real client processes on a burst of --cross-check modems, fresh servers."""
    names = all_names[:args.cross_check]
    generators = ["fetch_many"] + [c for c in ("tftp", "atftp") if shutil.which(c)]
    files_list = ["static"] + [f for f in dyns if f.startswith("dyn-cold") and (f != "dyn-cold" or args.cold
                                                                                or args.cold_only)]
    out = []
    for gen in generators:
        runs = {f: [] for f in files_list}
        for _ in range(args.repeats):
            for files in files_list:
                port = free_port()
                proc = start_server("hfcprov", root if files == "static" else tmp / "site" / "empty",
                                    dyns.get(files), port, len(names), None, tmp)
                try:
                    if gen == "fetch_many":
                        runs[files].append(one_run(port, names, "burst", args.stagger))
                    else:
                        runs[files].append(client_processes_run(port, names, root, tmp, gen))
                finally:
                    stop_server(proc)
        for files, done in runs.items():
            rates = [r["rate"] for r in done]
            out.append((len(names), gen, files, statistics.median(rates), min(rates), max(rates),
                        statistics.median(r["failures"] for r in done)))
            print(f"# cross-check n={len(names)} {gen} {files}: {statistics.median(rates):.0f}/s", file=sys.stderr)
    return out


def print_checks(checks) -> None:
    print(f"\n{'modems':>6} {'generator':<10} {'files':<12} {'xfers/s':>8} {'min-max':>13} {'fail':>5} {'vs static':>9}")
    for n, gen, files, rate, lo, hi, fail in checks:
        static = next(c[3] for c in checks if c[1] == gen and c[2] == "static")
        print(f"{n:>6} {gen:<10} {files:<12} {rate:>8.0f} {f'{lo:.0f}-{hi:.0f}':>13} {fail:>5.0f} "
              f"{rate / static if static else float('nan'):>8.2f}x")


def wait_for_event(log: Path, event: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and f'"event":"{event}"' in log.read_text():
            return
        time.sleep(0.5)
    raise RuntimeError(f"no {event} event in {log} after {timeout}s")


def print_table(rows) -> None:
    print(f"{'modems':>6} {'arrival':<9} {'server':<10} {'files':<12} {'xfers/s':>8} {'min-max':>11} {'fail':>5} "
          f"{'retx':>6} {'p50 ms':>8} {'p99 ms':>8} {'drops':>6} {'vs best C':>9}")
    for n, pattern, kind, files, m in rows:
        c_rates = [r[4]["rate"] for r in rows if r[0] == n and r[1] == pattern and r[2] != "hfcprov"]
        fresh = kind == "hfcprov" and (files == "static" or files.startswith("dyn-cold"))  # C servers are fresh
        ratio = f"{m['rate'] / max(c_rates):.2f}x" if fresh and c_rates and max(c_rates) else ""
        span = f"{m['rate_min']:.0f}-{m['rate_max']:.0f}"
        print(f"{n:>6} {pattern:<9} {kind:<10} {files:<12} {m['rate']:>8.0f} {span:>11} {m['failures']:>5.0f} "
              f"{m['retransmits']:>6.0f} {m['p50'] * 1e3:>8.1f} {m['p99'] * 1e3:>8.1f} {m['drops']:>6.0f} {ratio:>9}")

    def rate(n, files):
        found = [r[4]["rate"] for r in rows if r[0] == n and r[1] == "burst" and r[2] == "hfcprov" and r[3] == files]
        return found[0] if found else None

    def retx(n, files):
        found = [r[4]["retransmits"] for r in rows if r[0] == n and r[1] == "burst" and r[2] == "hfcprov"
                 and r[3] == files]
        return found[0] if found else None

    cold = sorted({r[3] for r in rows if r[3].startswith("dyn-cold")})
    for n in sorted({r[0] for r in rows}):
        pairs = [("dynamic", "primed")] + [(c, "static") for c in cold]  # running vs running, fresh vs fresh
        for files, base in pairs:
            dy, st = rate(n, files), rate(n, base)
            if dy is not None and st:
                print(f"# n={n} burst: {files}/{base} rate = {dy / st:.2f}, retransmissions {retx(n, files):.0f} "
                      f"vs {retx(n, base):.0f}")


if __name__ == "__main__":
    sys.exit(main())
