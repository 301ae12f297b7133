"""One sizing policy, one answer: every entry point gives the same bytes for the same tier.

`buffer advise`, `buffer table`, the templates' `advise_buffer` and the campaign report all
call `hfcprov.queue.sizing.size_buffer`. They once disagreed by exactly 2.00x with DOCSIS-PIE
on (the template and report path had no AQM parameter) and named different TCPs, and each
had its own defaults (Reno, CUBIC, drop-tail, the token bucket); this checks them on a grid of
rate x RTT x flows x TCP x AQM x upstream model x modem profile, and that with nothing named
they all take the one set of defaults (hfcprov.queue.inputs).
"""

from __future__ import annotations

import functools
import json

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.cli.build_cmd import advise as advise_cmd
from hfcprov.cli.build_cmd import table as table_cmd
from hfcprov.lab.report import Cell, recommend
from hfcprov.model import DEFAULT_AQM_LATENCY_TARGET
from hfcprov.queue.inputs import SizingError, SizingInputs
from hfcprov.queue.sizing import size_buffer
from hfcprov.tiers.templates import SHIPPED, environment, render_tree

RATES = ("1M", "5M", "20M", "100M", "1G")
RTTS = ("5ms", "40ms", "100ms")
FLOWS = (1, 4)
TCPS = ("reno", "newreno", "sack", "cubic", "fast", "prague")
AQMS = ("none", "docsis-pie", "lld", "file")  # as a campaign's aqm axis and a tier template name it
MODELS = ("docsis", "tokenbucket")
PROFILES = ("docsis3.1", "docsis2.0", "docsis3.0-4ch", "docsis3.1:map_interval=1ms")
UNIT = {"M": 1e6, "G": 1e9, "ms": 1e-3}


def number(text: str) -> float:
    for suffix, scale in UNIT.items():
        if text.endswith(suffix):
            return float(text[:-len(suffix)]) * scale
    raise ValueError(text)


def _aqm_args(aqm):
    return {"none": ["--aqm", "none"], "docsis-pie": ["--aqm", "docsis-pie"], "lld": ["--aqm", "docsis-pie"],
            "file": []}[aqm]


def via_advise(rate, rtt, flows, cc, aqm, mac, profile) -> int:
    args = ["--rate", rate, "--rtt", rtt, "--flows", str(flows), "--cc", cc, "--mac", mac, "--profile", profile,
            "--json", *_aqm_args(aqm)]
    r = CliRunner().invoke(advise_cmd, args)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)["target"]


def via_table(rate, rtt, flows, cc, aqm, mac, profile) -> int:
    args = ["--rates", rate, "--rtt", rtt, "--buffers", "64K", "--flows", str(flows), "--cc", cc, "--mac", mac,
            "--profile", profile, "--json", *_aqm_args(aqm)]
    r = CliRunner().invoke(table_cmd, args)
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.output)
    assert row["profile"] == profile
    return row["advised"]


@functools.lru_cache(maxsize=1)
def advise_buffer_call():
    return environment(str(SHIPPED)).from_string(
        "{{ advise_buffer(rate, rtt, flows, congestion_control=cc, aqm=aqm, mac=mac, profile=profile) }}")


def via_template(rate, rtt, flows, cc, aqm, mac, profile) -> int:
    return int(advise_buffer_call().render(rate=rate, rtt=rtt, flows=flows, cc=cc, aqm=aqm, mac=mac,
                                           profile=profile))


def via_report(rate, rtt, flows, cc, aqm, mac, profile) -> int:
    cell = Cell(source="sim", tier="t", upstream_rate=number(rate), variant="", rtt=number(rtt), buffer=65536,
                goodput_bps=number(rate), queue_delay=0.01, latency_loaded=None, mos=None, reps=1, flows=flows,
                congestion_control=cc, mac=mac, aqm=aqm, profile=profile)
    (rec,) = recommend([cell])
    return rec.advised


def the_policy(rate, rtt, flows, cc, aqm, mac, profile) -> int | None:
    """The policy's bytes, or None where the profile's upstream cannot carry the rate (every entry point refuses)."""
    target = {"none": None, "file": "modem"}.get(aqm, DEFAULT_AQM_LATENCY_TARGET)
    try:
        return size_buffer(SizingInputs(number(rate), number(rtt), flows, cc, mac, target, profile=profile)).target
    except SizingError:
        return None


ENTRY_POINTS = (via_advise, via_table, via_template, via_report)


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(RATES), st.sampled_from(RTTS), st.sampled_from(FLOWS), st.sampled_from(TCPS),
       st.sampled_from(AQMS), st.sampled_from(MODELS), st.sampled_from(PROFILES))
def test_every_entry_point_gives_the_same_bytes(rate, rtt, flows, cc, aqm, mac, profile):
    expected = the_policy(rate, rtt, flows, cc, aqm, mac, profile)
    if expected is None:  # more than the upstream carries: a one-line refusal everywhere, never a size
        r = CliRunner().invoke(advise_cmd, ["--rate", rate, "--rtt", rtt, "--mac", mac, "--profile", profile])
        assert r.exit_code == 1 and "cannot carry" in str(r.exception)  # the CLI prints it as one line
        (rec,) = recommend([Cell(source="sim", tier="t", upstream_rate=number(rate), variant="", rtt=number(rtt),
                                 buffer=65536, goodput_bps=1.0, queue_delay=0.01, latency_loaded=None, mos=None,
                                 reps=1, mac=mac, profile=profile)])
        assert rec.advised is None and "cannot carry" in rec.warnings[0]
        return
    got = {f.__name__: f(rate, rtt, flows, cc, aqm, mac, profile) for f in ENTRY_POINTS}
    assert set(got.values()) == {expected}, (got, expected)


def test_the_library_entry_points_agree_on_every_point_of_the_grid():
    """The whole grid, 5,760 points, through the template function and the report (no CLI process)."""
    n = 0
    for rate in RATES:
        for rtt in RTTS:
            for flows in FLOWS:
                for cc in TCPS:
                    for aqm in AQMS:
                        for mac in MODELS:
                            for profile in PROFILES:
                                expected = the_policy(rate, rtt, flows, cc, aqm, mac, profile)
                                n += 1
                                if expected is None:
                                    continue
                                assert via_template(rate, rtt, flows, cc, aqm, mac, profile) == expected
                                assert via_report(rate, rtt, flows, cc, aqm, mac, profile) == expected
    assert n == 5760


def test_with_nothing_named_every_entry_point_takes_the_one_set_of_defaults():
    """DOCSIS 3.1 with DOCSIS-PIE as the modem runs it, CUBIC, the request-grant MAC: `buffer advise`,
    `buffer table`, the template function and a campaign point's defaults (and so its report) are one set."""
    from hfcprov.lab.schema import AXES
    from hfcprov.queue.inputs import DEFAULT_CONGESTION_CONTROL, DEFAULT_PROFILE, DEFAULT_UPSTREAM_MODEL

    expected = size_buffer(SizingInputs(20e6, 0.02)).target
    assert expected == size_buffer(SizingInputs(20e6, 0.02, 1, "cubic", "docsis", DEFAULT_AQM_LATENCY_TARGET,
                                                profile="docsis3.1")).target
    r = CliRunner().invoke(advise_cmd, ["--rate", "20M", "--rtt", "20ms", "--json"])
    assert json.loads(r.output)["target"] == expected and json.loads(r.output)["profile"] == "docsis3.1"
    r = CliRunner().invoke(table_cmd, ["--rates", "20M", "--rtt", "20ms", "--buffers", "64K", "--json"])
    assert json.loads(r.output)[0]["advised"] == expected
    plain = environment(str(SHIPPED)).from_string("{{ advise_buffer(rate, rtt) }}")
    assert int(plain.render(rate="20M", rtt="20ms")) == expected
    defaults = {n: a.default for n, a in AXES.items()}
    assert (defaults["profile"], defaults["congestion_control"], defaults["mac"], defaults["aqm"]) == (
        DEFAULT_PROFILE, DEFAULT_CONGESTION_CONTROL, DEFAULT_UPSTREAM_MODEL, "file")
    (rec,) = recommend([Cell(source="sim", tier="t", upstream_rate=20e6, variant="", rtt=0.02, buffer=65536,
                             goodput_bps=20e6, queue_delay=0.01, latency_loaded=None, mos=None, reps=1)])
    assert rec.advised == expected


def test_the_aqm_and_the_tcp_change_the_answer_where_they_once_could_not():
    """The template and report path once had no AQM and no TCP: 20 Mb/s, 40 ms gave 131,072 B where
    `buffer advise --aqm-target 10ms` gave 262,144 B, and CUBIC's 65,536 B was out of its reach
    (White et al.'s plant: the calibrated docsis2.0 profile)."""
    for f in ENTRY_POINTS:
        assert f("20M", "40ms", 1, "reno", "none", "docsis", "docsis2.0") == 131_072, f.__name__
        assert f("20M", "40ms", 1, "reno", "docsis-pie", "docsis", "docsis2.0") == 262_144, f.__name__
        assert f("20M", "40ms", 1, "cubic", "none", "docsis", "docsis2.0") == 65_536, f.__name__


def test_the_profile_changes_the_answer_as_its_request_grant_loop_does():
    """The calibrated 2011 loop (14.5 ms) asks more than a DOCSIS 3.1 OFDMA upstream's (4.9 ms with 2 ms MAPs,
    3.2 ms with 1 ms): at 100 Mb/s, 30 ms, three Reno flows, drop-tail (the issue's docsis-ns3 tier)."""
    sizes = {p: via_advise("100M", "30ms", 3, "reno", "none", "docsis", p)
             for p in ("docsis3.1", "docsis3.1:map_interval=1ms")}
    assert sizes["docsis3.1"] >= sizes["docsis3.1:map_interval=1ms"]
    assert via_advise("100M", "30ms", 3, "reno", "none", "tokenbucket", "docsis3.1") < sizes["docsis3.1"]


def test_a_shipped_tier_with_docsis_pie_sizes_its_upstream_for_it():
    """res-50x5 with aqm: docsis-pie writes DOCSIS-PIE into the upstream flow and sizes it for PIE; with no aqm
    it sizes for what its profile's modem runs (DOCSIS 3.1: PIE too; a DOCSIS 3.0 profile: drop-tail)."""
    from hfcprov.model import service_flows

    def upstream_target(**extra):
        tree = render_tree("res-50x5", {"us_rate": "20M", "rtt": "40ms", **extra})
        return next(f for f in service_flows(tree) if f.direction == "upstream").buffer.target

    assert upstream_target() == via_advise("20M", "40ms", 1, "cubic", "file", "docsis", "docsis3.1")
    assert upstream_target(aqm="docsis-pie") == via_advise("20M", "40ms", 1, "cubic", "docsis-pie", "docsis",
                                                           "docsis3.1")
    assert upstream_target(profile="docsis3.0-4ch") == via_advise("20M", "40ms", 1, "cubic", "none", "docsis",
                                                                  "docsis3.0-4ch")
