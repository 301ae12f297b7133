"""Where each role of a modem campaign happens: SNMP, the probe, publishing the file.

A lab host is usually dual-homed (docs/lab-setup.md): the probe must leave through the modem
(its CPE side), SNMP must reach the modem's management address from the headend side (a real
CM filters SNMP from its CPE port), and the file must land where the TFTP server the modem's
DHCP names reads it. Each role gets its own place from the campaign: a network namespace, a
source address, an interface; a folder or a remote publish command.

- ``SnmpRole``: the campaign's credentials (v2c communities, or SNMPv3 user, protocols and keys
  through ``hfcprov.snmp``'s ``load_credentials``: key files are read and checked there) and
  its place; ``run(step)`` runs ``await step(client)`` there.
- ``ProbeRole``: ``measure(spec)`` and ``echo()`` (the pre-flight's look at the responder).
- ``Publisher``: ``put(name, data)`` into the TFTP root, or through the publish command;
  ``serve()`` runs hfcprov's TFTP server on the root when the campaign asks (in its namespace).

``secret_value`` reads ``env:NAME``; secrets are never logged or stored.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from hfcprov.errors import HfcprovError
from hfcprov.lab.spec import SnmpAccess, TftpPublish


class RoleError(HfcprovError):
    """A role's place or credentials cannot be used; the message says which key and why."""


def secret_value(value: str | None, what: str) -> str | None:
    """A secret as written in the campaign, or ``env:NAME`` to keep it out of the file (and the store)."""
    if value is None or not value.startswith("env:"):
        return value
    name = value[4:]
    if name not in os.environ:
        raise RoleError(f"{what}: environment variable {name} is not set")
    return os.environ[name]


def in_namespace(namespace: str | None, fn):
    """``fn()`` with this thread in ``namespace`` (its sockets stay there), or here."""
    if not namespace:
        return fn()
    from hfcprov.emu import netns

    with netns.entered(namespace):
        return fn()


def snmp_credentials(access: SnmpAccess, what: str):
    """(read, write) ``Credentials`` for ``access``: v2c communities, or one SNMPv3 user for both."""
    from hfcprov.snmp.client import Credentials, SnmpError, load_credentials

    if access.version == "3":
        env = {}  # the keys as load_credentials takes them from an environment; a key file wins
        auth = secret_value(access.auth_key, f"{what}.auth_key")
        priv = secret_value(access.priv_key, f"{what}.priv_key")
        if auth:
            env["HFCPROV_SNMP_V3_AUTH_KEY"] = auth
        if priv:
            env["HFCPROV_SNMP_V3_PRIV_KEY"] = priv
        try:
            creds = load_credentials(v3_user=access.user, v3_key_file=access.key_file, auth_proto=access.auth_protocol,
                                     priv_proto=access.priv_protocol, env=env)
        except SnmpError as err:
            raise RoleError(f"{what}: {err}") from None
        return creds, creds
    read = secret_value(access.community, f"{what}.community") or "public"
    write = secret_value(access.write_community, f"{what}.write_community") or read
    return Credentials(community=read), Credentials(community=write)


class SnmpRole:
    """SNMP to one agent (the modem or the CMTS) from the campaign's place for it."""

    def __init__(self, access: SnmpAccess, host: str | None, what: str = "target.snmp"):
        self.access, self.host, self.what = access, host, what
        self.port = access.port
        self.read, self.write = snmp_credentials(access, what)

    def run(self, step, write: bool = False):
        """``await step(client)`` with a client made for this role (the write credentials for a SET)."""
        from hfcprov.snmp.client import SnmpClient

        a = self.access

        async def main():
            client = SnmpClient(self.write if write else self.read, timeout=a.timeout, retries=a.retries)
            client.source = a.source
            try:
                return await step(client)
            finally:
                client.close()

        return in_namespace(a.namespace, lambda: asyncio.run(main()))

    def where(self) -> str:
        a = self.access
        place = ", ".join(filter(None, [a.namespace and f"namespace {a.namespace}", a.source and f"from {a.source}"]))
        auth = f"SNMPv3 user {a.user} ({a.auth_protocol}/{a.priv_protocol if a.priv_key or a.key_file else 'no priv'})" \
            if a.version == "3" else "SNMPv2c"
        return f"{auth} to {self.host or '?'}:{self.port}" + (f" ({place})" if place else "")


class ProbeRole:
    """The probe's place: namespace, source address, interface; the responder behind the CMTS."""

    def __init__(self, server: str, port: int, namespace: str | None = None, source: str | None = None,
                 interface: str | None = None):
        self.server, self.port = server, port
        self.namespace, self.source, self.interface = namespace, source, interface

    def measure(self, spec):
        from hfcprov.probe.run import measure

        spec.bind_source, spec.interface = self.source, self.interface
        return in_namespace(self.namespace, lambda: measure(spec))

    def echo(self, timeout: float = 1.0, tries: int = 3) -> float:
        """One UDP echo round trip to the responder (seconds), or ``RoleError``: is it there, through the modem?"""
        import socket
        import time

        def once():
            family = socket.AF_INET6 if ":" in self.server else socket.AF_INET
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                if self.interface:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, self.interface.encode())
                if self.source:
                    s.bind((self.source, 0))
                s.settimeout(timeout)
                token = os.urandom(8)
                for _ in range(tries):
                    sent = time.monotonic()
                    try:
                        s.sendto(b"hfcprov-preflight" + token, (self.server, self.port))
                        while True:
                            data = s.recv(2048)
                            if data.endswith(token):
                                return time.monotonic() - sent
                    except TimeoutError:
                        continue
                    except OSError as err:
                        raise RoleError(f"probe responder {self.server}:{self.port}: {err.strerror}") from None
            raise RoleError(f"probe responder {self.server}:{self.port}: no UDP echo in {tries} x {timeout:g} s "
                            "(is `hfcprov probe responder` running there, and the modem forwarding?)")

        return in_namespace(self.namespace, once)

    def where(self) -> str:
        place = ", ".join(filter(None, [self.namespace and f"namespace {self.namespace}",
                                        self.source and f"from {self.source}",
                                        self.interface and f"by {self.interface}"]))
        return f"to {self.server}:{self.port}" + (f" ({place})" if place else "")


class Publisher:
    """Puts a point's file where the modem's TFTP server reads it."""

    def __init__(self, tftp: TftpPublish):
        self.tftp = tftp
        self.root = Path(tftp.root).resolve() if tftp.root else None
        self.server = None

    def put(self, name: str, data: bytes) -> str:
        """Publish ``data`` as ``name``; returns where it went."""
        from hfcprov.fileio import atomic_write

        if self.tftp.publish:
            with tempfile.TemporaryDirectory(prefix="hfcprov-publish-") as tmp:
                local = Path(tmp) / Path(name).name
                local.write_bytes(data)
                argv = [w.format(file=str(local), name=name) for w in shlex.split(self.tftp.publish)]
                try:
                    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
                except (OSError, subprocess.TimeoutExpired) as err:
                    raise RoleError(f"target.tftp.publish: {argv[0]}: {err}") from None
                if done.returncode != 0:
                    last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
                    raise RoleError(f"target.tftp.publish failed for {name}: {last}")
                return f"published by {argv[0]}"
        path = self._path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)
        return str(path)

    def _path(self, name: str) -> Path:
        from hfcprov.tftp.paths import AccessViolation, resolve_in_root

        try:
            return Path(resolve_in_root(self.root, name))
        except AccessViolation as err:
            raise RoleError(f"target.tftp.filename: {name!r} is not a file inside {self.root}: {err}") from None

    def check(self) -> str:
        """The pre-flight's look: the root is a writable folder, or the publish command exists."""
        if self.tftp.publish:
            program = shlex.split(self.tftp.publish)[0]
            if not shutil.which(program):
                raise RoleError(f"target.tftp.publish: {program} not found on PATH")
            return f"publish command {program}"
        if not self.root.is_dir():
            raise RoleError(f"target.tftp.root {self.root}: not a folder")
        try:
            with tempfile.NamedTemporaryFile(dir=self.root, prefix=".hfcprov-preflight-"):
                pass
        except OSError as err:
            raise RoleError(f"target.tftp.root {self.root}: not writable ({err.strerror})") from None
        return f"{self.root} writable"

    def serve(self) -> None:
        """hfcprov's TFTP server on the root (``tftp.host``), in ``tftp.namespace`` when given."""
        if not self.tftp.host:
            return
        from hfcprov.tftp import TftpServer

        def start():
            server = TftpServer(self.root, host=self.tftp.host, port=self.tftp.port)
            server.start()
            return server

        self.server = in_namespace(self.tftp.namespace, start)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def where(self) -> str:
        if self.tftp.publish:
            return f"through `{self.tftp.publish}`"
        served = f", served by hfcprov on {self.tftp.host}:{self.tftp.port}" if self.tftp.host else ""
        ns = f" in namespace {self.tftp.namespace}" if self.tftp.host and self.tftp.namespace else ""
        return f"into {self.root}{served}{ns}"


__all__ = ["ProbeRole", "Publisher", "RoleError", "SnmpRole", "in_namespace", "secret_value", "snmp_credentials"]
