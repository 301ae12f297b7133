"""Scenario files, units at the edge, overrides, sweeps and service flows."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.model import BufferControl, ServiceFlow
from hfcprov.sim import Scenario, ScenarioError
from hfcprov.sim.scenario import apply_overrides
from hfcprov.sim.sweep import load_sweep


def test_units_are_parsed_once_into_plain_numbers():
    sc = Scenario.from_dict({
        "rate": "5M", "buffer": "64KiB", "rtt": "40ms", "peak": "20Mbps", "burst": "3044",
        "flows": [{"start": "2s", "size": "3MB"}, {}],
        "tcp": {"variant": "reno", "mss": 1460, "socket_buffer": "8KiB", "timer": "coarse",
                "super_fast_retransmit": True},
        "data_loss": 0.01, "ack_loss": {"model": "gilbert", "rate": 0.02, "burst": 4},
        "duration": "1min",
    })
    assert (sc.rate, sc.buffer, sc.rtt, sc.peak, sc.burst) == (5e6, 65536, 0.04, 20e6, 3044)
    assert sc.flows[0].start == 2.0 and sc.flows[0].size == 3 * 1024 * 1024 and sc.flows[1].size is None
    assert sc.tcp.socket_buffer == 8192 and sc.tcp.timer_granularity == 0.5 and sc.tcp.min_rto == 2.0
    assert sc.tcp.dupthresh == 1
    assert (sc.data_loss.model, sc.data_loss.rate) == ("bernoulli", 0.01)
    assert (sc.ack_loss.model, sc.ack_loss.burst) == ("gilbert", 4.0)
    assert sc.duration == 60.0


@pytest.mark.parametrize("d,message", [
    ({"rate": "5M", "buffer": "64KiB", "rtt": "forty"}, "f.yaml: rtt: bad duration 'forty'"),
    ({"rate": "5M", "buffer": "64KiB", "tcp": {"mss": "x"}}, "f.yaml: tcp.mss: bad size 'x'"),
    ({"rate": "5M", "buffer": "64KiB", "tcp": {"colour": 1}}, "f.yaml: tcp.colour: unknown key"),
    ({"rate": "5M", "buffer": "64KiB", "flows": [{"start": "1s", "sise": 3}]}, "f.yaml: flows[0].sise: unknown key"),
    ({"rate": "5M", "buffer": "64KiB", "direction": "sideways"}, "f.yaml: direction: 'sideways' is not one of"),
    ({"rate": "5M", "buffer": "64KiB", "tcp": {"timer": "slow"}}, "f.yaml: tcp.timer: 'slow' is not one of"),
    ({"rate": "5M", "buffer": "64KiB", "tcp": {"ssthresh_from": "window"}},
     "f.yaml: tcp.ssthresh_from: 'window' is not one of flightsize, pipe, cwnd"),
    ({"rate": "5M", "buffer": "64KiB", "tcp": {"limited_transmit": "maybe"}},
     "f.yaml: tcp.limited_transmit: expected true or false"),
    ({"buffer": "64KiB"}, "f.yaml: missing key 'rate'"),
])
def test_errors_name_the_file_and_the_key(d, message):
    with pytest.raises(ScenarioError) as err:
        Scenario.from_dict(d, source="f.yaml")
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_overrides_reach_nested_keys_and_loss_shorthand():
    d = apply_overrides({"rate": "5M", "buffer": "64KiB", "data_loss": 0.01},
                        ["tcp.mss=536", "rtt=100ms", "data_loss.burst=3", "flows=4"])
    sc = Scenario.from_dict(d)
    assert sc.tcp.mss == 536 and sc.rtt == 0.1 and len(sc.flows) == 4
    assert (sc.data_loss.model, sc.data_loss.rate, sc.data_loss.burst) == ("bernoulli", 0.01, 3.0)
    with pytest.raises(ScenarioError, match="expected key=value"):
        apply_overrides({}, ["tcp.mss"])


def test_from_service_flow_takes_rate_burst_peak_and_target_buffer():
    sf = ServiceFlow(direction="upstream", ref=1, max_sustained_rate=2e6, max_traffic_burst=3044,
                     peak_rate=10e6, buffer=BufferControl(minimum=4096, target=16384, maximum=65536), path="24[0]")
    sc = Scenario.from_service_flow(sf, rtt=0.04)
    assert (sc.rate, sc.burst, sc.peak, sc.buffer, sc.direction, sc.rtt) == (2e6, 3044, 10e6, 16384, "upstream", 0.04)
    # no Buffer Control: the modem's default queue (hfcprov.model), as the emulated modem gives
    assert Scenario.from_service_flow(ServiceFlow(direction="upstream", max_sustained_rate=1e6)).buffer == 65536
    with pytest.raises(ScenarioError, match=r"24\[1\]: no Max Sustained"):
        Scenario.from_service_flow(ServiceFlow(direction="upstream", path="24[1]"))


def test_sweep_is_the_cartesian_product_in_key_order(tmp_path):
    f = tmp_path / "sweep.yaml"
    f.write_text("base: {rate: 2M, buffer: 64KiB, duration: 5s}\n"
                 "grid:\n  rate: [2M, 5M]\n  buffer: [16KiB, 64KiB, 256KiB]\n  tcp.variant: [reno, sack]\n")
    points = load_sweep(f)
    assert len(points) == 12
    assert points[0][0] == {"rate": "2M", "buffer": "16KiB", "tcp.variant": "reno"}
    assert [sc.buffer for _, sc in points[:6:2]] == [16384, 65536, 262144]
    assert points[-1][1].rate == 5e6 and points[-1][1].tcp.variant == "sack"
    f.write_text("base: {rate: 2M, buffer: 64KiB}\ngrid:\n  buffer: [16KiB, lots]\n")
    with pytest.raises(ScenarioError, match=r"buffer=lots\]: buffer: bad size 'lots'"):
        load_sweep(f)


_q = {"allow_nan": False, "allow_infinity": False}


@settings(max_examples=80, deadline=None)
@given(rate=st.floats(1e4, 1e10, **_q), buffer=st.integers(1600, 1 << 24), rtt=st.floats(0, 2, **_q),
       mss=st.integers(100, 9000), loss=st.floats(0, 0.5, **_q), flows=st.integers(0, 8),
       variant=st.sampled_from(["reno", "newreno", "sack"]), seed=st.integers(0, 2**31))
def test_a_scenario_round_trips_through_its_plain_dict(rate, buffer, rtt, mss, loss, flows, variant, seed):
    sc = Scenario.from_dict({"rate": rate, "buffer": buffer, "rtt": rtt, "flows": flows, "seed": seed,
                             "tcp": {"mss": mss, "variant": variant}, "data_loss": loss})
    assert Scenario.from_dict(sc.to_dict()) == sc


@pytest.mark.parametrize("change,message", [
    ({"probe_rate": -1}, "probe_rate: must be >= 0"),
    ({"flows": [{"start": "20s"}]}, "flows[0].start: 20 s is not within the 10 s run"),
    ({"warmup": "10s"}, "warmup: must be >= 0 and shorter than duration"),
    ({"data_loss": 1.0}, "data_loss.rate: must be in [0, 1)"),
    ({"data_loss": {"model": "gilbert", "rate": 0.01, "burst": 0.5}}, "data_loss.burst: a mean loss burst is at least"),
    ({"tcp": {"dupthresh": 0}}, "tcp.dupthresh: must be >= 1"),
])
def test_impossible_scenarios_are_refused_before_running(change, message):
    from hfcprov.sim import run

    sc = Scenario.from_dict({"rate": "2M", "buffer": "64KiB", **change})
    with pytest.raises(ScenarioError) as err:
        run(sc)
    assert str(err.value) == message or str(err.value).startswith(message)


@pytest.mark.parametrize("loss,expected", [
    ({"model": "gilbert", "rate": 0.01, "burst": 2.5}, (0.01, 2.5)),
    ({"model": "bernoulli", "rate": "1%"}, (0.01, 1.0)),
])
def test_a_loss_model_reads_a_fraction_and_a_packet_count(loss, expected):
    # not the link's rate (b/s) and burst (whole bytes): `burst: 2.5` used to be refused
    sc = Scenario.from_dict({"rate": "5M", "buffer": "64KiB", "rtt": "40ms", "data_loss": loss}, written=True)
    assert (sc.data_loss.rate, sc.data_loss.burst) == pytest.approx(expected)

