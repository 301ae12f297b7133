"""kill -9 in the middle of a campaign, then --resume: every point stored exactly once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from tests.lab.conftest import write
from tests.support import wait_for

SPEC = """
    name: killme
    grid:
      upstream_rate: [2M, 10M]
      buffer: [16KiB, 32KiB, 64KiB, 128KiB, 256KiB]
      rtt: [40ms, 100ms]
      congestion_control: newreno
    traffic: {duration: 60s, warmup: 5s}
    repetitions: 1
    jobs: 2
"""


def _count(db, sql):
    con = sqlite3.connect(db, timeout=30)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


@pytest.mark.parametrize("how", ["kill -9", "ctrl-c"])
@pytest.mark.slow
def test_interrupt_then_resume_completes_without_losing_or_repeating_a_point(tmp_path, how):
    spec = write(tmp_path, SPEC)
    db = tmp_path / "k.db"
    cmd = [sys.executable, "-m", "hfcprov", "campaign", "run", str(spec), "-d", str(db), "-q"]
    # Run as a terminal runs a foreground job: SIGINT at its default. Started from a non-interactive
    # shell's background job (as CI may start this suite), we inherit SIGINT ignored, the campaign would
    # too, and CPython raises KeyboardInterrupt only if SIGINT is not ignored at start.
    cmd = [sys.executable, "-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
           "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); os.execv(sys.argv[1], sys.argv[1:])", *cmd]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        def four_done() -> bool:
            assert proc.poll() is None, proc.communicate()[1].decode()[-2000:]
            try:
                return db.exists() and _count(db, "SELECT count(*) FROM point WHERE state = 'done'") >= 4
            except sqlite3.OperationalError:
                return False  # the schema is being created

        # the runner says nothing per point: its database is the only sign of progress
        wait_for(four_done, timeout=120, what="the runner to finish 4 points")
        # Frozen while status is read: however fast the machine, the campaign is mid-way when interrupted.
        os.killpg(proc.pid, signal.SIGSTOP)
        status = subprocess.run([sys.executable, "-m", "hfcprov", "campaign", "status", str(db)],
                                capture_output=True, text=True, timeout=30)
        assert status.returncode == 0 and "campaign killme:" in status.stdout and "/20 done" in status.stdout
        assert "left" in status.stdout and "last: us=" in status.stdout
        if how == "kill -9":
            os.kill(proc.pid, signal.SIGKILL)
        else:  # a terminal's Ctrl-C reaches the whole foreground process group
            os.killpg(proc.pid, signal.SIGINT)
        os.killpg(proc.pid, signal.SIGCONT)
        proc.wait(timeout=30)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the pool's workers, orphaned by the kill
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)
    assert proc.returncode == (-signal.SIGKILL if how == "kill -9" else 130)
    if how == "ctrl-c":
        assert proc.stderr.read().decode().strip().endswith(("hfcprov: aborted", "hfcprov: interrupted"))
    total = 20
    done_before = {r[0]: r[1:] for r in sqlite3.connect(db).execute(
        "SELECT p.idx, r.id, r.goodput_bps FROM point p JOIN run r ON r.point_id = p.id WHERE p.state = 'done'")}
    interrupted = {r[0] for r in sqlite3.connect(db).execute("SELECT idx FROM point WHERE state = 'running'")}
    assert 4 <= len(done_before) < total
    assert len(done_before) == _count(db, "SELECT count(*) FROM run")  # no run without its point marked done

    res = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    assert f"ran {total - len(done_before)} point(s)" in res.stderr
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM point WHERE state = 'done'").fetchone()[0] == total
    assert con.execute("SELECT count(*) FROM run").fetchone()[0] == total
    assert con.execute("SELECT count(DISTINCT point_id) FROM run").fetchone()[0] == total
    after = {r[0]: r[1:] for r in con.execute(
        "SELECT p.idx, r.id, r.goodput_bps FROM point p JOIN run r ON r.point_id = p.id")}
    for idx, row in done_before.items():
        assert after[idx] == row  # kept, not rerun
    for idx in interrupted:  # the points in flight at the kill ran again, once
        assert con.execute("SELECT attempts FROM point WHERE idx = ?", (idx,)).fetchone()[0] == 2
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
