"""Engine.run pauses the cyclic garbage collector: safe only while events create no reference cycles."""

from __future__ import annotations

import gc

import pytest

from hfcprov.sim import FlowSpec, LossSpec, Scenario, TcpOptions
from hfcprov.sim.engine import Engine
from hfcprov.sim.run import Network

CASES = {
    "sack losses": Scenario(rate=20e6, buffer=32768, rtt=0.03, duration=4, probe_rate=20,
                            data_loss=LossSpec("bernoulli", 0.01), tcp=TcpOptions(variant="cubic")),
    "newreno files": Scenario(rate=3e6, buffer=16384, rtt=0.08, duration=4, flows=[FlowSpec(size=600_000)] * 2,
                              tcp=TcpOptions(variant="newreno", timer_granularity=0.5)),
    "docsis mac": Scenario(rate=5e6, buffer=65536, duration=3, mac="docsis", tcp=TcpOptions(variant="cubic")),
    "lld": Scenario(rate=20e6, buffer=131072, duration=3, aqm="lld",
                    flows=[FlowSpec(variant="prague"), FlowSpec(variant="cubic")]),
    "trains": Scenario(rate=1e9, buffer=2_500_000, rtt=0.02, duration=1, direction="downstream",
                       tcp=TcpOptions(variant="cubic", tso=44)),
}


@pytest.mark.parametrize("name", CASES)
def test_a_run_leaves_no_cyclic_garbage(name):
    sc = CASES[name]
    net = Network(sc)
    gc.collect()
    net.engine.run(sc.duration)
    assert net.engine.events > 1000
    assert gc.collect() == 0  # else objects pile up while the collector is paused


@pytest.mark.parametrize("enabled", [True, False])
def test_run_pauses_the_collector_and_restores_it(enabled):
    seen = []
    eng = Engine()
    eng.at(1.0, lambda _: seen.append(gc.isenabled()))
    (gc.enable if enabled else gc.disable)()
    try:
        eng.run(2.0)
        assert seen == [False] and gc.isenabled() is enabled
    finally:
        gc.enable()
