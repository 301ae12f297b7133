"""Network namespaces: create, run commands in, enter from a thread, and remove.

Everything here shells out to iproute2 (``ip``, ``tc``), the tools an engineer
would use by hand, so a half-built lab can be inspected with the same commands.
A thread may also *enter* a namespace (``entered``): sockets it creates there
stay in that namespace after it leaves, which lets one process serve TFTP on
the CMTS side while it runs elsewhere.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import subprocess

from hfcprov.errors import HfcprovError

CLONE_NEWNET = 0x40000000
NETNS_DIR = "/run/netns"


class NetnsError(HfcprovError):
    """A namespace operation failed (not root, missing tool, kernel refusal)."""


def run(argv: list[str], ns: str | None = None, check: bool = True, input: str | None = None) -> str:
    """Run ``argv`` (in namespace ``ns`` when given) and return its stdout."""
    full = (["ip", "netns", "exec", ns] if ns else []) + list(argv)
    try:
        proc = subprocess.run(full, check=False, capture_output=True, text=True, input=input, timeout=30)
    except FileNotFoundError as err:
        raise NetnsError(f"{argv[0]}: not installed (Debian package iproute2)") from err
    if check and proc.returncode != 0:
        where = f" in namespace {ns}" if ns else ""
        raise NetnsError(f"{' '.join(argv)}{where}: {proc.stderr.strip() or f'exit {proc.returncode}'}")
    return proc.stdout


def exists(name: str) -> bool:
    return os.path.exists(os.path.join(NETNS_DIR, name))


def list_names(prefix: str = "") -> list[str]:
    try:
        names = os.listdir(NETNS_DIR)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.startswith(prefix))


def add(name: str) -> None:
    run(["ip", "netns", "add", name])
    run(["ip", "link", "set", "lo", "up"], ns=name)


def pids(name: str) -> list[int]:
    out = run(["ip", "netns", "pids", name], check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def delete(name: str) -> None:
    """Remove a namespace; its veths go with it. Missing is fine (idempotent)."""
    if exists(name):
        run(["ip", "netns", "delete", name], check=False)


_libc = None


def _setns(fd: int) -> None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise NetnsError(f"setns: {os.strerror(err)} (needs root)")


@contextlib.contextmanager
def entered(name: str):
    """Move the *calling thread* into namespace ``name`` for the block, then back.

    Only the current thread moves (network namespaces are per task on Linux);
    threads it starts inside the block inherit the namespace.
    """
    try:
        target = os.open(os.path.join(NETNS_DIR, name), os.O_RDONLY)
    except FileNotFoundError as err:
        raise NetnsError(f"namespace {name} does not exist") from err
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(home)
    finally:
        os.close(target)
        os.close(home)
