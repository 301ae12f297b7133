"""``hfcprov probe``: measure idle RTT, RTT under TCP load and goodput on a path."""

from __future__ import annotations

import json

import click

from hfcprov.units import format_duration, format_rate, parse_duration, parse_host_port, parse_link_rate


@click.group()
def probe():
    """Latency probes (scapy ICMP/UDP, kernel timestamps) and TCP bulk flows (pinned congestion control)."""


@probe.command()
@click.option("--target", help="The one host to probe (runs the responder for TCP/UDP). Not broadcast/multicast.")
@click.option("--emu", "emu_name", help="Measure across this emulated modem (CPE host to its server).")
@click.option("--port", type=click.IntRange(1, 65535), default=5201, show_default=True, help="Responder port (UDP echo and TCP bulk).")
@click.option("--direction", type=click.Choice(["upstream", "downstream"]), default="upstream", show_default=True)
@click.option("--flows", default=1, show_default=True, help="Parallel TCP bulk flows (0: latency only).")
@click.option("--duration", default="10s", show_default=True, help="Measured time, warm-up excluded.")
@click.option("--warmup", default="2s", show_default=True)
@click.option("--idle", default="2s", show_default=True, help="Probing before any load (idle RTT).")
@click.option("--cc", default="cubic", show_default=True, help="TCP congestion control, pinned per socket.")
@click.option("--probe", "kind", type=click.Choice(["icmp", "udp"]), default="icmp", show_default=True)
@click.option("--rate", "probe_rate", default=20.0, show_default=True, help="Probes per second.")
@click.option("--shaped-rate", help="The service flow's rate, for utilization (e.g. 2M).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the RunResult (with series) here.")
def run(target, emu_name, port, direction, flows, duration, warmup, idle, cc, kind, probe_rate, shaped_rate, json_out):
    """One measurement; prints the summary, optionally writes the full result as JSON."""
    from hfcprov.fileio import atomic_write
    from hfcprov.probe.run import ProbeSpec, measure

    if not target and not emu_name:
        raise click.UsageError("give --target HOST or --emu NAME")
    spec = ProbeSpec(target=target, port=port, direction=direction, flows=flows, duration=parse_duration(duration),
                     warmup=parse_duration(warmup), idle=parse_duration(idle), cc=cc, probe=kind, rate=probe_rate,
                     shaped_rate_bps=parse_link_rate(shaped_rate) if shaped_rate else None)
    if emu_name:
        from hfcprov.emu.measure import measure as emu_measure
        from hfcprov.emu.topology import Lab

        result = emu_measure(Lab.load(emu_name), spec)
    else:
        result = measure(spec)
    if json_out:
        atomic_write(json_out, json.dumps(result.to_dict(), indent=1) + "\n")
    _summary(result)


@probe.command()
@click.option("--listen", default="0.0.0.0:5201", show_default=True, help="HOST:PORT for UDP echo and TCP bulk.")
def responder(listen):
    """Serve as the far end of measurements until interrupted."""
    import threading

    from hfcprov.probe.responder import Responder

    host, port = parse_host_port(listen, 5201, default_host="0.0.0.0", any_port=True)
    r = Responder(host, port).start()
    click.echo(f"responder on {host}:{r.port} (udp echo, tcp bulk); Ctrl-C stops")
    try:
        threading.Event().wait()
    finally:
        r.stop()


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
