"""One sizing policy, one answer: every entry point gives the same bytes for the same tier.

`buffer advise`, `buffer table`, the templates' `advise_buffer` and the campaign report all
call `hfcprov.queue.sizing.size_buffer`. They once disagreed by exactly 2.00x with DOCSIS-PIE
on (the template and report path had no AQM parameter) and named different TCPs; this checks
them on a grid of rate x RTT x flows x TCP x AQM x upstream model.
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
from hfcprov.queue.inputs import SizingInputs
from hfcprov.queue.sizing import size_buffer
from hfcprov.tiers.templates import SHIPPED, environment, render_tree

RATES = ("1M", "5M", "20M", "100M", "1G")
RTTS = ("5ms", "40ms", "100ms")
FLOWS = (1, 4)
TCPS = ("reno", "newreno", "sack", "cubic", "fast", "prague")
AQMS = ("none", "docsis-pie", "lld")  # as a campaign's aqm axis and a tier template name it
MODELS = ("docsis", "tokenbucket")
UNIT = {"M": 1e6, "G": 1e9, "ms": 1e-3}


def number(text: str) -> float:
    for suffix, scale in UNIT.items():
        if text.endswith(suffix):
            return float(text[:-len(suffix)]) * scale
    raise ValueError(text)


def via_advise(rate, rtt, flows, cc, aqm, mac) -> int:
    args = ["--rate", rate, "--rtt", rtt, "--flows", str(flows), "--cc", cc, "--mac", mac, "--json"]
    if aqm != "none":
        args += ["--aqm-target", "10ms"]
    r = CliRunner().invoke(advise_cmd, args)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)["target"]


def via_table(rate, rtt, flows, cc, aqm, mac) -> int:
    args = ["--rates", rate, "--rtt", rtt, "--buffers", "64K", "--flows", str(flows), "--cc", cc, "--mac", mac,
            "--json"]
    if aqm != "none":
        args += ["--aqm-target", "10ms"]
    r = CliRunner().invoke(table_cmd, args)
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.output)
    return row["advised"]


@functools.lru_cache(maxsize=1)
def advise_buffer_call():
    return environment(str(SHIPPED)).from_string(
        "{{ advise_buffer(rate, rtt, flows, congestion_control=cc, aqm=aqm, mac=mac) }}")


def via_template(rate, rtt, flows, cc, aqm, mac) -> int:
    return int(advise_buffer_call().render(rate=rate, rtt=rtt, flows=flows, cc=cc, aqm=aqm, mac=mac))


def via_report(rate, rtt, flows, cc, aqm, mac) -> int:
    cell = Cell(source="sim", tier="t", upstream_rate=number(rate), variant="", rtt=number(rtt), buffer=65536,
                goodput_bps=number(rate), queue_delay=0.01, latency_loaded=None, mos=None, reps=1, flows=flows,
                congestion_control=cc, mac=mac, aqm=aqm)
    (rec,) = recommend([cell])
    return rec.advised


def the_policy(rate, rtt, flows, cc, aqm, mac) -> int:
    target = None if aqm == "none" else DEFAULT_AQM_LATENCY_TARGET
    return size_buffer(SizingInputs(number(rate), number(rtt), flows, cc, mac, target)).target


ENTRY_POINTS = (via_advise, via_table, via_template, via_report)


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(RATES), st.sampled_from(RTTS), st.sampled_from(FLOWS), st.sampled_from(TCPS),
       st.sampled_from(AQMS), st.sampled_from(MODELS))
def test_every_entry_point_gives_the_same_bytes(rate, rtt, flows, cc, aqm, mac):
    expected = the_policy(rate, rtt, flows, cc, aqm, mac)
    got = {f.__name__: f(rate, rtt, flows, cc, aqm, mac) for f in ENTRY_POINTS}
    assert set(got.values()) == {expected}, (got, expected)


def test_the_library_entry_points_agree_on_every_point_of_the_grid():
    """The whole grid, 1,080 points, through the template function and the report (no CLI process)."""
    n = 0
    for rate in RATES:
        for rtt in RTTS:
            for flows in FLOWS:
                for cc in TCPS:
                    for aqm in AQMS:
                        for mac in MODELS:
                            expected = the_policy(rate, rtt, flows, cc, aqm, mac)
                            assert via_template(rate, rtt, flows, cc, aqm, mac) == expected
                            assert via_report(rate, rtt, flows, cc, aqm, mac) == expected
                            n += 1
    assert n == 1080


def test_the_aqm_and_the_tcp_change_the_answer_where_they_once_could_not():
    """The template and report path once had no AQM and no TCP: 20 Mb/s, 40 ms gave 131,072 B where
    `buffer advise --aqm-target 10ms` gave 262,144 B, and CUBIC's 65,536 B was out of its reach."""
    for f in ENTRY_POINTS:
        assert f("20M", "40ms", 1, "reno", "none", "docsis") == 131_072, f.__name__
        assert f("20M", "40ms", 1, "reno", "docsis-pie", "docsis") == 262_144, f.__name__
        assert f("20M", "40ms", 1, "cubic", "none", "docsis") == 65_536, f.__name__


def test_a_shipped_tier_with_docsis_pie_sizes_its_upstream_for_it():
    """res-50x5 with aqm: docsis-pie writes DOCSIS-PIE into the upstream flow and sizes it for PIE."""
    from hfcprov.model import service_flows

    def upstream_target(**extra):
        tree = render_tree("res-50x5", {"us_rate": "20M", "rtt": "40ms", **extra})
        return next(f for f in service_flows(tree) if f.direction == "upstream").buffer.target

    assert upstream_target() == via_advise("20M", "40ms", 1, "reno", "none", "docsis")
    assert upstream_target(aqm="docsis-pie") == via_advise("20M", "40ms", 1, "reno", "docsis-pie", "docsis")
