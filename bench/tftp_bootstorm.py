#!/usr/bin/env python3
"""Boot storm: N modems fetch their 1-10 KB config file, from hfcprov and from two C servers, in one run.

Servers, each fresh for every run and all at the same nice value (the bench's own; ``--server-priority``
moves hfcprov's): hfcprov with static files (built into the root by the bulk builder) and with
dynamic files on a server that has built nothing yet (``dyn-cold``: template + inventory, stamped
per request with TLV 19/20 and MICs); tftpd-hpa (``in.tftpd``, one process per transfer) and
atftpd (one thread per transfer) with the static files.

Arrival patterns (``--arrival``):

- ``inproc-burst``: one in-process client (``hfcprov.tftp.fetch_many``, one socket per modem,
  1 s timeout, 5 retries) sends every RRQ in the same millisecond. No process starts per modem,
  so the servers' own costs show; it is not what a plant sees. The client's loop is not free
  (its CPU, this thread's, is the clients column: about a static hfcprov server's), and it
  shares the cores with the server.
- ``inproc-seq``: the same client asking for one file at a time, each after the last is done: no
  client process either, but each request (and, on a cold server, each build) comes alone, as when
  modems come back one by one.
- ``tftp-burst``, ``atftp-burst``: N real client processes (tftp-hpa's ``tftp``, ``atftp``)
  started as fast as one process can spawn them. The clients share the machine's cores with
  the server, as a whole node's modems share nothing with a headend: transfers/s alone mostly
  shows how much CPU the server leaves the clients, hence the CPU column.
- ``spread-Ns`` (``--spread N ...``): N real clients (tftp and atftp alternately) arriving at
  uniformly random times over N seconds, as DHCP and ranging pace a node's modems back.
- ``atftp-ws4``: a burst of atftp clients asking windowsize 4 (RFC 7440) with ``--trace``; the
  duplicate DATA column counts blocks a client received twice (tftpd-hpa has no windowsize).
- ``dupack-ws4``: the in-process client at windowsize 4 sending every ACK twice, as a path that
  duplicates datagrams would; a duplicate ACK must cost no duplicate DATA.

Per cell over ``--repeats`` runs (servers interleaved, so the machine's drift falls on all alike):
completed transfers/s (first RRQ to last file; median and min-max), failures (a client that did not
get the whole file: exit status and size are checked), the server's CPU seconds per 1,000
completed transfers (cgroup ``cpuacct`` or cgroup v2 ``cpu.stat`` when root, else the process
tree's /proc times), retransmissions (client-side for in-process clients, the server's log for
hfcprov with real clients), duplicate DATA, transfer time p50/p99 (client processes: spawn to
exit), the listening socket's kernel drops, and the clients' CPU seconds per 1,000 transfers (the
client processes' own, as their exit reports it; the in-process client's thread). "vs best C" is
transfers/s over the best C server's in the same pattern; "CPU vs atftpd" is CPU per transfer over
atftpd's. The cold/static line under the table gives the cold server's CPU above static and the part of
it its build workers spent (their scheduler run time; what is left is the server's loop and threads).

    sudo nice -n 10 .venv/bin/python bench/tftp_bootstorm.py                    # every pattern, N = 1000
    sudo nice -n 10 .venv/bin/python bench/tftp_bootstorm.py -n 400 --arrival tftp-burst atftp-burst
    sudo nice -n 10 .venv/bin/python bench/tftp_bootstorm.py --baseline ../main   # hfcprov rows of another checkout too

``--contend``: one CPU-bound process per core at normal priority runs through every storm. ``--running``
adds hfcprov servers that outlive the runs (static, and dynamic after ``--warm``), compared with each other.
tftpd-hpa and atftpd conflict as Debian packages: install tftpd-hpa; atftpd's binary comes from
``--atftpd``, ``$ATFTPD`` or, as root, is unpacked from Debian's package into the user cache
(``apt-get download atftpd`` + ``dpkg-deb -x``, nothing installed).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import select
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hfcprov.results import percentile
from hfcprov.tftp import fetch_many, raise_fd_limit
from hfcprov.udpstat import port_bound, udp_drops

BENCH_TEMPLATE = (REPO / "bench" / "padded-tier.j2").read_text()  # configs of 1-10 KB
PATTERNS = ("inproc-burst", "inproc-seq", "tftp-burst", "atftp-burst", "spread", "atftp-ws4", "dupack-ws4")
INPROC = ("inproc-burst", "inproc-seq", "dupack-ws4")  # the in-process client's: it counts retransmissions
WINDOWED = ("atftp-ws4", "dupack-ws4")  # patterns that need RFC 7440 (tftpd-hpa has none)
FLOOR_PATTERNS = ("tftp-burst", "atftp-burst", "spread")  # python-floor has no options and no retransmission
NAN = float("nan")
CPU_SOURCE: dict[str, str] = {}  # how the servers' CPU was measured, for the table's header


def make_site(folder: Path, n: int, seed: int = 7, distinct: int | None = None) -> tuple[Path, Path, Path]:
    """Inventory of n modems, template folder, and a root with their files prebuilt (static).
    ``distinct``: how many different configs the modems share (None: each draws its own filler
    count, 30-360, so about a third of them differ)."""
    from hfcprov.tiers.bulk import build

    tiers = folder / "tiers"
    tiers.mkdir(parents=True)
    (tiers / "bench.j2").write_text(BENCH_TEMPLATE)
    rng = random.Random(seed)
    inv = folder / "inventory.csv"
    # ~27 bytes per filler object: 30..360 objects -> about 1 to 10 KB per file
    fillers = [rng.randint(30, 360) for _ in range(distinct)] if distinct else None
    inv.write_text("mac,tier,filler\n" + "".join(
        f"00:10:95:{i >> 16 & 255:02x}:{i >> 8 & 255:02x}:{i & 255:02x},bench,"
        f"{rng.choice(fillers) if fillers else rng.randint(30, 360)}\n"
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


# -- CPU of a server and everything it starts -------------------------------------------------


class CpuMeter:
    """CPU seconds of one process tree: a cgroup of its own when root (exact, counts threads and
    children that have exited), else the live tree's /proc times plus what the root reaped."""

    V1 = Path("/sys/fs/cgroup/cpuacct")
    V2 = Path("/sys/fs/cgroup")

    def __init__(self, name: str):
        self.group: Path | None = None
        self.kind = "proc"
        for kind, base, probe in (("v2", self.V2, "cgroup.controllers"), ("v1", self.V1, "cpuacct.usage")):
            if os.geteuid() == 0 and (base / probe).exists():
                try:
                    (base / name).mkdir()
                except OSError:
                    continue
                self.group, self.kind = base / name, kind
                break
        self.pid = None

    def wrap(self, cmd: list[str]) -> list[str]:
        """``cmd`` started inside the group (a shell joins it, then execs): it and all it starts count."""
        if self.group is None:
            return cmd
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.group / "cgroup.procs"), *cmd]

    def seconds(self) -> float:
        if self.kind == "v1":
            return int((self.group / "cpuacct.usage").read_text()) / 1e9
        if self.kind == "v2":
            for line in (self.group / "cpu.stat").read_text().splitlines():
                if line.startswith("usage_usec"):
                    return int(line.split()[1]) / 1e6
        return _tree_cpu(self.pid) if self.pid else 0.0

    def close(self) -> None:
        if self.group is None:
            return
        parent = self.group.parent
        for _ in range(50):  # a server's build workers may still be exiting: the group empties soon
            try:
                for pid in (self.group / "cgroup.procs").read_text().split():
                    try:
                        (parent / "cgroup.procs").write_text(pid)
                    except OSError:
                        pass
                self.group.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def _process_tree(root_pid: int) -> dict[int, list[str]]:
    """``/proc/PID/stat`` fields (after the command name) of ``root_pid`` and its live descendants."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stats[int(entry)] = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
    tree, frontier = {root_pid}, [root_pid]
    while frontier:
        parent = frontier.pop()
        kids = [pid for pid, fields in stats.items() if int(fields[1]) == parent and pid not in tree]
        tree.update(kids)
        frontier.extend(kids)
    return {pid: stats[pid] for pid in tree if pid in stats}


def _tree_cpu(root_pid: int) -> float:
    """utime+stime(+reaped children) of ``root_pid`` and its live descendants, in seconds."""
    ticks = sum(sum(int(x) for x in fields[11:15]) for fields in _process_tree(root_pid).values())
    return ticks / os.sysconf("SC_CLK_TCK")


def _descendants_cpu(root_pid: int) -> float:
    """CPU seconds of ``root_pid``'s live descendants, not counting itself (a dynamic server's build
    workers and their forkserver): each one's scheduler run time (ns), else its /proc ticks."""
    total = 0.0
    for pid, fields in _process_tree(root_pid).items():
        if pid == root_pid:
            continue
        try:
            total += int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
        except (OSError, IndexError, ValueError):
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


# -- servers ----------------------------------------------------------------------------------


class Server:
    """One server process on its own port, its CPU measured from when it listens."""

    def __init__(self, kind: str, files: str, root: Path, dyn: Path | None, n: int, args, tmp: Path,
                 extra: tuple[str, ...] = ()):
        self.kind, self.files = kind, files
        for attempt in range(3):  # a server that exits or hangs before listening: again on another port
            self.port = free_port()
            self.log = tmp / f"{kind}-{self.port}.jsonl"
            self.cpu = CpuMeter(f"hfcprov-bootstorm-{os.getpid()}-{self.port}")
            try:
                self.proc = self._start(root, dyn, n, args, extra)
                break
            except ServerExited:
                if attempt == 2:
                    raise
        self.cpu.pid = self.proc.pid
        self.cpu0 = self.cpu.seconds()
        self.builds0 = self.builds_cpu()
        CPU_SOURCE["kind"] = {"v1": "cgroup v1 cpuacct", "v2": "cgroup v2 cpu.stat",
                              "proc": "/proc process-tree times (10 ms ticks)"}[self.cpu.kind]

    def _start(self, root, dyn, n, args, extra):
        if self.kind.startswith("hfcprov"):
            checkout = args.baseline if self.kind == "hfcprov@base" else REPO
            cmd = [sys.executable, "-m", "hfcprov", "tftp", "serve", "--root", str(root),
                   "--listen", f"127.0.0.1:{self.port}", "--log", str(self.log),
                   "--priority", str(args.server_priority)]
            if dyn:
                cmd += ["--dynamic", str(dyn), *extra]
            env = dict(os.environ, PYTHONPATH=str(checkout))
            proc = subprocess.Popen(self.cpu.wrap(cmd), cwd=checkout, stderr=subprocess.PIPE, text=True, env=env)
            line = proc.stderr.readline()
            if "serving" not in line:
                _stop(proc)
                self.cpu.close()
                if "Address already in use" in line:  # free_port's port taken meanwhile by other work
                    raise ServerExited(line.strip())
                raise RuntimeError(f"hfcprov tftp serve did not start: {line.strip()}")
            threading.Thread(target=proc.stderr.read, daemon=True).start()  # never let its pipe fill
            return proc
        if self.kind == "python-floor":
            cmd = [sys.executable, str(Path(__file__).resolve()), "--floor-serve", str(self.port), str(root)]
            proc = subprocess.Popen(self.cpu.wrap(cmd), stderr=subprocess.PIPE, text=True)
            line = proc.stderr.readline()
            if "serving" not in line:
                _stop(proc)
                self.cpu.close()
                raise ServerExited(f"python-floor did not start: {line.strip()}")
            return proc
        if self.kind == "tftpd-hpa":
            cmd = [shutil.which("in.tftpd") or "/usr/sbin/in.tftpd", "-L", "-a", f"127.0.0.1:{self.port}", "-s",
                   "-u", "nobody", str(root)]
        else:
            cmd = [args.atftpd, "--daemon", "--no-fork", "--port", str(self.port), "--bind-address", "127.0.0.1",
                   "--maxthread", str(max(n + 100, 100)), "--logfile", "/dev/null",
                   "--user", "nobody", "--group", "nogroup", str(root)]
        proc = subprocess.Popen(self.cpu.wrap(cmd), stderr=subprocess.DEVNULL)
        try:
            _wait_listening(self.port, proc)
        except RuntimeError as err:
            _stop(proc)
            self.cpu.close()
            raise ServerExited(str(err)) from None
        return proc

    def used(self) -> float:
        """CPU seconds since it started listening."""
        return self.cpu.seconds() - self.cpu0

    def builds_cpu(self) -> float:
        """CPU seconds of a cold server's build workers (its child processes) so far; NaN for the others."""
        return _descendants_cpu(self.proc.pid) if self.files.startswith("dyn-cold") else NAN

    def builds_used(self) -> float:
        return self.builds_cpu() - self.builds0

    def retransmissions(self) -> float:
        """hfcprov's own count (its log); NaN for the C servers."""
        if not self.kind.startswith("hfcprov") or not self.log.exists():
            return NAN
        return float(sum(int(m) for m in re.findall(r'"retries":(\d+)', self.log.read_text())))

    def stop(self) -> None:
        _stop(self.proc)
        self.cpu.close()


class ServerExited(RuntimeError):
    """A C server ended, or did not listen within the wait (seen with atftpd on a loaded machine)."""


def socket_drops(port: int) -> int | None:
    """The drop counter of the UDP socket bound to ``port`` (None: none is). Asked of the kernel with a
    filter (``ss``, netlink): reading all of /proc/net/udp took 47 s on this machine once other work held
    100,000 UDP sockets."""
    ss = shutil.which("ss")
    if ss is None:
        return udp_drops(port)
    out = subprocess.run([ss, "-u", "-a", "-n", "-m", f"sport = :{port}"], capture_output=True, text=True,
                         check=False).stdout
    drops = re.findall(r"skmem:\(.*?\bd(\d+)\)", out)
    return sum(int(d) for d in drops) if drops else None


def floor_serve(port: int, root: str) -> None:
    """The python-floor server (``--floor``): RFC 1350 octet reads at windowsize 1 and nothing more, in one
    epoll loop making hfcprov's system calls per ACK. No options, timers, log or checks: the least CPU
    a Python server can spend, an anchor for what hfcprov's protocol handling costs above it."""
    header = struct.Struct("!HH").pack
    listen = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:  # hfcprov's listening buffer, so that a burst's requests are not dropped (SO_RCVBUFFORCE, as root)
        listen.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)
    except OSError:
        listen.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    listen.bind(("127.0.0.1", port))
    listen.setblocking(False)
    ep = select.epoll()
    ep.register(listen.fileno(), select.EPOLLIN)
    live = {}  # fd -> [socket, file bytes, block in flight, last block]
    buf = bytearray(516)
    print("serving", file=sys.stderr, flush=True)
    while True:
        for fd, _ in ep.poll():
            if fd == listen.fileno():
                request, client = listen.recvfrom(516)
                with open(os.path.join(root, request[2:request.index(b"\0", 2)].decode()), "rb") as f:
                    data = f.read()
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.bind(("127.0.0.1", 0))
                s.connect(client)
                s.setblocking(False)
                ep.register(s.fileno(), select.EPOLLIN)
                live[s.fileno()] = [s, data, 1, len(data) // 512 + 1]
                s.send(header(3, 1) + data[:512])
                continue
            t = live[fd]
            s = t[0]
            s.recv_into(buf)
            block = t[2]
            if (buf[2] << 8 | buf[3]) != block:
                continue
            if block == t[3]:
                ep.unregister(fd)
                s.close()
                del live[fd]
                continue
            t[2] = block = block + 1
            s.send(header(3, block) + t[1][(block - 1) * 512:block * 512])


def _wait_listening(port: int, proc, timeout: float = 15.0) -> None:  # a loaded machine starts servers slowly
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_bound(port):
            return
        if proc.poll() is not None:
            raise ServerExited(f"the server exited (status {proc.returncode}) before listening "
                               f"on UDP {port}")
        time.sleep(0.05)
    raise RuntimeError(f"no server listening on UDP {port}")


def _stop(proc) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def find_atftpd(given: str | None) -> str | None:
    """atftpd's binary: given, on PATH, in $ATFTPD, or unpacked from Debian's package (root only)."""
    for candidate in (given, shutil.which("atftpd"), os.environ.get("ATFTPD")):
        if candidate and Path(candidate).exists():
            return candidate
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "hfcprov" / "atftpd"
    binary = cache / "usr" / "sbin" / "atftpd"
    if binary.exists():
        return str(binary)
    if os.geteuid() != 0 or not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        return None
    with tempfile.TemporaryDirectory() as dl:
        os.chmod(dl, 0o777)  # apt's download user writes here
        got = subprocess.run(["apt-get", "download", "atftpd"], cwd=dl, capture_output=True, text=True, check=False)
        debs = list(Path(dl).glob("atftpd_*.deb"))
        if got.returncode or not debs:
            print(f"# atftpd: apt-get download failed: {got.stderr.strip()[-200:]}", file=sys.stderr)
            return None
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(cache)], check=True)
    return str(binary) if binary.exists() else None


def start_contention(n: int | None = None) -> list:
    """One busy process per core at normal priority (ours: stopped by stop_contention)."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
            for _ in range(n or os.cpu_count() or 1)]


def stop_contention(procs) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()


# -- load generators --------------------------------------------------------------------------


def inproc_run(port: int, names: list[str], sizes: dict, windowsize: int = 1, duplicate_acks: bool = False,
               one_at_a_time: bool = False) -> dict:
    requests = [(n, {"windowsize": windowsize}) if windowsize > 1 else n for n in names]
    cpu = time.thread_time()  # the client is this thread's loop: its CPU is the clients' column
    batches = [[r] for r in requests] if one_at_a_time else [requests]
    got = [f for batch in batches for f in fetch_many("127.0.0.1", port, batch, timeout=1.0, retries=5, deadline=120,
                                                      duplicate_acks=duplicate_acks)]
    cpu = time.thread_time() - cpu
    ok = [f for f in got if f.ok and len(f.data) == sizes[f.filename]]
    span = (max(f.finished for f in ok) - min(f.started for f in got)) if ok else NAN
    times = sorted(f.duration for f in ok)
    return {"done": len(ok), "rate": len(ok) / span if ok else 0.0, "failures": len(got) - len(ok),
            "client_cpu": cpu * 1000 / len(names),
            "retransmits": float(sum(f.retransmits for f in got)), "duplicates": float(sum(f.duplicates for f in got)),
            "p50": percentile(times, 50) if times else NAN, "p99": percentile(times, 99) if times else NAN}


def client_command(which: str, port: int, name: str, dest: Path, windowsize: int = 1) -> list[str]:
    if which == "tftp":
        return [shutil.which("tftp"), "-m", "binary", "127.0.0.1", str(port), "-c", "get", name, str(dest)]
    cmd = [shutil.which("atftp"), "-g", "-r", name, "-l", str(dest)]
    if windowsize > 1:
        cmd += ["--trace", "--option", f"windowsize {windowsize}"]
    return cmd + ["127.0.0.1", str(port)]


def processes_run(port: int, names: list[str], sizes: dict, tmp: Path, clients: list[str], starts: list[float],
                  windowsize: int = 1) -> dict:
    """One real client process per name, started at ``starts`` (seconds from now; all 0: a burst),
    with ``clients`` taken in turn. A transfer is good when its process exits 0 with a file of the
    size the server should send (tftp-hpa exits 0 even after a TFTP error)."""
    out = tmp / f"clients-{port}"
    out.mkdir()
    began: dict[int, tuple[float, str]] = {}
    ended: dict[int, tuple[float, int, float]] = {}  # pid -> (exit time, exit code, CPU seconds)
    done = threading.Event()

    def reap():  # exit times as they happen (a wait loop, so no Popen object lags behind)
        while not done.is_set() or not began.keys() <= ended.keys():
            try:
                pid, status, usage = os.wait4(-1, 0)
            except ChildProcessError:
                time.sleep(0.01)
                continue
            ended[pid] = (time.monotonic(), os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime)

    reaper = threading.Thread(target=reap, daemon=True)
    reaper.start()
    t0 = time.monotonic()
    for i, (name, at) in enumerate(zip(names, starts)):
        delay = t0 + at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        which = clients[i % len(clients)]
        dest = out / name
        trace = os.open(out / f"{name}.trace", os.O_WRONLY | os.O_CREAT, 0o644) if windowsize > 1 else None
        actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0)]
        if trace is not None:
            actions += [(os.POSIX_SPAWN_DUP2, trace, 1), (os.POSIX_SPAWN_DUP2, trace, 2)]
        else:
            actions += [(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
                        (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0)]
        cmd = client_command(which, port, name, dest, windowsize)
        pid = os.posix_spawn(cmd[0], cmd, os.environ, file_actions=actions)
        began[pid] = (time.monotonic(), name)
        if trace is not None:
            os.close(trace)
    done.set()
    reaper.join(120)
    for pid in set(began) - set(ended):  # a client still hanging after two minutes counts as failed
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    reaper.join(10)
    ok, times, dup = 0, [], 0.0
    for pid, (start, name) in began.items():
        end, code, _ = ended.get(pid, (NAN, -1, 0.0))
        dest = out / name
        if code == 0 and dest.exists() and dest.stat().st_size == sizes[name]:
            ok += 1
            times.append(end - start)
        if windowsize > 1:
            blocks = re.findall(r"DATA <block: (\d+)", (out / f"{name}.trace").read_text(errors="replace"))
            dup += len(blocks) - len(set(blocks))
    last = max((e for e, _, _ in ended.values()), default=NAN)
    client_cpu = sum(ended[pid][2] for pid in began if pid in ended)
    span = last - t0
    shutil.rmtree(out, ignore_errors=True)
    times.sort()
    return {"done": ok, "rate": ok / span if span > 0 else 0.0, "failures": len(names) - ok,
            "retransmits": NAN, "duplicates": dup if windowsize > 1 else NAN,
            "client_cpu": client_cpu * 1000 / len(names),
            "p50": percentile(times, 50) if times else NAN, "p99": percentile(times, 99) if times else NAN}


def one_run(pattern: str, server: Server, names: list[str], sizes: dict, tmp: Path, rng: random.Random) -> dict:
    if pattern == "inproc-burst":
        r = inproc_run(server.port, names, sizes)
    elif pattern == "inproc-seq":
        r = inproc_run(server.port, names, sizes, one_at_a_time=True)
    elif pattern == "dupack-ws4":
        r = inproc_run(server.port, names, sizes, windowsize=4, duplicate_acks=True)
    elif pattern in ("tftp-burst", "atftp-burst"):
        r = processes_run(server.port, names, sizes, tmp, [pattern.split("-")[0]], [0.0] * len(names))
    elif pattern == "atftp-ws4":
        r = processes_run(server.port, names, sizes, tmp, ["atftp"], [0.0] * len(names), windowsize=4)
    elif pattern.startswith("spread-"):
        over = float(pattern[len("spread-"):-1])
        starts = sorted(rng.uniform(0, over) for _ in names)
        r = processes_run(server.port, names, sizes, tmp, ["tftp", "atftp"], starts)
    else:
        raise ValueError(pattern)
    time.sleep(0.2)  # transfers the clients finished are logged and counted by the server
    r["cpu"] = server.used() * 1000 / r["done"] if r["done"] else NAN
    r["builds_cpu"] = server.builds_used() * 1000 / r["done"] if r["done"] else NAN  # part of r["cpu"]
    r["drops"] = float(socket_drops(server.port) or 0)
    if pattern not in INPROC:
        r["retransmits"] = server.retransmissions()
    return r


# -- the run ----------------------------------------------------------------------------------


def reference_sizes(root: Path, dyn: Path, names: list[str], tmp: Path, args) -> dict:
    """What each file's size must be: static from the root, dynamic from one warm fetch."""
    sizes = {("static", n): (root / n).stat().st_size for n in names}
    srv = Server("hfcprov", "dyn-cold", tmp / "site" / "empty", dyn, len(names), args, tmp)
    try:
        for f in fetch_many("127.0.0.1", srv.port, names, timeout=2.0, retries=5):
            if not f.ok:
                raise SystemExit(f"reference fetch of dynamic {f.filename} failed: {f.error}")
            sizes["dyn", f.filename] = len(f.data)
    finally:
        srv.stop()
    return sizes


def main(argv=None) -> int:
    if argv is None and sys.argv[1:2] == ["--floor-serve"]:  # the python-floor server's own process
        floor_serve(int(sys.argv[2]), sys.argv[3])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, nargs="+", default=[1000], help="modems per storm")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--arrival", nargs="+", default=list(PATTERNS), choices=PATTERNS,
                    help="arrival patterns (spread: one per --spread value)")
    ap.add_argument("--spread", type=float, nargs="+", default=[1.0, 10.0],
                    help="seconds over which the spread pattern's arrivals are drawn")
    ap.add_argument("--atftpd", default=None, help="atftpd binary (default: PATH, $ATFTPD, or unpacked)")
    ap.add_argument("--no-cold", action="store_true", help="leave out hfcprov's cold dynamic server")
    ap.add_argument("--niceness", type=int, nargs="+", default=[],
                    help="also cold dynamic servers whose build workers run this much below the server "
                         "(the YAML's niceness; rows dyn-cold/nN)")
    ap.add_argument("--builds", nargs="+", default=[], metavar="pPnN",
                    help="also cold dynamic servers with P build workers N below the server (p2n10: 2 workers, "
                         "10 below; p1 or n0 alone leave the other at its default; rows dyn-cold/SPEC)")
    ap.add_argument("--distinct", type=int, default=None,
                    help="modems share this many different configs (default: each draws its own filler count, "
                         "about a third of them differ); what a cold server must build")
    ap.add_argument("--running", action="store_true",
                    help="also hfcprov servers that outlive the runs: static, and dynamic after --warm")
    ap.add_argument("--contend", action="store_true",
                    help="a CPU-bound process per core at normal priority during the storms")
    ap.add_argument("--server-priority", type=int, default=os.getpriority(os.PRIO_PROCESS, 0),
                    help="nice value of every hfcprov server (default: the bench's own, which the C servers "
                         "inherit; -10 is what `tftp serve` sets itself to as root)")
    ap.add_argument("--floor", action="store_true",
                    help="also python-floor: a 40-line Python server making hfcprov's system calls per ACK and "
                         "nothing else (no options, timers or log), the least a Python server can spend; "
                         "real-client bursts and spreads at windowsize 1 only")
    ap.add_argument("--baseline", type=Path, default=None,
                    help="another hfcprov checkout: its static and cold dynamic servers are measured too "
                         "(hfcprov@base)")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # servers, clients and cgroups are cleaned up
    args.atftpd = find_atftpd(args.atftpd)
    raise_fd_limit(65536)
    patterns = [p for p in args.arrival if p != "spread"]
    if "spread" in args.arrival:
        patterns += [f"spread-{s:g}s" for s in args.spread]
    servers = [("hfcprov", "static")] + ([] if args.no_cold else [("hfcprov", "dyn-cold")])
    servers += [("hfcprov", f"dyn-cold/n{nice}") for nice in args.niceness]
    servers += [("hfcprov", f"dyn-cold/{spec}") for spec in args.builds]
    if args.baseline:
        servers += [("hfcprov@base", "static")] + ([] if args.no_cold else [("hfcprov@base", "dyn-cold")])
    if args.floor:
        servers.append(("python-floor", "static"))
    if shutil.which("in.tftpd") or Path("/usr/sbin/in.tftpd").exists():
        servers.append(("tftpd-hpa", "static"))
    else:
        print("# tftpd-hpa (in.tftpd) not found: skipped", file=sys.stderr)
    if args.atftpd:
        servers.append(("atftpd", "static"))
    else:
        print("# atftpd not found: skipped (see --atftpd)", file=sys.stderr)
    for tool, needed_by in (("tftp", "tftp-burst"), ("atftp", "atftp-burst")):
        if not shutil.which(tool):
            print(f"# {tool} client not found: patterns using it skipped", file=sys.stderr)
            patterns = [p for p in patterns if not (p == needed_by or (tool == "atftp" and p == "atftp-ws4")
                                                    or p.startswith("spread-"))]
    load0 = os.getloadavg()
    rows, running_rows = [], []
    rng = random.Random(11)
    with tempfile.TemporaryDirectory(prefix="hfcprov-bootstorm-") as tmpname:
        tmp = Path(tmpname)
        os.chmod(tmp, 0o755)
        nmax = max(args.n)
        t0 = time.perf_counter()
        inv, root, dyn = make_site(tmp / "site", nmax, distinct=args.distinct)
        configs = len({line.rsplit(",", 1)[1] for line in inv.read_text().splitlines()[1:]})
        all_names = sorted(p.name for p in root.glob("*.cm"))
        sizes = reference_sizes(root, dyn, all_names, tmp, args)
        dyns = {"dyn-cold": dyn}
        for nice in args.niceness:
            dyns[f"dyn-cold/n{nice}"] = dyn.with_name(f"dyn-n{nice}.yaml")
            dyns[f"dyn-cold/n{nice}"].write_text(dyn.read_text() + f"niceness: {nice}\n")
        for spec in args.builds:
            got = re.fullmatch(r"(?:p(\d+))?(?:n(\d+))?", spec)
            if not got or not spec:
                raise SystemExit(f"--builds {spec}: expected pPnN, p P or nN (p2n10: 2 workers, 10 below the server)")
            dyns[f"dyn-cold/{spec}"] = dyn.with_name(f"dyn-{spec}.yaml")
            dyns[f"dyn-cold/{spec}"].write_text(dyn.read_text() + "".join(
                f"{key}: {value}\n" for key, value in zip(("processes", "niceness"), got.groups()) if value))
        file_sizes = [sizes["static", n] for n in all_names]
        print(f"# {len(all_names)} config files ({configs} distinct), {min(file_sizes)}-{max(file_sizes)} bytes "
              f"(median {statistics.median(file_sizes):.0f}), built in {time.perf_counter() - t0:.1f}s; "
              f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}", file=sys.stderr)
        contention = start_contention() if args.contend else []
        for n in args.n:
            names = all_names[:n]
            for pattern in patterns:
                runs = {s: [] for s in servers if not (pattern in WINDOWED and s[0] == "tftpd-hpa")
                        and not (s[0] == "python-floor" and not pattern.startswith(FLOOR_PATTERNS))}
                for _ in range(args.repeats):
                    for (kind, files), done in runs.items():
                        cold = files.startswith("dyn-cold")
                        srv = Server(kind, files, tmp / "site" / "empty" if cold else root, dyns.get(files), n,
                                     args, tmp)
                        want = {name: sizes["dyn" if cold else "static", name] for name in names}
                        try:
                            done.append(one_run(pattern, srv, names, want, tmp, rng))
                        finally:
                            srv.stop()
                for (kind, files), done in runs.items():
                    rows.append((n, pattern, kind, files, summarise(done)))
                    m = rows[-1][4]
                    print(f"# n={n} {pattern} {kind} {files}: {m['rate']:.0f}/s fail={m['failures']:.0f} "
                          f"cpu/1000={m['cpu']:.3f}s", file=sys.stderr)
            if args.running:
                running_rows += running_servers(args, root, dyn, names, sizes, tmp, n)
        stop_contention(contention)
    load1 = os.getloadavg()
    print(f"# command: {' '.join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])])}")
    print(f"# load average before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, "
          f"after {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}; {os.cpu_count()} cores; servers at nice "
          f"{args.server_priority}; server CPU from {CPU_SOURCE.get('kind', '?')}")
    print_table(rows)
    print_ratios(rows)
    if running_rows:
        print_table(running_rows)
    return 0


def summarise(done: list[dict]) -> dict:
    med = {k: statistics.median(r[k] for r in done) for k in done[0]}
    for k in ("rate", "cpu"):
        values = [r[k] for r in done]
        med[k + "_min"], med[k + "_max"] = min(values), max(values)
    med["failures_max"] = max(r["failures"] for r in done)
    return med


def running_servers(args, root, dyn, names, sizes, tmp, n) -> list:
    """hfcprov servers that serve storm after storm: static, and dynamic built ahead (--warm);
    each serves one in-process burst before the measured ones."""
    out = []
    for files, folder, extra in (("primed", root, ()), ("dynamic", tmp / "site" / "empty", ("--warm",))):
        srv = Server("hfcprov", files, folder, dyn if extra else None, n, args, tmp, extra)
        try:
            if extra:
                _wait_for_event(srv.log, "warm", timeout=1800)
            want = {name: sizes["dyn" if extra else "static", name] for name in names}
            inproc_run(srv.port, names, want)
            done = []
            for _ in range(args.repeats):
                cpu0 = srv.used()
                r = inproc_run(srv.port, names, want)
                r["cpu"] = (srv.used() - cpu0) * 1000 / r["done"] if r["done"] else NAN
                r["drops"] = float(socket_drops(srv.port) or 0)
                done.append(r)
            out.append((n, "inproc-burst", "hfcprov", files, summarise(done)))
        finally:
            srv.stop()
    return out


def _wait_for_event(log: Path, event: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and f'"event":"{event}"' in log.read_text():
            return
        time.sleep(0.5)
    raise RuntimeError(f"no {event} event in {log} after {timeout}s")


def _num(x: float, fmt: str) -> str:
    return "-" if math.isnan(x) else format(x, fmt)


def print_table(rows) -> None:
    print(f"{'modems':>6} {'arrival':<13} {'server':<12} {'files':<11} {'xfers/s':>8} {'min-max':>11} {'fail':>5} "
          f"{'CPU s/1000':>10} {'min-max':>11} {'retx':>6} {'dupDATA':>7} {'p50 ms':>7} {'p99 ms':>7} {'drops':>5} "
          f"{'vs best C':>9} {'CPU vs atftpd':>13} {'clients CPU':>11}")
    for n, pattern, kind, files, m in rows:
        same = [r for r in rows if r[0] == n and r[1] == pattern]
        c_rates = [r[4]["rate"] for r in same if r[2] in ("tftpd-hpa", "atftpd")]
        atftpd = [r[4]["cpu"] for r in same if r[2] == "atftpd"]
        vs_c = f"{m['rate'] / max(c_rates):.2f}x" if c_rates and max(c_rates) and kind.startswith("hfcprov") else ""
        vs_a = f"{m['cpu'] / atftpd[0]:.2f}x" if atftpd and not math.isnan(atftpd[0]) and kind != "atftpd" else ""
        fail = f"{m['failures']:.0f}" + (f"/{m['failures_max']:.0f}" if m["failures_max"] != m["failures"] else "")
        rates = f"{m['rate_min']:.0f}-{m['rate_max']:.0f}"
        cpus = _num(m["cpu_min"], ".3f") + "-" + _num(m["cpu_max"], ".3f")
        print(f"{n:>6} {pattern:<13} {kind:<12} {files:<11} {m['rate']:>8.0f} "
              f"{rates:>11} {fail:>5} {_num(m['cpu'], '.3f'):>10} "
              f"{cpus:>11} {_num(m['retransmits'], '.0f'):>6} "
              f"{_num(m['duplicates'], '.0f'):>7} {_num(m['p50'] * 1e3, '.1f'):>7} {_num(m['p99'] * 1e3, '.1f'):>7} "
              f"{m['drops']:>5.0f} {vs_c:>9} {vs_a:>13} {_num(m['client_cpu'], '.3f'):>11}")


def print_ratios(rows) -> None:
    """Cold dynamic over static, per pattern (both fresh hfcprov servers in the same runs)."""
    for n, pattern, kind, files, m in rows:
        if not files.startswith("dyn-cold"):
            continue
        st = next((r[4] for r in rows if r[:3] == (n, pattern, kind) and r[3] == "static"), None)
        if st and st["rate"]:
            print(f"# n={n} {pattern}: {kind} {files}/static rate {m['rate'] / st['rate']:.2f}x "
                  f"(min-max {m['rate_min'] / st['rate_max']:.2f}-{m['rate_max'] / st['rate_min']:.2f}), "
                  f"retransmissions {_num(m['retransmits'], '.0f')} vs {_num(st['retransmits'], '.0f')}; "
                  f"server CPU {_num(m['cpu'] - st['cpu'], '.3f')} s per 1,000 above static, of which its build "
                  f"workers {_num(m.get('builds_cpu', NAN), '.3f')} s")


if __name__ == "__main__":
    sys.exit(main())
