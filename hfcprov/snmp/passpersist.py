"""A cable modem's management objects behind net-snmp's ``snmpd`` (``pass_persist`` protocol).

``snmpd`` runs this as a child process and forwards every request under ``mib-2`` that
its own modules do not serve (``pass_persist .1.3.6.1.2.1 python3 -m hfcprov.snmp.passpersist
STATE.json EVENTS.jsonl``); this module answers the objects hfcprov reads and sets on a
modem, with their side effects in time:

- ``docsDevResetNow.0 = true(1)``: the modem reboots: ``docsIfCmStatusValue`` is notReady(2)
  and ``docsDevServerBootState`` waitingForDhcpOffer(3) for ``reboot_s`` seconds, then
  operational again;
- ``docsDevSwAdminStatus = upgradeFromMgt(1)``: ``docsDevSwOperStatus`` inProgress(1) for
  ``upgrade_s``, then completeFromMgt(3) (``docsDevSwCurrentVers`` becomes the file name) and a
  reboot, or failed(4) when no server address is set or the file name contains ``missing``;
- ``docsDevServer*``: the config file name and TFTP server the modem says it used;
- ``override`` (OID -> [pass_persist type, value]): objects served as given, whatever their MIB says
  (broken firmware: an INTEGER column as a string), or added;
- ``legacy``: a DOCSIS 1.1/2.0 modem (RFC 2669): no docsDevSwServerAddressType/Address (a SET of
  them is notWritable), docsDevSwServer (an IpAddress) instead;
- ``role: cmts`` with ``modems`` ([{mac, ip, events, reboot_s}]): a CMTS whose
  docsIfCmtsCmStatusTable says each modem is registrationComplete... operational(8), or
  waiting (notReady) for ``reboot_s`` after each reset its events file records.

Every accepted SET is appended to EVENTS as one JSON line, so a test can see what reached
the modem. The protocol (``PING``/``get``/``getnext``/``set`` lines on stdin) is net-snmp's
``pass_persist`` as its snmpd.conf(5) page describes it.
"""

from __future__ import annotations

import ipaddress
import json
import sys
import time

MIB2 = "1.3.6.1.2.1"
DEV = f"{MIB2}.69.1"
RESET_NOW = f"{DEV}.1.3.0"
SW_FILENAME, SW_ADMIN, SW_OPER, SW_VERS = (f"{DEV}.3.{n}.0" for n in (2, 3, 4, 5))
SW_ADDR_TYPE, SW_ADDR = f"{DEV}.3.6.0", f"{DEV}.3.7.0"
SW_SERVER = f"{DEV}.3.1.0"  # docsDevSwServer, RFC 2669 (deprecated by RFC 4639's address-type pair)
CMTS_CM = f"{MIB2}.10.127.1.3.3.1"  # docsIfCmtsCmStatusEntry: .2 MAC, .3 IP, .9 status
BOOT_STATE, CONFIG_FILE = f"{DEV}.4.1.0", f"{DEV}.4.5.0"
TFTP_ADDR_TYPE, TFTP_ADDR = f"{DEV}.4.10.0", f"{DEV}.4.11.0"
CM_STATUS = f"{MIB2}.10.127.1.2.2.1.1.2"

WRITABLE = {RESET_NOW: "integer", SW_FILENAME: "string", SW_ADMIN: "integer", SW_ADDR_TYPE: "integer",
            SW_ADDR: "octet", SW_SERVER: "ipaddress"}


def _key(oid: str) -> tuple[int, ...]:
    return tuple(int(p) for p in oid.strip(".").split(".") if p)


def _inet(text: str) -> tuple[int, bytes]:
    if not text:
        return 0, b""
    addr = ipaddress.ip_address(text)
    return (1 if addr.version == 4 else 2), addr.packed


class Modem:
    """The objects and their timed side effects; ``now`` is injectable for tests of this class."""

    def __init__(self, state: dict, events=None, now=time.monotonic):
        self.now = now
        self.events = events
        self.reboot_s = float(state.get("reboot_s", 1.0))
        self.upgrade_s = float(state.get("upgrade_s", 1.0))
        self.config_file = state.get("config_file", "")
        self.tftp_type, self.tftp_addr = _inet(state.get("tftp_server", ""))
        self.version = state.get("version", "hfcprov-sim-1.0")
        self.sw_file, self.sw_type, self.sw_addr = "", 0, b""
        self.sw_admin, self.sw_oper = 3, 5  # ignoreProvisioningUpgrade, other
        self.override = {oid.strip("."): (kind, str(value)) for oid, (kind, value) in state.get("override", {}).items()}
        self.legacy = bool(state.get("legacy"))
        self.cmts_of = state.get("modems", []) if state.get("role") == "cmts" else None
        self.reboot_until = 0.0
        self.upgrade_until = None  # time the running upgrade ends
        self.upgrade_ok = False

    # -- time -----------------------------------------------------------------------------------
    def _tick(self) -> None:
        t = self.now()
        if self.upgrade_until is not None and t >= self.upgrade_until:
            self.upgrade_until = None
            if self.upgrade_ok:
                self.sw_oper, self.version = 3, self.sw_file  # completeFromMgt; reboots into it
                self.reboot_until = t + self.reboot_s
                self._event("upgraded", file=self.sw_file)
            else:
                self.sw_oper = 4  # failed
                self._event("upgrade-failed", file=self.sw_file)

    def _rebooting(self) -> bool:
        return self.now() < self.reboot_until

    # -- objects ---------------------------------------------------------------------------------
    def values(self) -> dict[str, tuple[str, str]]:
        if self.cmts_of is not None:
            return {**self._cmts_rows(), **self.override}
        self._tick()
        down = self._rebooting()
        objects = {
            RESET_NOW: ("integer", "2"),
            SW_FILENAME: ("string", self.sw_file),
            SW_ADMIN: ("integer", str(self.sw_admin)),
            SW_OPER: ("integer", str(1 if self.upgrade_until is not None else self.sw_oper)),
            SW_VERS: ("string", self.version),
            SW_ADDR_TYPE: ("integer", str(self.sw_type)),
            SW_ADDR: ("octet", " ".join(f"{b:02x}" for b in self.sw_addr)),
            BOOT_STATE: ("integer", "3" if down else "1"),  # waitingForDhcpOffer / operational
            CONFIG_FILE: ("string", self.config_file),
            TFTP_ADDR_TYPE: ("integer", str(self.tftp_type)),
            TFTP_ADDR: ("octet", " ".join(f"{b:02x}" for b in self.tftp_addr)),
            CM_STATUS: ("integer", "2" if down else "12"),  # notReady / operational
        }
        if self.legacy:
            del objects[SW_ADDR_TYPE], objects[SW_ADDR]
            objects[SW_SERVER] = ("ipaddress", str(ipaddress.ip_address(self.sw_addr)) if len(self.sw_addr) == 4
                                  else "0.0.0.0")
        return {**objects, **self.override}

    def _cmts_rows(self) -> dict[str, tuple[str, str]]:
        """The CMTS's docsIfCmtsCmStatusTable: each modem down (notReady(2)) while it reboots after a
        reset its events file records, else operational(8)."""
        rows = {}
        for i, m in enumerate(self.cmts_of, 1):
            down = False
            try:
                with open(m["events"]) as f:
                    resets = [json.loads(line)["time"] for line in f if '"reset"' in line]
                down = bool(resets) and time.time() < max(resets) + float(m.get("reboot_s", 1.0))
            except (OSError, ValueError, KeyError):
                pass
            rows[f"{CMTS_CM}.2.{i}"] = ("octet", " ".join(m["mac"][j:j + 2] for j in range(0, 12, 2)))
            rows[f"{CMTS_CM}.3.{i}"] = ("ipaddress", m["ip"])
            rows[f"{CMTS_CM}.9.{i}"] = ("integer", "2" if down else "8")
        return rows

    def get(self, oid: str):
        return self.values().get(oid.strip("."))

    def getnext(self, oid: str, within: str = ""):
        """The next object after ``oid`` inside the subtree ``within`` (the registration this
        process serves: snmpd moves on to the next registration at its end)."""
        values = self.values()
        k = _key(oid)
        prefix = _key(within)
        later = sorted((_key(o), o) for o in values if _key(o) > k and _key(o)[:len(prefix)] == prefix)
        if not later:
            return None
        name = later[0][1]
        return name, values[name]

    def set(self, oid: str, type_: str, text: str) -> str:
        """Apply a SET; ``DONE`` or the pass_persist error word."""
        oid = oid.strip(".")
        self._tick()
        if oid not in WRITABLE or (self.legacy and oid in (SW_ADDR_TYPE, SW_ADDR)) \
                or (not self.legacy and oid == SW_SERVER):
            return "not-writable"
        want = WRITABLE[oid]
        if want == "ipaddress":
            if type_ != "ipaddress":
                return "wrong-type"
            try:
                self.sw_type, self.sw_addr = 1, ipaddress.IPv4Address(text.strip()).packed
            except ValueError:
                return "wrong-value"
            return "DONE"
        if want == "integer":
            if type_ != "integer":
                return "wrong-type"
            try:
                value = int(text)
            except ValueError:
                return "wrong-value"
        elif type_ not in ("string", "octet"):
            return "wrong-type"
        else:
            value = _octets(type_, text)
        if oid == RESET_NOW:
            if value != 1:
                return "wrong-value"
            self.reboot_until = self.now() + self.reboot_s
            self._event("reset")
        elif oid == SW_FILENAME:
            self.sw_file = value.decode(errors="replace")
        elif oid == SW_ADDR_TYPE:
            if value not in (0, 1, 2):
                return "wrong-value"
            self.sw_type = value
        elif oid == SW_ADDR:
            if len(value) not in (0, 4, 16):
                return "wrong-length"
            self.sw_addr = value
        elif oid == SW_ADMIN:
            if value not in (1, 2, 3):
                return "wrong-value"
            self.sw_admin = value
            if value == 1:
                if self.upgrade_until is not None:
                    return "inconsistent-value"  # one upgrade at a time
                expected_len = {1: 4, 2: 16}.get(self.sw_type)
                self.upgrade_ok = (expected_len == len(self.sw_addr) and bool(self.sw_file)
                                   and "missing" not in self.sw_file)
                self.upgrade_until = self.now() + self.upgrade_s
                server = str(ipaddress.ip_address(self.sw_addr)) if expected_len == len(self.sw_addr) else ""
                self._event("upgrade", file=self.sw_file, server=server)
        return "DONE"

    def _event(self, kind: str, **fields) -> None:
        if self.events is not None:
            self.events.write(json.dumps({"event": kind, "time": round(time.time(), 3), **fields}) + "\n")
            self.events.flush()


def _octets(type_: str, text: str) -> bytes:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    if type_ == "octet":
        return bytes(int(tok, 16) for tok in text.split())
    return text.encode()


def serve(modem: Modem, stdin=sys.stdin, stdout=sys.stdout, within: str = "") -> None:
    """The pass_persist loop: one command per line, answers flushed at once."""

    def out(*lines: str) -> None:
        stdout.write("".join(f"{line}\n" for line in lines))
        stdout.flush()

    while True:
        command = stdin.readline()
        if not command:
            return  # snmpd closed the pipe
        command = command.strip()
        if command == "PING":
            out("PONG")
        elif command in ("get", "getnext"):
            oid = stdin.readline().strip()
            if command == "get":
                found = modem.get(oid)
                found = (oid, found) if found is not None else None
            else:
                found = modem.getnext(oid, within)
            if found is None:
                out("NONE")
            else:
                name, (type_, value) = found
                out(f".{name.strip('.')}", type_, value)
        elif command == "set":
            oid = stdin.readline().strip()
            type_, _, text = stdin.readline().strip().partition(" ")
            out(modem.set(oid, type_, text))
        elif command:
            out("NONE")


def main(argv: list[str]) -> int:
    state = {}
    if len(argv) > 1:
        with open(argv[1]) as f:
            state = json.load(f)
    events = open(argv[2], "a") if len(argv) > 2 else None  # noqa: SIM115 - open for the agent's life
    serve(Modem(state, events), within=argv[3] if len(argv) > 3 else "")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
