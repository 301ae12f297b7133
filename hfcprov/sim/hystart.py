"""Leaving slow start before the buffer overflows: Linux CUBIC's HyStart and RFC 9406 HyStart++.

Standard slow start doubles the window each round until a loss, so a large buffer
is overshot by up to a window and the flow loses hundreds of segments at once.
Both algorithms watch RTT samples per round (a round ends when the ACK passes the
HighData of its start) and end slow start when the queue starts to build:

``LinuxHyStart`` (tcp_cubic.c, on by default in Linux: ``hystart_detect`` = ACK
train | delay): from a window of 16 segments, ssthresh = cwnd once
- the ACKs of a round arrive as a train (each within 2 ms of the last) for longer
  than half of (min RTT + the 1 ms ``hystart_ack_delay``), or
- the round's minimum RTT over at least 8 samples exceeds the flow's minimum RTT
  by clamp(min RTT / 8, 4 ms, 16 ms).
Where a round starts (``TcpOptions.hystart_rounds``): ``low_window`` counts rounds from the
first ACK at a window of 16 (Linux 6.6-6.13: ``cubictcp_acked`` checks the window before
``hystart_update`` resets the round), so a round can start mid-flight; ``always`` counts them
from the first ACK at any window (Linux 6.14 on, commit 25c1a9ca53db moving that check after
the reset; ns-3's ``TcpCubic::IncreaseWindow``), so each round starts with the ACK of the first
segment of a flight, the one that saw the least of the flight's own queue.

``HyStartPlusPlus`` (RFC 9406): the delay test between the minimum RTTs of
consecutive rounds (8 samples each, same clamp), then Conservative Slow Start
(growth / 4) for 5 rounds before congestion avoidance, back to slow start if the
RTT falls below the baseline again. Not paced, so L is unlimited.

Both are used by ``hfcprov.sim.tcp_cubic.Cubic`` (``TcpOptions.hystart``); windows in
bytes on the sender ``s`` (``s.cwnd``, ``s.ssthresh``, ``s.mss``, ``s.una``, ``s.nxt``).
"""

from __future__ import annotations

import math

DELAY_MIN = 0.004  # s: lower clamp of the delay threshold (both algorithms)
DELAY_MAX = 0.016  # s: upper clamp
MIN_SAMPLES = 8  # RTT samples in a round before its minimum is trusted


def delay_threshold(min_rtt: float) -> float:
    return min(max(min_rtt / 8.0, DELAY_MIN), DELAY_MAX)


HYSTART = ("auto", "off", "linux", "rfc9406")  # TcpOptions.hystart; the first is its default
HYSTART_ROUNDS = ("low_window", "always")  # TcpOptions.hystart_rounds; the first is its default


class LinuxHyStart:
    LOW_WINDOW = 16  # segments: below this, slow start runs unchecked (hystart_low_window)
    ACK_DELTA = 0.002  # s: ACKs closer than this form a train (hystart_ack_delta_us)
    ACK_DELAY = 0.001  # s: hystart_ack_delay's cap (GSO bursts), added to the train threshold

    __slots__ = ("ack_train", "all_rounds", "curr_rtt", "delay", "delay_min", "end_seq", "found", "last_ack",
                 "round_start", "sample_cnt")

    def __init__(self, ack_train: bool = True, delay: bool = True, rounds: str = HYSTART_ROUNDS[0]) -> None:
        self.ack_train = ack_train
        self.delay = delay
        self.all_rounds = rounds == "always"
        self.reset()

    def reset(self) -> None:
        """A retransmission timeout starts over (Linux bictcp_reset + bictcp_hystart_reset)."""
        self.found = False
        self.delay_min = math.inf
        self.end_seq = None
        self.curr_rtt = math.inf
        self.sample_cnt = 0
        self.round_start = self.last_ack = 0.0

    def _new_round(self, s, now: float) -> None:
        self.round_start = self.last_ack = now
        self.end_seq = s.nxt
        self.curr_rtt = math.inf
        self.sample_cnt = 0

    def growth(self, s, acked: float, rtt: float | None) -> float:
        """Segments slow start adds for this ACK (all of them); may end slow start (ssthresh = cwnd)."""
        if rtt is None:
            return acked
        self.delay_min = min(self.delay_min, rtt)
        if self.found:
            return acked
        below = s.cwnd < self.LOW_WINDOW * s.mss
        if below and not self.all_rounds:
            return acked
        now = s.engine.now
        if self.end_seq is None or s.una > self.end_seq:
            self._new_round(s, now)
        if below:  # rounds counted, nothing tested (Linux 6.14 on: hystart_update)
            return acked
        if self.ack_train and now - self.last_ack <= self.ACK_DELTA:
            self.last_ack = now
            if now - self.round_start > (self.delay_min + self.ACK_DELAY) / 2:
                self._exit(s)
        if self.delay:
            self.curr_rtt = min(self.curr_rtt, rtt)
            if self.sample_cnt < MIN_SAMPLES:
                self.sample_cnt += 1
            elif self.curr_rtt > self.delay_min + delay_threshold(self.delay_min):
                self._exit(s)
        return acked

    def _exit(self, s) -> None:
        self.found = True
        s.ssthresh = s.cwnd


class HyStartPlusPlus:
    CSS_GROWTH_DIVISOR = 4
    CSS_ROUNDS = 5

    __slots__ = ("css_baseline", "css_rounds", "current_min", "in_css", "last_min", "samples", "window_end")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.window_end = None
        self.last_min = math.inf
        self.current_min = math.inf
        self.samples = 0
        self.in_css = False
        self.css_baseline = math.inf
        self.css_rounds = 0

    def growth(self, s, acked: float, rtt: float | None) -> float:
        if self.window_end is None or s.una > self.window_end:  # a round ends: the next begins
            if self.window_end is not None and self.in_css:
                self.css_rounds += 1
                if self.css_rounds >= self.CSS_ROUNDS:  # section 4.3: on to congestion avoidance
                    s.ssthresh = s.cwnd
                    return 0.0
            self.window_end = s.nxt
            self.last_min = self.current_min
            self.current_min = math.inf
            self.samples = 0
        if rtt is not None:
            self.current_min = min(self.current_min, rtt)
            self.samples += 1
        if not self.in_css:
            if (self.samples >= MIN_SAMPLES and self.current_min < math.inf and self.last_min < math.inf
                    and self.current_min >= self.last_min + delay_threshold(self.last_min)):
                self.in_css = True
                self.css_baseline = self.current_min
                self.css_rounds = 0
            return acked if not self.in_css else acked / self.CSS_GROWTH_DIVISOR
        if self.samples >= MIN_SAMPLES and self.current_min < self.css_baseline:  # a spurious exit
            self.in_css = False
            self.css_baseline = math.inf
            return acked
        return acked / self.CSS_GROWTH_DIVISOR


def make_hystart(name: str, rounds: str = HYSTART_ROUNDS[0]):
    """``TcpOptions.hystart`` (and ``hystart_rounds``) -> the slow-start exit of a CUBIC flow (None:
    standard slow start)."""
    if name in ("auto", "linux"):
        return LinuxHyStart(rounds=rounds)
    if name == "rfc9406":
        return HyStartPlusPlus()
    return None
