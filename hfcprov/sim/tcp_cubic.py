"""CUBIC congestion control (RFC 9438), the Linux default since 2.6.19.

Windows are in segments (floats). The pure functions are the RFC's equations;
``CubicWindow`` keeps the per-connection state between ACKs; ``Cubic`` plugs it
into the simulator's TCP sender (``hfcprov.sim.cc`` interface, windows in bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

from hfcprov.sim.cc import CongestionControl
from hfcprov.sim.hystart import LinuxHyStart, make_hystart

C = 0.4  # RFC 9438 section 5.1: scaling constant, segments/s^3
BETA = 0.7  # multiplicative decrease factor
ALPHA_RENO = 3 * (1 - BETA) / (1 + BETA)  # Reno-friendly additive increase, ~0.53


def cubic_k(w_max: float, cwnd_epoch: float) -> float:
    """K (s): time for W_cubic to climb from cwnd_epoch back to w_max (RFC 9438 eq. 2)."""
    gap = max(0.0, w_max - cwnd_epoch)
    return (gap / C) ** (1.0 / 3.0)


def w_cubic(t: float, w_max: float, k: float) -> float:
    """W_cubic(t) = C (t - K)^3 + W_max (RFC 9438 eq. 1); t seconds since the epoch began."""
    return C * (t - k) ** 3 + w_max


def target(cwnd: float, t: float, rtt: float, w_max: float, k: float) -> float:
    """The window to reach one RTT from now, clamped to [cwnd, 1.5 cwnd] (RFC 9438 4.2)."""
    return min(max(w_cubic(t + rtt, w_max, k), cwnd), 1.5 * cwnd)


@dataclass
class CubicWindow:
    """Per-connection CUBIC state; ``cwnd`` and ``ssthresh`` in segments."""

    cwnd: float = 10.0
    ssthresh: float = float("inf")
    fast_convergence: bool = True
    w_max: float = 0.0
    k: float = 0.0
    epoch_start: float | None = None
    w_est: float = 0.0  # Reno-friendly estimate
    # Linux (bictcp_update caps cnt at 20 while last_max_cwnd is 0): until a loss, congestion
    # avoidance grows at least acked/20 per ACK, 5% per RTT (TcpOptions.cubic_linux_floor)
    floor_until_loss: bool = False
    loss_seen: bool = False

    def on_ack(self, now: float, acked: float, rtt: float) -> None:
        """``acked`` newly acknowledged segments at time ``now``; ``rtt`` the smoothed RTT."""
        if self.cwnd < self.ssthresh:
            # slow start up to ssthresh, the rest of the ACK in congestion avoidance (Linux
            # tcp_slow_start): a cumulative ACK that leaps a repaired hole must not add its
            # whole span to the window (it once took cwnd from 50 to 1555 segments)
            room = self.ssthresh - self.cwnd
            if acked <= room:
                self.cwnd += acked
                return
            self.cwnd = self.ssthresh
            acked -= room
        if self.epoch_start is None:
            self.epoch_start = now
            if self.cwnd < self.w_max:
                self.k = cubic_k(self.w_max, self.cwnd)
            else:
                self.k = 0.0
                self.w_max = self.cwnd
            self.w_est = self.cwnd
        # w_cubic() and target() inlined (every ACK), same arithmetic
        t = now - self.epoch_start
        cwnd = self.cwnd
        self.w_est += ALPHA_RENO * acked / cwnd
        w_max, k = self.w_max, self.k
        if self.w_est > C * (t - k) ** 3 + w_max:  # Reno-friendly region (RFC 9438 4.3)
            if self.w_est > cwnd:
                self.cwnd = self.w_est
        else:  # the window one RTT from now, clamped to [cwnd, 1.5 cwnd] (RFC 9438 4.2)
            goal = C * (t + rtt - k) ** 3 + w_max
            if goal < cwnd:  # noqa: PLR1730
                goal = cwnd
            if goal > 1.5 * cwnd:  # noqa: PLR1730
                goal = 1.5 * cwnd
            self.cwnd = cwnd + (goal - cwnd) * acked / cwnd
        if self.floor_until_loss and not self.loss_seen and self.cwnd < cwnd + acked / 20.0:
            self.cwnd = cwnd + acked / 20.0

    def on_loss(self, now: float) -> None:
        """A loss detected by duplicate ACKs: remember W_max, cut by beta."""
        if self.fast_convergence and self.cwnd < self.w_max:
            self.w_max = self.cwnd * (1 + BETA) / 2  # RFC 9438 4.7
        else:
            self.w_max = self.cwnd
        self.cwnd = max(2.0, self.cwnd * BETA)
        self.ssthresh = self.cwnd
        self.epoch_start = None
        self.loss_seen = True

    def on_timeout(self, now: float) -> None:
        self.on_loss(now)
        self.cwnd = 1.0
        self.loss_seen = False  # Linux's bictcp_reset on entering Loss zeroes last_max_cwnd


class Cubic(CongestionControl):
    """CUBIC for ``hfcprov.sim.tcp.TcpSender`` (RFC 9438 with fast convergence), with the
    slow-start exit ``TcpOptions.hystart`` (default: Linux's HyStart, ``hfcprov.sim.hystart``)."""

    name = "cubic"

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.w = CubicWindow(floor_until_loss=bool(getattr(options, "cubic_linux_floor", False)))
        self.hs = make_hystart(getattr(options, "hystart", "auto"))

    def _sync(self, s) -> CubicWindow:
        w = self.w
        w.cwnd = s.cwnd / s.mss
        w.ssthresh = s.ssthresh / s.mss
        return w

    def on_ack(self, s, acked: int, rtt: float | None) -> None:
        grow = float(acked)
        if self.hs is not None and s.cwnd < s.ssthresh:
            grow = self.hs.growth(s, grow, rtt)  # may end slow start: ssthresh = cwnd
        w = self.w  # _sync, inlined (every ACK)
        mss = s.mss
        w.cwnd = s.cwnd / mss
        w.ssthresh = s.ssthresh / mss
        w.on_ack(s.engine.now, grow, s.srtt or rtt or 0.1)
        s.cwnd = w.cwnd * mss

    def ssthresh(self, s) -> float:
        w = self._sync(s)
        w.on_loss(s.engine.now)
        return max(w.cwnd * s.mss, 2.0 * s.mss)

    def on_timeout(self, s) -> None:
        self.w.epoch_start = None
        self.w.loss_seen = False  # Linux's bictcp_reset on entering Loss zeroes last_max_cwnd
        if isinstance(self.hs, LinuxHyStart):
            self.hs.reset()  # Linux: HyStart starts over in the slow start after an RTO
        else:
            self.hs = None  # RFC 9406 4.3: HyStart++ only in the initial slow start
