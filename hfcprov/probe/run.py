"""One measurement: idle RTT, then RTT under TCP load and goodput, as a ``RunResult``.

Timeline of a run::

    |-- idle --|-- warm-up --|------- measured ------|
    probes ..................................................
               TCP flows start                        flows end

Idle RTT comes from the probes sent in the idle phase, loaded RTT from those
sent in the measured phase, goodput from each receiver's bytes in the
measured phase.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from hfcprov.probe.bulk import run_flows
from hfcprov.probe.errors import ProbeError
from hfcprov.probe.latency import LatencyProbe
from hfcprov.probe.target import check_target
from hfcprov.results import FlowResult, LatencyStats, RunResult


@dataclass
class ProbeSpec:
    target: str
    port: int = 5201  # responder: UDP echo and TCP bulk
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


def measure(spec: ProbeSpec) -> RunResult:
    target = check_target(spec.target)
    if spec.flows < 0:
        raise ProbeError(f"flows {spec.flows}: expected >= 0")
    probe = LatencyProbe(target, kind=spec.probe, rate=spec.rate, port=spec.port).start()
    t_start = time.monotonic()
    try:
        time.sleep(spec.idle)
        t_load = time.monotonic()
        flows = run_flows(target, spec.port, spec.direction, spec.flows, spec.warmup + spec.duration,
                          spec.cc) if spec.flows else []
        if not spec.flows:
            time.sleep(spec.warmup + spec.duration)
    finally:
        probes = probe.stop()
    t_measure = t_load + spec.warmup
    t_end = t_measure + spec.duration

    def stats(lo, hi):
        phase = [p for p in probes if lo <= p.sent_at < hi]
        return LatencyStats.of([p.rtt for p in phase if p.rtt is not None], sent=len(phase)), phase

    idle, _ = stats(t_start, t_load)
    loaded, _ = stats(t_measure, t_end)
    results, series = [], {}
    series["rtt"] = [(round(p.sent_at - t_start, 6), p.rtt) for p in probes if p.rtt is not None]
    total_series: dict[float, float] = {}
    for k, f in enumerate(flows):
        tl = f.timeline
        if not tl.t:
            results.append(FlowResult(goodput_bps=0.0))
            continue
        origin = tl.t[0]  # the receiver's start mark: load start on its own clock
        w0, w1 = origin + spec.warmup, origin + spec.warmup + spec.duration
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
               "idle_time": spec.idle})
