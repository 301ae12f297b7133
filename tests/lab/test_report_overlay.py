"""Issue 27, item 3: `campaign report A.db B.db` overlays campaigns, labelled by their specs, with their differences."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest

from hfcprov.lab.report import write_report
from hfcprov.lab.spec import parse_campaign
from hfcprov.lab.store import Store
from tests.lab.conftest import textbook_result
from tests.lab.test_report_plots import figures

GRID = "grid: {upstream_rate: [1M, 10M], buffer: [16K, 64K, 256K], rtt: 40ms, mac: %s}\nrepetitions: 2\n"


def _store(tmp_path, name, mac, db=None):
    camp = parse_campaign(f"name: {name}\n" + GRID % mac, source=str(tmp_path / f"{name}.yaml"))
    store = Store(tmp_path / (db or f"{name}.db"))
    store.begin(camp, resume=False)
    for p in store.pending():
        r = textbook_result(p)
        if mac == "docsis":  # the second campaign's figures differ, so the overlay has two lines to draw
            r.goodput_bps *= 0.9
        store.finish(p, [r])
    return store


@pytest.mark.slow
def test_two_campaigns_share_the_axes_and_their_differences_are_listed(tmp_path):
    a, b = _store(tmp_path, "tb", "tokenbucket"), _store(tmp_path, "mac", "docsis")
    with a, b:
        single = figures(_page(write_report(a, tmp_path / "one.html")))
        paths = write_report([a, b], tmp_path / "both.html")
    page = _page(paths)
    assert "<title>Campaigns tb vs mac</title>" in page
    # the spec keys that differ, and only those (the name, the mac axis)
    diff = page.split('<table id="differences">')[1].split("</table>")[0]
    assert "<code>grid.mac</code>" in diff and "<code>name</code>" in diff and diff.count("<code>") == 2
    # one panel per rate as for one campaign, with both campaigns' points on it
    both = figures(page)
    assert both["throughput"][0] == [2 * n for n in single["throughput"][0]] == [6, 6]
    assert "one colour per compared queue or campaign" in both["throughput"][1]
    # the recommendation table names the campaign, tier by tier
    rows = page.split('<table id="recommendations">')[1].split("</table>")[0].split("<tr>")[2:]
    assert [r.split("<td>")[1].split("</td>")[0] for r in rows] == ["tb", "mac", "tb", "mac"]
    table = list(csv.DictReader((tmp_path / "both.csv").open()))
    assert {r["campaign"] for r in table} == {"tb", "mac"} and len(table) == 24


def test_campaigns_with_one_name_are_told_apart_by_their_files(tmp_path):
    a, b = _store(tmp_path, "sweep", "tokenbucket", "monday.db"), _store(tmp_path, "sweep", "docsis", "tuesday.db")
    with a, b:
        page = _page(write_report([a, b], tmp_path / "r.html"))
    assert "monday" in page and "tuesday" in page and "<title>Campaigns monday vs tuesday</title>" in page


def test_the_cli_takes_several_databases(tmp_path):
    for name, mac in (("tb", "tokenbucket"), ("mac", "docsis")):
        _store(tmp_path, name, mac).close()
    r = subprocess.run([sys.executable, "-m", "hfcprov", "campaign", "report", "tb.db", "mac.db", "-o", "cmp.html"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Campaigns tb vs mac" in (tmp_path / "cmp.html").read_text()
    missing = subprocess.run([sys.executable, "-m", "hfcprov", "campaign", "report", "tb.db", "nope.db", "-o",
                              "x.html"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert missing.returncode == 1 and "nope.db: no such campaign database" in missing.stderr
    assert not (tmp_path / "x.html").exists()


def _page(paths):
    return next(p for p in paths if p.suffix == ".html").read_text()
