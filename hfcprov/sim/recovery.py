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

- ``Prr``: RFC 6675 detection; what leaves in recovery is Proportional Rate Reduction
  (RFC 9937, the standard PRR that obsoletes RFC 6937).
- ``Rack``: RACK-TLP loss detection (RFC 8985) with PRR, as Linux runs it: a segment is lost
  once a later-sent one is delivered (after a reordering window, 0 once ``dupthresh`` are
  SACKed), and a tail loss probe 2 srtt after the last ACK instead of waiting for the RTO.

Interface (``s`` the sender; segments are indices, windows bytes):

- class flags read on the hot path: ``sack`` (wants the ACKs' SACK blocks),
  ``inflate`` (cwnd += MSS per duplicate ACK in recovery), ``uses_pipe`` (in
  recovery, ``send`` decides what leaves), ``tlp`` (the sender, a ``tcp.ProbingSender``, asks
  ``pto`` when it arms its timer and calls ``on_probe`` when a probe is due); attributes ``lost_n`` (segments deemed
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

import math
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
    tlp = False
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
                if holes:
                    self._lose(holes)
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

    def _lose(self, holes) -> None:
        """The unSACKed segments of ``holes`` (ranges) not already booked are deemed lost."""
        state = self.state
        for ga, gb in holes:
            for i in range(ga, gb):
                if i not in state:
                    state[i] = LOST
                    self.lost_n += 1

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
        if s.push and s.nxt < limit:  # the new data this call sends, as GSO packets (TcpOptions.push)
            room = wnd - pipe - self.lost_n
            if room > 0:
                s.push_packets(s.nxt, min(limit, s.nxt + room))
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


class Prr(Sack):
    """RFC 6675's scoreboard and loss detection; what leaves in recovery is Proportional Rate
    Reduction (RFC 9937, which obsoletes RFC 6937; Linux's tcp_cwnd_reduction since 3.2).

    Instead of dropping cwnd to ssthresh at once (and sending nothing until pipe falls below
    it), every ACK in recovery lets out data in proportion to what it delivered, so the flight
    shrinks smoothly to ssthresh over the recovery round trip (PRR's proportional part) and,
    once pipe is below ssthresh, grows back towards it no faster than slow start (the
    reduction bound: SSRB on an ACK that advances snd.una without indicating a further loss,
    CRB otherwise). Counted in segments: ``recover_fs`` the flight at the start (RecoverFS:
    outstanding minus SACKed), ``prr_delivered`` the segments delivered since, ``prr_out`` the
    segments sent since. Recovery ends with cwnd = ssthresh (the congestion control's exit).
    """

    name = "prr"

    def __init__(self, opts) -> None:
        super().__init__(opts)
        self.recover_fs = 1
        self.prr_delivered = self.prr_out = 0
        self.mark = 0  # una + SACKed at the last ACK PRR has counted (DeliveredData is its increase)
        self.una_seen = 0
        self.lost_seen = 0  # lost_n after the last send: more now means a further loss was indicated
        self.before = 0  # una + SACKed before the latest SACK was recorded (the ACK that starts recovery)
        self.fresh = False  # recovery has just started: its first ACK's delivered data is counted

    def on_sack(self, s, blocks) -> int:
        if not s.in_rec:
            self.before = s.una + self.sb.count
        return Sack.on_sack(self, s, blocks)

    def enter(self, s) -> None:
        """The ACK that starts recovery counts as delivered data; the first send is the
        retransmission of the first hole (RFC 6675 step 4.1: deemed lost if not yet)."""
        if not self.holding:
            self._wake(s.una)
        before = self.before
        self.recover_fs = max(s.nxt - before, 1)
        self.prr_delivered = self.prr_out = 0
        self.mark = before
        self.una_seen = s.una
        if s.una not in self.state:
            self.state[s.una] = LOST
            self.lost_n += 1
        self.lost_seen = self.lost_n
        self.fresh = True

    def send(self, s) -> None:
        if not s.in_rec:
            Sack.send(self, s)  # after an RTO: segments deemed lost go out under pipe in slow start
            return
        mss = s.mss
        una = s.una
        now = una + self.sb.count
        delivered = now - self.mark
        self.mark = now
        pipe = s.nxt - una - self.sb.count - self.lost_n
        if delivered > 0 or self.fresh:
            self.fresh = False
            self.prr_delivered += delivered
            ssthresh = s.ssthresh / mss
            if pipe > ssthresh:  # proportional: ssthresh/RecoverFS of what was delivered
                sndcnt = math.ceil(self.prr_delivered * ssthresh / self.recover_fs - 1e-9) - self.prr_out
            else:
                limit = self.prr_delivered - self.prr_out  # CRB
                if una > self.una_seen and self.lost_n <= self.lost_seen:  # a safe ACK: SSRB
                    limit = max(limit, delivered) + 1
                sndcnt = min(int(ssthresh) - pipe, limit)
            if sndcnt < 0:
                sndcnt = 0
            if self.prr_out == 0 and sndcnt == 0:
                sndcnt = 1  # the fast retransmit goes out whatever the arithmetic says
            s.cwnd = float((pipe + sndcnt) * mss)
        self.una_seen = una
        Sack.send(self, s)
        self.prr_out += (s.nxt - s.una - self.sb.count - self.lost_n) - pipe
        self.lost_seen = self.lost_n


class Rack(Prr):
    """RACK-TLP loss detection (RFC 8985), with PRR in recovery: what Linux runs (tcp_recovery 1,
    tcp_early_retrans 3, since 4.18).

    RACK deems a segment lost once a segment sent after it has been delivered and a reordering
    window has passed: the window is 0 in recovery or once ``dupthresh`` segments are SACKed
    (RFC 8985 6.2, no reordering seen), else a quarter of the minimum RTT (at most srtt), served by
    a timer. The simulated paths deliver in the order they send, so "sent after" is "above in
    sequence" for first transmissions (every hole below the highest SACKed segment) and, for a
    retransmission, "new data sent after it SACKed" (the lost-retransmission rule Sack keeps).
    Recovery starts once anything is deemed lost, not on a count of duplicate ACKs.

    The tail loss probe (RFC 8985 7): with data outstanding, not in recovery and nothing SACKed,
    the sender's timer fires after PTO = 2 srtt (+ 200 ms for a delayed ACK when one segment is
    out; at most the RTO) and sends one new segment, or resends the last one, whatever cwnd says;
    the RTO is then armed again. The probe's ACK lets RACK find a loss at the tail without the
    RTO. A loss the resent probe alone repaired (its ACK goes past the probe) reduces cwnd to
    ssthresh, as Linux's tcp_process_tlp_ack does without a DSACK; the simulated receiver sends
    no DSACK, so a probe resent needlessly is counted as a repair too.
    """

    name = "rack"
    tlp = True
    WC_DELACK = 0.2  # s: RFC 8985's worst-case delayed-ACK timer (WCDelAckT), when one segment is out

    def __init__(self, opts) -> None:
        super().__init__(opts)
        self.reo_at = None  # the armed reordering timer's time
        self.tlp_end = None  # snd.nxt when the probe went out; None: no probe outstanding
        self.tlp_retrans = False
        self.probes = 0

    def should_enter(self, s, ack: int) -> bool:
        return self.lost_n > 0 and ack > s.recover  # RACK deemed something lost (Linux tcp_time_to_recover)

    def on_sack(self, s, blocks) -> int:
        new = Prr.on_sack(self, s, blocks)
        if new:
            if s.in_rec or self.sb.count >= s.dupthresh:
                self._deem_lost_below_top(s)
            elif self.reo_at is None and s.min_rtt is not None:
                # fewer than dupthresh SACKed: every hole below them is lost once a reordering window passes
                reo_wnd = s.min_rtt / 4.0
                if s.srtt is not None and reo_wnd > s.srtt:
                    reo_wnd = s.srtt
                self.reo_at = t = s.engine.now + reo_wnd
                s.engine.at(t, self._reorder_timeout, s)
        return new

    def _deem_lost_below_top(self, s) -> None:
        """RACK with no reordering window: every unSACKed segment below the highest SACKed one."""
        floor = self.lost_mark if self.lost_mark > s.una else s.una
        mark, holes = self.sb.mark_from_top(1, floor)
        if mark is not None and mark > self.lost_mark:
            if holes:
                self._lose(holes)
            self.lost_mark = mark

    def _reorder_timeout(self, s) -> None:
        if s.engine.now != self.reo_at:
            return  # re-armed since
        self.reo_at = None
        if s.in_rec or s.done_at is not None or not self.sb.count:
            return
        self._deem_lost_below_top(s)
        if self.lost_n:
            s._fast_retransmit(s.una)

    def enter(self, s) -> None:
        self.tlp_end = None  # Linux: entering recovery ends a probe episode
        self.reo_at = None
        Prr.enter(self, s)

    def on_timeout(self, s) -> None:
        self.tlp_end = None
        self.reo_at = None
        Prr.on_timeout(self, s)

    # -- the tail loss probe ----------------------------------------------------------
    def pto(self, s) -> float | None:
        """Seconds to the probe from now, or None when no probe is due (the sender's ``_arm``)."""
        if (s.in_rec or self.tlp_end is not None or s.srtt is None or self.sb.count or self.lost_n
                or s.una <= s.recover):
            return None
        return 2.0 * s.srtt + (self.WC_DELACK if s.nxt - s.una == 1 else 0.0)

    def on_probe(self, s) -> None:
        """The probe timer fired: one new segment if the window of the receiver allows, else the last
        one again (unbooked: it is not deemed lost)."""
        self.probes += 1
        if s.nxt < s.avail and s.nxt < s.una + s.rwnd and s.nxt >= s.high:
            self.tlp_retrans = False
            s._tx(s.nxt)
            s.nxt += 1
        else:
            self.tlp_retrans = True
            s._retransmit(s.nxt - 1)
        self.tlp_end = s.nxt
        if not self.holding:
            self._wake(s.una)  # on_advance now runs on every ACK, which watches the probe's

    def on_advance(self, s, ack: int) -> None:
        Prr.on_advance(self, s, ack)
        end = self.tlp_end
        if end is not None:
            if not self.tlp_retrans and ack >= end:
                self.tlp_end = None  # the new data the probe carried is acknowledged
            elif self.tlp_retrans and ack > end:
                # the resent segment was the one lost: a loss repaired without recovery (Linux: CWR)
                self.tlp_end = None
                if not s.in_rec:
                    s.ssthresh = s.cc.ssthresh(s)
                    s.cwnd = s.ssthresh
            if self.tlp_end is None:
                self.holding = bool(self.sb.count or self.state)
            else:
                self.holding = True


# name -> class or "module:Class" (hfcprov.sim.registry)
RECOVERIES: dict[str, object] = {"reno": Reno, "newreno": NewReno, "sack": Sack, "prr": Prr, "rack": Rack}


def wants_sack(name: str) -> bool:
    """Whether the strategy ``name`` reads SACK blocks (so the receiver sends them)."""
    if name not in RECOVERIES:
        return False
    return bool(resolve(RECOVERIES, name).sack)


def sends_probes(name: str) -> bool:
    """Whether the strategy ``name`` sends tail loss probes (the sender arms them: ``tcp.ProbingSender``)."""
    return name in RECOVERIES and bool(resolve(RECOVERIES, name).tlp)


def recovery(name: str, opts):
    """A fresh recovery strategy ``RECOVERIES[name]`` for one sender."""
    if name not in RECOVERIES:
        raise ScenarioError(f"tcp.recovery: unknown recovery {name!r} (known: {', '.join(RECOVERIES)})")
    return resolve(RECOVERIES, name)(opts)
