"""Read-only TFTP server for modem boot storms: one event loop over the wire format of ``protocol``.

Why not ``tftpy.TftpServer``: its ``select()`` loop dies past ~1,000 open sessions,
it crashes at session end on a dynamic file object without ``.name``, it runs the
dynamic-file callback inside the one loop (a slow lookup stalls every transfer),
ignores the client's ``timeout`` option, has no ``windowsize`` and leaves the
listening socket at the default receive buffer, which overflows when a whole node
reboots. Here:

- one epoll loop in one thread owns every socket: no fd ceiling but RLIMIT_NOFILE, no
  lock around the per-transfer state. What a storm costs is the loop's CPU per transfer
  (the clients share the same cores), so the per-datagram path is kept short: an ACK is
  read, decoded from its 4-byte header and answered without a packet object; a transfer's
  timer is re-armed only when it fires (its deadline only moves later); a finished
  transfer's socket, already bound and registered, is kept for the next one (``connect``
  to the new client, drain what the old one left) instead of being closed and reopened;
- the listening socket gets a large SO_RCVBUF (SO_RCVBUFFORCE as root) so a burst
  of RRQs waits in the kernel instead of being dropped;
- dynamic files come from a provider (``hfcprov.tftp.provider``: one interface, asked from
  the loop, never blocking: the bytes, a future, or a miss); a future holds no thread while
  its build runs, and the provider completes its futures in the loop (``call_soon``) instead
  of trading the GIL with it;
- each transfer (``hfcprov.tftp.transfer``, the protocol without sockets) negotiates blksize,
  tsize, timeout and windowsize and retransmits its window on timeout, at most ``retries``
  times in a row; this module is the loop: sockets, timers, requests, the log.
"""

from __future__ import annotations

import bisect
import collections
import concurrent.futures
import fcntl
import heapq
import ipaddress
import itertools
import math
import os
import resource
import select
import socket
import stat
import struct
import sys
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from hfcprov.errors import HfcprovError
from hfcprov.tftp import protocol as P
from hfcprov.tftp.paths import AccessViolation, locate_in_root
from hfcprov.tftp.provider import Provider, RequestRefused, as_provider, normalise
from hfcprov.tftp.transfer import Transfer
from hfcprov.tftp.translog import Summary, TransferLog

# A Provider, or a plain (requested file name, client IP) -> bytes | file-like | None (None: not found).
DynamicProvider = Provider | Callable[[str, str], "bytes | None"]

DEFAULT_RCVBUF = 16 << 20  # a 2,000-modem burst of RRQs is ~2,000 skbs of ~1 KiB truesize each
MAX_STATIC_BYTES = 256 << 20
STATIC_CACHE_FILES = 10000  # files kept in memory or remembered as asked for once, before starting afresh
LOG_FLUSH_EVERY = 0.05  # seconds a transfer's log line may wait in the buffer
MAX_IDLE_SOCKETS = 4096  # finished transfers' sockets kept for the next ones (one fd each)
# Transfers one socket serves before it is closed: waking for a socket that has served many transfers
# costs more (the kernel's reason unknown), and opening a fresh one less than that over 8 transfers
# (bench/tftp_wakeup.py, per extra ACK; docs/tftp.md "Every datagram a wake-up").
SOCKET_TRANSFERS = 8
SPARE_SOCKETS = 256  # transfer sockets opened at start, so that a storm's first transfers open none
_E = P.ErrorCode
_ACK, _ERROR = P.ACK, P.ERROR
_HEADER = P.HEADER.unpack_from
_EPOLLIN = select.EPOLLIN
_REQUEST_READ = 4096  # an RRQ is at most 512 bytes (RFC 2347); a longer one is cut and refused as malformed
_ACK_READ = 1024  # bytes read from a transfer's socket: an ACK is 4, an ERROR at most ~520 (into one buffer)
_NEVER = math.inf
TIMER_SLACK = 0.01  # seconds a timer may fire late, so that timers coming due together take one pass
_FIONREAD = termios.FIONREAD  # bytes of the next datagram waiting on a UDP socket (0: none), without a read
_QUIET_TURN = 4  # a turn with at most this many events reads one request: the next turn reads any other
_IP_PKTINFO = getattr(socket, "IP_PKTINFO", 8)  # Linux's value; Python 3.11 does not name it
_PKTINFO_SPACE = socket.CMSG_SPACE(20)  # room for one in_pktinfo (12 bytes) or in6_pktinfo (20)
# UDP segmentation offload (linux/udp.h; Python 3.11 does not name it): a window of DATA blocks in one
# sendmsg, cut into its datagrams by the kernel (Linux 4.18 and later)
_UDP_SEGMENT = getattr(socket, "UDP_SEGMENT", 103)
SEGMENTS = sys.platform.startswith("linux")


class TftpServerError(HfcprovError):
    """The server cannot start (root missing, address in use, ...)."""


class TftpServer:
    """Read-only TFTP server; ``start()`` returns once listening, ``stop()`` finishes in-flight transfers.

    ``root``: folder served; every requested name is resolved inside it.
    ``host``/``port``: where to listen (``port=0``: an ephemeral port, see ``.port``).
    ``dynamic``: consulted when no static file matches: a ``hfcprov.tftp.provider.Provider``
    (asked from the loop; ``hfcprov.tftp.dynamic.ConfigFileBuilder`` is one), or a plain
    ``callable(filename, client_ip) -> bytes | file-like | None`` run on one of ``workers``
    threads. It may raise ``FileNotFoundError`` (answered as file not found) or any error
    (answered with a TFTP error and a log line).
    ``log``: a path, an open text stream or None for the JSON transfer log.
    ``timeout``: default retransmission timeout in seconds (a client's ``timeout`` option overrides it).
    ``retries``: consecutive timeouts after which a transfer is abandoned.
    ``spare_sockets``: transfer sockets opened at start (at most a quarter of the open-file limit),
    so that the first storm after a start opens, binds and registers none (about 15 us each).
    ``segments``: a window of several blocks (a client's ``windowsize``) goes out in one ``sendmsg``
    that the kernel cuts into its datagrams (UDP segmentation offload; Linux; a path that refuses it
    falls back to one send per block).

    Usage::

        with TftpServer("/srv/tftp", port=0) as srv:
            fetch("127.0.0.1", srv.port, "gold.cm")
    """

    def __init__(self, root: str | os.PathLike, host: str = "127.0.0.1", port: int = 0,
                 dynamic: DynamicProvider | None = None, log: str | os.PathLike | IO[str] | None = None, *,
                 timeout: float = 1.0, retries: int = 5, max_blksize: int = P.MAX_BLKSIZE,
                 max_windowsize: int = 64, rcvbuf: int = DEFAULT_RCVBUF, workers: int = 4,
                 summary_interval: float = 60.0, spare_sockets: int = SPARE_SOCKETS, segments: bool = SEGMENTS):
        self.root = Path(os.path.realpath(root))
        if not self.root.is_dir():
            raise TftpServerError(f"TFTP root {root}: not a folder")
        try:
            self.provider = as_provider(dynamic, workers)
        except TypeError as err:
            raise TftpServerError(str(err)) from None
        self.host = host
        self.port = port
        self.dynamic = dynamic
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.max_blksize = max_blksize
        self.max_windowsize = max_windowsize
        self.rcvbuf = rcvbuf
        self.workers = workers
        self.spare_sockets = spare_sockets
        self.segments = segments
        self.log = TransferLog(log, interval=summary_interval)
        self._sock: socket.socket | None = None
        self._epoll: select.epoll | None = None
        self._idle: dict[int, socket.socket] = {}  # by fd: finished transfers' sockets, bound and registered
        # the same by local address (any-address mode: a socket is bound to one of the host's addresses)
        self._idle_at: dict[tuple | None, dict[int, socket.socket]] = {}
        self._unclean: set[int] = set()  # idle sockets that may hold an ICMP error (their transfer resent)
        self._served: dict[int, int] = {}  # by fd: transfers each open transfer socket has taken
        self._thread: threading.Thread | None = None
        self.client_families: tuple[int, ...] = ()  # once listening: 4, 6 or both (a file's TLV 20 or 59)
        self._loop_ident = None  # the loop thread's id, once it runs
        self._wake_r = self._wake_w = None
        self._calls = collections.deque()  # call_soon's callables (finished builds among them), run by the loop
        self._calls_lock = threading.Lock()
        self._calls_closed = False  # the loop has ended: call_soon runs callables in the caller's thread
        self._signalled = False  # a wake-up for _calls is on its way: later ones need not send one
        self._transfers: dict[int, Transfer] = {}  # by socket fd
        self._clients: set = set()  # (ip, port) with a transfer or a build in progress
        self._timers: list = []  # heap of (deadline, seq, transfer); at most one entry per live transfer
        self._waiting_builds = 0  # modems whose dynamic file is being built
        self._plain_options = P.negotiate({}, None, timeout=self.timeout)
        self._due = _NEVER  # monotonic time of the loop's next own work: the earliest timer, log flush or summary
        self.durations = TransferTimes()  # completed transfers' durations, for the metrics endpoint
        self._seq = itertools.count()
        # path -> ((inode, size, mtime), bytes): a file asked for twice; (key, None): asked for once
        self._static_cache: dict[str, tuple] = {}
        self._stopping = False
        self._stop_now = False
        self._ready = threading.Event()
        self._exited = threading.Event()
        self._error: BaseException | None = None

    # -- life cycle ---------------------------------------------------------------------------

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def summary(self) -> Summary:
        return self.log.summary

    @property
    def stopping(self) -> bool:
        """True once a stop was asked for (no new requests are taken)."""
        return self._stopping

    @property
    def active(self) -> int:
        """Transfers in flight (including dynamic files being built)."""
        return len(self._clients)

    @property
    def waiting_builds(self) -> int:
        """Modems waiting for their dynamic file to be built (the build queue as the loop sees it)."""
        return self._waiting_builds

    def start(self) -> TftpServer:
        """Bind, start the loop thread and return once listening (``.port`` is then the bound port)."""
        if self._thread is not None:
            raise TftpServerError("server already started")
        self._bind()
        if self.provider is not None:  # the provider completes its builds in this loop's thread
            self.provider.attach_loop(self.call_soon)
        self._thread = threading.Thread(target=self._run, name=f"tftp-{self.port}", daemon=True)
        self._thread.start()
        self._ready.wait()
        return self

    def call_soon(self, fn: Callable[[], object]) -> None:
        """Run ``fn()`` in the loop's thread soon; safe from any thread. A provider completes its
        futures through this, so their callbacks (stamping a file) run here instead of trading the
        GIL with the loop at each of its system calls. After the loop has ended, ``fn`` runs at once."""
        with self._calls_lock:
            if not self._calls_closed:
                self._calls.append(fn)
                fn = None
        if fn is not None:
            fn()
        elif not self._signalled and threading.current_thread() is not self._thread:
            self._signalled = True  # in a storm hundreds finish together: one wake-up serves them
            self._wake()

    def stop(self, graceful: bool = True, timeout: float | None = None) -> None:
        """Stop taking requests; with ``graceful`` let in-flight transfers finish (or time out)."""
        self.request_stop(graceful)
        if self._thread is not None:
            self._thread.join(timeout)
        if self._error is not None:
            raise self._error

    def request_stop(self, graceful: bool = True) -> None:
        """Ask the loop to stop without waiting (safe from a signal handler)."""
        self._stopping = True
        if not graceful:
            self._stop_now = True
        self._wake()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the loop has exited; True if it did."""
        return self._exited.wait(timeout)

    def _bind(self) -> None:
        host = (self.host or "0.0.0.0").strip("[]")
        # IPv6 for an IPv6 literal; "::" is dual-stack (IPv4 clients arrive as ::ffff:a.b.c.d)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        try:
            addr = socket.getaddrinfo(host, self.port, family, socket.SOCK_DGRAM)[0][4]
            sock = socket.socket(family, socket.SOCK_DGRAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            _set_rcvbuf(sock, self.rcvbuf)
            sock.bind(addr)
        except OSError as err:
            raise TftpServerError(f"cannot listen on {self.host}:{self.port}: {err.strerror or err}") from None
        sock.setblocking(False)
        self._sock = sock
        self._family = family
        self.host, self.port = sock.getsockname()[:2]
        self._local_ip = "" if self.host in ("0.0.0.0", "::") else self.host
        self.client_families = _client_families(family, self.host)
        # On the any-address a request may reach any of the host's addresses: the kernel says which
        # (IP_PKTINFO), and its transfer is bound to it. A socket bound to the any-address would
        # answer from the address the route to the client prefers, which a client that sent its RRQ
        # elsewhere (tftp-hpa's, a modem's) rejects; and a reused one from its first client's.
        self._pktinfo = not self._local_ip
        if self._pktinfo:
            if family == socket.AF_INET:
                sock.setsockopt(socket.IPPROTO_IP, _IP_PKTINFO, 1)
            else:  # a dual-stack socket reports IPv4 requests' address v4-mapped
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVPKTINFO, 1)
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._epoll = select.epoll()
        self._epoll.register(self._sock.fileno(), _EPOLLIN)
        self._epoll.register(self._wake_r.fileno(), _EPOLLIN)
        if not self._pktinfo:  # on the any-address a transfer's socket is bound to its request's address
            self._open_spares(self.spare_sockets)

    def _open_spares(self, wanted: int) -> None:
        """Open up to ``wanted`` transfer sockets into the idle pool (fewer under a low open-file limit).
        Each is connected to itself until a transfer takes it: closed to the world meanwhile (the
        kernel refuses any datagram to it, as to a transfer's socket from another port)."""
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft != resource.RLIM_INFINITY:
            wanted = min(wanted, soft // 4)
        for _ in range(max(0, wanted)):
            try:
                sock = self._open_transfer_socket()
            except OSError:
                return  # out of descriptors: transfers open theirs as they come
            try:
                sock.connect(sock.getsockname())  # bound to the listening address, never the any-address
            except OSError:
                self._close_socket(sock)
                return
            self._idle[sock.fileno()] = sock

    @property
    def rcvbuf_effective(self) -> int:
        """The listening socket's receive buffer as the kernel set it (bytes)."""
        return self._sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) if self._sock else 0

    def _wake(self) -> None:
        try:
            if self._wake_w is not None:
                self._wake_w.send(b"\0")
        except (BlockingIOError, OSError):
            pass  # a wake-up is already pending, or we are closed

    # -- the loop -----------------------------------------------------------------------------

    def _run(self) -> None:
        self._loop_ident = threading.get_ident()
        self._ready.set()
        try:
            self._loop()
        except BaseException as err:  # noqa: BLE001 - a bug: kept for stop() to re-raise
            self._error = err
        finally:
            self._shutdown()
            self._exited.set()

    def _loop(self) -> None:
        poll, transfers_get, idle = self._epoll.poll, self._transfers.get, self._idle
        listen_fd, wake_fd = self._sock.fileno(), self._wake_r.fileno()
        calls = self._calls
        monotonic = time.monotonic
        buf = bytearray(_ACK_READ)  # every ACK is read into this: no bytes object per datagram
        unpack = _HEADER
        now = monotonic()
        while True:
            if self._stopping:
                if listen_fd >= 0:
                    self._epoll.unregister(listen_fd)
                    self._sock.close()
                    self._sock = None
                    listen_fd = -1
                if self._stop_now:
                    for t in list(self._transfers.values()):
                        self._finish(t, "aborted")
                    break
                if not self._clients:
                    break
            # One number says when the loop next has something of its own to do (a timer, the log):
            # a turn that only carries datagrams reads no clock but the one after the wake-up.
            due = self._due
            try:
                events = poll(-1.0 if due == _NEVER else max(0.0, due - now))
            except InterruptedError:
                continue
            now = monotonic()
            for fd, _ in events:
                t = transfers_get(fd)
                if t is not None:  # a transfer's datagram: the per-ACK path, inline
                    # One datagram per readiness: a client has one ACK in flight per window, and
                    # epoll is level-triggered, so a second one waiting is read on the next turn
                    # instead of paying an empty read (and its exception) after every ACK.
                    try:
                        n = t.recv_into(buf)
                    except OSError:  # nothing after all, or ICMP port unreachable: the timer decides
                        continue
                    if n < 4:
                        continue
                    opcode, number = unpack(buf)
                    if opcode == _ACK:
                        if t.on_ack(number, now) is not None:
                            self._finish(t, "ok", now)
                    elif opcode == _ERROR:
                        self._finish(t, "client-error", now)
                elif fd == listen_fd:
                    self._on_requests(len(events))
                elif fd == wake_fd:
                    try:
                        self._wake_r.recv(4096)
                    except BlockingIOError:
                        pass
                elif fd in idle:
                    _drain(idle[fd])  # a late datagram from a finished transfer's client
            self._signalled = False  # cleared before draining: anything appended later wakes us again
            if calls:
                self._run_calls()
            if now >= self._due:
                self._housekeep(monotonic())

    def _housekeep(self, now: float) -> None:
        """Timers that are due, the log's flush and summary; then when to come back (``_due``).

        Timers are checked at most every ``TIMER_SLACK``: a transfer's entry outlives it (it is
        dropped when it comes due, not when the transfer ends), and in a storm entries come due
        all the time; one pass serves every entry due by then, at most ``TIMER_SLACK`` late."""
        timers, log = self._timers, self.log
        self._expire_timers(now)
        if now >= log.summary_at:
            log.write_summary()
        elif log.dirty and now - log.flushed >= LOG_FLUSH_EVERY:
            log.flush()  # not once per turn: one write per turn was one system call per transfer
        while timers and timers[0][2].done:
            heapq.heappop(timers)  # stale: the transfer ended
        due = timers[0][0] if timers else _NEVER
        if log.dirty:
            due = min(due, log.flushed + LOG_FLUSH_EVERY)
        due = min(due, log.summary_at)
        self._due = due if due == _NEVER else max(due, now + TIMER_SLACK)

    def _logged(self, now: float) -> None:
        """The loop wrote a log line: it reaches the file within ``LOG_FLUSH_EVERY``."""
        if self._due > now + LOG_FLUSH_EVERY:
            self._due = now + LOG_FLUSH_EVERY

    def _arm(self, t: Transfer) -> None:
        heapq.heappush(self._timers, (t.deadline, next(self._seq), t))
        if t.deadline < self._due:
            self._due = t.deadline

    def _expire_timers(self, now: float) -> None:
        timers, retries = self._timers, self.retries
        while timers and timers[0][0] <= now:
            _, _, t = heapq.heappop(timers)
            if t.done:
                continue
            if t.deadline > now:  # the transfer moved on since this entry was armed: arm it anew
                self._arm(t)
                continue
            result = t.on_timeout(now, retries)
            if result is not None:
                self._finish(t, result, now)
            else:
                self._arm(t)

    # -- requests on the listening socket -----------------------------------------------------

    def _on_requests(self, events: int = _QUIET_TURN + 1) -> None:
        """Requests waiting on the listening socket: in a storm (a busy turn) up to 512 of them, until
        the socket is empty; in a quiet turn (``events`` at most ``_QUIET_TURN``, as when modems
        come back one by one) only one, since the level-triggered poll reports any other at once:
        the read that finds the socket empty (an exception) costs more than that poll."""
        sock, calls, pktinfo = self._sock, self._calls, self._pktinfo
        for _ in range(1 if events <= _QUIET_TURN else 512):  # bounded so transfers get their turn in a burst
            if calls:  # builds finished meanwhile: their modems asked first, and the storm's intake
                self._run_calls()  # is when the loop has time to start their transfers
            try:
                if pktinfo:
                    datagram, ancillary, _, client = sock.recvmsg(_REQUEST_READ, _PKTINFO_SPACE)
                    local = _local_address(ancillary)
                else:
                    datagram, client = sock.recvfrom(_REQUEST_READ)
                    local = None
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            if self._stopping:
                self.summary.dropped += 1
                continue
            self._on_request(datagram, client, local)

    def _on_request(self, datagram: bytes, client, local: tuple | None = None) -> None:
        """One request; ``local``: the address it was sent to, as a bind address (None: the listening one)."""
        now = time.monotonic()
        try:
            pkt = P.parse(datagram)
        except P.TftpProtocolError as err:
            self._refuse(client, "?", _E.IllegalTftpOp, "malformed request", "bad-request", now, detail=str(err),
                         local=local)
            return
        if pkt.opcode == P.WRQ:
            self._refuse(client, pkt.filename, _E.AccessViolation, "read-only server: write refused",
                         "refused-write", now, local=local)
            return
        if pkt.opcode != P.RRQ:
            return  # a stray ACK/DATA to port 69: not a request, no answer (RFC 1350 TIDs)
        if client in self._clients:
            return  # the client resent its RRQ; the transfer in progress answers it
        mode = pkt.mode
        if mode not in ("octet", "netascii"):
            self._refuse(client, pkt.filename, _E.IllegalTftpOp, f"mode {mode!r} not supported", "bad-request", now,
                         local=local)
            return
        filename = pkt.filename
        try:
            path, st = locate_in_root(self.root, filename)
        except AccessViolation as err:
            self._refuse(client, filename, _E.AccessViolation, "access violation", "access-violation", now,
                         detail=str(err), local=local)
            return
        data = self._read_static(path, st) if st is not None else None
        if data is None and self.provider is not None:
            # asked from the loop, never blocking: the bytes, a future, or a miss
            try:
                got = self.provider.request(filename, client_ip(client))
            except Exception as err:  # noqa: BLE001 - a provider's bug answers that modem only
                self._provider_failed(client, filename, err, now, local)
                return
            if isinstance(got, concurrent.futures.Future):
                self._clients.add(client)  # its resent RRQs join this wait
                self._waiting_builds += 1
                got.add_done_callback(lambda f, c=client, p=pkt, t0=now, a=local: self._built(f, c, p, t0, a))
                return
            data = got
        if data is None:
            self._refuse(client, filename, _E.FileNotFound, "file not found", "not-found", now, local=local)
            return
        self._begin(client, pkt, data, now, local)

    def _read_static(self, path: str, st: os.stat_result) -> bytes | None:
        """The file's bytes (from the cache while its inode, size and mtime are unchanged, once it was
        asked for twice)."""
        if not stat.S_ISREG(st.st_mode):
            return None
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        seen = self._static_cache.get(path)
        seen = seen if seen is not None and seen[0] == key else None  # an edited file starts afresh
        if seen is not None and seen[1] is not None:
            return seen[1]
        if st.st_size > MAX_STATIC_BYTES:
            return None
        try:
            data = _read_file(path, st.st_size)
        except OSError:
            return None
        # Kept from its second request on: a storm of per-modem files, each asked for once, would fill
        # memory with files not served again (and fresh memory costs a page fault per 4 KiB), while a
        # tier's file shared by many modems is read twice in all.
        if len(self._static_cache) > STATIC_CACHE_FILES:
            self._static_cache.clear()
        self._static_cache[path] = (key, data if seen is not None else None)
        return data

    def _built(self, fut, client, pkt, t0, local=None) -> None:
        """Any thread: hand the built file back to the loop. In the loop's own thread (a provider that
        completes its futures there, ``attach_loop``: every modem of a cold storm) it starts at once,
        without a second trip through ``call_soon``."""
        if threading.get_ident() == self._loop_ident:
            self._guarded(self._on_built, client, pkt, t0, fut, local)
        else:
            self.call_soon(lambda: self._on_built(client, pkt, t0, fut, local))

    def _run_calls(self) -> None:
        calls = self._calls
        while calls:
            self._guarded(calls.popleft())

    def _guarded(self, fn, *args) -> None:
        """``fn(*args)`` in the loop; a provider's bug is logged and must not end the loop."""
        try:
            fn(*args)
        except Exception as err:  # noqa: BLE001 - a provider's bug must not end the loop
            self.log.error(f"dynamic provider callback failed: {_describe(err)}")
            self._logged(time.monotonic())

    def _on_built(self, client, pkt, t0, fut, local=None) -> None:
        self._waiting_builds -= 1
        if self._calls_closed or (self._stopping and self._stop_now):  # nothing more is sent
            self._clients.discard(client)
            return
        try:
            data = normalise(fut.result())
        except FileNotFoundError:
            data = None
        except Exception as err:  # noqa: BLE001 - any provider failure answers that client only
            self._clients.discard(client)
            self._provider_failed(client, pkt.filename, err, t0, local)
            return
        self._clients.discard(client)
        if data is None:
            self._refuse(client, pkt.filename, _E.FileNotFound, "file not found", "not-found", t0, local=local)
            return
        self._begin(client, pkt, data, t0, local)

    def _provider_failed(self, client, filename, err: Exception, t0: float, local=None) -> None:
        if isinstance(err, RequestRefused):  # not for this requester: the log says who, which file and why
            self._refuse(client, filename, _E.AccessViolation, "access denied", "refused", t0, detail=str(err),
                         local=local)
        else:
            self._refuse(client, filename, _E.NotDefined, "cannot build config file", "generate-error", t0,
                         detail=_describe(err), local=local)

    def _begin(self, client, pkt, data: bytes, t0: float, local: tuple | None = None) -> None:
        if pkt.mode == "netascii":
            data = P.netascii(data)
        if pkt.options:
            opts = P.negotiate(pkt.options, len(data), timeout=self.timeout, max_blksize=self.max_blksize,
                               max_windowsize=self.max_windowsize)
        else:  # what most modems ask: RFC 1350's defaults, one Options for all of them (a Transfer only reads it)
            opts = self._plain_options
        sock = self._transfer_socket(client, local)
        if sock is None:
            return
        t = Transfer(client, pkt.filename, data, opts, t0, sock.send,
                     _segment_sender(sock) if opts.windowsize > 1 and self.segments else None)
        t.sock, t.fd, t.recv_into, t.local = sock, sock.fileno(), sock.recv_into, local
        self._served[t.fd] += 1
        self._transfers[t.fd] = t
        self._clients.add(client)
        t.begin(time.monotonic())
        self._arm(t)

    def _transfer_socket(self, client, local: tuple | None = None) -> socket.socket | None:
        """A socket of its own (its TID) on ``local`` (None: the listening address) connected to
        ``client``: a finished transfer's, or a new one. None when there is none to be had (the
        client retries its RRQ)."""
        idle = self._idle_at.get(local) if self._pktinfo else self._idle
        while idle:
            fd, sock = idle.popitem()  # the most recently finished: its buffers are warm
            if self._pktinfo:
                del self._idle[fd]
            try:
                sock.connect(client)  # from now on the kernel drops datagrams from any other TID
            except OSError:
                self._unclean.discard(fd)
                self._close_socket(sock)
                continue
            # What the previous client sent before the connect is dropped. A transfer that ended
            # cleanly (its client acknowledged the end, nothing was sent twice) can have left only
            # datagrams, which one ioctl tells; one that resent may have drawn an ICMP error (its
            # client gone), which only a read clears.
            if fd in self._unclean:
                self._unclean.discard(fd)
                _drain(sock)
            elif fcntl.ioctl(fd, _FIONREAD, _NO_BYTES) != _NO_BYTES:
                _drain(sock)
            return sock
        try:
            sock = self._open_transfer_socket(local)
        except OSError as err:  # EMFILE/ENFILE, or the address is gone: the client will retry its RRQ
            self.summary.dropped += 1
            self.log.error(f"no socket for a new transfer: {err.strerror or err}", client=_client_text(client))
            self._logged(time.monotonic())
            return None
        try:
            sock.connect(client)  # the kernel drops datagrams from any other TID for us
        except OSError as err:
            self._close_socket(sock)
            self.summary.dropped += 1
            self.log.error(f"no socket for a new transfer: {err.strerror or err}", client=_client_text(client))
            self._logged(time.monotonic())
            return None
        return sock

    def _open_transfer_socket(self, local: tuple | None = None) -> socket.socket:
        """A new non-blocking UDP socket on an ephemeral port of ``local`` (None: the listening
        address), registered with the loop's epoll; ``OSError`` when none can be had."""
        sock = socket.socket(self._family, socket.SOCK_DGRAM)
        try:
            sock.setblocking(False)
            sock.bind(local or (self._local_ip, 0))
            self._epoll.register(sock.fileno(), _EPOLLIN)
        except OSError:
            sock.close()
            raise
        self._served[sock.fileno()] = 0
        return sock

    def _close_socket(self, sock: socket.socket) -> None:
        self._served.pop(sock.fileno(), None)
        try:
            self._epoll.unregister(sock.fileno())
        except (OSError, ValueError):
            pass
        sock.close()

    # -- a transfer in progress ---------------------------------------------------------------

    # -- a transfer ends ----------------------------------------------------------------------

    def _finish(self, t: Transfer, result: str, now: float | None = None) -> None:
        t.done = True
        self._transfers.pop(t.fd, None)
        sock = t.sock
        if len(self._idle) < MAX_IDLE_SOCKETS and not self._stopping and self._served[t.fd] < SOCKET_TRANSFERS:
            self._idle[t.fd] = sock  # stays registered: a late datagram from this client is drained
            if self._pktinfo:  # kept for requests to the same address (None: one the kernel did not name)
                self._idle_at.setdefault(t.local, {})[t.fd] = sock
            if t.retries or result != "ok":
                self._unclean.add(t.fd)
        else:
            self._close_socket(sock)
        if now is None:
            now = time.monotonic()
        duration = now - t.started
        if result == "ok":
            self.durations.add(duration)
        try:
            self.log.transfer_done(_client_text(t.client), t.filename, t.delivered, len(t.data), duration,
                                   t.retries, result, t.blksize, t.windowsize)
        finally:  # `active` falls only once the transfer is counted: a caller waiting for idle sees it
            self._clients.discard(t.client)
            self._logged(now)

    def _refuse(self, client, filename, code, message, result, t0, detail: str | None = None,
                local: tuple | None = None) -> None:
        """Answer an RRQ/WRQ with a TFTP ERROR (from the listening socket, from the address the request
        was sent to) and log it."""
        try:
            if self._sock is None:  # stopping: the listening socket is closed already
                pass
            elif local is None:
                self._sock.sendto(P.encode_error(code, message), client)
            else:
                self._sock.sendmsg([P.encode_error(code, message)], [_source_pktinfo(local, self._family)], 0,
                                   client)
        except OSError:
            pass
        record = {"time": round(time.time(), 3), "client": _client_text(client), "file": filename,
                  "bytes": 0, "duration": round(time.monotonic() - t0, 6), "retries": 0, "result": result}
        if detail:
            record["detail"] = detail
        self.log.transfer(record)
        self._logged(time.monotonic())

    def _shutdown(self) -> None:
        with self._calls_lock:
            self._calls_closed = True
        self._run_calls()  # builds that finished as we stopped: their futures complete for other waiters
        # (a modem's own file is not sent any more: _on_built sees the loop has ended)
        if self.provider is not None:
            self.provider.attach_loop(None)
            if self.provider.owned:
                self.provider.close()
        for t in list(self._transfers.values()):
            self._finish(t, "aborted")
        for s in (self._sock, self._wake_r, self._wake_w, *self._idle.values()):
            if s is not None:
                s.close()
        self._idle.clear()
        self._idle_at.clear()
        self._sock = self._wake_w = self._wake_r = None
        if self._epoll is not None:
            self._epoll.close()
        self.log.write_summary()
        self.log.close()


def _client_families(family: int, host: str) -> tuple[int, ...]:
    """The address families (4, 6) of the clients a socket bound to ``host`` hears: both on the dual-stack
    any-address, IPv4 on an IPv4 or v4-mapped address, else IPv6."""
    if family == socket.AF_INET:
        return (4,)
    ip = ipaddress.IPv6Address(host.split("%")[0])
    return (4, 6) if ip.is_unspecified else (4,) if ip.ipv4_mapped else (6,)


def client_ip(client) -> str:
    """The client's address as a provider sees it: an IPv4 client of a dual-stack socket
    (``::ffff:10.0.0.5``) is the IPv4 address, so its file gets TLV 20, not TLV 59."""
    ip = client[0]
    if ip.startswith("::ffff:") and "." in ip:
        return ip[7:]
    return ip


def _local_address(ancillary) -> tuple | None:
    """The address a request was sent to, from its IP_PKTINFO / IPV6_PKTINFO, as a bind address
    (an IPv6 link-local one with its interface); None when the kernel gave none."""
    for level, kind, data in ancillary:
        if level == socket.IPPROTO_IP and kind == _IP_PKTINFO and len(data) >= 12:
            return socket.inet_ntop(socket.AF_INET, data[4:8]), 0  # ipi_spec_dst: the local address
        if level == socket.IPPROTO_IPV6 and kind == socket.IPV6_PKTINFO and len(data) >= 20:
            ip = socket.inet_ntop(socket.AF_INET6, data[:16])
            scope = int.from_bytes(data[16:20], sys.byteorder) if ip.startswith("fe80:") else 0
            return ip, 0, 0, scope
    return None


def _source_pktinfo(local: tuple, family: int) -> tuple:
    """The ancillary item that sends a datagram from ``local`` (a bind address of ``_local_address``)."""
    if family == socket.AF_INET:
        return socket.IPPROTO_IP, _IP_PKTINFO, struct.pack("=i4s4s", 0, socket.inet_aton(local[0]), bytes(4))
    scope = local[3] if len(local) > 3 else 0
    return socket.IPPROTO_IPV6, socket.IPV6_PKTINFO, socket.inet_pton(socket.AF_INET6, local[0]) + \
        scope.to_bytes(4, sys.byteorder)


def _client_text(client) -> str:
    ip = client[0]
    if ":" in ip:
        ip = client_ip(client)
        if ":" in ip:
            return f"[{ip}]:{client[1]}"
    return f"{ip}:{client[1]}"


def _read_file(path: str, size: int) -> bytes:
    """The whole file in the fewest system calls (open, read, close: every modem's file is its own,
    so a storm reads one per transfer)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks, want = [], size + 1  # one byte more: a file that grew since its stat is read whole
        while True:
            chunk = os.read(fd, want)
            chunks.append(chunk)
            if len(chunk) < want:
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
            want = 1 << 16
    finally:
        os.close(fd)


_NO_BYTES = bytes(4)  # FIONREAD's answer for an empty socket


def _segment_sender(sock: socket.socket) -> Callable[[list, int], None]:
    """``send_segments`` for a Transfer on ``sock``: the buffers as one payload, which the kernel cuts
    into datagrams of ``size`` bytes (the last may be shorter)."""
    sendmsg = sock.sendmsg

    def send_segments(buffers: list, size: int) -> None:
        sendmsg(buffers, [(socket.SOL_UDP, _UDP_SEGMENT, struct.pack("=H", size))])  # once per window

    return send_segments


def _drain(sock: socket.socket) -> None:
    """Read and drop whatever waits on ``sock``: datagrams, and an ICMP error from an earlier client."""
    for _ in range(256):  # bounded: a client flooding this socket cannot hold the loop
        try:
            sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:  # the error is reported once, and cleared: what follows it is read too
            continue


class TransferTimes:
    """Completed transfers' durations as cumulative histogram buckets (the Prometheus form), kept in
    the loop at the cost of one bisect per transfer; read by the metrics endpoint from another thread."""

    BOUNDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

    def __init__(self):
        self.counts = [0] * (len(self.BOUNDS) + 1)  # the last one: above every bound
        self.total = 0.0

    def add(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(self.BOUNDS, seconds)] += 1
        self.total += seconds

    def buckets(self) -> list[tuple[str, int]]:
        """(upper bound, count of transfers at most that long) pairs ending with ``+Inf``."""
        out, running = [], 0
        for bound, n in zip((*(str(b) for b in self.BOUNDS), "+Inf"), list(self.counts)):
            running += n
            out.append((bound, running))
        return out


def _describe(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    return text if isinstance(err, HfcprovError) else f"{type(err).__name__}: {text}"


def _set_rcvbuf(sock: socket.socket, size: int) -> None:
    """Ask for ``size`` bytes of receive buffer; as root beyond net.core.rmem_max."""
    if not size:
        return
    force = getattr(socket, "SO_RCVBUFFORCE", 33)
    try:
        sock.setsockopt(socket.SOL_SOCKET, force, size)
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, size)  # capped at rmem_max


def raise_fd_limit(wanted: int = 65536) -> int:
    """Raise this process's open-file limit toward ``wanted`` (each transfer holds one socket)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(wanted, hard) if hard != resource.RLIM_INFINITY else wanted
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


SERVER_NICE_AS_ROOT = -10  # the loop (about 0.1-0.4 ms of CPU per transfer) before ordinary work


def raise_priority(nice: int | None = None) -> int:
    """Set this process's nice value to ``nice`` (None: ``SERVER_NICE_AS_ROOT`` when root, else leave it).

    The loop serves every transfer in flight on one thread: raised, it answers each datagram
    before ordinary processes' work. The build workers do not follow it up: they run at ordinary
    priority (``hfcprov.tftp.dynamic.worker_niceness``), beside a DHCP server rather than above
    it, and only on the cores the loop leaves. Returns the nice value in force."""
    current = os.getpriority(os.PRIO_PROCESS, 0)
    if nice is None:
        if os.geteuid() != 0 or current <= SERVER_NICE_AS_ROOT:
            return current
        nice = SERVER_NICE_AS_ROOT
    try:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    except OSError as err:
        raise TftpServerError(f"cannot set the server's priority to {nice}: {err.strerror}") from None
    return nice
