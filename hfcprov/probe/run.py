"""One measurement: idle RTT, then RTT under TCP load and goodput, as a ``RunResult``.

Timeline of a run::

    |-- idle --|-- warm-up --|------- measured ------|
    probes ..................................................
               TCP flows start                        flows end

Idle RTT comes from the probes sent in the idle phase, loaded RTT from those
sent in the measured phase, goodput from each receiver's bytes in the
measured phase.

Goodput counts only application bytes that crossed the link inside the window.
A receiver hands bytes to the application in order: while a segment is missing
(loss recovery), bytes that arrived earlier wait, and are delivered in a burst
when the hole fills. A window that starts during recovery therefore counts
bytes that crossed before it (2 Mb/s, 256 KiB, Reno, 3 s warm-up: 2.1 Mb/s
"measured" on a link carrying at most 1.91 Mb/s of payload). So, upstream (the
sender is this side), the measured phase starts at the first moment after the
warm-up when every sender is out of loss recovery (``tcpi_ca_state`` open or
CWR: nothing missing at the receiver), within ``adaptive_warmup`` more seconds,
or failing that (many flows: one is nearly always recovering) at the moment
with the fewest senders in recovery:
after slow start's overshoot into a deep buffer at a long loaded RTT, recovery
takes several seconds. The flows run warm-up + ``adaptive_warmup`` + duration.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass

from hfcprov.probe import DEFAULT_PORT
from hfcprov.probe.bulk import CLEAN_STATES, run_flows
from hfcprov.probe.errors import ProbeError
from hfcprov.probe.latency import LatencyProbe
from hfcprov.probe.target import check_target
from hfcprov.results import FlowResult, LatencyStats, RunResult


@dataclass
class ProbeSpec:
    target: str
    port: int = DEFAULT_PORT  # responder: UDP echo and TCP bulk
    direction: str = "upstream"
    flows: int = 1
    duration: float = 5.0  # measured seconds, warm-up excluded
    warmup: float = 2.0
    idle: float = 2.0  # seconds of probes before any load
    cc: str = "cubic"
    probe: str = "icmp"  # or "udp"
    rate: float = 20.0  # probes per second
    shaped_rate_bps: float | None = None  # the service flow's rate, if known, for utilization
    source: str = "modem"  # "emu" when the path is the emulated modem
    # upstream: up to this many more seconds of warm-up, waiting for the senders to leave loss
    # recovery before the measured phase starts (0: a fixed warm-up)
    adaptive_warmup: float = 5.0
    # where the probe leaves from on a multi-homed host: a local address, an interface (None: the route's)
    bind_source: str | None = None
    interface: str | None = None


def measure(spec: ProbeSpec) -> RunResult:
    target = check_target(spec.target)
    if spec.flows < 0:
        raise ProbeError(f"flows {spec.flows}: expected >= 0")
    probe = LatencyProbe(target, kind=spec.probe, rate=spec.rate, port=spec.port, source=spec.bind_source,
                         interface=spec.interface).start()
    t_start = time.monotonic()
    extra = spec.adaptive_warmup if spec.direction == "upstream" and spec.flows else 0.0
    try:
        time.sleep(spec.idle)
        t_load = time.monotonic()
        earliest = t_load + spec.warmup
        flows = run_flows(target, spec.port, spec.direction, spec.flows, spec.warmup + extra + spec.duration,
                          spec.cc, end_at=lambda fl: window_end(fl, earliest, extra, spec.duration, t_load),
                          source=spec.bind_source, interface=spec.interface) if spec.flows else []
        if not spec.flows:
            time.sleep(spec.warmup + spec.duration)
    finally:
        probes = probe.stop()
    # one window for every flow: per-flow windows would let the flows' sum exceed the link
    t_measure = window_start(flows, t_load + spec.warmup, extra)
    t_end = t_measure + spec.duration

    def stats(lo, hi):
        phase = [p for p in probes if lo <= p.sent_at < hi]
        return LatencyStats.of([p.rtt for p in phase if p.rtt is not None], sent=len(phase)), phase

    idle, _ = stats(t_start, t_load)
    loaded, _ = stats(t_measure, t_end)
    results, series = [], {}
    series["rtt"] = [(round(p.sent_at - t_start, 6), p.rtt) for p in probes if p.rtt is not None]
    # the RTTs under load, as the simulator records them: what a report's percentiles and CDFs draw
    series["rtt_loaded"] = [(round(p.sent_at - t_start, 6), p.rtt) for p in probes
                            if p.rtt is not None and t_measure <= p.sent_at < t_end]
    total_series: dict[float, float] = {}
    for k, f in enumerate(flows):
        tl = f.timeline
        if not tl.t:
            results.append(FlowResult(goodput_bps=0.0))
            continue
        origin = tl.t[0]  # the receiver's start mark: load start on its own clock
        w0 = origin + (t_measure - t_load)
        w1 = w0 + spec.duration
        results.append(FlowResult(goodput_bps=tl.goodput(w0, w1), bytes_delivered=int(tl.at(w1) - tl.at(w0)),
                                  retransmissions=f.retransmissions))
        per_s = [(t + (t_load - t_start), v) for t, v in tl.per_second(w0, w1, origin)]
        series[f"goodput_bps.{k}"] = per_s
        for t, v in per_s:
            total_series[t] = total_series.get(t, 0.0) + v
    series["goodput_bps"] = sorted(total_series.items())
    return RunResult(
        source=spec.source, duration=spec.duration, goodput_bps=sum(r.goodput_bps for r in results),
        flows=results, shaped_rate_bps=spec.shaped_rate_bps, latency_idle=idle, latency_loaded=loaded,
        series=series,
        extra={"target": target, "direction": spec.direction, "flows": spec.flows, "congestion_control": spec.cc,
               "probe": spec.probe, "probe_rate": spec.rate, "probe_iface": probe.iface,
               "timestamps": "kernel capture (AF_PACKET, SO_TIMESTAMPNS)", "warmup": spec.warmup,
               "warmup_used": round(t_measure - t_load, 3),
               "idle_time": spec.idle})


END_MARGIN = 0.3  # s the flows run past the window's end, so the receivers' records cover it


def window_end(flows, earliest: float, extra: float, duration: float, load_start: float) -> float | None:
    """While the flows run: when they may stop, once the measured window's start is known (the first
    all-clean state sample after ``earliest``, or, ``extra`` later, ``window_start``'s choice), else None.
    Saves the rest of the ``extra`` allowance when recovery ends early.

    Each receiver places the window from its own start, when the flow's header reached it: flows
    connect one after another (ten at 100 ms: a second), so the stop waits for the last one's window."""
    now = time.monotonic()
    if now < earliest:
        return None
    lag = max([f.started - load_start for f in flows if f.started is not None] or [0.0])
    if extra <= 0:
        return earliest + duration + lag + END_MARGIN
    watched = [f.states for f in flows if f.states]
    if watched:
        upto = min(now, earliest + extra)
        for t in [earliest, *sorted({t for states in watched for t, _ in states if earliest < t <= upto})]:
            if all(_state_at(states, t) in CLEAN_STATES for states in watched):
                return t + duration + lag + END_MARGIN
    if now < earliest + extra:
        return None
    return window_start(flows, earliest, extra) + duration + lag + END_MARGIN


def window_start(flows, earliest: float, extra: float) -> float:
    """When the measured phase starts: the first congestion-state sample at or after ``earliest`` at
    which every sender was out of loss recovery, at most ``extra`` seconds later; if there is none,
    the first moment with the fewest senders in recovery. Flows without state samples (downstream:
    the sender is the far end) do not delay it."""
    if extra <= 0:
        return earliest
    watched = [f.states for f in flows if f.states]
    if not watched:
        return earliest
    latest = earliest + extra
    times = sorted({t for states in watched for t, _ in states if earliest <= t <= latest})
    best, fewest = earliest, len(watched) + 1
    for t in [earliest, *times]:
        busy = sum(_state_at(states, t) not in CLEAN_STATES for states in watched)
        if busy == 0:
            return t
        if busy < fewest:
            best, fewest = t, busy
    return best


def _state_at(states: list, t: float) -> int | None:
    """The sender's state at ``t``: its last sample at or before ``t``."""
    i = bisect.bisect_right(states, (t, float("inf")))
    return states[i - 1][1] if i else None
