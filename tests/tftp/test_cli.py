"""`hfcprov tftp serve` as operators run it: a real process, SIGTERM, the JSON log, one-line errors."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

from hfcprov.tftp import fetch
from hfcprov.udpstat import port_bound
from tests.support import free_udp_port, wait_for

from .helpers import RawClient

REPO = Path(__file__).resolve().parents[2]
HFCPROV = [sys.executable, "-m", "hfcprov"]


def _serve(*args):
    port = free_udp_port()
    proc = subprocess.Popen(HFCPROV + ["tftp", "serve", "--listen", f"127.0.0.1:{port}", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    line = proc.stderr.readline()
    assert "serving" in line, line + proc.stderr.read()
    return proc, port


def test_serve_sigterm_finishes_in_flight_transfer(root, tmp_path):
    log = tmp_path / "tftp.jsonl"
    proc, port = _serve("--root", str(root), "--log", str(log), "--dynamic", str(REPO / "examples/tftp-dynamic.yaml"))
    try:
        assert fetch("127.0.0.1", port, "gold.cm") == (root / "gold.cm").read_bytes()
        assert fetch("127.0.0.1", port, "001095000001.cm")
        c = RawClient(port)
        c.rrq("two.cm")
        assert c.recv()[:2] == (3, 1)
        proc.send_signal(signal.SIGTERM)
        wait_for(lambda: not port_bound(port), 30, "the server to close its listening port")  # it is stopping
        assert proc.poll() is None  # still serving our transfer
        for block in (1, 2, 3):
            c.ack(block)
            if block < 3:
                assert c.recv()[:2] == (3, block + 1)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    transfers = [r for r in lines if r["event"] == "transfer"]
    assert [r["result"] for r in transfers] == ["ok", "ok", "ok"]
    assert lines[-1]["event"] == "summary" and lines[-1]["ok"] == 3


def _context_switches(pid: int) -> int:
    """Every thread's wake-ups so far (voluntary and forced context switches)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for line in (task / "status").read_text().splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                total += int(line.split()[1])
    return total


def test_idle_server_never_wakes(root, tmp_path):
    """A server with nothing to do sleeps: no thread polls, its metrics endpoint's neither (each wake-up
    costs an idle server CPU). Over 2.5 s a thread waking every 0.5 s would switch at least 5 times;
    the log's flush, 50 ms after the transfer, may wake the loop once."""
    port = free_udp_port()
    proc = subprocess.Popen(HFCPROV + ["tftp", "serve", "--listen", f"127.0.0.1:{port}", "--root", str(root),
                                       "--log", str(tmp_path / "tftp.jsonl"), "--metrics", "127.0.0.1:0",
                                       "--dynamic", str(REPO / "examples/tftp-dynamic.yaml")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = proc.stderr.readline()
        assert "metrics at http://" in line, line
        assert fetch("127.0.0.1", port, "gold.cm") == (root / "gold.cm").read_bytes()  # serving, then idle
        with urllib.request.urlopen(line.rsplit("metrics at ", 1)[1].strip(), timeout=10) as scrape:
            assert b"hfcprov_tftp_transfers_total" in scrape.read()
        before = _context_switches(proc.pid)
        threading.Event().wait(2.5)  # the interval observed, not a synchronisation
        assert _context_switches(proc.pid) - before <= 2
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0  # the signal still ends the wait at once
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_bad_dynamic_file_is_one_line_and_exit_1(root, tmp_path):
    bad = tmp_path / "dyn.yaml"
    bad.write_text("inventory: missing.csv\n")
    r = subprocess.run(HFCPROV + ["tftp", "serve", "--root", str(root), "--listen", "127.0.0.1:0", "--dynamic", str(bad)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert r.stderr.startswith("hfcprov: error: ") and r.stderr.count("\n") == 1 and "missing.csv" in r.stderr


def test_get_writes_file_atomically_or_not_at_all(root, tmp_path):
    proc, port = _serve("--root", str(root), "--log", str(tmp_path / "log"))
    try:
        out = tmp_path / "got.cm"
        r = subprocess.run(HFCPROV + ["tftp", "get", f"127.0.0.1:{port}", "gold.cm", "-o", str(out),
                                      "--windowsize", "4"], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and out.read_bytes() == (root / "gold.cm").read_bytes()
        missing = tmp_path / "missing.cm"
        r = subprocess.run(HFCPROV + ["tftp", "get", f"127.0.0.1:{port}", "nope.cm", "-o", str(missing)],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 1 and "file not found" in r.stderr and r.stderr.count("\n") == 1
        assert not missing.exists()
        r = subprocess.run(HFCPROV + ["tftp", "get", f"127.0.0.1:{port}", "gold.cm", "-o", str(tmp_path / "j.cm"),
                                      "--json"], capture_output=True, text=True, timeout=30)
        got = json.loads(r.stdout)
        gold = (root / "gold.cm").read_bytes()
        assert r.returncode == 0 and got["bytes"] == len(gold) and got["filename"] == "gold.cm"
        assert got["sha256"] == hashlib.sha256(gold).hexdigest() and got["port"] == port
        r = subprocess.run(HFCPROV + ["tftp", "get", f"127.0.0.1:{port}", "gold.cm", "--json"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and "--json needs -o" in r.stderr and r.stdout == ""
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


def test_warm_logs_when_every_dynamic_file_is_rendered(root, tmp_path):
    log = tmp_path / "tftp.jsonl"
    proc, _ = _serve("--root", str(root), "--log", str(log), "--warm",
                        "--dynamic", str(REPO / "examples/tftp-dynamic.yaml"))
    try:
        # the warm-up's line in the server's own log is the event (nothing else reports it)
        wait_for(lambda: log.exists() and '"event":"warm"' in log.read_text(), 120, "the warm-up's log line")
        (warm,) = [json.loads(x) for x in log.read_text().splitlines() if '"event":"warm"' in x]
        inventory_rows = sum(1 for line in (REPO / "examples/inventory.csv").read_text().splitlines()
                             if line and not line.startswith(("#", "mac,")))
        assert warm["modems"] == inventory_rows
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def _descendants(pid: int) -> list[int]:
    children = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def test_build_workers_run_at_ordinary_priority_or_the_servers_own_when_lower(root):
    """As root the server raises itself to -10 and its build workers stay at ordinary priority (0),
    beside a DHCP server rather than above it. A server at 0 or below ordinary priority (nice 10, as the
    boot-storm bench runs) keeps its workers at its own value: a fixed gap put them at 19, where they
    starved behind every other process and cold storms cost modems retransmissions."""
    import os

    import pytest

    if os.geteuid() != 0:
        pytest.skip("needs root to raise a process's priority")
    for args, server_nice, worker_nice in (((), -10, 0), (("--priority", "0"), 0, 0), (("--priority", "10"), 10, 10)):
        proc, _ = _serve("--root", str(root), "--log", "/dev/null", "--dynamic",
                         str(REPO / "examples/tftp-dynamic.yaml"), *args)
        try:
            assert _nice(proc.pid) == server_nice
            # the workers are its least favoured descendants (the forkserver runs at the server's value)
            assert max(_nice(p) for p in _descendants(proc.pid)) == worker_nice, args
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(15)
