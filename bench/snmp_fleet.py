"""Benchmark: a plant's audit, one process against Dask workers, and what a million modems would take.

``--modems N`` simulated modems (default 100,000) answer on N loopback endpoints
(127.100.x.y:16161 upwards) served by ``--agents K`` snmpsim processes; every endpoint serves one of
``--tiers`` x 2 shared data files (``SnmpSimAgent(endpoint_data=...)``: each twentieth modem of a
tier has drifted), so the agents index 20 files, not 100,000. The inventory spreads them over ``--cmts`` CMTSes (column ``cmts``).

- one process: ``hfcprov.snmp.audit.audit_all`` over every modem (concurrency 64);
- Dask: ``hfcprov.snmp.fleet.run_shards`` on ``fleet.local_cluster(--workers)`` (what ``snmp audit
  --scheduler local:2 --store`` starts), sharded by CMTS (``--shard-size``), rows stored in SQLite
  as shards finish.

Each contender runs in a fresh process (``--contenders``: ``one``, ``dask`` or both), the same lab
for all; ``--baseline DIR`` runs every contender a second time with the hfcprov of another checkout
(e.g. ``/path/to/main``), interleaved, so a change is measured against what it changes in one run.
All must give the same verdicts (checked). Printed per contender: modems/s, client CPU per modem
(the contender's process, in which a LocalCluster's scheduler runs, plus its Dask workers) against
the 1 ms goal; the workers' idle CPU (heartbeats, event loops: sampled for 5 s before each Dask run,
times the run's wall time) and the CPU per modem net of it; the agents' CPU; and the projection to
a million modems: at the measured rate, and at the rate the client's CPU (net) alone would allow on
its cores (the agents, simulated here on the same 2 cores, are what a real plant's modems do in
parallel). The machine is shared: compare the contenders' figures of the same run.

    .venv/bin/python bench/snmp_fleet.py                      # 100,000 modems, 16 agents, 2 workers
    .venv/bin/python bench/snmp_fleet.py --modems 10000 --agents 4 --runs 3
    .venv/bin/python bench/snmp_fleet.py --modems 10000 --agents 4 --cmts 20 --runs 2 --baseline ../main
    .venv/bin/python bench/snmp_fleet.py --modems 100000 --agents 16 --contenders dask
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# a contender's process runs the hfcprov of the checkout it is given (--baseline); the bench's own otherwise
CODE = os.environ.get("HFCPROV_BENCH_CODE")
sys.path.insert(0, CODE or str(ROOT))

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
IDLE_SAMPLE = 5.0  # s: the Dask processes' CPU while idle, measured before each Dask run
OPTIONS = {"concurrency": 64, "timeout": 5.0, "retries": 2, "patience": 0.0, "cmts_rate": None}
CONTENDERS = ("one", "dask")


def host_of(i: int) -> str:
    """A loopback address per modem, for up to 16 million of them (127.100.0.1 upwards)."""
    return f"127.{100 + i // 62500}.{(i // 250) % 250}.{i % 250 + 1}"


def targets_of(n: int, tiers: int, cmtses: int) -> list[AuditTarget]:
    return [AuditTarget(mac=f"0200{i:08x}", host=host_of(i), port=PORT, config=f"tier{i % tiers}.cm",
                        cmts=f"cmts{i % cmtses}") for i in range(n)]


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
    targets = targets_of(n, tiers, cmtses)
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


def _warm_worker() -> str:
    """What the one process has loaded already: hfcprov's SNMP modules and the MIB index. Returns
    where the worker's hfcprov is (the checkout under test)."""
    import hfcprov
    from hfcprov import mib
    from hfcprov.snmp import audit, fleet  # noqa: F401

    mib.index()
    return str(Path(hfcprov.__file__).resolve().parent.parent)


def _worker_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# -- one contender, in its own process --------------------------------------------------------------
def one_process(targets, configs, agent_cpu) -> dict:
    verdicts = {}
    cpu0, agent0, t0 = cpu_self(), agent_cpu(), time.perf_counter()
    asyncio.run(audit_all(targets, Credentials(community="public"), ExpectedConfigs(configs),
                          on_result=lambda r: verdicts.__setitem__(r.mac, r.status), **OPTIONS))
    wall = time.perf_counter() - t0
    cpu = cpu_self() - cpu0
    return {"wall": wall, "cpu": cpu, "workers_cpu": 0.0, "agent_cpu": agent_cpu() - agent0, "verdicts": verdicts,
            "idle": 0.0, "sched_idle": 0.0}


def _cluster(workers: int):
    from hfcprov.snmp import fleet

    if hasattr(fleet, "local_cluster"):
        return fleet.local_cluster(workers)  # what `snmp audit --scheduler local:N` starts
    # a checkout from before fleet.local_cluster (--baseline): the cluster as this bench started it then
    import dask
    from distributed import LocalCluster

    dask.config.set({"distributed.worker.profile.enabled": False})
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)


def on_dask(targets, configs, agent_cpu, workers: int, shard_size: int, store_path: Path) -> dict:
    from distributed import Client

    verdicts = {}
    # the same modems in flight in all as the one process has (more only queue at the agents and time out)
    options = {**OPTIONS, "concurrency": max(1, OPTIONS["concurrency"] // workers)}
    cluster = _cluster(workers)
    client = Client(cluster)
    try:
        code = set(client.run(_warm_worker).values())
        # what the Dask processes burn doing nothing (heartbeats, event loops): the workers' is reported
        # and subtracted in "net of idle"; the scheduler's (in this process) is reported, not subtracted
        idle0, self0 = sum(client.run(_worker_cpu).values()), cpu_self()
        time.sleep(IDLE_SAMPLE)
        idle_rate = (sum(client.run(_worker_cpu).values()) - idle0) / IDLE_SAMPLE
        sched_idle_rate = (cpu_self() - self0) / IDLE_SAMPLE
        before = sum(client.run(_worker_cpu).values())
        cpu0, agent0, t0 = cpu_self(), agent_cpu(), time.perf_counter()
        store = FleetStore(store_path, f"bench-{time.time_ns()}", "audit")
        run_shards(targets, audit_shard, (Credentials(community="public"), str(configs), None, options), store,
                   scheduler=cluster.scheduler_address, size=shard_size,
                   on_rows=lambda rows: verdicts.update((r["mac"], r["status"]) for r in rows))
        wall = time.perf_counter() - t0
        workers_cpu = sum(client.run(_worker_cpu).values()) - before
        cpu = cpu_self() - cpu0 + workers_cpu
        agent_cpu_s = agent_cpu() - agent0
        store.close()
    finally:
        client.close()
        cluster.close()
    return {"wall": wall, "cpu": cpu, "workers_cpu": workers_cpu, "agent_cpu": agent_cpu_s, "verdicts": verdicts,
            "idle": idle_rate * wall, "sched_idle": sched_idle_rate * wall, "worker_code": sorted(code)}


def contender_main(args) -> int:
    """A contender's process: audit the lab the parent started, print one JSON line."""
    import hfcprov
    import psutil

    from hfcprov import mib

    agents = [psutil.Process(int(pid)) for pid in args.agent_pids.split(",")]

    def agent_cpu() -> float:
        return sum(sum(p.cpu_times()[:2]) for p in agents)

    mib.index()  # what a long-running poller has loaded
    lab = Path(args.lab)
    targets = targets_of(args.modems, args.tiers, args.cmts)
    if args.contender == "one":
        r = one_process(targets, lab / "configs", agent_cpu)
    else:
        r = on_dask(targets, lab / "configs", agent_cpu, args.workers, args.shard_size,
                    lab / f"fleet-{os.getpid()}.db")
    r["code"] = str(Path(hfcprov.__file__).resolve().parent.parent)
    print(json.dumps(r))
    return 0


def run_contender(contender: str, code: str | None, lab: Path, agents, args) -> dict:
    env = dict(os.environ)
    env.pop("HFCPROV_BENCH_CODE", None)
    if code:
        env["HFCPROV_BENCH_CODE"] = code
    cmd = [sys.executable, str(Path(__file__).resolve()), "--contender", contender, "--lab", str(lab),
           "--agent-pids", ",".join(str(a.proc.pid) for a in agents.agents), "--modems", str(args.modems),
           "--tiers", str(args.tiers), "--cmts", str(args.cmts), "--workers", str(args.workers),
           "--shard-size", str(args.shard_size)]
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{contender} ({code or 'this checkout'}) failed with status {done.returncode}")
    r = json.loads(done.stdout.strip().splitlines()[-1])
    want = str(Path(code).resolve()) if code else str(ROOT)
    assert r["code"] == want and r.get("worker_code", [want]) == [want], (r["code"], r.get("worker_code"), want)
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modems", type=int, default=100_000)
    ap.add_argument("--agents", type=int, default=16, help="snmpsim processes (each under the fd limit)")
    ap.add_argument("--tiers", type=int, default=10)
    ap.add_argument("--cmts", type=int, default=100, help="CMTSes the modems are spread over")
    ap.add_argument("--workers", type=int, default=2, help="Dask worker processes")
    ap.add_argument("--shard-size", type=int, default=500)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--contenders", default=",".join(CONTENDERS), help="one, dask or one,dask")
    ap.add_argument("--baseline", metavar="DIR", help="another checkout: each contender also runs its hfcprov")
    ap.add_argument("--contender", choices=CONTENDERS, help=argparse.SUPPRESS)  # a contender's own process
    ap.add_argument("--lab", help=argparse.SUPPRESS)
    ap.add_argument("--agent-pids", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.contender:
        return contender_main(args)
    contenders = [c.strip() for c in args.contenders.split(",") if c.strip()]
    if not contenders or set(contenders) - set(CONTENDERS):
        ap.error(f"--contenders takes {' and '.join(CONTENDERS)}, comma-separated")
    if args.baseline and not (Path(args.baseline) / "hfcprov" / "snmp" / "fleet.py").is_file():
        ap.error(f"--baseline {args.baseline}: no hfcprov checkout with hfcprov/snmp/fleet.py there")
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if args.modems / args.agents > soft - 100:
        print(f"{args.modems / args.agents:.0f} endpoints per agent exceed the fd limit {soft}: more --agents",
              file=sys.stderr)
        return 1
    codes = [("", None)] + ([(f" [{Path(args.baseline).resolve().name}]", str(Path(args.baseline).resolve()))]
                            if args.baseline else [])
    names = {"one": "one process", "dask": f"dask, {args.workers} workers"}
    results = {(c, tag): [] for c in contenders for tag, _code in codes}
    with tempfile.TemporaryDirectory(prefix="hfcprov-bench-fleet-") as tmp:
        t0 = time.perf_counter()
        targets, configs, shares = build(args.modems, Path(tmp), args.agents, args.tiers, args.cmts)
        agents = FleetAgents(shares).start()
        print(f"lab: {args.modems} modems, {args.cmts} CMTSes, {args.agents} snmpsim processes, ready in "
              f"{time.perf_counter() - t0:.0f} s; {os.cpu_count()} CPUs shared with other work", file=sys.stderr)
        try:
            warm = targets[: min(len(targets), 2000)]  # snmpsim opens its indexes on first use
            asyncio.run(audit_all(warm, Credentials(community="public"), ExpectedConfigs(configs), **OPTIONS))
            for run in range(args.runs):
                for c in contenders:
                    for tag, code in codes:
                        r = run_contender(c, code, Path(tmp), agents, args)
                        results[(c, tag)].append(r)
                        print(f"run {run + 1} {names[c]}{tag}: {len(targets) / r['wall']:.0f} modems/s, "
                              f"{1000 * r['cpu'] / len(targets):.3f} ms/modem", file=sys.stderr)
        finally:
            agents.stop()
    first = next(iter(results.values()))[0]["verdicts"]
    same = all(r["verdicts"] == first for rs in results.values() for r in rs)
    expect_drifted = sum(1 for i in range(args.modems) if i % 20 == 19)
    print(f"{'contender':26} {'modems':>7} {'modems/s':>9} {'min-max':>11} {'failed':>6} {'client CPU s':>12} "
          f"{'ms/modem':>8} {'in workers':>10} {'idle: workers':>13} {'idle: scheduler':>15} {'net of idle':>11} "
          f"{'agents CPU s':>12} {'1M at rate':>10} {'1M, client-bound':>16}")
    n = len(targets)
    for (c, tag), runs in results.items():
        rates = [n / r["wall"] for r in runs]
        rate = statistics.median(rates)
        cpu = statistics.median(r["cpu"] for r in runs)
        per = 1000 * cpu / n
        idle = 1000 * statistics.median(r["idle"] for r in runs) / n
        in_workers = 1000 * statistics.median(r["workers_cpu"] for r in runs) / n
        sched_idle = 1000 * statistics.median(r["sched_idle"] for r in runs) / n
        net = 1000 * statistics.median(r["cpu"] - r["idle"] for r in runs) / n
        failed = max(sum(1 for s in r["verdicts"].values() if s not in (IN_SYNC, DRIFTED)) for r in runs)
        drifted = statistics.median(sum(1 for s in r["verdicts"].values() if s == DRIFTED) for r in runs)
        agent_cpu = statistics.median(r["agent_cpu"] for r in runs)
        million = 1e6 / rate / 3600
        cores = args.workers if c == "dask" else 1
        client_bound = 1e6 * net / 1000 / cores / 3600
        print(f"{names[c] + tag:26} {n:7d} {rate:9.0f} {min(rates):5.0f}-{max(rates):<5.0f} {failed:6d} "
              f"{cpu:12.1f} {per:8.3f} {in_workers:10.3f} {idle:13.3f} {sched_idle:15.3f} {net:11.3f} "
              f"{agent_cpu:12.1f} {million:9.2f}h {client_bound:15.2f}h")
        assert drifted == expect_drifted or failed, (c, tag, drifted, expect_drifted)
    print(f"same verdicts in every run: {same}; goal: client CPU <= 1 ms per modem; ms/modem: the contender's "
          f"process (with a LocalCluster's scheduler) plus its workers ('in workers': the workers' part); idle: "
          f"what the Dask workers and the scheduler's process use doing nothing ({IDLE_SAMPLE:g} s sampled before "
          f"each run) x the run's time, per modem; net of idle: ms/modem minus the workers' idle only; 1M "
          f"client-bound: the client's net CPU alone on {args.workers} worker cores (the agents here share this "
          f"machine's {os.cpu_count()} cores)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
