"""Build the simulated path for a ``Scenario``, run it, and summarise it as a ``RunResult``.

Topology (data direction = ``scenario.direction``)::

    sender host --[access hop]--> bottleneck (shaped service flow, buffer, data loss, rtt/2) --> receiver host
    sender host <---------------- reverse link (ACKs: optional shaping, ack loss, rtt/2) <------ receiver host

Probes start at the sender side and cross both directions, so their RTT is the
base RTT plus the queueing in both buffers.
"""

from __future__ import annotations

import dataclasses
import os
import random
import time

from hfcprov.results import FlowResult, LatencyStats, RunResult
from hfcprov.sim.cc import congestion_control
from hfcprov.sim.engine import Engine
from hfcprov.sim.link import Jitter, Link, Propagation
from hfcprov.sim.links import LINKS, QUEUES, REVERSE_LINKS
from hfcprov.sim.links import build as build_links
from hfcprov.sim.loss import make_loss
from hfcprov.sim.packet import ECHO, PROBE, Packet
from hfcprov.sim.scenario import PROBE_MIN_SIZE, SSTHRESH_FROM, Scenario, ScenarioError, VoiceSpec
from hfcprov.sim.tcp import TcpReceiver, TcpSender, rcv_window_clamp
from hfcprov.sim.voip import CODECS, G711, Codec, VoiceCall


class Host:
    """An end of the path: hands each arriving packet to the endpoint of its flow."""

    __slots__ = ("endpoints", "receivers")

    def __init__(self) -> None:
        self.endpoints: list = []
        self.receivers: list = []  # bound ``receive`` of each endpoint, indexed by flow

    def add(self, endpoint) -> None:
        self.endpoints.append(endpoint)
        self.receivers.append(endpoint.receive)

    def receive(self, pkt) -> None:
        self.receivers[pkt.flow](pkt)


class ProbeSource:
    """Ping-like probes at a fixed rate; each RTT is filed as idle or loaded by the state at send time."""

    __slots__ = (
        "engine",
        "flow",
        "idle",
        "interval",
        "link",
        "loaded",
        "loaded_at",
        "n_idle",
        "n_loaded",
        "net",
        "sent_loaded",
        "size",
        "size_draw",
        "until",
    )

    def __init__(self, engine, flow, link, rate, size, net, until, size_draw=None) -> None:
        self.engine = engine
        self.flow = flow
        self.link = link
        self.interval = 1.0 / rate
        self.size = size
        self.size_draw = size_draw  # () -> one probe's size; None: every probe ``size``
        self.sent_loaded: list = []
        self.idle: list = []
        self.loaded: list = []
        self.loaded_at: list = []  # send time of each loaded RTT: the loaded probes as a series
        self.n_idle = self.n_loaded = 0
        self.net = net
        self.until = until

    def tick(self, _=None) -> None:
        loaded = self.net.active > 0
        if loaded and self.engine.now < getattr(self.net.bottleneck, "measure_from", 0.0):
            loaded = None  # sent during the warm-up: neither idle nor measured, as the probe measures
        self.sent_loaded.append(loaded)
        if loaded:
            self.n_loaded += 1
        elif loaded is not None:
            self.n_idle += 1
        size = self.size if self.size_draw is None else self.size_draw()
        self.link.send(Packet(PROBE, self.flow, len(self.sent_loaded) - 1, size, self.engine.now))
        nxt = self.engine.now + self.interval
        if nxt < self.until:
            self.engine.at(nxt, self.tick)

    def receive(self, pkt) -> None:
        rtt = self.engine.now - pkt.ts
        filed = self.sent_loaded[pkt.seq]
        if filed:
            self.loaded.append(rtt)
            self.loaded_at.append(pkt.ts)
        elif filed is not None:
            self.idle.append(rtt)


class ProbeEcho:
    __slots__ = ("link",)

    def __init__(self, link) -> None:
        self.link = link

    def receive(self, pkt) -> None:
        self.link.send(Packet(ECHO, pkt.flow, pkt.seq, pkt.size, pkt.ts))


class Network:
    """Everything one run builds; kept so tests and plots can look inside."""

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc
        self.engine = eng = Engine()
        self.active = 0
        rng = random.Random(sc.seed)
        # Separate streams: adding probes or flows never shifts the loss pattern.
        data_rng = random.Random(rng.getrandbits(64))
        ack_rng = random.Random(rng.getrandbits(64))
        # start times and timer phases: what makes repetitions differ on a loss-free path
        phase_rng = random.Random(rng.getrandbits(64))
        jitter_rng = random.Random(rng.getrandbits(64))  # drawn after the others: they do not move
        self.send_host = Host()
        self.recv_host = Host()
        data_loss = make_loss(sc.data_loss.model, sc.data_loss.rate, sc.data_loss.burst, data_rng)
        ack_loss = make_loss(sc.ack_loss.model, sc.ack_loss.rate, sc.ack_loss.burst, ack_rng)
        self.bottleneck, self.reverse = build_links(eng, sc, self.recv_host, self.send_host, data_loss, ack_loss)
        self.entry = self.bottleneck
        if sc.access_rate:
            self.entry = Link(eng, self.bottleneck, capacity=sc.access_rate, overhead=sc.overhead, name="access")
        if sc.jitter:  # timing noise before the bottleneck: no phase locking between flows
            self.entry = Jitter(eng, sc.jitter, jitter_rng, getattr(self.entry, "receive", self.entry.send))
        # segment trains (TcpOptions.tso) only where every hop of the data is a plain FIFO Link
        trains = type(self.bottleneck) is Link and type(self.entry) is Link
        self.senders: list[TcpSender] = []
        self.receivers: list[TcpReceiver] = []
        for i, spec in enumerate(sc.flows):
            opts = sc.tcp
            variant = spec.variant or opts.variant
            if variant != opts.variant:
                opts = dataclasses.replace(opts, variant=variant)
            try:
                cc = congestion_control(variant, opts)
            except KeyError as err:
                raise ScenarioError(f"flows[{i}]: {err.args[0]}") from None
            s = TcpSender(eng, i, self.entry, opts, cc, spec.size, on_done=self._flow_done)
            if not trains:
                s.tso = 1
            r = TcpReceiver(eng, i, self.reverse, opts)
            if r.linux is not None:
                r.linux.path(spec.rtt if spec.rtt is not None else sc.rtt, opts.min_rto)
            self.senders.append(s)
            self.receivers.append(r)
            self.send_host.add(s)
            self.recv_host.add(r)
            s.phase = phase_rng.random() * opts.timer_granularity
            r.phase = phase_rng.random() * opts.delack_timeout
            far = spec.rtt - sc.rtt if spec.rtt is not None else 0.0
            if far > 0 and sc.direction == "upstream":  # the server is the receiver: ACKs leave through it
                r.link = Propagation(eng, far / 2.0, r.link.send)
            elif far > 0:  # a download: the server is the sender
                s.link = Propagation(eng, far / 2.0, getattr(s.link, "receive", s.link.send))
            if cc.ecn:  # an L4S sender: ECT(1) data, CE echoed (issue 20)
                from hfcprov.sim.aqm.ecn import attach

                attach(s, r, self.send_host.receivers, self.recv_host.receivers)
            if far > 0:  # and what reaches the server's end crosses the same stretch (after the ECN wiring)
                host = self.recv_host if sc.direction == "upstream" else self.send_host
                host.receivers[i] = Propagation(eng, far / 2.0, host.receivers[i]).send
            start = spec.start + phase_rng.random() * sc.start_jitter
            eng.at(min(start, sc.duration), self._flow_start, s)
        self.probe = None
        if sc.probe_rate > 0:
            pid = len(sc.flows)
            draw = None
            if sc.probe_size_sd:  # its own stream, drawn after the others: a deviation moves no other draw
                size_rng = random.Random(rng.getrandbits(64))
                draw = lambda: max(PROBE_MIN_SIZE, round(size_rng.gauss(sc.probe_size, sc.probe_size_sd)))  # noqa: E731
            self.probe = ProbeSource(eng, pid, self.entry, sc.probe_rate, sc.probe_size, self, sc.duration, draw)
            self.send_host.add(self.probe)
            self.recv_host.add(ProbeEcho(self.reverse))
            eng.at(phase_rng.random() / sc.probe_rate, self.probe.tick)
        self.voice = None
        if sc.voice is not None:
            self.voice = VoiceCall(self, sc.voice)
        self.series: dict[str, list] = {}
        if sc.sample_interval:
            self.series["queue_bytes"] = []
            for i in range(len(self.senders)):
                self.series[f"cwnd.{i}"] = []
            eng.at(0.0, self._sample)
        self.delivered_at_warmup = [0] * len(self.senders)
        self.bottleneck.measure_from = sc.warmup
        if sc.warmup > 0:
            eng.at(sc.warmup, self._warmup_done)

    def _flow_start(self, s: TcpSender) -> None:
        self.active += 1
        s.start()

    def _flow_done(self, s: TcpSender) -> None:
        self.active -= 1

    def _warmup_done(self, _=None) -> None:
        self.delivered_at_warmup = [self.received(i) for i in range(len(self.receivers))]

    def _sample(self, _=None) -> None:
        t = self.engine.now
        self.series["queue_bytes"].append((t, self.bottleneck.waiting_bytes()))
        for i, s in enumerate(self.senders):
            self.series[f"cwnd.{i}"].append((t, s.cwnd if s.started is not None else 0.0))
        nxt = t + self.sc.sample_interval
        if nxt <= self.sc.duration:
            self.engine.at(nxt, self._sample)

    def delivered(self, i: int) -> int:
        """Application bytes delivered in order to receiver ``i``."""
        got = self.receivers[i].rcv_nxt * self.sc.tcp.mss
        size = self.sc.flows[i].size
        return min(got, size) if size else got

    def received(self, i: int) -> int:
        """Distinct application bytes that reached receiver ``i``, in order or not.

        Goodput over a window uses this, so a hole open at the window's start
        does not make the window look better than the link.
        """
        r = self.receivers[i]
        segs = r.rcv_nxt + r.held()
        got = segs * self.sc.tcp.mss
        size = self.sc.flows[i].size
        return min(got, size) if size else got

    def run(self) -> RunResult:
        t0, c0 = time.perf_counter(), time.process_time()
        self.engine.run(self.sc.duration)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        return self.result(wall, cpu)

    def result(self, wall: float, cpu: float | None = None) -> RunResult:
        sc = self.sc
        window = sc.duration - sc.warmup
        flows = []
        total = 0
        for i, (s, spec) in enumerate(zip(self.senders, sc.flows)):
            got = self.received(i) - self.delivered_at_warmup[i]
            total += got
            if spec.size and s.done_at is not None:
                completion = s.done_at - s.started
                goodput = spec.size * 8 / completion if completion > 0 else 0.0
            else:
                completion = None
                span = sc.duration - max(sc.warmup, spec.start)
                goodput = got * 8 / span if span > 0 else 0.0
            flows.append(FlowResult(goodput_bps=goodput, bytes_delivered=self.delivered(i),
                                    retransmissions=s.retransmissions, timeouts=s.timeouts,
                                    completion_time=completion))
        b = self.bottleneck
        offered = b.accepted + b.dropped
        idle = LatencyStats()
        loaded = LatencyStats()
        if self.probe is not None:
            # a probe still in flight at the end is not lost; count only those old enough to be answered
            idle = LatencyStats.of(self.probe.idle, sent=max(len(self.probe.idle), self.probe.n_idle - 1))
            loaded = LatencyStats.of(self.probe.loaded, sent=max(len(self.probe.loaded), self.probe.n_loaded - 1))
            if sc.sample_interval:  # with the other series: every RTT under load, for percentiles and CDFs
                self.series["rtt_loaded"] = list(zip(self.probe.loaded_at, self.probe.loaded))
        events = self.engine.events
        queue_area = b.wait_byte_sum
        if hasattr(b, "wait_beyond"):  # the token-bucket link books each wait on arrival
            queue_area -= b.wait_beyond(sc.duration)
        extra = {
            "events": events,
            "wall_s": wall,
            "cpu_s": cpu,  # process CPU time: what to compare on a shared machine
            "events_per_s": events / wall if wall > 0 else None,
            "queue_drops": b.dropped,
            "plant_losses": b.lost,
            "ack_losses": self.reverse.lost,
            "ack_queue_drops": self.reverse.dropped,
            "queue_delay_mean": b.wait_sum / b.measured if b.measured else 0.0,
            "queue_bytes_mean": queue_area / window if window > 0 else 0.0,
            "fast_retransmits": sum(s.fast_retransmits for s in self.senders),
            "timeouts": sum(s.timeouts for s in self.senders),
            "retransmissions": sum(s.retransmissions for s in self.senders),
            "scenario": sc.name,
        }
        if hasattr(b, "mac_stats"):  # the MULPI-timed request-grant CM (issue 28)
            extra["mac"] = b.mac_stats()
        far = [i for i, spec in enumerate(sc.flows) if spec.rtt is not None and spec.rtt > sc.rtt]
        if far and total:  # flows to a farther server: the share of the goodput they got
            extra["far_share"] = sum(flows[i].goodput_bps for i in far) / sum(f.goodput_bps for f in flows)
        if hasattr(b, "aqm_stats"):  # DOCSIS-PIE / LLD hop (issue 20)
            extra["aqm"] = b.aqm_stats()
        mos = None
        if self.voice is not None:
            mos, extra["voip"] = self.voice.score()
        return RunResult(
            source="sim", duration=window, goodput_bps=total * 8 / window if window > 0 else 0.0,
            flows=flows, shaped_rate_bps=sc.rate, latency_idle=idle, latency_loaded=loaded,
            packet_loss=(b.dropped + b.lost) / offered if offered else 0.0,
            series=self.series, extra=extra, mos=mos)


def run(scenario: Scenario) -> RunResult:
    """Simulate one scenario; the same scenario (seed included) gives the same result bit for bit."""
    _check(scenario)
    return Network(scenario).run()


def run_with_voice(scenario, codec: Codec = G711, jitter_buffer: float = 0.060, tail: float = 3.0):
    """``hfcprov.sim.run`` with ``Scenario.voice`` set (the lab runner's entry point)."""
    name = next((k for k, c in CODECS.items() if c == codec), None)
    if name is None:
        raise ValueError(f"codec {codec.name}: not in hfcprov.sim.codecs.CODECS")
    return run(scenario.replace(voice=VoiceSpec(codec=name, jitter_buffer=jitter_buffer, tail=tail)))


def check(sc: Scenario, source: str | None = None) -> None:
    """What ``run`` refuses in a scenario, as one ``ScenarioError`` naming the key; ``source``: where it was
    read (a file, a sweep point), named first. A file's loader calls this, so a bad value is reported with
    its file before anything runs."""
    try:
        _check(sc)
    except ScenarioError as err:
        if source is None:
            raise
        raise ScenarioError(f"{source}: {err}") from None


def _check(sc: Scenario) -> None:
    if sc.rate <= 0:
        raise ScenarioError("rate: must be > 0")
    if sc.duration <= 0:
        raise ScenarioError("duration: must be > 0")
    if not 0 <= sc.warmup < sc.duration:
        raise ScenarioError("warmup: must be >= 0 and shorter than duration")
    if sc.tcp.mss <= 0:
        raise ScenarioError("tcp.mss: must be > 0")
    if sc.tcp.dupthresh < 1:
        raise ScenarioError("tcp.dupthresh: must be >= 1")
    if sc.tcp.initial_window < 1:
        raise ScenarioError("tcp.initial_window: must be >= 1 segment")
    if sc.tcp.ssthresh_from not in SSTHRESH_FROM:
        raise ScenarioError(f"tcp.ssthresh_from: {sc.tcp.ssthresh_from!r} is not one of {', '.join(SSTHRESH_FROM)}")
    if sc.tcp.tso < 1:
        raise ScenarioError("tcp.tso: must be >= 1 segment per packet")
    if sc.tcp.kernel_hz < 1:
        raise ScenarioError("tcp.kernel_hz: must be >= 1 tick per second")
    if sc.tcp.delack_count < 1:
        raise ScenarioError("tcp.delack_count: must be >= 1")
    for key in ("rcv_init_window", "rcv_window_clamp"):
        if getattr(sc.tcp, key) < 0:
            raise ScenarioError(f"tcp.{key}: {getattr(sc.tcp, key)} must be >= 0 (0: the default)")
    if sc.tcp.quickack and rcv_window_clamp(sc.tcp) < sc.tcp.mss:
        # Linux's receiver (tcp.LinuxAckState) opens its window a whole segment at a time
        raise ScenarioError(f"tcp.rcv_window_clamp: {rcv_window_clamp(sc.tcp)} bytes cannot "
                            f"hold one {sc.tcp.mss}-byte segment (tcp.mss)")
    if sc.probe_rate < 0:
        raise ScenarioError("probe_rate: must be >= 0 probes per second")
    if sc.probe_size < PROBE_MIN_SIZE or sc.probe_size_sd < 0:
        raise ScenarioError(f"probe_size: must be >= {PROBE_MIN_SIZE} bytes (IP and UDP headers), "
                            "probe_size_sd >= 0")
    if sc.start_jitter < 0:
        raise ScenarioError("start_jitter: must be >= 0 s")
    if sc.jitter < 0:
        raise ScenarioError("jitter: must be >= 0 s")
    if sc.sample_interval is not None and sc.sample_interval <= 0:
        raise ScenarioError("sample_interval: must be > 0 (or null for no series)")
    for i, f in enumerate(sc.flows):
        if not 0 <= f.start < sc.duration:
            raise ScenarioError(f"flows[{i}].start: {f.start:g} s is not within the {sc.duration:g} s run")
        if f.rtt is not None and f.rtt < sc.rtt - 1e-12:
            raise ScenarioError(f"flows[{i}].rtt: {f.rtt * 1e3:g} ms is shorter than the path's rtt "
                                f"{sc.rtt * 1e3:g} ms, which every flow crosses (set rtt to the nearest server's)")
    for name in ("data_loss", "ack_loss"):
        loss = getattr(sc, name)
        if not 0 <= loss.rate < 1:
            raise ScenarioError(f"{name}.rate: must be in [0, 1)")
        if loss.burst < 1:
            raise ScenarioError(f"{name}.burst: a mean loss burst is at least 1 packet, not {loss.burst:g}")
        if loss.model not in ("none", "bernoulli", "gilbert"):
            raise ScenarioError(f"{name}.model: {loss.model!r} is not one of none, bernoulli, gilbert")
    for key, registry, what in (("mac", LINKS, "link model"), ("reverse_mac", REVERSE_LINKS, "link model"),
                                ("aqm", QUEUES, "queue discipline")):
        if getattr(sc, key) not in registry:
            raise ScenarioError(f"{key}: unknown {what} {getattr(sc, key)!r} (known: {', '.join(registry)})")
    if sc.aqm_params and sc.aqm == "none":
        raise ScenarioError("aqm_params: only used with an aqm (known: " + ", ".join(k for k in QUEUES if k != "none") + ")")
    if sc.aqm not in ("none", "docsis-pie") and sc.mac not in ("tokenbucket", "docsis"):
        raise ScenarioError(f"aqm: {sc.aqm} runs in a modem's upstream (mac: tokenbucket or docsis), not mac: {sc.mac}")
    if sc.aqm == "docsis-pie" and sc.mac not in ("tokenbucket", "docsis"):
        raise ScenarioError(f"aqm: docsis-pie runs in a modem's upstream (mac: tokenbucket or docsis), not mac: {sc.mac}")
    if sc.pgs is not None:
        if sc.aqm != "lld":
            raise ScenarioError("pgs: Proactive Grant Service is for the low-latency flow of an LLD aggregate (aqm: lld)")
        if sc.pgs.rate <= 0:
            raise ScenarioError("pgs.rate: the Guaranteed Grant Rate must be > 0")
        if sc.pgs.interval is not None and sc.pgs.interval <= 0:
            raise ScenarioError("pgs.interval: the Guaranteed Grant Interval must be > 0 (or null: one MAP interval)")
    if sc.mac_params and sc.mac == "tokenbucket":
        raise ScenarioError("mac_params: only used with mac: docsis or cmts (a link model that has them)")
    if sc.reverse_mac_params and sc.reverse_mac == "tokenbucket":
        raise ScenarioError("reverse_mac_params: only used with reverse_mac: docsis or cmts")
    if sc.reverse_mac == "docsis" and sc.direction != "downstream":
        raise ScenarioError("reverse_mac: a request-grant CM carries the ACKs upstream, so the data "
                            "must flow downstream (direction: downstream)")
    if sc.buffer is not None and sc.buffer < sc.tcp.mss + sc.tcp.header_bytes + sc.overhead:
        raise ScenarioError(f"buffer: {sc.buffer} bytes cannot hold one full-size packet")


def run_many(scenarios, jobs: int | None = None, progress=None, worker=None) -> list[RunResult]:
    """Run scenarios in parallel processes (``jobs``; default: CPU count); results in input order.

    ``progress(done, total)`` is called after each finished scenario. ``worker`` (picklable, default
    ``run``) runs one scenario, e.g. ``functools.partial(hfcprov.sim.upload.simulate, voice=True)``.
    """
    worker = worker or run
    scenarios = list(scenarios)
    for sc in scenarios:
        _check(sc)
    jobs = jobs or os.cpu_count() or 1
    total = len(scenarios)
    if jobs <= 1 or total <= 1:
        out = []
        for sc in scenarios:
            out.append(worker(sc))
            if progress:
                progress(len(out), total)
        return out
    from concurrent.futures import ProcessPoolExecutor

    out = [None] * total
    done = 0
    chunk = max(1, min(16, total // (jobs * 4)))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for i, res in enumerate(pool.map(worker, scenarios, chunksize=chunk)):
            out[i] = res
            done += 1
            if progress:
                progress(done, total)
    return out
