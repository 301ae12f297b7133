"""Loss recovery strategies: what a TCP sender does from a detected loss to the ACK that repairs it.

As ns-3 splits ``TcpRecoveryOps`` out of its socket, ``tcp.TcpSender`` keeps the
sequence space, the RTO and the window; one ``Recovery`` per sender, chosen by
``TcpOptions.recovery`` from ``RECOVERIES``, decides the rest:

- ``Reno`` (RFC 5681 3.2): fast retransmit on the ``dupthresh``-th duplicate ACK,
  cwnd = ssthresh + dupthresh MSS, inflated by one MSS per duplicate ACK; the first
  ACK of new data ends recovery, a partial one included.
- ``NewReno`` (RFC 6582): as Reno, but a partial ACK resends the next hole and
  deflates the window; only a full ACK (above ``recover``) ends recovery.
- ``Sack`` (RFC 6675): a scoreboard of SACKed and lost segments; recovery starts
  on the ``dupthresh``-th duplicate ACK or once ``dupthresh`` segments above the
  hole are SACKed; cwnd = ssthresh, and while ``pipe`` (segments in the network)
  is below cwnd the sender sends NextSeg: lost segments first, then new data.
  A retransmission is deemed lost again once data sent after it is SACKed (Linux);
  the RTO deems every unSACKed segment lost and resends no SACKed one (5.1).

No strategy does Proportional Rate Reduction (RFC 6937); nor does the sender.

Interface (``s`` the sender; segments are indices, windows bytes):

- class flags read on the hot path: ``sack`` (wants the ACKs' SACK blocks),
  ``inflate`` (cwnd += MSS per duplicate ACK in recovery), ``uses_pipe`` (in
  recovery, ``send`` decides what leaves); attributes ``lost_n`` (segments deemed
  lost, not yet resent: the sender lets ``send`` resend them first) and ``holding``
  (scoreboard state to forget on a cumulative ACK: ``on_advance``);
- ``should_enter(s, ack)``: enter fast recovery now? ``enter(s)``: resend the first
  hole and set cwnd (the sender has set ssthresh, ``recover`` and ``in_rec``);
  ``on_partial_ack(s, ack, acked) -> bool``: an ACK at or below ``recover``; True
  ends recovery;
- ``send(s)``: transmit while in recovery or with segments deemed lost (it books its own
  resends and has the sender's ``_retransmit`` send them); ``on_resend(s, i)``: book segment
  ``i``, which the sender resends now (the first hole, NewReno's next one, a go-back-N);
  ``on_timeout(s)``: the RTO fired (the sender has cut cwnd);
- ``flight_bytes(s)``: what a loss halves; ``lt_limit(s, wnd, limit)``: how far limited
  transmit may send; ``on_sack(s, blocks) -> new``, ``on_advance(s, ack)``, ``sacked()``.
"""

from __future__ import annotations

from collections import deque
from heapq import heappop, heappush

from hfcprov.sim.ranges import SegmentRanges
from hfcprov.sim.registry import resolve
from hfcprov.sim.scenario import ScenarioError

LOST = -1  # Sack.state: deemed lost, not yet resent (a value >= 0: resent, HighData then)


class Reno:
    """Also the interface's defaults: no SACK, no scoreboard."""

    name = "reno"
    sack = False
    inflate = True
    uses_pipe = False
    lost_n = 0
    holding = False

    def __init__(self, opts) -> None:
        self.opts = opts

    def should_enter(self, s, ack: int) -> bool:
        return s.dupacks == s.dupthresh  # Reno may start a new recovery below the last one's point

    def enter(self, s) -> None:
        s._tx(s.una)
        s.cwnd = s.ssthresh + s.dupthresh * s.mss

    def on_partial_ack(self, s, ack: int, acked: int) -> bool:
        return True  # Reno leaves recovery on the first ACK of new data

    def send(self, s) -> None:
        raise AssertionError("only uses_pipe strategies send in recovery")

    def on_resend(self, s, i: int) -> None:
        pass

    def on_timeout(self, s) -> None:
        s.nxt = s.una  # go back N

    def flight_bytes(self, s) -> float:
        """FlightSize without the segments limited transmit sent (RFC 5681 section 3.2)."""
        return (s.nxt - s.una - s.lt_sent) * s.mss

    def lt_limit(self, s, wnd: int, limit: int) -> int:
        """RFC 3042: one new segment per duplicate ACK beyond cwnd."""
        return limit + s.dupacks

    def on_sack(self, s, blocks) -> int:
        return 0

    def on_advance(self, s, ack: int) -> None:
        pass

    def sacked(self) -> int:
        return 0


class NewReno(Reno):
    name = "newreno"

    def should_enter(self, s, ack: int) -> bool:
        # RFC 6582: no new recovery before the last one's point is ACKed
        return s.dupacks == s.dupthresh and ack > s.recover

    def on_partial_ack(self, s, ack: int, acked: int) -> bool:
        s._tx(ack)  # the next hole
        s.cwnd = max(s.cwnd - acked * s.mss + s.mss, float(s.mss))  # deflate by what was ACKed
        return False


class Sack(Reno):
    """RFC 6675 with an ordered scoreboard kept incrementally, so an ACK costs the same at any window.

    ``sb`` the SACKed ranges; ``state`` per segment deemed lost: LOST (to resend) or, once resent,
    the HighData at the time (a retransmission in flight); ``lost_n`` LOST segments; every
    unSACKed segment below ``lost_mark`` (the dupthresh-th highest SACKed one) has been deemed
    lost (IsLost); no LOST segment lies below ``rtx_ptr``. The marks are kept only while
    ``holding`` (something SACKed or in ``state``); otherwise they sit at ``una``.
    """

    name = "sack"
    sack = True
    inflate = False
    uses_pipe = True

    def __init__(self, opts) -> None:
        super().__init__(opts)
        self.pipe_ssthresh = opts.ssthresh_from == "pipe"
        self.sb = SegmentRanges()
        self.state: dict = {}
        self.lost_n = 0
        self.holding = False
        self.lost_mark = 0
        self.rtx_ptr = 0
        self.high_sacked = -1
        # Retransmissions in send order with the HighData when sent: one whose later-sent
        # data is SACKed was lost again (Linux's lost-retransmit rule; FIFO path, no reordering).
        self.rtx_q: deque = deque()
        self.rtx_watch = opts.detect_lost_retransmit
        self.relost: list = []  # heap: resent segments lost again (they lie below rtx_ptr)
        self.lost_retransmits = 0
        self.last_blocks = ()  # the SACK blocks of the last ACK (all recorded)

    def sacked(self) -> int:
        return self.sb.count

    def _wake(self, una: int) -> None:
        """Scoreboard state appears after a spell without any: the marks start at ``una``."""
        self.holding = True
        self.lost_mark = self.rtx_ptr = una
        self.high_sacked = una - 1

    # -- entering and leaving ------------------------------------------------
    def should_enter(self, s, ack: int) -> bool:
        """The ``dupthresh``-th duplicate ACK, or ``dupthresh`` segments above the hole SACKed
        (RFC 6675 IsLost(HighACK + 1)); not before the last recovery's point is ACKed."""
        return (s.dupacks == s.dupthresh or self.sb.count >= s.dupthresh) and ack > s.recover

    def enter(self, s) -> None:
        s._tx(s.una)
        s.cwnd = s.ssthresh

    def on_partial_ack(self, s, ack: int, acked: int) -> bool:
        return False  # the scoreboard and pipe carry on

    def flight_bytes(self, s) -> float:
        """pipe in recovery (or always, ``ssthresh_from: pipe``), else FlightSize."""
        if (s.in_rec or self.pipe_ssthresh) and self.sb.count:
            return (s.nxt - s.una - self.sb.count - self.lost_n) * s.mss
        return (s.nxt - s.una - s.lt_sent) * s.mss

    def lt_limit(self, s, wnd: int, limit: int) -> int:
        """RFC 6675 section 5 step 3: new data on a duplicate ACK while pipe < cwnd."""
        return s.nxt + wnd - (s.nxt - s.una - self.sb.count - self.lost_n)

    # -- the scoreboard --------------------------------------------------------
    def on_sack(self, s, blocks) -> int:
        """Record SACK blocks; returns how many segments they SACK for the first time."""
        una = s.una
        if not self.holding:
            self._wake(una)
        sb = self.sb
        state = self.state
        last = self.last_blocks
        self.last_blocks = blocks
        new = 0
        for blk in blocks:
            if blk in last:
                continue  # the receiver repeats its lowest blocks on every ACK: held already
            b0, e = blk
            if e <= una:
                continue
            if b0 < una:  # noqa: PLR1730
                b0 = una
            k = sb.add_above(b0, e)
            if k >= 0:  # at or above the top range: the new segments are the last k of the block
                if k:
                    new += k
                    if state and (e - k < self.lost_mark or e - k <= una):
                        self._arrived(e - k, e)
            else:
                for a, b in sb.add(b0, e):
                    new += b - a
                    if state and (a < self.lost_mark or a <= una):
                        self._arrived(a, b)
            if e - 1 > self.high_sacked:  # noqa: PLR1730
                self.high_sacked = e - 1
        if new:
            lost_mark = self.lost_mark
            mark, holes = sb.mark_from_top(s.dupthresh, lost_mark if lost_mark > una else una)
            if mark is not None and mark > lost_mark:
                # RFC 6675 IsLost for the unSACKed segments below the new mark (each passes here once)
                for ga, gb in holes:
                    for i in range(ga, gb):
                        if i not in state:
                            state[i] = LOST
                            self.lost_n += 1
                self.lost_mark = mark
            q = self.rtx_q
            if q:
                hs = self.high_sacked
                while q and q[0][1] <= hs:  # data sent after this retransmission has arrived
                    i, high = q.popleft()
                    if state.get(i) == high:
                        state[i] = LOST
                        self.lost_n += 1
                        self.lost_retransmits += 1
                        if i < self.rtx_ptr:
                            heappush(self.relost, i)
        elif not (sb.count or state):
            self.holding = False
        return new

    def _arrived(self, a: int, b: int) -> None:
        """Segments ``[a, b)`` were SACKed: those deemed lost or resent arrived after all. (Only
        ``una`` and segments below ``lost_mark`` are ever in ``state``: new data SACKed at the
        top never is, so the caller skips this for it.)"""
        state = self.state
        for i in range(a, b):
            if state.pop(i, None) == LOST:
                self.lost_n -= 1

    def on_advance(self, s, ack: int) -> None:
        """The cumulative ACK moved from ``s.una`` to ``ack``: forget what lies below it."""
        if self.sb.count:
            self.sb.drop_below(ack)
        state = self.state
        if state:
            una = s.una
            below = [i for i in state if i < ack] if len(state) < ack - una else range(una, ack)
            for i in below:
                if state.pop(i, None) == LOST:
                    self.lost_n -= 1
        if self.lost_mark < ack:  # noqa: PLR1730
            self.lost_mark = ack
        if self.rtx_ptr < ack:  # noqa: PLR1730
            self.rtx_ptr = ack
        if self.high_sacked < ack:
            self.high_sacked = ack - 1
        if not (self.sb.count or state):
            self.holding = False

    def _next_lost(self) -> int:
        """The lowest segment deemed lost and not resent (RFC 6675 NextSeg rule 1); needs lost_n > 0."""
        state = self.state
        relost = self.relost
        while relost:
            i = heappop(relost)
            if state.get(i) == LOST:  # else ACKed, SACKed or resent since
                return i
        i = self.rtx_ptr
        while state.get(i) != LOST:
            i += 1
        self.rtx_ptr = i
        return i

    # -- sending -----------------------------------------------------------------
    def send(self, s) -> None:
        """While pipe < cwnd: lost segments first, then new data (RFC 6675 NextSeg)."""
        wnd = int(s.cwnd // s.mss) or 1
        pipe = s.nxt - s.una - self.sb.count - self.lost_n
        if pipe >= wnd:
            return
        limit = s.una + s.rwnd
        if limit > s.avail:  # noqa: PLR1730 (every ACK in recovery: cheaper than min())
            limit = s.avail
        tx = s._tx
        while pipe < wnd:
            if self.lost_n:  # on_resend inlined: the segment is LOST, so holding is on
                i = self._next_lost()
                self.lost_n -= 1
                self.state[i] = s.high
                if self.rtx_watch:
                    self.rtx_q.append((i, s.high))
                s._retransmit(i)
            elif s.nxt < limit:
                k = min(s._train_cap(), limit - s.nxt, wnd - pipe) if s.tso > 1 else 1
                if k > 1:
                    s._tx_train(s.nxt, k)
                    s.nxt += k
                    pipe += k
                    continue
                tx(s.nxt)
                s.nxt += 1
            else:
                break
            pipe += 1

    def on_resend(self, s, i: int) -> None:
        if not self.holding:
            self._wake(s.una)
        if self.state.get(i) == LOST:
            self.lost_n -= 1
        self.state[i] = s.high
        if self.rtx_watch:
            self.rtx_q.append((i, s.high))

    def on_timeout(self, s) -> None:
        """Everything unSACKed is deemed lost and resent in order, SACKed data is not
        (RFC 6675 section 5.1, Linux tcp_enter_loss); pipe then paces the resends."""
        if not self.holding:
            self._wake(s.una)
        state = self.state
        self.lost_n = 0
        state.clear()
        self.rtx_q.clear()
        for a, b in self.sb.gaps(s.una, s.high):
            for i in range(a, b):
                state[i] = LOST
            self.lost_n += b - a
        self.lost_mark = s.high
        self.rtx_ptr = s.una
        self.relost.clear()
        self.holding = bool(self.sb.count or state)


# name -> class or "module:Class" (hfcprov.sim.registry)
RECOVERIES: dict[str, object] = {"reno": Reno, "newreno": NewReno, "sack": Sack}


def recovery(name: str, opts):
    """A fresh recovery strategy ``RECOVERIES[name]`` for one sender."""
    if name not in RECOVERIES:
        raise ScenarioError(f"tcp.recovery: unknown recovery {name!r} (known: {', '.join(RECOVERIES)})")
    return resolve(RECOVERIES, name)(opts)
