"""The emulated plant's headend: Kea, Time of Day, TFTP and the CMTS, as a modem meets them.

``Lab.boot(root, headend=Headend(...))`` provisions the emulated modem the way a cable plant does,
from an inventory, with the same library the operator's commands use:

- the lab's inventory (one row: the modem's MAC, tier, the management addresses of ``ADDR``/``ADDR6``)
  is written to ``<state>/inventory.csv``; ``hfcprov.boot.dhcp`` turns it into Kea host
  reservations (``plan_reservations`` + ``kea_config``, the ``hfcprov dhcp export`` library) naming
  the TFTP server, the file (``tiers.naming``'s pattern), the time server and the router;
- a real ``kea-dhcp4`` (IPv4 lab) or ``kea-dhcp6`` (``up(ipv6=True)``) runs in the ``srv``
  namespace, the headend behind the CMTS (UDP sockets; the IPv6 headend link is ``HEADEND6``);
- the emulated CMTS (``python -m hfcprov.emu.cmts``, ``cmts`` namespace) relays the modem's DHCP to
  it, decides registrations with its shared secret, and serves its modem tables over SNMP on its
  rf and net addresses;
- ``hfcprov tftp serve --tod`` on the CMTS's rf address serves the root (``dynamic``: lease-bound
  files built per request, TLV 20/59 stamped), or ``hfcprov tod serve`` alone when the TFTP server
  is someone else's (``serve_tftp=False``: a campaign's own, say).

Secrets (the CMTS's shared secret file, SNMP keys) are passed as files, never on a command line.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from hfcprov.errors import HfcprovError
from hfcprov.fileio import atomic_write

DEFAULT_MAC = "0010950000e1"
# the headend link (cmts net <-> srv net0) on IPv6, for Kea's DHCPv6 behind the CMTS's relay
HEADEND6 = {"cmts_net": "fd00:10:3::1", "srv": "fd00:10:3::2"}
SUBNET = {4: "10.10.2.0/24", 6: "fd00:10:2::/64"}


class HeadendError(HfcprovError):
    """The headend (Kea, CMTS, ToD/TFTP) could not be started."""


@dataclass
class SnmpKeys:
    """The SNMP credentials an emulated agent (modem or CMTS) accepts: a community, and an SNMPv3 user."""

    community: str = field(default="public", repr=False)
    v3_user: str | None = None
    v3_auth_key: str | None = field(default=None, repr=False)
    v3_priv_key: str | None = field(default=None, repr=False)
    v3_auth_proto: str = "SHA"
    v3_priv_proto: str = "AES"

    def write(self, path: Path) -> Path:
        atomic_write(path, json.dumps(self.__dict__) + "\n", mode=0o600)
        return path


@dataclass
class Headend:
    """How the emulated modem is provisioned. ``secret_file``: the CMTS's shared secret (None: a CMTS
    that checks no CMTS MIC); ``tftp``: the TFTP server DHCP names (default: the CMTS's rf address,
    where the lab serves ``root`` when ``serve_tftp``); ``pattern``: the file name rule
    (``build --pattern``); ``dynamic``: a dynamic TFTP YAML (its ``leases:`` is filled with Kea's
    lease file when it has none)."""

    mac: str = DEFAULT_MAC
    tier: str = "res-50x5"  # a shipped tier: a dynamic YAML without templates: builds it
    pattern: str = "{mac}.cm"
    secret_file: str | None = None
    tftp: str | None = None
    serve_tftp: bool = True
    dynamic: str | None = None
    modem_snmp: SnmpKeys = field(default_factory=SnmpKeys)
    cmts_snmp: SnmpKeys | None = None  # None: the modem's

    def row(self, lab) -> dict:
        """The lab's inventory row (the columns ``build``, ``dhcp export`` and the dynamic TFTP read)."""
        from hfcprov import macaddr

        row = {"mac": macaddr.normalize(self.mac), "tier": self.tier, "ip": lab.addr_v4("cm_rf")}
        if lab.ipv6:
            row["ipv6"] = lab.addr("cm_rf")
        return row


def write_inventory(path: Path, row: dict) -> Path:
    import csv
    import io

    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(row))
    w.writeheader()
    w.writerow(row)
    atomic_write(path, out.getvalue())
    return path


def kea_config_for(lab, headend: Headend, inventory: Path, family: int, lease_file: Path, socket: Path) -> dict:
    """Kea's whole config for the lab: reservations from the inventory, the headend's listening side."""
    from hfcprov.boot.dhcp import BootServers, kea_config, plan_reservations

    cmts_rf = lab.addr("cmts_rf") if family == 6 else lab.addr_v4("cmts_rf")
    tftp = headend.tftp or cmts_rf
    servers = BootServers(tftp=(tftp,), time=(cmts_rf,), routers=(cmts_rf,) if family == 4 else ())
    plan = plan_reservations(inventory, family, pattern=headend.pattern)
    interface = "net0" if family == 4 else f"net0/{HEADEND6['srv']}"
    config, _ = kea_config(plan, family, servers, subnets=[SUBNET[family]], interfaces=[interface],
                           lease_file=str(lease_file), control_socket=str(socket))
    server = config[f"Dhcp{family}"]
    if family == 4:
        server["interfaces-config"]["dhcp-socket-type"] = "udp"  # relayed only: the CMTS relays every modem
    else:  # not /var/lib/kea, which a test machine may lack
        server["server-id"] = {"type": "LL", "htype": 1, "identifier": "020000000002", "persist": False}
    server["lease-database"]["lfc-interval"] = 0
    server["loggers"] = [{"name": f"kea-dhcp{family}", "severity": "INFO",
                          "output_options": [{"output": str(lease_file.parent / f"kea{family}.log")}]}]
    return config


def start(lab, headend: Headend, tftp_root, tftp_port: int = 69, timeout: float = 30.0) -> dict:
    """Start Kea, the CMTS and ToD (+ TFTP) for ``lab``; returns what the modem process needs."""
    from hfcprov.boot.kea import KeaControl, KeaError, find_kea
    from hfcprov.emu.cmts import REG_PORT

    family = 6 if lab.ipv6 else 4
    binary = find_kea(family)
    if binary is None:
        raise HeadendError(f"kea-dhcp{family} is not installed (Debian: kea-dhcp{family}-server)")
    state = lab.state_dir
    (state / "kea").mkdir(parents=True, exist_ok=True)
    if family == 6:
        _headend_ipv6(lab)
    inventory = write_inventory(state / "inventory.csv", headend.row(lab))
    lease_file, control = state / "kea" / f"leases{family}.csv", state / "kea" / "ctrl.sock"
    config = kea_config_for(lab, headend, inventory, family, lease_file, control)
    config_file = state / "kea" / f"kea{family}.json"
    atomic_write(config_file, json.dumps(config, indent=1) + "\n")
    lab.pids["kea"] = lab.spawn("srv", ["env", f"KEA_PIDFILE_DIR={state / 'kea'}", f"KEA_LOCKFILE_DIR={state / 'kea'}",
                                        binary, "-c", str(config_file)], log=state / "kea" / "kea.err")
    kea = KeaControl(control, timeout=2.0)
    _wait(lambda: kea.answer("status-get").get("result") == 0, timeout, f"kea-dhcp{family} in {lab.ns('srv')}",
          (KeaError,), state / "kea" / "kea.err")
    # the CMTS: relay, registration, its SNMP agent
    cmts_state = state / "cmts"
    cmts_state.mkdir(exist_ok=True)
    creds = (headend.cmts_snmp or headend.modem_snmp).write(cmts_state / "snmp.json")
    argv = [sys.executable, "-m", "hfcprov.emu.cmts", "--state", str(cmts_state), "--interface", "rf",
            "--snmp-credentials", str(creds)]
    if family == 4:
        argv += ["--dhcp4", lab.addr_v4("cmts_rf"), lab.addr_v4("srv"),
                 "--snmp", f"{lab.addr_v4('cmts_rf')}:161", "--snmp", f"{lab.addr_v4('cmts_net')}:161"]
    else:
        argv += ["--dhcp6", lab.addr("cmts_rf"), HEADEND6["srv"], "--snmp", f"{lab.addr_v4('cmts_rf')}:161",
                 "--snmp", f"{lab.addr_v4('cmts_net')}:161", "--snmp", f"[{lab.addr('cmts_rf')}]:161"]
    if headend.secret_file:
        argv += ["--secret-file", str(Path(headend.secret_file).resolve())]
    lab.pids["cmts"] = lab.spawn("cmts", argv, log=cmts_state / "cmts.err")
    _wait(lambda: (cmts_state / "cmts.json").exists(), timeout, f"the emulated CMTS in {lab.ns('cmts')}",
          (), cmts_state / "cmts.err")
    # Time of Day, and the TFTP server DHCP names when the lab serves it
    listen = lab.endpoint("cmts_rf", tftp_port)
    if headend.serve_tftp:
        serve = [sys.executable, "-m", "hfcprov", "tftp", "serve", "--root", str(Path(tftp_root).resolve()),
                 "--listen", listen, "--tod", "--log", str(state / "tftp.log")]
        if headend.dynamic:
            serve += ["--dynamic", str(_dynamic_with_leases(headend.dynamic, lease_file, state))]
        lab.pids["tftp"] = lab.spawn("cmts", serve, log=state / "tftp.err")
    else:
        lab.pids["tod"] = lab.spawn("cmts", [sys.executable, "-m", "hfcprov", "tod", "serve", "--listen",
                                             lab.endpoint("cmts_rf", 37)], log=state / "tod.err")
    lab.save()
    modem_creds = headend.modem_snmp.write(state / "modem-snmp.json")
    host = lab.addr("cmts_rf") if family == 6 else lab.addr_v4("cmts_rf")
    return {"dhcp": family, "mac": headend.row(lab)["mac"], "cmts": f"[{host}]:{REG_PORT}" if family == 6
            else f"{host}:{REG_PORT}", "snmp_credentials": str(modem_creds), "lease_file": str(lease_file)}


def cmts_state(lab) -> dict:
    """The emulated CMTS's view of its modems (``cmts.json``)."""
    try:
        return json.loads((lab.state_dir / "cmts" / "cmts.json").read_text())
    except (FileNotFoundError, ValueError):
        return {"modems": []}


def wait_cmts_agent(lab, timeout: float = 60.0) -> dict:
    """Wait until the emulated CMTS's SNMP agent answers (it starts after the relay); its state."""
    _wait(lambda: cmts_state(lab).get("agent") in ("answering", "none"), timeout,
          f"the emulated CMTS's SNMP agent in {lab.ns('cmts')}", (), lab.state_dir / "cmts" / "cmts.err")
    return cmts_state(lab)


def _dynamic_with_leases(dynamic: str, lease_file: Path, state: Path) -> Path:
    """The dynamic TFTP YAML for this lab: lease-bound to its Kea (``leases:`` filled in where it names
    none) and building from its inventory (where it names none)."""
    import yaml

    path = Path(dynamic).resolve()
    spec = yaml.safe_load(path.read_text()) or {}
    if "leases" in spec or "kea_socket" in spec:
        if "inventory" in spec:
            return path
    else:
        spec["leases"] = str(lease_file)
    spec.setdefault("inventory", str(state / "inventory.csv"))
    for key in ("inventory", "templates", "secret_file", "secret_map"):  # keep relative paths meaning the same
        if isinstance(spec.get(key), str) and not Path(spec[key]).is_absolute():
            spec[key] = str(path.parent / spec[key])
    out = state / "tftp-dynamic.yaml"
    atomic_write(out, yaml.safe_dump(spec))
    return out


def _headend_ipv6(lab) -> None:
    """IPv6 on the CMTS - headend link, so Kea's DHCPv6 sits behind the CMTS's relay as in a plant."""
    from hfcprov.emu import netns

    for node, dev, role in (("cmts", "net", "cmts_net"), ("srv", "net0", "srv")):
        netns.run(["sysctl", "-q", "-w", f"net.ipv6.conf.{dev}.accept_dad=0", "net.ipv6.conf.all.disable_ipv6=0",
                   f"net.ipv6.conf.{dev}.disable_ipv6=0"], ns=lab.ns(node))
        netns.run(["ip", "addr", "replace", f"{HEADEND6[role]}/64", "dev", dev, "nodad"], ns=lab.ns(node))
    netns.run(["sysctl", "-q", "-w", "net.ipv6.conf.all.forwarding=1"], ns=lab.ns("cmts"))
    netns.run(["ip", "-6", "route", "replace", SUBNET[6], "via", HEADEND6["cmts_net"]], ns=lab.ns("srv"))


def _wait(ready, timeout: float, what: str, tolerate=(), log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if ready():
                return
        except tolerate:
            pass
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace").strip().splitlines()[-2:] if log and log.exists() else []
            raise HeadendError(f"{what} did not start within {timeout:.0f} s{': ' + ' | '.join(tail) if tail else ''}")
        time.sleep(0.1)


__all__ = ["DEFAULT_MAC", "HEADEND6", "Headend", "HeadendError", "SnmpKeys", "cmts_state", "start", "wait_cmts_agent"]
