"""Shared test plumbing: Debian tools, root, free ports.

A test that needs a Debian tool calls ``require_tool``: when the tool is absent
and we are root (as in CI) it is installed by ``scripts/debian-deps.sh``;
otherwise the test is skipped with the reason stated.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
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
