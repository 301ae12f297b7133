"""Split-connection headend proxy (Cohen and Ramanathan, "Using proxies to enhance TCP
performance over HFC networks").

A remote transfer either runs end to end (``direct``) or is split at the headend
into a *remote* connection (server -> proxy, long RTT, Internet loss) and a
*local* one (proxy -> subscriber PC, short RTT, HFC loss):

- ``store``: store-and-forward; the proxy keeps everything the remote side
  delivered, so the remote connection never waits for the local one;
- ``buffer``: buffer-and-forward; the proxy's receive socket buffer
  (``proxy_buffer``) holds what arrived and was not yet sent on, and the remote
  connection's window is what is left of it, so a stalled local connection
  stalls the remote one. (In ``store`` mode that buffer is drained to storage at
  once, so the remote window is all of it.)

Each side has its own RTT, loss and TCP options. The paper's proxy changes are
``proxy_delack=False`` (no delayed ACK on the proxy's remote side) and ``tuned``
(the HFC tunings on its local side: a 200 ms timer and fast retransmit on the
first duplicate ACK). Defaults are the paper's simulated network: 25 Mb/s HFC
downstream, 20 ms local and 100 ms remote RTT, 45 Mb/s T3, 8 KB socket buffers,
536-byte segments, Reno with delayed ACKs and a 500 ms timer, a 3 MB transfer.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field

from hfcprov.errors import HfcprovError
from hfcprov.results import FlowResult, RunResult
from hfcprov.sim.cc import congestion_control
from hfcprov.sim.engine import Engine
from hfcprov.sim.link import Link
from hfcprov.sim.loss import make_loss
from hfcprov.sim.scenario import TIMERS, TcpOptions
from hfcprov.sim.tcp import TcpReceiver, TcpSender

MODES = ("direct", "store", "buffer")


class ProxyError(HfcprovError, ValueError):
    """A split-connection scenario is inconsistent."""


def cohen_ramanathan_tcp(**kw) -> TcpOptions:
    """The paper's hosts: Reno, 536 B segments, 8 KB socket buffers, delayed ACKs, 500 ms timer."""
    gran, min_rto = TIMERS["coarse"]
    base = {"variant": "reno", "mss": 536, "header_bytes": 40, "initial_window": 1, "socket_buffer": 8192,
            "timer_granularity": gran, "min_rto": min_rto, "initial_rto": 3.0, "delayed_ack": True}
    base.update(kw)
    return TcpOptions(**base)


def hfc_tuned(opts: TcpOptions) -> TcpOptions:
    """Cohen-Ramanathan's HFC tunings: 200 ms timer and retransmit on the first duplicate ACK."""
    gran, min_rto = TIMERS["200ms"]
    return dataclasses.replace(opts, timer_granularity=gran, min_rto=min_rto, dupthresh=1)


@dataclass
class ProxyScenario:
    mode: str = "store"  # direct | store | buffer
    size: int = 3_000_000  # bytes transferred from the remote server to the PC
    local_rtt: float = 0.020  # proxy <-> PC over the HFC network
    remote_rtt: float = 0.100  # server <-> proxy over the Internet
    local_rate: float = 25e6  # HFC downstream
    remote_rate: float = 45e6  # T3 to the Internet
    local_loss: float = 0.0  # fraction of data packets lost on the HFC downstream
    remote_loss: float = 0.0  # fraction lost on the Internet path
    proxy_buffer: int = 8192  # the proxy's receive socket buffer on the remote side (its window)
    tcp: TcpOptions = field(default_factory=cohen_ramanathan_tcp)  # the PC and the remote server
    tuned: bool = False  # HFC tunings on the proxy's local sender
    proxy_delack: bool = False  # delayed ACKs on the proxy's remote-side receiver
    time_limit: float = 600.0  # s of simulated time before giving up
    seed: int = 1


class _Tap:
    """Delivers to a TCP receiver, then tells the proxy how far in-order data has come."""

    __slots__ = ("on_progress", "receiver")

    def __init__(self, receiver, on_progress) -> None:
        self.receiver = receiver
        self.on_progress = on_progress

    def receive(self, pkt) -> None:
        before = self.receiver.rcv_nxt
        self.receiver.receive(pkt)
        if self.receiver.rcv_nxt != before:
            self.on_progress()


class _AckTap:
    """Delivers ACKs to a sender, then lets the proxy react (buffer space freed)."""

    __slots__ = ("on_ack", "sender")

    def __init__(self, sender, on_ack) -> None:
        self.sender = sender
        self.on_ack = on_ack

    def receive(self, pkt) -> None:
        self.sender.receive(pkt)
        self.on_ack()


class ProxyPath:
    """The built network for one ``ProxyScenario``; kept so tests can look inside."""

    def __init__(self, ps: ProxyScenario) -> None:
        if ps.mode not in MODES:
            raise ProxyError(f"mode: {ps.mode!r} is not one of {', '.join(MODES)}")
        if ps.size <= 0:
            raise ProxyError("size: must be > 0 bytes")
        for name in ("local_loss", "remote_loss"):
            if not 0 <= getattr(ps, name) < 1:
                raise ProxyError(f"{name}: must be a fraction in [0, 1)")
        if ps.mode == "buffer" and ps.proxy_buffer < ps.tcp.mss + ps.tcp.header_bytes:
            raise ProxyError(f"proxy_buffer: {ps.proxy_buffer} bytes cannot hold one segment")
        self.ps = ps
        self.engine = eng = Engine()
        rng = random.Random(ps.seed)
        local_loss = make_loss("bernoulli", ps.local_loss, 1.0, random.Random(rng.getrandbits(64)))
        remote_loss = make_loss("bernoulli", ps.remote_loss, 1.0, random.Random(rng.getrandbits(64)))
        opts = ps.tcp
        mss = opts.mss
        if ps.mode == "direct":
            # server -> Internet -> headend -> HFC -> PC; ACKs back the same way, lossless.
            self.receiver = TcpReceiver(eng, 0, None, opts)
            hfc = Link(eng, self.receiver, capacity=ps.local_rate, delay=ps.local_rtt / 2,
                       loss=local_loss, name="hfc")
            internet = Link(eng, hfc, capacity=ps.remote_rate, delay=ps.remote_rtt / 2,
                            loss=remote_loss, name="internet")
            self.sender = TcpSender(eng, 0, internet, opts, congestion_control(opts.variant, opts), ps.size)
            self.receiver.link = Link(eng, self.sender, capacity=ps.remote_rate,
                                      delay=(ps.local_rtt + ps.remote_rtt) / 2, name="acks")
            self.remote = self.local = None
            eng.at(0.0, self.sender.start)
            return
        # Remote connection: server -> proxy.
        ropts = dataclasses.replace(opts, delayed_ack=ps.proxy_delack)
        self.remote_receiver = TcpReceiver(eng, 0, None, ropts)
        self.remote_link = Link(eng, _Tap(self.remote_receiver, self._arrived), capacity=ps.remote_rate,
                                delay=ps.remote_rtt / 2, loss=remote_loss, name="internet")
        self.remote = TcpSender(eng, 0, self.remote_link, opts, congestion_control(opts.variant, opts), ps.size)
        self.remote_receiver.link = Link(eng, self.remote, capacity=ps.remote_rate,
                                         delay=ps.remote_rtt / 2, name="internet-acks")
        # Local connection: proxy -> PC.
        lopts = hfc_tuned(opts) if ps.tuned else opts
        self.receiver = TcpReceiver(eng, 0, None, opts)  # the PC keeps its own stack
        self.local_link = Link(eng, self.receiver, capacity=ps.local_rate, delay=ps.local_rtt / 2,
                               loss=local_loss, name="hfc")
        # The proxy's local sender can only send what the remote side has delivered.
        self.local = TcpSender(eng, 0, self.local_link, lopts, congestion_control(lopts.variant, lopts), ps.size)
        self.local.supply(0)
        self.receiver.link = Link(eng, _AckTap(self.local, self._local_acked), capacity=ps.local_rate,
                                  delay=ps.local_rtt / 2, name="hfc-acks")
        self.sender = self.local
        # The proxy's receive socket buffer for the remote side is the remote connection's window
        # (Cohen-Ramanathan section 4.3: 8 KB, or 32 KB); store-and-forward drains it at once.
        self.buffer_segments = max(1, ps.proxy_buffer // mss)
        self.remote.rwnd = self.buffer_segments
        eng.at(0.0, self.remote.start)

    # -- the proxy's relay -------------------------------------------------
    def _arrived(self) -> None:
        local = self.local
        local.supply(self.remote_receiver.rcv_nxt)
        if local.started is None:
            local.start()
        if self.ps.mode == "buffer":
            self._advertise()

    def _local_acked(self) -> None:
        if self.ps.mode == "buffer":
            self._advertise()

    def _advertise(self) -> None:
        """Buffer-and-forward: the remote window is the proxy buffer not holding unsent data.

        The new window reaches the server with the next ACK, half a remote RTT later.
        """
        held = self.remote_receiver.rcv_nxt - self.local.nxt
        free = max(0, self.buffer_segments - held)
        self.engine.after(self.ps.remote_rtt / 2, self._window_update, free)

    def _window_update(self, free: int) -> None:
        r = self.remote
        opened = free > r.rwnd
        r.rwnd = free
        if opened and r.done_at is None:
            r.try_send()

    # -- running -----------------------------------------------------------
    def done(self) -> bool:
        return self.receiver.rcv_nxt * self.ps.tcp.mss >= self.ps.size

    def run(self) -> RunResult:
        eng = self.engine
        step = 1.0
        while not self.done() and eng.now < self.ps.time_limit:
            eng.run(eng.now + step)
        return self.result()

    def result(self) -> RunResult:
        ps = self.ps
        finished = self.done()
        t = self.sender.done_at if (finished and self.sender.done_at) else self.engine.now
        goodput = ps.size * 8 / t if finished and t > 0 else self.receiver.rcv_nxt * ps.tcp.mss * 8 / max(t, 1e-9)
        flows = []
        for s in (self.remote, self.local) if self.remote is not None else (self.sender,):
            flows.append(FlowResult(goodput_bps=goodput, bytes_delivered=min(ps.size, s.una * ps.tcp.mss),
                                    retransmissions=s.retransmissions, timeouts=s.timeouts,
                                    completion_time=(s.done_at if s.done_at is not None else None)))
        return RunResult(source="sim", duration=t, goodput_bps=goodput, flows=flows,
                         extra={"mode": ps.mode, "finished": finished, "events": self.engine.events,
                                "tuned": ps.tuned, "local_loss": ps.local_loss, "remote_loss": ps.remote_loss})


def run_proxy(ps: ProxyScenario) -> RunResult:
    """Simulate one remote transfer; ``goodput_bps`` is size / completion time at the PC's end."""
    return ProxyPath(ps).run()
