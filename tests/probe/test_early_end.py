"""Uploads stop when the measured window's end is known, not after the whole warm-up allowance."""

from __future__ import annotations

import time

from hfcprov.probe.bulk import run_flows
from hfcprov.probe.responder import Responder


def test_uploads_stop_at_the_time_end_at_gives_and_still_bring_the_receivers_record():
    with Responder("127.0.0.1", 0) as r:
        t0 = time.monotonic()
        flows = run_flows("127.0.0.1", r.port, "upstream", 2, 20.0, "reno",
                          end_at=lambda fl: t0 + 1.0 if time.monotonic() > t0 + 0.5 else None)
    for f in flows:
        assert f.error is None
        # the receiver's record covers until the stop, and ends there: not the 20 s asked for
        # (its own clock, the machine's monotonic one; ten seconds of slack for a busy machine)
        assert f.timeline.bytes > 0 and f.timeline.t[-1] >= f.timeline.t[0] + 0.9
        assert f.timeline.t[-1] < t0 + 10.0


def test_without_end_at_an_upload_runs_its_time_and_reports_on_its_own_connection():
    with Responder("127.0.0.1", 0) as r:
        flows = run_flows("127.0.0.1", r.port, "upstream", 1, 1.0, "reno")
    tl = flows[0].timeline
    assert flows[0].error is None and tl.bytes > 0
    assert tl.t[-1] - tl.t[0] >= 0.95  # the receiver took bytes for the whole second asked, then reported
