"""TCP congestion control: the window-growth half of TCP, behind one small interface.

The sender (``hfcprov.sim.tcp.TcpSender``, with its ``hfcprov.sim.recovery`` strategy)
owns loss detection and recovery (Reno, NewReno or SACK, RTO); a ``CongestionControl`` only decides how
``cwnd`` grows and where ``ssthresh`` goes after a loss. CUBIC and FAST (issue 7)
are separate classes registered in ``CONGESTION_CONTROLS``; they never touch the
link or the recovery code.

Interface (all sizes in bytes, ``s`` is the ``TcpSender``; read ``s.cwnd``,
``s.ssthresh``, ``s.mss``, ``s.srtt``, ``s.min_rtt``, ``s.engine.now``; write ``s.cwnd``):

- ``on_ack(s, acked, rtt)``: ``acked`` new segments were cumulatively acknowledged
  outside recovery; ``rtt`` is this ACK's RTT sample in seconds or None (Karn).
- ``ssthresh(s) -> float``: the new ssthresh on entering fast recovery or on RTO.
- ``on_recovery_exit(s)``: recovery ended (full ACK); default sets cwnd = ssthresh.
- ``on_timeout(s)``: after an RTO has set ``ssthresh`` and ``cwnd = loss window``.
- ``ecn`` (class flag) and ``on_ce(s, marked)``: a congestion control with ``ecn = True`` sends
  its data ECN-capable (ECT(1)) and is told, before each ACK is processed, how many more of its
  segments arrived CE-marked (``hfcprov.sim.aqm.ecn`` wires it; L4S Prague uses it). The default
  ignores marks: a control without ECN never receives any, since its data leave Not-ECT.
"""

from __future__ import annotations

from hfcprov.sim.registry import resolve
from hfcprov.sim.scenario import TcpOptions


def with_defaults(options: TcpOptions | None) -> TcpOptions:
    """``options``, or a control made without any gets ``TcpOptions``' own defaults (never a copy of them)."""
    return TcpOptions() if options is None else options


class CongestionControl:
    name = "base"
    ecn = False  # True: ECT(1) data, CE marks echoed to on_ce (hfcprov.sim.aqm.ecn)

    def __init__(self, options: TcpOptions | None = None) -> None:
        self.options = with_defaults(options)

    def on_ack(self, s, acked: int, rtt: float | None) -> None:
        raise NotImplementedError

    def ssthresh(self, s) -> float:
        raise NotImplementedError

    def on_recovery_exit(self, s) -> None:
        s.cwnd = s.ssthresh

    def on_timeout(self, s) -> None:
        pass

    def on_ce(self, s, marked: int) -> None:
        """``marked`` more of this flow's segments arrived CE-marked (``ecn = True`` controls only)."""


class Reno(CongestionControl):
    """Slow start (one MSS per ACK, as BSD and ns-3 do: no byte counting), then
    congestion avoidance (MSS*MSS/cwnd per ACK); halve the flight on loss.
    ``TcpOptions.count_acked``: grow by the segments each ACK covers instead, as Linux does."""

    name = "reno"

    def __init__(self, options=None) -> None:
        super().__init__(options)
        options = self.options
        self.whole_bytes = bool(options.integer_cwnd)
        self.count_acked = bool(options.count_acked)
        self.halve_cwnd = options.ssthresh_from == "cwnd"

    def on_ack(self, s, acked: int, rtt: float | None) -> None:
        mss = s.mss
        if self.count_acked:
            # Linux tcp_reno_cong_avoid: slow start adds the segments ACKed up to ssthresh
            # (tcp_slow_start), the rest go to congestion avoidance, 1/cwnd each (tcp_cong_avoid_ai)
            if s.cwnd < s.ssthresh:
                room = s.ssthresh - s.cwnd
                if acked * mss <= room:
                    s.cwnd += acked * mss
                    return
                s.cwnd = s.ssthresh
                acked -= room / mss
            s.cwnd += acked * mss * mss / s.cwnd
            return
        if s.cwnd < s.ssthresh:
            s.cwnd += mss
        elif self.whole_bytes:  # an integer cwnd drops the fraction (ns-3: uint32)
            step = int(mss * mss / s.cwnd)
            s.cwnd += step if step > 1 else 1  # noqa: FURB136 (every ACK: cheaper than max())
        else:
            step = mss * mss / s.cwnd
            s.cwnd += step if step > 1.0 else 1.0  # noqa: FURB136 (every ACK: cheaper than max())

    def ssthresh(self, s) -> float:
        """Half of what the recovery strategy says is in flight (RFC 5681 eq. 4), but never above cwnd: a loss
        does not raise the window. With SACK, FlightSize counts what the receiver already holds, so a recovery
        entered as the last one ends (much SACKed above a hole) would otherwise set ssthresh above cwnd and,
        chained, grow the window without bound (Linux halves cwnd; ns-3 the pipe). ``ssthresh_from: cwnd``:
        half of cwnd, as Linux's tcp_reno_ssthresh and ns-3's TcpLinuxReno (and TcpDctcp at alpha 1)."""
        if self.halve_cwnd:
            return max(s.cwnd / 2.0, 2.0 * s.mss)
        half = s.flight_bytes() / 2.0
        if half > s.cwnd:  # noqa: PLR1730
            half = s.cwnd
        return max(half, 2.0 * s.mss)


# name -> class or "module:Class" (loaded on first use, so issue-7 modules stay optional)
CONGESTION_CONTROLS: dict[str, object] = {
    "reno": Reno,
    "newreno": Reno,  # NewReno differs in recovery, not in window growth
    "sack": Reno,
    "cubic": "hfcprov.sim.tcp_cubic:cubic",  # Cubic, LinuxCubic or Ns3Cubic: TcpOptions.cubic_arithmetic
    "fast": "hfcprov.sim.tcp_fast:Fast",
    "prague": "hfcprov.sim.tcp_prague:Prague",  # L4S: reacts to ECN marks (issue 20)
    "unresponsive": "hfcprov.sim.tcp_prague:Unresponsive",  # ECT(1), ignores congestion (issue 20)
}


def congestion_control(name: str, options=None) -> CongestionControl:
    if name not in CONGESTION_CONTROLS:
        raise KeyError(f"unknown TCP variant {name!r} (known: {', '.join(sorted(CONGESTION_CONTROLS))})")
    return resolve(CONGESTION_CONTROLS, name)(options)
