"""Prometheus metrics of a running TFTP server (``hfcprov tftp serve --metrics HOST:PORT``).

A headend server is watched by scraping, not by reading its log. Nothing is counted twice:
a collector reads, at each scrape, the counters the loop keeps anyway (the log's summary, the
transfers in flight, the modems waiting for a build, the transfer-time buckets), so a storm
pays nothing per transfer for being watched.

Exposed (``hfcprov_tftp_`` prefix):

- ``transfers_total{result}``: transfers ended, by result (``ok``, ``not-found``, ``timeout``...,
  the log's ``result`` values);
- ``sent_bytes_total``: bytes of files the modems acknowledged;
- ``retransmissions_total``: DATA and OACK datagrams sent again;
- ``dropped_requests_total``: requests not even answered (no socket left, shutting down);
- ``transfers_in_flight``: transfers under way, including modems waiting for a dynamic build;
- ``build_queue``: modems waiting for their dynamic file to be built;
- ``transfer_duration_seconds``: histogram of completed transfers' durations (RRQ to last ACK).
"""

from __future__ import annotations

import socket
import threading

from hfcprov.errors import HfcprovError

PREFIX = "hfcprov_tftp_"


class MetricsError(HfcprovError):
    """The metrics endpoint cannot start (address in use, no such address)."""


class ServerCollector:
    """A ``prometheus_client`` collector over one ``TftpServer``; read from the HTTP thread."""

    def __init__(self, server):
        self.server = server

    def collect(self):
        from prometheus_client.core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        srv = self.server
        summary = srv.summary
        by_result = CounterMetricFamily(PREFIX + "transfers", "TFTP transfers ended, by result (the log's result)",
                                        labels=["result"])
        for result, n in sorted(dict(summary.results).items()):  # dict(): one atomic copy under the GIL
            by_result.add_metric([result], n)
        yield by_result
        yield CounterMetricFamily(PREFIX + "sent_bytes", "Bytes of files the modems acknowledged",
                                  value=summary.bytes)
        yield CounterMetricFamily(PREFIX + "retransmissions", "DATA and OACK datagrams sent again",
                                  value=summary.retries)
        yield CounterMetricFamily(PREFIX + "dropped_requests",
                                  "Requests not answered (no socket left for a transfer, or shutting down)",
                                  value=summary.dropped)
        yield GaugeMetricFamily(PREFIX + "transfers_in_flight",
                                "Transfers under way, including modems waiting for a dynamic build", value=srv.active)
        yield GaugeMetricFamily(PREFIX + "build_queue", "Modems waiting for their dynamic file to be built",
                                value=srv.waiting_builds)
        times = srv.durations
        yield HistogramMetricFamily(PREFIX + "transfer_duration_seconds",
                                    "Completed transfers' durations, from the request to the last acknowledgement",
                                    buckets=times.buckets(), sum_value=times.total)


class MetricsEndpoint:
    """The HTTP endpoint serving one server's metrics at ``/metrics``; ``close()`` stops it.

    Its thread sleeps until a scrape arrives, where ``prometheus_client.start_http_server`` polls twice
    a second: on an idle headend the polls cost more than the scrapes (bench/tftp_wakeup.py's idle
    column shows what a polling thread costs)."""

    def __init__(self, server, host: str = "127.0.0.1", port: int = 0):
        from prometheus_client import CollectorRegistry, make_wsgi_app

        registry = CollectorRegistry(auto_describe=True)
        registry.register(ServerCollector(server))
        host = host.strip("[]") or "0.0.0.0"
        try:
            family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
            self._httpd = _http_server(family, address[:2], make_wsgi_app(registry))
        except OSError as err:
            raise MetricsError(f"cannot serve metrics on {host}:{port}: {err.strerror or err}") from None
        self.host, self.port = self._httpd.server_address[:2]
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=f"metrics-{self.port}", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._closed.is_set():
            self._httpd.handle_request()  # no timeout: waits for a connection, close() makes one

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        wake = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(self.host, self.host)
        try:  # the thread waits for a connection: one ends the wait, and it sees it is closed
            socket.create_connection((wake, self.port), timeout=1.0).close()
        except OSError:
            pass  # the thread is not waiting (it is about to see _closed), or the address is gone
        self._thread.join(5)
        self._httpd.server_close()  # release the port at once

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _http_server(family: int, address: tuple, app):
    """A WSGI server on ``address``: each scrape answered on a thread of its own, nothing logged."""
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

    class Quiet(WSGIRequestHandler):
        def log_message(self, format, *args):  # the base class's signature
            pass  # a scrape every few seconds is not news

    class Server(ThreadingMixIn, WSGIServer):
        address_family = family
        daemon_threads = True
        timeout = None  # handle_request waits for a connection however long it takes

    httpd = Server(address, Quiet)
    httpd.set_app(app)
    return httpd
