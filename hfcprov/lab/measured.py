"""Measured backends: the emulated modem (``emu``) and real modems (``modem``).

Both run a point the same way, as a provisioning engineer would by hand:

1. build the point's config from the tier template (``build.render_tree``) and
   encode it (``config.encode``, CMTS MIC with the campaign's secret);
2. publish it under the modem's file name on the TFTP server;
3. reset the modem over SNMP (docsDevResetNow.0 = true);
4. wait until it is proven back on the new config (``hfcprov.lab.proof``: it rebooted, is
   operational, loaded the published name from the expected server, and its active upstream
   flow has the point's rate and TargetBuffer), within ``target.online_timeout`` or the point
   fails with what was seen;
5. run the probe (idle RTT, RTT under TCP load, goodput) and return its result.

A real modem's campaign checks everything it needs before the first point (``preflight``:
secrets, the TFTP root or publish command, the modem, the CMTS and the probe responder, each
from its own place: ``hfcprov.lab.roles``).

The emulated modem lives in network namespaces built for the campaign (one lab
per added RTT and loss, since those are plant impairments) and removed after it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

from hfcprov.errors import HfcprovError
from hfcprov.lab import backends
from hfcprov.lab.proof import PointFailed, PointUnreachable  # noqa: F401 (PointFailed: this module's name too)
from hfcprov.lab.roles import RoleError
from hfcprov.lab.roles import secret_value as _secret_value
from hfcprov.lab.spec import FROM_MODEM, Campaign, CampaignError, Point
from hfcprov.probe import DEFAULT_PORT
from hfcprov.results import RunResult

CONFIG_FILE = "campaign.cm"
PROBE_PORT = DEFAULT_PORT  # the responder's (hfcprov probe responder) default


class PreflightFailed(CampaignError):
    """A modem campaign cannot start: every check that failed, before the first point."""


def secret_value(value: str | None, what: str) -> str | None:
    """A secret as written in the campaign, or ``env:NAME`` to keep it out of the file (and the store)."""
    try:
        return _secret_value(value, what)
    except RoleError as err:
        raise PointFailed(str(err)) from None


def build_config(campaign: Campaign, point: Point, mac: str | None = None) -> tuple[bytes, object]:
    """The point's config file bytes and its upstream ``ServiceFlow`` (checked against the grid)."""
    from hfcprov.config import encode

    variables = point.template_vars()
    if mac:
        variables["mac"] = mac
    tree = backends.config_tree(campaign, point, variables)
    flow = backends.upstream_flow(campaign, point, tree)
    if point.aqm in ("docsis-pie", "lld") and not flow.aqm.requested:
        # a measured modem runs what its file says: a point labelled with an AQM must ask for it
        raise PointFailed(f"the grid says aqm={point.aqm} but the rendered upstream flow {flow.path or ''} does "
                          "not enable AQM (24.40); render AQMEncodings from {{ aqm }} in the template")
    if point.aqm == "lld":
        try:
            backends.point_queue(campaign, point, tree)  # MULPI's dual queue: a Low Latency aggregate (TLV 70)
        except HfcprovError as err:
            raise PointFailed(str(err)) from None
    secret = secret_value(campaign.target.secret, "target.secret")
    secret = secret.encode() if secret else None
    return encode(tree, secret=secret), flow


async def _confirm(client, host: str, port: int, flow) -> dict:
    """What the modem says it applied upstream; raises PointFailed when it is not the point's flow."""
    from hfcprov.snmp import oids

    scalars, tables = await client.fetch(host, port, [oids.SYS_DESCR, oids.SYS_UPTIME],
                                         [oids.SF_DIRECTION, oids.SF_BUFFER_SIZE,
                                          oids.PARAM_SET["max_sustained_rate"], oids.PARAM_SET["buffer_target"]])
    ups = [idx for idx, d in tables[oids.SF_DIRECTION].items() if d == 2]  # upstream(2); index ifIndex.sfid
    rates = tables[oids.PARAM_SET["max_sustained_rate"]]
    targets = tables[oids.PARAM_SET["buffer_target"]]
    for idx in ups:
        if_index, sfid = idx.split(".", 1)
        row = f"{if_index}.{oids.PARAM_SET_ACTIVE}.{sfid}"
        rate, target = rates.get(row), targets.get(row)
        if rate is not None and int(rate) == int(flow.max_sustained_rate) and target is not None \
                and int(target) == int(flow.target_buffer):
            # the buffer it really gave the flow may differ from the target (DOCSIS lets it choose
            # within min..max); recorded, not failed, as a real modem is measured with what it chose
            size = tables[oids.SF_BUFFER_SIZE].get(idx)
            descr = scalars.get(oids.SYS_DESCR)
            if isinstance(descr, bytes):
                descr = descr.decode("utf-8", "replace")
            return {"sys_descr": str(descr), "applied_rate": int(rate),
                    "applied_target_buffer": int(target), "applied_buffer_size": None if size is None else int(size)}
    seen = [(rates.get(f"{i.split('.', 1)[0]}.{oids.PARAM_SET_ACTIVE}.{i.split('.', 1)[1]}"),
             targets.get(f"{i.split('.', 1)[0]}.{oids.PARAM_SET_ACTIVE}.{i.split('.', 1)[1]}")) for i in ups]
    raise PointFailed(f"{host}: the modem's active upstream flows (rate, TargetBuffer) are {seen}, "
                      f"not the point's ({int(flow.max_sustained_rate)}, {flow.target_buffer})")


class EmuBackend:
    """The emulated modem (root): namespaces, tc queues, TFTP, SNMP, probe; all real."""

    def __init__(self, campaign: Campaign):
        from hfcprov.emu.topology import require_root

        require_root()
        self.campaign = campaign
        self.labs: dict[tuple, object] = {}  # (rtt, loss) -> booted Lab
        self.boots: dict[str, int] = {}
        self.tftp_root = Path(tempfile.mkdtemp(prefix="hfcprov-lab-tftp-"))
        self.last_flow = None
        self.sys_descr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self) -> None:
        for lab in self.labs.values():
            with contextlib.suppress(Exception):
                lab.down()
        self.labs.clear()
        for p in self.tftp_root.glob("*"):
            p.unlink()
        with contextlib.suppress(OSError):
            self.tftp_root.rmdir()

    def environment(self) -> dict:
        return {"emu_tftp_root": str(self.tftp_root)}

    def _agent_keys(self):
        """What the emulated modem's agent accepts: the campaign's own SNMP (v2c, or its SNMPv3 user)."""
        from hfcprov.emu.headend import SnmpKeys
        from hfcprov.lab.roles import snmp_credentials

        try:
            _, write = snmp_credentials(self.campaign.target.snmp, "target.snmp")
        except RoleError as err:
            raise PointFailed(str(err)) from None
        if write.version == "3":
            return SnmpKeys(v3_user=write.user, v3_auth_key=write.auth_key, v3_priv_key=write.priv_key,
                            v3_auth_proto=write.auth_proto, v3_priv_proto=write.priv_proto)
        return SnmpKeys(community=write.community)

    def _lab(self, point: Point):
        from hfcprov.emu import timekeeping, topology

        # drop-tail is a DOCSIS 3.0 modem; aqm: file runs the rule of the point's profile's DOCSIS version,
        # as the simulated side (hfcprov.sim.upload.upload_scenario)
        from hfcprov.queue.profile import parse_profile

        version = {"none": "3.0", "file": parse_profile(point.profile).aqm_rule_version}.get(point.aqm, "3.1")
        key = (point.rtt, point.loss, version)
        lab = self.labs.get(key)
        if lab is None:
            lab = topology.up(rtt=point.rtt, loss=point.loss, seed=point.seed, docsis_version=version)
            self.labs[key] = lab
            lab.pids["responder"] = lab.spawn(
                "srv", [os.sys.executable, "-m", "hfcprov.probe.responder", "--host", topology.ADDR["srv"],
                        "--port", str(PROBE_PORT)],
                ready=f"responder listening on {topology.ADDR['srv']}:{PROBE_PORT} (udp echo, tcp bulk)",
                priority=timekeeping.HOST_PRIORITY)
            lab.save()
        return lab

    def measure(self, point: Point) -> list[RunResult]:
        from hfcprov.emu import netns, timekeeping
        from hfcprov.emu.topology import ADDR
        from hfcprov.fileio import atomic_write

        data, flow = build_config(self.campaign, point)
        self.last_flow = flow
        atomic_write(self.tftp_root / CONFIG_FILE, data)
        lab = self._lab(point)
        timeout = self.campaign.target.online_timeout
        if lab.name not in self.boots:
            applied = lab.boot(self.tftp_root, CONFIG_FILE, timeout=timeout, snmp_keys=self._agent_keys())
            self.boots[lab.name] = 1
        else:
            with netns.entered(lab.ns("cmts")):
                _snmp(self.campaign, _reset(ADDR["cm_rf"], 161))
            self.boots[lab.name] += 1
            applied = lab.wait_boot(self.boots[lab.name], timeout=timeout)
        if applied.get("status") != "operational":
            raise PointFailed(f"emulated modem {lab.name}: boot {self.boots[lab.name]} ended "
                              f"{applied.get('status')!r}: {applied.get('reason', 'see its modem.log')}")
        deadline = time.monotonic() + timeout
        while True:  # the modem answers SNMP a moment after it wrote applied.json
            try:
                with netns.entered(lab.ns("cmts")):
                    confirmed = _snmp(self.campaign, _confirm_coro(ADDR["cm_rf"], 161, flow))
                break
            except PointFailed:
                raise
            except HfcprovError as err:
                if time.monotonic() > deadline:
                    raise PointFailed(f"emulated modem {lab.name}: not confirmed online within "
                                      f"{timeout:g} s: {err}") from None
                time.sleep(0.3)
        self.sys_descr = confirmed["sys_descr"]

        def probe():
            with timekeeping.host_priority() as scheduling:  # the probe is the emulated home host
                result = _probe(self.campaign, point, ADDR["srv"], "emu", ns=lab.ns("cpe"))
            result.extra["host_scheduling"] = scheduling
            return result

        try:
            result, kept = timekeeping.in_time(lab.timekeeping, probe, plant=f"emulated modem {lab.name}")
        except timekeeping.FellBehind as err:
            raise PointFailed(str(err)) from None
        if kept is not None:
            result.extra["timekeeping"] = kept
        result.extra.update(confirmed)
        result.extra["lab"] = lab.name
        return [result]


class ModemBackend:
    """Real modems: configs published for the TFTP server, reset over SNMP, proven back, probed.

    Each role from its own place (``hfcprov.lab.roles``): SNMP to the modem and the CMTS
    (``target.snmp``, ``target.cmts``), the probe (``target.probe``), the file (``target.tftp``)."""

    def __init__(self, campaign: Campaign):
        from hfcprov.lab.roles import ProbeRole, Publisher, SnmpRole

        t = campaign.target
        self.campaign = campaign
        self.modem = dict(t.modems[0])
        self.mac = self.modem["mac"]
        problems = []

        def attempt(fn):
            try:
                return fn()
            except HfcprovError as err:
                problems.append(str(err))
                return None

        # every secret now, every missing one named: not one failed point per secret
        attempt(lambda: secret_value(t.secret, "target.secret"))
        self.snmp = attempt(lambda: SnmpRole(t.snmp, self.modem.get("ip"), "target.snmp"))
        self.cmts = attempt(lambda: SnmpRole(t.cmts.snmp, t.cmts.address, "target.cmts.snmp")) if t.cmts else None
        if problems:
            raise PreflightFailed(f"{campaign.source}: pre-flight: " + "; ".join(problems))
        self.probe = ProbeRole(t.probe.server, t.probe.port, t.probe.namespace, t.probe.source, t.probe.interface)
        self.publisher = Publisher(t.tftp)
        self.expected_server = t.tftp.server or t.tftp.host
        self.filename = None if t.tftp.filename == FROM_MODEM else published_file_name(campaign, self.modem)
        self.last_flow = None
        self.sys_descr = None
        self.checks: list[dict] = []

    def __enter__(self):
        try:
            self.publisher.serve()
        except HfcprovError as err:
            raise PreflightFailed(f"{self.campaign.source}: target.tftp: cannot serve {self.publisher.root}: "
                                  f"{err}") from None
        return self

    def __exit__(self, *exc):
        self.publisher.stop()
        return False

    def environment(self) -> dict:
        env = {"modem_mac": self.mac, "cmts": self.campaign.target.cmts.address if self.campaign.target.cmts else "",
               "snmp_place": self.snmp.where(), "probe_place": self.probe.where(),
               "tftp_place": f"{self.publisher.where()} as {self.filename}"}
        if self.cmts:
            env["cmts_snmp_place"] = self.cmts.where()
        if self.checks:  # what the pre-flight saw, kept with the results
            env["preflight"] = " | ".join(f"{c['check']}: {'ok' if c['ok'] else 'FAILED'}: {c['detail']}"
                                         for c in self.checks)
        return env

    def preflight(self) -> list[dict]:
        """Check, before the first point, everything a point needs: the TFTP root (or publish command),
        the modem over SNMP, the CMTS's row of it, the probe responder through it. Every failure is
        named; any raises ``PreflightFailed``."""
        from hfcprov.lab.proof import read_modem
        from hfcprov.snmp.ops import read_cmts_modems

        checks, failed = [], []

        def check(name, fn):
            try:
                detail = fn()
            except (HfcprovError, OSError) as err:
                failed.append(f"{name}: {err}")
                checks.append({"check": name, "ok": False, "detail": str(err)})
                return None
            checks.append({"check": name, "ok": True, "detail": detail})
            return detail

        check("tftp", self.publisher.check)
        if self.cmts is not None:
            def cmts_row():
                rows = self.cmts.run(lambda c: read_cmts_modems(c, self.cmts.host, self.cmts.port))
                row = next((r for r in rows if r.mac == self.mac), None)
                if row is None:
                    raise PointFailed(f"CMTS {self.cmts.host} does not list modem {self.mac} "
                                      f"({len(rows)} modems listed)")
                if not self.modem.get("ip"):
                    if not row.address:
                        raise PointFailed(f"CMTS {self.cmts.host} lists modem {self.mac} without an address")
                    self.modem["ip"] = self.snmp.host = row.address
                return f"lists {self.mac} {row.reg_status or row.status} at {row.address}"

            check("cmts", cmts_row)

        def modem():
            if not self.snmp.host:
                raise PointFailed(f"modem {self.mac}: no address to reach it (target.modems[0].ip or the CMTS's)")
            seen = self.snmp.run(lambda c: read_modem(c, self.snmp.host, self.snmp.port))
            if self.filename is None:
                if not seen["file"]:
                    raise PointFailed(f"modem {self.mac}: target.tftp.filename is {FROM_MODEM}, but it reports "
                                      "no docsDevServerConfigFile")
                self.filename = seen["file"]
            return (f"{self.snmp.host}: {seen['sys_descr']!s}; docsIfCmStatusValue {seen['status']}, "
                    f"file {seen['file']!r} from {seen['server']}, up {seen['uptime']} s")

        check("modem", modem)
        check("probe", lambda: f"responder echoes in {self.probe.echo() * 1e3:.1f} ms")
        self.checks = checks
        if failed:
            raise PreflightFailed(f"{self.campaign.source}: pre-flight failed before the first point: "
                                  + "; ".join(failed))
        return checks

    def measure(self, point: Point) -> list[RunResult]:
        from hfcprov.lab.proof import Expected, wait_until_proven

        t = self.campaign.target
        host, port = self.snmp.host, self.snmp.port
        data, flow = build_config(self.campaign, point, mac=self.mac)
        self.last_flow = flow
        try:
            self.publisher.put(self.filename, data)
        except HfcprovError as err:
            raise PointFailed(str(err)) from None
        started = time.monotonic()
        try:
            self.snmp.run(_reset(host, port), write=True)
        except HfcprovError as err:
            from hfcprov.snmp.client import SnmpTimeout

            cls = PointUnreachable if isinstance(err, SnmpTimeout) else PointFailed
            raise cls(f"modem {self.mac} ({host}): the reset (docsDevResetNow) failed: {err}") from None
        expected = Expected(self.mac, host, self.filename, self.expected_server)
        seen = wait_until_proven(lambda at: self._poll(at), expected, self.cmts is not None, t.online_timeout,
                                 t.poll_interval, started=started)
        # back on the file: its active upstream flow must be the point's (a modem may fill its QoS
        # tables a moment after it says operational: asked again until the deadline)
        while True:
            try:
                confirmed = self.snmp.run(_confirm_coro(host, port, flow))
                break
            except HfcprovError as err:
                if time.monotonic() - started >= t.online_timeout:
                    raise PointFailed(f"modem {self.mac} ({host}): {err}") from None
                time.sleep(t.poll_interval)
        confirmed["proof"] = {"uptime_s": seen.uptime, "at_s": round(seen.at, 1), "file": seen.file,
                              "tftp_server": seen.server, "cmts": seen.cmts_status}
        self.sys_descr = confirmed["sys_descr"]
        before = _flow_counters(self.snmp.run, host, port)
        result = _probe(self.campaign, point, self.probe.server, "modem", port=self.probe.port, role=self.probe)
        result.extra.update(confirmed)
        result.extra["flow_counters"] = counters_record(before, _flow_counters(self.snmp.run, host, port))
        return [result]

    def _poll(self, at: float):
        """One look at the modem and its CMTS row, ``at`` seconds after the reset."""
        from hfcprov.lab.proof import Seen, read_modem
        from hfcprov.snmp.ops import read_cmts_modems

        s = Seen(at=at)
        try:
            got = self.snmp.run(lambda c: read_modem(c, self.snmp.host, self.snmp.port))
            s.answered = True
            s.uptime, s.status, s.file, s.server, s.sys_descr = (got["uptime"], got["status"], got["file"],
                                                                  got["server"], got["sys_descr"])
        except HfcprovError as err:  # rebooting modems do not answer
            s.error = str(err)
        if self.cmts is not None:
            try:
                rows = self.cmts.run(lambda c: read_cmts_modems(c, self.cmts.host, self.cmts.port))
                row = next((r for r in rows if r.mac == self.mac), None)
                if row is not None:
                    s.cmts_status, s.cmts_online = row.reg_status or row.status, row.online
                    s.cmts_address = row.ip if ":" not in self.snmp.host else row.ipv6
                else:
                    s.cmts_online = False
            except HfcprovError as err:
                s.cmts_error = str(err)
        return s


def published_file_name(campaign: Campaign, modem: dict) -> str:
    """The published name: ``target.tftp.filename`` filled from the modem (the one naming rule)."""
    from hfcprov.tiers.naming import config_file_name

    tier = modem.get("tier") or Path(campaign.template or "campaign").name.split(".")[0]
    row = {"mac": modem["mac"], "tier": tier, "name": modem.get("name") or modem["mac"]}
    return config_file_name(campaign.target.tftp.filename, row)


def _flow_counters(run, host: str, port: int):
    """The modem's per-flow counters now (``hfcprov.snmp.flowstats``), or the error reading them;
    ``run(step)`` runs an SNMP step from the modem's SNMP place (``roles.SnmpRole.run``)."""
    from hfcprov.snmp.flowstats import read_counters

    async def step(client):
        return await read_counters(client, host, port)

    try:
        return run(step)
    except HfcprovError as err:
        return err


def counters_record(before, after) -> dict:
    """What a point stores of the counters read around its probe: both snapshots and the deltas
    (stats, latency histogram, congestion per flow), or why they could not be read."""
    from hfcprov.snmp.flowstats import deltas

    record = {}
    for name, snap in (("before", before), ("after", after)):
        record[name] = {"error": str(snap)} if isinstance(snap, HfcprovError) else snap.as_dict()
    if not isinstance(before, HfcprovError) and not isinstance(after, HfcprovError):
        try:
            record["delta"] = [d.as_dict() for d in deltas(before, after)]
        except HfcprovError as err:  # the modem rebooted during the point
            record["delta_error"] = str(err)
    return record


def _reset(host, port):
    """SET docsDevResetNow.0 = true(1): the modem reboots and fetches its config file again."""
    from hfcprov.snmp import oids

    async def step(client):
        await client.set(host, port, oids.RESET_NOW, "Integer", 1, once=True)  # TruthValue true(1), not resent

    return step


def _confirm_coro(host, port, flow):
    async def step(client):
        return await _confirm(client, host, port, flow)

    return step


def _snmp(campaign: Campaign, step):
    """One SNMP step with the campaign's credentials (the write ones: the reset needs them), from here:
    the emulated modem's (the caller enters the namespace)."""
    import asyncio

    from hfcprov.lab.roles import snmp_credentials
    from hfcprov.snmp.client import SnmpClient

    snmp = campaign.target.snmp
    try:
        _, write = snmp_credentials(snmp, "target.snmp")
    except RoleError as err:
        raise PointFailed(str(err)) from None

    async def main():
        client = SnmpClient(write, timeout=snmp.timeout, retries=snmp.retries)
        try:
            return await step(client)
        finally:
            client.close()

    return asyncio.run(main())


def _probe(campaign: Campaign, point: Point, server: str, source: str, ns: str | None = None,
           port: int = PROBE_PORT, role=None) -> RunResult:
    from hfcprov.probe.run import ProbeSpec, measure

    t = campaign.traffic
    cc = {"newreno": "reno", "sack": "reno"}.get(point.congestion_control, point.congestion_control)
    spec = ProbeSpec(target=server, port=port, flows=point.flows, duration=t.duration, warmup=t.warmup,
                     idle=min(2.0, t.warmup or 2.0), cc=cc, probe="icmp", rate=1.0 / t.probe_interval,
                     shaped_rate_bps=point.upstream_rate, source=source)
    if role is not None:  # a real modem's probe: from target.probe's place
        result = role.measure(spec)
    elif ns is None:
        result = measure(spec)
    else:
        from hfcprov.emu import netns

        with netns.entered(ns):
            result = measure(spec)
    result.extra["model"] = MEASURED_MODEL[source]
    return result


# what a measured figure came from, as the report names it
MEASURED_MODEL = {"emu": "emu: kernel TCP through tc (htb + bfifo)", "modem": "modem: measured"}


@contextlib.contextmanager
def measured_backend(campaign: Campaign):
    backend = EmuBackend(campaign) if campaign.target.kind == "emu" else ModemBackend(campaign)
    with backend:
        yield backend
