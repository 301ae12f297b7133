"""FAST TCP (Jin, Wei, Low 2004) with the window rule of Atov-Kennedy eq. 1.

    w(t+1) = floor( (w(t) + (d / D) w(t) + alpha) / 2 )

d is baseRTT, the minimum RTT the flow has seen; D the mean RTT over the last
update period. At equilibrium w (1 - d/D) = alpha: each flow keeps alpha of
its own packets queued. The floor is the integer arithmetic that Atov-Kennedy
show can cost up to two packets of alpha. A flow that joins while a queue
stands sees a larger d than the flows before it and takes an unfair share.

``FastWindow`` is the rule with its RTT bookkeeping, in segments; ``Fast`` plugs
it into the simulator's TCP sender (``hfcprov.sim.cc``); alpha comes from the
TCP options' ``fast_alpha`` (``TcpOptions.fast_alpha``, packets), default 20 as in the Caltech release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hfcprov.sim.cc import CongestionControl
from hfcprov.sim.scenario import TcpOptions

DEFAULT_ALPHA = TcpOptions.fast_alpha  # the Caltech release's 20 packets


def fast_window(w: float, base_rtt: float, avg_rtt: float, alpha: float, integer: bool = True) -> float:
    """One FAST update (Atov-Kennedy eq. 1), capped at doubling like the Caltech code."""
    if avg_rtt <= 0 or base_rtt <= 0:
        return w
    nxt = 0.5 * (w + (base_rtt / avg_rtt) * w + alpha)
    nxt = min(nxt, 2 * w)
    return float(math.floor(nxt)) if integer else nxt


def equilibrium_window(alpha: float, base_rtt: float, avg_rtt: float) -> float:
    """The window at which eq. 1 is a fixed point (without the floor)."""
    q = avg_rtt - base_rtt
    return math.inf if q <= 0 else alpha * avg_rtt / q


@dataclass
class FastWindow:
    """Per-connection FAST state; windows in segments. Updated once per RTT."""

    alpha: float = DEFAULT_ALPHA
    cwnd: float = 2.0
    integer: bool = True
    base_rtt: float = math.inf
    _rtt_sum: float = 0.0
    _rtt_n: int = 0
    _next_update: float = 0.0
    ssthresh: float = math.inf

    def on_ack(self, now: float, acked: float, rtt_sample: float) -> None:
        if rtt_sample > 0:
            self.base_rtt = min(self.base_rtt, rtt_sample)
            self._rtt_sum += rtt_sample
            self._rtt_n += 1
        if now < self._next_update or not self._rtt_n:
            return
        avg = self._rtt_sum / self._rtt_n
        self.cwnd = max(2.0, fast_window(self.cwnd, self.base_rtt, avg, self.alpha, self.integer))
        self._rtt_sum, self._rtt_n = 0.0, 0
        self._next_update = now + avg

    def on_loss(self, now: float) -> None:
        self.cwnd = max(2.0, self.cwnd / 2)  # FAST keeps Reno's halving on loss

    def on_timeout(self, now: float) -> None:
        self.cwnd = 2.0


class Fast(CongestionControl):
    """FAST TCP for ``hfcprov.sim.tcp.TcpSender``: eq. 1 once per RTT, Reno's halving on loss."""

    name = "fast"

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.w = FastWindow(alpha=DEFAULT_ALPHA if options is None else options.fast_alpha)

    def on_ack(self, s, acked: int, rtt: float | None) -> None:
        w = self.w
        w.cwnd = s.cwnd / s.mss
        w.on_ack(s.engine.now, float(acked), rtt or 0.0)
        s.cwnd = w.cwnd * s.mss

    def ssthresh(self, s) -> float:
        return max(s.cwnd / 2.0, 2.0 * s.mss)
