"""Time of Day (RFC 868): the clock a cable modem sets before it fetches its config file.

A modem asks the time servers DHCP named (option 4, or DHCPv6 vendor option 17 sub-option 37)
and keeps going without an answer, but logs and certificates then carry a 1970 clock. The
protocol is a 32-bit count of seconds since 1900-01-01 00:00 UTC:

- UDP: any datagram to the port is answered with the 4 bytes;
- TCP: on accepting a connection the server sends the 4 bytes and closes it.

``TimeServer`` serves both on one port, IPv4 and IPv6 (``host="::"`` takes both), in one
thread; ``query_time`` is the client (the emulated modem and the tests ask with it)::

    with TimeServer("::", 37) as tod:
        query_time("127.0.0.1", tod.port)          # seconds since 1900 (rfc868_time)

The same count is what DOCSIS TLV 19 (TFTP server timestamp) carries.
"""

from __future__ import annotations

import json
import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import IO

from hfcprov.errors import HfcprovError

RFC868_OFFSET = 2_208_988_800  # seconds from 1900-01-01 to 1970-01-01
TOD_PORT = 37


class TimeServerError(HfcprovError):
    """The time server cannot listen (address in use, no permission for port 37, ...)."""


def rfc868_time(now: float | None = None) -> int:
    """RFC 868 seconds for ``now`` (Unix seconds; default: the clock), modulo 2**32 as on the wire."""
    return (int(time.time() if now is None else now) + RFC868_OFFSET) & 0xFFFFFFFF


def unix_time(rfc868: int) -> int:
    """The Unix time of an RFC 868 count (the era that contains 1970-2106)."""
    return rfc868 - RFC868_OFFSET if rfc868 >= RFC868_OFFSET else rfc868 + (1 << 32) - RFC868_OFFSET


class TimeServer:
    """RFC 868 over UDP and TCP on ``host``:``port`` (``port=0``: any free port, the same for both).

    ``clock``: Unix seconds (default ``time.time``; a test or a lab may skew it). ``log``: a path,
    an open text stream or None: one JSON line per answer (``{"event": "tod", "client", "proto"}``)."""

    def __init__(self, host: str = "::", port: int = TOD_PORT, *, udp: bool = True, tcp: bool = True,
                 clock: Callable[[], float] = time.time, log: str | IO[str] | None = None):
        if not udp and not tcp:
            raise TimeServerError("a time server needs UDP, TCP or both")
        self.host = host.strip("[]") if host else "::"
        self.port = port
        self.udp, self.tcp = udp, tcp
        self.clock = clock
        self.answered = {"udp": 0, "tcp": 0}
        self._log_target = log
        self._log: IO[str] | None = None
        self._socks: list[socket.socket] = []
        self._sel: selectors.BaseSelector | None = None
        self._thread: threading.Thread | None = None
        self._wake_r = self._wake_w = None
        self._stop = False

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def __repr__(self):
        return f"TimeServer({self.host!r}, {self.port})"

    @property
    def address(self) -> str:
        """``host:port`` as an operator writes it (``[v6]:port``)."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def start(self) -> TimeServer:
        """Bind UDP and TCP and start answering; returns once listening (``.port`` is bound)."""
        if self._thread is not None:
            raise TimeServerError("time server already started")
        self._bind()
        if isinstance(self._log_target, str):
            self._log = open(self._log_target, "a")
        else:
            self._log = self._log_target
        self._wake_r, self._wake_w = socket.socketpair()
        self._sel = selectors.DefaultSelector()
        for s in self._socks:
            s.setblocking(False)
            self._sel.register(s, selectors.EVENT_READ)
        self._sel.register(self._wake_r, selectors.EVENT_READ)
        self._thread = threading.Thread(target=self._run, name=f"tod-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop = True
        if self._wake_w is not None:
            try:
                self._wake_w.send(b"\0")
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _bind(self) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        last: OSError | None = None
        for _ in range(20):  # port 0: the UDP port's number must be free for TCP too
            socks = []
            try:
                port = self.port
                for kind, wanted in ((socket.SOCK_DGRAM, self.udp), (socket.SOCK_STREAM, self.tcp)):
                    if not wanted:
                        continue
                    s = socket.socket(family, kind)
                    socks.append(s)
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    if family == socket.AF_INET6:
                        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # "::" serves IPv4 too
                    s.bind((self.host, port))
                    port = s.getsockname()[1]
                    if kind == socket.SOCK_STREAM:
                        s.listen(128)
                self.port, self._socks = port, socks
                return
            except OSError as err:
                for s in socks:
                    s.close()
                last = err
                if self.port:
                    break
        raise TimeServerError(f"time server cannot listen on {self.address}: {last.strerror or last}")

    def _run(self) -> None:
        try:
            while not self._stop:
                for key, _ in self._sel.select():
                    s = key.fileobj
                    if s is self._wake_r:
                        continue
                    if s.type == socket.SOCK_DGRAM:
                        self._on_datagrams(s)
                    else:
                        self._on_connections(s)
        finally:
            for s in self._socks + [self._wake_r, self._wake_w]:
                s.close()
            self._sel.close()
            if self._log is not None and isinstance(self._log_target, str):
                self._log.close()

    def _now(self) -> bytes:
        return struct.pack("!I", rfc868_time(self.clock()))

    def _on_datagrams(self, s: socket.socket) -> None:
        for _ in range(256):
            try:
                _, client = s.recvfrom(512)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            try:
                s.sendto(self._now(), client)
            except OSError:
                continue
            self._answered("udp", client)

    def _on_connections(self, s: socket.socket) -> None:
        for _ in range(256):
            try:
                conn, client = s.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            try:
                conn.setblocking(False)
                conn.send(self._now())  # 4 bytes always fit a fresh socket's send buffer
            except OSError:
                pass
            else:
                self._answered("tcp", client)
            finally:
                conn.close()

    def _answered(self, proto: str, client) -> None:
        self.answered[proto] += 1
        if self._log is not None:
            ip = client[0].removeprefix("::ffff:")
            self._log.write(json.dumps({"event": "tod", "time": round(time.time(), 3), "client": ip,
                                        "proto": proto}, separators=(",", ":")) + "\n")
            self._log.flush()


def query_time(host: str, port: int = TOD_PORT, *, proto: str = "udp", timeout: float = 2.0, tries: int = 3,
               bind: str = "") -> int:
    """Ask an RFC 868 server for the time: its 32-bit count of seconds since 1900.

    UDP is retried ``tries`` times (the modem's way); TCP connects once."""
    infos = socket.getaddrinfo(host.strip("[]"), port, 0, socket.SOCK_DGRAM if proto == "udp" else socket.SOCK_STREAM)
    family, kind, _, _, address = infos[0]
    with socket.socket(family, kind) as s:
        if bind:
            s.bind((bind, 0))
        s.settimeout(timeout)
        if proto == "tcp":
            try:
                s.connect(address)
                data = b""
                while len(data) < 4:
                    chunk = s.recv(4 - len(data))
                    if not chunk:
                        break
                    data += chunk
            except OSError as err:
                raise TimeServerError(f"time server {host}:{port} (tcp): {err.strerror or err}") from None
        else:
            data = b""
            for _ in range(tries):
                s.sendto(b"", address)
                try:
                    data, _ = s.recvfrom(64)
                    break
                except TimeoutError:
                    continue
                except OSError as err:
                    raise TimeServerError(f"time server {host}:{port} (udp): {err.strerror or err}") from None
    if len(data) != 4:
        raise TimeServerError(f"time server {host}:{port} ({proto}): "
                              f"{'no answer' if not data else f'{len(data)} bytes, not 4'}")
    return struct.unpack("!I", data)[0]


__all__ = ["RFC868_OFFSET", "TOD_PORT", "TimeServer", "TimeServerError", "query_time", "rfc868_time", "unix_time"]
