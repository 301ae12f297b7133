"""The one packet type the simulator moves: a slots class, no dataclass overhead."""

from __future__ import annotations

DATA, ACK, PROBE, ECHO = 0, 1, 2, 3


class Packet:
    """``seq`` is a segment index for DATA, the cumulative ACK (next expected segment) for ACK.

    ``size`` is the IP packet in bytes; links add their own framing overhead.
    ``ts`` is the send time for DATA/PROBE and the echoed send time for ACK/ECHO.
    ``retx`` marks a retransmitted segment (Karn: no RTT sample from it).
    ``sack`` is ``None`` or a tuple of up to 3 ``(start, end)`` segment ranges held out of order.
    ``ecn``: DATA/PROBE: the IP ECN codepoint (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE; AQMs mark
    CE); ACK: the receiver's running count of CE-marked segments (as AccECN echoes it).
    ``psh``: DATA with the TCP PSH flag (a Linux sender's, ``TcpOptions.push``).
    """

    __slots__ = ("ecn", "flow", "kind", "psh", "retx", "sack", "seq", "size", "ts")  # a new one goes in make() too

    def __init__(self, kind: int, flow: int, seq: int, size: int, ts: float,
                 retx: bool = False, sack=None, ecn: int = 0) -> None:
        self.kind = kind
        self.flow = flow
        self.seq = seq
        self.size = size
        self.ts = ts
        self.retx = retx
        self.sack = sack
        self.ecn = ecn
        self.psh = False


class Train(Packet):
    """DATA carrying ``n`` consecutive segments from ``seq``, sent back to back: TCP segmentation
    offload at the sender, receive offload (GRO) at the receiver. A FIFO ``link.Link`` serves it
    as ``n`` packets in one event, so a 10 Gb/s flow costs ~1/n of the events (``TcpOptions.tso``).
    ``size`` is the IP bytes of all ``n``."""

    __slots__ = ("n",)

    def __init__(self, flow: int, seq: int, n: int, size: int, ts: float) -> None:
        super().__init__(DATA, flow, seq, size, ts)
        self.n = n



_new = object.__new__


def make(kind: int, flow: int, seq: int, size: int, ts: float, retx: bool, sack) -> Packet:
    """``Packet(kind, flow, seq, size, ts, retx, sack)`` without the class call, ~20% cheaper:
    TCP's hot paths make one packet per event (DATA and ACK; ``ecn`` 0)."""
    p = _new(Packet)
    p.kind = kind
    p.flow = flow
    p.seq = seq
    p.size = size
    p.ts = ts
    p.retx = retx
    p.sack = sack
    p.ecn = 0
    p.psh = False
    return p
