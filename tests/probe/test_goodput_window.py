"""Goodput counts only bytes that crossed the link inside the measured window: the window starts
when the senders are out of loss recovery (a receiver releases bytes held behind a hole in a burst)."""

from __future__ import annotations

import pytest

from hfcprov.probe.bulk import Flow
from hfcprov.probe.run import ProbeSpec, window_start
from hfcprov.probe.timeline import Timeline
from tests.support import require_root

OPEN, DISORDER, RECOVERY = 0, 1, 3


def flow(states):
    return Flow(timeline=Timeline(), states=states)


def test_window_waits_for_every_sender_to_leave_recovery():
    a = flow([(1.0, RECOVERY), (2.0, RECOVERY), (2.5, OPEN), (3.0, OPEN)])
    b = flow([(1.0, OPEN), (2.4, DISORDER), (2.8, OPEN)])
    assert window_start([a, b], earliest=2.0, extra=5.0) == 2.8
    assert window_start([a, b], earliest=3.0, extra=5.0) == 3.0  # already clean at the warm-up's end
    c = flow([(1.0, RECOVERY), (2.2, OPEN), (2.4, RECOVERY)])
    # no moment with all three clean within 0.7 s: the first with the fewest recovering (2.2: only a)
    assert window_start([a, b, c], earliest=2.0, extra=0.7) == 2.2
    assert window_start([flow([(1.0, RECOVERY), (9.0, RECOVERY)])], earliest=2.0, extra=3.0) == 2.0  # never clean
    assert window_start([a], earliest=2.0, extra=0.0) == 2.0  # adaptive warm-up off
    assert window_start([flow([])], earliest=2.0, extra=3.0) == 2.0  # downstream: no sender here


@pytest.mark.root
@pytest.mark.slow
def test_goodput_never_exceeds_what_the_shaped_link_carries():
    """Issue 16's case: 2 Mb/s, 256 KiB, Reno, 3 s warm-up read 1.98-2.1 Mb/s on a link that carries
    at most 2 Mb/s x 1448/1514 = 1.913 Mb/s of TCP payload (1514-byte frames, 1448 bytes of payload)."""
    require_root("network namespaces and tc")
    from hfcprov.emu import shaping, topology
    from hfcprov.emu.measure import measure
    from hfcprov.model import BufferControl, ServiceFlow

    capacity = 2e6 * 1448 / 1514
    lab = topology.up(rtt=0.04, prefix="hfemu-tgw", docsis_version="3.0")  # drop-tail (no 24.40)
    try:
        lab.apply([shaping.plan(ServiceFlow(direction="upstream", max_sustained_rate=2e6,
                                            buffer=BufferControl(target=262144)))])
        r = measure(lab, ProbeSpec(target=None, flows=1, duration=4.0, warmup=3.0, idle=0.3, cc="reno"))
    finally:
        lab.down()
    assert r.goodput_bps <= capacity * 1.002, (r.goodput_bps, r.extra)
    assert r.goodput_bps > 0.9 * capacity
    # nothing is held at the receiver when the window starts, so its first second cannot beat the link
    # either (a later second may: a hole that forms inside the window releases its bytes in a burst)
    assert r.series["goodput_bps"][0][1] <= capacity * 1.01, r.series["goodput_bps"]
    assert r.extra["warmup_used"] > 3.0  # slow start's overshoot into 256 KiB: recovery outlasts 3 s
