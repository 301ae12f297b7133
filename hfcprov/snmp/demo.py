"""Modems to audit without hardware: real SNMP agents (snmpsim) serving what the user's own files provision.

Each config file becomes two modems: one that applied its file as written (in sync), one that
applied something else (drifted: the modem's default queue instead of the file's TargetBuffer, or
a lower rate where the file has no Buffer Control). ``write_demo`` writes what ``hfcprov snmp
audit`` reads (the inventory, and the files the modems should run, encoded as a TFTP server would
serve them) and the agents' data; ``DemoAgents`` runs them::

    hfcprov snmp demo-agent my-tier.cfg      # then, in another terminal, the audit it prints
"""

from __future__ import annotations

import csv
import io
import socket
from dataclasses import dataclass
from pathlib import Path

from hfcprov.errors import HfcprovError
from hfcprov.fileio import atomic_write

COMMUNITY = "public"


class DemoError(HfcprovError):
    """A config file the demo cannot serve (no service flow to show)."""


@dataclass(frozen=True)
class DemoModem:
    mac: str
    host: str
    port: int
    config: str  # the file name it says it loaded (docsDevServerConfigFile)
    source: str  # the user's file it comes from
    drift: str | None  # what it applied differently, or None: in sync


def write_demo(configs: list[str | Path], folder: Path, host: str, ports: list[int]) -> list[DemoModem]:
    """Two modems per config file on ``ports`` (two per file, in order): ``folder/configs/<stem>.cm``,
    ``folder/inventory.csv`` and the agents' data under ``folder/agent``."""
    from hfcprov.config import encode, read_config
    from hfcprov.model import service_flows
    from hfcprov.snmp.agentdata import modem_snmprec
    from hfcprov.snmp.simagent import write_endpoint_data

    modems, texts = [], []
    names: set[str] = set()
    for n, path in enumerate(map(Path, configs)):
        tree = read_config(path)
        flows = service_flows(tree)
        if not flows:
            raise DemoError(f"{path}: no service flow (TLV 24/25) for the audit to compare")
        name = path.stem + ".cm"
        if name in names:
            name = f"{path.stem}-{n}.cm"
        names.add(name)
        atomic_write(folder / "configs" / name, encode(tree))
        pos, applied, drift = drifted(flows)
        for k, change in enumerate((None, drift)):
            mac = f"0200000000{2 * n + k + 1:02x}"
            port = ports[2 * n + k]
            texts.append(modem_snmprec(flows, f"hfcprov demo modem ({'in sync' if change is None else 'drifted'})",
                                       name, applied={pos: applied} if change else None))
            modems.append(DemoModem(mac, host, port, name, str(path), change))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["mac", "ip", "port", "config"])
    for m in modems:
        w.writerow([m.mac, m.host, m.port, m.config])
    atomic_write(folder / "inventory.csv", buf.getvalue())
    write_endpoint_data(folder / "agent", COMMUNITY, texts)
    return modems


def drifted(flows) -> tuple[int, dict, str]:
    """(flow position, what the drifted modem applied to it, in words): the first upstream flow's
    TargetBuffer replaced by the modem's default queue, else its rate lowered to 80%."""
    from hfcprov.model.flow import DEFAULT_QUEUE

    ups = [i for i, f in enumerate(flows) if f.direction == "upstream"] or list(range(len(flows)))
    for i in ups:
        target = flows[i].target_buffer
        if target:
            other = DEFAULT_QUEUE if target != DEFAULT_QUEUE else 2 * target
            return i, {"buffer_target": other}, (f"{flows[i].name}: applied TargetBuffer {other} where the file "
                                                 f"asks {target}")
    for i in ups:
        rate = flows[i].max_sustained_rate
        if rate:
            other = int(rate * 0.8)
            return i, {"max_sustained_rate": other}, f"{flows[i].name}: applied rate {other} where the file asks {rate}"
    flow = flows[ups[0]]
    return ups[0], {"max_sustained_rate": 1_000_000}, f"{flow.name}: applied rate 1000000 where the file sets none"


def free_ports(host: str, n: int) -> list[int]:
    """``n`` UDP ports the kernel has free on ``host`` now (for ``--listen HOST:0``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(family, socket.SOCK_DGRAM)
            s.bind((host, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class DemoAgents:
    """The snmpsim process serving the demo modems; a context manager that stops it."""

    def __init__(self, folder: Path, modems: list[DemoModem]):
        from hfcprov.snmp.simagent import SnmpSimAgent

        self.agent = SnmpSimAgent(folder / "agent", [(m.host, m.port) for m in modems])

    def __enter__(self):
        self.agent.start()
        return self

    def __exit__(self, *exc):
        self.agent.stop()


__all__ = ["COMMUNITY", "DemoAgents", "DemoError", "DemoModem", "drifted", "free_ports", "write_demo"]
