"""``hfcprov tod``: the Time of Day server (RFC 868) modems ask before fetching their file."""

from __future__ import annotations

import signal

import click

from hfcprov.cli.options import DURATION, listen_option


@click.group()
def tod():
    """Time of Day (RFC 868) for booting modems."""


@tod.command()
@listen_option(37, "Time of Day requests", default_host="::")
@click.option("--udp/--no-udp", default=True, show_default=True, help="Answer over UDP (what modems use).")
@click.option("--tcp/--no-tcp", default=True, show_default=True, help="Answer over TCP.")
@click.option("--log", "log_path", default=None, help="JSON-lines log of each answer ('-': stdout; default: none).")
def serve(listen, udp, tcp, log_path):
    """Answer RFC 868 time requests until SIGTERM/SIGINT."""
    import sys

    from hfcprov.boot.tod import TimeServer

    host, port = listen
    server = TimeServer(host, port, udp=udp, tcp=tcp, log=sys.stdout if log_path == "-" else log_path).start()
    protos = "+".join(p for p, on in (("UDP", udp), ("TCP", tcp)) if on)
    click.echo(f"hfcprov tod: serving RFC 868 time on {server.address} ({protos})", err=True)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    while not stop:
        signal.pause()
    server.stop()
    click.echo(f"hfcprov tod: stopped after {server.answered['udp']} UDP and {server.answered['tcp']} TCP answers",
               err=True)


@tod.command()
@click.argument("server")
@click.option("--tcp", is_flag=True, help="Ask over TCP instead of UDP.")
@click.option("--timeout", type=DURATION, default="2s", show_default=True, help="How long to wait for each answer.")
def get(server, tcp, timeout):
    """Ask SERVER (HOST[:PORT]) for the time; print it (UTC) and its offset from this host's clock."""
    import time
    from datetime import UTC, datetime

    from hfcprov.boot.tod import TOD_PORT, query_time, unix_time
    from hfcprov.units import parse_host_port

    host, port = parse_host_port(server, TOD_PORT)
    value = query_time(host, port, proto="tcp" if tcp else "udp", timeout=timeout)
    at = unix_time(value)
    stamp = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    click.echo(f"{stamp} (RFC 868 {value}; {at - int(time.time()):+d} s from this host)")
