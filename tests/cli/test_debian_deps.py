"""scripts/debian-deps.sh stops only what its own install started, never a daemon by name.

apt-get is replaced by a stand-in (first on PATH) whose "install" starts a daemon the way a
maintainer script would. A process named snmpd that ran before (a lab server's own agent)
must survive; the one the install started must be stopped.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest

from tests.support import DEPS_SCRIPT, wait_exited

FAKE_APT = """#!/bin/bash
[ "$1" = install ] || exit 0
setsid "$FAKE_DAEMON" 300 >/dev/null 2>&1 < /dev/null &
echo $! > "$FAKE_PIDFILE"
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the script installs packages: needs root")
@pytest.mark.skipif(not shutil.which("dpkg-query"), reason="needs Debian's dpkg-query")
def test_stops_only_what_its_install_started(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "apt-get").write_text(FAKE_APT)
    (bindir / "apt-get").chmod(0o755)
    daemon = tmp_path / "snmpd"  # a copy of sleep: its process name is snmpd, as a real agent's is
    shutil.copy(shutil.which("sleep"), daemon)
    foreign = subprocess.Popen([str(daemon), "300"], start_new_session=True)
    started = None
    try:
        env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", FAKE_DAEMON=str(daemon),
                   FAKE_PIDFILE=str(tmp_path / "pid"))
        r = subprocess.run(["bash", str(DEPS_SCRIPT), "hfcprov-test-no-such-package"], env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        started = int((tmp_path / "pid").read_text())
        assert wait_exited([started], timeout=30) == [], "the daemon the install started is still running"
        assert f"(pid {started}, started by this install)" in r.stderr
        assert foreign.poll() is None, "a daemon that ran before the install was stopped"
    finally:
        for pid in (foreign.pid, started):
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        foreign.wait(timeout=10)
