"""Per-flow base RTT: a near and a far server behind one service flow."""

from __future__ import annotations

import pytest

from hfcprov.sim import FlowSpec, Scenario, ScenarioError, TcpOptions, run
from hfcprov.sim.run import Network


def near_far(direction="upstream", variant="sack", **kw) -> Scenario:
    return Scenario(rate=10e6, buffer=64 * 1024, rtt=0.02, direction=direction, duration=30, warmup=5,
                    flows=[FlowSpec(), FlowSpec(rtt=0.08)], tcp=TcpOptions(variant=variant), probe_rate=10, **kw)


@pytest.mark.parametrize("direction", ["upstream", "downstream"])
def test_each_flow_sees_its_own_base_rtt_and_the_probes_the_path(direction):
    def alone(flow: FlowSpec):
        net = Network(near_far(direction).replace(flows=[flow], duration=5, warmup=1))
        return net, net.run()

    near, _ = alone(FlowSpec(start=1))
    far, res = alone(FlowSpec(start=1, rtt=0.08))
    assert 0.02 < near.senders[0].min_rtt < 0.025  # the path plus serialisation (two segments, a delayed ACK)
    assert far.senders[0].min_rtt - near.senders[0].min_rtt == pytest.approx(0.06, abs=1e-9)
    assert res.latency_idle.p50 == pytest.approx(0.02, abs=0.001)  # the probes go to the near end


def test_the_far_flow_gets_less_of_the_shared_tier():
    r = run(near_far())
    near, far = (f.goodput_bps for f in r.flows)
    assert near + far == pytest.approx(r.goodput_bps)
    assert near > 1.5 * far  # Reno's share falls with RTT
    assert r.extra["far_share"] == pytest.approx(far / (near + far))
    assert "far_share" not in run(near_far().replace(flows=[FlowSpec(), FlowSpec()])).extra


def test_a_flow_rtt_below_the_paths_is_refused_naming_the_flow():
    sc = near_far().replace(rtt=0.04, flows=[FlowSpec(rtt=0.04), FlowSpec(rtt=0.02)])
    with pytest.raises(ScenarioError, match=r"flows\[1\]\.rtt: 20 ms is shorter than the path's rtt 40 ms"):
        run(sc)


def test_a_scenario_file_gives_each_flow_its_rtt():
    sc = Scenario.from_dict({"rate": "10M", "buffer": "64KiB", "rtt": "20ms",
                             "flows": [{"start": "1s"}, {"rtt": "80ms"}]}, source="f.yaml", written=True)
    assert [f.rtt for f in sc.flows] == [None, 0.08]
    with pytest.raises(ScenarioError, match=r"f\.yaml: flows\[0\]\.rtt: .*needs its unit"):
        Scenario.from_dict({"rate": "10M", "buffer": "64KiB", "flows": [{"rtt": 80}]}, source="f.yaml", written=True)


def test_a_flow_at_the_paths_rtt_adds_no_hop():
    same = run(near_far().replace(flows=[FlowSpec(), FlowSpec(rtt=0.02)]))
    plain = run(near_far().replace(flows=[FlowSpec(), FlowSpec()]))
    assert same.goodput_bps == plain.goodput_bps and same.extra["events"] == plain.extra["events"]


def test_jitter_delays_data_up_to_its_span_and_never_reorders():
    base = Scenario(rate=10e6, buffer=None, rtt=0.02, duration=10, warmup=2, flows=[FlowSpec(start=1)],
                    tcp=TcpOptions(variant="sack"), probe_rate=0, sample_interval=None)
    plain, jittered = Network(base), Network(base.replace(jitter=0.001))
    plain.run()
    res = jittered.run()
    s = jittered.senders[0]
    assert (s.retransmissions, s.fast_retransmits, s.timeouts) == (0, 0, 0)  # in order: no duplicate ACK
    assert 0 < s.min_rtt - plain.senders[0].min_rtt < 0.001
    assert res.goodput_bps == pytest.approx(run(base).goodput_bps, rel=0.01)
    with pytest.raises(ScenarioError, match=r"jitter: must be >= 0 s"):
        run(base.replace(jitter=-0.001))
