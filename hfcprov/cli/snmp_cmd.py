"""``hfcprov snmp``: audit modems, push resets and firmware upgrades, get/walk/set by MIB name,
list a CMTS's modems.

Credentials come from a file or the environment, never from an option value:
``--community-file F`` or ``$HFCPROV_SNMP_COMMUNITY`` (v2c), or ``--v3-user U``
with ``--v3-key-file F`` (lines ``auth: KEY`` / ``priv: KEY``) or
``$HFCPROV_SNMP_V3_AUTH_KEY`` / ``$HFCPROV_SNMP_V3_PRIV_KEY``.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections import Counter
from typing import ClassVar

import click

from hfcprov.cli import EXIT_DRIFT, EXIT_FAILED
from hfcprov.cli.options import DURATION, JSON, MKDIR, listen_option
from hfcprov.errors import HfcprovError


def _credential_options(f):
    for option in reversed([
        click.option("--community-file", type=click.Path(dir_okay=False),
                     help="File whose first line is the v2c community (else $HFCPROV_SNMP_COMMUNITY)."),
        click.option("--v3-user", help="SNMPv3 USM user (authPriv when a priv key is given)."),
        click.option("--v3-key-file", type=click.Path(dir_okay=False),
                     help="File with 'auth: KEY' and 'priv: KEY' lines (else $HFCPROV_SNMP_V3_*_KEY)."),
        click.option("--v3-auth-proto", default="SHA", show_default=True, help="MD5, SHA, SHA224..SHA512."),
        click.option("--v3-priv-proto", default="AES", show_default=True, help="DES, 3DES, AES, AES192, AES256."),
        click.option("--timeout", "timeout_text", type=DURATION, default="2s", show_default=True,
                     help="Per-request timeout."),
        click.option("--patience", "patience_text", type=DURATION, default=None,
                     help="After the last try, keep listening this long for a slow modem's late answer "
                          "(default 5 x timeout; 0: a timeout is final)."),
        click.option("--mib-dir", multiple=True, type=click.Path(file_okay=False, exists=True),
                     help="Folder of further MIB text files (e.g. the full CableLabs set), compiled with pysmi for names and labels."),
        click.option("--retries", default=1, show_default=True, help="Retries per request."),
    ]):
        f = option(f)
    return f


def _credentials(opts: dict, default_community: str | None):
    from hfcprov.cli.config_files import load_mibs
    from hfcprov.snmp.credentials import load_credentials

    load_mibs(opts.get("mib_dir"))  # --mib-dir: compiled with pysmi, cached by digest
    return load_credentials(opts["community_file"], opts["v3_user"], opts["v3_key_file"],
                            opts["v3_auth_proto"], opts["v3_priv_proto"], default_community=default_community,
                            warn=_warn)


def _warn(line: str) -> None:
    click.echo(f"hfcprov: warning: {line}", err=True)


def _patience(opts: dict) -> float | None:
    return opts.get("patience_text")  # None: the engine's default (5 x timeout)


def _host_port(text: str, default_port: int) -> tuple[str, int]:
    from hfcprov.units import parse_host_port  # ports checked 1..65535

    return parse_host_port(text, default_port)


@click.group()
def snmp():
    """Audit, reset, upgrade, get/walk/set and list modems over SNMP (v2c or v3 USM)."""


AUDIT_COLUMNS = ["mac", "host", "status", "config_file", "cm_status", "boot_state", "tftp_server", "detail"]


def _fleet_options(f):
    for option in reversed([
        click.option("--scheduler", help="Spread the modems over a Dask cluster: tcp://HOST:8786 (tls:// off this "
                                         "host), or local:N for N worker processes here. Needs --configs on a path "
                                         "every worker reads."),
        click.option("--store", "store_path", type=click.Path(dir_okay=False),
                     help="SQLite file the results go to as each shard finishes; run again to resume."),
        click.option("--run", "run_name", default="default", show_default=True,
                     help="Name of this run in --store: the same name resumes it, skipping modems it has."),
        click.option("--shard-size", default=500, show_default=True,
                     help="Modems per shard: a CMTS's modems (inventory column cmts) in parts of this size."),
        click.option("--cmts-rate", type=float, help="Start at most this many modems per second on each CMTS."),
    ]):
        f = option(f)
    return f


def _fleet_store(opts: dict, action: str):
    from hfcprov.snmp.fleet import FleetStore

    return FleetStore(opts["store_path"], opts["run_name"], action) if opts.get("store_path") else None


@snmp.command()
@click.option("--inventory", required=True, type=click.Path(dir_okay=False, exists=True),
              help="CSV/YAML modems: mac, ip (or host), optional port and config (file name).")
@click.option("--configs", type=click.Path(file_okay=False, exists=True),
              help="Folder of the config files the modems should run (binary or text forms).")
@click.option("--concurrency", type=click.IntRange(1), default=64, show_default=True,
              help="Modems audited at once (each modem is its own agent).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True,
              help="json: one object per line, streamed.")
@click.option("--port", default=161, show_default=True, help="SNMP port when the inventory has none.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
@_fleet_options
@_credential_options
def audit(inventory, configs, concurrency, fmt, port, progress, **opts):
    """Compare what each modem applied with the config file it should run.

    Every modem gets a verdict, whatever it answers (a value its MIB does not allow is its
    'error', naming the object). With --scheduler the modems are sharded by CMTS over a Dask
    cluster; with --store the results are kept as they arrive and a stopped run resumes.

    Exit status 0 when every modem is in sync; 4 (drift) when every modem was audited and
    any is drifted or on the wrong file; 3 when any could not be audited (offline,
    unreachable, refused the credentials, an error); 1 when the audit could not run.
    """
    from hfcprov.snmp.audit import AuditSummary, ExpectedConfigs, audit_all, targets_from_inventory
    from hfcprov.snmp.client import run

    credentials = _credentials(opts, default_community="public")
    timeout = opts["timeout_text"]
    targets = targets_from_inventory(_inventory(inventory), default_port=port)
    expected = ExpectedConfigs(configs)
    writer = _Writer(fmt, AUDIT_COLUMNS)
    bar = _progress(progress, len(targets))

    fleet_counts = Counter()

    def on_dict(row: dict):
        writer.row(row)
        fleet_counts[row["status"]] += 1
        if bar:
            bar[0].advance(bar[1])

    def on_result(result):
        on_dict(result.as_dict())

    options = {"concurrency": concurrency, "timeout": timeout, "retries": opts["retries"],
               "patience": _patience(opts), "cmts_rate": opts["cmts_rate"]}
    try:
        if opts["scheduler"] or opts["store_path"]:
            from hfcprov.snmp.fleet import audit_shard, run_shards

            store = _fleet_store(opts, "audit")
            try:
                fleet = run_shards(targets, audit_shard, (credentials, configs, None, options), store,
                                   opts["scheduler"], opts["shard_size"],
                                   on_rows=lambda rows: [on_dict(r) for r in rows])
            finally:
                if store is not None:
                    store.close()
            # with a store: the whole run so far (a resumed run's earlier rows too); else what came now
            counts = fleet.counts if store is not None else fleet_counts
            summary = AuditSummary(counts, fleet.seconds, sum(counts.values()))
            if fleet.skipped:
                click.echo(f"resumed run {opts['run_name']}: {fleet.skipped} modems already audited", err=True)
        else:
            summary = run(audit_all(targets, credentials, expected, on_result, **options))
    finally:
        if bar:
            bar[0].stop()
    click.echo(summary.line(), err=True)
    return audit_status(summary.counts)


def audit_status(counts) -> int:
    """The audit's exit status: 3 when any modem could not be audited (the answer is incomplete),
    else 4 (drift) when any is out of sync, else 0."""
    from hfcprov.snmp.audit import DRIFTED, IN_SYNC, WRONG_CONFIG

    if any(n for status, n in counts.items() if status not in (IN_SYNC, DRIFTED, WRONG_CONFIG)):
        return EXIT_FAILED
    if counts.get(DRIFTED) or counts.get(WRONG_CONFIG):
        return EXIT_DRIFT
    return 0


def _inventory(path) -> list[dict]:
    """The inventory's rows; a missing address column is one line naming the columns found."""
    from hfcprov.tiers.inventory import read_inventory

    table = read_inventory(path)
    table.require("ip", "host", why="to reach each modem")
    return table.checked()


def _progress(wanted: bool | None, total: int):
    if wanted is None:
        wanted = sys.stderr.isatty()
    if not wanted:
        return None
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    progress = Progress(TextColumn("audit"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                        console=Console(stderr=True), transient=True)
    task = progress.add_task("audit", total=total)
    progress.start()
    return progress, task


class _Writer:
    """Streams rows to stdout as they arrive: aligned table, CSV or JSON lines."""

    WIDTHS: ClassVar[dict[str, int]] = {"mac": 12, "host": 21, "status": 12, "config_file": 20, "cm_status": 16,
                                         "boot_state": 16, "tftp_server": 15}

    def __init__(self, fmt: str, columns: list[str]):
        self.fmt, self.columns = fmt, columns
        self.started = False

    def row(self, d: dict) -> None:
        out = sys.stdout
        if self.fmt == "json":
            out.write(json.dumps(d, default=str) + "\n")
        elif self.fmt == "csv":
            buf = io.StringIO()
            w = csv.writer(buf)
            if not self.started:
                w.writerow(self.columns)
            w.writerow(["" if d.get(c) is None else d.get(c) for c in self.columns])
            out.write(buf.getvalue())
        else:
            if not self.started:
                out.write(self._line({c: c for c in self.columns}) + "\n")
            out.write(self._line(d) + "\n")
        self.started = True
        out.flush()

    def _line(self, d: dict) -> str:
        cells = []
        for c in self.columns:
            value = d.get(c)
            if c == "host" and "port" in d and d.get("port") not in (None, 161):
                value = f"{value}:{d['port']}"
            text = "-" if value is None or value == "" else str(value)
            width = self.WIDTHS.get(c)
            cells.append(text.ljust(width) if width else text)
        return "  ".join(cells)


PUSH_COLUMNS = ["mac", "host", "status", "seconds", "detail"]


def _push_targets(modem, inventory, port):
    from hfcprov.snmp.push import PushTarget, targets_from_inventory

    if bool(modem) == bool(inventory):
        raise click.UsageError("give one MODEM (HOST[:PORT]) or --inventory FILE")
    if modem:
        host, p = _host_port(modem, port)
        return [PushTarget(host, p)]
    return targets_from_inventory(_inventory(inventory), default_port=port)


def _push_options(f):
    for option in reversed([
        click.option("--inventory", type=click.Path(dir_okay=False, exists=True),
                     help="CSV/YAML modems (mac, ip or host, optional port) instead of one MODEM."),
        click.option("--port", default=161, show_default=True, help="SNMP port (or give MODEM as HOST:PORT)."),
        click.option("--concurrency", type=click.IntRange(1), default=8, show_default=True,
                     help="Modems in progress at once (a watched modem keeps its slot)."),
        click.option("--per-second", "rate", type=click.FloatRange(0, min_open=True), metavar="N",
                     help="Start at most N modems a second."),
        click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
                     show_default=True, help="json: one object per modem, streamed."),
        click.option("--poll-interval", type=DURATION, default="2s", show_default=True, help="Time between polls."),
    ]):
        f = option(f)
    return f


def _run_push(action, targets, credentials, one, fmt, concurrency, rate, opts):
    from hfcprov.snmp.client import run
    from hfcprov.snmp.push import push_all

    writer = _Writer(fmt, PUSH_COLUMNS)
    summary = run(push_all(action, targets, credentials, one, lambda r: writer.row(r.as_dict()),
                           concurrency=concurrency, rate=rate, timeout=opts["timeout_text"],
                           retries=opts["retries"]))
    click.echo(summary.line(), err=True)
    return 0 if summary.all_ok else EXIT_FAILED


@snmp.command()
@click.argument("modem", required=False)
@_push_options
@click.option("--wait-online", is_flag=True, help="Watch each modem go down and come back online.")
@click.option("--online-timeout", type=DURATION, default="5min", show_default=True, help="Give up waiting after this long.")
@click.option("--down-grace", type=DURATION, default="10s", show_default=True,
              help="A modem that never looked down counts as back only after this long.")
@click.option("--cmts", help="Watch the modems come back from this CMTS (HOST[:PORT]; its modem tables, one walk "
                            "per poll for all of them) instead of polling each modem, whose SNMP is silent "
                            "while it reboots.")
@_fleet_options
@_credential_options
def reset(modem, inventory, port, concurrency, rate, fmt, poll_interval, wait_online, online_timeout, down_grace,
          cmts, **opts):
    """Reset MODEM or every modem of --inventory (docsDevResetNow.0 = true): each re-fetches its
    config file. Paced: --concurrency at a time, at most --per-second a second (--cmts-rate: per CMTS).
    With --scheduler the modems are sharded by CMTS over a Dask cluster; with --store the results
    are kept as they arrive and a stopped run resumes without resetting a modem twice.

    Needs a write community or v3 user. Exit status 0 when every modem was reset (and came
    back, with --wait-online), 3 when any was not."""
    from hfcprov.snmp.push import resetter

    credentials = _credentials(opts, default_community=None)
    watch = _host_port(cmts, 161) if cmts else None
    timing = {"wait_online": wait_online, "online_timeout": online_timeout,
              "poll_interval": poll_interval, "down_grace": down_grace}
    one = resetter(timing, watch)
    if inventory and (opts["scheduler"] or opts["store_path"]):
        return _fleet_reset(inventory, port, credentials, timing, watch, fmt, concurrency, rate, opts)
    targets = _push_targets(modem, inventory, port)
    if modem and fmt == "table":  # one modem: the short human form
        r = _with_client(credentials, opts, lambda client: one(client, targets[0]), typed=False)
        if r.status == "sent":
            click.echo(f"{r.host}: reset sent")
        elif r.status == "ok":
            click.echo(f"{r.host}: reset, back online after {r.seconds:.1f} s")
        else:
            raise HfcprovError(f"{r.host}: reset {r.status}: {r.detail}")
        return
    return _run_push("reset", targets, credentials, one, fmt, concurrency, opts["cmts_rate"] or rate, opts)


def _fleet_reset(inventory, port, credentials, timing, watch, fmt, concurrency, rate, opts):
    """``reset --inventory`` in shards (by CMTS) on Dask and/or into a store (resumable)."""
    from hfcprov.snmp.audit import targets_from_inventory
    from hfcprov.snmp.fleet import reset_shard, run_shards
    from hfcprov.snmp.push import PushSummary

    targets = targets_from_inventory(_inventory(inventory), default_port=port)
    options = {"concurrency": concurrency, "rate": opts["cmts_rate"] or rate,
               "timeout": opts["timeout_text"], "retries": opts["retries"]}
    writer = _Writer(fmt, PUSH_COLUMNS)
    seen = Counter()

    def on_rows(rows):
        for r in rows:
            writer.row(r)
            seen[r["status"]] += 1

    store = _fleet_store(opts, "reset")
    try:
        fleet = run_shards(targets, reset_shard, (credentials, options, timing, watch), store, opts["scheduler"],
                           opts["shard_size"], on_rows=on_rows)
    finally:
        if store is not None:
            store.close()
    counts = fleet.counts if store is not None else seen
    if fleet.skipped:
        click.echo(f"resumed run {opts['run_name']}: {fleet.skipped} modems already reset, not again", err=True)
    summary = PushSummary("reset", counts, fleet.seconds, sum(counts.values()))
    click.echo(summary.line(), err=True)
    return 0 if summary.all_ok else EXIT_FAILED


@snmp.command()
@click.argument("modem", required=False)
@_push_options
@click.option("--server", required=True, help="TFTP server of the image (IPv4 or IPv6 address).")
@click.option("--file", "filename", required=True, help="Image file name on that server (docsDevSwFilename).")
@click.option("--upgrade-timeout", type=DURATION, default="10min", show_default=True, help="Give up watching after this long.")
@click.option("--settle", type=DURATION, default="10s", show_default=True,
              help="A final status read before the modem was seen in progress counts only after this long.")
@click.option("--legacy", is_flag=True,
              help="Name the server in docsDevSwServer (IPv4, RFC 2669) at once; without it a modem that refuses "
                   "docsDevSwServerAddressType/Address gets that instead.")
@_credential_options
def upgrade(modem, inventory, port, concurrency, rate, fmt, poll_interval, server, filename, upgrade_timeout,
            settle, legacy, **opts):
    """Upgrade the firmware of MODEM or every modem of --inventory (DOCS-CABLE-DEVICE-MIB:
    docsDevSwServerAddress, docsDevSwFilename, docsDevSwAdminStatus = upgradeFromMgt) and watch
    docsDevSwOperStatus to the end. A DOCSIS 1.1/2.0 modem without the address-type objects is
    given docsDevSwServer instead. Exit status 0 when every modem completed, 3 otherwise."""
    from hfcprov.snmp.push import server_var_binds, upgrade_one

    server_var_binds(server, filename, legacy)  # a bad address or name fails before any modem is touched
    credentials = _credentials(opts, default_community=None)
    targets = _push_targets(modem, inventory, port)
    timing = {"upgrade_timeout": upgrade_timeout, "poll_interval": poll_interval,
              "settle": settle}

    async def one(client, target):
        return await upgrade_one(client, target, server, filename, legacy=legacy, **timing)

    return _run_push("upgrade", targets, credentials, one, fmt, concurrency, rate, opts)


def _with_client(credentials, opts, fn, typed: bool = True):
    """Run ``await fn(client)`` and close the client; ``typed``: values carry their SMI type (get/walk/set)."""
    from hfcprov.snmp.client import SnmpClient, run

    async def go():
        client = SnmpClient(credentials, timeout=opts["timeout_text"], retries=opts["retries"],
                            typed=typed, patience=_patience(opts))
        try:
            return await fn(client)
        finally:
            client.close()

    return run(go())


def _print_var_binds(var_binds, as_json: bool) -> None:
    from hfcprov.snmp.varbind import as_json as vb_json
    from hfcprov.snmp.varbind import format_line

    for oid, value in var_binds:
        click.echo(json.dumps(vb_json(oid, value), default=str) if as_json else format_line(oid, value))


@snmp.command()
@click.argument("agent")
@click.argument("names", nargs=-1, required=True)
@click.option("--port", default=161, show_default=True, help="SNMP port (or give AGENT as HOST:PORT).")
@JSON("each object (one per line)")
@_credential_options
def get(agent, names, port, as_json, **opts):
    """GET objects by MIB name (docsDevServerConfigFile.0) or numeric OID, printed as snmpget does."""
    from hfcprov.snmp.varbind import resolve

    host, port = _host_port(agent, port)
    credentials = _credentials(opts, default_community="public")
    oid_list = [resolve(n) for n in names]
    var_binds = _with_client(credentials, opts, lambda c: c.get_var_binds(host, port, oid_list))
    _print_var_binds(var_binds, as_json)
    if any(getattr(v, "value", 0) is None for _, v in var_binds):
        return EXIT_FAILED  # noSuchObject / noSuchInstance: named above, the others printed


@snmp.command()
@click.argument("agent")
@click.argument("name", default="mib-2")
@click.option("--port", default=161, show_default=True, help="SNMP port (or give AGENT as HOST:PORT).")
@JSON("each object (one per line)")
@_credential_options
def walk(agent, name, port, as_json, **opts):
    """Walk the subtree under NAME (default mib-2) with GETBULK, printed as snmpwalk does."""
    from hfcprov.snmp.varbind import resolve

    host, port = _host_port(agent, port)
    credentials = _credentials(opts, default_community="public")
    root = resolve(name)

    async def subtree(client):
        _, tables = await client.fetch(host, port, [], [root])
        if tables[root]:
            return [(f"{root}.{index}", value) for index, value in tables[root].items()]
        # a scalar instance: walked as snmpwalk does, with a GET
        return [(o, v) for o, v in await client.get_var_binds(host, port, [root]) if getattr(v, "value", None) is not None]

    var_binds = _with_client(credentials, opts, subtree)
    _print_var_binds(var_binds, as_json)
    click.echo(f"{len(var_binds)} objects under {name}", err=True)


@snmp.command("set")
@click.argument("agent")
@click.argument("assignments", nargs=-1, required=True)
@click.option("--port", default=161, show_default=True, help="SNMP port (or give AGENT as HOST:PORT).")
@JSON("each object set (one per line)")
@_credential_options
def set_(agent, assignments, port, as_json, **opts):
    """SET objects: NAME TYPE VALUE [NAME TYPE VALUE ...], all in one request. TYPE as net-snmp's
    snmpset: i (INTEGER, a number or an enum label), u, t, a (IpAddress), o (OID), s (string),
    x (hex), or = for the MIB's own type. Needs a write community or v3 user."""
    from hfcprov.snmp.varbind import parse_set

    if len(assignments) % 3:
        raise HfcprovError("set takes NAME TYPE VALUE triples")
    host, port = _host_port(agent, port)
    credentials = _credentials(opts, default_community=None)
    var_binds = [parse_set(*assignments[i:i + 3]) for i in range(0, len(assignments), 3)]
    _print_var_binds(_with_client(credentials, opts, lambda c: c.set_many(host, port, var_binds)), as_json)


CMTS_COLUMNS = ["mac", "ip", "ipv6", "status", "reg_status"]


@snmp.command("cmts-modems")
@click.argument("cmts")
@click.option("--port", default=161, show_default=True, help="SNMP port (or give CMTS as HOST:PORT).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@click.option("--inventory-out", type=click.Path(dir_okay=False),
              help="Write an inventory CSV (mac, ip, status) that 'snmp audit --inventory' reads.")
@MKDIR
@click.option("--online-only", is_flag=True,
              help="Only modems the CMTS reports operational (in either table: DOCS-IF or DOCS-IF3 registration).")
@_credential_options
def cmts_modems(cmts, port, fmt, inventory_out, mkdir, online_only, **opts):
    """List the modems CMTS knows (docsIfCmtsCmStatusTable, DOCS-IF3 registration table)."""
    from hfcprov.fileio import atomic_write, output_folder
    from hfcprov.snmp.client import run
    from hfcprov.snmp.ops import cmts_modems as list_modems

    output_folder(inventory_out, mkdir)
    host, port = _host_port(cmts, port)
    credentials = _credentials(opts, default_community="public")
    modems = run(list_modems(host, port, credentials, timeout=opts["timeout_text"],
                             retries=opts["retries"]))
    if online_only:
        modems = [m for m in modems if m.online]
    rows = [{"mac": m.mac, "ip": m.ip, "ipv6": m.ipv6, "status": m.status, "reg_status": m.reg_status}
            for m in modems]
    if inventory_out:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(CMTS_COLUMNS)
        for r in rows:  # the audit reaches a modem at "ip": an IPv6-only modem by its IPv6 address
            w.writerow(["" if v is None else v for v in (r["mac"], r["ip"] or r["ipv6"], r["ipv6"], r["status"],
                                                        r["reg_status"])])
        atomic_write(inventory_out, buf.getvalue())
        click.echo(f"{len(rows)} modems written to {inventory_out}", err=True)
        return
    writer = _Writer(fmt, CMTS_COLUMNS)
    for r in rows:
        writer.row(r)
    click.echo(f"{len(rows)} modems on {host}", err=True)


STATS_COLUMNS = ["sfid", "direction", "seconds", "packets", "packets_per_s", "bits_per_s", "policed_drops",
                 "aqm_drops", "sanctioned", "ect0", "ect1", "ce", "ce_marked", "latency_max_us", "latency"]


@snmp.command()
@click.argument("modem")
@click.option("--port", default=161, show_default=True, help="SNMP port (or give MODEM as HOST:PORT).")
@click.option("--interval", type=DURATION, default="10s", show_default=True, help="Time between the two readings.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True,
              help="json: one object per flow (counters, rates, latency histogram).")
@_credential_options
def stats(modem, port, interval, fmt, **opts):
    """What each service flow of MODEM did over --interval: packets, octets, policed and AQM drops,
    packets queue protection sanctioned, ECT(0)/ECT(1)/CE arrivals, CE marks, the latency maximum and
    histogram (docsQosServiceFlowStatsTable, docsQosSfLatencyStatsTable, docsQosSfCongestionStatsTable).
    A DOCSIS 3.0 modem shows the counters it has."""
    import asyncio

    from hfcprov.snmp import flowstats

    host, port = _host_port(modem, port)
    credentials = _credentials(opts, default_community="public")
    seconds = interval

    async def go(client):
        first = await flowstats.read_counters(client, host, port)
        click.echo(f"{host}: first reading of {len(first.flows)} flows; the second in {seconds:g} s", err=True)
        await asyncio.sleep(seconds)
        return flowstats.deltas(first, await flowstats.read_counters(client, host, port))

    writer = _Writer(fmt, STATS_COLUMNS)
    for delta in _with_client(credentials, opts, go, typed=False):
        row = delta.as_dict()
        if fmt != "json":
            row = {k: _rounded(v) for k, v in row.items()}
            hist = row.pop("latency_histogram", None)
            row["latency"] = _histogram_text(hist) if hist else None
        writer.row(row)


def _rounded(value):
    return round(value, 1) if isinstance(value, float) else value


def _histogram_text(hist: dict) -> str:
    """``<=100us:6 <=1ms:3 >1ms:1``: the bins that counted anything."""
    edges, counts = hist["edges_us"], hist["counts"]
    labels = [f"<={e // 1000}ms" if e >= 1000 and e % 1000 == 0 else f"<={e}us" for e in edges]
    labels.append(f">{labels[-1][2:]}" if labels else "all")
    return " ".join(f"{label}:{n}" for label, n in zip(labels, counts) if n)


@snmp.command("demo-agent")
@click.argument("configs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@listen_option(16100, "the demo modems (the first; the others on the next ports)", default_host="127.0.0.1")
@click.option("--dir", "folder", type=click.Path(file_okay=False),
              help="Write the inventory and expected configs here and keep them (default: a temporary folder, "
                   "removed when the agents stop).")
@MKDIR
def demo_agent(configs, listen, folder, mkdir):
    """Serve two modems per config file CONFIGS (yours: .cm, text, YAML or JSON) over SNMP on loopback, one
    in sync with its file and one drifted, and print the `snmp audit` command that finds which.

    Real agents (snmpsim), until Ctrl-C: try an audit in a minute, no modem needed."""
    import os
    import signal
    import tempfile
    import threading
    from pathlib import Path

    from hfcprov.fileio import output_folder
    from hfcprov.snmp.demo import COMMUNITY, DemoAgents, free_ports, write_demo

    host, port = listen
    count = 2 * len(configs)
    ports = free_ports(host, count) if port == 0 else list(range(port, port + count))
    if ports[-1] > 65535:
        raise click.BadParameter(f"{count} modems need ports {port}..{port + count - 1}", param_hint="'--listen'")
    temporary = None
    if folder is None:
        temporary = tempfile.TemporaryDirectory(prefix="hfcprov-demo-")
        folder = temporary.name
    else:
        output_folder(os.path.join(folder, "inventory.csv"), mkdir, creates=1)
    folder = Path(folder)
    stop = threading.Event()
    try:
        modems = write_demo(configs, folder, host, ports)
        with DemoAgents(folder, modems):
            at = f"[{host}]" if ":" in host else host
            click.echo(f"demo modems on {at} (snmpsim, community {COMMUNITY}), from your files:")
            for m in modems:
                state = f"drifted: {m.drift}" if m.drift else "in sync"
                click.echo(f"  {m.mac}  {at}:{m.port:<5}  {m.config}  {state}")
            click.echo(f"inventory: {folder / 'inventory.csv'}; expected configs: {folder / 'configs'}")
            click.echo("try (exit status 4: drift found):")
            click.echo(f"  hfcprov snmp audit --inventory {folder / 'inventory.csv'} --configs {folder / 'configs'}")
            click.echo("Ctrl-C stops the agents", err=True)
            # Ctrl-C and SIGTERM both stop it, also when started with SIGINT ignored (a shell's background
            # job, a CI runner): the agents must not be left waiting for a KeyboardInterrupt that never comes
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, lambda *_: stop.set())
            try:
                stop.wait()
            except KeyboardInterrupt:
                pass
    finally:
        if temporary is not None:
            temporary.cleanup()
