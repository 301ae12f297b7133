"""Constant-rate packet sources and a recording sink for driving MAC links in tests."""

import importlib.util
import random
import sys
from pathlib import Path

from hfcprov.sim.engine import Engine
from hfcprov.queue.grant import MacParams
from hfcprov.sim.mac import CableModem, UpstreamChannel
from hfcprov.sim.packet import DATA, Packet


class Sink:
    def __init__(self, engine):
        self.engine = engine
        self.times = []
        self.delays = []
        self.seqs = []
        self.bytes = 0

    def receive(self, pkt):
        self.times.append(self.engine.now)
        self.delays.append(self.engine.now - pkt.ts)
        self.seqs.append(pkt.seq)
        self.bytes += pkt.size


def cbr(engine, link, flow, pps, size, start=0.0):
    def tick(k):
        link.send(Packet(DATA, flow, k, size, engine.now))
        engine.after(1.0 / pps, tick, k + 1)
    engine.at(start, tick, 0)


def run_cms(params: MacParams, n_cm=1, pps=100.0, size=1500, duration=2.0, seed=1, **cm_kw):
    engine = Engine()
    channel = UpstreamChannel(engine, params, random.Random(seed))
    sinks = [Sink(engine) for _ in range(n_cm)]
    cms = [CableModem(channel, sinks[i], **cm_kw) for i in range(n_cm)]
    for i, cm in enumerate(cms):
        cbr(engine, cm, i, pps, size, start=1e-4 * i)
    engine.run(duration)
    return engine, channel, cms, sinks


def mbps(sink, duration):
    return sink.bytes * 8 / duration / 1e6


def bench_module(name: str):
    """A module of ``bench/`` (paper data and fits live there, not in the library)."""
    path = Path(__file__).resolve().parents[2] / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"hfcprov_bench_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod
