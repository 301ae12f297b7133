"""Shared test plumbing: Debian tools, root, free ports, waiting for things to happen.

A test that needs a Debian tool calls ``require_tool``: when the tool is absent
and we are root (as in CI) it is installed by ``scripts/debian-deps.sh``;
otherwise the test is skipped with the reason stated.

Tests synchronise on events (a line a process prints, a socket's answer, a
threading.Event, a process's exit through its pidfd), never on sleeps: the suite
must pass on a busy machine (``scripts/contend``). ``wait_for`` polls a
condition only where nothing signals it (another process's database rows).
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DEPS_SCRIPT = REPO / "scripts" / "debian-deps.sh"


def is_root() -> bool:
    return os.geteuid() == 0


def require_root(why: str = "network namespaces and tc") -> None:
    if not is_root():
        pytest.skip(f"needs root for {why}")


def require_tool(binary: str, package: str | None = None) -> str:
    """Path of ``binary``; install its Debian ``package`` when root, else skip."""
    found = shutil.which(binary) or _sbin(binary)
    if found:
        return found
    package = package or binary
    if not is_root() or not shutil.which("apt-get"):
        pytest.skip(f"needs {binary} (Debian package {package}); run scripts/debian-deps.sh as root")
    result = subprocess.run(["bash", str(DEPS_SCRIPT), package], capture_output=True, text=True)
    found = shutil.which(binary) or _sbin(binary)
    if result.returncode != 0 or not found:
        pytest.fail(f"installing {package} for {binary} failed: {result.stderr.strip()[-500:]}")
    return found


def _sbin(binary: str) -> str | None:
    for d in ("/usr/sbin", "/sbin", "/usr/local/sbin"):
        p = Path(d) / binary
        if p.exists():
            return str(p)
    return None


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_tcp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def has_ipv6_loopback() -> bool:
    """Can a socket bind ::1 here (IPv6 configured on lo)?"""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def wait_for(condition: Callable[[], object], timeout: float = 30.0, what: str = "the condition"):
    """``condition()``'s first true value, polled with a short back-off; the test fails after ``timeout`` s.

    Only for a state nothing signals (rows another process writes, another process's children):
    wait on the event itself wherever there is one."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        value = condition()
        if value:
            return value
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"gave up after {timeout:g} s waiting for {what}")
        # the one poll interval of the suite: doubling from 1 ms to 50 ms, so a quick event costs
        # little and a slow one few wake-ups
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.05)


def wait_exited(pids: Iterable[int], timeout: float = 30.0) -> list[int]:
    """Wait until every process in ``pids`` has exited (a zombie counts); returns those still running.

    Any process, not only our children: each one's pidfd becomes readable when it exits."""
    fds = {}
    for pid in pids:
        try:
            fds[os.pidfd_open(pid)] = pid
        except ProcessLookupError:
            continue  # gone already
    deadline = time.monotonic() + timeout
    try:
        while fds:
            left = deadline - time.monotonic()
            ready = select.select(list(fds), [], [], max(0.0, left))[0] if left > 0 else []
            if not ready:
                break
            for fd in ready:
                os.close(fd)
                del fds[fd]
        return sorted(fds.values())
    finally:
        for fd in fds:
            os.close(fd)


@contextlib.contextmanager
def host_priority():
    """Run the calling thread as an emulated host (SCHED_FIFO below the delay line) when root.

    For a root test's own traffic source and sink in namespaces: on a busy machine a normal
    thread loses the CPU for tens of milliseconds, its queue runs dry and the test would
    measure the machine, not the plant. Threads started inside inherit it."""
    if not is_root():
        yield None
        return
    from hfcprov.emu.timekeeping import host_priority as emulated_host

    with emulated_host() as got:
        yield got
