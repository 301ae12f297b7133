"""TCP socket-buffer sizing for a CM that bridges a fast downstream onto a slower LAN.

Cohen & Ramanathan, "TCP for high performance in hybrid fiber coaxial broad-band
access networks" (IEEE/ACM ToN 1998), section V.B. A server may send a whole
socket buffer (window) of B packets back to back at the downstream rate; the CM
forwards them at the LAN rate and must queue the difference. With C packets of
CM buffer, B-1 packets arrive while it drains, so the queue grows by
(B-1) * (1 - lan/downstream). Allowing at most one drop per window (fast
retransmit recovers one loss, a burst of drops means a timeout), n connections:

    C >= (B*n - 1) * (1 - lan/downstream)   =>   B <= (C / (1 - lan/downstream) + 1) / n

The paper's case: C = 10 KB = 7 packets, 25 Mb/s downstream, 10 Mb/s 10Base-T,
n = 1: B = 1 + 7 * 25/15 = 12.67 packets of 1.5 KB = 19 KB.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from hfcprov.errors import HfcprovError

TCP_IP_HEADERS = 40  # the paper's packet P is the TCP segment with its TCP/IP headers


class SocketBufferError(HfcprovError, ValueError):
    pass


@dataclass(frozen=True)
class SocketBufferRule:
    cm_buffer: int  # bytes
    downstream: float  # bits/s
    lan: float  # bits/s
    connections: int
    mss: int  # bytes
    packet: int  # bytes: mss + TCP/IP headers (the paper's P)
    cm_packets: int  # C: whole packets the CM buffer holds (rounded as the paper does: 10 KB -> 7)
    fill_fraction: float  # 1 - lan/downstream: share of each arriving packet that stays queued
    limit_packets: float | None  # B per connection, at most one drop per window; None = no limit (lan >= downstream)
    limit_bytes: float | None  # B * packet
    lossless_packets: float | None  # B per connection with no drop at all: C >= (B*n - 1) * f + 1
    lossless_bytes: float | None
    setting_segments: int | None  # whole MSS-sized segments to configure (floor of limit_packets)
    setting_bytes: int | None  # setting_segments * mss: a socket buffer counts payload bytes

    def as_dict(self) -> dict:
        return asdict(self)


def socket_buffer_limit(
    cm_buffer: int, downstream: float, lan: float, connections: int = 1, mss: int = 1460
) -> SocketBufferRule:
    """The largest per-connection TCP socket buffer that does not overrun the CM in slow start."""
    if cm_buffer <= 0 or downstream <= 0 or lan <= 0 or mss <= 0:
        raise SocketBufferError("cm buffer, downstream, lan and mss must all be > 0")
    if connections < 1:
        raise SocketBufferError(f"connections must be >= 1 (got {connections})")
    packet = mss + TCP_IP_HEADERS
    # The paper counts the CM buffer in whole packets, rounding 10 KB / 1.5 KB = 6.7 to seven.
    cm_packets = max(1, round(cm_buffer / packet))
    fill = 1 - lan / downstream
    if fill <= 0:
        # The LAN drains as fast as the downstream fills: the CM never queues, any window fits.
        return SocketBufferRule(cm_buffer, downstream, lan, connections, mss, packet, cm_packets, fill,
                                None, None, None, None, None, None)
    limit = (cm_packets / fill + 1) / connections
    lossless = ((cm_packets - 1) / fill + 1) / connections
    segments = math.floor(limit + 1e-9)
    return SocketBufferRule(
        cm_buffer=cm_buffer,
        downstream=downstream,
        lan=lan,
        connections=connections,
        mss=mss,
        packet=packet,
        cm_packets=cm_packets,
        fill_fraction=fill,
        limit_packets=limit,
        limit_bytes=limit * packet,
        lossless_packets=lossless,
        lossless_bytes=lossless * packet,
        setting_segments=segments,
        setting_bytes=segments * mss,
    )
