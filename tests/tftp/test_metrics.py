"""The Prometheus endpoint of a TFTP server, scraped over real HTTP after real transfers."""

from __future__ import annotations

import concurrent.futures
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from hfcprov.tftp import TftpServer, fetch, fetch_many
from hfcprov.tftp.metrics import MetricsEndpoint, MetricsError
from hfcprov.tftp.provider import Provider
from tests.support import free_udp_port, wait_for

from .conftest import SIZES
from .helpers import RawClient, abandoning

REPO = Path(__file__).resolve().parents[2]


def scrape(url: str) -> dict:
    """{(metric sample name, labels as a sorted tuple): value} of one scrape."""
    with urllib.request.urlopen(url, timeout=10) as reply:
        assert reply.status == 200
        assert reply.headers["Content-Type"].startswith("text/plain")
        text = reply.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_counts_after_real_transfers(root):
    with abandoning(TftpServer(root, port=0, timeout=1.0, retries=3)) as srv, MetricsEndpoint(srv) as ep:
        before = scrape(ep.url)
        assert before[("hfcprov_tftp_transfers_in_flight", ())] == 0
        assert before[("hfcprov_tftp_transfer_duration_seconds_count", ())] == 0
        got = fetch_many("127.0.0.1", srv.port, ["gold.cm", "two.cm", "one.cm", "nope.cm", "../x"])
        assert [f.ok for f in got] == [True, True, True, False, False]
        # a client is done at the last DATA; the server, at the final ACK it then gets: wait for that
        wait_for(lambda: srv.summary.transfers == 5, 30, "the server to finish all five transfers")
        m = scrape(ep.url)
    assert m[("hfcprov_tftp_transfers_total", (("result", "ok"),))] == 3
    assert m[("hfcprov_tftp_transfers_total", (("result", "not-found"),))] == 1
    assert m[("hfcprov_tftp_transfers_total", (("result", "access-violation"),))] == 1
    assert m[("hfcprov_tftp_sent_bytes_total", ())] == SIZES["gold.cm"] + SIZES["two.cm"] + SIZES["one.cm"]
    assert m[("hfcprov_tftp_retransmissions_total", ())] == 0
    assert m[("hfcprov_tftp_transfers_in_flight", ())] == 0
    assert m[("hfcprov_tftp_transfer_duration_seconds_count", ())] == 3  # completed transfers only
    assert m[("hfcprov_tftp_transfer_duration_seconds_bucket", (("le", "+Inf"),))] == 3
    assert 0 < m[("hfcprov_tftp_transfer_duration_seconds_sum", ())] < 3 * 5.0
    buckets = sorted((float(dict(k[1])["le"]), v) for k, v in m.items()
                     if k[0] == "hfcprov_tftp_transfer_duration_seconds_bucket")
    assert [v for _, v in buckets] == sorted(v for _, v in buckets)  # cumulative


class HeldBuilds(Provider):
    """Every request waits on one future the test completes: modems sit in the build queue."""

    def __init__(self, data: bytes):
        self.data = data
        self.asked = concurrent.futures.Future()
        self.release = concurrent.futures.Future()
        self.count = 0

    def request(self, filename, client_ip):
        self.count += 1
        if self.count == 2:
            self.asked.set_result(None)
        out = concurrent.futures.Future()
        self.release.add_done_callback(lambda _: out.set_result(self.data))
        return out


def test_build_queue_and_in_flight_while_modems_wait(tmp_path):
    provider = HeldBuilds(b"x" * 1500)
    with abandoning(TftpServer(tmp_path, port=0, dynamic=provider)) as srv, MetricsEndpoint(srv) as ep:
        a, b = RawClient(srv.port), RawClient(srv.port)
        a.rrq("one.cm")
        b.rrq("two.cm")
        provider.asked.result(10)
        m = scrape(ep.url)
        assert m[("hfcprov_tftp_build_queue", ())] == 2
        assert m[("hfcprov_tftp_transfers_in_flight", ())] == 2
        provider.release.set_result(None)
        assert a.recv()[:2] == (3, 1)  # each built file flows: the queue has emptied
        assert b.recv()[:2] == (3, 1)  # (the loop takes the two finished builds in turns, not at once)
        m = scrape(ep.url)
        assert m[("hfcprov_tftp_build_queue", ())] == 0
        assert m[("hfcprov_tftp_transfers_in_flight", ())] == 2  # both transfers under way, none acknowledged
        a.close()
        b.close()


def test_port_in_use_is_one_clear_error(root):
    with abandoning(TftpServer(root, port=0)) as srv, MetricsEndpoint(srv) as first, \
            pytest.raises(MetricsError, match=f"cannot serve metrics on 127.0.0.1:{first.port}"):
        MetricsEndpoint(srv, "127.0.0.1", first.port)


def test_cli_serve_metrics_over_http(root):
    port = free_udp_port()
    proc = subprocess.Popen([sys.executable, "-m", "hfcprov", "tftp", "serve", "--root", str(root),
                             "--listen", f"127.0.0.1:{port}", "--log", "-", "--metrics", "127.0.0.1:0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = proc.stderr.readline()
        assert "serving" in line and "metrics at http://127.0.0.1:" in line, line
        url = line.rsplit("metrics at ", 1)[1].strip()
        assert fetch("127.0.0.1", port, "gold.cm") == (root / "gold.cm").read_bytes()
        m = scrape(url)
        assert m[("hfcprov_tftp_transfers_total", (("result", "ok"),))] == 1
        assert m[("hfcprov_tftp_sent_bytes_total", ())] == SIZES["gold.cm"]
    finally:
        proc.terminate()
        proc.wait(10)
    assert proc.returncode == 0


def test_cli_metrics_without_a_port_is_a_usage_error(root):
    r = subprocess.run([sys.executable, "-m", "hfcprov", "tftp", "serve", "--root", str(root),
                        "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1"], capture_output=True, text=True,
                       cwd=REPO, timeout=30, check=False)
    assert r.returncode == 2 and "give HOST:PORT" in r.stderr
