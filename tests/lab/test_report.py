"""The report: HTML with embedded plots, PNGs, CSV, and a recommended buffer with its reason."""

from __future__ import annotations

import base64
import csv
import re

import pytest

from hfcprov.lab.report import Cell, recommend, write_report
from hfcprov.lab.spec import load_campaign, parse_campaign
from hfcprov.lab.store import Store
from tests.lab.conftest import textbook_result


def _filled_store(path, camp, sources=("sim",), fail_index=None):
    store = Store(path)
    store.begin(camp, resume=False)
    for p in store.pending():
        if p.index == fail_index:
            store.fail(p, "modem did not come back online within 120 s")
            continue
        store.finish(p, [textbook_result(p, s) for s in sources])
    return store


def test_report_writes_html_pngs_and_csv(tmp_path, small_spec):
    camp = load_campaign(small_spec)
    with _filled_store(tmp_path / "c.db", camp, fail_index=3) as store:
        paths = write_report(store, tmp_path / "out" / "report.html")
    names = sorted(p.name for p in paths)
    assert names == ["report-latency-cdf.png", "report-latency.png", "report-over-time.png", "report-throughput.png",
                     "report.csv", "report.html"]
    page = (tmp_path / "out" / "report.html").read_text()
    imgs = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(imgs) == 4
    for b64 in imgs:
        assert base64.b64decode(b64).startswith(b"\x89PNG\r\n\x1a\n")
    assert (tmp_path / "out" / "report-throughput.png").read_bytes().startswith(b"\x89PNG")
    assert "11 done, 1 failed" in page
    assert "modem did not come back online" in page
    rows = list(csv.DictReader((tmp_path / "out" / "report.csv").open()))
    assert len(rows) == 12
    failed = [r for r in rows if r["state"] == "failed"]
    assert len(failed) == 1 and failed[0]["source"] == "" and failed[0]["idx"] == "3"
    assert {r["source"] for r in rows if r["state"] == "done"} == {"sim"}
    assert not list((tmp_path / "out").glob(".*.tmp"))


def test_measured_campaign_overlays_the_simulator(tmp_path):
    tpl = tmp_path / "tier.j2"
    tpl.write_text("Main { }\n")
    camp = parse_campaign(f"template: {tpl}\ntarget: {{kind: emu}}\n"
                          "grid: {upstream_rate: [2M], buffer: [16K, 64K], rtt: [40ms]}\n", source=str(tmp_path / "e.yaml"))
    with _filled_store(tmp_path / "e.db", camp, sources=("emu", "sim")) as store:
        paths = write_report(store, tmp_path / "r.html")
    assert "r-measured-vs-simulated.png" in {p.name for p in paths}
    assert "Target: <b>emu</b>" in (tmp_path / "r.html").read_text()


# White et al.'s plant and hosts (the docsis2.0 profile, Reno, drop-tail): the tiers these tests come from
WHITE = {"profile": "docsis2.0", "congestion_control": "reno", "aqm": "none"}


def _cells(rate, rtt_goodput_delay):
    return [Cell(source="sim", tier="t", upstream_rate=rate, variant="", rtt=rtt, buffer=b, goodput_bps=g,
                 queue_delay=d, latency_loaded=None, mos=None, reps=1, model="sim: token bucket", **WHITE)
            for (rtt, b), (g, d) in rtt_goodput_delay.items()]


def test_recommendation_is_the_smallest_buffer_that_keeps_throughput_within_the_queue_budget():
    cells = _cells(2e6, {
        (0.04, 16384): (1.5e6, 0.06), (0.04, 65536): (1.9e6, 0.25), (0.04, 32768): (1.85e6, 0.09),
        (0.1, 16384): (1.2e6, 0.06), (0.1, 65536): (1.9e6, 0.25), (0.1, 32768): (1.75e6, 0.09),
    })
    at40, at100 = recommend(cells)
    assert (at40.rtt, at40.buffer) == (0.04, 32768)  # 97% of the best within 130 ms (150 - 40/2)
    assert "≥95%" in at40.reason and "130 ms" in at40.reason
    assert at40.queue_ms == 32768 * 8 / 2e6 * 1e3 and at40.advised == 16384  # buffer advise: one BDP on the ladder
    assert at40.paper and "16 KiB sufficed at 2 Mb/s" in at40.paper
    # at 100 ms only 92% within the 100 ms budget: the most throughput within it, and why
    assert at100.buffer == 32768 and "no size within the 100 ms queue budget" in at100.reason


def test_recommendation_says_when_throughput_must_give_way():
    cells = _cells(10e6, {(0.1, 16384): (4e6, 0.01), (0.1, 65536): (6e6, 0.05), (0.1, 262144): (9.5e6, 0.2)})
    (rec,) = recommend(cells)
    assert rec.buffer == 65536
    assert "no size within the 100 ms queue budget" in rec.reason
    assert "256 KiB at 100 ms" in rec.paper and "adds 210 ms" in rec.paper


def test_advise_and_the_campaign_agree_on_the_same_tier():
    """The same policy: a campaign whose results follow the sizing rule's premise (one BDP keeps
    95%) recommends what `buffer advise` says, for every White et al. tier."""
    from hfcprov.queue.inputs import SizingInputs
    from hfcprov.queue.predict import bdp_bytes
    from hfcprov.queue.sizing import LADDER, size_buffer

    for rate, rtt in ((1e6, 0.04), (2e6, 0.04), (5e6, 0.04), (10e6, 0.04), (2e6, 0.1), (5e6, 0.1), (10e6, 0.1)):
        table = {}
        for b in LADDER[:6]:
            share = 1.0 if b >= bdp_bytes(rate, rtt) else 0.9 * b / bdp_bytes(rate, rtt)
            table[(rtt, b)] = (rate * 0.95 * share, b * 8 / rate)
        (rec,) = recommend(_cells(rate, table))
        a = size_buffer(SizingInputs(rate, rtt, congestion_control="reno", aqm_latency_target=None,
                                     profile="docsis2.0"))
        assert rec.advised == a.target
        if a.target in LADDER:  # the campaign picks from its grid; the advice is capped by the budget otherwise
            assert rec.buffer == a.target, (rate, rtt)
        else:
            assert rec.buffer == max(b for b in LADDER[:6] if b <= a.maximum), (rate, rtt)


def test_report_of_a_missing_database_is_one_clear_error(tmp_path):
    from hfcprov.lab.spec import CampaignError

    with pytest.raises(CampaignError, match="no such campaign database"):
        Store(tmp_path / "none.db", create=False)
