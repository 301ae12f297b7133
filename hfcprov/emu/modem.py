"""The emulated modem's own process: boot like a real cable modem, answer SNMP, reset on request.

Runs inside the modem namespace (started by ``Lab.boot``)::

    python -m hfcprov.emu.modem --lab hfemu-1a2b3c --tftp 10.10.2.1:69 --file gold.cm
    python -m hfcprov.emu.modem --lab hfemu-1a2b3c --tftp '[fd00:10:2::1]:69' --file gold.cm  # up(ipv6=True)

Boot, given ``--dhcp 4|6`` (``Lab.boot(headend=...)``), as a cable modem does (MULPI): it
drops its management address, tells the CMTS it is ranging (``emu.cmts.send_ranging``), gets
its address, TFTP server and file name from DHCP (``boot.dhcpclient``, broadcast or
multicast on ``rf``: the emulated CMTS relays it to Kea), asks the Time of Day server DHCP
named (RFC 868), fetches the file DHCP named from the server DHCP named (bound to its leased
address, so a lease-bound server sees the right requester), and registers with the CMTS
(``emu.cmts.register``: CMTS MIC with the CMTS's secret, TLV 20/59 against its address). A
refused registration leaves it unregistered: no service flows, no forwarding, SNMP
docsIfCmStatusValue paramTransferComplete(10) and the reason in ``applied.json``. Without
``--dhcp`` it fetches ``--file`` from ``--tftp`` directly (the plant without a headend).

Then either way: fetch the config file by TFTP from the provisioning side, decode it
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
from dataclasses import dataclass
from pathlib import Path

from hfcprov.emu import shaping
from hfcprov.emu.topology import Lab
from hfcprov.errors import HfcprovError
from hfcprov.fileio import atomic_write
from hfcprov.units import parse_host_port

TRUE = 1  # SNMP TruthValue true(1)
CM_PARAM_TRANSFER_COMPLETE, CM_OPERATIONAL = 10, 12  # docsIfCmStatusValue


def check_cm_mic(data: bytes) -> None:
    """A cable modem checks the CM MIC (TLV 6) only; the CMTS MIC needs the CMTS's secret."""
    from hfcprov.config import ConfigError, verify_cm_mic

    try:
        verify_cm_mic(data)
    except ConfigError as err:
        if err.path != "6":
            raise  # a broken TLV before the MIC: the same one-line error decode() gives
        raise ConfigError(f"CM MIC check failed: {err}") from err


@dataclass
class BootChain:
    """How the modem boots when a headend provisions it: DHCP on ``interface``, then the CMTS."""

    mac: str
    family: int  # 4: DHCPv4, 6: DHCPv6 for the management address
    cmts: tuple[str, int]  # where REG-REQ goes (the CMTS's rf address, emu.cmts.REG_PORT)
    interface: str = "rf"
    prefix: int | None = None  # the management address's prefix length (DHCPv4: from option 1)


class Modem:
    def __init__(self, lab: Lab, tftp: tuple[str, int] | None, filename: str | None, state: Path,
                 snmp_port: int = 161, community: str = "public", model: shaping.ModemModel | None = None,
                 chain: BootChain | None = None, v3: dict | None = None):
        self.lab, self.tftp, self.filename, self.state = lab, tftp, filename, state
        self.snmp_port, self.community, self.model = snmp_port, community, model or shaping.ModemModel()
        self.chain, self.v3 = chain, v3 or {}
        self.agent = None
        self.boots = 0
        self.boot_started = time.monotonic()
        self.address = None  # the management address (the lease's, with a boot chain)
        self.state.mkdir(parents=True, exist_ok=True)
        self.reset_cache = self.state / "resetnow"  # snmpsim writecache shelve

    def log(self, line: str) -> None:
        with open(self.state / "modem.log", "a") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {self.lab.name} {line}\n")

    def boot(self) -> dict:
        from hfcprov.config import decode
        from hfcprov.model import aggregate_service_flows, classifiers, modem_settings, service_flows

        self.boots += 1
        self.boot_started = time.monotonic()
        booted = self._boot_chain() if self.chain else self._fetch_direct()
        if "status" in booted:
            return self._write(booted)
        data, server, extra = booted["data"], booted["server"], booted["extra"]
        try:
            check_cm_mic(data)
            tree = decode(data)
            flows = service_flows(tree)
            rules = classifiers(tree)
            aggregates, settings = aggregate_service_flows(tree), modem_settings(tree)
        except HfcprovError as err:
            self.log(f"boot {self.boots}: config file rejected: {err}")
            return self._write({"status": "config-rejected", "config_file": self.filename, "reason": str(err),
                                "tftp_server": server, **extra})
        if self.chain:
            from hfcprov.emu.cmts import register

            host = server.rsplit(":", 1)[0].strip("[]")
            try:
                reg = register(self.chain.cmts, self.chain.mac, self.address, data, self.filename, host)
            except HfcprovError as err:
                self.log(f"boot {self.boots}: registration: {err}")
                return self._write({"status": "registration-failed", "config_file": self.filename,
                                    "reason": str(err), "tftp_server": server, **extra})
            if not reg.accepted:
                # unregistered: no service flows, nothing forwarded, and it says so over SNMP
                self.log(f"boot {self.boots}: registration refused by the CMTS: {reg.reason}")
                for direction in ("upstream", "downstream"):
                    self.lab.clear(direction)
                self._serve_snmp([], status=CM_PARAM_TRANSFER_COMPLETE, tftp_server=host)
                return self._write({"status": "registration-refused", "config_file": self.filename,
                                    "reason": reg.reason, "tftp_server": server, **extra})
            self.log(f"boot {self.boots}: registered with the CMTS")
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
            "snmp": self._endpoint(), "tftp_server": server,
            # the address the provisioning server stamped for this modem: TLV 20 (IPv4) or 59 (IPv6)
            "stamped_address": {tlv: [str(t.value) for t in tree.find(tlv)] for tlv in ("20", "59")
                                if tree.find(tlv)},
            **extra,
        }
        if self.chain:
            _forwarding(True)  # registered: the CMTS forwards its traffic, it forwards its hosts'
        self._serve_snmp(plans, tftp_server=server.rsplit(":", 1)[0].strip("[]"))
        return self._write(applied)

    def _fetch_direct(self) -> dict:
        """The plant without a headend: ``--file`` from ``--tftp``."""
        from hfcprov.tftp.client import fetch

        host, port = self.tftp
        server = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        data = None
        for attempt in range(5):  # a real modem retries TFTP too
            try:
                data = fetch(host, port, self.filename, timeout=1.0, retries=3)
                break
            except HfcprovError as err:
                self.log(f"boot {self.boots}: tftp attempt {attempt + 1} failed: {err}")
                time.sleep(0.5)
        if data is None:
            return {"status": "tftp-failed", "config_file": self.filename}
        self.log(f"boot {self.boots}: fetched {self.filename} ({len(data)} bytes) from tftp://{server}")
        return {"data": data, "server": server, "extra": {}}

    def _boot_chain(self) -> dict:
        """Ranging, DHCP, Time of Day, TFTP by the name DHCP gave: what a cable modem does before it registers."""
        from hfcprov.boot.dhcpclient import acquire4, acquire6
        from hfcprov.boot.tod import query_time, unix_time
        from hfcprov.emu.cmts import send_ranging
        from hfcprov.tftp.client import fetch_many

        c = self.chain
        _forwarding(False)  # an unregistered modem forwards nothing
        self._release()
        try:
            send_ranging(c.interface, c.mac)
        except OSError as err:
            self.log(f"boot {self.boots}: ranging: {err}")
        try:
            lease = (acquire4(c.mac, interface=c.interface, timeout=2.0, tries=5) if c.family == 4
                     else acquire6(c.mac, interface=c.interface, timeout=2.0, tries=5))
        except (HfcprovError, OSError) as err:
            self.log(f"boot {self.boots}: DHCP: {err}")
            return {"status": "dhcp-failed", "reason": str(err)}
        self._hold(lease)
        self.log(f"boot {self.boots}: DHCPv{c.family} lease {lease.address}: file {lease.file!r} from "
                 f"{', '.join(lease.tftp_servers) or 'no TFTP server'}; time servers "
                 f"{', '.join(lease.time_servers) or 'none'}")
        extra = {"address": lease.address, "dhcp": {"family": c.family, "file": lease.file,
                                                     "tftp_servers": lease.tftp_servers,
                                                     "time_servers": lease.time_servers,
                                                     "time_offset": lease.time_offset}}
        if not lease.tftp_servers or not lease.file:
            return {"status": "dhcp-failed", "reason": "the lease names no TFTP server or no file", **extra}
        for server in lease.time_servers[:1]:  # a modem that gets no time goes on (MULPI): logged
            try:
                extra["tod"] = unix_time(query_time(server, timeout=1.0, tries=3, bind=lease.address))
                self.log(f"boot {self.boots}: time of day from {server}: {extra['tod']}")
            except (HfcprovError, OSError) as err:
                self.log(f"boot {self.boots}: time of day from {server} failed: {err}")
        self.filename = lease.file
        host = lease.tftp_servers[0]
        server = f"[{host}]:69" if ":" in host else f"{host}:69"
        got = None
        for attempt in range(5):  # a real modem retries TFTP too
            (got,) = fetch_many(host, 69, [lease.file], bind=lease.address, timeout=1.0, retries=3)
            if got.ok:
                break
            self.log(f"boot {self.boots}: tftp attempt {attempt + 1} for {lease.file} failed: {got.error}")
            if got.error_code is not None:
                break  # the server said no: asking again gets the same answer
            time.sleep(0.5)
        if got is None or not got.ok:
            return {"status": "tftp-failed", "config_file": lease.file, "tftp_server": server,
                    "reason": got.error if got else "", **extra}
        self.log(f"boot {self.boots}: fetched {lease.file} ({len(got.data)} bytes) from tftp://{server}")
        return {"data": got.data, "server": server, "extra": extra}

    def _release(self) -> None:
        """Drop the management address: a rebooting modem holds none until DHCP gives it one."""
        from hfcprov.emu import netns

        if self.address:
            netns.run(["ip", "addr", "del", f"{self.address}/{self._prefix()}", "dev", self.chain.interface],
                      check=False)
        elif self.chain.family == 4:  # the lab's first boot: the address the plant was built with
            netns.run(["ip", "-4", "addr", "flush", "dev", self.chain.interface], check=False)
        else:
            netns.run(["ip", "addr", "del", f"{self.lab.addr('cm_rf')}/64", "dev", self.chain.interface], check=False)
        self.address = None

    def _hold(self, lease) -> None:
        """Put the leased address on the interface (and the default route DHCPv4 named)."""
        from hfcprov.emu import netns

        self.address = lease.address
        if self.chain.family == 4 and len(lease.options.get(1, b"")) == 4:
            self.chain.prefix = sum(bin(b).count("1") for b in lease.options[1])
        argv = ["ip", "addr", "replace", f"{lease.address}/{self._prefix()}", "dev", self.chain.interface]
        netns.run(argv + (["nodad"] if self.chain.family == 6 else []))
        if self.chain.family == 4:
            routers = lease.options.get(3, b"")
            if len(routers) >= 4:
                import socket

                netns.run(["ip", "route", "replace", "default", "via", socket.inet_ntoa(routers[:4])])

    def _prefix(self) -> int:
        return self.chain.prefix or (24 if self.chain.family == 4 else 64)

    def _endpoint(self) -> str:
        host = self.address or self.lab.addr("cm_rf")
        return f"[{host}]:{self.snmp_port}" if ":" in host else f"{host}:{self.snmp_port}"

    def _write(self, applied: dict) -> dict:
        applied.setdefault("boots", self.boots)
        atomic_write(self.state / "applied.json", json.dumps(applied, indent=2, default=str) + "\n")
        return applied

    def _serve_snmp(self, plans: list[shaping.QueuePlan], status: int = CM_OPERATIONAL,
                    tftp_server: str | None = None) -> None:
        from hfcprov.snmp.agentdata import live_uptime, modem_snmprec
        from hfcprov.snmp.simagent import SnmpSimAgent, write_endpoint_data

        self._stop_snmp()
        for p in self.reset_cache.parent.glob(self.reset_cache.name + "*"):
            p.unlink()  # a fresh boot answers docsDevResetNow false(2) again
        # what it really booted from: the server it fetched the file from, and sysUpTime from this boot
        text = modem_snmprec([p.flow for p in plans], self.model.sys_descr, self.filename or "", status=status,
                             applied={i: {"buffer_size": p.buffer, **self._applied_aqm(p)}
                                      for i, p in enumerate(plans)}, tftp_server=tftp_server)
        text = live_uptime(text, time.monotonic() - self.boot_started)
        data_dir = self.state / "snmp"
        write_endpoint_data(data_dir, self.community, [text], v3=bool(self.v3.get("v3_user")))
        host = self.address or self.lab.addr("cm_rf")
        self.agent = SnmpSimAgent(data_dir, [(host, self.snmp_port)], writecache_file=self.reset_cache,
                                  v3_user=self.v3.get("v3_user"), v3_auth_key=self.v3.get("v3_auth_key"),
                                  v3_priv_key=self.v3.get("v3_priv_key"),
                                  v3_auth_proto=self.v3.get("v3_auth_proto", "SHA"),
                                  v3_priv_proto=self.v3.get("v3_priv_proto", "AES")).start()
        self.log(f"snmp: answering on {self._endpoint()}")

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


def _forwarding(on: bool) -> None:
    """IPv4 forwarding in the modem's namespace: a modem the CMTS has not registered passes nothing."""
    from hfcprov.emu import netns

    netns.run(["sysctl", "-q", "-w", f"net.ipv4.ip_forward={int(on)}"], check=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="hfcprov.emu.modem")
    ap.add_argument("--lab", required=True)
    ap.add_argument("--tftp", help="HOST:PORT of the provisioning TFTP server (without --dhcp)")
    ap.add_argument("--file", help="config file name to request (without --dhcp)")
    ap.add_argument("--dhcp", type=int, choices=(4, 6), help="boot through DHCP (v4 or v6), ToD, TFTP and the CMTS")
    ap.add_argument("--mac", help="the modem's MAC (with --dhcp)")
    ap.add_argument("--cmts", help="HOST:PORT of the CMTS's registration (with --dhcp)")
    ap.add_argument("--snmp-credentials", help="0600 JSON file: community, v3_user, v3_auth_key, ...")
    ap.add_argument("--state", required=True, help="folder for applied.json, modem.log and SNMP data")
    ap.add_argument("--snmp-port", type=int, default=161)
    ap.add_argument("--max-buffer", type=int, default=shaping.ModemModel.max_buffer)
    args = ap.parse_args(argv)
    if args.dhcp is None and not (args.tftp and args.file):
        ap.error("give --tftp and --file, or --dhcp with --mac and --cmts")
    if args.dhcp is not None and not (args.mac and args.cmts):
        ap.error("--dhcp needs --mac and --cmts")
    tftp = parse_host_port(args.tftp, 69) if args.tftp else None  # 10.10.2.1:69 or [fd00:10:2::1]:69
    lab = Lab.load(args.lab)
    # secrets from the environment or a 0600 file: never on a command line
    creds = json.loads(Path(args.snmp_credentials).read_text()) if args.snmp_credentials else {}
    community = creds.get("community") or os.environ.get("HFCPROV_EMU_COMMUNITY", "public")
    chain = BootChain(args.mac, args.dhcp, parse_host_port(args.cmts, 0)) if args.dhcp is not None else None
    modem = Modem(lab, tftp, args.file, Path(args.state), args.snmp_port, community,
                  shaping.ModemModel(max_buffer=args.max_buffer), chain=chain, v3=creds)

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
