"""What a campaign would do, without doing it: ``hfcprov campaign run --dry-run``.

Lists the target and each role's place, the secrets it will read (set or not, never their
values), the checks the pre-flight runs before the first point, then every point: the file
it publishes (name, where, the upstream flow rendered from the template), the reset, the
proof and the probe; then the count of resets and a time estimate. Nothing is sent, written
or started; the template is rendered (a template error shows here, not at point 1).
"""

from __future__ import annotations

import os
from pathlib import Path

from hfcprov.errors import HfcprovError
from hfcprov.lab.spec import FROM_MODEM, Campaign, SnmpAccess
from hfcprov.units import format_bytes, format_duration, format_rate

PROBE_LINGER = 1.0  # s the probe waits for late answers (probe.latency.LatencyProbe.stop)
ADAPTIVE_WARMUP = 5.0  # s: the most an upstream probe lengthens its warm-up (probe.run.ProbeSpec)


def _secret(value: str | None, what: str) -> str | None:
    if value is None or not value.startswith("env:"):
        return None if value is None else f"{what} (in the file)"
    name = value[4:]
    return f"{what} env:{name} ({'set' if name in os.environ else 'NOT SET: the run stops at its pre-flight'})"


def _snmp_line(a: SnmpAccess, host: str) -> str:
    place = ", ".join(filter(None, [a.namespace and f"namespace {a.namespace}", a.source and f"from {a.source}"]))
    auth = (f"SNMPv3 user {a.user} ({a.auth_protocol}, {a.priv_protocol if a.priv_key or a.key_file else 'no privacy'})"
            if a.version == "3" else "SNMPv2c")
    return f"{auth} to {host}:{a.port}" + (f" ({place})" if place else "")


def probe_seconds(campaign: Campaign) -> tuple[float, float]:
    """The probe's time per point: (least, most) seconds."""
    t = campaign.traffic
    base = min(2.0, t.warmup or 2.0) + t.warmup + t.duration + PROBE_LINGER
    return base, base + ADAPTIVE_WARMUP


def plan_lines(campaign: Campaign) -> list[str]:
    t = campaign.target
    points = campaign.points()
    runs = f"{len(points)} points" + (f" ({len(points) // campaign.repetitions} x {campaign.repetitions} repetitions)"
                                      if campaign.repetitions > 1 else "")
    lines = [f"campaign {campaign.name} ({campaign.source}): {runs} on {t.kind}; dry run, nothing is done"]
    if t.kind == "sim":
        lines.append("each point is simulated (hfcprov.sim); no network, no files")
        lines += [f"  #{p.index} {p.key}" for p in points]
        return lines
    secrets = [_secret(t.secret, "target.secret")]
    if t.kind == "modem":
        modem = t.modems[0]
        host = modem.get("ip") or "(its address in the CMTS's table)"
        lines.append("roles:")
        lines.append(f"  modem  {modem['mac']} at {host}")
        lines.append(f"  SNMP   {_snmp_line(t.snmp, host)}")
        if t.cmts:
            lines.append(f"  CMTS   {_snmp_line(t.cmts.snmp, t.cmts.address)}")
        p = t.probe
        place = ", ".join(filter(None, [p.namespace and f"namespace {p.namespace}", p.source and f"from {p.source}",
                                        p.interface and f"by {p.interface}"]))
        lines.append(f"  probe  to {p.server}:{p.port}" + (f" ({place})" if place else ""))
        f = t.tftp
        where = f"through `{f.publish}`" if f.publish else f"into {f.root}"
        if f.host:
            where += f", served by hfcprov on {f.host}:{f.port}" + (f" in namespace {f.namespace}" if f.namespace else "")
        name = _name(campaign, modem)
        server = f.server or f.host
        lines.append(f"  TFTP   {where} as {name}; the modem must load it from "
                     f"{server or '(any server: target.tftp.server unset, not checked)'}")
        for what, a in (("target.snmp", t.snmp), ("target.cmts.snmp", t.cmts.snmp if t.cmts else None)):
            if a is not None:
                secrets += [_secret(getattr(a, k), f"{what}.{k}") for k in ("community", "write_community",
                                                                             "auth_key", "priv_key")]
                if a.key_file:
                    secrets.append(f"{what}.key_file {a.key_file} ({'present' if Path(a.key_file).is_file() else 'MISSING'})")
        lines.append("secrets: " + (", ".join(s for s in secrets if s) or "none"))
        checks = [f"the TFTP root {f.root} is a writable folder" if not f.publish else
                  f"the publish command {f.publish.split()[0]} exists",
                  f"the CMTS {t.cmts.address} lists {modem['mac']}" + ("" if modem.get("ip") else " (and gives its address)")
                  if t.cmts else None,
                  "the modem answers SNMP" + (" (and names the file it loaded)" if f.filename == FROM_MODEM else ""),
                  f"the probe responder {p.server}:{p.port} echoes through the modem"]
        lines.append("pre-flight, before the first point: " + "; ".join(c for c in checks if c))
        proof = ("sysUpTime restarted" + (" or the CMTS saw it re-register" if t.cmts else "")
                 + ", docsIfCmStatusValue operational(12), docsDevServerConfigFile " + name
                 + (f" from {server}" if server else "") + ", the point's upstream rate and TargetBuffer active")
        lines.append(f"each point: publish, reset (docsDevResetNow), prove within {format_duration(t.online_timeout)} "
                     f"(polled every {format_duration(t.poll_interval)}): {proof}; then probe")
        if t.max_unreachable:
            lines.append(f"stops after {t.max_unreachable} points in a row whose modem never answers")
    else:
        name = "campaign.cm"
        lines.append("roles: the emulated modem in namespaces built for the campaign (one plant per RTT, loss and "
                     "DOCSIS version), its TFTP server, SNMP from its CMTS side, the probe from its CPE host")
        lines.append("secrets: " + (", ".join(s for s in secrets if s) or "none"))
    lines.append("points:")
    probe_lo, probe_hi = probe_seconds(campaign)
    for point in points:
        lines.append(f"  #{point.index} {point.key}: {_file_line(campaign, point, name)}")
    resets = len(points)
    lines.append(f"resets: {resets} (one per point)")
    boot = t.online_timeout
    lo, hi = len(points) * probe_lo, len(points) * (probe_hi + boot)
    sim = "; plus a simulation per point" if campaign.simulate else ""
    lines.append(f"time: probe {probe_lo:.0f}-{probe_hi:.0f} s per point + a reboot of up to {boot:.0f} s: "
                 f"between {_span(lo)} and {_span(hi)} for {len(points)} points{sim}")
    return lines


def _span(seconds: float) -> str:
    """A long time as a person reads it: ``1 h 28 min``, ``7 min 36 s``."""
    s = round(seconds)
    h, m, sec = s // 3600, s % 3600 // 60, s % 60
    if h:
        return f"{h} h {m} min"
    return f"{m} min {sec} s" if m else f"{sec} s"


def _name(campaign: Campaign, modem: dict) -> str:
    if campaign.target.tftp.filename == FROM_MODEM:
        return "(the name the modem reports, read at the pre-flight)"
    from hfcprov.lab.measured import _file_name

    try:
        return _file_name(campaign, modem)
    except HfcprovError as err:
        return f"(bad target.tftp.filename: {err})"


def _file_line(campaign: Campaign, point, name: str) -> str:
    from hfcprov.lab import backends

    try:
        variables = point.template_vars()
        if campaign.target.modems:
            variables["mac"] = campaign.target.modems[0]["mac"]
        flow = backends.upstream_flow(campaign, point, backends.config_tree(campaign, point, variables))
    except HfcprovError as err:
        return f"{name}: cannot be built: {err}"
    buffer = format_bytes(flow.target_buffer) if flow.target_buffer is not None else "no TargetBuffer"
    return f"{name} (upstream {format_rate(flow.max_sustained_rate)}, TargetBuffer {buffer})"


__all__ = ["plan_lines", "probe_seconds"]
