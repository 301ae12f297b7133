"""``hfcprov build``, ``hfcprov buffer ...`` and ``hfcprov tcp ...``: parse units at the edge, call the library, print."""

from __future__ import annotations

import json

import click

from hfcprov.cli import build_files, shortcut
from hfcprov.cli.options import (DURATION, JOBS, JSON, MKDIR, OLD_DOCSIS_VERSION, RATE, RATES, RTT, RTTS, SECRET_FILE,
                                  SIZE, SIZES)
from hfcprov.units import format_bytes, format_duration, format_rate

# --- build --------------------------------------------------------------------------------------------------------


@click.command(epilog="""\b
Exit status: 0 every row built (or unchanged); 1 the build could not run (bad inventory,
template or output folder); 3 some rows failed: each is named on stderr, and the other
rows are still built unless --fail-fast.""")
@click.option("--template", "-t", help="One template file (or shipped tier name) for every row, or a folder of "
                                       "<tier>.j2 chosen by each row's tier column, added to the shipped tiers "
                                       "(a file of the folder replaces the shipped tier of its name).")
@click.option("--inventory", "-i", required=True, type=click.Path(dir_okay=False), help="modems.csv or .yaml/.json")
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False),
              help="Output folder: created if missing, but the folder holding it must exist (--mkdir: the whole path).")
@MKDIR
@SECRET_FILE
@click.option("--secret-map", type=click.Path(dir_okay=False),
              help="YAML: each CMTS's secret file (cmts-east: east.key); the inventory's --cmts-column names each "
                   "modem's CMTS (rows without one take --secret-file).")
@click.option("--cmts-column", default="cmts", show_default=True, help="Inventory column naming a modem's CMTS.")
@click.option("--no-cmts-mic", "no_cmts_mic", is_flag=True,
              help="Files without a secret are meant to have no CMTS MIC (no warning).")
@JOBS
@click.option("--pattern", default="{mac}.cm", show_default=True, help="Output file name from row fields.")
@click.option("--keep-going/--fail-fast", default=True, show_default=True,
              help="After a bad row, build the rest (the exit status is 3 either way), or stop there.")
@click.option("--strict", is_flag=True,
              help="A row whose file a modem or CMTS would refuse (config lint's rules) fails, instead of a warning.")
@click.option("--progress/--no-progress", default=None,
              help="Progress with time left (default: a bar on a terminal, a line every 10 s otherwise).")
@JSON("the summary (bad rows included)")
@shortcut.runs(build_files.build_files)
def build():
    """Build one config file per modem from tier templates and an inventory, plus a manifest."""


# --- buffer -------------------------------------------------------------------------------------------------------


@click.group()
def buffer():
    """Buffer Control sizing: advice and predicted latency/throughput tables."""


def _profile_help() -> str:
    return ("The modem profile: docsis3.1 (one OFDMA upstream, the default), docsis3.1-ofdma+4scqam, "
            "docsis3.1-highsplit, docsis3.0-4ch, docsis3.0-8ch, docsis2.0 (White et al.'s plant); overrides after "
            "a colon, e.g. docsis3.1:map_interval=1ms,congestion=40%.")


def tier_options(f):
    """The options every sizing command shares, with the one set of defaults (hfcprov.queue.inputs)."""
    from hfcprov.queue.inputs import DEFAULT_CONGESTION_CONTROL, DEFAULT_PROFILE, DEFAULT_UPSTREAM_MODEL

    for opt in reversed((
        click.option("--latency-budget", type=DURATION, default="150ms", show_default=True,
                     help="One-way delay budget (ITU-T G.114)."),
        click.option("--profile", default=DEFAULT_PROFILE, show_default=True, help=_profile_help()),
        click.option("--cc", "congestion_control", default=DEFAULT_CONGESTION_CONTROL, show_default=True,
                     type=click.Choice(["reno", "newreno", "sack", "cubic", "fast", "prague"]),
                     help="The senders' TCP: how far it backs off (docs/sizing.md), and the simulated hosts' (sim)."),
        click.option("--aqm", "aqm", default="modem", show_default=True,
                     help="The flow's queue: modem (what the profile's modem runs: DOCSIS-PIE at 10 ms on "
                          "DOCSIS 3.1, drop-tail on 2.0/3.0), none (drop-tail), docsis-pie, or a DOCSIS-PIE "
                          "latency target such as 20ms."),
        click.option("--aqm-target", type=DURATION, default=None, metavar="DURATION", hidden=True,
                     help="Old spelling of --aqm DURATION."),
        click.option("--mac", type=click.Choice(["docsis", "tokenbucket"]), default=DEFAULT_UPSTREAM_MODEL,
                     show_default=True,
                     help="The upstream: DOCSIS request-grant (the profile's MAC) or a plain token bucket."),
        click.option("--burst", type=SIZE, default=None, metavar="BYTES",
                     help="The flow's Max Traffic Burst (default: the profile's tier, 100 ms at the rate on "
                          "DOCSIS 3.x); a burst that caps the rate is warned about."),
        click.option("--peak", type=RATE, default=None, metavar="RATE",
                     help="The flow's Peak Traffic Rate (default: the profile's tier, twice the rate on DOCSIS 3.x)."),
    )):
        f = opt(f)
    return f


def _tier_inputs(rate, rtt, flows, congestion_control, aqm, aqm_target, mac, profile, burst, peak, latency_budget):
    """``SizingInputs`` from the sizing commands' options (units already parsed by the option types)."""
    from hfcprov.queue.inputs import SizingInputs, aqm_latency_target

    target = aqm_target if aqm_target is not None else aqm_latency_target(aqm)
    return SizingInputs(rate, rtt, flows, congestion_control, mac, target, latency_budget, profile, burst, peak)


@buffer.command()
@click.option("--rate", type=RATE, help="Service-flow rate, e.g. 5M, 5Mbps, 5000000 (or take it from --config).")
@click.option("--rtt", type=RTT, required=True, help="Round-trip time of the TCP traffic, e.g. 40ms.")
@click.option("--flows", type=click.IntRange(1, 10000), default=1, show_default=True, help="Concurrent TCP flows.")
@tier_options
@click.option("--min-buffer", is_flag=True, help="Also recommend a MinimumBuffer (capped at 24576, always accepted).")
@click.option("--model", type=click.Choice(["rule", "sim"]), default="rule", show_default=True,
              help="rule: docs/sizing.md's closed form (instant); sim: simulate the ladder of sizes as a campaign "
                   "point does and apply the same policy (the campaign's answer for the same tier).")
# sim: the campaign's traffic keys and their defaults (hfcprov.lab.spec.Traffic; a test keeps them equal)
@click.option("--duration", type=DURATION, default="20s", show_default=True,
              help="sim: seconds measured per size, after the warm-up.")
@click.option("--warmup", type=DURATION, default="2s", show_default=True, help="sim: seconds before measuring.")
@click.option("--seeds", type=click.IntRange(1, 100), default=1, show_default=True,
              help="sim: repetitions per size (seed 1, 2, ...); the medians decide, as a campaign's do.")
@click.option("--voice", is_flag=True, help="sim: a G.711 call beside the upload (a campaign's voip: true).")
@JOBS
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Size the first upstream flow of this config file (.cm, text, YAML, JSON): its rate, its AQM "
                   "(as the --profile's modem applies it) and its TargetBuffer beside the advice.")
@click.option("--compare", "compare_file", type=click.Path(dir_okay=False),
              help="With --config: a second config file, shown side by side with the first (before / after).")
@OLD_DOCSIS_VERSION
@JSON("the advice")
def advise(rate, rtt, flows, latency_budget, profile, congestion_control, aqm, aqm_target, mac, burst, peak,
           min_buffer, model, duration, warmup, seeds, voice, jobs, config_file, compare_file, docsis_version, as_json):
    """Recommended MinimumBuffer/TargetBuffer/MaximumBuffer for one service flow, with the reasoning.

    With --config A.cm [--compare B.cm]: each file's upstream flow, its TargetBuffer and what it
    predicts beside the advice for its rate, side by side."""
    from hfcprov.queue.sizing import size_buffer

    if docsis_version:
        profile = docsis_version
    if compare_file and not config_file:
        raise click.UsageError("--compare B needs --config A: the two files are shown side by side")
    if config_file:
        if rate is not None or aqm_target is not None or aqm != "modem" or model == "sim":
            raise click.UsageError("--config takes the rate and the AQM from the file: drop --rate/--aqm "
                                   "(and --model sim)")
        from hfcprov.cli.compare import advise_files

        table = advise_files([f for f in (config_file, compare_file) if f], rtt, flows, latency_budget,
                             congestion_control, mac, profile)
        click.echo(table.json() if as_json else table.text())
        return
    if rate is None:
        raise click.UsageError("give --rate (or --config FILE)")
    engine = None
    if model == "sim":
        from hfcprov.sim.upload import SimModel

        engine = SimModel(seeds=seeds, voice=voice, jobs=jobs, duration=duration, warmup=warmup)
    tier = _tier_inputs(rate, rtt, flows, congestion_control, aqm, aqm_target, mac, profile, burst, peak,
                        latency_budget)
    a = size_buffer(tier, engine, min_buffer=min_buffer)
    if as_json:
        click.echo(json.dumps(a.as_dict(), indent=2))
        return
    for w in a.warnings:
        click.echo(f"hfcprov: warning: {w}", err=True)
    queue = "drop-tail" if a.aqm_latency_target is None else f"DOCSIS-PIE {format_duration(a.aqm_latency_target)}"
    click.echo(f"Buffer Control for {format_rate(a.rate)} at RTT {format_duration(a.rtt)}, {a.flows} flow(s), "
               f"{a.congestion_control}, {queue}, {a.profile if a.mac == 'docsis' else 'token bucket'}:")
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
@click.option("--rates", type=RATES, required=True, help="Comma list, e.g. 1M,2M,5M,10M.")
@click.option("--buffers", type=SIZES, required=True, help="Comma list, e.g. 8K,16K,32K,64K,128K,256K.")
@click.option("--rtt", "rtts", type=RTTS, required=True, help="Comma list, e.g. 40ms,100ms.")
@click.option("--flows", type=click.IntRange(1, 10000), default=1, show_default=True)
@tier_options
@click.option("--model", type=click.Choice(["analytic", "sim"]), default="analytic", show_default=True,
              help="analytic: TCP Reno sawtooth over a drop-tail buffer (through the profile's MAC loop); sim: the "
                   "hfcprov simulator.")
@click.option("--duration", type=DURATION, default="20s", show_default=True,
              help="sim: simulated seconds per cell (5 s warm-up).")
@JOBS
@JSON("every cell, each with its tier's advised TargetBuffer")
def table(rates, buffers, rtts, flows, latency_budget, profile, congestion_control, aqm, aqm_target, mac, burst,
          peak, model, duration, jobs, as_json):
    """Predicted latency under load and TCP utilization per (rate, buffer, rtt), and the advised size per tier."""
    from dataclasses import asdict

    from hfcprov.queue.predict import buffer_table
    from hfcprov.queue.sizing import size_buffer

    engine = None
    if model == "sim":
        from hfcprov.sim.upload import SimModel

        engine = SimModel(duration=duration, warmup=5.0, jobs=jobs)
    tiers = [_tier_inputs(rate, rtt, flows, congestion_control, aqm, aqm_target, mac, profile, burst, peak,
                          latency_budget) for rtt in rtts for rate in rates]
    advice = {(t.rtt, t.rate): size_buffer(t) for t in tiers}
    advised = {k: a.target for k, a in advice.items()}
    rows = buffer_table(tiers, buffers, model=engine)
    if as_json:
        click.echo(json.dumps([{**asdict(r), "advised": advised[(r.rtt, r.rate)],
                                "profile": advice[(r.rtt, r.rate)].profile,
                                "warnings": advice[(r.rtt, r.rate)].warnings} for r in rows], indent=2))
        return
    for a in advice.values():
        for w in a.warnings:
            click.echo(f"hfcprov: warning: {w}", err=True)
    rate_list = list(dict.fromkeys(r.rate for r in rows))
    buf_list = list(dict.fromkeys(r.buffer for r in rows))
    cell = {(r.rtt, r.rate, r.buffer): r for r in rows}
    first = next(iter(advice.values()))
    for rtt in dict.fromkeys(r.rtt for r in rows):
        click.echo(f"RTT {format_duration(rtt)}, {flows} flow(s), {first.congestion_control}, "
                   f"{first.profile if first.mac == 'docsis' else 'token bucket'}: latency under load / TCP "
                   f"utilization ({rows[0].model}); advised: {first.model}")
        click.echo(f"{'rate':>10} | " + " | ".join(f"{format_bytes(b):>15}" for b in buf_list) + " | advised")
        for rate in rate_list:
            cells = (cell[(rtt, rate, b)] for b in buf_list)
            click.echo(f"{format_rate(rate):>10} | " + " | ".join(
                f"{format_duration(c.latency_under_load):>9} {c.utilization:>4.0%}" for c in cells)
                + f" | {format_bytes(advised[(rtt, rate)])}")
        click.echo("")


# --- tcp ----------------------------------------------------------------------------------------------------------


@click.group()
def tcp():
    """TCP tuning rules for HFC paths."""


@tcp.command("socket-buffer")
@click.option("--cm-buffer", required=True, help="CM buffer, e.g. 10KB (K = KB = KiB = 1024 bytes); the answer is "
                                                 "printed in bytes and in the unit typed.")
@click.option("--downstream", type=RATE, required=True, help="Rate into the CM, e.g. 25M.")
@click.option("--lan", type=RATE, required=True, help="Rate out of the CM to the PC, e.g. 10M.")
@click.option("--connections", type=click.IntRange(1, 10000), default=1, show_default=True)
@click.option("--mss", default="1460", show_default=True, help="TCP maximum segment size (bytes).")
@JSON("the rule's figures (bytes, bits/s)")
def socket_buffer(cm_buffer, downstream, lan, connections, mss, as_json):
    """Largest TCP socket buffer that does not overrun the CM (Cohen & Ramanathan 1998, V.B)."""
    from hfcprov.cli.options import SIZE
    from hfcprov.queue.socketbuf import socket_buffer_limit
    from hfcprov.units import size_unit

    ctx = click.get_current_context()
    params = {p.name: p for p in ctx.command.params}
    buffer_bytes = SIZE.convert(cm_buffer, params["cm_buffer"], ctx)
    r = socket_buffer_limit(buffer_bytes, downstream, lan, connections, SIZE.convert(mss, params["mss"], ctx))
    if as_json:
        click.echo(json.dumps(r.as_dict(), indent=2))
        return
    unit, scale = size_unit(cm_buffer)  # answer in the unit typed, counted as it was read

    def size(n: float) -> str:
        return f"{n:.0f} bytes" + (f" ({n / scale:.1f} {unit})" if scale > 1 else "")

    typed = f"{cm_buffer.strip()} = {r.cm_buffer} bytes (1 {unit} = {scale} bytes)" if scale > 1 else \
        f"{r.cm_buffer} bytes"
    click.echo(f"CM buffer {typed} = C = {r.cm_packets} packets of {r.packet} bytes (MSS {r.mss} + 40)")
    click.echo(f"downstream {format_rate(r.downstream)} into the CM, LAN {format_rate(r.lan)} out, "
               f"{r.connections} connection(s)")
    if r.limit_packets is None:
        click.echo("the LAN is at least as fast as the downstream: the CM never queues, no socket-buffer limit")
        return
    click.echo(f"queued share of each packet: 1 - lan/downstream = {r.fill_fraction:.3f}")
    click.echo(f"rule: C >= (B*n - 1) * {r.fill_fraction:.3f}  (at most one drop per window)")
    click.echo(f"socket buffer limit B = {r.limit_packets:.2f} packets = {size(r.limit_bytes)} per connection")
    click.echo(f"with no drop at all: {r.lossless_packets:.2f} packets = {size(r.lossless_bytes)}")
    click.echo(f"set: {r.setting_segments} segments x {r.mss} = {size(r.setting_bytes)} per connection")
