"""TCP bulk flows through the kernel's own TCP, with the congestion control pinned per run.

Each flow is a plain socket to the responder. The receiving end keeps the
byte timeline (the responder for upstream, this side for downstream), and
goodput is read off it for the window after the warm-up. At the end every
socket is aborted (RST), so no queued data keeps loading the path.
"""

from __future__ import annotations

import json
import secrets
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from hfcprov.probe.errors import ProbeError
from hfcprov.probe.responder import CHUNK, MARGIN, abort, pin_congestion_control
from hfcprov.probe.timeline import Timeline

_TCPI_TOTAL_RETRANS = 100  # byte offset of tcpi_total_retrans in struct tcp_info
_TCPI_CA_STATE = 1  # byte offset of tcpi_ca_state: 0 open, 1 disorder, 2 cwr, 3 recovery, 4 loss
CLEAN_STATES = (0, 2)  # no segment missing at the receiver: nothing delivered later that crossed earlier
STATE_STEP = 0.02  # s between congestion-state samples


@dataclass
class Flow:
    timeline: Timeline  # receiver's bytes over time, starting with a zero mark
    retransmissions: int | None = None  # sender's total, where the sender is this side
    error: str | None = None
    # (monotonic time, tcpi_ca_state) of the sender, where the sender is this side (upstream)
    states: list = field(default_factory=list)
    # monotonic time the upload's header left: the receiver's timeline starts about then
    started: float | None = None


def run_flows(target: str, port: int, direction: str, count: int, total: float, cc: str,
              started: threading.Event | None = None,
              end_at: Callable[[list[Flow]], float | None] | None = None, source: str | None = None,
              interface: str | None = None) -> list[Flow]:
    """Run ``count`` flows for ``total`` seconds (warm-up included); returns when all are done.

    ``end_at(flows)``, polled every ``STATE_STEP`` while uploads run: a monotonic time to stop every
    flow at, once the caller knows it (the measured window's end), or None. The uploads then stop
    there, reset their connections and fetch the responder's timelines over a new one, instead of
    running the whole ``total``.
    """
    if direction not in ("upstream", "downstream"):
        raise ProbeError(f"direction {direction!r}: expected upstream or downstream")
    socks = []
    try:
        for _ in range(count):
            socks.append(_connect(target, port, cc, source, interface))
    except (OSError, ProbeError) as err:
        for s in socks:
            abort(s)
        if isinstance(err, ProbeError):  # the congestion control asked for is not available
            raise
        raise ProbeError(f"no responder at {target}:{port} (tcp): {err.strerror or err}") from err
    flows = [Flow(timeline=Timeline()) for _ in socks]
    stop = _Stop()
    if direction == "upstream":
        threads = [threading.Thread(target=_upload, args=(s, f, total, cc, stop, (target, port)), daemon=True)
                   for s, f in zip(socks, flows)]
    else:
        threads = [threading.Thread(target=_download, args=(s, f, total, cc), daemon=True)
                   for s, f in zip(socks, flows)]
    for t in threads:
        t.start()
    if started:
        started.set()
    if end_at is not None and direction == "upstream":
        while not stop.is_set() and any(t.is_alive() for t in threads):
            when = end_at(flows)
            if when is not None:
                stop.at(when)
                break
            time.sleep(STATE_STEP)
    for t in threads:
        t.join(total + 30)
    errors = [f.error for f in flows if f.error]
    if errors and len(errors) == len(flows):
        raise ProbeError(f"every TCP flow to {target}:{port} failed: {errors[0]}")
    return flows


def _connect(target: str, port: int, cc: str, source: str | None = None, interface: str | None = None) -> socket.socket:
    """A TCP connection that runs ``cc`` from its first segment.

    The congestion control is set before the handshake: a socket set after it was first
    initialised by the host's default, and if that is BBR it leaves the kernel's internal
    pacing switched on for the connection's life, so a "cubic" flow would leave paced.
    """
    family = socket.AF_INET6 if ":" in target else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        pin_congestion_control(s, cc)
        if interface:  # a multi-homed host: leave by the interface behind the modem
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, interface.encode())
        if source:
            s.bind((source, 0))
        s.settimeout(5)
        s.connect((target, port))
    except BaseException:
        s.close()
        raise
    return s


class _Stop:
    """When every upload stops: set once (``at``), waited on by each flow."""

    def __init__(self) -> None:
        self._set = threading.Event()
        self.when: float | None = None

    def at(self, when: float) -> None:
        self.when = when
        self._set.set()

    def is_set(self) -> bool:
        return self._set.is_set()

    def wait_until_due(self, timeout: float) -> bool:
        """Block until the stop time has passed (True) or ``timeout`` seconds went by without one (False)."""
        deadline = time.monotonic() + timeout
        if not self._set.wait(timeout):
            return False
        left = min(self.when, deadline) - time.monotonic()
        if left > 0:
            time.sleep(left)
        return self.when <= deadline


def _header(mode: str, duration: float, cc: str, flow_id: str = "") -> bytes:
    return json.dumps({"mode": mode, "duration": duration, "cc": cc, "id": flow_id}).encode() + b"\n"


def _upload(sock: socket.socket, flow: Flow, total: float, cc: str, ending: _Stop | None = None,
            responder: tuple[str, int] | None = None) -> None:
    stop = threading.Event()
    flow_id = secrets.token_hex(8)

    def send():
        data = bytes(CHUNK)
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                sock.send(data)
            except TimeoutError:
                continue
            except OSError:
                return

    def watch():  # the sender's congestion state: measure.py starts the window outside loss recovery
        while not stop.wait(STATE_STEP):
            state = _ca_state(sock)
            if state is None:
                return
            flow.states.append((time.monotonic(), state))

    try:
        flow.started = time.monotonic()
        sock.sendall(_header("upload", total, cc, flow_id))
        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        threading.Thread(target=watch, daemon=True).start()
        if ending is not None and responder is not None and ending.wait_until_due(total):
            # the window is over early: stop here and ask for the receiver's record on a new connection
            stop.set()
            flow.retransmissions = _total_retrans(sock)
            abort(sock)
            report = _fetch_report(responder, flow_id)
        else:
            report = _read_line(sock, time.monotonic() + total + MARGIN + 10)
            stop.set()
            sender.join(2)
            flow.retransmissions = _total_retrans(sock)
        flow.timeline = Timeline.from_pairs(json.loads(report)["timeline"])
    except (OSError, ValueError, KeyError) as err:
        flow.error = str(err)
    finally:
        stop.set()
        abort(sock)


def _fetch_report(responder: tuple[str, int], flow_id: str, tries: int = 4) -> bytes:
    """The responder's receive timeline of upload ``flow_id``, asked for on a new connection (its first
    segments may queue behind the flows' last data, or be dropped from a full queue: a few tries)."""
    last: OSError | None = None
    for _ in range(tries):
        try:
            with socket.create_connection(responder, timeout=5) as s:
                s.sendall(_header("report", 0.0, "", flow_id))
                return _read_line(s, time.monotonic() + 10)
        except OSError as err:
            last = err
    raise last or OSError("no report")


def _read_line(sock: socket.socket, deadline: float) -> bytes:
    got = b""
    while not got.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise OSError("responder sent no report")
        sock.settimeout(min(left, 0.5))
        try:
            part = sock.recv(65536)
        except TimeoutError:
            continue
        if not part:
            raise OSError("responder closed without a report")
        got += part
    return got


def _download(sock: socket.socket, flow: Flow, total: float, cc: str) -> None:
    tl = flow.timeline
    try:
        sock.sendall(_header("download", total, cc))
        tl.start()
        end = tl.t[0] + total
        buf = bytearray(CHUNK)
        sock.settimeout(0.1)
        while time.monotonic() < end:
            try:
                n = sock.recv_into(buf)
            except TimeoutError:
                continue
            if not n:
                break
            tl.add(n)
    except OSError as err:
        flow.error = str(err)
    finally:
        abort(sock)


def _ca_state(sock: socket.socket) -> int | None:
    try:
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[_TCPI_CA_STATE]
    except (OSError, IndexError):
        return None


def _total_retrans(sock: socket.socket) -> int | None:
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
        return struct.unpack_from("I", info, _TCPI_TOTAL_RETRANS)[0]
    except (OSError, struct.error):
        return None
