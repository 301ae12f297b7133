"""Push changes to many modems by SNMP: paced resets (the modem re-fetches its config file) and
firmware upgrades through DOCS-CABLE-DEVICE-MIB (RFC 4639).

Both run ``concurrency`` modems at a time, start at most ``rate`` modems per second (a node's
worth of modems rebooting at once is a ranging storm on the CMTS), and report one
``PushResult`` per modem as it finishes. A modem holds its slot while it is being watched
(``wait_online``, the upgrade's end), so ``concurrency`` is also "at most N modems down at once".

Upgrade: one SET of ``docsDevSwServerAddressType/Address`` (the TFTP server, IPv4 or IPv6),
``docsDevSwFilename`` and ``docsDevSwAdminStatus = upgradeFromMgt(1)``; a modem that refuses the
address-type objects (DOCSIS 1.1/2.0, RFC 2669) gets the same SET with ``docsDevSwServer``
(IPv4 only) instead, as does every modem with ``legacy``; then
``docsDevSwOperStatus`` is polled: inProgress(1) until completeFromMgt(3) or failed(4). A modem
that stops answering meanwhile is rebooting into its new image, not failing.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass

from hfcprov import mib
from hfcprov.snmp import oids, ops
from hfcprov.snmp.base import SnmpAuthError, SnmpError, SnmpTimeout
from hfcprov.snmp.client import Credentials, SnmpClient
from hfcprov.snmp.pacing import Pacer, for_each

OK, SENT, NOT_BACK, FAILED, REFUSED, UNREACHABLE, ERROR = (
    "ok", "sent", "not-back", "failed", "refused", "unreachable", "error")
STATUSES = (OK, SENT, NOT_BACK, FAILED, REFUSED, UNREACHABLE, ERROR)

SW_SERVER_LEGACY = mib.resolve("docsDevSwServer.0")  # IpAddress: what DOCSIS 1.1/2.0 modems (RFC 2669) have
SW_SERVER_TYPE = mib.resolve("docsDevSwServerAddressType.0")
SW_SERVER = mib.resolve("docsDevSwServerAddress.0")
SW_FILENAME = mib.resolve("docsDevSwFilename.0")
SW_ADMIN = mib.resolve("docsDevSwAdminStatus.0")
SW_OPER = mib.resolve("docsDevSwOperStatus.0")
SW_VERSION = mib.resolve("docsDevSwCurrentVers.0")
UPGRADE_FROM_MGT = 1
IN_PROGRESS, COMPLETE_FROM_MGT, SW_FAILED = 1, 3, 4


@dataclass(frozen=True)
class PushTarget:
    host: str
    port: int = 161
    mac: str | None = None


@dataclass
class PushResult:
    host: str
    port: int
    mac: str | None
    action: str  # "reset" or "upgrade"
    status: str  # one of STATUSES
    seconds: float = 0.0  # from the SET to the end of what was watched
    started: float = 0.0  # Unix time the SET was sent (the pacing shows in these)
    detail: str = ""
    went_down: bool | None = None
    oper_status: str | None = None  # docsDevSwOperStatus label at the end (upgrade)
    version: str | None = None  # docsDevSwCurrentVers at the end (upgrade)
    legacy: bool | None = None  # the upgrade named its server in docsDevSwServer (RFC 2669 modems)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class PushSummary:
    action: str
    counts: Counter
    seconds: float
    total: int

    @property
    def all_ok(self) -> bool:
        return self.counts.get(OK, 0) + self.counts.get(SENT, 0) == self.total

    def line(self) -> str:
        parts = ", ".join(f"{self.counts[s]} {s}" for s in STATUSES if self.counts.get(s))
        rate = self.total / self.seconds if self.seconds > 0 else 0.0
        return f"{self.action} {self.total} modems in {self.seconds:.1f} s ({rate:.1f}/s): {parts or 'none'}"


def _failure(result: PushResult, err: Exception) -> PushResult:
    if isinstance(err, SnmpTimeout):
        result.status = UNREACHABLE
    elif isinstance(err, SnmpAuthError) or any(w in str(err) for w in ("notWritable", "readOnly", "noAccess")):
        result.status = REFUSED
    else:
        result.status = ERROR
    result.detail = str(err)
    return result


class CmtsWatch:
    """Whether modems are online as their CMTS sees them, for many modems at once: the CMTS's modem
    tables (``ops.read_cmts_modems``) are read at most once per ``interval`` whoever asks, so a
    node's worth of rebooting modems (whose own SNMP is silent) costs one walk per poll."""

    def __init__(self, client, host: str, port: int, interval: float):
        self.client, self.host, self.port, self.interval = client, host, port, interval
        self.read_at = -1e9
        self.by_address: dict[str, bool] = {}
        self.lock = asyncio.Lock()
        self.problem: str | None = None

    async def online(self, address: str) -> bool:
        async with self.lock:
            if time.monotonic() - self.read_at >= self.interval:
                try:
                    modems = await ops.read_cmts_modems(self.client, self.host, self.port)
                    self.by_address = {a: m.online for m in modems for a in (m.ip, m.ipv6) if a}
                    self.problem = None
                except SnmpError as err:  # a CMTS that does not answer: nobody is seen online
                    self.by_address, self.problem = {}, str(err)
                self.read_at = time.monotonic()
        return self.by_address.get(address.strip("[]"), False)


async def reset_one(client, target: PushTarget, wait_online: bool = False, online_timeout: float = 300.0,
                    poll_interval: float = 2.0, down_grace: float = 10.0, watch: CmtsWatch | None = None) -> PushResult:
    """Reset one modem; with ``wait_online`` watch it go down and come back (polling the modem, or
    its CMTS through ``watch``). Never raises for anything the modem does."""
    result = PushResult(target.host, target.port, target.mac, "reset", ERROR, started=round(time.time(), 3))
    started = time.monotonic()
    try:
        # TruthValue true(1), sent once: a modem that answers late has reset already (a resend resets it again)
        await client.set(target.host, target.port, oids.RESET_NOW, "Integer", 1, once=True)
    except SnmpError as err:
        return _failure(result, err)
    if not wait_online:
        result.status = SENT
        return result
    result.went_down = False
    while True:
        if watch is not None:
            online = await watch.online(target.host)
        else:
            online = await ops.is_online(client, target.host, target.port)
        elapsed = time.monotonic() - started
        if not online:
            result.went_down = True
        elif result.went_down or elapsed >= down_grace:
            result.status, result.seconds = OK, round(elapsed, 3)
            return result
        if elapsed > online_timeout:
            result.status, result.seconds = NOT_BACK, round(elapsed, 3)
            where = f" (CMTS {watch.host}: {watch.problem})" if watch is not None and watch.problem else \
                f" (polled CMTS {watch.host})" if watch is not None else ""
            result.detail = f"not back online after {online_timeout:g} s{where}"
            return result
        await asyncio.sleep(poll_interval)


def resetter(timing: dict, cmts: tuple[str, int] | None = None):
    """``one(client, target)`` for ``push_all``: ``reset_one`` with ``timing``; with ``cmts`` every
    modem is watched from that CMTS through one shared ``CmtsWatch`` (one walk per poll interval)."""
    watches: dict[int, CmtsWatch] = {}

    async def one(client, target):
        watch = None
        if cmts is not None and timing.get("wait_online"):
            watch = watches.get(id(client))
            if watch is None:
                watch = watches[id(client)] = CmtsWatch(client, cmts[0], cmts[1], timing.get("poll_interval", 2.0))
        return await reset_one(client, target, watch=watch, **timing)

    return one


def server_var_binds(server: str, filename: str, legacy: bool = False) -> list[tuple[str, str, object]]:
    """The upgrade's SET: the server (address type and address; with ``legacy`` docsDevSwServer,
    IPv4 only), the file name, then upgradeFromMgt."""
    try:
        addr = ipaddress.ip_address(server.strip("[]"))
    except ValueError:
        raise SnmpError(f"upgrade server {server!r}: not an IPv4 or IPv6 address") from None
    if not filename or len(filename) > 64:
        raise SnmpError(f"upgrade file name {filename!r}: 1 to 64 characters (docsDevSwFilename)")
    if legacy:
        if addr.version != 4:
            raise SnmpError(f"upgrade server {server}: docsDevSwServer (--legacy, RFC 2669) takes an IPv4 address only")
        where = [(SW_SERVER_LEGACY, "IpAddress", str(addr))]
    else:
        where = [(SW_SERVER_TYPE, "Integer", 1 if addr.version == 4 else 2), (SW_SERVER, "OctetString", addr.packed)]
    return [*where, (SW_FILENAME, "OctetString", filename.encode()), (SW_ADMIN, "Integer", UPGRADE_FROM_MGT)]


# what an agent answers a SET of objects it does not implement or will not write
_NOT_IMPLEMENTED = ("noSuchName", "notWritable", "noCreation", "noAccess", "readOnly", "wrongType",
                    "inconsistentName", "badValue")


def _refuses_the_address_type(err: SnmpError) -> bool:
    text = str(err)
    return any(word in text for word in _NOT_IMPLEMENTED) and not isinstance(err, SnmpTimeout) and (
        SW_SERVER_TYPE in text or SW_SERVER in text or " at " not in text)


def _oper_label(value) -> str | None:
    if value is None:
        return None
    label = mib.enum_label("docsDevSwOperStatus", value)
    return f"{label}({value})" if label else str(value)


async def upgrade_one(client, target: PushTarget, server: str, filename: str, upgrade_timeout: float = 600.0,
                      poll_interval: float = 5.0, settle: float = 10.0, legacy: bool = False) -> PushResult:
    """Start a firmware upgrade on one modem and watch docsDevSwOperStatus to its end.

    A modem that refuses docsDevSwServerAddressType/Address gets docsDevSwServer instead (an IPv4
    server; ``legacy`` asks for it at once). A completeFromMgt(3) or failed(4) read before the
    modem was seen inProgress (or silent) and before ``settle`` seconds may be the previous
    upgrade's status: it is polled again."""
    result = PushResult(target.host, target.port, target.mac, "upgrade", ERROR, started=round(time.time(), 3))
    started = time.monotonic()
    try:
        await client.set_many(target.host, target.port, server_var_binds(server, filename, legacy), once=True)
    except SnmpError as err:
        if legacy or not _refuses_the_address_type(err) or ipaddress.ip_address(server.strip("[]")).version != 4:
            return _failure(result, err)
        try:  # a DOCSIS 1.1/2.0 modem: docsDevSwServer
            await client.set_many(target.host, target.port, server_var_binds(server, filename, legacy=True),
                                  once=True)
        except SnmpError as again:
            return _failure(result, again)
        result.legacy = True
    seen_progress = False
    result.went_down = False
    while True:
        elapsed = time.monotonic() - started
        try:
            values = await client.get(target.host, target.port, [SW_OPER, SW_VERSION])
            oper = values.get(SW_OPER)
        except SnmpTimeout:
            result.went_down = seen_progress = True  # rebooting into the image, or the image failed
            oper = None
        except SnmpError as err:
            return _failure(result, err)
        if oper is not None:
            result.oper_status = _oper_label(oper)
            version = values.get(SW_VERSION)
            result.version = version.decode(errors="replace") if isinstance(version, bytes) else version
        if oper == IN_PROGRESS:
            seen_progress = True
        elif oper in (COMPLETE_FROM_MGT, SW_FAILED) and (seen_progress or elapsed >= settle):
            result.seconds = round(elapsed, 3)
            result.status = OK if oper == COMPLETE_FROM_MGT else FAILED
            if oper == COMPLETE_FROM_MGT:
                result.detail = f"running {result.version}" if result.version else ""
                if result.legacy:
                    result.detail += " (server named in docsDevSwServer: an RFC 2669 modem)"
            else:
                result.detail = f"docsDevSwOperStatus failed(4) for {filename} from {server}"
            return result
        if elapsed > upgrade_timeout:
            result.status, result.seconds = NOT_BACK, round(elapsed, 3)
            result.detail = f"upgrade not finished after {upgrade_timeout:g} s (last {result.oper_status or 'no answer'})"
            return result
        await asyncio.sleep(poll_interval)


async def push_all(action: str, targets: list[PushTarget], credentials: Credentials,
                   one: Callable[..., object], on_result: Callable[[PushResult], None] | None = None,
                   concurrency: int = 8, rate: float | None = None, timeout: float = 2.0,
                   retries: int = 1) -> PushSummary:
    """Run ``one(client, target)`` (a coroutine giving a PushResult) over every target, paced."""
    started = time.monotonic()
    client = SnmpClient(credentials, timeout=timeout, retries=retries)

    async def guarded(target):
        try:
            return await one(client, target)
        except SnmpError as err:
            return _failure(PushResult(target.host, target.port, target.mac, action, ERROR), err)

    try:
        counts = await for_each(targets, concurrency, guarded, on_result, before=Pacer(rate).wait)
    finally:
        client.close()
    return PushSummary(action, counts, time.monotonic() - started, len(targets))


def targets_from_inventory(rows: list[dict], default_port: int = 161) -> list[PushTarget]:
    """Inventory rows (mac, ip or host, optional port) as push targets."""
    from hfcprov.snmp.audit import targets_from_inventory as audit_targets

    return [PushTarget(t.host, t.port, t.mac) for t in audit_targets(rows, default_port=default_port)]
