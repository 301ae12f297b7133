"""``hfcprov tftp``: serve config files to modems, and fetch one (for checks)."""

from __future__ import annotations

import signal
import sys

import click

from hfcprov.cli.options import DURATION, JSON, MKDIR, SIZE, ListenAddress, listen_option


def _host_port(text: str, default_port: int) -> tuple[str, int]:
    from hfcprov.units import (
        parse_host_port,  # ports checked 1..65535 (0: any, for --listen)
    )

    return parse_host_port(text, default_port, default_host="0.0.0.0", any_port=True)


@click.group()
def tftp():
    """Serve config files to modems over TFTP."""


@tftp.command()
@click.option("--root", required=True, type=click.Path(file_okay=False), help="Folder served (read-only).")
@listen_option(69, "TFTP requests")
@click.option("--dynamic", "dynamic_path", type=click.Path(dir_okay=False),
              help="YAML: build missing files from a tier template + inventory (see examples/tftp-dynamic.yaml).")
@click.option("--log", "log_path", default="-", show_default=True, help="JSON-lines transfer log file ('-': stdout).")
@click.option("--timeout", type=DURATION, default="1s", show_default=True,
              help="Retransmission timeout (a client's option wins).")
@click.option("--retries", default=5, show_default=True, help="Consecutive timeouts before a transfer is dropped.")
@click.option("--rcvbuf", type=SIZE, default="16M", show_default=True, help="Receive buffer of the listening socket.")
@click.option("--workers", default=4, show_default=True, help="Threads for dynamic-file requests that must read a file first (an edited inventory); builds run in the worker processes set by the dynamic YAML's processes: key.")
@click.option("--summary-every", type=DURATION, default="60s", show_default=True,
              help="Interval of the summary log line.")
@click.option("--warm", is_flag=True, help="Build every modem's dynamic file in the background right after start (optional: cold builds are shared and pooled).")
@click.option("--priority", type=click.IntRange(-20, 19), default=None,
              help="Nice value of the server (default: -10 as root, so its loop answers before ordinary work; "
                   "else unchanged). Build workers run at ordinary priority, or the server's when lower.")
@click.option("--tod", "tod_listen", is_flag=False, flag_value="", default=None, metavar="[HOST:PORT]",
              help="Also answer Time of Day (RFC 868, UDP and TCP) for the booting modems; alone: on the TFTP "
                   "address, port 37.")
@click.option("--metrics", "metrics_at", type=ListenAddress(-1),
              help="Serve Prometheus metrics at http://HOST:PORT/metrics (transfers by result, bytes, in flight, "
                   "build queue, transfer time); port 0: any.")
def serve(root, listen, dynamic_path, log_path, timeout, retries, rcvbuf, workers, summary_every, warm, priority,
          tod_listen, metrics_at):
    """Serve ROOT read-only over TFTP until SIGTERM/SIGINT (in-flight transfers finish first)."""
    from hfcprov.tftp.server import TftpServer, raise_fd_limit, raise_priority

    host, port = listen
    if metrics_at is not None and metrics_at[1] < 0:
        raise click.UsageError("--metrics: give HOST:PORT (port 0: any)")
    raise_priority(priority)  # before the build workers start: they run relative to it
    dynamic = None
    if dynamic_path:
        from hfcprov.tftp.dynamic import load_dynamic

        dynamic = load_dynamic(dynamic_path)
    raise_fd_limit()
    server = TftpServer(root, host, port, dynamic=dynamic, log=log_path, timeout=timeout,
                        retries=retries, rcvbuf=rcvbuf, workers=workers, summary_interval=summary_every)
    time_server = None
    if tod_listen is not None:
        from hfcprov.boot.tod import TOD_PORT, TimeServer
        from hfcprov.units import parse_host_port

        tod_host, tod_port = (parse_host_port(tod_listen, TOD_PORT, default_host=host, any_port=True)
                              if tod_listen else (host, TOD_PORT))
        time_server = TimeServer(tod_host, tod_port).start()  # refused before the TFTP server starts serving
    server.start()
    endpoint = None
    if metrics_at is not None:
        from hfcprov.tftp.metrics import MetricsEndpoint

        try:
            endpoint = MetricsEndpoint(server, *metrics_at)
        except Exception:
            server.stop(graceful=False)
            if time_server is not None:
                time_server.stop()
            raise
    if warm and dynamic is not None:
        import threading

        def warm_up():
            import time

            t0 = time.monotonic()
            n = dynamic.warm(server.client_families)  # framed for the clients the address hears
            server.log.event("warm", modems=n, seconds=round(time.monotonic() - t0, 3))

        threading.Thread(target=warm_up, name="tftp-warm", daemon=True).start()
    click.echo(f"hfcprov tftp: serving {server.root} on {'[' + server.host + ']' if ':' in server.host else server.host}:{server.port}"
               f"{' with dynamic files from ' + dynamic_path if dynamic_path else ''}"
               f"{'; RFC 868 time on ' + time_server.address if time_server else ''}"
               f"{'; metrics at ' + endpoint.url if endpoint else ''}", err=True)
    if dynamic is not None and not dynamic.signs:
        click.echo("hfcprov: warning: no CMTS shared secret (secret_file/secret_map in the dynamic YAML): "
                   "dynamic files carry no CMTS MIC, and a CMTS refuses such a modem's registration", err=True)

    def on_signal(signum, frame):
        # First signal: finish what is in flight; a second one: stop now.
        server.request_stop(graceful=not server.stopping)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # No polling: a thread waking twice a second cost an idle server 0.26-15 ms of CPU a second,
    # by machine (bench/tftp_wakeup.py's idle column).
    # The kernel hands a signal sent to the process to this thread (it blocks none), which
    # interrupts the wait to run the handler; the loop's exit ends the wait.
    server.wait()
    server.stop()
    if time_server is not None:
        time_server.stop()
    if endpoint is not None:
        endpoint.close()
    s = server.summary
    click.echo(f"hfcprov tftp: stopped after {s.transfers} transfers ({s.ok} ok, {s.failed} failed)", err=True)


@tftp.command()
@click.argument("server")
@click.argument("filename")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here (default: stdout).")
@MKDIR
@click.option("--blksize", type=int, help="RFC 2348 block size to ask for.")
@click.option("--windowsize", type=int, help="RFC 7440 window to ask for.")
@click.option("--timeout", type=DURATION, default="1s", show_default=True, help="Client retransmission timeout.")
@JSON("what was fetched, with -o (server, file, bytes, seconds, SHA-256)")
def get(server, filename, output, mkdir, blksize, windowsize, timeout, as_json):
    """Fetch FILENAME from SERVER (HOST[:PORT])."""
    import json
    import time

    from hfcprov.fileio import atomic_write, output_folder
    from hfcprov.tftp.client import fetch

    if as_json and not output:
        raise click.UsageError("--json needs -o FILE: without it the file itself goes to stdout")
    output_folder(output, mkdir)
    host, port = _host_port(server, 69)
    options = {k: v for k, v in (("blksize", blksize), ("windowsize", windowsize)) if v}
    started = time.monotonic()
    data = fetch(host, port, filename, options, timeout=timeout)
    seconds = time.monotonic() - started
    if output:
        atomic_write(output, data)
    else:
        sys.stdout.buffer.write(data)
    if as_json:
        import hashlib

        click.echo(json.dumps({"server": host, "port": port, "filename": filename, "output": output,
                               "bytes": len(data), "seconds": round(seconds, 6),
                               "sha256": hashlib.sha256(data).hexdigest()}, indent=2))
