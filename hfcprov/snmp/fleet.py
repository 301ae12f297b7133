"""Audits and resets of a whole plant: sharded, on a Dask cluster if asked, stored as they arrive.

A million modems is hours from one process (the audit is bound by what the modems and the client's
CPU answer), so the work is cut into shards: a CMTS's modems (inventory column ``cmts``), in parts
of at most ``size`` that run one after another, so a per-CMTS rate cap holds wherever they run;
without a ``cmts`` column, chunks of the inventory. Shards run on a Dask cluster (``scheduler``:
``tcp://host:8786``, or ``local:N`` for N worker processes on this machine); each one is a plain
``audit_all`` / ``push_all`` in its worker, so verdicts are the same as in one process. Every
finished shard's rows go to SQLite (``FleetStore``) at once: a run stopped half-way is resumed
with the same store and run name, and only the modems it has no row for are done again.

The workers read ``configs`` by path (a folder every worker sees at the same place) and get the
credentials with each shard: over a network, use a TLS scheduler (``tls://``).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hfcprov.errors import HfcprovError


class FleetError(HfcprovError):
    """The fleet run cannot start: a bad scheduler, store or shard size."""


@dataclass(frozen=True)
class Shard:
    key: str  # the CMTS, or "chunk" when the inventory names none
    part: int  # this CMTS's n-th part: parts of one CMTS run one after another
    targets: tuple


def shards(targets, size: int = 500) -> list[Shard]:
    """The targets cut by CMTS (``target.cmts``) into parts of at most ``size``; targets without a
    CMTS in chunks of ``size`` (each its own key: they run side by side)."""
    if size < 1:
        raise FleetError("a shard needs at least one modem (--shard-size)")
    by_cmts: dict[str, list] = {}
    loose = []
    for t in targets:
        (by_cmts.setdefault(t.cmts, []) if getattr(t, "cmts", "") else loose).append(t)
    out = []
    for cmts, mine in by_cmts.items():
        out += [Shard(cmts, n, tuple(mine[i:i + size])) for n, i in enumerate(range(0, len(mine), size))]
    out += [Shard(f"chunk {n}", 0, tuple(loose[i:i + size])) for n, i in enumerate(range(0, len(loose), size))]
    return out


class FleetStore:
    """One SQLite file of results: a row per (run, action, modem), written a shard at a time."""

    def __init__(self, path, run: str, action: str):
        self.path, self.run, self.action = Path(path), run, action
        try:
            self.db = sqlite3.connect(self.path, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("""CREATE TABLE IF NOT EXISTS result (
                run TEXT NOT NULL, action TEXT NOT NULL, mac TEXT NOT NULL, host TEXT, port INTEGER,
                status TEXT NOT NULL, detail TEXT, row TEXT NOT NULL, stored REAL NOT NULL,
                PRIMARY KEY (run, action, mac))""")
            self.db.commit()
        except sqlite3.Error as err:
            raise FleetError(f"{self.path}: cannot use as a result store: {err}") from None

    def done(self) -> set[str]:
        """The modems this run has a result for (a resumed run skips them)."""
        return {mac for (mac,) in self.db.execute("SELECT mac FROM result WHERE run = ? AND action = ?",
                                                 (self.run, self.action))}

    def add(self, rows: list[dict]) -> None:
        now = time.time()
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO result (run, action, mac, host, port, status, detail, row, stored) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(self.run, self.action, r["mac"], r.get("host"), r.get("port"), r["status"], r.get("detail"),
                  json.dumps(r, default=str), now) for r in rows])

    def rows(self) -> list[dict]:
        return [json.loads(row) for (row,) in self.db.execute(
            "SELECT row FROM result WHERE run = ? AND action = ? ORDER BY mac", (self.run, self.action))]

    def counts(self) -> Counter:
        return Counter(dict(self.db.execute("SELECT status, COUNT(*) FROM result WHERE run = ? AND action = ? "
                                            "GROUP BY status", (self.run, self.action)).fetchall()))

    def close(self) -> None:
        self.db.close()


# -- what a worker runs for one shard --------------------------------------------------------------
def audit_shard(shard: Shard, credentials, configs: str | None, secret: bytes | None, options: dict) -> list[dict]:
    """Audit one shard's modems (in a Dask worker, or here): ``audit_all`` on them, every row."""
    import asyncio

    from hfcprov.snmp.audit import ExpectedConfigs, audit_all

    rows: list[dict] = []
    asyncio.run(audit_all(list(shard.targets), credentials, ExpectedConfigs(configs, secret),
                          on_result=lambda r: rows.append(r.as_dict()), **options))
    return rows


def reset_shard(shard: Shard, credentials, options: dict, timing: dict, cmts: tuple[str, int] | None = None) -> list[dict]:
    """Reset one shard's modems (paced by ``options["rate"]``, at most ``concurrency`` down at once),
    watched from ``cmts`` when given (``push.CmtsWatch``)."""
    import asyncio

    from hfcprov.snmp.push import PushTarget, push_all, resetter

    rows: list[dict] = []
    targets = [PushTarget(t.host, t.port, t.mac) for t in shard.targets]
    asyncio.run(push_all("reset", targets, credentials, resetter(timing, cmts), lambda r: rows.append(r.as_dict()),
                         **options))
    return rows


# -- running the shards ---------------------------------------------------------------------------
@dataclass
class FleetSummary:
    counts: Counter  # every stored row of the run, by status (a resumed run's earlier rows included)
    seconds: float
    done: int  # modems done by this invocation
    skipped: int  # already stored (a resumed run)
    workers: str

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def run_shards(targets, work: Callable, args: tuple, store: FleetStore | None = None, scheduler: str | None = None,
               size: int = 500, on_rows: Callable[[list[dict]], None] | None = None) -> FleetSummary:
    """``work(shard, *args)`` over every shard of ``targets`` not yet in ``store``, on ``scheduler``
    (None: in this process, one shard after another); rows stored and handed to ``on_rows`` as
    each shard finishes. A CMTS's parts run in turn; different CMTSes side by side."""
    started = time.monotonic()
    done = store.done() if store is not None else set()
    todo = [t for t in targets if t.mac not in done]
    pending: dict[str, list[Shard]] = {}
    for shard in shards(todo, size):
        pending.setdefault(shard.key, []).append(shard)
    finished = 0

    def arrived(rows: list[dict]) -> None:
        nonlocal finished
        finished += len(rows)
        if store is not None:
            store.add(rows)
        if on_rows is not None:
            on_rows(rows)

    if scheduler is None:
        for parts in pending.values():
            for shard in parts:
                arrived(work(shard, *args))
        workers = "this process"
    else:
        workers = _on_dask(scheduler, pending, work, args, arrived)
    counts = store.counts() if store is not None else None
    return FleetSummary(counts if counts is not None else Counter(), time.monotonic() - started, finished,
                        len(targets) - len(todo), workers)


# What a Dask process does on its own, measured idle on 2 cores (2 workers and the scheduler): ~70 ms of
# CPU per second at distributed's defaults, ~20 ms with these. A shard is long I/O-bound work in one
# thread: no statistical profiler sampling it every 10 ms, a loop-blocked watchdog ticking once a second
# instead of 50 times, host metrics every 5 s and memory every second instead of 2 and 10 times. At 160
# modems/s that is 0.3 ms of CPU per modem.
QUIET_DASK = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
}


def local_cluster(workers: int):
    """A Dask LocalCluster of ``workers`` single-threaded processes, configured with ``QUIET_DASK``
    (what ``--scheduler local:N`` runs). A cluster started elsewhere takes the same settings from
    its own Dask configuration (``docs/snmp.md``)."""
    import dask
    from distributed import LocalCluster

    with dask.config.set(QUIET_DASK):  # read by the scheduler and handed to each worker's nanny here
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)


def _on_dask(scheduler: str, pending: dict[str, list[Shard]], work, args, arrived) -> str:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise FleetError("--scheduler needs Dask distributed: pip install 'hfcprov[dask]'") from None
    cluster = None
    try:
        if scheduler.startswith("local:"):
            try:
                n = int(scheduler.split(":", 1)[1])
            except ValueError:
                raise FleetError(f"--scheduler {scheduler}: local:N takes a number of workers") from None
            cluster = local_cluster(n)
            client = Client(cluster)
        else:
            client = Client(scheduler, timeout="20s")
    except (OSError, TimeoutError) as err:
        raise FleetError(f"cannot reach the Dask scheduler at {scheduler}: {err}") from None
    try:
        workers = f"dask {scheduler}, {sum(client.nthreads().values())} worker threads"
        # first part of every CMTS now; the next part of a CMTS when its previous one is back
        key_of = {}
        futures = []
        for key, parts in pending.items():
            future = client.submit(work, parts.pop(0), *args, pure=False)
            key_of[future.key] = key
            futures.append(future)
        queue = as_completed(futures)
        for future in queue:
            key = key_of.pop(future.key)
            arrived(future.result())
            if pending[key]:
                nxt = client.submit(work, pending[key].pop(0), *args, pure=False)
                key_of[nxt.key] = key
                queue.add(nxt)
            future.release()
        return workers
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
