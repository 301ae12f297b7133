"""A real SNMP agent (snmpsim) serving simulated modems built from config files hfcprov encoded.

Modems (one snmpsim endpoint each, community "public", also SNMPv3 user "auditor" authPriv):
  insync   serves exactly the flows of its config file
  drifted  applied TargetBuffer 65536 where its file asks 16384
  wrongcfg reports it loaded "old-tier.cm" while the inventory expects its own file
  offline  docsIfCmStatusValue notReady(2)
  dead     a bound UDP socket that never answers
  provonly (PROV_ONLY) an upstream flow with only a provisioned row, at 4 Mbit/s instead of 5
  extra    (EXTRA_FLOW) a second upstream flow (a voice call's) between its two flows, and its
           downstream flow at 40 Mbit/s instead of 50: the audit must read past what its file asks
  AQM_MODEMS (DOCSIS 3.1 AQM columns): "target" runs the default 10 ms where its file asks 20 ms,
           "off" runs AQM where its file disables it (24.40.1), "d30" is a DOCSIS 3.0 modem that
           serves no AQM column at all (its file asks 20 ms: "not exposed", not a drift)
plus a CMTS whose docsIfCmtsCmStatusTable lists them.
"""

from __future__ import annotations

import dataclasses
import socket
from dataclasses import dataclass
from pathlib import Path

import pytest

from hfcprov.config import encode, parse_text
from hfcprov.fileio import atomic_write
from hfcprov.model import AQM_PARAMS, BufferControl, service_flows
from hfcprov.snmp import agentdata
from hfcprov.snmp.simagent import SnmpSimAgent, write_endpoint_data
from tests.support import free_udp_port

V3_USER, V3_AUTH, V3_PRIV = "auditor", "auth-key-0123", "priv-key-4567"

TIER = """Main {{
  NetworkAccess 1;
  UsServiceFlow {{ UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained {us}; MaxTrafficBurst 3044;
                  BufferControl {{ MinimumBuffer 1024; TargetBuffer 16384; MaximumBuffer 65536; }} }}
  DsServiceFlow {{ DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained {ds}; }}
}}"""

MACS = {
    "insync": "0011220000a1",
    "drifted": "0011220000a2",
    "wrongcfg": "0011220000a3",
    "offline": "0011220000a4",
    "dead": "0011220000a5",
}


# name -> (mac, the upstream flow's AQM Encodings in its file, what the modem applied instead)
AQM_MODEMS = {
    "target": ("0011220000c1", "SFAQMLatencyTarget 20;", {"aqm_latency_target": 10}),
    "off": ("0011220000c2", "SFAQMDisable 1;", {"aqm_disabled": 2, "aqm_latency_target": 10, "aqm_algorithm": 3}),
    "d30": ("0011220000c3", "SFAQMLatencyTarget 20;", {k: None for k in AQM_PARAMS}),
}
PROV_ONLY = "0011220000b1"  # served, but not one of the kinds the audit table test expects
EXTRA_FLOW = "0011220000b2"  # likewise


@dataclass
class Lab:
    configs: Path
    ports: dict  # name -> UDP port on 127.0.0.1
    cmts_port: int
    flows: dict  # name -> list[ServiceFlow] of its file
    agent: SnmpSimAgent
    tmp: Path

    def inventory(self, names, path: Path | None = None) -> Path:
        path = path or self.tmp / f"inv-{'-'.join(names)}.csv"
        macs = {**MACS, "provonly": PROV_ONLY, "extra": EXTRA_FLOW, **{n: m for n, (m, _, _) in AQM_MODEMS.items()}}
        lines = ["mac,ip,port"] + [f"{macs[n]},127.0.0.1,{self.ports[n]}" for n in names]
        atomic_write(path, "\n".join(lines) + "\n")
        return path


@pytest.fixture(scope="package")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("snmplab")
    configs = tmp / "configs"
    flows = {}
    for name, mac in [*MACS.items(), ("provonly", PROV_ONLY), ("extra", EXTRA_FLOW)]:
        tree = parse_text(TIER.format(us=5_000_000, ds=50_000_000), source=f"{name}.cfg")
        atomic_write(configs / f"{mac}.cm", encode(tree))
        flows[name] = service_flows(tree)
    # the file the wrong-config modem really loaded: another tier
    old = parse_text(TIER.format(us=1_000_000, ds=10_000_000))
    atomic_write(configs / "old-tier.cm", encode(old))
    aqm_texts = []
    for name, (mac, encodings, applied) in AQM_MODEMS.items():
        text = TIER.format(us=5_000_000, ds=50_000_000).replace(
            "MaximumBuffer 65536; }", f"MaximumBuffer 65536; }} AQMEncodings {{ {encodings} }}")
        tree = parse_text(text, source=f"{name}.cfg")
        atomic_write(configs / f"{mac}.cm", encode(tree))
        flows[name] = service_flows(tree)
        aqm_texts.append(agentdata.modem_snmprec(flows[name], f"hfcprov sim modem aqm {name}", f"{mac}.cm",
                                                 applied={0: applied}))

    served = ["insync", "drifted", "wrongcfg", "offline", "provonly", "extra", *AQM_MODEMS]
    us, ds = flows["extra"]
    voice = dataclasses.replace(us, max_sustained_rate=128_000, max_traffic_burst=None, buffer=BufferControl())
    texts = [
        agentdata.modem_snmprec(flows["insync"], "hfcprov sim modem insync", f"{MACS['insync']}.cm"),
        agentdata.modem_snmprec(flows["drifted"], "hfcprov sim modem drifted", f"{MACS['drifted']}.cm",
                                applied={0: {"buffer_target": 65536}}),
        agentdata.modem_snmprec(service_flows(old), "hfcprov sim modem wrongcfg", "old-tier.cm"),
        agentdata.modem_snmprec(flows["offline"], "hfcprov sim modem offline", f"{MACS['offline']}.cm", status=2),
        # upstream flow provisioned only (no active row), its max rate not what the file asks
        agentdata.modem_snmprec(flows["insync"], "hfcprov sim modem provonly", f"{PROV_ONLY}.cm",
                                applied={0: {"param_sets": (3,), "max_sustained_rate": 4_000_000}}),
        agentdata.modem_snmprec([us, voice, ds], "hfcprov sim modem extra", f"{EXTRA_FLOW}.cm",
                                applied={2: {"max_sustained_rate": 40_000_000}}),
        *aqm_texts,
        agentdata.cmts_snmprec([{"mac": MACS[n], "ip": "127.0.0.1", "status": 2 if n == "offline" else 8}
                                for n in MACS]),
    ]
    data = tmp / "data"
    write_endpoint_data(data, "public", texts, v3=True)
    ports = {n: free_udp_port() for n in served}
    cmts_port = free_udp_port()
    dead = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # bound, never answers
    dead.bind(("127.0.0.1", 0))
    ports["dead"] = dead.getsockname()[1]
    agent = SnmpSimAgent(data, [("127.0.0.1", ports[n]) for n in served] + [("127.0.0.1", cmts_port)],
                         v3_user=V3_USER, v3_auth_key=V3_AUTH, v3_priv_key=V3_PRIV)
    agent.start()
    try:
        yield Lab(configs, ports, cmts_port, flows, agent, tmp)
    finally:
        agent.stop()
        dead.close()
