"""The point schema declared once: SQL, CSV, grid parser, keys and labels follow the declaration;
the mac axis picks the simulator's link model and the report names it."""

from __future__ import annotations

import sqlite3
from dataclasses import fields

import pytest

from hfcprov.lab import schema
from hfcprov.lab.report import csv_text, summarize
from hfcprov.lab.runner import run_campaign
from hfcprov.lab.spec import CampaignError, load_campaign, parse_campaign
from hfcprov.lab.store import Store
from tests.lab.conftest import write


def test_every_axis_reaches_sql_csv_grid_and_key(tmp_path):
    axes = [f.name for f in fields(schema.Point) if "axis" in f.metadata]
    assert axes == list(schema.AXES) and "mac" in axes
    camp = parse_campaign("grid: {upstream_rate: 1M, buffer: 16KiB}\n")
    assert set(camp.grid) == set(axes)
    p = camp.points()[0]
    for name, a in schema.AXES.items():
        assert f"{a.short}=" in p.key
        assert name in schema.CSV_COLUMNS
    with Store(tmp_path / "s.db") as store:
        cols = {r[1] for r in store.db.execute("PRAGMA table_info(point)")}
        assert set(axes) <= cols
        store.begin(camp, resume=False)
        (back,) = store.pending()
        assert back == p
        runcols = {r[1] for r in store.db.execute("PRAGMA table_info(run)")}
        assert set(schema.METRIC_NAMES) <= runcols


def test_an_axis_declared_with_a_choice_rejects_others_with_file_line_and_path():
    with pytest.raises(CampaignError, match=r":2: grid.mac\[1\]: unknown mac 'pie' \(known: tokenbucket, docsis\)"):
        parse_campaign("grid: {upstream_rate: 1M, buffer: 16KiB,\n  mac: [docsis, pie]}\n", source="c.yaml")
    with pytest.raises(CampaignError, match=r"grid.flows: expected a whole number >= 1"):
        parse_campaign("grid: {upstream_rate: 1M, buffer: 16KiB, flows: 0}\n")
    with pytest.raises(CampaignError, match=r"grid.buffer\[0\]: must be greater than 0"):
        parse_campaign("grid: {upstream_rate: 1M, buffer: [0]}\n")


def test_mac_axis_runs_both_models_and_the_rows_name_them(tmp_path):
    camp = load_campaign(write(tmp_path, """
        grid: {upstream_rate: 2M, buffer: 16KiB, rtt: 40ms, mac: [tokenbucket, docsis], profile: docsis2.0}
        traffic: {duration: 8s, warmup: 2s}
    """))
    assert [p.mac for p in camp.points()] == ["tokenbucket", "docsis"]
    with Store(tmp_path / "m.db") as store:
        run_campaign(camp, store, jobs=1)
        rows = store.rows()
    models = {r["mac"]: r["model"] for r in rows}
    assert models == {"tokenbucket": "sim: token bucket", "docsis": "sim: DOCSIS request-grant MAC (docsis2.0)"}
    # the request-grant MAC costs throughput the token bucket does not (White et al. Fig. 4 vs a pure shaper)
    good = {r["mac"]: r["goodput_bps"] for r in rows}
    assert good["docsis"] < good["tokenbucket"]
    cells = summarize(rows)
    assert {c.variant for c in cells} == {"tokenbucket MAC", "docsis MAC"}
    text = csv_text(rows)
    assert text.splitlines()[0].split(",")[:4] == ["idx", "key", "tier", "upstream_rate"]
    assert "sim: DOCSIS request-grant MAC" in text


def test_a_store_from_before_the_mac_axis_still_reads(tmp_path):
    db = tmp_path / "old.db"
    camp = parse_campaign("grid: {upstream_rate: 1M, buffer: 16KiB}\n")
    with Store(db) as store:
        store.begin(camp, resume=False)
    con = sqlite3.connect(db)
    con.execute("ALTER TABLE point DROP COLUMN mac")
    con.execute("ALTER TABLE run DROP COLUMN model")
    con.commit()
    con.close()
    with Store(db, create=False) as store:
        (p,) = store.pending()
        assert p.mac == "tokenbucket"
        (row,) = store.rows()
        assert row["mac"] == "tokenbucket" and row["model"] is None


def test_far_rtt_sends_every_second_flow_to_a_farther_server(tmp_path):
    from hfcprov.lab.backends import sim_scenario

    camp = load_campaign(write(tmp_path, """
        grid: {upstream_rate: 10M, buffer: 64KiB, rtt: 20ms, flows: 2, far_rtt: 80ms, congestion_control: reno}
        traffic: {duration: 10s, warmup: 2s}
    """))
    (p,) = camp.points()
    assert p.far_rtt == 0.08 and "far=80 ms" in p.key
    assert [f.rtt for f in sim_scenario(camp, p).flows] == [None, 0.08]
    with Store(tmp_path / "f.db") as store:
        run_campaign(camp, store, jobs=1)
        (row,) = store.rows()
    assert 0.1 < row["far_share"] < 0.4  # Reno's share falls with its RTT
    one = load_campaign(write(tmp_path, "grid: {upstream_rate: 10M, buffer: 64KiB}\n", name="one.yaml"))
    assert one.points()[0].far_rtt is None and sim_scenario(one, one.points()[0]).flows[0].rtt is None


@pytest.mark.parametrize("grid,message", [
    ("rtt: 40ms, flows: 2, far_rtt: 40ms", r"grid.far_rtt: 40 ms is not beyond rtt 40 ms"),
    ("flows: 2, far_rtt: 80", r"grid.far_rtt: .*needs its unit"),
])
def test_a_far_server_that_cannot_be_placed_is_refused(grid, message):
    with pytest.raises(CampaignError, match=message):
        parse_campaign(f"grid: {{upstream_rate: 1M, buffer: 16KiB, {grid}}}\n", source="c.yaml")


def test_a_measured_campaign_refuses_a_far_server(tmp_path):
    (tmp_path / "t.j2").write_text("")
    with pytest.raises(CampaignError, match=r"grid.far_rtt: a second server is simulated only \(the emu target"):
        parse_campaign("target: emu\ntemplate: t.j2\ngrid: {upstream_rate: 1M, buffer: 16KiB, flows: 2, "
                       "far_rtt: 80ms}\n", source=str(tmp_path / "c.yaml"))
