"""The kernel's view of this host's IPv4 UDP sockets (Linux ``/proc/net/udp``).

Used to tell when an agent is listening, and to read a socket's drop counter: the
per-socket count of datagrams the kernel discarded because the receive buffer was
full, which is what a TFTP boot storm overflows.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple


class UdpSocket(NamedTuple):
    address: str  # local IPv4 address, dotted
    port: int
    drops: int  # datagrams dropped on this socket since it was opened


def udp_sockets(table: str | Path = "/proc/net/udp") -> list[UdpSocket]:
    """Every IPv4 UDP socket on this host; empty where the table does not exist (not Linux)."""
    try:
        lines = Path(table).read_text().splitlines()[1:]
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        cols = line.split()
        addr_hex, port_hex = cols[1].split(":")
        # the address is the kernel's 32-bit word in host (little-endian) byte order
        address = ".".join(str(int(addr_hex[i:i + 2], 16)) for i in (6, 4, 2, 0))
        out.append(UdpSocket(address, int(port_hex, 16), int(cols[-1])))
    return out


def udp_drops(port: int) -> int | None:
    """The drop counter of the socket bound to ``port``; None when no socket is bound there."""
    for sock in udp_sockets():
        if sock.port == port:
            return sock.drops
    return None
