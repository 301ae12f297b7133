"""Fixtures for the lab tests: small campaign files and stored results."""

from __future__ import annotations

import textwrap

import pytest

from hfcprov.results import LatencyStats, RunResult


def write(tmp_path, text: str, name: str = "campaign.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def textbook_result(point, source: str = "sim") -> RunResult:
    """A result shaped like White et al.'s measurements: a full buffer adds buffer/rate of delay,
    and a single flow fills the pipe only when the buffer covers the bandwidth-delay product."""
    bdp = point.upstream_rate * point.rtt / 8
    share = min(1.0, 0.75 + 0.25 * point.buffer / bdp) if bdp else 1.0
    queue = point.buffer * 8 / point.upstream_rate
    loaded = [point.rtt + queue * f for f in (0.5, 0.8, 1.0)] * 10
    return RunResult(source=source, duration=10.0, goodput_bps=point.upstream_rate * share * 0.95,
                     shaped_rate_bps=point.upstream_rate,
                     latency_idle=LatencyStats.of([point.rtt] * 20),
                     latency_loaded=LatencyStats.of(loaded),
                     series={"queue_bytes": [(0.0, 0.0), (1.0, float(point.buffer))],
                             "rtt_loaded": [(2.0 + 0.1 * i, v) for i, v in enumerate(loaded)]})


@pytest.fixture
def small_spec(tmp_path):
    return write(tmp_path, """
        name: small
        grid:
          upstream_rate: [1M, 5M]
          buffer: [16KiB, 64KiB, 256KiB]
          rtt: [40ms, 100ms]
        traffic: {duration: 4s, warmup: 1s}
    """)
