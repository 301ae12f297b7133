"""TCP sender and receiver, segment-indexed (all segments are one MSS but the last).

The sender owns the sequence space, duplicate ACKs (``dupthresh`` 3, or 1 for
Cohen-Ramanathan's *super fast retransmit*), fast-recovery entry and exit, and the
RTO (RFC 6298 with a timer granularity: 0 for a fine timer, 0.5 s for the BSD
coarse timer, 0.2 s for Cohen-Ramanathan's tuning; expiry falls on tick
boundaries as the BSD slow timer does). What happens inside recovery (Reno,
NewReno RFC 6582, or SACK RFC 6675 with its scoreboard) is a
``hfcprov.sim.recovery`` strategy; window growth is a
``hfcprov.sim.cc.CongestionControl``. The window is ``min(cwnd, socket buffer)``.
Choices the RFCs leave open are ``TcpOptions`` fields: limited transmit, ssthresh
from FlightSize or pipe, growth on the ACK that ends recovery (docs/sim.md).

The receiver acknowledges every ``delack_count``-th in-order segment or after
``delack_timeout`` (or at the next tick of a BSD-style fast timer, ``delack_timer``),
immediately on out-of-order data or when a hole fills. Timer phases are drawn from
the scenario's seed by ``run.Network``. With ``quickack`` (Linux) it also ACKs every segment
while in Linux's quick-ACK mode or while its receive window grows (``LinuxAckState``), and with
``push`` an in-order segment carrying PSH, which a ``push`` sender sets on the last segment of each of
its GSO packets of two or more segments (``TcpSender.push_packets``).
Congestion control gets the echoed timestamp's RTT, or with ``ca_rtt: newest`` Linux's: the age of
the newest segment the ACK covers (``TcpSender._ca_rtt``).
"""

from __future__ import annotations

import math
from collections import deque

from hfcprov.sim.packet import ACK, DATA, Train, make
from hfcprov.sim.ranges import SegmentRanges
from hfcprov.sim.recovery import recovery, sends_probes, wants_sack

_UNLIMITED = 1 << 60


class TcpSender:
    __slots__ = (
        "avail",
        "backoff",
        "ca_newest",
        "cc",
        "cwnd",
        "deadline",
        "defer",
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
        "in_loss",
        "in_rec",
        "last_payload",
        "last_tx",
        "link",
        "lt",
        "loss_exit",
        "lt_sent",
        "max_rto",
        "min_rto",
        "min_rtt",
        "mss",
        "nxt",
        "on_done",
        "phase",
        "push",
        "push_end",
        "push_goal",
        "push_start",
        "rec",
        "recover",
        "retransmissions",
        "rto",
        "rto_floor_var",
        "rttvar",
        "rwnd",
        "sent_at",
        "srtt",
        "ssthresh",
        "started",
        "timeouts",
        "timer_at",
        "track",
        "total",
        "tso",
        "una",
    )

    def __new__(cls, engine, flow: int, link, opts, cc, size: int | None, on_done=None):
        # a strategy that sends tail loss probes gets the sender that arms them (the others' timer stays as it was)
        if cls is TcpSender and sends_probes(opts.recovery_mode):
            cls = ProbingSender
        return object.__new__(cls)

    def __init__(self, engine, flow: int, link, opts, cc, size: int | None, on_done=None) -> None:
        self.engine = engine
        self.flow = flow
        self.link = link
        self.cc = cc
        self.rec = recovery(opts.recovery_mode, opts)
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
        self.dupthresh = opts.dupthresh
        self.lt = opts.limited_transmit
        self.lt_sent = 0  # segments limited transmit sent since the duplicate ACKs began
        self.exit_grows = opts.grow_on_recovery_exit
        self.loss_exit = opts.loss_exit_from_recover
        self.in_loss = False  # after an RTO, until HighData then is ACKed (loss_exit_from_recover only)
        self.srtt = None
        self.rttvar = 0.0
        self.gran = opts.timer_granularity
        self.tso = opts.tso  # new data leaves in trains of up to this many segments (run.Network may set 1)
        self.defer = opts.tso_defer  # new data waits for a TSO-sized chunk of window (Linux)
        self.last_tx = 0.0  # when new data last left (tso_defer)
        self.sent_at: deque = deque()  # (end segment, time) of each send of new data (tso_defer, ca_rtt)
        self.ca_newest = opts.ca_rtt == "newest"  # congestion control's RTT from the newest acked segment (Linux)
        self.track = self.defer or self.ca_newest  # keep sent_at
        self.push = opts.push  # PSH on the last segment of each GSO packet of new data (Linux)
        self.push_end = self.push_start = 0  # the send under way, its packets of push_goal segments (push)
        self.push_goal = 2
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
        """What a loss halves (the recovery strategy says: FlightSize or pipe)."""
        return self.rec.flight_bytes(self)

    def _tx(self, i: int) -> None:
        if i < self.high:
            self.rec.on_resend(self, i)
            self._retransmit(i)
            return
        self.high = i + 1
        size = self.hdr + (self.mss if i != self.total - 1 else self.last_payload)
        if self.track:
            self._note_sent(i + 1)
        pkt = make(DATA, self.flow, i, size, self.engine.now, False, None)
        if self.push and self.push_start <= i < self.push_end:  # PSH on the end of each GSO packet (push)
            start, goal = self.push_start, self.push_goal
            end = start + (i - start) // goal * goal + goal  # the end of i's packet: the send cut from its front
            if end > self.push_end:
                end = self.push_end
            if i == end - 1 and (i - start) % goal:  # the last of a packet of two or more segments
                pkt.psh = True
        self.link.send(pkt)

    def _retransmit(self, i: int) -> None:
        """Resend segment ``i`` (the recovery strategy has booked it)."""
        self.retransmissions += 1
        size = self.hdr + (self.mss if i != self.total - 1 else self.last_payload)
        self.link.send(make(DATA, self.flow, i, size, self.engine.now, True, None))

    def try_send(self) -> None:
        rec = self.rec
        if rec.lost_n or (self.in_rec and rec.uses_pipe):
            rec.send(self)  # SACK recovery: pipe and NextSeg decide
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
            if self.defer and nxt < limit and nxt >= self.high and not self.in_rec:
                limit = self._tso_deferred(nxt, limit)
            if nxt < limit:
                if self.track:
                    self._note_sent(limit)
                if self.tso > 1 or nxt < self.high or limit >= self.total or self.push:
                    if self.push:
                        self.push_packets(nxt, limit)
                    self._send_range(nxt, limit)
                else:  # new full-size segments one by one: _tx inlined (most of a run's sends)
                    send, flow, size, now = self.link.send, self.flow, self.hdr + self.mss, self.engine.now
                    for i in range(nxt, limit):
                        send(make(DATA, flow, i, size, now, False, None))
                    self.high = limit
                self.nxt = limit
        if self.deadline is None and self.una < self.nxt:
            self._arm()

    def _send_range(self, nxt: int, limit: int) -> None:
        """Segments ``[nxt, limit)``: resent ones (after go-back-N), new ones, or trains of them."""
        tso = self._train_cap() if self.tso > 1 else 1
        while nxt < limit:
            if tso > 1 and limit - nxt > 1 and nxt >= self.high:
                k = min(tso, limit - nxt)
                self._tx_train(nxt, k)
                nxt += k
                continue
            self._tx(nxt)
            nxt += 1

    def push_packets(self, start: int, end: int) -> None:
        """New segments ``[start, end)`` leave now as Linux's GSO packets: ``_tso_goal`` segments each, cut from
        the front (tcp_write_xmit's tcp_mss_split_point and tso_fragment), the rest last; ``_tx`` sets PSH on
        the last segment of each packet of two or more (``__tcp_transmit_skb`` forces PSH when
        tcp_skb_pcount > 1, to flush the receiver's GRO), none on a packet of one."""
        self.push_start = start
        self.push_end = end
        self.push_goal = self._tso_goal()

    def _train_cap(self) -> int:
        """Segments per train: Linux's TSO size (``_tso_goal``), at most ``tso``."""
        return min(self.tso, self._tso_goal())

    def _tso_goal(self) -> int:
        """Linux's TSO autosizing (tcp_tso_autosize): the pacing rate's bytes per 1/1024 s
        (sk_pacing_shift 10), at least tcp_min_tso_segs (2), at most 64 KB. The pacing rate is
        max(cwnd, in flight)/srtt times 2 while cwnd < ssthresh/2, else 1.2 (tcp_update_pacing_rate);
        so at DOCSIS rates a chunk is 2-5 segments."""
        srtt = self.srtt
        if srtt is None:
            return 2
        segs = max(self.cwnd / self.mss, self.nxt - self.una)
        ratio = 2.0 if self.cwnd < self.ssthresh / 2 else 1.2
        return max(2, min(65536 // self.mss, int(segs * ratio / srtt / 1024)))

    def _note_sent(self, end: int) -> None:
        """New data up to segment ``end`` left now (tso_defer's clock, ca_rtt's send times). A segment a send
        already noted (``try_send`` notes the whole send before ``_tx`` sends its segments) adds nothing."""
        q = self._unacked_sends()
        if not q or end > q[-1][0]:
            q.append((end, self.engine.now))
        self.last_tx = self.engine.now

    def _sends_from(self, seg: int) -> deque:
        """``sent_at`` without the sends that end at or below segment ``seg``: its head is the send that
        holds ``seg`` (or the first after it)."""
        q = self.sent_at
        while q and q[0][0] <= seg:
            q.popleft()
        return q

    def _unacked_sends(self) -> deque:
        """``sent_at`` without the sends every segment of which is acked: its head is the oldest in flight."""
        return self._sends_from(self.una)

    def _tso_deferred(self, nxt: int, limit: int) -> int:
        """Linux's TSO deferral (tcp_tso_should_defer, with GSO always on for TCP): new data leaves in
        whole ``_tso_goal`` chunks; a smaller rest of the window waits for the next ACK, unless nothing
        left for 1 ms, the rest is a third of cwnd (tcp_tso_win_divisor 3), nothing is in flight, or
        the oldest segment in flight is not acked within min(1 ms, srtt/2) (its send time + srtt: the
        rule since Linux 6.18 and the stable kernels of October 2025; before, "sent less than srtt/2
        ago"). Returns the new send limit. So a 40 Mb/s sender on delayed ACKs (one every 0.5 ms) sends
        3-4 segments every other ACK, and one whose ACKs are over 1 ms apart sends what each allows."""
        goal = self._tso_goal()
        room = limit - nxt
        rest = room % goal
        if not rest or limit >= self.avail or self.srtt is None:
            return limit
        full = room - rest
        now = self.engine.now
        if not full and now - self.last_tx > 0.001:
            return limit
        if 3 * rest * self.mss >= self.cwnd:
            return limit
        q = self._unacked_sends()
        srtt = self.srtt
        if not q or q[0][1] + srtt - now > min(0.001, srtt / 2):  # the next ACK is not due within 1 ms
            return limit
        return nxt + full

    def _tx_train(self, i: int, k: int) -> None:
        """New segments ``[i, i + k)`` as one ``Train``."""
        self.high = i + k
        size = k * (self.hdr + self.mss)
        if i + k == self.total:
            size -= self.mss - self.last_payload
        self.link.send_train(Train(self.flow, i, k, size, self.engine.now))

    def _limited_transmit(self, wnd: int, limit: int) -> int:
        """Send limit on a duplicate ACK before fast retransmit (RFC 3042, or RFC 6675 step 3
        with SACK: the strategy's ``lt_limit``), within the receive window."""
        lt_limit = self.rec.lt_limit(self, wnd, limit)
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
        rec = self.rec
        new_sack = 0
        if pkt.sack is not None and rec.sack:
            new_sack = rec.on_sack(self, pkt.sack)
        una = self.una
        if ack > una:
            acked = delivered = ack - una
            if rec.holding:
                held = rec.sacked()
                rec.on_advance(self, ack)
                # segments SACKed before were delivered then: the window grows by what is newly
                # delivered (Linux's acked_sacked), not again when the cumulative ACK passes them
                # (after an RTO with SACK kept, one ACK may pass a whole window of them)
                delivered -= held - rec.sacked()
            now = self.engine.now
            rtt = None
            if not pkt.retx:
                rtt = now - pkt.ts
                self._rtt_sample(rtt)
                if self.ca_newest:
                    rtt = self._ca_rtt(ack, now, rtt)
            self.una = ack
            if self.nxt < ack:  # noqa: PLR1730
                self.nxt = ack  # after go-back-N the receiver already held these
            self.backoff = 1
            if self.in_rec:
                if ack > self.recover or rec.on_partial_ack(self, ack, acked):
                    # a full ACK (or Reno's first partial one) ends recovery
                    self.in_rec = False
                    self.dupacks = self.lt_sent = 0
                    self.cc.on_recovery_exit(self)
                    if self.exit_grows:  # the full ACK also counts for window growth (ns-3)
                        self.cc.on_ack(self, acked, rtt)
            else:
                self.dupacks = self.lt_sent = 0
                if self.in_loss:  # ns-3's CA_LOSS (loss_exit_from_recover)
                    if ack > self.recover:
                        self.in_loss = False
                        delivered = ack - self.recover - 1
                    else:
                        delivered = acked
                if delivered > 0:
                    self.cc.on_ack(self, delivered, rtt)
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
                if rec.inflate:
                    self.cwnd += self.mss  # window inflation (Reno, NewReno)
                if rec.uses_pipe:
                    rec.send(self)  # try_send's recovery branch (the RTO is armed: data is out)
                else:
                    self.try_send()
            elif not self._fast_retransmit(ack) and self.lt:
                self.try_send()

    def _ca_rtt(self, ack: int, now: float, rtt: float) -> float:
        """Linux's ``ca_rtt_us`` (tcp_clean_rtx_queue): the age of the newest segment this ACK covers, from the
        sender's own send times (``last_ackt``), where srtt takes the oldest's. With delayed ACKs it leaves out
        how long the oldest waited for its pair, and that is the sample HyStart and CUBIC see."""
        q = self._sends_from(ack - 1)  # the head holds the newest acked segment, ack - 1
        if q:
            r = now - q[0][1]
            if r < rtt:
                return r
        return rtt

    def _fast_retransmit(self, ack: int) -> bool:
        """Enter fast recovery if the strategy sees a loss (``Recovery.should_enter``)."""
        if not self.rec.should_enter(self, ack):
            return False
        self.fast_retransmits += 1
        self.in_loss = False
        self.ssthresh = self.cc.ssthresh(self)
        self.recover = self.nxt - 1
        self.in_rec = True
        self.rec.enter(self)  # resends the first hole, sets cwnd
        self.try_send()
        return True

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
        wait = self.rto * self.backoff
        if wait > self.max_rto:  # noqa: PLR1730 (every ACK: cheaper than min())
            wait = self.max_rto
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
        self.in_loss = self.loss_exit
        self.in_rec = False
        self.dupacks = self.lt_sent = 0
        self.backoff = min(self.backoff * 2, 64)
        self.rec.on_timeout(self)  # SACK: everything unSACKed deemed lost; else go back N
        self.cc.on_timeout(self)
        self.deadline = None
        self.try_send()


class ProbingSender(TcpSender):
    """A sender whose recovery strategy sends tail loss probes (``Recovery.tlp``: RACK-TLP): its timer
    fires at the probe timeout when the strategy has one due (``pto``) and that comes before the RTO;
    then the strategy sends the probe (``on_probe``) and the RTO is armed."""

    __slots__ = ("probing",)

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.probing = False  # the armed deadline is a probe's, not the RTO's

    def _arm(self) -> None:
        pto = self.rec.pto(self)
        wait = self.rto * self.backoff
        if wait > self.max_rto:  # noqa: PLR1730
            wait = self.max_rto
        self.probing = pto is not None and pto < wait
        if not self.probing:
            TcpSender._arm(self)
            return
        d = self.engine.now + pto  # (a probing host has a fine timer: Linux's, RACK-TLP's)
        self.deadline = d
        if self.timer_at is None or d < self.timer_at:
            self.timer_at = d
            self.engine.at(d, self._on_timer, d)

    def _timeout(self) -> None:
        if self.probing:  # the tail loss probe, not the RTO: send it, then arm the RTO
            self.probing = False
            self.deadline = None
            self.rec.on_probe(self)
            self._arm()
            return
        TcpSender._timeout(self)


# Linux's receiver (net/ipv4/tcp_input.c, kernel 6.x), in segments: TCP_MAX_QUICKACKS; the window clamp
# (tcp_full_space of tcp_rmem[1] = 128 KiB at the default scaling ratio of 1/2: 64 KiB, from
# tcp_init_buffer_space), where rcv_ssthresh starts here too unless TcpOptions.rcv_init_window and
# rcv_window_clamp say otherwise (the Linux preset: 10 segments, tcp_select_initial_window's
# TCP_DEFAULT_INIT_RCVWND, so tcp_grow_window has room from the start, up to 80,480 bytes, the clamp
# Linux 6.18 sets on the bed: docs/calibration.md section 10). rcvq_space's start
# (TCP_INIT_CWND segments); the largest window autotuning reaches (tcp_rmem[2] = 6 MiB at 1/2)
MAX_QUICKACKS = 16
FIRST_WINDOW_BYTES = 65536
INIT_RCVQ_SPACE = 10
MAX_WINDOW_BYTES = 3 << 20


def rcv_window_clamp(opts) -> int:
    """The Linux receiver's window clamp in bytes: ``TcpOptions.rcv_window_clamp``, or 64 KiB when it is 0."""
    return opts.rcv_window_clamp or FIRST_WINDOW_BYTES


class LinuxAckState:
    """What Linux's receiver keeps to decide when an in-order segment is ACKed at once (the rest waits
    for a second segment or the delayed-ACK timer, as on every host):

    - quick-ACK mode (``icsk_ack.quick``): every ACK sent decrements it (``tcp_dec_quickack_mode``); while it
      is above 0 each segment is ACKed at once (``tcp_in_quickack_mode`` in ``__tcp_ack_snd_check``).
      ``tcp_incr_quickack`` raises it to min(``TCP_MAX_QUICKACKS``, receive window / 2 segments): at the first
      data segment and when in-order data follows a pause longer than the receiver's RTO (``tcp_event_data_recv``:
      the sender restarting after an RTO); ``tcp_enter_quickack_mode`` on a segment entirely below ``rcv_nxt``
      (a spurious retransmission, ``tcp_data_queue``).
    - window growth (``tcp_grow_window``, for every data segment, in order or held with SACK): while
      ``rcv_ssthresh`` is below the window clamp less the data held out of order (``tcp_space``), it grows by
      two segments and sets ``quick |= 1``: one more ACK at once.
    - the clamp follows receive-buffer autotuning (``tcp_rcv_space_adjust``, the application reading at
      once): once per receiver RTT, if more was delivered than in any RTT before, the clamp becomes
      2 x delivered + 16, plus twice that scaled by the growth, so the window grows, and segments are ACKed one
      by one, through slow start and whenever delivery per RTT sets a record.
    - the receiver's RTT (``tcp_rcv_rtt_measure_ts``, a min-biased average): here each segment's age plus the
      reverse path's base delay; its RTO (from the handshake's sample): base RTT + max(2 base RTT, min RTO).

    - with ``push``: an in-order segment with PSH at once (``tcp_measure_rcv_mss``'s ICSK_ACK_PUSHED, sent by
      ``tcp_cleanup_rbuf`` once the application has read everything: here at once).

    Not modelled (docs/sim.md): the application's read latency (when ``tcp_cleanup_rbuf`` runs), the
    right-edge condition of ``__tcp_ack_snd_check``, SACK compression of the 4th and later duplicate ACKs."""

    __slots__ = ("back", "clamp", "last", "mss_bytes", "push", "quick", "rcv_rtt", "rcvq_seq", "rcvq_space",
                 "rcvq_time", "rto", "ssthresh")

    def __init__(self, opts) -> None:
        mss = opts.mss
        clamp = rcv_window_clamp(opts)
        first = (clamp // mss) * mss / mss  # tcp_select_initial_window rounds down to whole MSS
        if opts.rcv_init_window:  # the first window advertised (TCP_DEFAULT_INIT_RCVWND): room to grow at once
            first = min(first, float(opts.rcv_init_window))
        self.mss_bytes = mss
        self.quick = 0
        self.ssthresh = first  # rcv_ssthresh
        self.clamp = clamp / mss  # window_clamp
        self.rcvq_space = min(first, INIT_RCVQ_SPACE)
        self.rcvq_seq = 0
        self.rcvq_time = 0.0
        self.rcv_rtt = 0.0
        self.last = None  # lrcvtime: the last in-order data segment's arrival
        self.back = 0.0  # the reverse path's base delay
        self.rto = opts.initial_rto  # without a handshake sample (TCP_TIMEOUT_INIT)
        self.push = opts.push  # an in-order segment with PSH is ACKed at once (ICSK_ACK_PUSHED)

    def path(self, rtt: float, min_rto: float) -> None:
        """The flow's base RTT: the receiver's RTO from its handshake sample, its RTT estimate's reverse half."""
        self.back = rtt / 2.0
        self.rto = rtt + max(2.0 * rtt, min_rto)

    def incr_quickack(self) -> None:
        q = int(self.ssthresh // 2) or 2
        q = min(q, MAX_QUICKACKS)
        if q > self.quick:
            self.quick = q

    def data(self, r, pkt, i: int, n: int) -> None:
        """Segments ``[i, i + n)`` arrive at receiver ``r`` (before ``r`` files them)."""
        nxt = r.rcv_nxt
        if i + n <= nxt:  # entirely below rcv_nxt: tcp_enter_quickack_mode(TCP_MAX_QUICKACKS)
            self.incr_quickack()
            return
        if i <= nxt:  # in order: tcp_event_data_recv
            now = r.engine.now
            last = self.last
            if last is None or now - last > self.rto:
                self.incr_quickack()
            self.last = now
            m = now - pkt.ts + self.back
            est = self.rcv_rtt
            if est == 0.0 or m < est:
                self.rcv_rtt = est = m
            else:
                self.rcv_rtt = est = est - est / 8.0 + m / 8.0
            if now - self.rcvq_time >= est:  # tcp_rcv_space_adjust, once per RTT
                self._space_adjust(nxt, now)
        room = self.clamp - r.ranges.count - self.ssthresh  # tcp_grow_window
        if room > 0:
            self.ssthresh += room if room < 2 * n else 2 * n
            self.quick |= 1

    def _space_adjust(self, nxt: int, now: float) -> None:
        copied = nxt - self.rcvq_seq
        space = self.rcvq_space
        if copied > space:  # more than in any RTT before: a larger buffer, a larger clamp
            win = 2.0 * copied + 16.0
            win += 2.0 * win * (copied - space) / space
            cap = MAX_WINDOW_BYTES / self.mss_bytes
            if win > cap:
                win = cap
            if win > self.clamp:
                self.clamp = win
            self.rcvq_space = copied
        self.rcvq_seq = nxt
        self.rcvq_time = now


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
        "linux",
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
        self.sack = wants_sack(opts.recovery_mode)
        self.hdr = opts.header_bytes
        self.linux = LinuxAckState(opts) if opts.quickack else None  # Linux's immediate ACKs

    def receive(self, pkt) -> None:
        i = pkt.seq
        if pkt.__class__ is Train:
            if self.linux is not None:
                self.linux.data(self, pkt, i, pkt.n)
            self._receive_train(pkt, i, i + pkt.n)
            return
        linux = self.linux
        if linux is not None:
            linux.data(self, pkt, i, 1)
        if i == self.rcv_nxt:
            self.rcv_nxt = i + 1
            ranges = self.ranges
            if ranges.count:
                lo = ranges.lo
                if ranges.starts[lo] == i + 1:  # the hole is filled up to the lowest range
                    e = ranges.ends[lo]
                    self.rcv_nxt = e
                    ranges.drop_below(e)
                self._ack(pkt.ts, pkt.retx, None)  # a hole filled (partly): ACK at once
                return
            if not self.delack:
                self._ack(pkt.ts, pkt.retx, None)
                return
            if linux is not None and (linux.quick or (pkt.psh and linux.push)):
                # Linux's quick-ACK mode, or a full-sized segment with PSH once the application has read it
                if self.pending:
                    self._ack(self.pending_ts, self.pending_retx or pkt.retx, None)
                else:
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
            if self.pending >= self.delack_count:  # _ack without SACK blocks (none are held here)
                self.pending = 0
                self.link.send(make(ACK, self.flow, self.rcv_nxt, self.hdr, self.pending_ts, self.pending_retx, None))
        elif i > self.rcv_nxt:
            self._ack(pkt.ts, True, self.ranges.hold(i, i + 1))  # duplicate ACK; no RTT sample from it
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
            self._ack(pkt.ts, True, self.ranges.hold(i, end))

    def held(self) -> int:
        """Segments received above ``rcv_nxt`` (out of order)."""
        return self.ranges.count

    def _ack(self, ts: float, retx: bool, block) -> None:
        self.pending = 0
        linux = self.linux
        if linux is not None and linux.quick:  # tcp_dec_quickack_mode
            linux.quick -= 1
        sack = None
        ranges = self.ranges
        if self.sack and ranges.count:
            # The block just changed goes first (RFC 2018), then the lowest others, three in all.
            st, en, lo = ranges.starts, ranges.ends, ranges.lo
            n = len(st) - lo
            if n == 1:
                sack = ((st[lo], en[lo]),)
            elif not block or block >= n:  # the lowest ones (none changed, or the lowest did)
                sack = ((st[lo], en[lo]), (st[lo + 1], en[lo + 1]), (st[lo + 2], en[lo + 2])) if n > 2 else \
                    ((st[lo], en[lo]), (st[lo + 1], en[lo + 1]))
            else:
                f = lo + block
                if block == 1:
                    sack = ((st[f], en[f]), (st[lo], en[lo]), (st[lo + 2], en[lo + 2])) if n > 2 else \
                        ((st[f], en[f]), (st[lo], en[lo]))
                else:
                    sack = ((st[f], en[f]), (st[lo], en[lo]), (st[lo + 1], en[lo + 1]))
        self.link.send(make(ACK, self.flow, self.rcv_nxt, self.hdr, ts, retx, sack))

    def _delack_fire(self, _=None) -> None:
        if not self.pending:
            self.delack_timer = False
        elif self.engine.now >= self.delack_deadline:
            self.delack_timer = False
            self._ack(self.pending_ts, self.pending_retx, None)
        else:
            self.engine.at(self.delack_deadline, self._delack_fire)
