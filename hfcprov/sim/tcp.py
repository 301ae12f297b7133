"""TCP sender and receiver, segment-indexed (all segments are one MSS but the last).

The sender owns loss detection and recovery: duplicate-ACK fast retransmit
(``dupthresh`` 3, or 1 for Cohen-Ramanathan's *super fast retransmit*), Reno,
NewReno (RFC 6582) or SACK (RFC 6675-style pipe) recovery, and the RTO
(RFC 6298 with a timer granularity: 0 for a fine timer, 0.5 s for the BSD
coarse timer, 0.2 s for Cohen-Ramanathan's tuning; expiry falls on tick
boundaries as the BSD slow timer does). Window growth is delegated to a
``hfcprov.sim.cc.CongestionControl``. The window is ``min(cwnd, socket buffer)``.
Choices the RFCs leave open are ``TcpOptions`` fields: limited transmit, ssthresh
from FlightSize or pipe, growth on the ACK that ends recovery (docs/sim.md).

The receiver acknowledges every ``delack_count``-th in-order segment or after
``delack_timeout`` (or at the next tick of a BSD-style fast timer, ``delack_timer``),
immediately on out-of-order data or when a hole fills. Timer phases are drawn from
the scenario's seed by ``run.Network``.
"""

from __future__ import annotations

import math
from collections import deque
from heapq import heappop, heappush

from hfcprov.sim.packet import ACK, DATA, Packet, Train
from hfcprov.sim.ranges import SegmentRanges

LOST = -1  # TcpSender.state: deemed lost, not yet resent (a value >= 0: resent, HighData then)

_UNLIMITED = 1 << 60


class TcpSender:
    __slots__ = (
        "avail",
        "backoff",
        "cc",
        "cwnd",
        "deadline",
        "done_at",
        "dupacks",
        "dupthresh",
        "engine",
        "exit_grows",
        "fast_retransmits",
        "flow",
        "gran",
        "hdr",
        "high",
        "high_sacked",
        "in_rec",
        "last_payload",
        "link",
        "lost_mark",
        "lost_n",
        "lost_retransmits",
        "lt",
        "lt_sent",
        "max_rto",
        "min_rto",
        "min_rtt",
        "mss",
        "nxt",
        "on_done",
        "phase",
        "recover",
        "recovery",
        "relost",
        "retransmissions",
        "rto",
        "rto_floor_var",
        "rttvar",
        "rtx_ptr",
        "rtx_q",
        "rtx_watch",
        "rwnd",
        "sb",
        "srtt",
        "ssthresh",
        "ssthresh_pipe",
        "started",
        "state",
        "timeouts",
        "timer_at",
        "total",
        "tso",
        "una",
    )

    def __init__(self, engine, flow: int, link, opts, cc, size: int | None, on_done=None) -> None:
        self.engine = engine
        self.flow = flow
        self.link = link
        self.cc = cc
        self.mss = opts.mss
        self.hdr = opts.header_bytes
        if size:
            self.total = -(-size // self.mss)
            self.last_payload = size - (self.total - 1) * self.mss
        else:
            self.total = _UNLIMITED
            self.last_payload = self.mss
        self.avail = self.total  # segments the application has handed over (see ``supply``)
        self.rwnd = max(1, opts.socket_buffer // self.mss) if opts.socket_buffer else _UNLIMITED
        self.cwnd = float(opts.initial_window * self.mss)
        self.ssthresh = float(opts.initial_ssthresh) if opts.initial_ssthresh else 1e18
        self.una = self.nxt = self.high = 0
        self.dupacks = 0
        self.in_rec = False
        self.recover = -1
        self.recovery = opts.recovery_mode
        self.dupthresh = opts.dupthresh
        self.lt = opts.limited_transmit
        self.lt_sent = 0  # segments limited transmit sent since the duplicate ACKs began
        self.ssthresh_pipe = opts.ssthresh_from == "pipe"
        self.exit_grows = opts.grow_on_recovery_exit
        self.srtt = None
        self.rttvar = 0.0
        self.gran = opts.timer_granularity
        self.tso = opts.tso  # new data leaves in trains of up to this many segments (run.Network may set 1)
        self.phase = 0.0  # where the coarse timer's ticks fall (run.Network draws it from the seed)
        self.min_rto = opts.min_rto
        self.rto_floor_var = opts.rto_rule == "linux"
        self.max_rto = 60.0
        self.rto = max(opts.initial_rto, self.min_rto)
        self.backoff = 1
        self.min_rtt = None
        self.deadline = None
        self.timer_at = None
        self.retransmissions = self.timeouts = self.fast_retransmits = 0
        self.started = None
        self.done_at = None
        self.on_done = on_done
        # SACK scoreboard (RFC 6675), kept incrementally so an ACK costs the same at any window:
        # ``sb`` the SACKed ranges; ``state`` per segment deemed lost: LOST (to resend) or, once
        # resent, the HighData at the time (a retransmission in flight); ``lost_n`` LOST segments;
        # every unSACKed segment below ``lost_mark`` (the dupthresh-th highest SACKed one) has been
        # deemed lost (IsLost); ``rtx_ptr`` no LOST segment lies below it.
        self.sb = SegmentRanges()
        self.state: dict = {}
        self.lost_n = 0
        self.lost_mark = 0
        self.rtx_ptr = 0
        self.high_sacked = -1
        # Retransmissions in send order with the HighData when sent: one whose later-sent
        # data is SACKed was lost again (Linux's lost-retransmit rule; FIFO path, no reordering).
        self.rtx_q: deque = deque()
        self.rtx_watch = opts.detect_lost_retransmit
        self.relost: list = []  # heap: resent segments lost again (they lie below rtx_ptr)
        self.lost_retransmits = 0

    # -- sending -----------------------------------------------------------
    def supply(self, segments: int) -> None:
        """The application has handed over the first ``segments`` segments (a relay that
        forwards what it has received so far); send what the window allows of them."""
        self.avail = min(segments, self.total)
        if self.started is not None and self.done_at is None:
            self.try_send()

    def start(self, _=None) -> None:
        self.started = self.engine.now
        self.try_send()

    def flight_bytes(self) -> float:
        """What a loss halves: pipe in SACK recovery (or always, ``ssthresh_from: pipe``),
        else FlightSize without the segments limited transmit sent (RFC 5681 section 3.2)."""
        if self.recovery == "sack" and (self.in_rec or self.ssthresh_pipe) and self.sb.count:
            return self._pipe() * self.mss
        return (self.nxt - self.una - self.lt_sent) * self.mss

    def _tx(self, i: int) -> None:
        if i < self.high:
            self.retransmissions += 1
            retx = True
            if self.recovery == "sack":
                if self.state.get(i) == LOST:
                    self.lost_n -= 1
                self.state[i] = self.high
                if self.rtx_watch:
                    self.rtx_q.append((i, self.high))
        else:
            self.high = i + 1
            retx = False
        size = self.hdr + (self.mss if i != self.total - 1 else self.last_payload)
        self.link.send(Packet(DATA, self.flow, i, size, self.engine.now, retx))

    def try_send(self) -> None:
        if self.recovery == "sack" and (self.in_rec or self.lost_n):
            self._sack_send()
        else:
            wnd = int(self.cwnd // self.mss) or 1
            if wnd > self.rwnd:  # noqa: PLR1730 (hot path: cheaper than min())
                wnd = self.rwnd
            limit = self.una + wnd
            if self.lt and 0 < self.dupacks < self.dupthresh and not self.in_rec:
                limit = self._limited_transmit(wnd, limit)
            if limit > self.avail:  # noqa: PLR1730
                limit = self.avail
            nxt = self.nxt
            tso = self._train_cap() if self.tso > 1 else 1
            while nxt < limit:
                if tso > 1 and limit - nxt > 1 and nxt >= self.high:
                    k = min(tso, limit - nxt)
                    self._tx_train(nxt, k)
                    nxt += k
                    continue
                self._tx(nxt)
                nxt += 1
            self.nxt = nxt
        if self.deadline is None and self.una < self.nxt:
            self._arm()

    def _train_cap(self) -> int:
        """Linux's TSO autosizing: about 1 ms of the pacing rate (2x cwnd/srtt in slow start, 1.2x
        after), at least 2 segments, at most ``tso``; so trains stay small at DOCSIS rates."""
        srtt = self.srtt
        if srtt is None:
            return 2
        ratio = 2.0 if self.cwnd < self.ssthresh else 1.2
        return max(2, min(self.tso, int(ratio * self.cwnd / srtt * 0.001 / self.mss)))

    def _tx_train(self, i: int, k: int) -> None:
        """New segments ``[i, i + k)`` as one ``Train``."""
        self.high = i + k
        size = k * (self.hdr + self.mss)
        if i + k == self.total:
            size -= self.mss - self.last_payload
        self.link.send(Train(self.flow, i, k, size, self.engine.now))

    def _limited_transmit(self, wnd: int, limit: int) -> int:
        """Send limit on a duplicate ACK before fast retransmit: one new segment per duplicate ACK
        beyond cwnd (RFC 3042), or with SACK new data while pipe < cwnd (RFC 6675 section 5 step 3)."""
        if self.recovery == "sack":
            lt_limit = self.nxt + wnd - self._pipe()
        else:
            lt_limit = limit + self.dupacks
        if lt_limit <= limit:
            return limit
        lt_limit = min(lt_limit, self.una + self.rwnd)
        self.lt_sent += max(0, min(lt_limit, self.avail) - max(self.nxt, limit))
        return lt_limit

    # -- ACK processing ----------------------------------------------------
    def receive(self, pkt) -> None:
        ack = pkt.seq
        if self.done_at is not None:
            return
        new_sack = 0
        if pkt.sack is not None and self.recovery == "sack":
            new_sack = self._update_scoreboard(pkt.sack)
        una = self.una
        if ack > una:
            if self.recovery == "sack":
                if self.sb.count or self.state:
                    self._prune_scoreboard(ack)
                else:  # nothing SACKed or lost: just move the marks (no call on the common path)
                    self.lost_mark = self.rtx_ptr = ack
                    self.high_sacked = ack - 1
            now = self.engine.now
            acked = ack - una
            rtt = None
            if not pkt.retx:
                rtt = now - pkt.ts
                self._rtt_sample(rtt)
            self.una = ack
            if self.nxt < ack:  # noqa: PLR1730
                self.nxt = ack  # after go-back-N the receiver already held these
            self.backoff = 1
            if self.in_rec:
                if ack > self.recover or self.recovery == "reno":
                    # a full ACK; Reno also leaves recovery on the first partial one
                    self.in_rec = False
                    self.dupacks = self.lt_sent = 0
                    self.cc.on_recovery_exit(self)
                    if self.exit_grows:  # the full ACK also counts for window growth (ns-3)
                        self.cc.on_ack(self, acked, rtt)
                elif self.recovery == "newreno":
                    self._tx(ack)  # partial ACK: the next hole
                    self.cwnd = max(self.cwnd - acked * self.mss + self.mss, float(self.mss))
            else:
                self.dupacks = self.lt_sent = 0
                self.cc.on_ack(self, acked, rtt)
                if new_sack:  # RFC 6675 section 5: it SACKs new data, so it is also a duplicate ACK
                    self.dupacks = 1
            if ack >= self.total:
                self.done_at = now
                self.deadline = None
                if self.on_done is not None:
                    self.on_done(self)
                return
            if ack < self.nxt:
                self._arm()
            else:
                self.deadline = None
            if not (new_sack and not self.in_rec and self._fast_retransmit(ack)):
                self.try_send()
        elif ack == una and self.nxt > una:
            self.dupacks += 1
            if self.in_rec:
                if self.recovery != "sack":
                    self.cwnd += self.mss  # window inflation
                self.try_send()
            elif not self._fast_retransmit(ack) and self.lt:
                self.try_send()

    def _fast_retransmit(self, ack: int) -> bool:
        """Enter fast recovery on the ``dupthresh``-th duplicate ACK or, with SACK, once
        ``dupthresh`` segments above the hole are SACKed (RFC 6675 IsLost(HighACK + 1))."""
        if not (self.dupacks == self.dupthresh
                or (self.recovery == "sack" and self.sb.count >= self.dupthresh)):
            return False
        if self.recovery != "reno" and ack <= self.recover:
            return False  # RFC 6582 / 6675: no new recovery before the last one's point is ACKed
        self._enter_recovery()
        return True

    def _enter_recovery(self) -> None:
        self.fast_retransmits += 1
        self.ssthresh = self.cc.ssthresh(self)
        self.recover = self.nxt - 1
        self.in_rec = True
        self._tx(self.una)
        if self.recovery == "sack":
            self.cwnd = self.ssthresh
        else:
            self.cwnd = self.ssthresh + self.dupthresh * self.mss
        self.try_send()

    # -- SACK scoreboard -----------------------------------------------------
    def _update_scoreboard(self, blocks) -> int:
        """Record SACK blocks; returns how many segments they SACK for the first time."""
        una = self.una
        sb = self.sb
        state = self.state
        new = 0
        for s, e in blocks:
            if e <= una:
                continue
            for a, b in sb.add(max(una, s), e):
                new += b - a
                if state:  # deemed lost or resent, and it arrived after all
                    for i in range(a, b):
                        v = state.pop(i, None)
                        if v == LOST:
                            self.lost_n -= 1
            if e - 1 > self.high_sacked:  # noqa: PLR1730
                self.high_sacked = e - 1
        if new:
            mark = sb.kth_from_top(self.dupthresh)
            if mark is not None and mark > self.lost_mark:
                self._mark_lost(self.lost_mark, mark)
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
        return new

    def _mark_lost(self, a: int, b: int) -> None:
        """RFC 6675 IsLost for the unSACKed segments of ``[a, b)`` (each segment passes here once)."""
        state = self.state
        for ga, gb in self.sb.gaps(max(a, self.una), b):
            for i in range(ga, gb):
                if i not in state:
                    state[i] = LOST
                    self.lost_n += 1

    def _prune_scoreboard(self, ack: int) -> None:
        """The cumulative ACK moved from ``una`` to ``ack``: forget what lies below it."""
        if self.sb.count:
            self.sb.drop_below(ack)
        state = self.state
        if state:
            una = self.una
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

    def _pipe(self) -> int:
        """Segments believed in the network: outstanding - SACKed - lost and not yet resent."""
        return self.nxt - self.una - self.sb.count - self.lost_n

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

    def _sack_send(self) -> None:
        wnd = int(self.cwnd // self.mss) or 1
        pipe = self._pipe()
        limit = min(self.una + self.rwnd, self.avail)
        while pipe < wnd:
            if self.lost_n:  # RFC 6675 NextSeg: lost segments first, then new data
                self._tx(self._next_lost())
            elif self.nxt < limit:
                k = min(self._train_cap() if self.tso > 1 else 1, limit - self.nxt, wnd - pipe)
                if k > 1:
                    self._tx_train(self.nxt, k)
                    self.nxt += k
                    pipe += k
                    continue
                self._tx(self.nxt)
                self.nxt += 1
            else:
                break
            pipe += 1

    # -- RTO -----------------------------------------------------------------
    def _rtt_sample(self, r: float) -> None:
        # once per ACK: plain comparisons, no min()/max()/abs() calls
        if self.min_rtt is None or r < self.min_rtt:
            self.min_rtt = r
        srtt = self.srtt
        if srtt is None:
            srtt = r
            rttvar = r / 2.0
        else:
            dev = srtt - r if srtt > r else r - srtt
            rttvar = 0.75 * self.rttvar + 0.25 * dev
            srtt = 0.875 * srtt + 0.125 * r
        self.srtt = srtt
        self.rttvar = rttvar
        var = 4.0 * rttvar
        if var < self.gran:  # noqa: PLR1730 (once per ACK: cheaper than max())
            var = self.gran
        if self.rto_floor_var:  # Linux: rttvar never below rto_min, so RTO >= srtt + rto_min
            if var < self.min_rto:  # noqa: PLR1730
                var = self.min_rto
            rto = srtt + var
        else:  # RFC 6298 2.4: the minimum bounds the whole RTO
            rto = srtt + var
            if rto < self.min_rto:  # noqa: PLR1730
                rto = self.min_rto
        self.rto = rto if rto < self.max_rto else self.max_rto  # noqa: FURB136

    def _arm(self) -> None:
        now = self.engine.now
        wait = min(self.rto * self.backoff, self.max_rto)
        g = self.gran
        if g:
            # The BSD slow timer counts ticks: it fires on the k-th tick boundary from now.
            ph = self.phase
            d = (math.floor((now - ph) / g + 1e-9) + math.ceil(wait / g - 1e-9)) * g + ph
        else:
            d = now + wait
        self.deadline = d
        if self.timer_at is None or d < self.timer_at:
            self.timer_at = d
            self.engine.at(d, self._on_timer, d)

    def _on_timer(self, t) -> None:
        if t != self.timer_at:
            return  # superseded by an earlier re-arm
        self.timer_at = None
        d = self.deadline
        if d is None or self.done_at is not None:
            return
        if d > self.engine.now:
            self.timer_at = d
            self.engine.at(d, self._on_timer, d)
            return
        self._timeout()

    def _timeout(self) -> None:
        self.timeouts += 1
        self.ssthresh = self.cc.ssthresh(self)
        self.cwnd = float(self.mss)
        self.recover = self.high - 1
        self.in_rec = False
        self.dupacks = self.lt_sent = 0
        self.backoff = min(self.backoff * 2, 64)
        if self.recovery == "sack":
            # Everything unSACKed is deemed lost and resent in order, SACKed data is not
            # (RFC 6675 section 5.1, Linux tcp_enter_loss); pipe then paces the resends.
            state = self.state
            self.lost_n = 0
            state.clear()
            self.rtx_q.clear()
            for a, b in self.sb.gaps(self.una, self.high):
                for i in range(a, b):
                    state[i] = LOST
                self.lost_n += b - a
            self.lost_mark = self.high
            self.rtx_ptr = self.una
            self.relost.clear()
        else:
            self.nxt = self.una  # go back N
        self.cc.on_timeout(self)
        self.deadline = None
        self.try_send()


class TcpReceiver:
    __slots__ = (
        "delack",
        "delack_count",
        "delack_deadline",
        "delack_tick",
        "delack_timeout",
        "delack_timer",
        "engine",
        "flow",
        "hdr",
        "link",
        "lt",
        "lt_sent",
        "pending",
        "pending_retx",
        "pending_ts",
        "phase",
        "ranges",
        "rcv_nxt",
        "sack",
    )

    def __init__(self, engine, flow: int, link, opts) -> None:
        self.engine = engine
        self.flow = flow
        self.link = link
        self.rcv_nxt = 0
        self.ranges = SegmentRanges()  # out-of-order data held above rcv_nxt
        self.delack = opts.delayed_ack
        self.delack_count = opts.delack_count
        self.delack_timeout = opts.delack_timeout
        self.pending = 0
        self.pending_ts = 0.0
        self.pending_retx = False
        # One lazily re-armed delayed-ACK timer instead of one heap event per ACK.
        self.delack_deadline = 0.0
        self.delack_timer = False
        # BSD's fast timer: a free-running clock of delack_timeout ticks (phase drawn by run.Network);
        # a delayed ACK goes at the next tick, so it waits anything up to delack_timeout
        tick = opts.delack_timer == "tick" or (opts.delack_timer == "auto" and opts.timer_granularity > 0)
        self.delack_tick = self.delack_timeout if tick else 0.0
        self.phase = 0.0
        self.sack = opts.recovery_mode == "sack"
        self.hdr = opts.header_bytes

    def receive(self, pkt) -> None:
        i = pkt.seq
        if pkt.__class__ is Train:
            self._receive_train(pkt, i, i + pkt.n)
            return
        if i == self.rcv_nxt:
            self.rcv_nxt = i + 1
            ranges = self.ranges
            if ranges.count:
                s, e = ranges.first()
                if s == self.rcv_nxt:
                    self.rcv_nxt = e
                    ranges.drop_below(e)
                self._ack(pkt.ts, pkt.retx, None)  # a hole filled (partly): ACK at once
                return
            if not self.delack:
                self._ack(pkt.ts, pkt.retx, None)
                return
            if self.pending == 0:
                self.pending_ts = pkt.ts
                self.pending_retx = pkt.retx
                now = self.engine.now
                tick = self.delack_tick
                if tick:
                    ph = self.phase
                    self.delack_deadline = ph + (math.floor((now - ph) / tick + 1e-9) + 1) * tick
                else:
                    self.delack_deadline = now + self.delack_timeout
                if not self.delack_timer:
                    self.delack_timer = True
                    self.engine.at(self.delack_deadline, self._delack_fire)
            else:
                self.pending_retx = self.pending_retx or pkt.retx
            self.pending += 1
            if self.pending >= self.delack_count:
                self._ack(self.pending_ts, self.pending_retx, None)
        elif i > self.rcv_nxt:
            self.ranges.add(i, i + 1)
            self._ack(pkt.ts, True, self.ranges.index(i))  # duplicate ACK; no RTT sample from it
        else:
            self._ack(pkt.ts, True, None)  # spurious retransmission: tell the sender again

    def _receive_train(self, pkt, i: int, end: int) -> None:
        """Segments ``[i, end)`` at once (receive offload): one ACK for all of them, as GRO gives."""
        if end <= self.rcv_nxt:
            self._ack(pkt.ts, True, None)
        elif i <= self.rcv_nxt:
            self.rcv_nxt = end
            ranges = self.ranges
            if ranges.count:
                s, e = ranges.first()
                if s <= end:
                    if e > end:
                        self.rcv_nxt = e
                    ranges.drop_below(self.rcv_nxt)
            retx = pkt.retx or (self.pending and self.pending_retx)
            self._ack(self.pending_ts if self.pending else pkt.ts, retx, None)
        else:
            self.ranges.add(i, end)
            self._ack(pkt.ts, True, self.ranges.index(i))

    def held(self) -> int:
        """Segments received above ``rcv_nxt`` (out of order)."""
        return self.ranges.count

    def _ack(self, ts: float, retx: bool, block) -> None:
        self.pending = 0
        sack = None
        ranges = self.ranges
        if self.sack and ranges.count:
            # The block just changed goes first (RFC 2018), then the lowest others, three in all.
            st, en, lo = ranges.starts, ranges.ends, ranges.lo
            n = len(st) - lo
            first = block if block is not None and block < n else 0
            k1, k2 = (1, 2) if first == 0 else ((0, 2) if first == 1 else (0, 1))
            f = lo + first
            if n > k2:
                sack = ((st[f], en[f]), (st[lo + k1], en[lo + k1]), (st[lo + k2], en[lo + k2]))
            elif n > k1:
                sack = ((st[f], en[f]), (st[lo + k1], en[lo + k1]))
            else:
                sack = ((st[f], en[f]),)
        self.link.send(Packet(ACK, self.flow, self.rcv_nxt, self.hdr, ts, retx, sack))

    def _delack_fire(self, _=None) -> None:
        if not self.pending:
            self.delack_timer = False
        elif self.engine.now >= self.delack_deadline:
            self.delack_timer = False
            self._ack(self.pending_ts, self.pending_retx, None)
        else:
            self.engine.at(self.delack_deadline, self._delack_fire)
