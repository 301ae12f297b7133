"""Push changes to many modems by SNMP: paced resets (the modem re-fetches its config file) and
firmware upgrades through DOCS-CABLE-DEVICE-MIB (RFC 4639).

Both run ``concurrency`` modems at a time, start at most ``rate`` modems per second (a node's
worth of modems rebooting at once is a ranging storm on the CMTS), and report one
``PushResult`` per modem as it finishes. A modem holds its slot while it is being watched
(``wait_online``, the upgrade's end), so ``concurrency`` is also "at most N modems down at once".

Upgrade: one SET of ``docsDevSwServerAddressType/Address`` (the TFTP server, IPv4 or IPv6),
``docsDevSwFilename`` and ``docsDevSwAdminStatus = upgradeFromMgt(1)``; then
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
from hfcprov.snmp import ops
from hfcprov.snmp.client import (
    Credentials,
    SnmpAuthError,
    SnmpClient,
    SnmpError,
    SnmpTimeout,
    for_each,
)

OK, SENT, NOT_BACK, FAILED, REFUSED, UNREACHABLE, ERROR = (
    "ok", "sent", "not-back", "failed", "refused", "unreachable", "error")
STATUSES = (OK, SENT, NOT_BACK, FAILED, REFUSED, UNREACHABLE, ERROR)

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


class Pacer:
    """At most ``rate`` starts per second (None: no cap), shared by every worker."""

    def __init__(self, rate: float | None):
        self.interval = 1.0 / rate if rate else 0.0
        self.next = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            if self.next > now:
                await asyncio.sleep(self.next - now)
                now = self.next
            self.next = now + self.interval


def _failure(result: PushResult, err: Exception) -> PushResult:
    if isinstance(err, SnmpTimeout):
        result.status = UNREACHABLE
    elif isinstance(err, SnmpAuthError) or any(w in str(err) for w in ("notWritable", "readOnly", "noAccess")):
        result.status = REFUSED
    else:
        result.status = ERROR
    result.detail = str(err)
    return result


async def reset_one(client, target: PushTarget, wait_online: bool = False, online_timeout: float = 300.0,
                    poll_interval: float = 2.0, down_grace: float = 10.0) -> PushResult:
    """Reset one modem; with ``wait_online`` watch it go down and come back. Never raises for
    anything the modem does."""
    result = PushResult(target.host, target.port, target.mac, "reset", ERROR, started=round(time.time(), 3))
    started = time.monotonic()
    try:
        await client.set(target.host, target.port, ops.oids.RESET_NOW, "Integer", 1)  # TruthValue true(1)
    except SnmpError as err:
        return _failure(result, err)
    if not wait_online:
        result.status = SENT
        return result
    result.went_down = False
    while True:
        online = await ops._online(client, target.host, target.port, None, None)
        elapsed = time.monotonic() - started
        if not online:
            result.went_down = True
        elif result.went_down or elapsed >= down_grace:
            result.status, result.seconds = OK, round(elapsed, 3)
            return result
        if elapsed > online_timeout:
            result.status, result.seconds = NOT_BACK, round(elapsed, 3)
            result.detail = f"not back online after {online_timeout:g} s"
            return result
        await asyncio.sleep(poll_interval)


def server_var_binds(server: str, filename: str) -> list[tuple[str, str, object]]:
    """The upgrade's SET: server address type and address, file name, then upgradeFromMgt."""
    try:
        addr = ipaddress.ip_address(server.strip("[]"))
    except ValueError:
        raise SnmpError(f"upgrade server {server!r}: not an IPv4 or IPv6 address") from None
    if not filename or len(filename) > 64:
        raise SnmpError(f"upgrade file name {filename!r}: 1 to 64 characters (docsDevSwFilename)")
    return [(SW_SERVER_TYPE, "Integer", 1 if addr.version == 4 else 2), (SW_SERVER, "OctetString", addr.packed),
            (SW_FILENAME, "OctetString", filename.encode()), (SW_ADMIN, "Integer", UPGRADE_FROM_MGT)]


def _oper_label(value) -> str | None:
    if value is None:
        return None
    label = mib.enum_label("docsDevSwOperStatus", value)
    return f"{label}({value})" if label else str(value)


async def upgrade_one(client, target: PushTarget, server: str, filename: str, upgrade_timeout: float = 600.0,
                      poll_interval: float = 5.0, settle: float = 10.0) -> PushResult:
    """Start a firmware upgrade on one modem and watch docsDevSwOperStatus to its end.

    A completeFromMgt(3) or failed(4) read before the modem was seen inProgress (or silent) and
    before ``settle`` seconds may be the previous upgrade's status: it is polled again."""
    result = PushResult(target.host, target.port, target.mac, "upgrade", ERROR, started=round(time.time(), 3))
    var_binds = server_var_binds(server, filename)
    started = time.monotonic()
    try:
        await client.set_many(target.host, target.port, var_binds)
    except SnmpError as err:
        return _failure(result, err)
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
