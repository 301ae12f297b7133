"""A real Kea DHCP server for tests, on loopback, without root.

Kea listens with UDP sockets on ``lo`` on a free server port (``-p``) and sends every answer to
a free client port (``-P``), where a relaying client (``hfcprov.boot.dhcpclient``, as a CMTS
relays) waits: no raw sockets, no port 67. Its lease file, control socket, PID and lock files
and log live in a folder of the test's. A test that has no Kea skips with the reason
(``require_tool``), and CI installs it (scripts/debian-deps.sh).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from hfcprov.boot.kea import KeaControl, KeaError
from tests.support import free_udp_port, require_tool

PACKAGE = {4: "kea-dhcp4-server", 6: "kea-dhcp6-server"}
HOOKS = ("/usr/lib/x86_64-linux-gnu/kea/hooks", "/usr/lib/aarch64-linux-gnu/kea/hooks", "/usr/lib/kea/hooks",
         "/usr/local/lib/kea/hooks")


def lease_cmds_hook() -> str:
    """Path of Kea's lease_cmds hook library (the lease API), or skip."""
    for folder in HOOKS:
        p = Path(folder) / "libdhcp_lease_cmds.so"
        if p.exists():
            return str(p)
    pytest.skip("Kea's lease_cmds hook (libdhcp_lease_cmds.so) is not installed")


class Kea:
    """``kea-dhcp4``/``kea-dhcp6`` running ``config`` (its ``Dhcp4``/``Dhcp6`` map; interfaces, lease
    file, control socket and loggers are set here). ``.lease_file``, ``.socket``, ``.server``
    (address, port to send to), ``.reply_port``; ``stop()`` ends it.

    With ``netns`` and ``interface`` it runs inside that network namespace on that interface, as a
    headend's Kea does: raw sockets, the standard ports, broadcast answers (root)."""

    def __init__(self, family: int, config: dict, lease_cmds: bool = False, netns: str | None = None,
                 interface: str | None = None):
        self.family = family
        self.netns, self.interface = netns, interface
        self.binary = require_tool(f"kea-dhcp{family}", PACKAGE[family])
        # a short folder: a UNIX socket path must stay under 108 bytes
        self.folder = Path(tempfile.mkdtemp(prefix=f"hfkea{family}-"))
        self.lease_file = self.folder / f"leases{family}.csv"
        self.socket = str(self.folder / "ctrl.sock")
        self.log = self.folder / "kea.log"
        self.config_file = self.folder / f"kea{family}.json"
        self.port, self.reply_port = free_udp_port(), free_udp_port()
        self.server = ("127.0.0.1" if family == 4 else "::1", self.port)
        self.control = KeaControl(self.socket)
        self.proc: subprocess.Popen | None = None
        self.write(config, lease_cmds)

    def write(self, config: dict, lease_cmds: bool = False) -> dict:
        """``config`` completed for this test server and written to its file (returned whole)."""
        key = "Dhcp4" if self.family == 4 else "Dhcp6"
        server = dict(config.get(key, config))
        if self.netns:
            server["interfaces-config"] = {"interfaces": [self.interface]}  # DHCPv6: "dev/address" for unicast
        elif self.family == 4:
            server["interfaces-config"] = {"interfaces": ["lo"], "dhcp-socket-type": "udp"}
        else:
            server["interfaces-config"] = {"interfaces": ["lo/::1"]}
        if self.family == 6:  # not written to /var/lib/kea, which a test machine may not have
            server.setdefault("server-id", {"type": "LL", "htype": 1, "identifier": "020000000001", "persist": False})
        server["lease-database"] = {"type": "memfile", "persist": True, "name": str(self.lease_file),
                                    "lfc-interval": 0}
        server["control-socket"] = {"socket-type": "unix", "socket-name": self.socket}
        if lease_cmds:
            server["hooks-libraries"] = [{"library": lease_cmds_hook()}]
        server["loggers"] = [{"name": f"kea-dhcp{self.family}", "severity": "INFO",
                              "output_options": [{"output": str(self.log)}]}]
        whole = {key: server}
        self.config_file.write_text(json.dumps(whole, indent=1))
        return whole

    def start(self) -> Kea:
        env = dict(os.environ, KEA_PIDFILE_DIR=str(self.folder), KEA_LOCKFILE_DIR=str(self.folder))
        command = [self.binary, "-c", str(self.config_file)]
        if self.netns:
            command = ["ip", "netns", "exec", self.netns, *command]
        else:
            command += ["-p", str(self.port), "-P", str(self.reply_port)]
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 20
        while True:  # ready when it answers on its control socket; a dead server fails at once
            try:
                if self.control.answer("status-get").get("result") == 0:
                    return self
            except KeaError:
                pass
            try:
                self.proc.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                if time.monotonic() > deadline:
                    self.stop()
                    pytest.fail(f"{self.binary} did not answer on its control socket within 20 s:\n{self.output()}")
                continue
            pytest.fail(f"{self.binary} exited with {self.proc.returncode}:\n{self.output()}")

    def output(self) -> str:
        text = self.log.read_text() if self.log.exists() else ""
        if self.proc is not None and self.proc.stdout is not None and self.proc.poll() is not None:
            text += self.proc.stdout.read().decode(errors="replace")
        return text[-3000:]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()
