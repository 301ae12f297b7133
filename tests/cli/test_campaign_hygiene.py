"""A campaign run's processes and lock, with real processes: kill -9 of the runner leaves no worker behind,
a second run is told who holds the campaign, status tells running from interrupted, Ctrl-C prints the
exact command that finishes the campaign."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import wait_exited, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")]

# four points of ~10 s of CPU each on two workers: long enough to be caught mid-run
SPEC = """name: hygiene
target: sim
grid:
  upstream_rate: [10M]
  buffer: [16KiB, 32KiB, 64KiB, 128KiB]
  rtt: [40ms]
traffic: {duration: 1500s, warmup: 5s}
jobs: 2
"""

HFCPROV = [sys.executable, "-m", "hfcprov"]
# SIGINT at its default even when this suite runs as a background job (which inherits it ignored)
WITH_SIGINT = [sys.executable, "-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
               "os.execv(sys.argv[1], sys.argv[1:])"]


def children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    return found


def running_points(db: Path) -> int:
    try:
        con = sqlite3.connect(db, timeout=30)
        try:
            return con.execute("SELECT count(*) FROM point WHERE state = 'running'").fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def start(tmp_path: Path) -> tuple[subprocess.Popen, Path, Path]:
    spec, db = tmp_path / "hygiene.yaml", tmp_path / "h.db"
    spec.write_text(SPEC)
    proc = subprocess.Popen(WITH_SIGINT + [*HFCPROV, "campaign", "run", "hygiene.yaml", "-d", "h.db"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)

    def two_running() -> bool:
        assert proc.poll() is None, proc.communicate()
        return db.exists() and running_points(db) == 2 and len(children(proc.pid)) >= 2

    try:  # nothing announces it: the database's rows and the runner's children are the signs
        wait_for(two_running, timeout=120, what="the campaign to have two points running")
    except BaseException:
        proc.kill()
        raise
    return proc, spec, db


def status(tmp_path, *args):
    return subprocess.run([*HFCPROV, "campaign", "status", *args, "h.db"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)


def test_kill_9_leaves_no_worker_and_status_says_interrupted(tmp_path):
    proc, spec, db = start(tmp_path)
    workers = children(proc.pid)
    try:
        s = status(tmp_path)
        assert s.returncode == 0 and f"running (pid {proc.pid} on " in s.stdout, s.stdout
        # a second run on the same database is refused, naming the holder, and changes nothing
        second = subprocess.run([*HFCPROV, "campaign", "run", "hygiene.yaml", "--resume", "-d", "h.db"],
                                cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert second.returncode == 1 and "Traceback" not in second.stderr
        assert second.stderr.count("\n") == 1
        assert f"another run holds this campaign: pid {proc.pid} on" in second.stderr
        assert running_points(db) == 2

        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert wait_exited(workers, timeout=30) == [], "pool workers outlived the killed runner"
    finally:
        for pid in [proc.pid, *workers]:  # only what this test started
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    s = status(tmp_path)
    assert s.returncode == 0
    assert "interrupted: 0/4 done, 0 failed, 4 not run" in s.stdout and "running" not in s.stdout
    assert "finish with: hfcprov campaign run hygiene.yaml --resume -d h.db" in s.stdout  # the spec as given
    j = json.loads(status(tmp_path, "--json").stdout)
    assert (j["state"], j["running"], j["pending"], j["holder"]) == ("interrupted", 0, 4, None)


def test_ctrl_c_prints_the_exact_resume_command(tmp_path):
    proc, spec, db = start(tmp_path)
    workers = children(proc.pid)
    try:
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole process group
        _, err = proc.communicate(timeout=60)
    finally:
        for pid in [proc.pid, *workers]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[-1] == "hfcprov: interrupted"
    assert lines[-2].strip() == "hfcprov campaign run hygiene.yaml --resume -d h.db"
    assert shlex.split(lines[-2])[0] == "hfcprov"
    s = status(tmp_path, "--json")
    assert json.loads(s.stdout)["state"] == "interrupted"
