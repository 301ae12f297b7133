"""buffer advise with DOCSIS-PIE on: the buffer follows burst absorption and the latency target."""

from __future__ import annotations

import pytest

from hfcprov.sim import FlowSpec, Scenario, TcpOptions, run
from hfcprov.queue.inputs import SizingError, SizingInputs
from hfcprov.queue.sizing import size_buffer, throughput_need


def test_with_aqm_the_target_adds_the_standing_queue_and_latency_is_the_target():
    a = size_buffer(SizingInputs(10e6, 0.040, flows=2, congestion_control="cubic", aqm_latency_target=0.010))
    plain_need = throughput_need(SizingInputs(10e6, 0.040, 2, "cubic"))
    assert a.target >= plain_need + 10e6 * 0.010 / 8  # a window's burst plus PIE's standing queue
    assert a.maximum == 3 * int(round(10e6 * (0.150 - 0.020) / 8, 6))  # a third of the buffer may queue first
    assert all(c.latency_under_load <= 0.010 + 1e-12 for c in a.candidates)
    assert a.paper is None and "DOCSIS-PIE" in a.model
    with pytest.raises(SizingError, match="AQM latency target"):
        size_buffer(SizingInputs(10e6, 0.040, aqm_latency_target=0.5))


def test_the_advised_buffer_fills_the_rate_in_the_simulator_and_pie_holds_the_target():
    a = size_buffer(SizingInputs(10e6, 0.040, flows=2, congestion_control="cubic", aqm_latency_target=0.010))
    sc = Scenario(rate=10e6, buffer=a.target, rtt=0.040, duration=30, warmup=8, aqm="docsis-pie",
                  flows=[FlowSpec(), FlowSpec(start=0.5)], sample_interval=None,
                  tcp=TcpOptions(variant="cubic", min_rto=0.2, limited_transmit=True))
    r = run(sc)
    assert r.goodput_bps > 0.95 * 10e6 * 1460 / 1518
    assert r.extra["queue_delay_mean"] < 0.020
