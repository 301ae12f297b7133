"""A scenario a person wrote (a file, a sweep grid, --set) goes through the CLI's unit parsers.

`rtt: 40` in a scenario file used to be 40 seconds; like `--rtt 40` and a campaign's `rtt: 40` it is
refused with a hint, naming the file and the key (hfcprov.units.as_written).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.sim import Scenario, ScenarioError
from hfcprov.sim.scenario import apply_overrides
from hfcprov.sim.sweep import load_scenario, load_sweep
from hfcprov.units import UnitError, parse_duration, parse_link_rate, parse_rtt


def refusal(parser, text) -> str:
    with pytest.raises(UnitError) as err:
        parser(text)
    return str(err.value)


@pytest.mark.parametrize("line,key,message", [
    ("rtt: 40", "rtt", refusal(parse_rtt, "40")),
    ("rtt: 40s", "rtt", refusal(parse_rtt, "40s")),
    ("duration: 30", "duration", refusal(parse_duration, "30")),
    ("tcp: {min_rto: 1}", "tcp.min_rto", refusal(parse_duration, "1")),
    ("flows: [{start: 2}]", "flows[0].start", refusal(parse_duration, "2")),
    ("voice: {jitter_buffer: 60}", "voice.jitter_buffer", refusal(parse_duration, "60")),
    ("rate: 5", "rate", refusal(parse_link_rate, "5")),
])
def test_a_scenario_file_is_read_with_the_cli_parsers(tmp_path, line, key, message):
    f = tmp_path / "s.yaml"
    base = {"rtt", "rate"} - {key}
    f.write_text("\n".join([line] + ["rate: 5M" if "rate" in base else "", "rtt: 40ms" if "rtt" in base else "",
                                     "buffer: 64KiB"]) + "\n")
    with pytest.raises(ScenarioError) as err:
        load_scenario(f)
    assert str(err.value) == f"{f}: {key}: {message}"
    assert "did you mean" in message


def test_set_and_sweep_values_are_read_the_same_way(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("rate: 5M\nbuffer: 64KiB\nrtt: 40ms\n")
    with pytest.raises(ScenarioError, match=r"rtt: bad duration '40': a time needs its unit: did you mean 40ms\?"):
        load_scenario(f, ["rtt=40"])
    assert load_scenario(f, ["rtt=60ms", "tcp.mss=536", "warmup=0"]).rtt == 0.06
    # --set on a config file's flow (sim run --config): the overrides are text a person wrote
    with pytest.raises(ScenarioError, match="did you mean 40ms"):
        Scenario.from_dict(apply_overrides({"rate": 5e6, "buffer": 65536, "rtt": 0.04}, ["rtt=40"]))
    with pytest.raises(ScenarioError, match=r"--set rate: bad rate '5'.*did you mean 5M"):
        apply_overrides({"rate": 5e6, "buffer": 65536, "rtt": 0.04}, ["rate=5"])
    assert Scenario.from_dict(apply_overrides({"rate": 5e6, "buffer": 65536}, ["rate=10M"])).rate == 10e6
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("base: {rate: 5M, buffer: 64KiB}\ngrid:\n  rtt: [20ms, 40]\n")
    with pytest.raises(ScenarioError, match=r"rtt=40\]: rtt: bad duration '40'"):
        load_sweep(sweep)


def test_a_program_still_passes_plain_numbers():
    sc = Scenario.from_dict({"rate": 5e6, "buffer": 65536, "rtt": 0.04, "duration": 2, "tcp": {"min_rto": 0.2}})
    assert (sc.rtt, sc.duration, sc.tcp.min_rto) == (0.04, 2.0, 0.2)
    assert Scenario.from_dict(sc.to_dict()) == sc


@settings(max_examples=60, deadline=None)
@given(n=st.one_of(st.integers(1, 10**6), st.floats(0.001, 1e6, allow_nan=False, allow_infinity=False)))
def test_no_bare_number_is_a_time_in_a_file(tmp_path_factory, n):
    f = tmp_path_factory.mktemp("s") / "s.yaml"
    f.write_text(f"rate: 5M\nbuffer: 64KiB\nrtt: 40ms\nwarmup: {n!r}\n")
    with pytest.raises(ScenarioError, match=r"warmup: bad duration .*a time needs its unit"):
        load_scenario(f)
