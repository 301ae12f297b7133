"""Benchmark: audit N simulated modems with hfcprov vs an operator's net-snmp script.

``--agents K`` snmpsim processes serve N modems between them (so the agent is not the
ceiling: one snmpsim process spends 6-7 ms of CPU per modem), one UDP endpoint each
(127.77.x.y:16161), built from config files hfcprov encoded (every 20th modem has a
drifted target buffer). Both contenders read the same objects from the same agents:

- hfcprov: ``hfcprov.snmp.audit.audit_all`` (asyncio, bounded concurrency, lean v2c
  engine): one GETBULK per modem, k + 1 repetitions for a file of k flows and only the
  param-set columns the file sets; decoding each modem's expected config and comparing.
- script: what operators run today, a loop per modem of ``snmpget`` (sysDescr,
  docsDevServerConfigFile, docsIfCmStatusValue) and two ``snmpbulkwalk``
  processes (docsQosParamSetTable, docsQosServiceFlowBufferSize); it does not
  even compare, so it is the generous side. It runs on the first
  ``--script-modems`` modems (a full loop takes minutes) and its rate is scaled.

Prints medians of ``--runs`` runs: modems/s, failures, CPU seconds (client and
agents), hfcprov's own client CPU per modem (the goal: <= 1 ms) and the ratio.

    .venv/bin/python bench/snmp_audit.py --modems 1000 --runs 3
    .venv/bin/python bench/snmp_audit.py --modems 10000 --agents 8 --runs 2 --script-modems 20
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hfcprov.config import encode, parse_text
from hfcprov.model import service_flows
from hfcprov.snmp import agentdata, oids
from hfcprov.snmp.audit import DRIFTED, IN_SYNC, AuditTarget, ExpectedConfigs, audit_all
from hfcprov.snmp.client import Credentials
from hfcprov.snmp.simagent import SnmpSimAgent, write_endpoint_data

PORT = 16161
TIER = """Main {
  NetworkAccess 1;
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 20000000; MaxTrafficBurst 3044;
                  BufferControl { MinimumBuffer 1024; TargetBuffer 16384; MaximumBuffer 65536; } }
  DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 300000000; }
}"""


def host_of(i: int) -> str:
    return f"127.77.{i // 250}.{i % 250 + 1}"


def build_lab(n: int, root: Path, agents: int = 1) -> tuple[list[AuditTarget], Path, list[tuple[Path, list]]]:
    """Targets, the configs folder, and per agent (its data folder, its endpoints)."""
    tree = parse_text(TIER)
    data = encode(tree)
    flows = service_flows(tree)
    configs = root / "configs"
    configs.mkdir()
    texts, targets = [], []
    for i in range(n):
        mac = f"0200{i:08x}"
        (configs / f"{mac}.cm").write_bytes(data)
        applied = {0: {"buffer_target": 65536}} if i % 20 == 19 else None
        texts.append(agentdata.modem_snmprec(flows, f"bench modem {i}", f"{mac}.cm", applied=applied))
        targets.append(AuditTarget(mac=mac, host=host_of(i), port=PORT, config=f"{mac}.cm"))
    shares = []
    for k in range(agents):  # modem i goes to agent i % agents: every agent gets a slice of each drift
        mine = list(range(k, n, agents))
        data = root / f"data{k}"
        write_endpoint_data(data, "public", [texts[i] for i in mine])
        shares.append((data, [(targets[i].host, targets[i].port) for i in mine]))
    return targets, configs, shares


class Agents:
    """Several snmpsim processes seen as one (start, stop, CPU used)."""

    def __init__(self, shares):
        self.agents = [SnmpSimAgent(data, endpoints, start_timeout=900) for data, endpoints in shares]

    def start(self):
        for a in self.agents:  # all launched from this thread (it outlives them), then awaited
            a.launch()
        for a in self.agents:
            a.wait_ready()
        return self

    def stop(self):
        for a in self.agents:
            a.stop()

    def cpu_seconds(self) -> float:
        return sum(a.cpu_seconds() for a in self.agents)


def cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_hfcprov(targets, configs, agent, concurrency) -> dict:
    expected = ExpectedConfigs(configs)  # fresh: every run decodes every file again
    cpu0, agent0, t0 = cpu_self(), agent.cpu_seconds(), time.perf_counter()
    summary = asyncio.run(audit_all(targets, Credentials(community="public"), expected,
                                    concurrency=concurrency, timeout=5.0, retries=2))
    wall = time.perf_counter() - t0
    ok = summary.counts.get(IN_SYNC, 0) + summary.counts.get(DRIFTED, 0)
    return {"wall": wall, "rate": len(targets) / wall, "failures": len(targets) - ok,
            "drifted": summary.counts.get(DRIFTED, 0), "cpu": cpu_self() - cpu0,
            "agent_cpu": agent.cpu_seconds() - agent0}


def run_script(targets, agent) -> dict:
    get, walk = shutil.which("snmpget"), shutil.which("snmpbulkwalk")
    cpu0, agent0, t0 = cpu_children(), agent.cpu_seconds(), time.perf_counter()
    failures = 0
    for t in targets:
        addr = f"{t.host}:{t.port}"
        common = ["-v2c", "-c", "public", "-t", "5", "-r", "2", "-On", addr]
        cmds = [[get, *common, oids.SYS_DESCR, oids.CONFIG_FILE, f"{oids.CM_STATUS_VALUE}.2"],
                [walk, *common, "1.3.6.1.4.1.4491.2.1.21.1.2"],
                [walk, *common, oids.SF_BUFFER_SIZE]]
        for cmd in cmds:
            res = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if res.returncode != 0 or not res.stdout:
                failures += 1
                break
    wall = time.perf_counter() - t0
    return {"wall": wall, "rate": len(targets) / wall, "failures": failures, "drifted": None,
            "cpu": cpu_children() - cpu0, "agent_cpu": agent.cpu_seconds() - agent0}


def median_of(runs: list[dict], key: str):
    values = [r[key] for r in runs if r[key] is not None]
    return statistics.median(values) if values else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modems", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=64,
                    help="modems audited at once; more than the agents' cores can answer only queues requests "
                         "until they time out (10,000 modems / 8 agents on 2 cores: 256 gave 1,334 failures, 64 none)")
    ap.add_argument("--agents", type=int, default=1, help="snmpsim processes the modems are spread over")
    ap.add_argument("--script-modems", type=int, default=100, help="modems the net-snmp loop audits per run")
    args = ap.parse_args()
    if not (shutil.which("snmpget") and shutil.which("snmpbulkwalk")):
        print("needs net-snmp's snmpget/snmpbulkwalk: scripts/debian-deps.sh snmp", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="hfcprov-bench-snmp-") as tmp:
        t0 = time.perf_counter()
        targets, configs, shares = build_lab(args.modems, Path(tmp), args.agents)
        agent = Agents(shares).start()
        print(f"lab: {args.modems} modems on {args.agents} snmpsim processes, ready in "
              f"{time.perf_counter() - t0:.1f} s; {os.cpu_count()} CPUs (shared with other work: in-run "
              f"ratios hold, absolute figures are noisy)", file=sys.stderr)
        try:
            # warm-up: snmpsim opens each data file's index on first use
            run_hfcprov(targets, configs, agent, args.concurrency)
            ours = [run_hfcprov(targets, configs, agent, args.concurrency) for _ in range(args.runs)]
            theirs = [run_script(targets[: args.script_modems], agent) for _ in range(args.runs)]
        finally:
            agent.stop()
    rows = [("hfcprov snmp audit", args.modems, ours), ("net-snmp script loop", args.script_modems, theirs)]
    print(f"{'contender':22} {'modems':>6} {'modems/s':>9} {'min-max':>13} {'failures':>8} {'drifted':>7} "
          f"{'client CPU s':>12} {'agent CPU s':>11} {'client ms/modem':>15} {'all ms/modem':>12}")
    for name, n, runs in rows:
        rate, cpu, agent_cpu = median_of(runs, "rate"), median_of(runs, "cpu"), median_of(runs, "agent_cpu")
        drifted = median_of(runs, "drifted")
        span = f"{min(r['rate'] for r in runs):.0f}-{max(r['rate'] for r in runs):.0f}"
        print(f"{name:22} {n:6d} {rate:9.1f} {span:>13} {max(r['failures'] for r in runs):8d} "
              f"{'-' if drifted is None else int(drifted):>7} {cpu:12.2f} {agent_cpu:11.2f} "
              f"{1000 * cpu / n:15.3f} {1000 * (cpu + agent_cpu) / n:12.2f}")
    ratio = median_of(ours, "rate") / median_of(theirs, "rate")
    print(f"hfcprov / script rate: {ratio:.1f}x over {args.agents} agent processes (median of {args.runs} runs each; "
          f"goals: hfcprov client <= 1 ms CPU per modem, 0 failures)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
