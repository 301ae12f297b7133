"""``hfcprov probe``: measure idle RTT, RTT under TCP load and goodput on a path."""

from __future__ import annotations

import json

import click

from hfcprov.cli.options import DURATION, JSON, MKDIR, RATE, listen_option
from hfcprov.probe import DEFAULT_PORT
from hfcprov.units import format_duration, format_rate


@click.group()
def probe():
    """Latency probes (scapy ICMP/UDP, kernel timestamps) and TCP bulk flows (pinned congestion control)."""


@probe.command()
@click.option("--target", metavar="HOST[:PORT]",
              help=f"The one host to probe and its responder's port (default {DEFAULT_PORT}; "
                   "`hfcprov probe responder` there). Not broadcast/multicast.")
@click.option("--emu", "emu_name", help="Measure across this emulated modem (CPE host to its server).")
@click.option("--port", type=click.IntRange(1, 65535), default=None, hidden=True,
              help="Old spelling of --target HOST:PORT.")
@click.option("--direction", type=click.Choice(["upstream", "downstream"]), default="upstream", show_default=True)
@click.option("--flows", default=1, show_default=True, help="Parallel TCP bulk flows (0: latency only).")
@click.option("--duration", type=DURATION, default="10s", show_default=True, help="Measured time, warm-up excluded.")
@click.option("--warmup", type=DURATION, default="2s", show_default=True)
@click.option("--idle", type=DURATION, default="2s", show_default=True, help="Probing before any load (idle RTT).")
@click.option("--cc", default="cubic", show_default=True, help="TCP congestion control, pinned per socket.")
@click.option("--probe", "kind", type=click.Choice(["icmp", "udp"]), default="icmp", show_default=True)
@click.option("--interval", type=DURATION, default="50ms", show_default=True,
              help="Time between latency probes (ping -i); 50ms is 20 probes a second.")
@click.option("--rate", "shaped_rate", type=RATE, default=None,
              help="The service flow's rate (a bit rate, e.g. 2M), for utilization. The probes' pace is --interval.")
@click.option("--shaped-rate", "old_shaped_rate", type=RATE, default=None, hidden=True, help="Old spelling of --rate.")
@JSON("the summary (the same names and units as `sim run --json`)")
@click.option("--out", type=click.Path(dir_okay=False), help="Write the full RunResult (with series) as JSON here.")
@MKDIR
def run(target, emu_name, port, direction, flows, duration, warmup, idle, cc, kind, interval, shaped_rate,
        old_shaped_rate, as_json, out, mkdir):
    """One measurement; prints the summary, optionally writes the full result as JSON."""
    from hfcprov.fileio import atomic_write, output_folder
    from hfcprov.probe.run import ProbeSpec, measure
    from hfcprov.units import parse_host_port

    if not target and not emu_name:
        raise click.UsageError("give --target HOST[:PORT] or --emu NAME")
    if interval <= 0:
        raise click.BadParameter("must be above 0", param_hint="'--interval'")
    output_folder(out, mkdir)
    host, target_port = (None, DEFAULT_PORT)
    if target:
        try:
            host, target_port = parse_host_port(target, DEFAULT_PORT)
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="'--target'") from None
    spec = ProbeSpec(target=host, port=port or target_port, direction=direction, flows=flows, duration=duration,
                     warmup=warmup, idle=idle, cc=cc, probe=kind, rate=1.0 / interval,
                     shaped_rate_bps=shaped_rate or old_shaped_rate)
    if emu_name:
        from hfcprov.emu.measure import measure as emu_measure
        from hfcprov.emu.topology import Lab

        result = emu_measure(Lab.load(emu_name), spec)
    else:
        result = measure(spec)
    if out:
        atomic_write(out, json.dumps(result.to_dict(), indent=1) + "\n")
    if as_json:
        click.echo(json.dumps(summary_row(result), indent=1))
        return
    _summary(result)


@probe.command()
@listen_option(DEFAULT_PORT, "UDP echo and TCP bulk")
def responder(listen):
    """Serve as the far end of measurements until interrupted."""
    import threading

    from hfcprov.probe.responder import Responder

    host, port = listen
    r = Responder(host, port).start()
    click.echo(f"responder on {host}:{r.port} (udp echo, tcp bulk); Ctrl-C stops")
    try:
        threading.Event().wait()
    finally:
        r.stop()


def summary_row(r) -> dict:
    """A measurement's figures, named as `sim run --json` names them (units in the names)."""

    def ms(v):
        return None if v is None else v * 1e3

    return {"goodput_mbps": r.goodput_bps / 1e6, "utilization": r.utilization,
            "rtt_idle_p50_ms": ms(r.latency_idle.p50), "rtt_idle_p90_ms": ms(r.latency_idle.p90),
            "rtt_idle_p99_ms": ms(r.latency_idle.p99), "rtt_loaded_p50_ms": ms(r.latency_loaded.p50),
            "rtt_loaded_p90_ms": ms(r.latency_loaded.p90), "rtt_loaded_p99_ms": ms(r.latency_loaded.p99),
            "probe_loss": r.latency_loaded.loss, "duration_s": r.duration,
            "flows": [{"flow": i, "goodput_mbps": f.goodput_bps / 1e6, "retx": f.retransmissions}
                      for i, f in enumerate(r.flows)]}


def _summary(r):
    def lat(s):
        if not s.count:
            return f"no answers ({s.sent} sent)"
        return (f"p50 {format_duration(s.p50)}, p90 {format_duration(s.p90)}, p99 {format_duration(s.p99)}"
                f" ({s.count}/{s.sent} answered)")

    click.echo(f"idle RTT:        {lat(r.latency_idle)}")
    click.echo(f"RTT under load:  {lat(r.latency_loaded)}")
    util = f" ({r.utilization:.1%} of {format_rate(r.shaped_rate_bps)})" if r.utilization is not None else ""
    click.echo(f"goodput:         {format_rate(r.goodput_bps)}{util} over {format_duration(r.duration)}, "
               f"{len(r.flows)} flow(s), {r.extra.get('congestion_control')}")
    for i, f in enumerate(r.flows):
        click.echo(f"  flow {i}: {format_rate(f.goodput_bps)}"
                   + (f", {f.retransmissions} retransmissions" if f.retransmissions is not None else ""))
