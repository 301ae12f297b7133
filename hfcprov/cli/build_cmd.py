"""``hfcprov build``, ``hfcprov buffer ...`` and ``hfcprov tcp ...``: parse units at the edge, call the library, print."""

from __future__ import annotations

import json
from pathlib import Path

import click

from hfcprov.errors import UnitError
from hfcprov.units import (
    format_bytes,
    format_duration,
    format_rate,
    parse_bytes,
    parse_duration,
    parse_link_rate,
    parse_rtt,
)


def _unit(parse, text, option: str):
    try:
        return parse(text)
    except UnitError as err:
        raise UnitError(f"{option}: {err}") from None


def _units(parse, text: str, option: str) -> list:
    items = [t for t in text.split(",") if t.strip()]
    if not items:
        raise UnitError(f"{option}: empty list")
    return [_unit(parse, t.strip(), option) for t in items]


# --- build --------------------------------------------------------------------------------------------------------


@click.command(epilog="""\b
Exit status: 0 every row built (or unchanged); 1 the build could not run (bad inventory,
template or output folder); 3 some rows failed: each is named on stderr, and the other
rows are still built unless --fail-fast.""")
@click.option("--template", "-t", help="Template file for every row, or a folder of <tier>.j2 (default: shipped tiers).")
@click.option("--inventory", "-i", required=True, type=click.Path(dir_okay=False), help="modems.csv or .yaml/.json")
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False), help="Output folder.")
@click.option("--secret-file", type=click.Path(dir_okay=False), help="Shared secret for the CMTS MIC (first line).")
@click.option("--secret-map", type=click.Path(dir_okay=False),
              help="YAML: each CMTS's secret file (cmts-east: east.key); the inventory's --cmts-column names each "
                   "modem's CMTS (rows without one take --secret-file).")
@click.option("--cmts-column", default="cmts", show_default=True, help="Inventory column naming a modem's CMTS.")
@click.option("--no-cmts-mic", "no_cmts_mic", is_flag=True,
              help="Files without a secret are meant to have no CMTS MIC (no warning).")
@click.option("--jobs", "-j", type=click.IntRange(1, 256), default=1, show_default=True, help="Worker processes.")
@click.option("--pattern", default="{mac}.cm", show_default=True, help="Output file name from row fields.")
@click.option("--keep-going/--fail-fast", default=True, show_default=True,
              help="After a bad row, build the rest (the exit status is 3 either way), or stop there.")
@click.option("--strict", is_flag=True, hidden=True, help="Old spelling: a bad row now always gives exit status 3.")
@click.option("--progress/--no-progress", default=None,
              help="Progress with time left (default: a bar on a terminal, a line every 10 s otherwise).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout (bad rows included).")
def build(template, inventory, out, secret_file, secret_map, cmts_column, no_cmts_mic, jobs, pattern, keep_going,
          strict, progress, as_json):
    """Build one config file per modem from tier templates and an inventory, plus a manifest."""
    from hfcprov.cli import verbosity
    from hfcprov.cli.progress import ProgressReport
    from hfcprov.cli.config_files import secret as read_secret  # as `config encode --secret-file` reads it
    from hfcprov.tiers.bulk import build as run_build
    from hfcprov.tiers.secrets import SecretMap

    if no_cmts_mic and (secret_file or secret_map):
        raise click.UsageError("--no-cmts-mic contradicts --secret-file/--secret-map: give one")
    secret = read_secret(secret_file) if secret_file else None
    secrets = SecretMap.load(secret_map, secret, cmts_column)  # never printed: errors name the CMTS
    if progress is False or verbosity() < 0:
        mode = "off"
    else:
        mode = "bar" if progress else None  # None: a bar on a terminal, periodic lines otherwise
    report = ProgressReport("rows", mode=mode)
    try:
        summary = run_build(inventory, out, template, secret, jobs, pattern, keep_going=keep_going,
                            progress=lambda done, total: report.update(done, total), secrets=secrets)
    finally:
        report.close()
    for _, message in summary.failed:
        click.echo(f"hfcprov: bad row: {message}", err=True)
    if summary.unsigned and not no_cmts_mic:  # once, however many files
        how = ("--secret-file or --secret-map" if not secret_map else
               f"--secret-file for the rows that name no CMTS in --cmts-column {cmts_column!r}")
        click.echo(f"hfcprov: warning: {summary.unsigned} of {summary.built + summary.unchanged} files carry no CMTS "
                   f"MIC (TLV 7): a CMTS refuses such a modem's registration; give {how}, or --no-cmts-mic "
                   f"if that is intended", err=True)
    if as_json:
        click.echo(json.dumps(summary.as_dict(), indent=2))
    else:
        stopped = f", {summary.not_built} not built (--fail-fast)" if summary.stopped else ""
        click.echo(
            f"{summary.built} built, {summary.unchanged} unchanged, {len(summary.failed)} failed of {summary.total}"
            f"{stopped} in {summary.seconds:.2f} s ({summary.files_per_second:.0f} files/s);"
            f" manifest: {Path(out) / 'manifest.json'}"
        )
    return 3 if summary.failed else 0


# --- buffer -------------------------------------------------------------------------------------------------------


@click.group()
def buffer():
    """Buffer Control sizing: advice and predicted latency/throughput tables."""


@buffer.command()
@click.option("--rate", required=True, help="Service-flow rate, e.g. 5M, 5Mbps, 5000000.")
@click.option("--rtt", required=True, help="Round-trip time of the TCP traffic, e.g. 40ms.")
@click.option("--flows", type=click.IntRange(1, 10000), default=1, show_default=True, help="Concurrent TCP flows.")
@click.option("--latency-budget", default="150ms", show_default=True, help="One-way delay budget (ITU-T G.114).")
@click.option("--min-buffer", is_flag=True, help="Also recommend a MinimumBuffer (capped at 24576, always accepted).")
@click.option("--cc", "congestion_control", type=click.Choice(["reno", "newreno", "sack", "cubic", "fast", "prague"]),
              default="reno", show_default=True, help="The senders' TCP: how far it backs off (docs/sizing.md).")
@click.option("--aqm-target", default=None, metavar="DURATION",
              help="The flow runs DOCSIS-PIE with this latency target (a DOCSIS 3.1 modem: 10ms unless 24.40.2).")
@click.option("--mac", type=click.Choice(["docsis", "tokenbucket"]), default="docsis", show_default=True,
              help="The upstream: DOCSIS request-grant (adds the MAC's access delay) or a plain token bucket.")
@click.option("--model", type=click.Choice(["rule", "sim"]), default="rule", show_default=True,
              help="rule: docs/sizing.md's closed form (instant); sim: simulate the ladder of sizes as a campaign "
                   "point does and apply the same policy (the campaign's answer for the same tier).")
# sim: the campaign's traffic keys and their defaults (hfcprov.lab.spec.Traffic; a test keeps them equal)
@click.option("--duration", default="20s", show_default=True, help="sim: seconds measured per size, after the warm-up.")
@click.option("--warmup", default="2s", show_default=True, help="sim: seconds before measuring.")
@click.option("--seeds", type=click.IntRange(1, 100), default=1, show_default=True,
              help="sim: repetitions per size (seed 1, 2, ...); the medians decide, as a campaign's do.")
@click.option("--voice", is_flag=True, help="sim: a G.711 call beside the upload (a campaign's voip: true).")
@click.option("--jobs", "-j", type=click.IntRange(1, 256), default=None, help="sim: worker processes.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def advise(rate, rtt, flows, latency_budget, min_buffer, congestion_control, aqm_target, mac, model, duration,
           warmup, seeds, voice, jobs, as_json):
    """Recommended MinimumBuffer/TargetBuffer/MaximumBuffer for one service flow, with the reasoning."""
    from hfcprov.queue.sizing import size_buffer

    engine = None
    if model == "sim":
        if aqm_target:
            raise click.UsageError("--model sim simulates drop-tail sizes; with --aqm-target use the rule")
        from hfcprov.sim.upload import SimModel

        engine = SimModel(seeds=seeds, voice=voice, jobs=jobs, duration=_unit(parse_duration, duration, "--duration"),
                          warmup=_unit(parse_duration, warmup, "--warmup"))
    from hfcprov.queue.inputs import SizingInputs

    tier = SizingInputs(_unit(parse_link_rate, rate, "--rate"), _unit(parse_rtt, rtt, "--rtt"), flows,
                        congestion_control, mac, **_budget_and_aqm(latency_budget, aqm_target))
    a = size_buffer(tier, engine, min_buffer=min_buffer)
    if as_json:
        click.echo(json.dumps(a.as_dict(), indent=2))
        return
    click.echo(f"Buffer Control for {format_rate(a.rate)} at RTT {format_duration(a.rtt)}, {a.flows} flow(s):")
    for name, value in (("MinimumBuffer", a.minimum), ("TargetBuffer", a.target), ("MaximumBuffer", a.maximum)):
        shown = "(omit)" if value is None else f"{value} bytes ({format_bytes(value)})"
        click.echo(f"  {name:<14} {shown}")
    click.echo("Why:")
    for line in a.reasoning:
        click.echo(f"  - {line}")
    click.echo(f"Candidates ({a.model}):")
    click.echo(f"  {'buffer':>12}  {'latency under load':>18}  {'TCP utilization':>15}")
    for c in a.candidates:
        click.echo(f"  {format_bytes(c.buffer):>12}  {format_duration(c.latency_under_load):>18}  {c.utilization:>14.0%}")


@buffer.command()
@click.option("--rates", required=True, help="Comma list, e.g. 1M,2M,5M,10M.")
@click.option("--buffers", required=True, help="Comma list, e.g. 8K,16K,32K,64K,128K,256K.")
@click.option("--rtt", "rtts", required=True, help="Comma list, e.g. 40ms,100ms.")
@click.option("--flows", type=click.IntRange(1, 10000), default=1, show_default=True)
@click.option("--latency-budget", default="150ms", show_default=True, help="One-way delay budget (ITU-T G.114).")
@click.option("--cc", "congestion_control", type=click.Choice(["reno", "newreno", "sack", "cubic", "fast", "prague"]),
              default="newreno", show_default=True,
              help="The senders' TCP: the advised size's back-off, and the simulated hosts' TCP (sim).")
@click.option("--aqm-target", default=None, metavar="DURATION",
              help="The flow runs DOCSIS-PIE with this latency target (analytic and sim cells, and the advice).")
@click.option("--model", type=click.Choice(["analytic", "sim"]), default="analytic", show_default=True,
              help="analytic: TCP Reno sawtooth over a drop-tail buffer; sim: the hfcprov simulator.")
@click.option("--mac", type=click.Choice(["docsis", "tokenbucket"]), default="docsis", show_default=True,
              help="The upstream: DOCSIS request-grant (sim, and the advice's access delay) or a plain token bucket.")
@click.option("--duration", default="20s", show_default=True, help="sim: simulated seconds per cell (5 s warm-up).")
@click.option("--jobs", "-j", type=click.IntRange(1, 256), default=None, help="sim: worker processes.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (each cell with its tier's advised TargetBuffer).")
def table(rates, buffers, rtts, flows, latency_budget, congestion_control, aqm_target, model, mac, duration, jobs,
          as_json):
    """Predicted latency under load and TCP utilization per (rate, buffer, rtt), and the advised size per tier."""
    from dataclasses import asdict

    from hfcprov.queue.inputs import SizingInputs
    from hfcprov.queue.predict import buffer_table
    from hfcprov.queue.sizing import size_buffer

    engine = None
    if model == "sim":
        from hfcprov.sim.upload import SimModel

        engine = SimModel(duration=_unit(parse_duration, duration, "--duration"), warmup=5.0, jobs=jobs)
    given = _budget_and_aqm(latency_budget, aqm_target)
    tiers = [SizingInputs(rate, rtt, flows, congestion_control, mac, **given)
             for rtt in _units(parse_rtt, rtts, "--rtt") for rate in _units(parse_link_rate, rates, "--rates")]
    advised = {(t.rtt, t.rate): size_buffer(t).target for t in tiers}
    rows = buffer_table(tiers, _units(parse_bytes, buffers, "--buffers"), model=engine)
    if as_json:
        click.echo(json.dumps([{**asdict(r), "advised": advised[(r.rtt, r.rate)]} for r in rows], indent=2))
        return
    rate_list = list(dict.fromkeys(r.rate for r in rows))
    buf_list = list(dict.fromkeys(r.buffer for r in rows))
    cell = {(r.rtt, r.rate, r.buffer): r for r in rows}
    for rtt in dict.fromkeys(r.rtt for r in rows):
        click.echo(f"RTT {format_duration(rtt)}, {flows} flow(s): latency under load / TCP utilization ({rows[0].model})")
        click.echo(f"{'rate':>10} | " + " | ".join(f"{format_bytes(b):>15}" for b in buf_list) + " | advised")
        for rate in rate_list:
            cells = (cell[(rtt, rate, b)] for b in buf_list)
            click.echo(f"{format_rate(rate):>10} | " + " | ".join(
                f"{format_duration(c.latency_under_load):>9} {c.utilization:>4.0%}" for c in cells)
                + f" | {format_bytes(advised[(rtt, rate)])}")
        click.echo("")


def _budget_and_aqm(latency_budget: str, aqm_target: str | None) -> dict:
    """``SizingInputs``' latency budget and AQM target from the buffer commands' options."""
    return {"latency_budget": _unit(parse_duration, latency_budget, "--latency-budget"),
            "aqm_latency_target": _unit(parse_duration, aqm_target, "--aqm-target") if aqm_target else None}


# --- tcp ----------------------------------------------------------------------------------------------------------


@click.group()
def tcp():
    """TCP tuning rules for HFC paths."""


@tcp.command("socket-buffer")
@click.option("--cm-buffer", required=True, help="CM buffer, e.g. 10KB.")
@click.option("--downstream", required=True, help="Rate into the CM, e.g. 25M.")
@click.option("--lan", required=True, help="Rate out of the CM to the PC, e.g. 10M.")
@click.option("--connections", type=click.IntRange(1, 10000), default=1, show_default=True)
@click.option("--mss", default="1460", show_default=True, help="TCP maximum segment size (bytes).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def socket_buffer(cm_buffer, downstream, lan, connections, mss, as_json):
    """Largest TCP socket buffer that does not overrun the CM (Cohen & Ramanathan 1998, V.B)."""
    from hfcprov.queue.socketbuf import socket_buffer_limit

    r = socket_buffer_limit(_unit(parse_bytes, cm_buffer, "--cm-buffer"), _unit(parse_link_rate, downstream, "--downstream"),
                            _unit(parse_link_rate, lan, "--lan"), connections, _unit(parse_bytes, mss, "--mss"))
    if as_json:
        click.echo(json.dumps(r.as_dict(), indent=2))
        return
    click.echo(f"CM buffer {r.cm_buffer} bytes = C = {r.cm_packets} packets of {r.packet} bytes (MSS {r.mss} + 40)")
    click.echo(f"downstream {format_rate(r.downstream)} into the CM, LAN {format_rate(r.lan)} out, "
               f"{r.connections} connection(s)")
    if r.limit_packets is None:
        click.echo("the LAN is at least as fast as the downstream: the CM never queues, no socket-buffer limit")
        return
    click.echo(f"queued share of each packet: 1 - lan/downstream = {r.fill_fraction:.3f}")
    click.echo(f"rule: C >= (B*n - 1) * {r.fill_fraction:.3f}  (at most one drop per window)")
    click.echo(f"socket buffer limit B = {r.limit_packets:.2f} packets = {r.limit_bytes:.0f} bytes"
               f" ({r.limit_bytes / 1000:.1f} KB) per connection")
    click.echo(f"with no drop at all: {r.lossless_packets:.2f} packets = {r.lossless_bytes:.0f} bytes")
    click.echo(f"set: {r.setting_segments} segments x {r.mss} = {r.setting_bytes} bytes per connection")
