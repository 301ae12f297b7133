"""A many-modem TFTP client: N downloads at once on one event loop, for boot storms and tests.

Each modem is one UDP socket (its own TID) that sends an RRQ, follows the
server's TID, acknowledges DATA (once per window with ``windowsize``, RFC 7440)
and on timeout resends its last datagram, at most ``retries`` times in a row.
``fetch`` is the single-file form. It counts the retransmissions each fetch
needed (in a boot storm every one is a modem that stayed offline longer) and the
DATA it received twice (what a server's retransmission rules cost the network).
"""

from __future__ import annotations

import selectors
import socket
import time
from dataclasses import dataclass, field

from hfcprov.errors import HfcprovError
from hfcprov.tftp import protocol as P


class TftpFetchError(HfcprovError):
    """A download failed: the server's TFTP error, or no answer after the retries."""


@dataclass
class Fetch:
    """One download: what was asked, what came back and how long it took (seconds)."""

    filename: str
    options: dict = field(default_factory=dict)
    data: bytes | None = None
    error: str | None = None  # None when data is complete
    error_code: int | None = None  # the server's TFTP error code, if it sent one
    retransmits: int = 0
    duplicates: int = 0  # DATA datagrams received for a block already held
    started: float = 0.0
    finished: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and self.data is not None

    @property
    def duration(self) -> float:
        return self.finished - self.started


class _Session:
    __slots__ = (
        "blksize",
        "chunks",
        "deadline",
        "duplicate_acks",
        "expected",
        "fetch",
        "in_window",
        "last_sent",
        "nacked",
        "server",
        "sock",
        "tid",
        "tries",
        "windowsize",
    )

    def __init__(self, fetch: Fetch, sock, server, duplicate_acks: bool = False):
        self.fetch = fetch
        self.duplicate_acks = duplicate_acks
        self.sock = sock
        self.server = server
        self.tid = None
        self.blksize = P.DEFAULT_BLKSIZE
        self.windowsize = 1
        self.expected = 1
        self.chunks: list[bytes] = []
        self.last_sent = b""
        self.deadline = 0.0
        self.tries = 0
        self.in_window = 0
        self.nacked = 0  # the expected block we already asked again for (once per gap)


def fetch_many(host: str, port: int, requests: list, *, timeout: float = 1.0, retries: int = 5,
               mode: str = "octet", interval: float = 0.0, bind: str = "", deadline: float | None = None,
               duplicate_acks: bool = False) -> list[Fetch]:
    """Download every request concurrently; ``requests`` are file names or ``(filename, options)`` pairs.

    ``interval``: seconds between the starts of two downloads (0: a burst, all RRQs back to back).
    ``timeout``: client retransmission timeout; ``retries``: consecutive timeouts before giving up.
    ``duplicate_acks``: send every ACK twice, as a path that duplicates datagrams would (a server
    must not answer the copy: the count of DATA received twice is in ``Fetch.duplicates``).
    Returns one ``Fetch`` per request, in order; failures are reported in ``Fetch.error``, not raised.
    """
    server = _server_address(host.strip("[]"), port)
    fetches = [Fetch(r, {}) if isinstance(r, str) else Fetch(r[0], dict(r[1] or {})) for r in requests]
    sel = selectors.DefaultSelector()
    sessions: dict[int, _Session] = {}
    pending = list(reversed(fetches))
    start = time.monotonic()
    next_start = start
    live = 0
    try:
        while pending or live:
            now = time.monotonic()
            if deadline is not None and now - start > deadline:
                break
            while pending and now >= next_start:
                f = pending.pop()
                s = _open(f, server, bind, mode, now, timeout, duplicate_acks)
                if s is None:
                    continue
                sessions[s.sock.fileno()] = s
                sel.register(s.sock, selectors.EVENT_READ, s)
                live += 1
                next_start += interval
                if interval:
                    break
            wait = min((s.deadline for s in sessions.values()), default=now + 0.05) - now
            if pending:
                wait = min(wait, max(0.0, next_start - now))
            for key, _ in sel.select(max(0.0, wait)):
                s = key.data
                if _on_readable(s, timeout):
                    live -= _close(s, sel, sessions)
            now = time.monotonic()
            for s in [s for s in sessions.values() if s.deadline <= now]:
                s.tries += 1
                if s.tries > retries:
                    s.fetch.error = f"timeout: no answer after {retries} retries"
                    live -= _close(s, sel, sessions)
                    continue
                _send(s, s.last_sent)
                s.fetch.retransmits += 1
                s.deadline = now + timeout
    finally:
        for s in list(sessions.values()):
            s.fetch.error = s.fetch.error or "unfinished"
            _close(s, sel, sessions)
        sel.close()
    return fetches


def fetch(host: str, port: int, filename: str, options: dict | None = None, *, timeout: float = 1.0,
          retries: int = 5, mode: str = "octet") -> bytes:
    """Download one file; raises ``TftpFetchError`` with the server's message on failure."""
    (f,) = fetch_many(host, port, [(filename, options or {})], timeout=timeout, retries=retries, mode=mode)
    if not f.ok:
        raise TftpFetchError(f"tftp://{host}:{port}/{filename}: {f.error}")
    return f.data


def _server_address(host: str, port: int) -> tuple[str, int]:
    """(address, port) of an IPv4 or IPv6 literal or a name (IPv4 first, as before IPv6 support)."""
    try:
        info = socket.getaddrinfo(host, port, socket.AF_UNSPEC, socket.SOCK_DGRAM)
    except socket.gaierror as err:
        raise TftpFetchError(f"{host}: {err.strerror}") from None
    info.sort(key=lambda i: i[0] != socket.AF_INET)
    return info[0][4][0], port


def _open(f: Fetch, server, bind, mode, now, timeout, duplicate_acks=False) -> _Session | None:
    f.started = now
    try:
        sock = socket.socket(socket.AF_INET6 if ":" in server[0] else socket.AF_INET, socket.SOCK_DGRAM)
        sock.setblocking(False)
        sock.bind((bind, 0))
    except OSError as err:
        f.error = f"no socket: {err.strerror}"
        f.finished = now
        return None
    s = _Session(f, sock, server, duplicate_acks)
    s.last_sent = P.encode_rrq(f.filename, f.options, mode=mode)
    _send(s, s.last_sent)
    s.deadline = now + timeout
    return s


def _send(s: _Session, datagram: bytes) -> None:
    try:
        s.sock.sendto(datagram, (s.server[0], s.tid or s.server[1]))
    except OSError:
        pass  # buffer full or ICMP from earlier: the retransmission timer covers it


def _ack(s: _Session, block: int) -> None:
    s.last_sent = P.encode_ack(block)
    _send(s, s.last_sent)
    if s.duplicate_acks:
        _send(s, s.last_sent)


def _close(s: _Session, sel, sessions) -> int:
    if sessions.pop(s.sock.fileno(), None) is None:
        return 0
    sel.unregister(s.sock)
    s.sock.close()
    s.fetch.finished = time.monotonic()
    return 1


def _on_readable(s: _Session, timeout: float) -> bool:
    """Handle every datagram waiting on the session; True when the fetch has ended."""
    f = s.fetch
    for _ in range(256):
        try:
            datagram, addr = s.sock.recvfrom(65536)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError as err:  # ICMP port unreachable: nobody listening
            if s.tid is None:
                continue
            f.error = f"network error: {err.strerror}"
            return True
        if addr[0] != s.server[0] or (s.tid is not None and addr[1] != s.tid):
            continue  # not our server's TID
        if len(datagram) < 4:
            continue
        opcode, block = P.HEADER.unpack_from(datagram)
        if opcode == P.ERROR:
            err = P.parse(datagram)
            f.error_code = err.code
            f.error = f"TFTP error {err.code}: {err.message}".rstrip(": ")
            return True
        if s.tid is None:
            s.tid = addr[1]
        if opcode == P.OACK:
            if s.expected != 1:
                continue
            try:
                acked = {k.lower(): v for k, v in P.parse(datagram).options.items()}
                s.blksize = int(acked.get("blksize", P.DEFAULT_BLKSIZE))
                s.windowsize = int(acked.get("windowsize", 1))
            except (P.TftpProtocolError, ValueError) as err:
                f.error = f"bad OACK from the server: {err}"
                return True
            _ack(s, 0)
            s.tries = 0
            s.deadline = time.monotonic() + timeout
        elif opcode == P.DATA:
            payload = datagram[4:]
            if block == s.expected & 0xFFFF:
                s.chunks.append(payload)
                s.expected += 1
                s.in_window += 1
                s.tries = 0
                s.deadline = time.monotonic() + timeout
                final = len(payload) < s.blksize
                if final or s.in_window >= s.windowsize:
                    s.in_window = 0
                    _ack(s, s.expected - 1)
                if final:
                    f.data = b"".join(s.chunks)
                    return True
            else:
                if ((s.expected - 1 - block) & 0xFFFF) < 0x8000:  # at or before the last block held
                    f.duplicates += 1
                if s.nacked != s.expected:
                    # A gap or a duplicate: acknowledge what we have once, so the server resumes there.
                    s.nacked = s.expected
                    s.in_window = 0
                    _ack(s, s.expected - 1)
    return False
