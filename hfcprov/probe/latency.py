"""Latency probes: scapy-built ICMP echo or UDP datagrams at a fixed rate, RTT from kernel capture stamps.

Each probe carries ``b"hfcp"``, a per-run token and its sequence number, so its
departure and its answer can be matched in the capture even when other probe
runs share the interface. Probes are paced against an absolute schedule
(``t0 + i / rate``): a late wake-up delays one probe, never the ones after it.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import threading
import time
from dataclasses import dataclass

from hfcprov.probe.capture import open_capture, receive
from hfcprov.probe.errors import ProbeError

MAGIC = b"hfcp"
_TAG = struct.Struct("!4s4sQ")


@dataclass
class Probe:
    seq: int
    sent_at: float  # monotonic, when the sender handed it to the kernel
    tx: float | None = None  # kernel stamp, leaving
    rx: float | None = None  # kernel stamp, answer arriving

    @property
    def rtt(self) -> float | None:
        if self.tx is None or self.rx is None:
            return None
        return self.rx - self.tx


def route_to(target: str, source: str | None = None, interface: str | None = None) -> tuple[str, str]:
    """(interface, source address) the kernel uses towards ``target`` (from ``source``, out of ``interface``)."""
    argv = ["ip", "-j", "route", "get", target]
    if source:
        argv += ["from", source]
    if interface:
        argv += ["oif", interface]
    proc = subprocess.run(argv, check=False, capture_output=True, text=True)
    try:
        route = json.loads(proc.stdout)[0]
        return route["dev"], source or route["prefsrc"]
    except (ValueError, IndexError, KeyError) as err:
        raise ProbeError(f"no route to {target}: {proc.stderr.strip()}") from err


class LatencyProbe:
    """Send probes to ``target`` until stopped; ``probes`` holds each one's timing."""

    def __init__(self, target: str, kind: str = "icmp", rate: float = 20.0, port: int | None = None,
                 size: int = 64, source: str | None = None, interface: str | None = None):
        if kind not in ("icmp", "udp"):
            raise ProbeError(f"probe kind {kind!r}: expected icmp or udp")
        if kind == "udp" and not port:
            raise ProbeError("UDP probes need the responder's port")
        if not 0 < rate <= 1000:
            raise ProbeError(f"probe rate {rate}/s: expected 0 < rate <= 1000")
        self.iface, self.src = route_to(target, source, interface)
        self.bind_device = interface  # a probe that must leave by this interface (a multi-homed host)
        self.target, self.kind, self.rate, self.port = target, kind, rate, port
        self.token = os.urandom(4)
        self.ident = int.from_bytes(os.urandom(2), "big")
        self.pad = max(0, size - _TAG.size)
        self.probes: list[Probe] = []
        self._sent = threading.Condition()  # notified at each probe sent (wait_sent)
        self._stop = threading.Event()
        self._capture_stop = threading.Event()
        self._sock = None
        self._udp = None
        self._threads: list[threading.Thread] = []

    def start(self) -> LatencyProbe:
        try:
            self._cap = open_capture(self.iface)
        except OSError as err:
            raise ProbeError(f"cannot capture on {self.iface} for kernel timestamps: {err.strerror} (needs root)") from err
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        if self.bind_device:
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, self.bind_device.encode())
        if self.kind == "udp":
            # A bound socket owns the source port, so answers do not draw ICMP port-unreachable.
            self._udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            if self.bind_device:
                self._udp.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, self.bind_device.encode())
            self._udp.bind((self.src, 0))
            self.sport = self._udp.getsockname()[1]
            self._threads.append(threading.Thread(target=self._drain_udp, daemon=True))
        self._packet(0)  # the first build imports scapy's layers; keep that off the schedule
        self._threads += [threading.Thread(target=self._capture, daemon=True),
                          threading.Thread(target=self._send, daemon=True)]
        for t in self._threads:
            t.start()
        return self

    def wait_sent(self, count: int, timeout: float | None = None) -> bool:
        """Block until ``count`` probes have left (True), or ``timeout`` seconds went by first (False)."""
        with self._sent:
            return self._sent.wait_for(lambda: len(self.probes) >= count, timeout)

    def stop(self, linger: float = 1.0) -> list[Probe]:
        """Stop sending, wait ``linger`` seconds for late answers, and return every probe."""
        self._stop.set()
        self._threads[-1].join()
        time.sleep(linger)
        self._capture_stop.set()
        for t in self._threads[:-1]:
            t.join(10)
        for s in (self._sock, self._udp, self._cap):
            if s is not None:
                s.close()
        return self.probes

    # -- workers ----------------------------------------------------------------------------
    def _packet(self, seq: int) -> bytes:
        from scapy.layers.inet import ICMP, IP, UDP
        from scapy.packet import Raw

        payload = Raw(_TAG.pack(MAGIC, self.token, seq) + bytes(self.pad))
        ip = IP(src=self.src, dst=self.target)
        l4 = ICMP(type=8, id=self.ident, seq=seq & 0xFFFF) if self.kind == "icmp" else UDP(
            sport=self.sport, dport=self.port)
        return bytes(ip / l4 / payload)

    def _send(self) -> None:
        t0 = time.monotonic()
        seq = 0
        while not self._stop.is_set():
            due = t0 + seq / self.rate
            wait = due - time.monotonic()
            if wait > 0 and self._stop.wait(wait):
                break
            pkt = self._packet(seq)
            self.probes.append(Probe(seq=seq, sent_at=time.monotonic()))
            try:
                self._sock.sendto(pkt, (self.target, 0))
            except OSError as err:
                raise ProbeError(f"sending a probe to {self.target}: {err.strerror}") from err
            seq += 1
            with self._sent:
                self._sent.notify_all()

    def _capture(self) -> None:
        self._cap.settimeout(0.1)
        while True:
            stopping = self._capture_stop.is_set()
            if stopping:
                # Packets already stamped by the kernel may still wait in the socket on a busy
                # machine: read them all before leaving, so none counts as lost.
                self._cap.setblocking(False)
            try:
                data, ts, outgoing = receive(self._cap)
            except (TimeoutError, BlockingIOError):
                if stopping:
                    return
                continue
            except OSError:
                if stopping:
                    return
                continue
            seq = self._match(data, outgoing)
            if seq is None or seq >= len(self.probes):
                continue
            probe = self.probes[seq]
            if outgoing and probe.tx is None:
                probe.tx = ts
            elif not outgoing and probe.rx is None:
                probe.rx = ts

    def _match(self, data: bytes, outgoing: bool) -> int | None:
        """Sequence number of one of our probes or answers, else None."""
        if len(data) < 20:
            return None
        ihl = (data[0] & 0x0F) * 4
        proto = data[9]
        body = data[ihl + 8: ihl + 8 + _TAG.size]
        if len(body) < _TAG.size:
            return None
        magic, token, seq = _TAG.unpack(body)
        if magic != MAGIC or token != self.token:
            return None
        if proto == 1:
            icmp_type = data[ihl]
            if self.kind != "icmp" or icmp_type != (8 if outgoing else 0):
                return None
        elif proto != 17 or self.kind != "udp":
            return None
        return seq

    def _drain_udp(self) -> None:
        self._udp.settimeout(0.2)
        while not self._capture_stop.is_set():
            try:
                self._udp.recv(2048)
            except TimeoutError:
                continue
            except OSError:
                return
