"""Turn segmentation offloads off on a device, so tc byte limits mean what they say.

With TSO/GSO/GRO on, a veth carries 64 KiB super-packets and a 16 KiB ``bfifo``
would hold one or none of them. ``ethtool -K`` does this when installed; the
legacy ``SIOCETHTOOL`` ioctls below do the same without it.
"""

from __future__ import annotations

import ctypes
import fcntl
import socket
import struct

from hfcprov.emu import netns

SIOCETHTOOL = 0x8946
# (get, set) legacy ethtool commands, linux/ethtool.h
FEATURES = {"tso": (0x1E, 0x1F), "gso": (0x23, 0x24), "gro": (0x2B, 0x2C)}


def _ethtool(sock: socket.socket, dev: str, cmd: int, data: int = 0) -> int:
    value = ctypes.create_string_buffer(struct.pack("II", cmd, data))
    ifreq = struct.pack("16sP", dev.encode(), ctypes.addressof(value)).ljust(40, b"\0")
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifreq)
    return struct.unpack("II", value.raw[:8])[1]


def offloads_off(ns: str, dev: str) -> dict[str, bool]:
    """Switch TSO, GSO and GRO off on ``dev`` in namespace ``ns``; returns what is left on."""
    with netns.entered(ns):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with sock:
        state = {}
        for name, (get, set_) in FEATURES.items():
            try:
                _ethtool(sock, dev, set_, 0)
            except OSError:
                pass  # a device that cannot change it; reported below
            try:
                state[name] = bool(_ethtool(sock, dev, get))
            except OSError:
                state[name] = False
        return state
