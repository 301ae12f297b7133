"""CUBIC congestion control (RFC 9438), the Linux default since 2.6.19.

Windows are in segments (floats). The pure functions are the RFC's equations;
``CubicWindow`` keeps the per-connection state between ACKs; ``Cubic`` plugs it
into the simulator's TCP sender (``hfcprov.sim.cc`` interface, windows in bytes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hfcprov.sim.cc import CongestionControl, with_defaults
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
        options = self.options
        self.w = CubicWindow(floor_until_loss=bool(options.cubic_linux_floor))
        self.hs = make_hystart(options.hystart, options.hystart_rounds)

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


class LinuxCubic(Cubic):
    """CUBIC as Linux computes it (``tcp_cubic.c``; ``TcpOptions.cubic_arithmetic: linux``): the same curve and
    Reno-friendly region as RFC 9438, in the kernel's integer arithmetic, which grows measurably
    slower where losses come often (the Reno-friendly region, short RTTs):

    - cwnd in whole segments, grown by ``tcp_cong_avoid_ai``: one segment per ``cnt`` segments
      acked (a credit counter, reset at each reduction), ``cnt`` at least 2 (1.5x per RTT);
    - ``cnt`` is recomputed at most once per kernel tick, and not at all while cwnd is unchanged
      for up to HZ/32 ticks (28 ms at HZ 250): in between, the last ``cnt`` holds;
    - the Reno-friendly estimate counts whole segments (one per cwnd * 15/8 acked, the integer
      form of 3(1 - beta)/(1 + beta)) and only caps ``cnt`` at cwnd / (estimate - cwnd), so cwnd
      follows it a step behind instead of jumping to it;
    - time in ticks of 1/HZ plus the minimum RTT, scaled by 2^10; K from the integer cube root;
      beta 717/1024; the 5%-per-RTT floor until the first loss (``cubic_linux_floor``) always.

    At 50 Mb/s, 20 ms, 1% random loss these give 5.8 Mb/s where the exact arithmetic gives 6.5;
    kernel CUBIC through the emulated modem gave 5.7-5.8 (docs/sim.md, "Plant loss").
    """

    name = "cubic"
    BETA = 717  # of BETA_SCALE
    BETA_SCALE = 1024
    CUBE_SCALE = 410  # bic_scale 41 * 10
    TIME_SHIFT = 10  # BICTCP_HZ: time in 2^-10 s
    CUBE_FACTOR = (1 << (10 + 3 * TIME_SHIFT)) // CUBE_SCALE
    FRIENDLY = 8 * (BETA_SCALE + BETA) // 3 // (BETA_SCALE - BETA)  # beta_scale: 15, in eighths of cwnd

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.hz = int(self.options.kernel_hz)
        self.credit = 0  # snd_cwnd_cnt: segments acked towards the next +1
        self._reset()

    def _reset(self) -> None:
        """bictcp_reset: the state a new connection or an RTO starts from."""
        self.cnt = 0
        self.last_max = 0  # last_max_cwnd, segments; 0 until the first loss
        self.last_cwnd = 0
        self.last_time = 0
        self.origin = 0
        self.k = 0  # 2^-10 s
        self.epoch = None  # tick the epoch began; None: a new one starts at the next ACK
        self.ack_cnt = 0
        self.tcp_cwnd = 0  # the Reno-friendly estimate, whole segments

    def _update(self, cwnd: int, acked: int, now: float, min_rtt: float | None) -> None:
        """bictcp_update: ``cnt``, the segments acked per +1 segment, for window ``cwnd``."""
        self.ack_cnt += acked
        tick = int(now * self.hz)
        if self.last_cwnd == cwnd and tick - self.last_time <= self.hz // 32:
            return
        if self.epoch is None or tick != self.last_time:
            self.last_cwnd = cwnd
            self.last_time = tick
            if self.epoch is None:
                self.epoch = tick
                self.ack_cnt = acked
                self.tcp_cwnd = cwnd
                if self.last_max <= cwnd:
                    self.k = 0
                    self.origin = cwnd
                else:
                    self.k = int(round((self.CUBE_FACTOR * (self.last_max - cwnd)) ** (1.0 / 3.0)))
                    self.origin = self.last_max
            t = tick - self.epoch + (math.ceil(min_rtt * self.hz) if min_rtt else 0)
            t = (t << self.TIME_SHIFT) // self.hz
            offs = t - self.k if t >= self.k else self.k - t
            delta = (self.CUBE_SCALE * offs ** 3) >> (10 + 3 * self.TIME_SHIFT)
            target = self.origin - delta if t < self.k else self.origin + delta
            self.cnt = cwnd // (target - cwnd) if target > cwnd else 100 * cwnd
            if self.last_max == 0 and self.cnt > 20:
                self.cnt = 20  # "increase cwnd 5% per RTT" until the first loss
        self._friendly_cap(cwnd)

    def _friendly_cap(self, cwnd: int) -> None:
        """The whole-segment Reno-friendly estimate (grown one segment per ``cwnd * FRIENDLY / 8``
        segments acked) caps ``cnt`` where it is ahead; ``cnt`` at least 2."""
        step = (cwnd * self.FRIENDLY) >> 3
        while self.ack_cnt > step:
            self.ack_cnt -= step
            self.tcp_cwnd += 1
        if self.tcp_cwnd > cwnd:
            cap = cwnd // (self.tcp_cwnd - cwnd)
            if self.cnt > cap:
                self.cnt = cap
        if self.cnt < 2:
            self.cnt = 2

    def on_ack(self, s, acked: int, rtt: float | None) -> None:
        mss = s.mss
        if self.hs is not None and s.cwnd < s.ssthresh:
            self.hs.growth(s, float(acked), rtt)  # may end slow start: ssthresh = cwnd
        cwnd = int(s.cwnd // mss)
        ssthresh = s.ssthresh / mss
        if cwnd < ssthresh:  # tcp_slow_start: up to ssthresh, the rest in congestion avoidance
            grown = cwnd + acked
            if grown > ssthresh:
                grown = int(ssthresh)
            acked -= grown - cwnd
            cwnd = grown
            if acked <= 0:
                s.cwnd = float(cwnd * mss)
                return
        self._update(cwnd, acked, s.engine.now, s.min_rtt)
        cnt = self.cnt
        if self.credit >= cnt:  # tcp_cong_avoid_ai: credit earned at a larger cnt, spent gently
            self.credit = 0
            cwnd += 1
        self.credit += acked
        if self.credit >= cnt:
            steps = self.credit // cnt
            self.credit -= steps * cnt
            cwnd += steps
        s.cwnd = float(cwnd * mss)

    def ssthresh(self, s) -> float:
        """bictcp_recalc_ssthresh: remember W_max (fast convergence), cut to 717/1024."""
        cwnd = int(s.cwnd // s.mss)
        self.epoch = None
        self.credit = 0
        if cwnd < self.last_max:
            self.last_max = cwnd * (self.BETA_SCALE + self.BETA) // (2 * self.BETA_SCALE)
        else:
            self.last_max = cwnd
        return float(max(cwnd * self.BETA // self.BETA_SCALE, 2) * s.mss)

    def on_timeout(self, s) -> None:
        self._reset()  # Linux: entering Loss resets CUBIC (last_max_cwnd 0: the 5% floor again)
        self.credit = 0
        if isinstance(self.hs, LinuxHyStart):
            self.hs.reset()


def cubic(options=None) -> Cubic:
    """``CONGESTION_CONTROLS["cubic"]``: RFC 9438's arithmetic, Linux's or ns-3's (``TcpOptions.cubic_arithmetic``)."""
    options = with_defaults(options)
    return {"linux": LinuxCubic, "ns3": Ns3Cubic}.get(options.cubic_arithmetic, Cubic)(options)


class Ns3Cubic(LinuxCubic):
    """CUBIC as ns-3 3.44's TcpCubic computes it: a port of the kernel's (whole segments, the
    whole-segment Reno-friendly estimate capping ``cnt``) on ns-3's exact clock: no tick, no HZ/32
    hold, K and the curve in seconds as doubles, and one segment at most per ACK once ``cnt``
    segments are acked (TcpOptions.cubic_arithmetic: ns3). At 50 Mb/s, 20 ms, 1% random loss (ns-3 host
    options) it gives 6.7 Mb/s where RFC 9438's gives 7.2; ns-3 5.5-6.8 (bench/sim.py --loss)."""

    def _update(self, cwnd: int, acked: int, now: float, min_rtt: float | None) -> None:
        self.ack_cnt += acked
        if self.epoch is None:
            self.epoch = now
            self.ack_cnt = acked
            self.tcp_cwnd = cwnd
            if self.last_max <= cwnd:
                self.k = 0.0
                self.origin = cwnd
            else:
                self.k = ((self.last_max - cwnd) / C) ** (1.0 / 3.0)
                self.origin = self.last_max
        t = now + (min_rtt or 0.0) - self.epoch
        if t < self.k:
            target = self.origin - int(C * (self.k - t) ** 3)
        else:
            target = self.origin + int(C * (t - self.k) ** 3)
        self.cnt = cwnd // (target - cwnd) if target > cwnd else 100 * cwnd
        if self.last_max == 0 and self.cnt > 20:
            self.cnt = 20  # ns-3's CntClamp
        self._friendly_cap(cwnd)

    def on_ack(self, s, acked: int, rtt: float | None) -> None:
        mss = s.mss
        if self.hs is not None and s.cwnd < s.ssthresh:
            self.hs.growth(s, float(acked), rtt)
        if s.cwnd < s.ssthresh:  # ns-3: one segment per ACK in slow start
            s.cwnd += mss
            acked -= 1
            if acked <= 0 or s.cwnd < s.ssthresh:
                return
        cwnd = int(s.cwnd // mss)
        self.credit += acked
        self._update(cwnd, acked, s.engine.now, s.min_rtt)
        if self.credit >= self.cnt:
            s.cwnd += mss
            self.credit -= self.cnt
