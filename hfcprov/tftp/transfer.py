"""One read transfer as a state machine, without sockets (RFC 1350, options RFC 2347-2349, windowsize RFC 7440).

The server's loop owns the sockets and the timer heap; a ``Transfer`` owns the protocol:
what to send when it starts, on an ACK, on a timeout, and when it is over. It sends through
the ``send(datagram)`` callable it was given (a connected socket's ``send``: an ``OSError``
ends that window, whose blocks the timer resends) and keeps its own ``deadline`` (the loop
re-arms its timer when the deadline moved). Tests drive it with a list as ``send`` and a fake
clock. DATA is built here, per block sent, from the wire declaration's header (``P.HEADER``).

A window of several blocks goes out in one system call where the loop gives ``send_segments``
(UDP segmentation offload, ``UDP_SEGMENT``: the kernel cuts one buffer into the window's
datagrams, as it would have received them one by one); where the kernel refuses it for this
path, the transfer sends block by block from then on.

Block numbers are absolute inside (``base``, ``next``, ``last`` start at 1) and wrap at
65,536 on the wire only, so files past 32 MiB at blksize 512 roll over cleanly.
"""

from __future__ import annotations

import errno
from collections.abc import Callable

from hfcprov.tftp import protocol as P

OK, UNCONFIRMED, TIMEOUT = "ok", "unconfirmed", "timeout"
_DATA_HEADER = P.HEADER.pack
_DATA = P.DATA
_HEADER_SIZE = P.HEADER.size
# A window in one send: at most this many datagrams (the kernel's UDP_MAX_SEGMENTS is 64 on older
# kernels) and this many bytes (one UDP datagram's payload before segmentation).
MAX_SEGMENTS = 64
MAX_SEGMENTED_BYTES = 65_000
# what a kernel (or a path: a segment over the route's MTU, a device without checksum offload) says
# when it cannot segment: the transfer sends datagram by datagram from then on
_NO_SEGMENTS = frozenset({errno.EINVAL, errno.EIO, errno.ENOPROTOOPT, errno.EOPNOTSUPP})


class Transfer:
    """One RRQ being served: the data, the negotiated options and the window position."""

    __slots__ = ("base", "blksize", "client", "data", "deadline", "done", "fd", "filename", "last", "local", "next",
                 "oack", "recv_into", "resent_to", "retries", "segments", "send", "send_segments", "sock", "started",
                 "timeout", "tries", "windowsize")

    def __init__(self, client, filename: str, data: bytes, opts: P.Options, now: float,
                 send: Callable[[bytes], None], send_segments: Callable[[list, int], None] | None = None):
        self.client = client
        self.filename = filename
        self.data = data
        self.send = send
        # send_segments(buffers, size): the buffers, joined, sent as datagrams of ``size`` bytes (the last
        # may be shorter) in one call; only worth it for windows of several blocks
        self.segments = 0  # blocks one send_segments call may carry
        if send_segments is not None and opts.windowsize > 1:
            self.segments = min(MAX_SEGMENTS, MAX_SEGMENTED_BYTES // (opts.blksize + _HEADER_SIZE))
        self.send_segments = send_segments if self.segments > 1 else None
        self.sock = None  # the loop's: its socket, fd and socket's recv_into, kept here to find the transfer again
        self.fd = -1
        self.recv_into = None
        self.local = None  # the address its client sent the request to (None: the listening one)
        self.blksize = opts.blksize
        self.windowsize = opts.windowsize
        self.timeout = opts.timeout
        self.oack = P.encode_oack(opts.oack) if opts.oack else None
        self.base = 1  # first block not yet acknowledged
        self.next = 1  # next block to send
        self.last = len(data) // opts.blksize + 1  # the final, short (possibly empty) block
        self.deadline = 0.0
        self.tries = 0  # consecutive timeouts
        self.retries = 0  # retransmitted datagrams, for the log
        self.resent_to = 0  # blocks below this were sent again by the last resend (a window or a timeout)
        self.started = now
        self.done = False  # set by the loop when the transfer ends (its timer entry is then stale)

    @property
    def delivered(self) -> int:
        """Bytes the client has acknowledged."""
        return min(len(self.data), (self.base - 1) * self.blksize)

    def begin(self, now: float) -> None:
        """Send the OACK (when options were negotiated) or the first window."""
        if self.oack is not None:
            self._send_oack()
        else:
            self._send_window()
        self.deadline = now + self.timeout

    def on_ack(self, wire_block: int, now: float) -> str | None:
        """An ACK arrived: ``OK`` when the transfer is complete, else None (the deadline moves
        only when the ACK brought progress; it only ever moves later, so the loop's timer may
        re-arm lazily).

        A duplicate ACK never sends anything (the sorcerer's apprentice would double every
        block). An ACK inside the window is RFC 7440's report of a gap: the blocks after it are
        sent again, once. ACKs that follow for blocks that resend already covers are the
        client's answers to the first copies, still on their way: they slide the window
        instead of starting another resend, so a late or repeated ACK costs no DATA twice.

        This is the per-datagram path of every transfer: at windowsize 1 (a modem that asks for
        nothing) the next block is sent inline."""
        nxt = self.next
        acked = self.base - 1
        delta = (wire_block - acked) & 0xFFFF
        if delta == 0 or acked + delta >= nxt:
            # A duplicate ACK (never answered, or the sorcerer's apprentice doubles every block)
            # or an ACK of something not sent; or, while only the OACK is out, ACK 0 starting the data.
            if nxt == 1 and wire_block == 0:
                self.tries = 0
                self._send_window()
                self.deadline = now + self.timeout
            return None
        acked += delta
        self.base = base = acked + 1
        self.tries = 0
        if base > self.last:
            return OK
        if self.windowsize == 1:  # what most modems ask: the next block, sent here without another call
            size = self.blksize
            off = acked * size
            try:
                self.send(_DATA_HEADER(_DATA, base & 0xFFFF) + self.data[off:off + size])
            except OSError:  # socket buffer full, or an ICMP error: the timer resends it
                pass
            self.next = base + 1
        else:
            if acked < nxt - 1 and base >= self.resent_to:
                # RFC 7440: an ACK inside the window means the client lost the rest; resume after it.
                self.resent_to = nxt
                self.retries += nxt - base
                self.next = base
            self._send_window()
        self.deadline = now + self.timeout
        return None

    def on_timeout(self, now: float, max_tries: int) -> str | None:
        """The deadline passed: resend what is unacknowledged, or give up after ``max_tries``
        timeouts in a row (``UNCONFIRMED`` when every block was sent and only the final window
        is unacknowledged, whatever the windowsize: the modem most likely has the file and only
        its last ACK was lost, a case RFC 1350 leaves open; else ``TIMEOUT``)."""
        self.tries += 1
        if self.tries > max_tries:
            return UNCONFIRMED if self.next > self.last else TIMEOUT
        if self.oack is not None and self.base == 1 and self.next == 1:
            self._send_oack()
            self.retries += 1
        else:
            self.resent_to = self.next
            self.next = self.base
            self.retries += self._send_window()
        self.deadline = now + self.timeout
        return None

    def _send_oack(self) -> None:
        try:
            self.send(self.oack)
        except OSError:
            pass  # as for DATA: the timer resends it

    def _send_window(self) -> int:
        # The per-block path of every transfer: the DATA datagram is built inline (no call per block).
        first = n = self.next
        end = min(self.base + self.windowsize, self.last + 1)
        send, data, size = self.send, self.data, self.blksize
        try:
            if self.send_segments is not None and end - n > 1:
                n = self._send_segmented(n, end)
            while n < end:
                off = (n - 1) * size
                send(_DATA_HEADER(_DATA, n & 0xFFFF) + data[off:off + size])
                n += 1
        except OSError:  # socket buffer full, or an ICMP error from an earlier datagram: the timer resends
            # the block counts as sent: a copy on its way or not, the timer covers it (a failed
            # segmented send left its first block in self.next)
            n = max(n, self.next) + 1
        self.next = n
        return n - first

    def _send_segmented(self, n: int, end: int) -> int:
        """Blocks ``n`` up to ``end`` in as few sends as the segment limits allow (each datagram's header and
        data are handed to the kernel as they are, not joined first); the first block not sent. Only the
        file's last block is short, and it can only end a window, so every datagram but the last of a
        send is full. ``OSError``: the send starting at block ``self.next`` failed as ``send`` would have."""
        size, view = self.blksize, memoryview(self.data)
        while end - n > 1:
            stop = min(end, n + self.segments)
            parts = []
            for k in range(n, stop):
                off = (k - 1) * size
                parts.append(_DATA_HEADER(_DATA, k & 0xFFFF))
                parts.append(view[off:off + size])
            try:
                self.send_segments(parts, size + _HEADER_SIZE)
            except OSError as err:
                if err.errno not in _NO_SEGMENTS:
                    self.next = n
                    raise
                self.send_segments = None  # this path cannot: block by block, now and from now on
                return n
            n = stop
        return n
