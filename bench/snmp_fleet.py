"""Benchmark: a plant's audit, one process against Dask workers, and what a million modems would take.

``--modems N`` simulated modems (default 100,000) answer on N loopback endpoints
(127.100.x.y:16161 upwards) served by ``--agents K`` snmpsim processes; every endpoint serves one of
``--tiers`` x 2 shared data files (``SnmpSimAgent(endpoint_data=...)``: each twentieth modem of a
tier has drifted), so the agents index 20 files, not 100,000. The inventory spreads them over ``--cmts`` CMTSes (column ``cmts``).

- one process: ``hfcprov.snmp.audit.audit_all`` over every modem (concurrency 64);
- Dask: ``hfcprov.snmp.fleet.run_shards`` on a LocalCluster of ``--workers`` processes, sharded
  by CMTS (``--shard-size``), rows stored in SQLite as shards finish, as ``snmp audit
  --scheduler local:2 --store`` runs it.

Both must give the same verdicts (checked). Printed per contender: modems/s, client CPU (this
process, plus the workers' for Dask) per modem against the 1 ms goal, the agents' CPU, and the
projection to a million modems: at the measured rate, and at the rate the client's CPU alone
would allow on one core (the agents, simulated here on the same 2 cores, are what a real plant's
modems do in parallel). The machine is shared: compare the contenders' figures of the same run.

    .venv/bin/python bench/snmp_fleet.py                      # 100,000 modems, 16 agents, 2 workers
    .venv/bin/python bench/snmp_fleet.py --modems 10000 --agents 4 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.snmp_audit import TIER, Agents  # noqa: E402 - the audit bench's lab parts

from hfcprov.config import encode, parse_text  # noqa: E402
from hfcprov.fileio import atomic_write  # noqa: E402
from hfcprov.model import service_flows  # noqa: E402
from hfcprov.snmp import agentdata  # noqa: E402
from hfcprov.snmp.audit import DRIFTED, IN_SYNC, AuditTarget, ExpectedConfigs, audit_all  # noqa: E402
from hfcprov.snmp.client import Credentials  # noqa: E402
from hfcprov.snmp.fleet import FleetStore, audit_shard, run_shards  # noqa: E402
from hfcprov.snmp.simagent import SnmpSimAgent  # noqa: E402

PORT = 16161
IDLE_SAMPLE = 5.0  # s: the Dask workers' CPU while idle, measured before each Dask run
OPTIONS = {"concurrency": 64, "timeout": 5.0, "retries": 2, "patience": 0.0, "cmts_rate": None}


def host_of(i: int) -> str:
    """A loopback address per modem, for up to 16 million of them (127.100.0.1 upwards)."""
    return f"127.{100 + i // 62500}.{(i // 250) % 250}.{i % 250 + 1}"


def build(n: int, root: Path, agents: int, tiers: int, cmtses: int):
    """Targets, configs folder, and per agent (data folder, endpoints, the data file each serves):
    every agent holds the tiers' files (each also drifted) and its endpoints name which they serve."""
    configs = root / "configs"
    texts = {}
    for k in range(tiers):
        tree = parse_text(TIER.replace("20000000", str(20_000_000 + k * 1_000_000)))
        atomic_write(configs / f"tier{k}.cm", encode(tree))
        flows = service_flows(tree)
        for drifted in (False, True):
            texts[f"tier{k}-{int(drifted)}"] = agentdata.modem_snmprec(
                flows, f"bench modem tier {k}", f"tier{k}.cm", applied={0: {"buffer_target": 65536}} if drifted else None)
    targets = [AuditTarget(mac=f"0200{i:08x}", host=host_of(i), port=PORT, config=f"tier{i % tiers}.cm",
                           cmts=f"cmts{i % cmtses}") for i in range(n)]
    shares = []
    for a in range(agents):
        mine = list(range(a, n, agents))
        data = root / f"data{a}"
        atomic_write(data / "public.snmprec", texts["tier0-0"])
        for name, text in texts.items():
            atomic_write(data / f"{name}.snmprec", text)
        served = [f"tier{i % tiers}-{int(i % 20 == 19)}" for i in mine]
        shares.append((data, [(targets[i].host, PORT) for i in mine], served))
    return targets, configs, shares


class FleetAgents(Agents):
    """The audit bench's agents, each endpoint serving its tier's shared data file."""

    def __init__(self, shares):
        self.agents = [SnmpSimAgent(data, endpoints, start_timeout=900, endpoint_data=served)
                       for data, endpoints, served in shares]


def cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _warm_worker() -> None:
    """What the one process has loaded already: hfcprov's SNMP modules and the MIB index."""
    from hfcprov import mib
    from hfcprov.snmp import audit, fleet  # noqa: F401

    mib.index()


def _worker_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one_process(targets, configs, agents) -> dict:
    verdicts = {}
    cpu0, agent0, t0 = cpu_self(), agents.cpu_seconds(), time.perf_counter()
    asyncio.run(audit_all(targets, Credentials(community="public"), ExpectedConfigs(configs),
                          on_result=lambda r: verdicts.__setitem__(r.mac, r.status), **OPTIONS))
    wall = time.perf_counter() - t0
    return {"wall": wall, "cpu": cpu_self() - cpu0, "agent_cpu": agents.cpu_seconds() - agent0, "verdicts": verdicts,
            "idle": 0.0}


def on_dask(targets, configs, agents, workers: int, shard_size: int, store_path: Path) -> dict:
    import dask
    from distributed import Client, LocalCluster

    verdicts = {}
    # the same modems in flight in all as the one process has (more only queue at the agents and time
    # out), and no sampling profiler in the workers (it costs CPU every 10 ms)
    options = {**OPTIONS, "concurrency": max(1, OPTIONS["concurrency"] // workers)}
    dask.config.set({"distributed.worker.profile.enabled": False})
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    try:
        address = cluster.scheduler_address
        client.run(_warm_worker)
        # what the workers burn doing nothing (heartbeats, their event loops): reported apart
        idle0 = sum(client.run(_worker_cpu).values())
        time.sleep(IDLE_SAMPLE)
        idle_rate = (sum(client.run(_worker_cpu).values()) - idle0) / IDLE_SAMPLE
        before = sum(client.run(_worker_cpu).values())
        cpu0, agent0, t0 = cpu_self(), agents.cpu_seconds(), time.perf_counter()
        store = FleetStore(store_path, f"bench-{time.time_ns()}", "audit")
        run_shards(targets, audit_shard, (Credentials(community="public"), str(configs), None, options), store,
                   scheduler=address, size=shard_size,
                   on_rows=lambda rows: verdicts.update((r["mac"], r["status"]) for r in rows))
        wall = time.perf_counter() - t0
        cpu = cpu_self() - cpu0 + sum(client.run(_worker_cpu).values()) - before
        agent_cpu = agents.cpu_seconds() - agent0
        idle = idle_rate * wall
        store.close()
    finally:
        client.close()
        cluster.close()
    return {"wall": wall, "cpu": cpu, "agent_cpu": agent_cpu, "verdicts": verdicts, "idle": idle}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modems", type=int, default=100_000)
    ap.add_argument("--agents", type=int, default=16, help="snmpsim processes (each under the fd limit)")
    ap.add_argument("--tiers", type=int, default=10)
    ap.add_argument("--cmts", type=int, default=100, help="CMTSes the modems are spread over")
    ap.add_argument("--workers", type=int, default=2, help="Dask worker processes")
    ap.add_argument("--shard-size", type=int, default=500)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if args.modems / args.agents > soft - 100:
        print(f"{args.modems / args.agents:.0f} endpoints per agent exceed the fd limit {soft}: more --agents",
              file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="hfcprov-bench-fleet-") as tmp:
        t0 = time.perf_counter()
        targets, configs, shares = build(args.modems, Path(tmp), args.agents, args.tiers, args.cmts)
        agents = FleetAgents(shares).start()
        print(f"lab: {args.modems} modems, {args.cmts} CMTSes, {args.agents} snmpsim processes, ready in "
              f"{time.perf_counter() - t0:.0f} s; {os.cpu_count()} CPUs shared with other work", file=sys.stderr)
        results = {"one process": [], f"dask, {args.workers} workers": []}
        try:
            warm = targets[: min(len(targets), 2000)]  # snmpsim opens its indexes on first use
            asyncio.run(audit_all(warm, Credentials(community="public"), ExpectedConfigs(configs), **OPTIONS))
            for run in range(args.runs):
                for name in results:
                    if name == "one process":
                        r = one_process(targets, configs, agents)
                    else:
                        r = on_dask(targets, configs, agents, args.workers, args.shard_size, Path(tmp) / "fleet.db")
                    results[name].append(r)
                    print(f"run {run + 1} {name}: {len(targets) / r['wall']:.0f} modems/s", file=sys.stderr)
        finally:
            agents.stop()
    ref = results["one process"][0]["verdicts"]
    same = all(r["verdicts"] == ref for rs in results.values() for r in rs)
    expect_drifted = sum(1 for i in range(args.modems) if i % 20 == 19)
    print(f"{'contender':18} {'modems':>7} {'modems/s':>9} {'min-max':>11} {'failed':>6} {'client CPU s':>12} "
          f"{'ms/modem':>8} {'net of idle':>11} {'agents CPU s':>12} {'1M at rate':>10} {'1M, client-bound':>16}")
    for name, runs in results.items():
        rates = [len(targets) / r["wall"] for r in runs]
        rate = statistics.median(rates)
        cpu = statistics.median(r["cpu"] for r in runs)
        per = 1000 * cpu / len(targets)
        net = 1000 * statistics.median(r["cpu"] - r["idle"] for r in runs) / len(targets)
        failed = max(sum(1 for s in r["verdicts"].values() if s not in (IN_SYNC, DRIFTED)) for r in runs)
        drifted = statistics.median(sum(1 for s in r["verdicts"].values() if s == DRIFTED) for r in runs)
        agent_cpu = statistics.median(r["agent_cpu"] for r in runs)
        million = 1e6 / rate / 3600
        cores = args.workers if name.startswith("dask") else 1
        client_bound = 1e6 * net / 1000 / cores / 3600
        print(f"{name:18} {len(targets):7d} {rate:9.0f} {min(rates):5.0f}-{max(rates):<5.0f} {failed:6d} "
              f"{cpu:12.1f} {per:8.3f} {net:11.3f} {agent_cpu:12.1f} {million:9.2f}h {client_bound:15.2f}h")
        assert drifted == expect_drifted or failed, (name, drifted, expect_drifted)
    print(f"same verdicts in every run: {same}; goal: client CPU <= 1 ms per modem; 1M client-bound: the client's CPU "
          f"alone on {args.workers} worker cores (the agents here share this machine's {os.cpu_count()} cores); net of idle: "
          f"minus what the Dask workers use idle ({IDLE_SAMPLE:g} s sampled before each run)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
