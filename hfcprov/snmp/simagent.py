"""Run a real SNMP agent (snmpsim) serving simulated modems or CMTSes on loopback.

One snmpsim process can listen on many UDP endpoints; the N-th endpoint serves
``<data_dir>/<community>/1.3.6.1.6.1.1.<N>.snmprec`` (see
``hfcprov.snmp.agentdata``). Used by the tests, ``bench/snmp_audit.py`` and the
emulated modem::

    with SnmpSimAgent(data_dir, [("127.0.0.1", port)]) as agent:
        ...  # query 127.0.0.1:port with community "public"

Engine options (endpoints, SNMPv3 keys) go through ``--args-from-file`` so keys
never appear on a process command line.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hfcprov.errors import HfcprovError
from hfcprov.fileio import atomic_write
from hfcprov.udpstat import udp_sockets

UDP_DOMAIN = "1.3.6.1.6.1.1"  # snmpUDPDomain; snmpsim appends the endpoint number


class SimAgentError(HfcprovError):
    """snmpsim could not be started."""


def endpoint_datafile(data_dir: str | Path, community: str | None, n: int) -> Path:
    """Where the data of the n-th endpoint (0-based) goes.

    snmpsim maps a v2c community to the context md5(community) and then looks for
    ``<that context>/<transport domain>``, so per-endpoint files for v2c live under the
    community's md5; for SNMPv3 (``community=None``, empty context) they sit at the top.
    """
    name = f"{UDP_DOMAIN}.{n}.snmprec"
    if community is None:
        return Path(data_dir) / name
    return Path(data_dir) / hashlib.md5(community.encode()).hexdigest() / name


def write_endpoint_data(data_dir: str | Path, community: str, texts: list[str], v3: bool = False) -> None:
    """Write one .snmprec per endpoint for ``community`` (and for SNMPv3 with ``v3``).

    ``<community>.snmprec`` is written too: snmpsim only accepts a community that names a
    data file; it then prefers the per-endpoint file of the endpoint the request came in on.
    """
    data_dir = Path(data_dir)
    atomic_write(data_dir / f"{community}.snmprec", texts[0] if texts else "1.3.6.1.2.1.1.1.0|4|empty\n")
    for n, text in enumerate(texts):
        atomic_write(endpoint_datafile(data_dir, community, n), text)
        if v3:
            atomic_write(endpoint_datafile(data_dir, None, n), text)


def _udp_bound() -> set[tuple[str, int]]:
    return {(sock.address, sock.port) for table in ("/proc/net/udp", "/proc/net/udp6") for sock in udp_sockets(table)}


def _canonical(host: str) -> str:
    """An address as /proc/net/udp* spells it (IPv6 compressed), so a bound endpoint is recognised."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


def _die_with_parent() -> None:
    """In the child: get SIGTERM when the process that started the agent dies (no stray agents
    after a crashed test or benchmark)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class AgentProcess:
    """An agent process the tests or a bench started: ``stop()`` ends it and removes its temp folder."""

    proc: subprocess.Popen | None = None
    _tmp: tempfile.TemporaryDirectory | None = None
    _log = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._log:
            self._log.close()
            self._log = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class SnmpSimAgent(AgentProcess):
    """An snmpsim-command-responder process; ``start()`` returns once every endpoint is bound."""

    def __init__(
        self,
        data_dir: str | Path,
        endpoints: list[tuple[str, int]],
        v3_user: str | None = None,
        v3_auth_key: str | None = None,
        v3_priv_key: str | None = None,
        v3_auth_proto: str = "SHA",
        v3_priv_proto: str = "AES",
        writecache_file: str | Path | None = None,
        start_timeout: float = 300.0,  # a hang guard: its start-up takes ~15 s of a busy 2-core machine
    ):
        self.data_dir = Path(data_dir)
        self.endpoints = list(endpoints)
        self.v3 = (v3_user, v3_auth_key, v3_priv_key, v3_auth_proto, v3_priv_proto)
        self.writecache_file = writecache_file
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None

    def start(self) -> SnmpSimAgent:
        """Launch and wait until every endpoint is bound."""
        self.launch()
        return self.wait_ready()

    def launch(self) -> None:
        """Start the process without waiting (several agents can then start side by side). Call it
        from a thread that outlives the agent: the agent is told to stop when that thread ends
        (PR_SET_PDEATHSIG follows the thread that forked it, not the process)."""
        self._tmp = tempfile.TemporaryDirectory(prefix="hfcprov-snmpsim-")
        tmp = Path(self._tmp.name)
        args = [f"--agent-udpv6-endpoint=[{h}]:{p}" if ":" in h else f"--agent-udpv4-endpoint={h}:{p}"
                for h, p in self.endpoints]
        user, auth_key, priv_key, auth_proto, priv_proto = self.v3
        if user:
            args += [f"--v3-user={user}", f"--v3-auth-key={auth_key}", f"--v3-auth-proto={auth_proto}"]
            if priv_key:  # without one, authNoPriv: snmpsim refuses a privacy protocol (even NONE) with no key
                args += [f"--v3-priv-key={priv_key}", f"--v3-priv-proto={priv_proto}"]
        args_file = tmp / "engine.args"
        atomic_write(args_file, "\n".join(args) + "\n", mode=0o600)
        cmd = [sys.executable, "-m", "hfcprov.snmp.snmpsim_compat", f"--data-dir={self.data_dir}", f"--cache-dir={tmp / 'cache'}",
               f"--log-level={os.environ.get('HFCPROV_SNMPSIM_LOG', 'error')}", f"--args-from-file={args_file}"]
        if self.writecache_file:
            cmd.append(f"--variation-module-options=writecache:file:{self.writecache_file}")
        env = dict(os.environ, SNMPSIM_ALLOW_ROOT="true")
        self._log = open(tmp / "snmpsim.log", "w+b")  # noqa: SIM115 (lives as long as the agent)
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env,
                                     stdin=subprocess.DEVNULL,
                                     preexec_fn=_die_with_parent)  # noqa: PLW1509 (only calls prctl)

    def wait_ready(self) -> SnmpSimAgent:
        want = {(_canonical(h), p) for h, p in self.endpoints}
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self.proc.poll() is not None:
                self._log.seek(0)
                tail = self._log.read().decode(errors="replace").strip().splitlines()[-3:]
                self.stop()
                raise SimAgentError(f"snmpsim exited with status {self.proc.returncode}: {' | '.join(tail)}")
            if want <= _udp_bound():
                return self
            if time.monotonic() > deadline:
                self.stop()
                raise SimAgentError(f"snmpsim did not bind {len(want)} endpoints within {self.start_timeout:.0f} s")
            time.sleep(0.1)

    def cpu_seconds(self) -> float:
        """User+system CPU the agent has used so far (for the benchmark)."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
