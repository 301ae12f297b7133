"""The CMTS downstream on its own: shaper, calendar slots, MPEG framing, MAPs, other modems."""

import pytest

from hfcprov.sim import FlowSpec, Scenario, run
from hfcprov.sim.cmts import QAM_RATES, CmtsConfigError, CmtsDownstream, CmtsParams
from hfcprov.sim.engine import Engine
from hfcprov.sim.packet import DATA, Packet
from hfcprov.sim.scenario import ScenarioError

from .harness import Sink, cbr, mbps

QUIET = {"upstreams": 0, "interleave_delay": 0.0}  # no MAPs, no interleaver: the channel alone


def _cmts(params, rate, pps, size=1500, duration=4.0, burst=3044, buffer=None, seed=1):
    import random

    eng = Engine()
    sink = Sink(eng)
    link = CmtsDownstream(eng, sink, params, rate=rate, burst=burst, buffer=buffer, rng=random.Random(seed))
    cbr(eng, link, 0, pps, size)
    eng.run(duration)
    return link, sink


def test_channel_carries_frames_in_mpeg_packets():
    """Unshaped, a saturating stream gets the 64-QAM rate less DOCSIS + MPEG framing."""
    p = CmtsParams(**QUIET)
    link, sink = _cmts(p, rate=1e9, pps=5000, duration=2.0, buffer=200_000)
    per_packet = (1500 + 18 + 6 + 1) * 188 / 184  # Ethernet, DOCSIS header, pointer, TS packets
    expect = QAM_RATES["qam64"] * 1500 / per_packet
    assert mbps(sink, 2.0) * 1e6 == pytest.approx(expect, rel=0.01)
    assert link.dropped > 0  # 5000 pps is more than the channel carries
    # the same on 256-QAM: 44% more
    _, fast = _cmts(CmtsParams.preset("qam256", **QUIET), rate=1e9, pps=5000, duration=2.0, buffer=200_000)
    assert mbps(fast, 2.0) / mbps(sink, 2.0) == pytest.approx(38.81 / 26.97, rel=0.01)


def test_shaper_holds_the_service_flow_to_its_rate_counting_ethernet_frames():
    link, sink = _cmts(CmtsParams(), rate=3e6, pps=400, duration=10.0)  # offered 4.8 Mb/s
    got = mbps(sink, 10.0)
    assert got == pytest.approx(3.0 * 1500 / 1518, rel=0.02)
    assert link.shaped > 1000 and link.dropped > 0  # held, then dropped past max_delay


@pytest.mark.parametrize("granularity", [0.001, 0.004, 0.016])
def test_calendar_slots_delay_held_packets_but_cost_no_rate(granularity):
    p = CmtsParams(granularity=granularity, **QUIET)
    link, sink = _cmts(p, rate=3e6, pps=400, duration=10.0)
    assert mbps(sink, 10.0) == pytest.approx(3.0 * 1500 / 1518, rel=0.02)
    # held packets leave the shaper only on a slot boundary: arrivals at the CM bunch up
    tx = (1500 + 25) * 188 / 184 * 8 / QAM_RATES["qam64"]
    late = [t for t in sink.times if t > 1.0]
    offsets = [((t - tx) % granularity) for t in late]
    on_slot = sum(1 for o in offsets if o < 3 * tx + 1e-9 or granularity - o < 1e-9)
    assert on_slot > 0.95 * len(late)


def test_max_delay_drops_what_would_wait_longer_and_buffer_bytes_too():
    p = CmtsParams(max_delay=0.128)
    link, sink = _cmts(p, rate=1e6, pps=200, duration=6.0)
    assert max(sink.delays) < 0.128 + 0.01
    assert link.dropped > 0
    unlimited = CmtsParams(max_delay=None)
    link2, sink2 = _cmts(unlimited, rate=1e6, pps=200, duration=6.0, buffer=30_000)
    assert link2.dropped > 0 and max(sink2.delays) < 30_000 * 8 / 1e6 + 0.02


def test_maps_and_other_modems_take_channel_time():
    # a short FIFO: the backlog's own tail (served before later frames) stays small against 4 s
    saturate = dict(rate=1e9, pps=5000, duration=4.0, buffer=20_000)
    quiet, q = _cmts(CmtsParams(**QUIET), **saturate)
    maps = _cmts(CmtsParams(upstreams=4, interleave_delay=0.0), **saturate)[1]
    busy = _cmts(CmtsParams(other_load=0.5, **QUIET), **saturate)[1]
    # 4 upstreams' MAPs: 4 x 100 B every 2 ms = 1.6 Mb/s (+ MPEG framing)
    assert mbps(q, 4.0) - mbps(maps, 4.0) == pytest.approx(1.6 * 188 / 184, rel=0.1)
    assert mbps(busy, 4.0) == pytest.approx(0.5 * mbps(q, 4.0), rel=0.03)
    assert quiet.dropped > 0


def test_other_modems_spread_the_delay_of_a_light_flow():
    light = dict(rate=3e6, pps=50, duration=10.0)
    _, calm = _cmts(CmtsParams(**QUIET), **light)
    _, busy = _cmts(CmtsParams(other_load=0.6, **QUIET), **light)
    assert max(calm.delays) - min(calm.delays) < 1e-6
    assert max(busy.delays) > min(busy.delays) + 0.0005  # waits behind other modems' frames


def test_interleaver_adds_its_latency():
    eng = Engine()
    sink = Sink(eng)
    link = CmtsDownstream(eng, sink, CmtsParams(upstreams=0), rate=3e6)
    link.send(Packet(DATA, 0, 0, 1500, 0.0))
    eng.run(1.0)
    tx = (1500 + 25) * 188 / 184 * 8 / QAM_RATES["qam64"]
    assert sink.delays[0] == pytest.approx(tx + 0.00068, rel=1e-6)


def test_a_download_through_the_cmts_by_scenario_key():
    base = dict(rate=3e6, buffer=None, rtt=0.1, direction="downstream", duration=20.0, warmup=5.0,
                sample_interval=None)
    plain = run(Scenario(**base))
    cmts = run(Scenario(**base, mac="cmts", mac_params={"granularity": 0.008}))
    assert cmts.goodput_bps == pytest.approx(plain.goodput_bps, rel=0.03)
    sc = Scenario.from_dict({"rate": "3M", "buffer": None, "direction": "downstream", "mac": "cmts",
                             "mac_params": {"granularity": "16ms", "max_delay": "512ms", "preset": "qam256"}})
    assert sc.mac_params["granularity"] == 0.016 and sc.mac_params["max_delay"] == 0.512


@pytest.mark.parametrize("params, words", [
    ({"granularity": "8ms", "map_advance": "3ms"}, "unknown key(s) map_advance"),
    ({"preset": "qam16", "granularity": "1ms"}, "qam16"),
    ({"other_load": 1.5}, "other_load"),
])
def test_bad_cmts_parameters_are_one_line(params, words):
    with pytest.raises(ScenarioError) as err:
        Scenario.from_dict({"rate": "3M", "buffer": None, "direction": "downstream", "mac": "cmts",
                            "mac_params": params}, "f.yaml")
    assert words in str(err.value) and "\n" not in str(err.value)


def test_the_cmts_is_downstream_only():
    with pytest.raises(CmtsConfigError, match="downstream"):
        run(Scenario(rate=3e6, buffer=None, mac="cmts", duration=1.0))


def test_cmts_params_reject_a_channel_with_no_room():
    with pytest.raises(CmtsConfigError):
        CmtsParams(upstreams=200, map_bytes=2000)


def test_the_atov_kennedy_example_runs_and_alpha_matters():
    from pathlib import Path

    import yaml

    path = Path(__file__).resolve().parents[2] / "examples" / "sim-atov-downstream.yaml"
    sc = Scenario.from_dict(yaml.safe_load(path.read_text()), str(path))
    assert sc.mac == "cmts" and sc.mac_params["granularity"] == 0.016
    low = run(sc.replace(tcp=sc.tcp.__class__(**{**sc.tcp.__dict__, "fast_alpha": 3})))
    assert run(sc).utilization > 0.95 > 0.6 > low.utilization


def test_an_uploads_acks_can_come_down_through_the_cmts():
    base = dict(rate=5e6, buffer=65536, rtt=0.04, duration=6.0, warmup=1.0, sample_interval=None,
                probe_rate=20.0, start_jitter=0.0, flows=[FlowSpec(start=3.0)])
    plain = run(Scenario(**base))
    down = run(Scenario(**base, reverse_mac="cmts", reverse_rate=1e6,
                        reverse_mac_params={"granularity": 0.016, "other_load": 0.5}))
    assert down.extra["ack_losses"] == 0
    # the ACK clock now waits on the CMTS's shaper calendar and other modems' frames
    assert down.latency_idle.p50 > plain.latency_idle.p50 + 0.0005
    with pytest.raises(CmtsConfigError, match="upstream"):
        run(Scenario(**{**base, "direction": "downstream"}, reverse_mac="cmts"))


def test_a_key_of_neither_link_names_both_lists():
    with pytest.raises(ScenarioError) as err:
        Scenario.from_dict({"rate": "3M", "buffer": None, "direction": "downstream", "mac": "cmts",
                            "mac_params": {"granularty": "8ms"}}, "f.yaml")
    msg = str(err.value)
    assert "granularty" in msg and "for mac: cmts" in msg and "granularity" in msg and "map_advance" in msg
