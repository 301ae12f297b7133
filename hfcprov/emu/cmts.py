"""The emulated CMTS: relays the modem's DHCP, decides its registration, serves its modem tables.

A cable modem is only online once the CMTS registered it. After DHCP, Time of Day and TFTP the
modem sends a REG-REQ carrying its config file's TLVs and the CMTS MIC; the CMTS recomputes the
CMTS MIC with its shared secret and checks TLV 20 (IPv4) / 59 (IPv6), the address the TFTP
server stamped, against the address the modem holds (the CMTS knows it: it relayed the modem's
DHCP). A mismatch is refused: the modem stays unregistered, the CMTS lists it accessDenied(7).

Here the RF MAC is a veth, so ranging and registration are small UDP messages on the CMTS's
``rf`` side (``REG_PORT``), JSON for readability: ``RNG-REQ`` (a broadcast the modem sends when
it starts: the CMTS sees it come back) and ``REG-REQ`` (from the address the modem holds, with
the file's bytes) answered by ``REG-RSP`` (``accepted``, ``reason``). The decision is
``check_registration``: the MICs are ``hfcprov.config``'s (``verify``, on ``config.framing``);
nothing here computes a MIC.

The process (``python -m hfcprov.emu.cmts``, in the lab's ``cmts`` namespace) runs the DHCP relay
(``hfcprov.boot.relay``), the registration listener and an SNMP agent (snmpsim, v2c and v3)
serving docsIfCmtsCmStatusTable and docsIf3CmtsCmRegStatusTable (``snmp.agentdata.cmts_snmprec``)
as they change; ``<state>/cmts.json`` holds the same rows for a test or ``emu status``.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import selectors
import signal
import socket
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hfcprov import macaddr
from hfcprov.errors import HfcprovError
from hfcprov.fileio import atomic_write
from hfcprov.units import parse_host_port

REG_PORT = 5590  # the emulated RF MAC's registration messages (UDP, on the CMTS's rf side)

# docsIfCmtsCmStatusValue (DOCS-IF-MIB)
CMTS_RANGING, CMTS_IP_COMPLETE, CMTS_ACCESS_DENIED, CMTS_OPERATIONAL = 2, 5, 7, 8
# docsIf3CmtsCmRegStatusValue (CmRegState)
REG_INITIAL_RANGING, REG_DHCPV4_COMPLETE, REG_OPERATIONAL = 2, 5, 8
REG_START_DHCPV4, REG_START_DHCPV6, REG_DHCPV6_COMPLETE, REG_START_REGISTRATION = 11, 12, 13, 16
# docsIfCmStatusValue (the modem's own view): registration refused after the file came
CM_PARAM_TRANSFER_COMPLETE, CM_OPERATIONAL = 10, 12


class CmtsError(HfcprovError):
    """The emulated CMTS could not start, or did not answer a registration."""


@dataclass
class Registration:
    """A CMTS's answer to a REG-REQ."""

    accepted: bool
    reason: str = ""


def check_registration(data: bytes, holds: dict[int, str], secret: bytes | None) -> Registration:
    """What a CMTS decides on a modem's REG-REQ (its config file's bytes).

    ``holds``: the addresses the modem holds, by family (4, 6), as the CMTS learnt them from the
    DHCP it relayed. ``secret``: the CMTS's shared secret; None: a CMTS configured without one
    (the CM MIC is still checked, the CMTS MIC is not)."""
    from hfcprov.config import ConfigError, decode, verify, verify_cm_mic

    try:
        if secret:
            verify(data, secret)
        else:
            verify_cm_mic(data)
    except ConfigError as err:
        return Registration(False, f"MIC check failed: {err}")
    try:
        tree = decode(data)
    except ConfigError as err:
        return Registration(False, f"bad TLVs: {err}")
    for tlv, family in (("20", 4), ("59", 6)):
        for t in tree.find(tlv):
            stamped = str(t.value)
            held = holds.get(family)
            if held is None:
                return Registration(False, f"TLV {tlv} says {stamped}, but the modem holds no IPv{family} address "
                                           "this CMTS relayed")
            if ipaddress.ip_address(stamped) != ipaddress.ip_address(held):
                return Registration(False, f"TLV {tlv} says {stamped}, but the modem holds {held} (a file for "
                                           "another address, or a stale one)")
    return Registration(True)


# --- the modem's side of the emulated RF MAC -----------------------------------------------------------------


def send_ranging(interface: str, mac: str, port: int = REG_PORT) -> None:
    """RNG-REQ: the modem (re)starts; a broadcast on ``interface`` (it may hold no address yet)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, interface.encode())
        s.sendto(json.dumps({"type": "RNG-REQ", "mac": macaddr.normalize(mac)}).encode(),
                 ("255.255.255.255", port))


def register(cmts: tuple[str, int], mac: str, source: str, data: bytes, file: str, tftp: str,
             timeout: float = 2.0, tries: int = 5) -> Registration:
    """REG-REQ from ``source`` (the address the modem holds) to the CMTS; its REG-RSP."""
    family = socket.AF_INET6 if ":" in source else socket.AF_INET
    request = json.dumps({"type": "REG-REQ", "mac": macaddr.normalize(mac), "file": file, "tftp": tftp,
                          "data": data.hex()}).encode()
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.bind((source, 0))
        for _ in range(tries):
            s.sendto(request, cmts)
            s.settimeout(timeout)
            try:
                answer = json.loads(s.recv(65536))
            except (TimeoutError, ValueError):
                continue
            if answer.get("type") == "REG-RSP":
                return Registration(bool(answer.get("accepted")), str(answer.get("reason", "")))
    raise CmtsError(f"no REG-RSP from the CMTS at {cmts[0]}:{cmts[1]} ({tries} tries)")


# --- the CMTS -------------------------------------------------------------------------------------------------


@dataclass
class ModemRow:
    """One modem as the CMTS knows it."""

    mac: str
    status: int = CMTS_RANGING  # docsIfCmtsCmStatusValue
    reg_status: int = REG_INITIAL_RANGING  # docsIf3CmtsCmRegStatusValue
    ip: str | None = None  # from the DHCPv4 ACK it relayed
    ipv6: str | None = None  # from the DHCPv6 REPLY it relayed
    rangings: int = 0
    registrations: int = 0  # REG-REQs accepted
    refusals: int = 0
    reason: str = ""  # why the last REG-REQ was refused
    file: str = ""
    tftp: str = ""
    registered_at: float | None = None


@dataclass
class EmulatedCmts:
    """The CMTS's state and what it does on each message; ``publish`` writes it (JSON + SNMP data)."""

    state: Path
    secret: bytes | None = field(default=None, repr=False)
    modems: dict[str, ModemRow] = field(default_factory=dict)
    community: str = "public"
    snmp_files: int = 0  # endpoints the SNMP agent serves (one data file each)
    v3: bool = False
    agent: str = "none"  # the SNMP agent: none, starting, answering

    def __post_init__(self):
        self.lock = threading.Lock()
        self._stamp = 0

    def row(self, mac: str) -> ModemRow:
        mac = macaddr.normalize(mac)
        return self.modems.setdefault(mac, ModemRow(mac))

    def ranging(self, mac: str) -> None:
        with self.lock:
            r = self.row(mac)
            r.status, r.reg_status, r.ip, r.ipv6 = CMTS_RANGING, REG_INITIAL_RANGING, None, None
            r.rangings += 1
            self.publish()

    def dhcp_event(self, kind: str, mac: str, address: str | None) -> None:
        if not mac:
            return
        with self.lock:
            r = self.row(mac)
            if kind == "request4":
                r.reg_status = REG_START_DHCPV4
            elif kind == "request6":
                r.reg_status = REG_START_DHCPV6
            elif kind == "ack4":
                r.ip, r.status, r.reg_status = address, CMTS_IP_COMPLETE, REG_DHCPV4_COMPLETE
            elif kind == "reply6":
                r.ipv6, r.status, r.reg_status = address, CMTS_IP_COMPLETE, REG_DHCPV6_COMPLETE
            else:
                return
            self.publish()

    def register(self, mac: str, source: str, data: bytes, file: str, tftp: str) -> Registration:
        with self.lock:
            r = self.row(mac)
            holds = {4: r.ip, 6: r.ipv6}
            family = 6 if ":" in source else 4
            holds[family] = holds[family] or source  # a modem whose DHCP this CMTS did not relay
            decision = check_registration(data, {k: v for k, v in holds.items() if v}, self.secret)
            r.file, r.tftp = file, tftp
            if decision.accepted:
                r.status, r.reg_status, r.reason = CMTS_OPERATIONAL, REG_OPERATIONAL, ""
                r.registrations += 1
                r.registered_at = time.time()
            else:
                r.status, r.reg_status, r.reason = CMTS_ACCESS_DENIED, REG_START_REGISTRATION, decision.reason
                r.refusals += 1
            self.publish()
            return decision

    def publish(self) -> None:
        """cmts.json and the SNMP agent's data files. snmpsim re-reads a data file when its mtime (whole
        seconds) changes, so each write gets a later whole second than the one before."""
        rows = [asdict(r) for r in self.modems.values()]
        atomic_write(self.state / "cmts.json", json.dumps({"modems": rows, "agent": self.agent}, indent=2) + "\n")
        if not self.snmp_files:
            return
        from hfcprov.snmp.agentdata import cmts_snmprec
        from hfcprov.snmp.simagent import endpoint_datafile, write_endpoint_data

        text = cmts_snmprec([{"mac": r.mac, "ip": r.ip, "ipv6": r.ipv6, "status": r.status,
                              "reg_status": r.reg_status} for r in self.modems.values()],
                            sys_descr="hfcprov emulated CMTS")
        data_dir = self.state / "cmts-snmp"
        write_endpoint_data(data_dir, self.community, [text] * self.snmp_files, v3=self.v3)
        self._stamp = max(int(time.time()), self._stamp + 1)
        paths = [data_dir / f"{self.community}.snmprec"]
        for n in range(self.snmp_files):
            paths.append(endpoint_datafile(data_dir, self.community, n))
            if self.v3:
                paths.append(endpoint_datafile(data_dir, None, n))
        for p in paths:
            os.utime(p, (self._stamp, self._stamp))


def _serve_registration(cmts: EmulatedCmts, interface: str, port: int, stop: threading.Event) -> list:
    """RNG-REQ and REG-REQ listeners on ``interface`` (IPv4, and IPv6 where the link has it)."""
    socks = []
    for family, any_address in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        s = socket.socket(family, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, interface.encode())
        if family == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            s.bind((any_address, port))
        except OSError:
            s.close()
            if family == socket.AF_INET:
                raise
            continue  # no IPv6 on this link
        socks.append(s)
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_READ)

    def loop():
        while not stop.is_set():
            for key, _ in sel.select(0.2):
                try:
                    data, peer = key.fileobj.recvfrom(65536)
                    msg = json.loads(data)
                    kind, mac = msg.get("type"), macaddr.normalize(msg.get("mac", ""))
                except (OSError, ValueError, HfcprovError):
                    continue
                if kind == "RNG-REQ":
                    cmts.ranging(mac)
                elif kind == "REG-REQ":
                    try:
                        body = bytes.fromhex(msg.get("data", ""))
                    except ValueError:
                        continue
                    source = peer[0].split("%", 1)[0].removeprefix("::ffff:")
                    decision = cmts.register(mac, source, body, str(msg.get("file", "")), str(msg.get("tftp", "")))
                    answer = {"type": "REG-RSP", "accepted": decision.accepted, "reason": decision.reason}
                    key.fileobj.sendto(json.dumps(answer).encode(), peer)

    threading.Thread(target=loop, name="cmts-registration", daemon=True).start()
    return socks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="hfcprov.emu.cmts")
    ap.add_argument("--state", required=True, help="folder for cmts.json and the SNMP agent's data")
    ap.add_argument("--interface", default="rf", help="the cable side (the modems' link)")
    ap.add_argument("--dhcp4", nargs=2, metavar=("GIADDR", "SERVER"), help="relay DHCPv4 to SERVER")
    ap.add_argument("--dhcp6", nargs=2, metavar=("LINK_ADDRESS", "SERVER"), help="relay DHCPv6 to SERVER")
    ap.add_argument("--reg-port", type=int, default=REG_PORT)
    ap.add_argument("--secret-file", help="the CMTS's shared secret (CMTS MIC); none: not checked")
    ap.add_argument("--snmp", action="append", default=[], metavar="HOST:PORT", help="SNMP agent endpoint")
    ap.add_argument("--snmp-credentials", help="0600 JSON file: community, v3_user, v3_auth_key, ...")
    args = ap.parse_args(argv)
    from hfcprov.boot.relay import DhcpRelay

    state = Path(args.state)
    state.mkdir(parents=True, exist_ok=True)
    secret = None
    if args.secret_file:
        from hfcprov.config import read_secret

        secret = read_secret(args.secret_file)
    creds = json.loads(Path(args.snmp_credentials).read_text()) if args.snmp_credentials else {}
    endpoints = [parse_host_port(e, 161) for e in args.snmp]
    cmts = EmulatedCmts(state, secret, community=creds.get("community", "public"), snmp_files=len(endpoints),
                        v3=bool(creds.get("v3_user")), agent="starting" if endpoints else "none")
    stop = threading.Event()

    def end(*_):
        stop.set()

    signal.signal(signal.SIGTERM, end)
    signal.signal(signal.SIGINT, end)
    # relay and registration first (a modem may be booting already), then the agent, slower to start
    socks = _serve_registration(cmts, args.interface, args.reg_port, stop)
    relay = DhcpRelay(args.interface, v4=tuple(args.dhcp4) if args.dhcp4 else None,
                      v6=tuple(args.dhcp6) if args.dhcp6 else None, on_event=cmts.dhcp_event)
    if args.dhcp4 or args.dhcp6:
        relay.start()
    with cmts.lock:
        cmts.publish()  # cmts.json: the CMTS is up
    agent = None
    if endpoints:
        from hfcprov.snmp.simagent import SnmpSimAgent

        agent = SnmpSimAgent(state / "cmts-snmp", endpoints, v3_user=creds.get("v3_user"),
                             v3_auth_key=creds.get("v3_auth_key"), v3_priv_key=creds.get("v3_priv_key"),
                             v3_auth_proto=creds.get("v3_auth_proto", "SHA"),
                             v3_priv_proto=creds.get("v3_priv_proto", "AES")).start()
        with cmts.lock:
            cmts.agent = "answering"
            cmts.publish()
    print("cmts: ready", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    finally:
        if args.dhcp4 or args.dhcp6:
            relay.stop()
        for s in socks:
            s.close()
        if agent is not None:
            agent.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
