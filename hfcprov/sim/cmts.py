"""DOCSIS downstream: the CMTS's per-modem shaper and the shared downstream channel.

A download reaches the CM through the CMTS. The CMTS rate-limits each downstream
service flow with a token bucket (Max Sustained Rate, Max Traffic Burst; MULPI
counts the Ethernet frame) and, with shaping on, holds packets that exceed it in
the flow's own FIFO instead of dropping them (Cisco uBR: ``cable downstream
rate-limit token-bucket shaping granularity G max-delay D``: a held packet is
released on a calendar of ``G`` ms slots, 1-16 ms, and dropped if it would wait
more than ``D``, 128-1024 ms). Released packets go out on the downstream channel,
which every modem on it shares: a 6 MHz ITU-T J.83 Annex B carrier, 64-QAM
(26.97 Mb/s of MPEG-TS after FEC) or 256-QAM (38.81 Mb/s). Each packet travels as
a DOCSIS MAC frame (6-byte header, an extended header with BPI+, the Ethernet
frame) cut into 188-byte MPEG-TS packets with 184 bytes of payload; the channel
also carries a MAP for each upstream channel every MAP interval, and other
modems' traffic. Behind the channel sits the FEC interleaver's delay.

Unlike the upstream (``mac.py``) nothing here waits for a grant, so the hop is
FIFO with service times known on arrival: one event per packet, as ``link.Link``.
Other modems' traffic is a Poisson stream of frames drawn lazily as the flow's
packets arrive (frames that came first go first), so it costs no events either.

``CmtsDownstream`` has the ``Link`` surface; ``make_link`` is ``links.LINKS["cmts"]``.
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass, fields

from hfcprov.errors import HfcprovError
from hfcprov.model.flow import DEFAULT_MAX_TRAFFIC_BURST
from hfcprov.queue.grant import (
    ETHERNET_OVERHEAD,  # what a DOCSIS rate limiter counts beyond the IP packet
)
from hfcprov.sim.link import Link

MPEG_PACKET, MPEG_PAYLOAD = 188, 184  # ITU-T H.222.0 transport stream packet and its payload
# Annex B (6 MHz) MPEG-TS rates after Reed-Solomon, trellis and framing, bits/s
QAM_RATES = {"qam64": 26.97035e6, "qam256": 38.81070e6}


class CmtsConfigError(HfcprovError, ValueError):
    """A CMTS downstream parameter is out of range."""


@dataclass(frozen=True)
class CmtsParams:
    """The CMTS downstream's parameters (seconds, bytes, bits/s); defaults: DOCSIS 1.1 on 64-QAM,
    Cisco's shaping clock (1 ms) and largest shaping delay (1024 ms, Atov-Kennedy's setting)."""

    channel_rate: float = QAM_RATES["qam64"]  # MPEG-TS bits/s the carrier delivers
    mac_header: int = 6  # DOCSIS MAC header per frame
    extended_header: int = 0  # BPI+ extended header (5 bytes when privacy is on)
    pointer_field: int = 1  # bytes per MPEG packet in which a MAC frame starts (amortised: 1 per frame)
    granularity: float = 0.001  # shaping calendar slot: a held packet leaves at the next slot
    max_delay: float | None = 1.024  # a packet that would be held longer is dropped (None: never)
    upstreams: int = 1  # upstream channels whose MAPs this downstream carries
    map_interval: float = 0.002  # one MAP per upstream channel per interval
    map_bytes: int = 100  # a MAP's MAC frame (management header + ~15 information elements)
    other_load: float = 0.0  # share of the channel other modems' traffic takes (0..1)
    other_frame: int = 1518  # bytes of each of their frames
    interleave_delay: float = 0.00068  # J.83 Annex B interleaver I=32, J=4 at 64-QAM

    def __post_init__(self) -> None:
        for name, least in (("mac_header", 0), ("extended_header", 0), ("pointer_field", 0), ("upstreams", 0),
                            ("map_bytes", 0), ("other_frame", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise CmtsConfigError(f"CMTS downstream: {name} must be a whole number >= {least}, not {value!r}")
        for name in ("channel_rate", "granularity", "map_interval", "other_load", "interleave_delay"):
            if isinstance(getattr(self, name), bool) or not isinstance(getattr(self, name), (int, float)):
                raise CmtsConfigError(f"CMTS downstream: {name} must be a number, not {getattr(self, name)!r}")
        if self.channel_rate <= 0 or self.map_interval <= 0:
            raise CmtsConfigError("CMTS downstream: channel_rate and map_interval must be > 0")
        if self.granularity < 0 or self.interleave_delay < 0:
            raise CmtsConfigError("CMTS downstream: granularity and interleave_delay must be >= 0")
        if self.max_delay is not None and self.max_delay <= 0:
            raise CmtsConfigError("CMTS downstream: max_delay must be > 0 (or null: no limit)")
        if not 0 <= self.other_load < 1:
            raise CmtsConfigError("CMTS downstream: other_load must be in [0, 1)")
        maps = self.upstreams * self.map_bytes * 8 / self.map_interval
        if maps * MPEG_PACKET / MPEG_PAYLOAD >= self.channel_rate * (1 - self.other_load):
            raise CmtsConfigError("CMTS downstream: MAPs and other modems leave no room on the channel")

    @classmethod
    def preset(cls, name: str, **kw) -> CmtsParams:
        """``qam64`` / ``qam256``: the Annex B carrier's rate."""
        if name not in QAM_RATES:
            raise CmtsConfigError(f"preset: {name!r} is not one of {', '.join(QAM_RATES)}")
        return cls(**{"channel_rate": QAM_RATES[name], **kw})

    def channel_bytes(self, ip_bytes: int) -> float:
        """Channel bytes one IP packet takes: MAC frame in MPEG-TS packets, pointer field included."""
        frame = ip_bytes + ETHERNET_OVERHEAD + self.mac_header + self.extended_header + self.pointer_field
        return frame * MPEG_PACKET / MPEG_PAYLOAD


CMTS_KEYS = frozenset(f.name for f in fields(CmtsParams)) | {"preset"}


def params_from(given: dict | None) -> CmtsParams:
    """``CmtsParams`` from a scenario's ``mac_params`` mapping (fields plus ``preset``)."""
    given = dict(given or {})
    unknown = set(given) - CMTS_KEYS
    if unknown:
        raise CmtsConfigError(f"unknown key(s) {', '.join(sorted(unknown))} "
                              f"(known: {', '.join(sorted(CMTS_KEYS))})")
    preset = given.pop("preset", None)
    return CmtsParams.preset(preset, **given) if preset else CmtsParams(**given)


class CmtsDownstream:
    """One modem's downstream service flow through the CMTS: a ``Link``.

    Shaper: token bucket of ``rate`` (bits/s) and ``burst`` (bytes) on the Ethernet frame;
    a packet that does not conform waits in the flow's FIFO (``buffer`` bytes of IP
    packets + Ethernet framing, and at most ``max_delay``) until the next calendar slot
    at which it does. Channel: FIFO at ``channel_rate`` shared with MAPs and other modems.
    """

    __slots__ = (
        "accepted", "bg_next", "bg_rng", "bg_time", "burst", "byte_time", "delay", "dropped", "engine",
        "free_at", "limit", "loss", "lost", "map_next", "map_time", "measure_from", "measured", "p",
        "rate", "released", "route", "shaped", "sink", "sink_receive", "t_tokens", "tokens", "wait_byte_sum",
        "wait_sum", "waiting", "wbytes",
    )

    def __init__(self, engine, sink, params: CmtsParams | None = None, *, rate: float, burst: int = DEFAULT_MAX_TRAFFIC_BURST,
                 buffer: int | None = None, delay: float = 0.0, loss=None, rng=None) -> None:
        self.engine = engine
        self.p = p = params or CmtsParams()
        self.sink = sink
        self.sink_receive = sink.receive
        self.route = getattr(sink, "receivers", None)
        self.delay = delay + p.interleave_delay
        self.limit = buffer
        self.loss = loss
        self.rate = rate / 8.0  # bytes/s of Ethernet frame
        self.burst = max(burst, 1522)  # the bucket holds at least one frame (DOCSIS minimum burst)
        self.tokens = float(self.burst)
        self.t_tokens = 0.0
        self.released = 0.0  # the shaper's FIFO: the last packet leaves it at this time
        self.byte_time = 8.0 / p.channel_rate
        self.free_at = 0.0  # the channel is busy until then
        self.map_time = p.map_bytes * MPEG_PACKET / MPEG_PAYLOAD * self.byte_time
        self.map_next = 0.0  # next MAP(s) to go out on the channel
        self.bg_rng = rng or random.Random(0)
        self.bg_time = p.other_frame * MPEG_PACKET / MPEG_PAYLOAD * self.byte_time
        self.bg_next = self._bg_gap() if p.other_load else math.inf
        self.waiting: deque = deque()  # (starts on the channel, bytes) for waiting_bytes
        self.wbytes = 0
        self.accepted = self.dropped = self.lost = self.measured = self.shaped = 0
        self.wait_sum = self.wait_byte_sum = 0.0
        self.measure_from = 0.0

    def _bg_gap(self) -> float:
        return self.bg_rng.expovariate(self.p.other_load / self.bg_time)

    waiting_bytes = Link.waiting_bytes  # the same FIFO bookkeeping: (start of transmission, bytes)

    def _channel_until(self, t: float) -> None:
        """Put the MAPs and other modems' frames that reach the channel by ``t`` on it, in order."""
        p = self.p
        while True:
            nxt = min(self.map_next, self.bg_next)
            if nxt > t:
                return
            start = self.free_at if self.free_at > nxt else nxt
            if nxt == self.map_next:
                self.free_at = start + p.upstreams * self.map_time
                self.map_next += p.map_interval
            else:
                self.free_at = start + self.bg_time
                self.bg_next += self._bg_gap()

    def send(self, pkt) -> bool:
        now = self.engine.now
        p = self.p
        frame = pkt.size + ETHERNET_OVERHEAD
        self.waiting_bytes()
        if self.limit is not None and self.wbytes + frame > self.limit:
            self.dropped += 1
            return False
        # Shaper (Cisco's policer): the bucket decides when the packet conforms, behind the flow's
        # held packets; a held packet then leaves at the next calendar slot. The slot only delays
        # it: the bucket is charged at the conforming time, so the calendar costs no rate.
        t = self.t_tokens if self.t_tokens > now else now
        tok = self.tokens + (t - self.t_tokens) * self.rate
        if tok > self.burst:
            tok = self.burst
        out = t
        if tok < frame:
            t += (frame - tok) / self.rate
            tok = frame
            g = p.granularity
            out = math.ceil(t / g - 1e-9) * g if g else t
            if p.max_delay is not None and out - now > p.max_delay:
                self.dropped += 1
                return False
            self.shaped += 1
        self.tokens = tok - frame
        self.t_tokens = t
        if out < self.released:
            out = self.released  # FIFO: not before the packet ahead of it
        self.released = t = out
        # Channel: MAPs and other modems' frames that arrived first go first.
        self._channel_until(t)
        start = self.free_at if self.free_at > t else t
        end = start + p.channel_bytes(pkt.size) * self.byte_time
        self.free_at = end
        self.accepted += 1
        if start > now:
            self.waiting.append((start, frame))
            self.wbytes += frame
        if now >= self.measure_from:
            self.measured += 1
            self.wait_sum += start - now
            self.wait_byte_sum += frame * (start - now)
        elif start > self.measure_from:
            self.wait_byte_sum += frame * (start - self.measure_from)
        if self.loss is not None and self.loss.lost():
            self.lost += 1
            return True
        route = self.route
        self.engine.at(end + self.delay, route[pkt.flow] if route is not None else self.sink_receive, pkt)
        return True

    receive = send


def make_link(engine, scenario, sink, loss) -> CmtsDownstream:
    """``links.LINKS["cmts"]``: the scenario's downstream service flow through a CMTS
    (``Scenario.mac_params``: ``CmtsParams`` fields, ``preset`` qam64 | qam256)."""
    from hfcprov.sim.loss import NoLoss

    if scenario.direction != "downstream":
        raise CmtsConfigError("mac: cmts is the CMTS's downstream: it needs direction: downstream")
    params = params_from(scenario.mac_params)
    return CmtsDownstream(engine, sink, params, rate=scenario.rate, burst=scenario.burst,
                          buffer=scenario.buffer, delay=scenario.rtt / 2.0,
                          loss=None if isinstance(loss, NoLoss) else loss,
                          rng=random.Random(f"cmts-{scenario.seed}"))


def make_reverse_link(engine, scenario, sink, loss) -> CmtsDownstream:
    """``links.REVERSE_LINKS["cmts"]``: the ACKs (and probe echoes) of an upload come down through
    the CMTS, shaped by ``reverse_rate`` (None: the channel only), ``reverse_buffer``, on a channel
    set by ``reverse_mac_params`` (``CmtsParams`` fields)."""
    from hfcprov.sim.loss import NoLoss

    if scenario.direction != "upstream":
        raise CmtsConfigError("reverse_mac: cmts carries an upload's ACKs down: it needs direction: upstream")
    params = params_from(scenario.reverse_mac_params)
    return CmtsDownstream(engine, sink, params, rate=scenario.reverse_rate or 1e12,
                          buffer=scenario.reverse_buffer, delay=scenario.rtt / 2.0,
                          loss=None if isinstance(loss, NoLoss) else loss,
                          rng=random.Random(f"cmts-ack-{scenario.seed}"))
