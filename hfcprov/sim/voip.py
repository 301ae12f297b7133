"""VoIP-like UDP streams and their quality: one-way delay, jitter, loss, E-model MOS.

White et al. (2011, Test 2, Figures 9a-9d) scored a G.711 call through a CM
whose upstream was saturated by one TCP upload. The quality model here is the
ITU-T G.107 E-model in the simplified form of Cole and Rosenbluth (2001):

    R = 93.2 - Id(d) - Ie_eff(loss)
    Id(d) = 0.024 d + 0.11 (d - 177.3) H(d - 177.3)     d: mouth-to-ear delay in ms
    Ie_eff = Ie + (95 - Ie) * Ppl / (Ppl / BurstR + Bpl)   (G.107 packet-loss form)

and MOS from R by the G.107 mapping. G.711 with packet-loss concealment has
Ie = 0 and Bpl = 25.1 (G.113 Appendix I); BurstR = 1 means random loss.

Delay seen by the listener is the network's one-way delay plus the de-jitter
buffer plus the codec's packetisation; a packet that arrives after its playout
time is as lost as one dropped in the CM (White et al.: "included in the packet
loss statistic are any packets that exceed the ability of the receiver
de-jitter buffer to deliver them isochronously").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hfcprov.results import LatencyStats
from hfcprov.sim.codecs import CODECS, G711, Codec
from hfcprov.sim.packet import PROBE, Packet

# Cole-Rosenbluth / G.107 constants.
R_DEFAULT = 93.2  # R0 - Is with every other G.107 input at its default
ID_KNEE_MS = 177.3  # one-way delay (ms) where the delay impairment steepens


def delay_impairment(one_way_ms: float) -> float:
    """Id: impairment from mouth-to-ear delay in milliseconds (Cole-Rosenbluth)."""
    d = max(0.0, one_way_ms)
    return 0.024 * d + (0.11 * (d - ID_KNEE_MS) if d > ID_KNEE_MS else 0.0)


def loss_impairment(loss: float, codec: Codec = G711, burst_ratio: float = 1.0) -> float:
    """Ie_eff: impairment from the fraction of packets lost (0..1), G.107 form."""
    if not 0.0 <= loss <= 1.0:
        raise ValueError(f"loss must be a fraction in 0..1, got {loss}")
    ppl = 100.0 * loss
    return codec.ie + (95.0 - codec.ie) * ppl / (ppl / burst_ratio + codec.bpl)


def r_factor(one_way_ms: float, loss: float, codec: Codec = G711, burst_ratio: float = 1.0) -> float:
    return R_DEFAULT - delay_impairment(one_way_ms) - loss_impairment(loss, codec, burst_ratio)


def mos_from_r(r: float) -> float:
    """G.107 mapping of the transmission rating R to an estimated MOS (1.0 .. 4.5)."""
    if r <= 0:
        return 1.0
    if r >= 100:
        return 4.5
    # The cubic dips just below 1 for R under ~6.5; G.107 intends 1 there.
    return max(1.0, 1.0 + 0.035 * r + 7e-6 * r * (r - 60.0) * (100.0 - r))


def mos(one_way_ms: float, loss: float, codec: Codec = G711, burst_ratio: float = 1.0) -> float:
    """Estimated MOS of a call with this mouth-to-ear delay (ms) and packet loss fraction."""
    return mos_from_r(r_factor(one_way_ms, loss, codec, burst_ratio))


def interarrival_jitter(send_times: list[float], recv_times: list[float | None]) -> float:
    """RFC 3550 interarrival jitter (seconds) over the packets that arrived, in send order."""
    j = 0.0
    prev = None
    for s, r in zip(send_times, recv_times):
        if r is None:
            continue
        transit = r - s
        if prev is not None:
            j += (abs(transit - prev) - j) / 16.0
        prev = transit
    return j


@dataclass
class VoiceQuality:
    """What a listener of one stream experienced."""

    sent: int
    network_lost: int
    late: int  # arrived after the de-jitter buffer's playout time
    one_way: LatencyStats  # network one-way delay of the packets that arrived
    jitter: float  # RFC 3550, seconds
    mouth_to_ear: float  # seconds: mean network delay + de-jitter buffer + packetisation
    mos: float

    @property
    def loss(self) -> float:
        return (self.network_lost + self.late) / self.sent if self.sent else 0.0


def assess(send_times: list[float], recv_times: list[float | None], codec: Codec = G711,
           jitter_buffer: float = 0.060, adaptive: bool = True, smoothing: float = 0.99) -> VoiceQuality:
    """Score a received stream.

    ``recv_times[i]`` is None for a packet lost in the network. A packet whose
    one-way delay exceeds its playout delay is late, and late is lost.

    Fixed de-jitter buffer (``adaptive=False``): playout delay is the smallest
    one-way delay seen plus ``jitter_buffer``.
    Adaptive (the default, as ATAs do): the playout delay follows the delay the
    way RFC 3550-era playout algorithms do (Ramjee et al.): exponentially
    smoothed mean ``m`` and deviation ``v`` of the one-way delay (weight
    ``smoothing`` per packet, ~1 s at 50 packets/s), playout at ``m + 4 v``,
    never less than the smallest delay plus ``jitter_buffer / 2``. A slowly
    growing standing queue then costs delay rather than loss, as in practice.
    The mouth-to-ear delay is the mean playout delay plus packetisation.
    """
    if len(send_times) != len(recv_times):
        raise ValueError("send_times and recv_times differ in length")
    delays = [r - s for s, r in zip(send_times, recv_times) if r is not None]
    sent = len(send_times)
    lost = sent - len(delays)
    if not delays:
        return VoiceQuality(sent, lost, 0, LatencyStats.of([], sent), 0.0, math.inf, 1.0)
    floor = min(delays)
    late = 0
    playout_sum = 0.0
    if adaptive:
        m = delays[0]
        v = jitter_buffer / 8
        for d in delays:
            playout = max(m + 4 * v, floor + jitter_buffer / 2)
            playout_sum += playout
            if d > playout:
                late += 1
            m = smoothing * m + (1 - smoothing) * d
            v = smoothing * v + (1 - smoothing) * abs(d - m)
        mean_playout = playout_sum / len(delays)
    else:
        mean_playout = floor + jitter_buffer
        late = sum(1 for d in delays if d > mean_playout)
    mouth_to_ear = mean_playout + codec.interval
    loss = (lost + late) / sent
    return VoiceQuality(
        sent=sent, network_lost=lost, late=late,
        one_way=LatencyStats.of(delays, sent),
        jitter=interarrival_jitter(send_times, recv_times),
        mouth_to_ear=mouth_to_ear,
        mos=mos(mouth_to_ear * 1e3, loss, codec),
    )


def packet_times(start: float, duration: float, codec: Codec = G711) -> list[float]:
    """Send times of a constant-bit-rate voice stream (one packet per codec interval)."""
    n = int(duration / codec.interval)
    return [start + i * codec.interval for i in range(n)]


# -- a voice stream in the simulator ---------------------------------------------------

class VoipSource:
    """Sends one codec packet every codec interval from ``start`` until ``until``."""

    __slots__ = ("codec", "engine", "flow", "link", "send_times", "until")

    def __init__(self, engine, flow: int, link, codec: Codec, until: float) -> None:
        self.engine = engine
        self.flow = flow
        self.link = link
        self.codec = codec
        self.send_times: list[float] = []
        self.until = until

    def tick(self, _=None) -> None:
        now = self.engine.now
        self.link.send(Packet(PROBE, self.flow, len(self.send_times), self.codec.packet_bytes, now))
        self.send_times.append(now)
        nxt = now + self.codec.interval
        if nxt < self.until:
            self.engine.at(nxt, self.tick)

    def receive(self, pkt) -> None:  # nothing comes back to a one-way stream
        pass


class VoipSink:
    __slots__ = ("engine", "recv_times")

    def __init__(self, engine) -> None:
        self.engine = engine
        self.recv_times: dict[int, float] = {}

    def receive(self, pkt) -> None:
        self.recv_times.setdefault(pkt.seq, self.engine.now)


def attach(net, codec: Codec = G711, start: float = 0.0, until: float | None = None):
    """Add a voice stream to a built ``hfcprov.sim.Network``, sent the way its data flows
    (upstream through the CM in White et al.'s Test 2). Returns (source, sink)."""
    flow = len(net.send_host.endpoints)
    if len(net.recv_host.endpoints) != flow:
        raise ValueError("network hosts disagree on flow numbering")
    until = net.sc.duration if until is None else until
    src = VoipSource(net.engine, flow, net.entry, codec, until)
    sink = VoipSink(net.engine)
    net.send_host.add(src)
    net.recv_host.add(sink)
    net.engine.at(start, src.tick)
    return src, sink


class VoiceCall:
    """``Scenario.voice`` in a built ``Network``: the stream, and its score for the result.

    The call runs from the end of warm-up to ``tail`` seconds before the end, so a
    packet still queued at the end is not miscounted.
    """

    __slots__ = ("codec", "jitter_buffer", "sink", "source")

    def __init__(self, net, spec) -> None:
        self.codec = CODECS[spec.codec]
        self.jitter_buffer = spec.jitter_buffer
        sc = net.sc
        until = max(sc.warmup + self.codec.interval, sc.duration - spec.tail)
        self.source, self.sink = attach(net, self.codec, start=sc.warmup, until=until)

    def score(self) -> tuple[float, dict]:
        """E-model MOS and the call's delay, jitter and loss (``RunResult.extra["voip"]``)."""
        src, sink = self.source, self.sink
        recv = [sink.recv_times.get(i) for i in range(len(src.send_times))]
        q = assess(src.send_times, recv, self.codec, self.jitter_buffer)
        return q.mos, {"sent": q.sent, "lost": q.network_lost, "late": q.late, "loss": q.loss,
                       "one_way_mean": q.one_way.mean, "one_way_p99": q.one_way.p99,
                       "jitter": q.jitter, "mouth_to_ear": q.mouth_to_ear}
