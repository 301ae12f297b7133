"""A scalable (L4S) congestion control: DCTCP's reaction to ECN marks (RFC 8257), as TCP Prague keeps it.

A classic TCP halves its window on a congestion signal, so it needs few, large
signals and a queue to absorb its sawtooth. A scalable one takes many small
signals: each round trip it measures the fraction ``F`` of its segments that
came back CE-marked, smooths it (``alpha <- (1 - g) alpha + g F``, g = 1/16) and,
once per round trip with any mark, cuts ``cwnd`` by ``alpha / 2``. With the
low-latency queue's immediate step/ramp marking this keeps about two marks per
round trip and a queue of well under a millisecond, at full rate.

Window growth is Reno's (one MSS per RTT; slow start until the first mark or
loss); a loss is still answered as Reno does (halve), as Prague does.
``ecn = True`` tells the simulator to send this flow's data as ECT(1) and echo
CE marks back (``hfcprov.sim.aqm.ecn``), which call ``on_ce``.
"""

from __future__ import annotations

from hfcprov.sim.cc import CongestionControl

G = 1.0 / 16  # EWMA gain of the marked fraction (RFC 8257 section 4.2)


class Prague(CongestionControl):
    name = "prague"
    ecn = True  # the sender marks its data ECT(1) and reacts to CE echoes

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.alpha = 1.0  # RFC 8257: start as if every segment had been marked
        self.acked = 0  # segments acknowledged in this observation window
        self.marked = 0  # of which CE-marked
        self.window_end = 0  # the window closes when this segment is acknowledged
        self.cwr_end = -1  # no second reduction until this segment is acknowledged
        self.reductions = 0

    def _window(self, s) -> None:
        if s.una >= self.window_end:
            if self.acked:
                frac = min(1.0, self.marked / self.acked)
                self.alpha += G * (frac - self.alpha)
            self.acked = self.marked = 0
            self.window_end = s.nxt

    def on_ack(self, s, acked: int, rtt: float | None) -> None:
        self.acked += acked
        self._window(s)
        mss = s.mss
        if s.cwnd < s.ssthresh:
            s.cwnd += mss * acked
        else:
            s.cwnd += mss * mss * acked / s.cwnd

    def on_ce(self, s, marked: int) -> None:
        """``marked`` more of this flow's segments arrived CE-marked (from the ACK's echo)."""
        self.marked += marked
        if s.una > self.cwr_end:
            self.reductions += 1
            s.cwnd = max(2.0 * s.mss, s.cwnd * (1.0 - self.alpha / 2.0))
            s.ssthresh = s.cwnd  # leaves slow start on the first mark
            self.cwr_end = s.nxt

    def ssthresh(self, s) -> float:
        return max(s.flight_bytes() / 2.0, 2.0 * s.mss)


class Unresponsive(CongestionControl):
    """A misbehaving low-latency sender: ECT(1) data, and no reaction to marks or losses.

    Its window opens as in slow start and never closes (a loss or an RTO leaves it as it
    was), so only the socket buffer limits it: the flow queue protection is there to
    catch (MULPI Annex P). For tests, benches and examples, not a model of a real stack.
    """

    name = "unresponsive"
    ecn = True

    def __init__(self, options=None) -> None:
        super().__init__(options)
        self.peak = 0.0

    def on_ack(self, s, acked: int, rtt: float | None) -> None:
        s.cwnd += s.mss * acked
        self.peak = max(self.peak, s.cwnd)

    def on_ce(self, s, marked: int) -> None:
        pass

    def ssthresh(self, s) -> float:
        return max(s.cwnd, self.peak)

    def on_recovery_exit(self, s) -> None:
        s.cwnd = max(s.cwnd, self.peak)

    def on_timeout(self, s) -> None:
        s.cwnd = max(s.cwnd, self.peak)
