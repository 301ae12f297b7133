"""The far end of a measurement: UDP echo for latency probes, TCP sink and source for bulk flows.

Run it on the server (in the emulator: the ``srv`` namespace)::

    python -m hfcprov.probe.responder --port 7473

A TCP client opens with one JSON line: ``{"mode": "upload"|"download", "duration": s, "cc": "reno"}``.
``upload``: the responder reads, and after ``duration`` (plus a margin) sends
back one JSON line with its receive timeline, then drains to EOF. A client that
ends its upload early resets it and opens a new connection with
``{"mode": "report", "id": <the upload's id>}``: the responder stops that sink
and answers with the timeline it holds.
``download``: it sends for ``duration`` plus a margin with the congestion
control asked for, then aborts. Receivers measure goodput; the one who
receives keeps the timeline, so no clocks need to agree.
"""

from __future__ import annotations

import argparse
import json
import socket
import socketserver
import struct
import sys
import threading
import time

from hfcprov.probe import DEFAULT_PORT
from hfcprov.probe.errors import ProbeError
from hfcprov.probe.timeline import Timeline

MARGIN = 0.3  # seconds beyond the client's duration, so the client's window closes first
CHUNK = 65536
KEEP = 60.0  # seconds an upload's timeline waits for a report request after its sink ended


def pin_congestion_control(sock: socket.socket, cc: str) -> str:
    """Set TCP_CONGESTION on ``sock`` and read it back: the run uses exactly ``cc`` or fails."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    except OSError as err:
        raise ProbeError(f"congestion control {cc!r} not available ({err.strerror}); kernel offers: "
                         f"{available_congestion_controls()}") from err
    got = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0].decode()
    if got != cc:
        raise ProbeError(f"asked for congestion control {cc!r}, kernel uses {got!r}")
    return got


def available_congestion_controls() -> str:
    try:
        with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def abort(sock: socket.socket) -> None:
    """Close with RST: unsent data is discarded, so it cannot load the path after the run."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    except OSError:
        pass


class _Sinks:
    """Upload timelines by the client's flow id, for a report asked on a new connection."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_id: dict[str, tuple[Timeline, threading.Event, list]] = {}

    def add(self, flow_id: str) -> tuple[Timeline, threading.Event]:
        tl, stop = Timeline(), threading.Event()
        with self.lock:
            self._expire()
            self.by_id[flow_id] = (tl, stop, [None])
        return tl, stop

    def ended(self, flow_id: str) -> None:
        with self.lock:
            if flow_id in self.by_id:
                self.by_id[flow_id][2][0] = time.monotonic()

    def take(self, flow_id: str) -> Timeline | None:
        with self.lock:
            entry = self.by_id.pop(flow_id, None)
        if entry is None:
            return None
        entry[1].set()  # the sink stops reading
        return entry[0]

    def _expire(self) -> None:
        now = time.monotonic()
        for k in [k for k, (_, _, ended) in self.by_id.items() if ended[0] is not None and now - ended[0] > KEEP]:
            del self.by_id[k]


class _BulkHandler(socketserver.BaseRequestHandler):
    def handle(self):
        sock: socket.socket = self.request
        sock.settimeout(30)
        header = b""
        while not header.endswith(b"\n"):
            part = sock.recv(1)
            if not part:
                return
            header += part
            if len(header) > 4096:
                return
        try:
            req = json.loads(header)
            duration = float(req["duration"])
            mode = req["mode"]
        except (ValueError, KeyError, TypeError):
            return
        if mode == "upload":
            self._sink(sock, duration, str(req.get("id") or ""))
        elif mode == "report":
            tl = self.server.sinks.take(str(req.get("id") or ""))
            try:
                sock.sendall(json.dumps({"timeline": tl.to_pairs() if tl else []}).encode() + b"\n")
            except OSError:
                pass
        elif mode == "download":
            self._source(sock, duration, req.get("cc", "cubic"))

    def _sink(self, sock, duration, flow_id=""):
        sinks = self.server.sinks
        tl, stop = sinks.add(flow_id) if flow_id else (Timeline(), threading.Event())
        tl.start()
        end = tl.t[0] + duration + MARGIN
        sock.settimeout(0.05)
        buf = bytearray(CHUNK)
        while time.monotonic() < end and not stop.is_set():
            try:
                n = sock.recv_into(buf)
            except TimeoutError:
                continue
            except OSError:
                break
            if not n:
                break
            tl.add(n)
        if flow_id:
            sinks.ended(flow_id)
        if stop.is_set():
            return  # reported on the client's new connection
        try:
            sock.settimeout(5)
            sock.sendall(json.dumps({"timeline": tl.to_pairs()}).encode() + b"\n")
            while sock.recv_into(buf):  # drain until the client aborts
                pass
        except OSError:
            pass

    def _source(self, sock, duration, cc):
        try:
            pin_congestion_control(sock, cc)
        except ProbeError:
            abort(sock)
            return
        data = bytes(CHUNK)
        end = time.monotonic() + duration + MARGIN
        sock.settimeout(0.1)
        while time.monotonic() < end:
            try:
                sock.send(data)
            except TimeoutError:
                continue
            except OSError:
                break
        abort(sock)


class _TcpServer(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
    sinks: _Sinks


def _udp_echo(sock: socket.socket) -> None:
    while True:
        try:
            data, peer = sock.recvfrom(2048)
            sock.sendto(data, peer)
        except OSError:
            return


class Responder:
    """UDP echo and TCP bulk endpoint on one port; a context manager."""

    def __init__(self, host: str = "0.0.0.0", port: int = 0):
        self.tcp = _TcpServer((host, port), _BulkHandler, bind_and_activate=False)
        self.tcp.sinks = _Sinks()
        try:
            # accepted sockets start with the listener's congestion control before a download
            # pins theirs: CUBIC, so a host default of BBR does not leave them paced (bulk._connect)
            self.tcp.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"cubic")
        except OSError:
            pass  # not available or not permitted: the host's default
        try:
            self.tcp.server_bind()
            self.tcp.server_activate()
        except OSError:
            self.tcp.server_close()
            raise
        self.port = self.tcp.server_address[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind((host, self.port))

    def start(self) -> Responder:
        threading.Thread(target=self.tcp.serve_forever, daemon=True).start()
        threading.Thread(target=_udp_echo, args=(self.udp,), daemon=True).start()
        return self

    def stop(self) -> None:
        self.tcp.shutdown()
        self.tcp.server_close()
        self.udp.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="hfcprov.probe.responder")
    ap.add_argument("--host", default="0.0.0.0")
    ap.add_argument("--port", type=int, default=DEFAULT_PORT)
    args = ap.parse_args(argv)
    r = Responder(args.host, args.port).start()
    print(f"responder listening on {args.host}:{r.port} (udp echo, tcp bulk)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sys.exit(main())
