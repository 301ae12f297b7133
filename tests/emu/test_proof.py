"""Issue 8's proof on real kernel TCP through the emulated modem.

2 Mb/s upstream, 40 ms base RTT, Buffer Control target 16 KiB and 64 KiB:
the RTT under load exceeds the idle RTT by about buffer/rate (p99, within 20%),
and goodput fills the shaped rate. tbf counts whole Ethernet frames (1514 B
for 1448 B of TCP payload with timestamps), as a DOCSIS rate counts the frame,
so a saturated flow's goodput is 1448/1514 = 95.6% of the rate: the goodput
check is against that payload capacity (within 5%), which is the issue's
"within 5% of the shaped rate" with both counted in frames. (A second check,
payload goodput within 5.5% of the raw rate, left 1.1% below capacity and
failed about one full run in four on an ordinary 1.4% shortfall.)
"""

import pytest

from hfcprov.emu import shaping
from hfcprov.emu.measure import measure
from hfcprov.model import BufferControl, ServiceFlow
from hfcprov.probe.run import ProbeSpec

pytestmark = [pytest.mark.root, pytest.mark.slow]

PAYLOAD_SHARE = 1448 / 1514


@pytest.fixture(scope="module")
def lab():
    from tests.support import require_root

    require_root()
    import os

    from hfcprov.emu import topology

    prefix = f"hfemu-p{os.urandom(2).hex()}"
    lab = topology.up(rtt=0.040, prefix=prefix, docsis_version="3.0")  # drop-tail: the bfifo figures
    yield lab
    lab.down()
    topology.down_all(prefix)


def upstream(lab, rate, buffer):
    lab.apply([shaping.plan(ServiceFlow(direction="upstream", max_sustained_rate=rate,
                                        buffer=BufferControl(target=buffer)))])


@pytest.mark.parametrize("buffer", [16 * 1024, 64 * 1024])
def test_latency_under_load_is_idle_plus_buffer_over_rate_and_goodput_fills_the_rate(lab, buffer):
    rate = 2e6
    upstream(lab, rate, buffer)
    r = measure(lab, ProbeSpec(target=None, flows=2, duration=5, warmup=2, idle=1.5, cc="cubic"))
    assert r.latency_idle.count >= 20 and r.latency_idle.loss == 0
    # userspace delay line on a shared 2-core box: a few ms of scheduling noise at most
    assert abs(r.latency_idle.p50 - 0.040) < 0.006, r.latency_idle
    excess = r.latency_loaded.p99 - r.latency_idle.p50
    expected = buffer * 8 / rate
    assert abs(excess - expected) <= 0.2 * expected, (excess, expected, r.latency_loaded)
    # a queue that holds less than the buffer shows less delay: the check can fail
    assert r.latency_loaded.p50 > r.latency_idle.p50 + 0.5 * expected
    assert abs(r.goodput_bps - rate * PAYLOAD_SHARE) <= 0.05 * rate * PAYLOAD_SHARE, r.goodput_bps
    assert r.extra["congestion_control"] == "cubic"
    assert [p for _, p in r.series["goodput_bps"]], "per-second goodput series"


def test_ten_megabit_flow_with_more_buffer_gets_more_goodput(lab):
    rate = 10e6
    results = {}
    for buffer in (3 * 1024, 128 * 1024):
        upstream(lab, rate, buffer)
        results[buffer] = measure(lab, ProbeSpec(target=None, flows=1, duration=5, warmup=2, idle=0.5, cc="reno"))
    small, large = results[3 * 1024], results[128 * 1024]
    # BDP at 10 Mb/s x 40 ms is 50 kB: 3 KiB (two frames) leaves one reno flow well short of the
    # rate after each halving of its window, 128 KiB keeps the queue from running dry
    assert large.goodput_bps > 1.1 * small.goodput_bps, (small.goodput_bps, large.goodput_bps)
    assert large.goodput_bps > 0.8 * rate, large.goodput_bps
    assert large.latency_loaded.p50 > small.latency_loaded.p50
