"""Kea DHCP host reservations from the modem inventory: what each modem is told when it boots.

One inventory drives the config files (``hfcprov build``), the TFTP server and the DHCP server,
so the file name a modem is handed is the file the TFTP server serves for it
(``tiers.naming.config_file_name``, the same ``--pattern``). For each row (MAC, optional fixed
address in ``ip``/``ipv6``, optional ``subnet``/``subnet6``) a reservation carries (MULPI's DHCP
fields for a cable modem):

- DHCPv4 (``kea4``): ``hw-address`` -> ``ip-address``, ``next-server`` (siaddr) and
  ``boot-file-name`` (file; also options 66/67 for a modem that asks for them), option 2 time
  offset, 3 routers (when given), 4 RFC 868 time servers, 7 log servers, 125 (V-I vendor-specific,
  enterprise 4491, Kea space ``vendor-4491``) sub-option 2 TFTP servers, and 122 (RFC 3495
  CableLabs client configuration) sub-options 1/2 (the eMTA's DHCP servers) when given;
- DHCPv6 (``kea6``): ``hw-address`` (or the row's ``duid``) -> ``ip-addresses``, option 17
  (vendor-opts, enterprise 4491) sub-options 32 TFTP servers, 33 config file, 34 syslog servers,
  37 RFC 868 time servers, 38 time offset.

Vendor options are ``always-send``: Kea answers only the sub-options a modem's own ORO asks for
otherwise, and not every modem sends one. Each reservation carries ``user-context.hfcprov``
(the inventory row it came from), so a later export replaces exactly the reservations it wrote
and leaves an operator's own alone.

    plan = plan_reservations("modems.csv", family=4, servers=BootServers(tftp=("10.0.0.1",)),
                             subnets=["10.1.0.0/16"])
    config, summary = kea_config(plan, servers, base=read_config("/etc/kea/kea-dhcp4.conf"))
"""

from __future__ import annotations

import copy
import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from hfcprov import macaddr
from hfcprov.errors import HfcprovError
from hfcprov.tiers.inventory import check_row, read_rows
from hfcprov.tiers.naming import DEFAULT_PATTERN, config_file_name

SERVICE = {4: "Dhcp4", 6: "Dhcp6"}
SUBNETS = {4: "subnet4", 6: "subnet6"}
ADDRESS_COLUMN = {4: "ip", 6: "ipv6"}
SUBNET_COLUMN = {4: "subnet", 6: "subnet6"}
VENDOR_SPACE = "vendor-4491"  # Kea's name for the CableLabs (enterprise 4491) sub-options, v4 and v6
MARK = "hfcprov"  # the user-context key that marks a reservation as this export's
# Kea defines option 122 (cablelabs-client-conf) itself from 2.7.4 on; before, the export defines it
CCC_BUILTIN = (2, 7, 4)
CCC_DEFS = [
    {"name": "cablelabs-client-conf", "code": 122, "space": "dhcp4", "type": "empty",
     "encapsulate": "cablelabs-client-conf"},
    {"name": "tsp-primary-server", "code": 1, "space": "cablelabs-client-conf", "type": "ipv4-address"},
    {"name": "tsp-secondary-server", "code": 2, "space": "cablelabs-client-conf", "type": "ipv4-address"},
]


class DhcpExportError(HfcprovError):
    """A row or a base config the export cannot place; the message names the row or the key."""


@dataclass(frozen=True)
class BootServers:
    """Where the modems boot from, the same for every row (addresses of either family: each
    export takes those of its own). ``time`` defaults to ``tftp`` (``hfcprov tftp serve --tod``
    answers RFC 868 beside TFTP); ``time_offset`` is seconds east of UTC (DHCP option 2 / 17.38)."""

    tftp: tuple[str, ...]
    time: tuple[str, ...] | None = None
    log: tuple[str, ...] = ()
    time_offset: int | None = 0
    routers: tuple[str, ...] = ()
    mta_dhcp: tuple[str, ...] = ()  # option 122 sub-options 1 and 2 (DHCPv4 only)

    def of(self, family: int, what: str) -> list[str]:
        values = getattr(self, what)
        if what == "time" and values is None:
            values = self.tftp
        out = []
        for v in values or ():
            try:
                address = ipaddress.ip_address(str(v).strip("[]"))
            except ValueError:
                raise DhcpExportError(f"{what} server {v!r} is not an IP address") from None
            if address.version == family:
                out.append(str(address))
        return out


@dataclass
class Reservation:
    """One modem's reservation, before it is written in Kea's form."""

    mac: str
    file: str
    where: str  # inventory file and line
    address: str | None = None
    subnet: str | None = None  # from the row; else the subnet that contains the address
    duid: str | None = None  # DHCPv6: reserve by this DUID instead of the MAC


@dataclass
class ExportSummary:
    family: int
    reservations: int = 0
    subnets_added: list[str] = field(default_factory=list)
    replaced: int = 0  # an operator's own reservation of the same modem, replaced by the inventory's
    removed: int = 0  # this export's reservations of modems no longer in the inventory


def plan_reservations(inventory: str | Path, family: int, pattern: str = DEFAULT_PATTERN) -> list[Reservation]:
    """One ``Reservation`` per inventory row; a bad row is an error naming it (all rows are checked
    first: the message counts the others)."""
    if family not in (4, 6):
        raise DhcpExportError(f"family must be 4 or 6, not {family!r}")
    plan, problems = [], []
    seen: dict[str, str] = {}
    for raw in read_rows(inventory):
        try:
            row = check_row(raw)
            reservation = Reservation(row["mac"], config_file_name(pattern, row), raw.where,
                                      _row_address(row, family), _row_subnet(row, family),
                                      _row_duid(row) if family == 6 else None)
        except HfcprovError as err:
            text = str(err)
            problems.append(text if text.startswith(raw.where) else f"{raw.where}: {text}")
            continue
        for key in filter(None, (reservation.mac, reservation.address)):
            if key in seen:
                problems.append(f"{raw.where}: {key} is already reserved on {seen[key]}")
            seen[key] = raw.where
        plan.append(reservation)
    if problems:
        more = f" (and {len(problems) - 1} more bad rows)" if len(problems) > 1 else ""
        raise DhcpExportError(problems[0] + more)
    return plan


def _row_address(row: dict, family: int) -> str | None:
    for column in (ADDRESS_COLUMN[family], "ip"):
        value = row.get(column)
        if value in (None, ""):
            continue
        try:
            address = ipaddress.ip_address(str(value).strip())
        except ValueError:
            raise DhcpExportError(f"{column} {value!r} is not an IP address") from None
        if address.version == family:
            return str(address)
        if column == ADDRESS_COLUMN[family]:
            raise DhcpExportError(f"{column} {value!r} is not an IPv{family} address")
    return None


def _row_subnet(row: dict, family: int) -> str | None:
    value = row.get(SUBNET_COLUMN[family])
    if value in (None, ""):
        return None
    try:
        net = ipaddress.ip_network(str(value).strip(), strict=False)
    except ValueError:
        raise DhcpExportError(f"{SUBNET_COLUMN[family]} {value!r} is not a prefix") from None
    if net.version != family:
        raise DhcpExportError(f"{SUBNET_COLUMN[family]} {value!r} is not an IPv{family} prefix")
    return str(net)


def _row_duid(row: dict) -> str | None:
    value = row.get("duid")
    if value in (None, ""):
        return None
    text = str(value).replace("-", ":").lower()
    try:
        raw = bytes.fromhex(text.replace(":", ""))
    except ValueError:
        raise DhcpExportError(f"duid {value!r} is not hex octets") from None
    if not 2 < len(raw) <= 130:
        raise DhcpExportError(f"duid {value!r}: a DUID is 3 to 130 octets")
    return ":".join(f"{b:02x}" for b in raw)


def kea_reservation(r: Reservation, family: int, servers: BootServers) -> dict:
    """One reservation in Kea's JSON form."""
    tftp = servers.of(family, "tftp")
    if not tftp:
        raise DhcpExportError(f"no IPv{family} TFTP server given (--tftp-server)")
    options = []

    def option(name, data, space=None, always=False):
        entry = {"name": name, "data": data}
        if space:
            entry["space"] = space
        if always:
            entry["always-send"] = True
        options.append(entry)

    time_servers, log_servers = servers.of(family, "time"), servers.of(family, "log")
    out: dict = {}
    if family == 4:
        out["hw-address"] = macaddr.colon(r.mac)
        if r.address:
            out["ip-address"] = r.address
        out["next-server"] = tftp[0]
        out["boot-file-name"] = r.file
        option("tftp-server-name", tftp[0])  # 66/67: for a modem that asks for them instead of siaddr/file
        option("boot-file-name", r.file)
        if servers.time_offset is not None:
            option("time-offset", str(int(servers.time_offset)))
        if servers.of(4, "routers"):
            option("routers", ", ".join(servers.of(4, "routers")))
        if time_servers:
            option("time-servers", ", ".join(time_servers))
        if log_servers:
            option("log-servers", ", ".join(log_servers))
        option("vivso-suboptions", "4491", always=True)
        option("tftp-servers", ", ".join(tftp), VENDOR_SPACE, always=True)
        mta = servers.of(4, "mta_dhcp")
        if mta:  # an empty container: Kea builds it from its sub-options
            options.append({"name": "cablelabs-client-conf", "always-send": True})
            for name, address in zip(("tsp-primary-server", "tsp-secondary-server"), mta):
                option(name, address, "cablelabs-client-conf")
    else:
        if r.duid:
            out["duid"] = r.duid
        else:
            out["hw-address"] = macaddr.colon(r.mac)
        if r.address:
            out["ip-addresses"] = [r.address]
        option("vendor-opts", "4491", always=True)
        option("tftp-servers", ", ".join(tftp), VENDOR_SPACE, always=True)
        option("config-file", r.file, VENDOR_SPACE, always=True)
        if log_servers:
            option("syslog-servers", ", ".join(log_servers), VENDOR_SPACE, always=True)
        if time_servers:
            option("time-servers", ", ".join(time_servers), VENDOR_SPACE, always=True)
        if servers.time_offset is not None:
            option("time-offset", str(int(servers.time_offset)), VENDOR_SPACE, always=True)
    out["option-data"] = options
    out["user-context"] = {MARK: {"row": r.where, "mac": r.mac}}
    return out


def new_config(family: int, *, interfaces=None, lease_file: str | None = None,
               control_socket: str | None = None) -> dict:
    """A minimal Kea config to start from when the operator gives none."""
    server = {"interfaces-config": {"interfaces": list(interfaces or ["*"])},
              "lease-database": {"type": "memfile", "persist": True, "lfc-interval": 3600},
              SUBNETS[family]: []}
    if lease_file:
        server["lease-database"]["name"] = str(lease_file)
    if control_socket:
        server["control-socket"] = {"socket-type": "unix", "socket-name": str(control_socket)}
    return {SERVICE[family]: server}


def kea_config(plan: list[Reservation], family: int, servers: BootServers, *, base: dict | None = None,
               subnets=(), kea_version: tuple = (2, 2, 0), **new) -> tuple[dict, ExportSummary]:
    """``base`` (an operator's Kea config, or ``new_config(family, **new)``) with the plan's reservations
    in the subnets that hold them. A reservation goes into the base subnet that contains its address
    (or equals its row's subnet); failing that into one of ``subnets`` (prefixes, added to the config
    when the base lacks them); a reservation without an address and without a row subnet needs one
    candidate: the one of ``subnets``, or the base's only subnet. Reservations an earlier export wrote
    are replaced; an operator's own reservation of the same MAC is replaced too (counted), one of the
    same address is an error."""
    config = copy.deepcopy(base) if base is not None else new_config(family, **new)
    service = SERVICE[family]
    if not isinstance(config.get(service), dict):
        other = SERVICE[10 - family]
        hint = f" (it is a {other} config: use --format kea{10 - family})" if other in config else ""
        raise DhcpExportError(f"the base config has no {service} map{hint}")
    server = config[service]
    summary = ExportSummary(family)
    all_subnets = _subnets(server, family)
    previous = set()
    for subnet in all_subnets:  # what an earlier export wrote: replaced below, or removed with its modem
        kept = []
        for res in subnet.get("reservations", []):
            mark = (res.get("user-context") or {}).get(MARK)
            if isinstance(mark, dict) and mark.get("mac"):
                previous.add(mark["mac"])
            else:
                kept.append(res)
        if "reservations" in subnet:
            subnet["reservations"] = kept
    by_prefix = {}
    for subnet in all_subnets:
        try:
            by_prefix[ipaddress.ip_network(subnet["subnet"], strict=False)] = subnet
        except (KeyError, ValueError, TypeError):
            raise DhcpExportError(f"{service}: a {SUBNETS[family]} entry has no valid 'subnet' prefix") from None
    extra = []
    for prefix in subnets:
        try:
            net = ipaddress.ip_network(str(prefix), strict=False)
        except ValueError:
            raise DhcpExportError(f"--subnet {prefix!r} is not a prefix") from None
        if net.version == family:
            extra.append(net)
    next_id = max([int(s.get("id", 0)) for s in all_subnets if str(s.get("id", 0)).isdigit()] + [0]) + 1
    candidates = list(by_prefix) + [n for n in extra if n not in by_prefix]
    used_by = {}
    owners: dict[int, tuple[dict, dict]] = {}  # id(subnet) -> the operator's reservations by modem, by address
    dropped: dict[int, set] = {}  # id(subnet) -> ids of the operator's reservations an inventory modem replaces
    for r in plan:
        net = _choose(r, candidates, extra, family)
        subnet = by_prefix.get(net)
        if subnet is None:  # one of --subnet, not in the base yet
            subnet = by_prefix[net] = {"id": next_id, "subnet": str(net), "reservations": []}
            next_id += 1
            server.setdefault(SUBNETS[family], []).append(subnet)
            summary.subnets_added.append(str(net))
        reservations = subnet.setdefault("reservations", [])
        if id(subnet) not in owners:  # indexed once per subnet: an inventory of 10,000 modems stays linear
            owners[id(subnet)] = _index(reservations)
        by_modem, by_address = owners[id(subnet)]
        mine = by_modem.get(r.mac) or (by_modem.get(r.duid) if r.duid else None)
        if mine is not None and id(mine) not in dropped.setdefault(id(subnet), set()):
            dropped[id(subnet)].add(id(mine))
            summary.replaced += 1
        other = by_address.get(r.address) if r.address else None
        if other is not None and other is not mine:
            raise DhcpExportError(f"{r.where}: {r.address} is already reserved for "
                                  f"{other.get('hw-address') or other.get('duid') or 'another client'} in the base config")
        if r.address:
            if r.address in used_by:
                raise DhcpExportError(f"{r.where}: {r.address} is already reserved on {used_by[r.address]}")
            used_by[r.address] = r.where
        reservations.append(kea_reservation(r, family, servers))
        summary.reservations += 1
        previous.discard(r.mac)
    for subnet in by_prefix.values():
        gone = dropped.get(id(subnet))
        if gone:
            subnet["reservations"] = [res for res in subnet["reservations"] if id(res) not in gone]
    summary.removed = len(previous)
    if family == 4 and plan and servers.of(4, "mta_dhcp") and tuple(kea_version) < CCC_BUILTIN:
        defs = server.setdefault("option-def", [])
        have = {(d.get("space", "dhcp4"), d.get("code")) for d in defs}
        defs.extend(d for d in CCC_DEFS if (d["space"], d["code"]) not in have)
    return config, summary


def _subnets(server: dict, family: int) -> list[dict]:
    out = list(server.get(SUBNETS[family], []))
    for network in server.get("shared-networks", []):
        out.extend(network.get(SUBNETS[family], []))
    return out


def _choose(r: Reservation, candidates: list, given: list, family: int):
    if r.subnet:
        net = ipaddress.ip_network(r.subnet)
        if r.address and ipaddress.ip_address(r.address) not in net:
            raise DhcpExportError(f"{r.where}: {r.address} is not in its subnet {net}")
        if net in candidates:
            return net
        raise DhcpExportError(f"{r.where}: subnet {net} is neither in the base config nor given with --subnet")
    if r.address:
        address = ipaddress.ip_address(r.address)
        holding = [n for n in candidates if address in n]
        if not holding:
            raise DhcpExportError(f"{r.where}: no subnet holds {address} (give --subnet PREFIX, "
                                  f"or a {SUBNET_COLUMN[family]} column)")
        return max(holding, key=lambda n: n.prefixlen)  # the most specific
    choices = given or candidates  # no address: the one --subnet, else the base's only subnet
    if len(choices) == 1:
        return choices[0]
    raise DhcpExportError(f"{r.where}: no address and no {SUBNET_COLUMN[family]} column, and "
                          f"{'no' if not choices else len(choices)} subnets to choose from "
                          f"(give one --subnet, or the row's {SUBNET_COLUMN[family]})")


def _index(reservations: list[dict]) -> tuple[dict, dict]:
    """An operator's reservations by modem (MAC, 12 hex digits, or DUID) and by address."""
    by_modem, by_address = {}, {}
    for res in reservations:
        try:
            by_modem[macaddr.normalize(res["hw-address"])] = res
        except (KeyError, ValueError):
            pass
        if res.get("duid"):
            by_modem[str(res["duid"]).lower()] = res
        for address in _res_addresses(res):
            by_address[address] = res
    return by_modem, by_address


def _res_addresses(res: dict) -> list[str]:
    out = [res["ip-address"]] if res.get("ip-address") else []
    out += list(res.get("ip-addresses") or [])
    try:
        return [str(ipaddress.ip_address(a)) for a in out]
    except ValueError:
        return out


__all__ = ["BootServers", "DhcpExportError", "ExportSummary", "Reservation", "kea_config", "kea_reservation",
           "new_config", "plan_reservations"]
