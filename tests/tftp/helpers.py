"""Raw-socket TFTP peers for tests that must see exact datagrams and timings."""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import time
from pathlib import Path

from hfcprov.tftp import protocol as P
from tests.support import wait_for

REPO = Path(__file__).resolve().parents[2]


class RawClient:
    """One UDP socket speaking TFTP by hand: send an RRQ, then read what the server sends."""

    def __init__(self, port: int, host: str = "127.0.0.1"):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.server = (host, port)
        self.tid = None

    def rrq(self, filename: str, options: dict | None = None, mode: str = "octet") -> None:
        self.sock.sendto(P.encode_rrq(filename, options, mode=mode), self.server)

    def wrq(self, filename: str) -> None:
        self.sock.sendto(P.encode_rrq(filename, {}, write=True), self.server)

    def recv(self, timeout: float = 3.0):
        """(opcode, block-or-code, payload, arrival time) of the next datagram."""
        self.sock.settimeout(timeout)
        data, addr = self.sock.recvfrom(70000)
        if self.tid is None and addr[1] != self.server[1]:
            self.tid = addr[1]
        (opcode,) = struct.unpack("!H", data[:2])
        if opcode == 6:  # OACK: options start right after the opcode
            return opcode, 0, data[2:], time.monotonic()
        (num,) = struct.unpack("!H", data[2:4])
        return opcode, num, data[4:], time.monotonic()

    def ack(self, block: int) -> None:
        self.sock.sendto(P.encode_ack(block), (self.server[0], self.tid))

    def close(self) -> None:
        self.sock.close()


def records(log_text: str, event: str = "transfer") -> list[dict]:
    return [r for r in map(json.loads, log_text.splitlines()) if r["event"] == event]


def oack_options(payload: bytes) -> dict:
    parts = payload.split(b"\0")[:-1]
    return {parts[i].decode(): parts[i + 1].decode() for i in range(0, len(parts), 2)}


def wait_idle(server, timeout: float = 30.0) -> None:
    """Wait until the server has no transfer in flight (a client is done before the server logs)."""
    wait_for(lambda: not server.active, timeout, "the TFTP server to finish its transfers")


@contextlib.contextmanager
def abandoning(server):
    """Run ``server`` and stop it without waiting for transfers the test left half-done."""
    server.start()
    try:
        yield server
    finally:
        server.stop(graceful=False)


def shipped_tiers(folder: Path, **extra: str) -> Path:
    """``folder`` (created) holding a copy of the shipped tier templates plus ``extra`` name -> text."""
    folder.mkdir()
    for t in (REPO / "templates").glob("*.j2"):
        (folder / t.name).write_text(t.read_text())
    for name, text in extra.items():
        (folder / f"{name}.j2").write_text(text)
    return folder
