"""Kernel timestamps of probe packets, taken where a capture tool takes them.

A packet socket (``AF_PACKET``, cooked) on the probe's interface sees each
probe once as it leaves (``PACKET_OUTGOING``, stamped as the driver takes it)
and each answer as it arrives (stamped on receive), both by the kernel's
``SO_TIMESTAMPNS`` clock; RTT is the difference, free of Python's scheduling.
A classic BPF filter passes only ICMP and UDP, so bulk TCP never reaches
userspace.
"""

from __future__ import annotations

import ctypes
import socket
import struct

ETH_P_IP = 0x0800
SO_ATTACH_FILTER = 26
SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4
SNAPLEN = 96

ETH_P_ALL = 0x0003  # outgoing packets reach only "all protocols" taps
SKF_AD_PROTOCOL = 0xFFFFF000  # BPF ancillary load: the skb's ethertype

# ethertype == IPv4; ldb [9] (IP protocol) == 1 (ICMP) or 17 (UDP) -> accept; else drop
_FILTER = [
    (0x28, 0, 0, SKF_AD_PROTOCOL),
    (0x15, 0, 4, ETH_P_IP),
    (0x30, 0, 0, 9),
    (0x15, 1, 0, 1),
    (0x15, 0, 1, 17),
    (0x06, 0, 0, SNAPLEN),
    (0x06, 0, 0, 0),
]


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def open_capture(iface: str) -> socket.socket:
    """A timestamping packet socket on ``iface`` that receives only IPv4 ICMP and UDP."""
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, 0)  # protocol 0: nothing until bound
    prog = (_SockFilter * len(_FILTER))(*[_SockFilter(*ins) for ins in _FILTER])
    fprog = _SockFprog(len(_FILTER), prog)
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, bytes(fprog))
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind((iface, ETH_P_ALL))
    return sock


def receive(sock: socket.socket) -> tuple[bytes, float, bool]:
    """One captured IPv4 packet: (bytes from the IP header, kernel time in seconds, outgoing?)."""
    data, anc, _flags, addr = sock.recvmsg(SNAPLEN, socket.CMSG_SPACE(16))
    ts = None
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            sec, nsec = struct.unpack("qq", payload[:16])
            ts = sec + nsec * 1e-9
    if ts is None:
        raise OSError("packet without a kernel timestamp")
    return data, ts, addr[2] == PACKET_OUTGOING
