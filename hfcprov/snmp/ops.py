"""Reset a modem (docsDevResetNow) and list the modems a CMTS knows.

``reset`` sets docsDevResetNow.0 = true(1); with ``wait_online`` it then polls
until the modem is back: docsIfCmStatusValue operational(12) on the modem, or,
given a CMTS, docsIfCmtsCmStatusValue operational(8) of the row whose IP is the
modem's. A modem is only "back" after it was seen down or after ``down_grace``
seconds, so a reply sent before the reboot does not count.

``cmts_modems`` walks docsIfCmtsCmStatusTable (MAC, IP, status) and, where the
CMTS has it, the DOCS-IF3 registration table (MAC, IPv4, IPv6, status), merged by
MAC; a modem listed in the registration table only is kept.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from hfcprov import macaddr, mib
from hfcprov.snmp import oids
from hfcprov.snmp.client import Credentials, SnmpClient, SnmpError, SnmpTimeout


class ResetTimeout(SnmpError):
    """The modem did not come back online in time."""


@dataclass
class ResetResult:
    host: str
    seconds_to_online: float | None  # None without --wait-online
    went_down: bool


async def reset(host: str, port: int, credentials: Credentials, wait_online: bool = False,
                online_timeout: float = 300.0, poll_interval: float = 2.0, down_grace: float = 10.0,
                cmts: tuple[str, int] | None = None, cmts_credentials: Credentials | None = None,
                timeout: float = 2.0, retries: int = 1) -> ResetResult:
    client = SnmpClient(credentials, timeout=timeout, retries=retries)
    cmts_client = SnmpClient(cmts_credentials or credentials, timeout=timeout, retries=retries) if cmts else None
    try:
        await client.set(host, port, oids.RESET_NOW, "Integer", 1)  # TruthValue true(1)
        started = time.monotonic()
        if not wait_online:
            return ResetResult(host, None, False)
        went_down = False
        while True:
            online = await _online(client, host, port, cmts_client, cmts)
            elapsed = time.monotonic() - started
            if not online:
                went_down = True
            elif went_down or elapsed >= down_grace:
                return ResetResult(host, elapsed, went_down)
            if elapsed > online_timeout:
                where = f"CMTS {cmts[0]}" if cmts else "the modem"
                raise ResetTimeout(f"{host}: not back online after {online_timeout:g} s (polled {where})")
            await asyncio.sleep(poll_interval)
    finally:
        client.close()
        if cmts_client:
            cmts_client.close()


async def _online(client: SnmpClient, host: str, port: int, cmts_client, cmts) -> bool:
    try:
        if cmts_client is not None:
            _, tables = await cmts_client.fetch(cmts[0], cmts[1], [], [oids.CMTS_CM_IP, oids.CMTS_CM_STATUS])
            for index, ip in tables[oids.CMTS_CM_IP].items():
                if ip == host:
                    return tables[oids.CMTS_CM_STATUS].get(index) == oids.CMTS_CM_OPERATIONAL
            return False
        _, tables = await client.fetch(host, port, [], [oids.CM_STATUS_VALUE])
        return oids.CM_OPERATIONAL in tables[oids.CM_STATUS_VALUE].values()
    except SnmpTimeout:
        return False  # rebooting modems do not answer; a dead CMTS is caught by the overall timeout


@dataclass
class CmtsModem:
    mac: str  # 12 lowercase hex digits, as in inventories
    ip: str | None
    status: str  # docsIfCmtsCmStatusValue label, e.g. "operational(8)"
    reg_status: str | None = None  # docsIf3CmtsCmRegStatusValue label, where present
    ipv6: str | None = None  # docsIf3CmtsCmRegStatusIPv6Addr, where the CMTS has one

    @property
    def online(self) -> bool:
        """Operational in docsIfCmtsCmStatusTable or in the DOCS-IF3 registration table (a DOCSIS 3.1
        CMTS may list a modem in the latter only)."""
        want = f"({oids.CMTS_CM_OPERATIONAL})"  # operational(8) in both tables
        return self.status.endswith(want) or (self.reg_status or "").endswith(want)

    @property
    def address(self) -> str | None:
        """Where to reach the modem: its IPv4 address, else its IPv6 one."""
        return self.ip or self.ipv6


def _label(name: str, value) -> str:
    if value is None:
        return "unknown"
    label = mib.enum_label(name, value)
    return f"{label}({value})" if label else str(value)


def _ipv6(value) -> str | None:
    if isinstance(value, bytes) and len(value) == 16 and any(value):
        import ipaddress

        return str(ipaddress.IPv6Address(value))
    return None


def _ipv4(value) -> str | None:
    if isinstance(value, bytes) and len(value) == 4:
        return ".".join(str(b) for b in value)
    if isinstance(value, str):
        return value
    return None


async def cmts_modems(host: str, port: int, credentials: Credentials, timeout: float = 2.0,
                      retries: int = 1) -> list[CmtsModem]:
    client = SnmpClient(credentials, timeout=timeout, retries=retries)
    try:
        return await read_cmts_modems(client, host, port)
    finally:
        client.close()


async def read_cmts_modems(client, host: str, port: int) -> list[CmtsModem]:
    """The modems a CMTS lists (docsIfCmtsCmStatusTable and the DOCS-IF3 registration table, by MAC)."""
    _, t = await client.fetch(host, port, [], [oids.CMTS_CM_MAC, oids.CMTS_CM_IP, oids.CMTS_CM_STATUS,
                                               oids.REG_MAC, oids.REG_IPV4, oids.REG_IPV6, oids.REG_STATUS],
                               max_repetitions=25)
    modems: dict[str, CmtsModem] = {}
    for index, mac in t[oids.CMTS_CM_MAC].items():
        if not isinstance(mac, bytes) or len(mac) != 6:
            continue
        m = macaddr.normalize(mac)
        ip = _ipv4(t[oids.CMTS_CM_IP].get(index))
        modems[m] = CmtsModem(m, ip if ip != "0.0.0.0" else None,
                              _label("docsIfCmtsCmStatusValue", t[oids.CMTS_CM_STATUS].get(index)))
    for index, mac in t[oids.REG_MAC].items():
        if not isinstance(mac, bytes) or len(mac) != 6:
            continue
        m = macaddr.normalize(mac)
        reg = _label("docsIf3CmtsCmRegStatusValue", t[oids.REG_STATUS].get(index))
        ip = _ipv4(t[oids.REG_IPV4].get(index))
        ip = ip if ip != "0.0.0.0" else None
        ipv6 = _ipv6(t[oids.REG_IPV6].get(index))
        if m in modems:
            modems[m].reg_status = reg
            modems[m].ip = modems[m].ip or ip
            modems[m].ipv6 = ipv6
        else:
            modems[m] = CmtsModem(m, ip, "unknown", reg, ipv6)
    return sorted(modems.values(), key=lambda x: x.mac)
