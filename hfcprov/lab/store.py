"""The results store: one SQLite file per campaign, in WAL mode.

WAL lets ``hfcprov campaign status`` read while the runner writes. A point is
marked done in the same transaction that inserts its runs, so after a crash
(Ctrl-C, kill -9, power loss: SQLite's journal makes the commit atomic and
durable) every point is either done with all its runs or not done with none;
``UNIQUE(point_id, source)`` keeps a point from being stored twice.

Tables: ``campaign`` (the spec, minus secrets), ``point`` (grid values, state),
``run`` (a ``RunResult`` per point and source: headline columns for queries plus
the full JSON), ``series`` (time series samples of a run), ``environment``
(versions, kernel, congestion control, modem sysDescr).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from hfcprov.lab.schema import (
    METRIC_NAMES,
    METRICS,
    POINT_COLUMNS,
    Point,
    metric_values,
    point_from_row,
    point_table_columns,
    point_values,
    run_table_columns,
)
from hfcprov.lab.spec import Campaign, CampaignError
from hfcprov.results import RunResult

SCHEMA_VERSION = 3  # 2: the mac axis, the run's model column; 3: the profile and far_rtt axes, far_share

SCHEMA_TEMPLATE = """
CREATE TABLE IF NOT EXISTS campaign (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    name TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    source TEXT,
    schema_version INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS point (
    id INTEGER PRIMARY KEY,
    {point_columns},
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'done', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    started REAL,
    finished REAL
);
CREATE TABLE IF NOT EXISTS run (
    id INTEGER PRIMARY KEY,
    point_id INTEGER NOT NULL REFERENCES point(id),
    source TEXT NOT NULL CHECK (source IN ('sim', 'emu', 'modem')),
    {run_columns},
    result_json TEXT NOT NULL,
    UNIQUE (point_id, source)
);
CREATE TABLE IF NOT EXISTS series (
    run_id INTEGER NOT NULL REFERENCES run(id),
    name TEXT NOT NULL,
    t REAL NOT NULL,
    value REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS series_run ON series (run_id, name);
CREATE TABLE IF NOT EXISTS environment (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    recorded REAL NOT NULL
);
"""

# the point and run columns come from the one declaration in hfcprov.lab.schema
SCHEMA = SCHEMA_TEMPLATE.replace("{point_columns}", point_table_columns()).replace(
    "{run_columns}", run_table_columns())


@dataclass
class Progress:
    """Where a campaign stands: counts by state, timing, the running and last points."""

    name: str
    total: int
    done: int
    failed: int
    running: int
    pending: int
    started: float | None  # first point started (epoch seconds)
    seconds_per_point: float | None  # wall-clock seconds per finished point, parallelism included
    running_keys: list[str]
    last: dict | None  # the last finished point: key, goodput_bps, latency_loaded_p50, error

    @property
    def remaining(self) -> int:
        return self.pending + self.running

    @property
    def eta_seconds(self) -> float | None:
        if self.seconds_per_point is None:
            return None
        return self.remaining * self.seconds_per_point


def busy_seconds(spans) -> float:
    """Wall time covered by the (started, finished) spans: overlaps (parallel points) count once,
    gaps (the campaign stopped, then resumed) not at all, so an ETA after --resume is not inflated."""
    total, end = 0.0, None
    for start, finish in sorted((float(a), float(b)) for a, b in spans):
        if end is None or start > end:
            total += finish - start
            end = finish
        elif finish > end:
            total += finish - end
            end = finish
    return total


class Store:
    """An open campaign database. Use as a context manager or call ``close()``."""

    def __init__(self, path: str | Path, create: bool = True):
        self.path = Path(path)
        if not create and not self.path.exists():
            raise CampaignError(f"{self.path}: no such campaign database")
        if create:
            # `-d out/sweep.db` on a fresh checkout: make the folder, as every other output does.
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.db.row_factory = sqlite3.Row
            self.db.execute("PRAGMA journal_mode=WAL")
            # FULL: a commit survives power loss, not just a killed process.
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA foreign_keys=ON")
            if create:
                self.db.executescript(SCHEMA)
                self._add_new_metrics()
            elif not self._has_table("campaign"):
                raise CampaignError(f"{self.path}: not a campaign database (no campaign table)")
        except sqlite3.DatabaseError as err:
            raise CampaignError(f"{self.path}: not a campaign database ({err})") from None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self.db.close()

    def _add_new_metrics(self) -> None:
        """A store written before a metric was declared gets its column (NULL for the runs it holds), so
        ``--resume`` can store new runs in it; reading copes without (``rows``)."""
        have = {c[1] for c in self.db.execute("PRAGMA table_info(run)")}
        for m in METRICS:
            if m.name not in have:
                self.db.execute(f"ALTER TABLE run ADD COLUMN {m.name} {m.sql}")

    def _has_table(self, name: str) -> bool:
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() is not None

    # -- campaign ----------------------------------------------------------------

    def campaign_row(self) -> sqlite3.Row | None:
        return self.db.execute("SELECT * FROM campaign WHERE id = 1").fetchone()

    def spec(self) -> dict:
        row = self.campaign_row()
        if row is None:
            raise CampaignError(f"{self.path}: the database holds no campaign yet")
        return json.loads(row["spec_json"])

    def begin(self, campaign: Campaign, resume: bool) -> int:
        """Record ``campaign`` and its points; returns how many points are left to run.

        A fresh store gets every point. An existing one must hold the same campaign
        (same fingerprint) and ``resume`` must be asked for; points a killed runner
        left 'running' go back to 'pending'.
        """
        points = campaign.points()
        with self.transaction():
            row = self.campaign_row()
            if row is None:
                self.db.execute(
                    "INSERT INTO campaign (id, name, fingerprint, spec_json, source, schema_version, created) "
                    "VALUES (1, ?, ?, ?, ?, ?, ?)",
                    (campaign.name, campaign.fingerprint, json.dumps(campaign.to_record(), default=str),
                     campaign.source, SCHEMA_VERSION, time.time()))
                self.db.executemany(
                    f"INSERT INTO point ({', '.join(POINT_COLUMNS)}) VALUES ({', '.join('?' * len(POINT_COLUMNS))})",
                    [point_values(p) for p in points])
            else:
                if row["fingerprint"] != campaign.fingerprint:
                    raise CampaignError(
                        f"{self.path}: holds campaign {row['name']!r} run from a different spec "
                        f"(grid, target or traffic changed); use a new database file")
                if not resume:
                    raise CampaignError(
                        f"{self.path}: already holds campaign {row['name']!r}; "
                        f"add --resume to finish it, or choose a new database file")
                self.db.execute("UPDATE point SET state = 'pending' WHERE state = 'running'")
        return self.db.execute("SELECT count(*) FROM point WHERE state = 'pending'").fetchone()[0]

    def retry_failed(self) -> int:
        with self.transaction():
            return self.db.execute("UPDATE point SET state = 'pending', error = NULL WHERE state = 'failed'").rowcount

    # -- points ------------------------------------------------------------------

    def pending(self) -> list[Point]:
        rows = self.db.execute("SELECT * FROM point WHERE state = 'pending' ORDER BY idx").fetchall()
        return [point_from_row(r) for r in rows]

    def mark_running(self, point: Point) -> None:
        with self.transaction():
            self.db.execute("UPDATE point SET state = 'running', attempts = attempts + 1, started = ? "
                            "WHERE idx = ? AND state = 'pending'", (time.time(), point.index))

    def finish(self, point: Point, results: list[RunResult]) -> None:
        """Store a point's runs and mark it done, all or nothing."""
        with self.transaction():
            pid = self._point_id(point)
            state = self.db.execute("SELECT state FROM point WHERE id = ?", (pid,)).fetchone()[0]
            if state == "done":
                raise CampaignError(f"{self.path}: point {point.key!r} is already done")
            for result in results:
                self._insert_run(pid, result)
            self.db.execute("UPDATE point SET state = 'done', error = NULL, finished = ? WHERE id = ?",
                            (time.time(), pid))

    def fail(self, point: Point, error: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE point SET state = 'failed', error = ?, finished = ? WHERE idx = ?",
                            (error, time.time(), point.index))

    def _point_id(self, point: Point) -> int:
        row = self.db.execute("SELECT id, key FROM point WHERE idx = ?", (point.index,)).fetchone()
        if row is None or row["key"] != point.key:
            raise CampaignError(f"{self.path}: point {point.index} ({point.key}) is not in this campaign")
        return row["id"]

    def _insert_run(self, point_id: int, r: RunResult) -> None:
        cols = ("point_id", "source", *METRIC_NAMES, "result_json")
        cur = self.db.execute(
            f"INSERT INTO run ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            (point_id, r.source, *metric_values(r), json.dumps(r.to_dict(series=False))))
        run_id = cur.lastrowid
        for name, samples in r.series.items():
            self.db.executemany("INSERT INTO series (run_id, name, t, value) VALUES (?, ?, ?, ?)",
                                [(run_id, name, float(t), float(v)) for t, v in samples])

    # -- environment -------------------------------------------------------------

    def set_environment(self, values: dict) -> None:
        now = time.time()
        with self.transaction():
            self.db.executemany("INSERT OR REPLACE INTO environment (key, value, recorded) VALUES (?, ?, ?)",
                                [(k, str(v), now) for k, v in values.items()])

    def environment(self) -> dict:
        return {r["key"]: r["value"] for r in self.db.execute("SELECT key, value FROM environment ORDER BY key")}

    # -- reading -----------------------------------------------------------------

    def rows(self) -> list[dict]:
        """One row per run (or per failed/unrun point, with source None), grid values and headline figures."""
        have = {c[1] for c in self.db.execute("PRAGMA table_info(run)")}  # a store may predate a metric
        metrics = ", ".join(f"r.{m}" if m in have else f"NULL AS {m}" for m in METRIC_NAMES)
        q = (f"SELECT p.*, r.id AS run_id, r.source, {metrics} FROM point p LEFT JOIN run r ON r.point_id = p.id "
             "ORDER BY p.idx, r.source")
        rows = [dict(r) for r in self.db.execute(q)]
        for r in rows:  # axes a store predates: their default
            for name, value in point_from_row(r).to_dict().items():
                r.setdefault(name, value)
        return rows

    def result(self, run_id: int, series: bool = True) -> RunResult:
        row = self.db.execute("SELECT result_json FROM run WHERE id = ?", (run_id,)).fetchone()
        d = json.loads(row[0])
        if series:
            s: dict[str, list] = {}
            for name, t, v in self.db.execute("SELECT name, t, value FROM series WHERE run_id = ? ORDER BY rowid",
                                              (run_id,)):
                s.setdefault(name, []).append((t, v))
            d["series"] = s
        return RunResult.from_dict(d)

    def series_values(self, run_id: int, name: str) -> list[float]:
        """The values of one time series of a run, in time order (e.g. ``rtt_loaded``: every RTT under load)."""
        return [v for (v,) in self.db.execute("SELECT value FROM series WHERE run_id = ? AND name = ? ORDER BY rowid",
                                               (run_id, name))]

    def progress(self) -> Progress:
        row = self.campaign_row()
        counts = dict(self.db.execute("SELECT state, count(*) FROM point GROUP BY state").fetchall())
        total = sum(counts.values())
        spans = self.db.execute("SELECT started, finished FROM point WHERE state IN ('done', 'failed') "
                                "AND started IS NOT NULL AND finished IS NOT NULL").fetchall()
        per_point = busy_seconds(spans) / len(spans) if spans else None
        running = [r[0] for r in self.db.execute("SELECT key FROM point WHERE state = 'running' ORDER BY idx")]
        last = self.db.execute(
            "SELECT p.key, p.error, p.state, r.goodput_bps, r.latency_loaded_p50, r.source FROM point p "
            "LEFT JOIN run r ON r.point_id = p.id WHERE p.state IN ('done', 'failed') "
            "ORDER BY p.finished DESC, r.source LIMIT 1").fetchone()
        first = self.db.execute("SELECT min(started) FROM point").fetchone()[0]
        return Progress(name=row["name"] if row else "?", total=total, done=counts.get("done", 0),
                        failed=counts.get("failed", 0), running=counts.get("running", 0),
                        pending=counts.get("pending", 0), started=first, seconds_per_point=per_point,
                        running_keys=running, last=dict(last) if last else None)

    # -- plumbing ----------------------------------------------------------------

    def transaction(self):
        return _Transaction(self.db)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT (or ROLLBACK on error): one writer, atomic steps."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type, exc, tb):
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
        return False
