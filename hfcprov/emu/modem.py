"""The emulated modem's own process: boot like a real cable modem, answer SNMP, reset on request.

Runs inside the modem namespace (started by ``Lab.boot``)::

    python -m hfcprov.emu.modem --lab hfemu-1a2b3c --tftp 10.10.2.1:69 --file gold.cm
    python -m hfcprov.emu.modem --lab hfemu-1a2b3c --tftp '[fd00:10:2::1]:69' --file gold.cm  # up(ipv6=True)

Boot: fetch the config file by TFTP from the provisioning side, decode it
(``hfcprov.config.decode``: a bad CM MIC or TLV fails the boot, as on a real
modem), read its service flows (``hfcprov.model.service_flows``) and packet
classifiers (``hfcprov.model.classifiers``), plan each flow's queue
(``shaping.plan``: a flow it cannot honour is refused and the reason logged),
install every flow's queue and the classifiers steering into them with tc
(``topology.Lab.apply``; a classifier of a refused flow is logged, not
installed), and serve what it applied over
SNMP (snmpsim, data from ``hfcprov.snmp.agentdata``). A SET of
docsDevResetNow.0 to true(1) reboots it: the file is fetched and applied anew.

What it applied is written to ``<state>/applied.json`` after every boot; its
log lines go to ``<state>/modem.log``.
"""

from __future__ import annotations

import argparse
import json
import os
import shelve
import signal
import sys
import time
from pathlib import Path

from hfcprov.emu import shaping
from hfcprov.emu.topology import Lab
from hfcprov.errors import HfcprovError
from hfcprov.fileio import atomic_write
from hfcprov.units import parse_host_port

TRUE = 1  # SNMP TruthValue true(1)


def check_cm_mic(data: bytes) -> None:
    """A cable modem checks the CM MIC (TLV 6) only; the CMTS MIC needs the CMTS's secret."""
    from hfcprov.config import ConfigError, verify_cm_mic

    try:
        verify_cm_mic(data)
    except ConfigError as err:
        if err.path != "6":
            raise  # a broken TLV before the MIC: the same one-line error decode() gives
        raise ConfigError(f"CM MIC check failed: {err}") from err


class Modem:
    def __init__(self, lab: Lab, tftp: tuple[str, int], filename: str, state: Path,
                 snmp_port: int = 161, community: str = "public", model: shaping.ModemModel | None = None):
        self.lab, self.tftp, self.filename, self.state = lab, tftp, filename, state
        self.snmp_port, self.community, self.model = snmp_port, community, model or shaping.ModemModel()
        self.agent = None
        self.boots = 0
        self.state.mkdir(parents=True, exist_ok=True)
        self.reset_cache = self.state / "resetnow"  # snmpsim writecache shelve

    def log(self, line: str) -> None:
        with open(self.state / "modem.log", "a") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {self.lab.name} {line}\n")

    def boot(self) -> dict:
        from hfcprov.config import decode
        from hfcprov.model import aggregate_service_flows, classifiers, modem_settings, service_flows
        from hfcprov.tftp.client import fetch

        self.boots += 1
        host, port = self.tftp
        data = None
        for attempt in range(5):  # a real modem retries TFTP too
            try:
                data = fetch(host, port, self.filename, timeout=1.0, retries=3)
                break
            except HfcprovError as err:
                self.log(f"boot {self.boots}: tftp attempt {attempt + 1} failed: {err}")
                time.sleep(0.5)
        if data is None:
            return self._write({"status": "tftp-failed", "config_file": self.filename})
        server = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self.log(f"boot {self.boots}: fetched {self.filename} ({len(data)} bytes) from tftp://{server}")
        try:
            check_cm_mic(data)
            tree = decode(data)
            flows = service_flows(tree)
            rules = classifiers(tree)
            aggregates, settings = aggregate_service_flows(tree), modem_settings(tree)
        except HfcprovError as err:
            self.log(f"boot {self.boots}: config file rejected: {err}")
            return self._write({"status": "config-rejected", "config_file": self.filename, "reason": str(err)})
        plans, rejected = [], []
        for flow in flows:
            try:
                plans.append(shaping.plan(flow, self.model))
            except shaping.FlowRejected as err:
                rejected.append(str(err))
                self.log(f"boot {self.boots}: {err}")
        # the lab's state file belongs to whoever built it
        for reason in self.lab.apply(plans, rules, save=False, aggregates=aggregates, settings=settings):
            rejected.append(reason)
            self.log(f"boot {self.boots}: {reason}")
        for direction, q in self.lab.queues.items():
            for f in q["flows"]:
                self.log(f"boot {self.boots}: {direction} flow {f['path'] or f['ref']} as {f['classid']} on "
                         f"{q['dev']}: rate {f['rate_bps']} bit/s, burst {f['burst']} B, buffer {f['buffer']} B")
            for c in q["filters"]:
                self.log(f"boot {self.boots}: {direction} classifier {c['classifier']} -> {c['flowid']} "
                         f"(tc prio {c['prio']}, {c['u32_filters']} u32 filters)")
        applied = {
            "status": "operational", "config_file": self.filename, "boots": self.boots, "booted_at": time.time(),
            "queues": self.lab.queues, "rejected": rejected,
            "flows": [{**p.flow.as_dict(), "applied_buffer": p.buffer} for p in plans],
            "snmp": self.lab.endpoint("cm_rf", self.snmp_port), "tftp_server": server,
            # the address the provisioning server stamped for this modem: TLV 20 (IPv4) or 59 (IPv6)
            "stamped_address": {tlv: [str(t.value) for t in tree.find(tlv)] for tlv in ("20", "59")
                                if tree.find(tlv)},
        }
        self._serve_snmp(plans, aggregates)
        return self._write(applied)

    def _write(self, applied: dict) -> dict:
        applied.setdefault("boots", self.boots)
        atomic_write(self.state / "applied.json", json.dumps(applied, indent=2, default=str) + "\n")
        return applied

    def _serve_snmp(self, plans: list[shaping.QueuePlan], aggregates=()) -> None:
        from hfcprov.snmp.agentdata import modem_snmprec
        from hfcprov.snmp.simagent import SnmpSimAgent, write_alias_data

        self._stop_snmp()
        for p in self.reset_cache.parent.glob(self.reset_cache.name + "*"):
            p.unlink()  # a fresh boot answers docsDevResetNow false(2) again
        text = modem_snmprec([p.flow for p in plans], self.model.sys_descr, self.filename,
                             applied={i: {"buffer_size": p.buffer, **self._applied_aqm(p)}
                                      for i, p in enumerate(plans)},
                             aggregates=aggregates, counter_sources=self._counter_sources(plans, aggregates))
        data_dir = self.state / "snmp"
        # the data file's name is not the community (snmpsim would take it as one): the agent learns
        # the community from a 0600 file
        write_alias_data(data_dir, "modem", text)
        self.agent = SnmpSimAgent(data_dir, [(self.lab.addr("cm_rf"), self.snmp_port)],
                                  writecache_file=self.reset_cache, communities={"modem": self.community},
                                  variations=True).start()
        self.log(f"snmp: answering on {self.lab.endpoint('cm_rf', self.snmp_port)}")

    def _counter_sources(self, plans: list[shaping.QueuePlan], aggregates) -> dict[int, dict]:
        """Flow position -> where its counters are (the AQM stage's file, its stage and lane) for the
        upstream flows the stage queues: their docsQosServiceFlowStats/Latency/Congestion rows are
        what the stage counted. A Low Latency flow of an aggregate is the dual queue's LL lane."""
        bands = self.lab.queues.get("upstream", {}).get("aqm", {}).get("bands") or []
        low_latency = {a.low_latency_ref for a in aggregates if a.direction == "upstream" and a.low_latency_ref}
        ups = [i for i, p in enumerate(plans) if p.flow.direction == "upstream"]
        return {pos: {"file": self.lab.counters_file, "stage": bands[band], "lane": int(plans[pos].flow.ref in low_latency)}
                for band, pos in enumerate(ups) if band < len(bands) and bands[band] is not None}

    def _applied_aqm(self, plan: shaping.QueuePlan) -> dict:
        """The AQM columns to serve where the emulator does not run what the model's rule asks: none
        at all on a DOCSIS 3.0 modem (its MIB predates them). Every upstream flow the rule gives AQM
        runs it in the userspace stage (``aqmstage.plan_stage``), so nothing else differs."""
        from hfcprov.model import AQM_PARAMS

        if self.lab.docsis_version == "3.0":
            return dict.fromkeys(AQM_PARAMS)
        return {}

    def _stop_snmp(self) -> None:
        if self.agent is not None:
            self.agent.stop()
            self.agent = None

    def reset_requested(self) -> bool:
        """Has docsDevResetNow.0 been SET to true(1)? (snmpsim's writecache shelve, read-only.)"""
        from hfcprov.snmp import oids

        if not any(self.reset_cache.parent.glob(self.reset_cache.name + "*")):
            return False
        try:
            with shelve.open(str(self.reset_cache), flag="r") as cache:
                value = cache.get(oids.RESET_NOW)
        except Exception:  # noqa: BLE001 - a shelve being written right now; look again next tick
            return False
        return value is not None and int(value) == TRUE

    def run(self) -> None:
        self.boot()
        while True:
            time.sleep(0.2)
            if self.reset_requested():
                self.log("docsDevResetNow set: rebooting")
                self._stop_snmp()
                self.boot()

    def close(self) -> None:
        self._stop_snmp()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="hfcprov.emu.modem")
    ap.add_argument("--lab", required=True)
    ap.add_argument("--tftp", required=True, help="HOST:PORT of the provisioning TFTP server")
    ap.add_argument("--file", required=True, help="config file name to request")
    ap.add_argument("--state", required=True, help="folder for applied.json, modem.log and SNMP data")
    ap.add_argument("--snmp-port", type=int, default=161)
    ap.add_argument("--max-buffer", type=int, default=shaping.ModemModel.max_buffer)
    args = ap.parse_args(argv)
    host, port = parse_host_port(args.tftp, 69)  # 10.10.2.1:69 or [fd00:10:2::1]:69
    lab = Lab.load(args.lab)
    community = os.environ.get("HFCPROV_EMU_COMMUNITY", "public")  # environment: never on a command line
    modem = Modem(lab, (host, port), args.file, Path(args.state), args.snmp_port, community,
                  shaping.ModemModel(max_buffer=args.max_buffer))

    def stop(*_):
        modem.close()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    try:
        modem.run()
    finally:
        modem.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
