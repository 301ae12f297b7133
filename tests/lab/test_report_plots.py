"""Issue 27, item 2: percentiles and CDFs per point, comparisons on one axis, captions true to the figure."""

from __future__ import annotations

import html
import re

import pytest

from hfcprov.lab.report import summarize, write_report
from hfcprov.lab.spec import parse_campaign
from hfcprov.lab.store import Store
from tests.lab.conftest import textbook_result

AQM = """name: aqm
grid: {upstream_rate: [10M, 50M], buffer: 256KiB, rtt: 40ms, flows: 2, aqm: [none, docsis-pie, lld]}
repetitions: 2
"""
WHITE = "name: white\ngrid: {upstream_rate: [1M, 10M], buffer: [16K, 64K, 256K], rtt: [40ms, 100ms]}\n"


def _report(tmp_path, text, sources=("sim",), name="r"):
    camp = parse_campaign(text, source=str(tmp_path / f"{name}.yaml"))
    with Store(tmp_path / f"{name}.db") as store:
        store.begin(camp, resume=False)
        for p in store.pending():
            store.finish(p, [textbook_result(p, s) for s in sources])
        write_report(store, tmp_path / f"{name}.html")
    return (tmp_path / f"{name}.html").read_text()


def figures(page: str) -> dict:
    """figure name -> (points per panel, caption)."""
    out = {}
    for name, counts, caption in re.findall(r'<figure id="fig-([\w-]+)" data-panel-points="([\d,]*)">.*?'
                                            r'<figcaption>(.*?)</figcaption>', page, re.S):
        out[name] = ([int(n) for n in counts.split(",") if n], html.unescape(caption))
    return out


def test_queues_are_compared_on_the_same_axes_per_rate(tmp_path):
    # issue 27: 12 panels of one dot, each with its own y axis; now one panel per rate, the three queues on it
    figs = figures(_report(tmp_path, AQM))
    for name in ("throughput", "latency", "latency-cdf", ):
        assert figs[name][0] == [3, 3], (name, figs[name])
    assert "over-time" not in figs  # one buffer: nothing to set against each other


def test_latency_is_drawn_as_p50_p90_p99_and_a_cdf_per_point(tmp_path):
    page = _report(tmp_path, WHITE)
    figs = figures(page)
    assert figs["latency"][0] == [6, 6]  # 3 buffers x 2 RTTs per rate
    assert "p50" in figs["latency"][1] and "p90" in figs["latency"][1] and "p99" in figs["latency"][1]
    assert figs["latency-cdf"][0] == [3, 3, 3, 3]  # a panel per rate and RTT, a curve per buffer
    assert "fraction of probes at or below that RTT" in figs["latency-cdf"][1]


def test_the_percentiles_drawn_are_the_stored_ones(tmp_path):
    camp = parse_campaign(WHITE, source=str(tmp_path / "w.yaml"))
    with Store(tmp_path / "w.db") as store:
        store.begin(camp, resume=False)
        for p in store.pending():
            store.finish(p, [textbook_result(p)])
        cells = summarize(store.rows())
    c = next(c for c in cells if c.upstream_rate == 1e6 and c.buffer == 16384 and c.rtt == 0.04)
    queue = 16384 * 8 / 1e6
    assert c.latency_loaded == pytest.approx(0.04 + 0.8 * queue)
    assert c.latency_p90 == pytest.approx(0.04 + queue) and c.latency_p99 == pytest.approx(0.04 + queue)
    from hfcprov.lab.plots import figures as draw

    (lat,) = [d for d in draw(cells, [], "sim") if d.name == "latency"]
    drawn = {(line.get_gid(), line.get_color()): list(line.get_ydata()) for line in lat.figure.axes[0].lines
             if line.get_gid()}
    blue = "#1f4e9c"  # the 40 ms RTT series
    assert drawn[("p50", blue)][0] == pytest.approx(c.latency_loaded * 1e3)
    assert drawn[("p90", blue)][0] == pytest.approx(c.latency_p90 * 1e3)
    assert drawn[("p99", blue)][0] == pytest.approx(c.latency_p99 * 1e3)
    legend = [t.get_text() for t in lat.figure.legends[0].get_texts()]
    assert {"40 ms RTT", "100 ms RTT", "p50", "p90", "p99"} <= set(legend)


@pytest.mark.slow
def test_captions_promise_only_what_is_drawn(tmp_path):
    # issue 27: the goodput caption promised a dashed prediction a sim-only campaign does not draw
    sim_only = figures(_report(tmp_path, WHITE))
    for name, (_, caption) in sim_only.items():
        assert "simulat" not in caption.lower() and "predict" not in caption.lower(), (name, caption)
    tpl = tmp_path / "tier.j2"
    tpl.write_text("Main { }\n")
    measured = figures(_report(tmp_path, f"template: {tpl}\ntarget: {{kind: emu}}\n" + WHITE.split("\n", 1)[1],
                               sources=("emu", "sim"), name="m"))
    assert "simulator's prediction" in measured["throughput"][1]
    assert "simulator's predicted p50" in measured["latency"][1]


@pytest.mark.slow
def test_no_panel_is_empty_or_a_lone_dot_when_the_grid_has_more(tmp_path):
    for text in (AQM, WHITE, "name: one\ngrid: {upstream_rate: [1M, 2M, 5M], buffer: 64K}\n",
                 "name: flows\ngrid: {upstream_rate: 10M, buffer: 64K, flows: [1, 4], congestion_control: "
                 "[reno, cubic]}\n"):
        figs = figures(_report(tmp_path, text, name=text.split()[1]))
        for name, (counts, _) in figs.items():
            assert counts and min(counts) >= 2, (text, name, counts)
