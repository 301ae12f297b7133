"""Audits and resets of a plant in shards: on Dask workers the verdicts are one process's, results are
stored as each shard finishes, a stopped run resumes, and the per-CMTS rate cap holds."""

from __future__ import annotations

import json
import time

import pytest

from hfcprov.snmp.audit import AuditTarget, ExpectedConfigs, audit_all
from hfcprov.snmp.client import Credentials, run
from hfcprov.snmp.fleet import FleetStore, audit_shard, run_shards, shards
from hfcprov.tiers import load_inventory
from tests.snmp.conftest import MACS
from tests.snmp.test_cli import by_mac, hfcprov

NAMES = ["insync", "drifted", "wrongcfg", "offline", "dead", "provonly", "extra", "target", "off", "d30"]
OPTIONS = {"concurrency": 8, "timeout": 0.5, "retries": 1, "patience": 0.0, "cmts_rate": None}


def targets(lab, tmp_path):
    """Every kind of modem of the audit lab, on two CMTSes."""
    from hfcprov.snmp.audit import targets_from_inventory

    inv = lab.inventory(NAMES, tmp_path / "inv.csv")
    rows = load_inventory(inv)
    for i, row in enumerate(rows):
        row["cmts"] = f"cmts-{i % 2}"
    return targets_from_inventory(rows)


def test_shards_keep_a_cmts_together_and_in_parts():
    ts = [AuditTarget(f"m{i}", "h", cmts=f"c{i % 2}") for i in range(7)] + [AuditTarget("x", "h"), AuditTarget("y", "h")]
    got = shards(ts, size=2)
    assert [(s.key, s.part, len(s.targets)) for s in got] == [
        ("c0", 0, 2), ("c0", 1, 2), ("c1", 0, 2), ("c1", 1, 1), ("chunk 0", 0, 2)]
    assert all(t.cmts == s.key for s in got if s.key != "chunk 0" for t in s.targets)


@pytest.mark.slow
def test_dask_workers_give_the_verdicts_of_one_process(lab, tmp_path):
    ts = targets(lab, tmp_path)
    local = {}
    run(audit_all(ts, Credentials(community="public"), ExpectedConfigs(lab.configs),
                  on_result=lambda r: local.__setitem__(r.mac, (r.status, r.detail)), **OPTIONS))
    store = FleetStore(tmp_path / "fleet.db", "dask", "audit")
    arrivals = []
    summary = run_shards(ts, audit_shard, (Credentials(community="public"), str(lab.configs), None, OPTIONS), store,
                         scheduler="local:2", size=3, on_rows=lambda rows: arrivals.append(len(rows)))
    assert "dask local:2, 2 worker threads" == summary.workers
    assert {r["mac"]: (r["status"], r["detail"]) for r in store.rows()} == local
    assert sum(arrivals) == len(ts) and max(arrivals) <= 3  # stored shard by shard, as they came
    assert summary.total == len(ts) and summary.skipped == 0
    store.close()


def test_a_stopped_run_resumes_where_it_was(lab, tmp_path):
    ts = targets(lab, tmp_path)
    path = tmp_path / "fleet.db"
    store = FleetStore(path, "night", "audit")
    args = (Credentials(community="public"), str(lab.configs), None, OPTIONS)
    first = ts[:4]  # as if the run stopped after these
    run_shards(first, audit_shard, args, store, size=2)
    store.close()
    store = FleetStore(path, "night", "audit")
    seen = []
    summary = run_shards(ts, audit_shard, args, store, size=2, on_rows=lambda rows: seen.extend(r["mac"] for r in rows))
    assert summary.skipped == 4 and sorted(seen) == sorted(t.mac for t in ts[4:])
    assert summary.total == len(ts) and len(store.rows()) == len(ts)
    # another run name in the same file starts afresh
    assert FleetStore(path, "other", "audit").done() == set()
    store.close()


def test_the_cli_stores_and_resumes(lab, tmp_path):
    inv = lab.inventory(["insync", "drifted", "offline"], tmp_path / "inv.csv")
    db = tmp_path / "audit.db"
    args = ("snmp", "audit", "--inventory", inv, "--configs", lab.configs, "--store", db, "--run", "r1",
            "--format", "json", "--timeout", "500ms")
    first = hfcprov(*args)
    assert first.returncode == 3, first.stderr  # an offline modem: not all audited
    assert {m: r["status"] for m, r in by_mac(first.stdout).items()} == {
        MACS["insync"]: "in-sync", MACS["drifted"]: "drifted", MACS["offline"]: "offline"}
    again = hfcprov(*args)
    assert again.returncode == 3 and again.stdout == "" and "resumed run r1: 3 modems already audited" in again.stderr
    assert "audited 3 modems" in again.stderr and "1 drifted" in again.stderr  # the stored run's summary
    rows = [json.loads(r) for (r,) in __import__("sqlite3").connect(db).execute("SELECT row FROM result")]
    assert len(rows) == 3


def test_the_per_cmts_rate_cap_paces_one_cmts_not_the_others(lab, tmp_path):
    one = [AuditTarget(MACS["insync"], "127.0.0.1", lab.ports["insync"], f"{MACS['insync']}.cm", cmts="a")
           for _ in range(6)]
    others = [AuditTarget(MACS["insync"], "127.0.0.1", lab.ports["insync"], f"{MACS['insync']}.cm", cmts=f"b{i}")
              for i in range(6)]
    options = {**OPTIONS, "cmts_rate": 5.0}

    def took(ts):
        started = time.monotonic()
        run(audit_all(ts, Credentials(community="public"), ExpectedConfigs(lab.configs), **options))
        return time.monotonic() - started

    assert took(one) >= 5 / 5.0  # six starts on one CMTS at 5/s: the last starts 1 s after the first
    assert took(others) < took(one)  # six CMTSes: none waits for another


@pytest.mark.slow
def test_a_local_cluster_runs_its_workers_quiet():
    """--scheduler local:N starts workers without the sampling profiler and with a 1 s loop watchdog:
    at distributed's defaults they burn ~70 ms of CPU a second doing nothing (docs/snmp.md)."""

    def settings(shard):
        import dask

        return [{"mac": t.mac, "status": "ok", "profile": dask.config.get("distributed.worker.profile.enabled"),
                 "tick": dask.config.get("distributed.admin.tick.interval")} for t in shard.targets]

    rows = []
    summary = run_shards([AuditTarget("m1", "h")], settings, (), scheduler="local:1", on_rows=rows.extend)
    assert summary.workers == "dask local:1, 1 worker threads"
    assert [(r["profile"], r["tick"]) for r in rows] == [(False, "1s")]
