"""Measured backends: the emulated modem (``emu``) and real modems (``modem``).

Both run a point the same way, as a provisioning engineer would by hand:

1. build the point's config from the tier template (``build.render_tree``) and
   encode it (``config.encode``, CMTS MIC with the campaign's secret);
2. publish it under the modem's file name on the TFTP server;
3. reset the modem over SNMP (docsDevResetNow.0 = true);
4. wait until it is back online with the new config, confirmed by reading back
   over SNMP what it applied (rate and TargetBuffer of its upstream flow),
   within ``target.online_timeout`` or the point fails with that reason;
5. run the probe (idle RTT, RTT under TCP load, goodput) and return its result.

The emulated modem lives in network namespaces built for the campaign (one lab
per added RTT and loss, since those are plant impairments) and removed after it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

from hfcprov import macaddr
from hfcprov.errors import HfcprovError
from hfcprov.lab import backends
from hfcprov.lab.spec import Campaign, Point
from hfcprov.results import RunResult

CONFIG_FILE = "campaign.cm"
PROBE_PORT = 5201  # the responder (python -m hfcprov.probe.responder) default


class PointFailed(HfcprovError):
    """This point could not be measured; the reason says which step and why."""


def secret_value(value: str | None, what: str) -> str | None:
    """A secret as written in the campaign, or ``env:NAME`` to keep it out of the file (and the store)."""
    if value is None or not value.startswith("env:"):
        return value
    name = value[4:]
    if name not in os.environ:
        raise PointFailed(f"{what}: environment variable {name} is not set")
    return os.environ[name]


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

    def _lab(self, point: Point):
        from hfcprov.emu import topology

        # aqm none (the default) is a DOCSIS 3.0 modem, as the simulated side (select.aqm_overrides)
        version = "3.0" if point.aqm == "none" else "3.1"
        key = (point.rtt, point.loss, version)
        lab = self.labs.get(key)
        if lab is None:
            lab = topology.up(rtt=point.rtt, loss=point.loss, seed=point.seed, docsis_version=version)
            self.labs[key] = lab
            lab.pids["responder"] = lab.spawn("srv", [os.sys.executable, "-m", "hfcprov.probe.responder",
                                                      "--host", topology.ADDR["srv"], "--port", str(PROBE_PORT)])
            lab.save()
        return lab

    def measure(self, point: Point) -> list[RunResult]:
        from hfcprov.emu import netns
        from hfcprov.emu.topology import ADDR
        from hfcprov.fileio import atomic_write

        data, flow = build_config(self.campaign, point)
        self.last_flow = flow
        atomic_write(self.tftp_root / CONFIG_FILE, data)
        lab = self._lab(point)
        timeout = self.campaign.target.online_timeout
        if lab.name not in self.boots:
            applied = lab.boot(self.tftp_root, CONFIG_FILE, timeout=timeout)
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
        result = _probe(self.campaign, point, ADDR["srv"], "emu", ns=lab.ns("cpe"))
        result.extra.update(confirmed)
        result.extra["lab"] = lab.name
        return [result]


class ModemBackend:
    """Real modems: configs published on a TFTP server, reset and audited over SNMP, probed."""

    def __init__(self, campaign: Campaign):
        t = campaign.target
        self.campaign = campaign
        self.modem = t.modems[0]
        if "ip" not in self.modem:
            raise PointFailed(f"modem {self.modem['mac']}: needs its ip for SNMP reset and audit")
        if not t.tftp.get("root"):
            raise PointFailed("target.tftp.root: the folder the TFTP server serves is needed to publish configs")
        if not t.probe.get("server"):
            raise PointFailed("target.probe.server: the host behind the CMTS that answers the probe is needed")
        self.root = Path(t.tftp["root"])
        self.server = None
        if t.tftp.get("host"):  # hfcprov serves the folder itself; otherwise an existing server does
            from hfcprov.tftp import TftpServer

            self.server = TftpServer(self.root, host=t.tftp["host"], port=int(t.tftp.get("port", 69)))
            self.server.start()
        self.last_flow = None
        self.sys_descr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.server is not None:
            self.server.stop()
        return False

    def environment(self) -> dict:
        return {"modem_mac": self.modem["mac"], "cmts": self.campaign.target.cmts or ""}

    def measure(self, point: Point) -> list[RunResult]:
        from hfcprov.fileio import atomic_write

        mac = self.modem["mac"]
        host, port = self.modem["ip"], int(self.campaign.target.snmp.get("port", 161))
        data, flow = build_config(self.campaign, point, mac=mac)
        self.last_flow = flow
        name = macaddr.normalize(mac) + ".cm"
        atomic_write(self.root / name, data)
        _snmp(self.campaign, _reset(host, port))
        timeout = self.campaign.target.online_timeout
        deadline = time.monotonic() + timeout
        time.sleep(2.0)  # a modem answers SNMP for a moment after the SET before it goes down
        last = None
        while time.monotonic() < deadline:
            try:
                confirmed = _snmp(self.campaign, _confirm_coro(host, port, flow))
                break
            except HfcprovError as err:  # offline (timeout) or still on the old config
                last = err
                time.sleep(2.0)
        else:
            raise PointFailed(f"modem {mac} ({host}): not back online with the new config within "
                              f"{timeout:g} s: {last}")
        self.sys_descr = confirmed["sys_descr"]
        probe = self.campaign.target.probe
        before = _flow_counters(self.campaign, host, port)
        result = _probe(self.campaign, point, probe["server"], "modem", port=int(probe.get("port", PROBE_PORT)))
        result.extra.update(confirmed)
        result.extra["flow_counters"] = counters_record(before, _flow_counters(self.campaign, host, port))
        return [result]


def _flow_counters(campaign: Campaign, host: str, port: int):
    """The modem's per-flow counters now (``hfcprov.snmp.flowstats``), or the error reading them."""
    from hfcprov.snmp.flowstats import read_counters

    async def step(client):
        return await read_counters(client, host, port)

    try:
        return _snmp(campaign, step)
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
        await client.set(host, port, oids.RESET_NOW, "Integer", 1)  # TruthValue true(1)

    return step


def _confirm_coro(host, port, flow):
    async def step(client):
        return await _confirm(client, host, port, flow)

    return step


def _snmp(campaign: Campaign, step):
    """Run one SNMP step with the campaign's credentials (the write community: the reset needs it)."""
    import asyncio

    from hfcprov.snmp.client import Credentials, SnmpClient

    snmp = campaign.target.snmp
    community = (secret_value(snmp.get("write_community"), "target.snmp.write_community")
                 or secret_value(snmp.get("community"), "target.snmp.community") or "public")

    async def main():
        client = SnmpClient(Credentials(community=community), timeout=float(snmp.get("timeout", 2.0)),
                            retries=int(snmp.get("retries", 1)))
        try:
            return await step(client)
        finally:
            client.close()

    return asyncio.run(main())


def _probe(campaign: Campaign, point: Point, server: str, source: str, ns: str | None = None,
           port: int = PROBE_PORT) -> RunResult:
    from hfcprov.probe.run import ProbeSpec, measure

    t = campaign.traffic
    cc = {"newreno": "reno", "sack": "reno"}.get(point.congestion_control, point.congestion_control)
    spec = ProbeSpec(target=server, port=port, flows=point.flows, duration=t.duration, warmup=t.warmup,
                     idle=min(2.0, t.warmup or 2.0), cc=cc, probe="icmp", rate=1.0 / t.probe_interval,
                     shaped_rate_bps=point.upstream_rate, source=source)
    if ns is None:
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
