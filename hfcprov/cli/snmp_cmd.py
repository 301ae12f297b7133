"""``hfcprov snmp``: audit deployed modems, reset one, list a CMTS's modems.

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
from typing import ClassVar

import click

from hfcprov.errors import HfcprovError
from hfcprov.units import parse_duration


def _credential_options(f):
    for option in reversed([
        click.option("--community-file", type=click.Path(dir_okay=False),
                     help="File whose first line is the v2c community (else $HFCPROV_SNMP_COMMUNITY)."),
        click.option("--v3-user", help="SNMPv3 USM user (authPriv when a priv key is given)."),
        click.option("--v3-key-file", type=click.Path(dir_okay=False),
                     help="File with 'auth: KEY' and 'priv: KEY' lines (else $HFCPROV_SNMP_V3_*_KEY)."),
        click.option("--v3-auth-proto", default="SHA", show_default=True, help="MD5, SHA, SHA224..SHA512."),
        click.option("--v3-priv-proto", default="AES", show_default=True, help="DES, 3DES, AES, AES192, AES256."),
        click.option("--timeout", "timeout_text", default="2s", show_default=True, help="Per-request timeout."),
        click.option("--mib-dir", multiple=True, type=click.Path(file_okay=False, exists=True),
                     help="Folder of further MIB text files (e.g. the full CableLabs set), compiled with pysmi for names and labels."),
        click.option("--retries", default=1, show_default=True, help="Retries per request."),
    ]):
        f = option(f)
    return f


def _credentials(opts: dict, default_community: str | None):
    from hfcprov.snmp.client import load_credentials

    if opts.get("mib_dir"):
        from hfcprov.snmp.mibs import load_dirs  # compiled with pysmi, cached by digest

        load_dirs(opts["mib_dir"])
    return load_credentials(opts["community_file"], opts["v3_user"], opts["v3_key_file"],
                            opts["v3_auth_proto"], opts["v3_priv_proto"], default_community=default_community)


def _host_port(text: str, default_port: int) -> tuple[str, int]:
    from hfcprov.units import parse_host_port  # ports checked 1..65535

    return parse_host_port(text, default_port)


@click.group()
def snmp():
    """Audit, reset and list modems over SNMP (v2c or v3 USM)."""


AUDIT_COLUMNS = ["mac", "host", "status", "config_file", "cm_status", "detail"]


@snmp.command()
@click.option("--inventory", required=True, type=click.Path(dir_okay=False, exists=True),
              help="CSV/YAML modems: mac, ip (or host), optional port and config (file name).")
@click.option("--configs", type=click.Path(file_okay=False, exists=True),
              help="Folder of the config files the modems should run (binary or text forms).")
@click.option("--concurrency", default=64, show_default=True, help="Modems audited at once (each modem is its own agent).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True,
              help="json: one object per line, streamed.")
@click.option("--port", default=161, show_default=True, help="SNMP port when the inventory has none.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
@_credential_options
def audit(inventory, configs, concurrency, fmt, port, progress, **opts):
    """Compare what each modem applied with the config file it should run.

    Exit status 0 when every modem is in sync, 2 when any is drifted, on the wrong
    file, offline, unreachable or refused the credentials (1: the audit could not run).
    """
    from hfcprov.tiers import load_inventory
    from hfcprov.snmp.audit import ExpectedConfigs, audit_all, targets_from_inventory
    from hfcprov.snmp.client import run

    if concurrency < 1:
        raise HfcprovError("--concurrency must be at least 1")
    credentials = _credentials(opts, default_community="public")
    timeout = parse_duration(opts["timeout_text"])
    targets = targets_from_inventory(load_inventory(inventory), default_port=port)
    expected = ExpectedConfigs(configs)
    writer = _Writer(fmt, AUDIT_COLUMNS)
    bar = _progress(progress, len(targets))

    def on_result(result):
        writer.row(result.as_dict())
        if bar:
            bar[0].advance(bar[1])

    try:
        summary = run(audit_all(targets, credentials, expected, on_result, concurrency=concurrency,
                                timeout=timeout, retries=opts["retries"]))
    finally:
        if bar:
            bar[0].stop()
    click.echo(summary.line(), err=True)
    if not summary.all_in_sync:
        sys.exit(2)  # SystemExit passes through the CLI root untouched


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

    WIDTHS: ClassVar[dict[str, int]] = {"mac": 12, "host": 21, "status": 12, "config_file": 20, "cm_status": 16}

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


@snmp.command()
@click.argument("modem")
@click.option("--port", default=161, show_default=True, help="SNMP port (or give MODEM as HOST:PORT).")
@click.option("--wait-online", is_flag=True, help="Poll until the modem is back online.")
@click.option("--online-timeout", default="5min", show_default=True, help="Give up waiting after this long.")
@click.option("--poll-interval", default="2s", show_default=True, help="Time between polls.")
@click.option("--down-grace", default="10s", show_default=True,
              help="A modem that never looked down counts as back only after this long.")
@click.option("--cmts", help="Poll this CMTS (HOST[:PORT]) instead of the modem.")
@_credential_options
def reset(modem, port, wait_online, online_timeout, poll_interval, down_grace, cmts, **opts):
    """Reset MODEM (docsDevResetNow.0 = true). Needs a write community or v3 user."""
    from hfcprov.snmp.client import run
    from hfcprov.snmp.ops import reset as do_reset

    host, port = _host_port(modem, port)
    credentials = _credentials(opts, default_community=None)
    result = run(do_reset(host, port, credentials, wait_online=wait_online,
                          online_timeout=parse_duration(online_timeout), poll_interval=parse_duration(poll_interval),
                          down_grace=parse_duration(down_grace), cmts=_host_port(cmts, 161) if cmts else None,
                          timeout=parse_duration(opts["timeout_text"]), retries=opts["retries"]))
    if result.seconds_to_online is None:
        click.echo(f"{host}: reset sent")
    else:
        click.echo(f"{host}: reset, back online after {result.seconds_to_online:.1f} s")


CMTS_COLUMNS = ["mac", "ip", "status", "reg_status"]


@snmp.command("cmts-modems")
@click.argument("cmts")
@click.option("--port", default=161, show_default=True, help="SNMP port (or give CMTS as HOST:PORT).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@click.option("--inventory-out", type=click.Path(dir_okay=False),
              help="Write an inventory CSV (mac, ip, status) that 'snmp audit --inventory' reads.")
@click.option("--online-only", is_flag=True, help="Only modems the CMTS reports operational.")
@_credential_options
def cmts_modems(cmts, port, fmt, inventory_out, online_only, **opts):
    """List the modems CMTS knows (docsIfCmtsCmStatusTable, DOCS-IF3 registration table)."""
    from hfcprov.fileio import atomic_write
    from hfcprov.snmp.client import run
    from hfcprov.snmp.ops import cmts_modems as list_modems

    host, port = _host_port(cmts, port)
    credentials = _credentials(opts, default_community="public")
    modems = run(list_modems(host, port, credentials, timeout=parse_duration(opts["timeout_text"]),
                             retries=opts["retries"]))
    if online_only:
        modems = [m for m in modems if m.online]
    rows = [{"mac": m.mac, "ip": m.ip, "status": m.status, "reg_status": m.reg_status} for m in modems]
    if inventory_out:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(CMTS_COLUMNS)
        for r in rows:
            w.writerow(["" if r[c] is None else r[c] for c in CMTS_COLUMNS])
        atomic_write(inventory_out, buf.getvalue())
        click.echo(f"{len(rows)} modems written to {inventory_out}", err=True)
        return
    writer = _Writer(fmt, CMTS_COLUMNS)
    for r in rows:
        writer.row(r)
    click.echo(f"{len(rows)} modems on {host}", err=True)
