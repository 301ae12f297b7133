"""Run net-snmp's ``snmpd`` on loopback as a modem, its DOCSIS objects from ``hfcprov.snmp.passpersist``.

A second real agent beside snmpsim, and a stateful one: a reset makes the modem go
down and come back, an upgrade runs and ends. Used by the tests and ``bench/snmp_audit.py``::

    with NetSnmpModem(port, state={"config_file": "gold.cm"}, rw_community="private") as m:
        ...  # SET docsDevResetNow.0 on 127.0.0.1:port with community "private"
        m.events()  # what the modem was told, one dict per SET it accepted

``writable=False`` makes an agent that refuses every write: its ``rw_community`` is read-only
(a SET answers noAccess; an unknown community would just time out).
Communities and v3 keys go into a 0600 config file, never onto a command line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hfcprov.errors import HfcprovError
from hfcprov.fileio import atomic_write
from hfcprov.snmp.simagent import AgentProcess, die_with_parent, udp_bound


MIB2, CABLELABS = "1.3.6.1.2.1", "1.3.6.1.4.1.4491"


class NetSnmpError(HfcprovError):
    """snmpd is missing or could not be started."""


def snmpd_path() -> str | None:
    return shutil.which("snmpd") or next((p for p in ("/usr/sbin/snmpd", "/sbin/snmpd") if os.path.exists(p)), None)


def _udp6_ports() -> set[int]:
    """Local ports of the IPv6 UDP sockets (/proc/net/udp6), to see snmpd has bound."""
    try:
        lines = Path("/proc/net/udp6").read_text().splitlines()[1:]
    except OSError:
        return set()
    return {int(line.split()[1].rsplit(":", 1)[1], 16) for line in lines if line.strip()}


class NetSnmpModem(AgentProcess):
    """One ``snmpd`` process serving one modem on ``host:port`` (UDP; ``host`` may be ``::1``)."""

    def __init__(self, port: int, host: str = "127.0.0.1", state: dict | None = None,
                 ro_community: str = "public", rw_community: str | None = "private", writable: bool = True,
                 v3_user: str | None = None, v3_auth_key: str | None = None, v3_priv_key: str | None = None,
                 start_timeout: float = 20.0):
        self.host, self.port = host, port
        self.state = dict(state or {})
        self.ro_community, self.rw_community, self.writable = ro_community, rw_community, writable
        self.v3 = (v3_user, v3_auth_key, v3_priv_key)
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None

    def start(self) -> NetSnmpModem:
        binary = snmpd_path()
        if binary is None:
            raise NetSnmpError("snmpd not found (Debian package snmpd; scripts/debian-deps.sh snmpd)")
        self._tmp = tempfile.TemporaryDirectory(prefix="hfcprov-snmpd-")
        tmp = Path(self._tmp.name)
        atomic_write(tmp / "state.json", json.dumps(self.state))
        backends = {}
        for name, subtree in (("backend.sh", MIB2), ("backend-clab.sh", CABLELABS)):
            backends[subtree] = tmp / name
            atomic_write(tmp / name, f"#!/bin/sh\nexec {sys.executable} -m hfcprov.snmp.passpersist "
                                     f"{tmp / 'state.json'} {tmp / 'events.jsonl'} {subtree}\n", mode=0o700)
        v6 = ":" in self.host
        source = "::1" if v6 else "127.0.0.1"
        community = "rocommunity6" if v6 else "rocommunity"
        lines = [f"agentaddress {'udp6' if v6 else 'udp'}:[{self.host}]:{self.port}" if v6
                 else f"agentaddress udp:{self.host}:{self.port}",
                 f"{community} {self.ro_community} {source}"]
        if self.rw_community:
            kind = ("rw" if self.writable else "ro") + "community" + ("6" if v6 else "")
            lines.append(f"{kind} {self.rw_community} {source}")
        user, auth_key, priv_key = self.v3
        if user:
            lines.append(f'createUser {user} SHA "{auth_key}"' + (f' AES "{priv_key}"' if priv_key else ""))
            lines.append(f"{'rwuser' if self.writable else 'rouser'} {user} {'priv' if priv_key else 'auth'}")
        # one registration (one backend process, one modem state) over mib-2: snmpd's own modules
        # register the system, interfaces, ... subtrees more specifically and keep answering those
        # and one over CableLabs' arc, for DOCS-QOS3-MIB objects a state's "override" serves
        lines += [f"pass_persist .{subtree} {backend}" for subtree, backend in backends.items()]
        atomic_write(tmp / "snmpd.conf", "\n".join(lines) + "\n", mode=0o600)
        (tmp / "persist").mkdir()
        env = dict(os.environ, SNMP_PERSISTENT_DIR=str(tmp / "persist"), MIBS="", MIBDIRS=str(tmp))
        env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                             env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        self._log = open(tmp / "snmpd.log", "w+b")  # noqa: SIM115 (lives as long as the agent)
        self.proc = subprocess.Popen([binary, "-f", "-C", "-c", str(tmp / "snmpd.conf"), "-Lf", str(tmp / "snmpd.err"),
                                      "-p", str(tmp / "snmpd.pid")],
                                     stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                     preexec_fn=die_with_parent)  # noqa: PLW1509 (only calls prctl)
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self.proc.poll() is not None:
                err = (tmp / "snmpd.err").read_text(errors="replace") if (tmp / "snmpd.err").exists() else ""
                self.stop()
                raise NetSnmpError(f"snmpd exited with status {self.proc.returncode}: {' | '.join(err.splitlines()[-3:])}")
            if (self.port in _udp6_ports()) if v6 else ((self.host, self.port) in udp_bound()):
                self._warm(deadline)
                return self
            if time.monotonic() > deadline:
                self.stop()
                raise NetSnmpError(f"snmpd did not bind {self.host}:{self.port} within {self.start_timeout:.0f} s")
            time.sleep(0.05)

    def _warm(self, deadline: float) -> None:
        """One GET of a backend object: snmpd starts the pass_persist backend (a Python process) on the
        first request, which on a busy machine takes longer than a client's timeout."""
        import socket

        from hfcprov.snmp.passpersist import CONFIG_FILE
        from hfcprov.snmp.v2c import GET, encode_request

        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.settimeout(1.0)
            while time.monotonic() < deadline:
                s.sendto(encode_request(GET, 1, self.ro_community.encode(), [CONFIG_FILE]), (self.host, self.port))
                try:
                    s.recv(4096)
                    return
                except OSError:
                    continue
        self.stop()
        raise NetSnmpError(f"snmpd on {self.host}:{self.port} did not answer within {self.start_timeout:.0f} s")

    def events(self) -> list[dict]:
        """The SETs the modem accepted so far (and what followed: upgraded, upgrade-failed)."""
        path = Path(self._tmp.name) / "events.jsonl" if self._tmp else None
        if path is None or not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
