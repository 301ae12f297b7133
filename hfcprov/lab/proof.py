"""Proof that a real modem runs a point's file before the point is measured.

After the reset a modem may still answer for a moment with its old values; one that never
rebooted, one that is down, one that loaded another file or the file from another server all
answer SNMP too. A point is measured only once every one of these holds, seen over SNMP:

- it went down and came back: its sysUpTime restarted after the reset (less than the time since
  the reset), or the CMTS saw it re-register (its row left operational after the reset and is
  operational again);
- it is operational: docsIfCmStatusValue operational(12) (and, given a CMTS, the CMTS lists it
  operational at the address SNMP reaches it on);
- it loaded the published file: docsDevServerConfigFile is the published name, and
  docsDevServerConfigTftpAddress the expected TFTP server;
- then (``measured._confirm``) its active upstream flow has the point's rate and TargetBuffer.

Until ``online_timeout`` passes the modem is polled every ``poll_interval``; then the point fails
with what was seen last (and whether it ever answered: a modem that never did is
``PointUnreachable``, which the runner counts to stop a campaign whose modem is gone).
"""

from __future__ import annotations

import ipaddress
import time
from dataclasses import dataclass, field

from hfcprov.errors import HfcprovError

CM_OPERATIONAL = 12  # docsIfCmStatusValue operational(12)
UPTIME_SLACK = 1.0  # s: sysUpTime counts whole ticks and the reset's instant is known to a request's time


class PointFailed(HfcprovError):
    """This point could not be measured; the reason says which step and why."""


class PointUnreachable(PointFailed):
    """The modem never answered: the point is failed, and the runner counts it (``max_unreachable``)."""


@dataclass
class Expected:
    """What the modem must show after the reset."""

    mac: str
    host: str  # where SNMP reaches it
    file: str  # the published file name
    server: str | None  # the TFTP server it must have loaded it from (None: not checked)


@dataclass
class Seen:
    """One poll of the modem (and its CMTS), ``at`` seconds after the reset."""

    at: float
    answered: bool = False
    error: str | None = None
    uptime: float | None = None  # seconds
    status: int | None = None  # docsIfCmStatusValue
    file: str | None = None
    server: str | None = None
    cmts_error: str | None = None
    cmts_status: str | None = None  # label, e.g. "operational(8)"
    cmts_online: bool | None = None
    cmts_address: str | None = None
    sys_descr: str | None = None


@dataclass
class Watch:
    """The polls since the reset, and what they prove."""

    expected: Expected
    with_cmts: bool
    seen: list[Seen] = field(default_factory=list)
    cmts_down: bool = False  # the CMTS listed the modem not operational (or not at all) after the reset

    def add(self, s: Seen) -> None:
        self.seen.append(s)
        if self.with_cmts and s.cmts_error is None and not s.cmts_online:
            self.cmts_down = True

    @property
    def answered(self) -> bool:
        return any(s.answered for s in self.seen)

    def rebooted(self, s: Seen) -> bool:
        restarted = s.uptime is not None and s.uptime <= s.at + UPTIME_SLACK
        re_registered = self.with_cmts and self.cmts_down and bool(s.cmts_online)
        return restarted or re_registered

    def problems(self, s: Seen) -> list[str]:
        """Why ``s`` is not yet the modem back on the point's file (empty: proven)."""
        e = self.expected
        if not s.answered:
            return [f"no SNMP answer ({s.error})" if s.error else "no SNMP answer"]
        out = []
        if not self.rebooted(s):
            uptime = f"sysUpTime {s.uptime:.0f} s" if s.uptime is not None else "no sysUpTime"
            cmts = (" and the CMTS never listed it down" if self.with_cmts and not self.cmts_down else
                    " and the CMTS has not listed it operational again" if self.with_cmts else "")
            out.append(f"not rebooted: {uptime} at {s.at:.0f} s after the reset{cmts}")
        if s.status != CM_OPERATIONAL:
            out.append(f"docsIfCmStatusValue {_cm_status(s.status)}, not operational(12)")
        if s.file != e.file:
            out.append(f"docsDevServerConfigFile {s.file!r}, not the published {e.file!r}")
        if e.server and not _same_address(s.server, e.server):
            out.append(f"loaded from TFTP server {s.server or 'unknown'}, not {e.server}")
        if self.with_cmts:
            if s.cmts_error:
                out.append(f"CMTS: {s.cmts_error}")
            elif s.cmts_status is None:
                out.append(f"the CMTS does not list {e.mac}")
            elif not s.cmts_online:
                out.append(f"the CMTS lists it {s.cmts_status}")
            elif s.cmts_address and not _same_address(s.cmts_address, e.host):
                out.append(f"the CMTS lists it at {s.cmts_address}, not {e.host}")
        return out


def wait_until_proven(poll, expected: Expected, with_cmts: bool, timeout: float, interval: float,
                      started: float | None = None, clock=time.monotonic, sleep=time.sleep) -> Seen:
    """Poll (``poll(at) -> Seen``) until the modem is proven back on the file; the proving poll, or
    ``PointFailed``/``PointUnreachable`` with what was seen. ``started``: the reset's time on ``clock``."""
    started = clock() if started is None else started
    watch = Watch(expected, with_cmts)
    while True:
        s = poll(clock() - started)
        s.at = max(s.at, clock() - started)  # when its answer was in: sysUpTime is compared with that
        watch.add(s)
        if not watch.problems(s):
            return s
        if clock() - started >= timeout:
            break
        sleep(max(0.0, min(interval, timeout - (clock() - started))))
    last = watch.seen[-1]
    where = f"modem {expected.mac} ({expected.host})"
    if not watch.answered:
        raise PointUnreachable(f"{where}: no SNMP answer in the {timeout:g} s after the reset"
                               + (f" (last: {last.error})" if last.error else ""))
    answered = next(s for s in reversed(watch.seen) if s.answered)
    seen = "; ".join(watch.problems(answered))
    tail = "" if last is answered else f"; silent since {answered.at:.0f} s"
    raise PointFailed(f"{where}: not proven back on the new file within {timeout:g} s after the reset: "
                      f"{seen} (seen at {answered.at:.0f} s{tail})")


def _same_address(a: str | None, b: str | None) -> bool:
    try:
        return a is not None and b is not None and ipaddress.ip_address(a) == ipaddress.ip_address(b)
    except ValueError:
        return a == b


def _cm_status(value) -> str:
    if value is None:
        return "absent"
    from hfcprov import mib

    label = mib.enum_label("docsIfCmStatusValue", value)
    return f"{label}({value})" if label else str(value)


# --- the SNMP reads --------------------------------------------------------------------------------------------


async def read_modem(client, host: str, port: int) -> dict:
    """What the modem says about its boot: sysUpTime (s), docsIfCmStatusValue, docsDevServerConfigFile,
    the TFTP server (docsDevServerConfigTftpAddress), sysDescr."""
    from hfcprov.snmp import oids

    scalars, _ = await client.fetch(host, port, [oids.SYS_DESCR, oids.SYS_UPTIME, oids.CONFIG_FILE, oids.CONFIG_TFTP],
                                    [], first_rows=[oids.CM_STATUS_VALUE])
    uptime, file, server = scalars.get(oids.SYS_UPTIME), scalars.get(oids.CONFIG_FILE), scalars.get(oids.CONFIG_TFTP)
    descr = scalars.get(oids.SYS_DESCR)
    return {"uptime": None if uptime is None else int(uptime) / 100.0,
            "status": scalars.get(oids.CM_STATUS_VALUE),
            "file": file.decode("utf-8", "replace") if isinstance(file, bytes) else file,
            "server": _inet_address(server),
            "sys_descr": descr.decode("utf-8", "replace") if isinstance(descr, bytes) else descr}


def _inet_address(value) -> str | None:
    if isinstance(value, bytes) and len(value) in (4, 16):
        return str(ipaddress.ip_address(value))
    return value if isinstance(value, str) and value else None


__all__ = ["Expected", "PointFailed", "PointUnreachable", "Seen", "Watch", "read_modem", "wait_until_proven"]
