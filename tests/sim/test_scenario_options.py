"""Scenario options that once were stop-gaps (issue 7): MAC parameters, the ACK path through a
CM, FAST's alpha, a voice call, and a sender fed data as it arrives."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from hfcprov.sim import FlowSpec, Scenario, ScenarioError, TcpOptions, VoiceSpec, run
from hfcprov.sim.cc import CONGESTION_CONTROLS, congestion_control
from hfcprov.sim.engine import Engine
from hfcprov.sim.link import Link
from hfcprov.sim.run import Network, run_with_voice
from hfcprov.sim.tcp import TcpReceiver, TcpSender

REPO = Path(__file__).resolve().parents[2]
BASE = {"rate": "2M", "buffer": "32KiB"}


def test_yaml_keys_reach_the_scenario_with_units_parsed():
    sc = Scenario.from_dict({**BASE, "direction": "downstream", "reverse_mac": "docsis", "reverse_rate": "512k",
                             "reverse_mac_params": {"preset": "docsis11", "map_interval": "2ms"},
                             "tcp": {"variant": "fast", "fast_alpha": 8},
                             "voice": {"jitter_buffer": "80ms", "tail": "2s"}}, source="f.yaml")
    assert sc.reverse_mac == "docsis" and sc.reverse_mac_params == {"preset": "docsis11", "map_interval": 0.002}
    assert sc.tcp.fast_alpha == 8.0
    assert sc.voice == VoiceSpec(codec="g711", jitter_buffer=0.08, tail=2.0)
    assert Scenario.from_dict({**BASE, "voice": True}).voice == VoiceSpec()
    assert Scenario.from_dict({**BASE, "voice": "g711"}).voice == VoiceSpec()
    assert Scenario.from_dict({**BASE, "voice": False}).voice is None


@pytest.mark.parametrize("extra,message", [
    ({"voice": {"codec": "g729"}}, "f.yaml: voice.codec: 'g729' is not one of g711"),
    ({"voice": {"jitter": 1}}, "f.yaml: voice.jitter: unknown key"),
    ({"tcp": {"fast_alpha": "many"}}, "f.yaml: tcp.fast_alpha: "),
    ({"reverse_mac_params": {"preset": "docsis4"}}, "f.yaml: reverse_mac_params: preset: 'docsis4'"),
    ({"reverse_mac_params": [1]}, "f.yaml: reverse_mac_params: expected a mapping"),
])
def test_mistakes_name_the_file_and_key(extra, message):
    with pytest.raises(ScenarioError) as err:
        Scenario.from_dict({**BASE, **extra}, source="f.yaml")
    assert str(err.value).startswith(message)


@pytest.mark.parametrize("tcp, message", [
    ({"rcv_window_clamp": -5}, "^tcp.rcv_window_clamp: -5 must be >= 0"),
    ({"rcv_init_window": -3}, "^tcp.rcv_init_window: -3 must be >= 0"),
    ({"rcv_window_clamp": 100}, "tcp.rcv_window_clamp: 100 bytes cannot hold one 1448-byte segment"),
])
def test_a_linux_receive_window_below_one_segment_is_one_line(tcp, message):
    # these ended in a ZeroDivisionError traceback inside the receiver's autotuning
    sc = Scenario.from_dict({"rate": "5M", "buffer": "64KiB", "duration": "2s", "tcp": {"host": "linux", **tcp}})
    with pytest.raises(ScenarioError, match=message):
        run(sc)


def test_acks_through_a_cm_need_downstream_data_and_a_docsis_reverse():
    with pytest.raises(ScenarioError, match="direction: downstream"):
        run(Scenario(rate=2e6, buffer=32768, duration=1, reverse_mac="docsis"))
    with pytest.raises(ScenarioError, match="reverse_mac_params: only used with reverse_mac: docsis"):
        run(Scenario(rate=2e6, buffer=32768, duration=1, reverse_mac_params={"preset": "docsis11"}))
    with pytest.raises(ScenarioError, match="reverse_mac: unknown link model 'atm'"):
        run(Scenario(rate=2e6, buffer=32768, duration=1, direction="downstream", reverse_mac="atm"))


def test_acks_through_a_request_grant_cm_stretch_the_round_trip():
    sc = Scenario(rate=3e6, buffer=65536, rtt=0.04, direction="downstream", duration=8, warmup=2,
                  probe_rate=20, flows=[FlowSpec(start=4)], reverse_rate=512e3, sample_interval=None)
    plain = run(sc)
    net = Network(sc.replace(reverse_mac="docsis"))
    cm = net.run()
    assert net.reverse.name == "ack-cm" and net.reverse.accepted > 0
    # every echo waits for a contention request, a MAP and a grant (several ms) on top of the path
    assert cm.latency_idle.p50 > plain.latency_idle.p50 + 0.003
    assert cm.goodput_bps > 0.5 * plain.goodput_bps


def test_fast_alpha_sets_the_packets_each_flow_keeps_queued():
    def queue(alpha):
        sc = Scenario(rate=5e6, buffer=1 << 20, rtt=0.04, duration=20, warmup=10, sample_interval=None,
                      tcp=TcpOptions(variant="fast", fast_alpha=alpha))
        return run(sc).extra["queue_bytes_mean"] / 1500

    small, large = queue(10), queue(40)
    assert large > 2.5 * small and 5 < small < 20  # about alpha packets of standing queue


def test_voice_option_scores_the_call_and_the_alias_agrees_bit_for_bit():
    sc = Scenario(rate=1e6, buffer=262144, rtt=0.04, duration=15, warmup=3, sample_interval=None)
    r = run(sc.replace(voice=VoiceSpec()))
    assert r.mos is not None and r.mos < 2.0  # the call waits behind a full 256 KiB buffer
    assert r.extra["voip"]["mouth_to_ear"] > 1.0
    assert run_with_voice(sc).mos == r.mos
    assert run(sc).mos is None and "voip" not in run(sc).extra


def test_sender_supplied_piecemeal_sends_only_what_it_has():
    eng = Engine()
    opts = TcpOptions(mss=1000, initial_window=10)
    rcv = TcpReceiver(eng, 0, None, opts)
    fwd = Link(eng, rcv, capacity=10e6, delay=0.01)
    snd = TcpSender(eng, 0, fwd, opts, congestion_control("newreno", opts), size=9500)
    rcv.link = Link(eng, snd, capacity=10e6, delay=0.01)
    snd.supply(3)
    eng.at(0.0, snd.start)
    eng.run(1.0)
    assert rcv.rcv_nxt == 3 and snd.nxt == 3 and snd.done_at is None
    eng.at(1.0, lambda _: snd.supply(50))  # more than the transfer: capped at its 10 segments
    eng.run(2.0)
    assert rcv.rcv_nxt == 10 and snd.done_at is not None and snd.retransmissions == 0


def test_cli_run_prints_the_mos_of_the_example_call():
    p = subprocess.run([sys.executable, "-m", "hfcprov", "sim", "run", "examples/sim-docsis-voice.yaml",
                        "--set", "duration=12s", "--set", "warmup=3s"],
                       capture_output=True, text=True, check=False, cwd=REPO, timeout=120)
    assert p.returncode == 0, p.stderr
    header, values = p.stdout.strip().splitlines()[-2:]
    assert header.split()[-1] == "mos"  # last column (empty columns make the middle ragged)
    mos = float(values.split()[-1])
    assert 1.0 <= mos <= 4.5


def test_mean_queue_is_the_time_integral_over_the_measured_window_only():
    """A 1 s standing queue at the warm-up's end and at the run's end: the waits booked on
    arrival are cut at both edges, so the mean matches a fine sampling of the queue."""
    sc = Scenario(rate=2e6, buffer=262144, rtt=0.04, duration=10, warmup=5, sample_interval=0.001)
    r = run(sc)
    samples = [b for t, b in r.series["queue_bytes"] if 5 <= t < 10]
    assert r.extra["queue_bytes_mean"] == pytest.approx(sum(samples) / len(samples), rel=0.01)


@pytest.mark.parametrize("extra,message", [
    ({"aqm": "docsis-pie", "aqm_params": {"alpha": "x"}}, "aqm_params: alpha: expected a number, not 'x'"),
    ({"aqm": "lld", "aqm_params": {"coupling": "abc"}}, "aqm_params: coupling: expected a number"),
    ({"aqm": "lld", "aqm_params": {"classic": {"bogus": 1}}}, "aqm_params: classic: not a lld parameter"),
    ({"aqm": "docsis-pie", "aqm_params": {"latency_target": 10}}, "did you mean 10ms"),
    ({"mac": "cmts", "direction": "downstream", "mac_params": {"pointer_field": "maybe"}},
     "pointer_field must be a whole number"),
    ({"mac": "cmts", "direction": "downstream", "mac_params": {"upstreams": "two"}}, "upstreams must be a whole number"),
])
def test_a_bad_aqm_or_cmts_parameter_is_one_line_naming_the_file(extra, message):
    # these used to end in a TypeError during the run, or be taken silently
    with pytest.raises(ScenarioError, match=message) as err:
        Scenario.from_dict({"rate": "5M", "buffer": "64KiB", "rtt": "40ms", **extra}, source="s.yaml", written=True)
    assert str(err.value).startswith("s.yaml: ")


def test_docsis_pie_is_refused_on_the_cmts_downstream():
    from hfcprov.sim import run

    sc = Scenario.from_dict({"rate": "5M", "buffer": "64KiB", "mac": "cmts", "direction": "downstream",
                             "aqm": "docsis-pie", "duration": "2s"})
    with pytest.raises(ScenarioError, match="aqm: docsis-pie runs in a modem's upstream"):
        run(sc)


def test_a_host_preset_gives_the_stacks_options_and_the_keys_beside_it_win():
    from hfcprov.sim.hosts import LINUX

    sc = Scenario.from_dict({**BASE, "tcp": {"host": "linux", "variant": "cubic", "min_rto": "300ms"}},
                            source="f.yaml", written=True)
    assert (sc.tcp.recovery, sc.tcp.cubic_arithmetic, sc.tcp.count_acked, sc.tcp.mss) == ("rack", "linux", True, 1448)
    assert sc.tcp.delack_timeout == LINUX["delack_timeout"] == 0.04 and sc.tcp.min_rto == 0.3
    from hfcprov.sim.scenario import apply_overrides

    over = Scenario.from_dict(apply_overrides(BASE, ["tcp.host=ns3"]), written=True)
    assert (over.tcp.ssthresh_from, over.tcp.integer_cwnd) == ("pipe", True)
    with pytest.raises(ScenarioError, match=r"f\.yaml: tcp\.host: 'bsd' is not one of linux, ns3, docsis-ns3"):
        Scenario.from_dict({**BASE, "tcp": {"host": "bsd"}}, source="f.yaml")
    ns = Scenario.from_dict({**BASE, "tcp": {"host": "docsis-ns3"}}, source="f.yaml", written=True).tcp
    assert (ns.variant, ns.ssthresh_from, ns.count_acked, ns.loss_exit_from_recover, ns.min_rto) == \
        ("sack", "cwnd", True, True, 1.0)



def _state(obj):
    """An object's attributes and those of the objects it holds (``__dict__`` or slots), to compare controls."""
    if obj is None or isinstance(obj, (bool, int, float, str, tuple)) or dataclasses.is_dataclass(obj):
        return obj
    names = [*getattr(obj, "__dict__", {}), *(n for c in type(obj).__mro__ for n in getattr(c, "__slots__", ()))]
    return {n: _state(getattr(obj, n)) for n in names if hasattr(obj, n)}


@pytest.mark.parametrize("name", sorted(CONGESTION_CONTROLS))
def test_a_congestion_control_made_without_options_has_tcpoptions_defaults(name):
    """The defaults live in TcpOptions only: a control built without options equals one built with TcpOptions()."""
    bare, explicit = congestion_control(name), congestion_control(name, TcpOptions())
    assert type(bare) is type(explicit)
    assert _state(bare) == _state(explicit)
