"""The SQLite store: WAL, all-or-nothing points, exactly-once, resume rules."""

from __future__ import annotations

import sqlite3

import pytest

from hfcprov.lab.spec import CampaignError, load_campaign, parse_campaign
from hfcprov.lab.store import Store
from tests.lab.conftest import textbook_result


def test_fresh_store_is_wal_and_holds_every_point(tmp_path, small_spec):
    camp = load_campaign(small_spec)
    with Store(tmp_path / "c.db") as store:
        assert store.begin(camp, resume=False) == 12
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert [p.key for p in store.pending()] == [p.key for p in camp.points()]
        assert store.spec()["name"] == "small"


def test_finish_stores_runs_series_and_marks_done(tmp_path, small_spec):
    camp = load_campaign(small_spec)
    with Store(tmp_path / "c.db") as store:
        store.begin(camp, resume=False)
        p = store.pending()[0]
        store.mark_running(p)
        r = textbook_result(p)
        store.finish(p, [r])
        rows = [x for x in store.rows() if x["idx"] == p.index]
        assert len(rows) == 1 and rows[0]["state"] == "done" and rows[0]["source"] == "sim"
        back = store.result(rows[0]["run_id"])
        assert back.goodput_bps == r.goodput_bps
        assert back.latency_loaded.p50 == r.latency_loaded.p50
        assert back.series == r.series
        with pytest.raises(CampaignError, match="already done"):
            store.finish(p, [r])
        assert store.db.execute("SELECT count(*) FROM run").fetchone()[0] == 1


def test_a_failing_insert_leaves_the_point_not_done(tmp_path, small_spec):
    camp = load_campaign(small_spec)
    with Store(tmp_path / "c.db") as store:
        store.begin(camp, resume=False)
        p = store.pending()[0]
        good = textbook_result(p)
        # two results of the same source for one point violate UNIQUE(point_id, source)
        with pytest.raises(sqlite3.IntegrityError):
            store.finish(p, [good, good])
        assert store.db.execute("SELECT count(*) FROM run").fetchone()[0] == 0
        assert store.db.execute("SELECT state FROM point WHERE idx = ?", (p.index,)).fetchone()[0] == "pending"


def test_reopen_needs_resume_and_the_same_campaign(tmp_path, small_spec):
    camp = load_campaign(small_spec)
    db = tmp_path / "c.db"
    with Store(db) as store:
        store.begin(camp, resume=False)
        p = store.pending()[0]
        store.mark_running(p)  # then the runner is killed
    with Store(db) as store:
        with pytest.raises(CampaignError, match="--resume"):
            store.begin(camp, resume=False)
        other = parse_campaign("name: small\ngrid: {upstream_rate: 1M, buffer: 8K}\n")
        with pytest.raises(CampaignError, match="different spec"):
            store.begin(other, resume=True)
        assert store.begin(camp, resume=True) == 12  # the killed 'running' point is pending again


def test_failed_points_are_kept_and_can_be_retried(tmp_path, small_spec):
    camp = load_campaign(small_spec)
    with Store(tmp_path / "c.db") as store:
        store.begin(camp, resume=False)
        p = store.pending()[0]
        store.fail(p, "modem did not come back online within 120 s")
        prog = store.progress()
        assert prog.failed == 1 and prog.pending == 11
        assert prog.last["error"].startswith("modem did not")
        assert store.retry_failed() == 1
        assert store.progress().pending == 12


def test_a_reader_sees_progress_while_a_writer_holds_a_transaction(tmp_path, small_spec):
    camp = load_campaign(small_spec)
    db = tmp_path / "c.db"
    with Store(db) as writer, Store(db, create=False) as reader:
        writer.begin(camp, resume=False)
        p = writer.pending()[0]
        writer.finish(p, [textbook_result(p)])
        with writer.transaction():
            writer.db.execute("UPDATE point SET state = 'running' WHERE idx = 1")
            assert reader.progress().done == 1  # WAL: not blocked, sees the last commit
            assert reader.progress().running == 0


def test_not_a_campaign_database(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(CampaignError, match="junk.db: not a campaign database"):
        Store(junk, create=False)
    with pytest.raises(CampaignError, match="no such campaign database"):
        Store(tmp_path / "missing.db", create=False)


def test_store_in_a_folder_that_does_not_exist_yet(tmp_path, small_spec):
    # README's main job writes out/buffer-sweep.db on a fresh checkout, where out/ is absent.
    path = tmp_path / "out" / "nested" / "c.db"
    with Store(path) as store:
        assert store.begin(load_campaign(small_spec), resume=False) == 12
    assert path.exists()


def test_eta_ignores_the_time_a_campaign_was_stopped():
    from hfcprov.lab.store import busy_seconds

    # two parallel points (0-10, 5-12), then the campaign was down for an hour, then one more point
    spans = [(0.0, 10.0), (5.0, 12.0), (3612.0, 3620.0)]
    assert busy_seconds(spans) == 20.0
    assert busy_seconds([]) == 0.0
    # as the store hands them over: sqlite3.Row objects, which do not sort
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    rows = db.execute("SELECT 5.0, 12.0 UNION ALL SELECT 0.0, 10.0").fetchall()
    assert busy_seconds(rows) == 12.0


def test_a_store_older_than_a_metric_takes_new_runs(tmp_path, small_spec):
    # issue 27 added latency_loaded_p90: a store written before it must still --resume and report
    from tests.lab.conftest import textbook_result

    path = tmp_path / "old.db"
    with Store(path) as store:
        store.begin(load_campaign(small_spec), resume=False)
        first = store.pending()[0]
        store.finish(first, [textbook_result(first)])
        store.db.execute("ALTER TABLE run DROP COLUMN latency_loaded_p90")
    with Store(path, create=False) as old:
        assert old.rows()[0]["latency_loaded_p90"] is None  # read as absent
    with Store(path) as store:
        store.begin(load_campaign(small_spec), resume=True)
        p = store.pending()[0]
        store.finish(p, [textbook_result(p)])
        rows = {r["idx"]: r for r in store.rows()}
        assert rows[p.index]["latency_loaded_p90"] == pytest.approx(textbook_result(p).latency_loaded.p90)
        run = rows[p.index]["run_id"]
        assert store.series_values(run, "rtt_loaded") == [v for _, v in textbook_result(p).series["rtt_loaded"]]


def test_the_simulator_keeps_every_rtt_under_load_for_the_cdf():
    from hfcprov.lab.backends import sim_scenario
    from hfcprov.lab.spec import parse_campaign
    from hfcprov.sim import run

    camp = parse_campaign("grid: {upstream_rate: 2M, buffer: 32K}\ntraffic: {duration: 4s, warmup: 1s}\n")
    r = run(sim_scenario(camp, camp.points()[0]))
    samples = [v for _, v in r.series["rtt_loaded"]]
    assert len(samples) == r.latency_loaded.count > 20
    from hfcprov.results import LatencyStats

    assert LatencyStats.of(samples).p90 == r.latency_loaded.p90
