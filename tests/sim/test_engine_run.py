"""Engine.run: FIFO lines run in the order one heap would, and the paused garbage collector is safe."""

from __future__ import annotations

import gc
from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# Each line gets events at non-decreasing times (a FIFO hop); timers go straight to the heap. Events
# also schedule more events while running, as hops and senders do.
plans = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 40), st.integers(0, 2)), min_size=1, max_size=60)


@settings(max_examples=200, deadline=None)
@given(plans)
@pytest.mark.slow
def test_lines_run_in_the_order_of_one_heap(plan):
    def play(use_lines):
        eng = Engine()
        lines = [deque() for _ in range(4)]
        last = [0.0] * 4
        order = []

        def schedule(k, when, spawn):
            line = k - 1  # 0: a timer, 1-3: a line
            if line < 0:
                eng.at(when, fire, (k, when, spawn))
                return
            when = max(when, last[line])  # a line's times never decrease
            last[line] = when
            if use_lines:
                eng.queue(lines[line], when, fire, (k, when, spawn))
            else:
                eng.at(when, fire, (k, when, spawn))

        def fire(ev):
            k, when, spawn = ev
            order.append((eng.now, k, when))
            for j in range(spawn):  # later events scheduled from inside an event
                schedule((k + j + 1) % 4, eng.now + 0.5 * (j + 1), 0)

        for k, t, spawn in plan:
            schedule(k, t / 4.0, spawn)
        eng.run(100.0)
        return order, eng.events

    assert play(True) == play(False)


def test_make_builds_the_same_packet_as_the_class_every_slot_set():
    from hfcprov.sim.packet import ACK, Packet, make

    fast = make(ACK, 3, 17, 52, 1.25, True, ((20, 22),))
    slow = Packet(ACK, 3, 17, 52, 1.25, True, ((20, 22),))
    assert all(getattr(fast, k) == getattr(slow, k) for k in Packet.__slots__)  # AttributeError: a slot make() skips
