"""The probe on loopback (root for packet capture): kernel-stamped RTT, pacing, TCP flows, refusals."""

import json
import subprocess

import pytest

from hfcprov.probe.errors import ProbeError
from hfcprov.probe.latency import LatencyProbe
from hfcprov.probe.responder import Responder
from hfcprov.probe.run import ProbeSpec, measure
from tests.support import host_priority, require_root

pytestmark = pytest.mark.root


@pytest.fixture
def responder():
    """A responder on the loopback of a namespace of the test's own: the probe captures every packet on
    its interface, and the machine's own loopback carries whatever else runs here."""
    require_root("raw sockets and packet capture")
    import os

    from hfcprov.emu import netns

    name = f"hfprobe-{os.urandom(3).hex()}"
    netns.add(name)
    try:
        with netns.entered(name), Responder("127.0.0.1", 0) as r:
            yield r
    finally:
        netns.delete(name)


@pytest.mark.parametrize("kind", ["icmp", "udp"])
def test_probes_are_answered_paced_and_stamped_by_the_kernel(responder, kind):
    import statistics

    with host_priority():  # the probe's threads are the host's: a busy machine must not starve them
        p = LatencyProbe("127.0.0.1", kind=kind, rate=50, port=responder.port).start()
        assert p.wait_sent(50, timeout=30)  # a second's worth of probes, however long the machine takes
        probes = p.stop(linger=0.2)
    assert [x.seq for x in probes] == list(range(len(probes))) and len(probes) >= 50
    rtts = [x.rtt for x in probes if x.rtt is not None]
    assert len(rtts) == len(probes)
    # loopback: microseconds, not Python's milliseconds (the median: on a busy machine the UDP
    # echo's thread may wait its turn now and then, and that wait is part of its RTT)
    assert all(r > 0 for r in rtts) and statistics.median(rtts) < 0.002
    # paced without drift: probe i leaves at t0 + i/50; a late wake-up (a busy CI box) delays one
    # probe, never the ones after it, so the offsets do not grow along the run
    t0 = probes[0].sent_at
    offsets = [x.sent_at - (t0 + x.seq / 50) for x in probes]
    assert statistics.median(offsets) < 0.005
    assert statistics.median(offsets[-10:]) - statistics.median(offsets[:10]) < 0.005


def test_measure_on_loopback_gives_a_complete_result(responder):
    r = measure(ProbeSpec(target="127.0.0.1", port=responder.port, flows=2, duration=1.0, warmup=0.5, idle=0.5,
                          cc="reno", probe="udp", rate=40, shaped_rate_bps=None, source="modem"))
    assert len(r.flows) == 2 and all(f.goodput_bps > 1e6 for f in r.flows)
    assert r.goodput_bps == pytest.approx(sum(f.goodput_bps for f in r.flows))
    assert r.latency_idle.count > 10 and r.latency_loaded.count > 20
    assert r.extra["congestion_control"] == "reno"
    d = json.loads(json.dumps(r.to_dict()))
    assert d["latency_loaded"]["p99"] is not None and "rtt" in d["series"]
    # every RTT of the loaded window, as the simulator keeps them: what a report's CDF draws
    assert len(r.series["rtt_loaded"]) == r.latency_loaded.count


def test_downstream_flows_are_received_here(responder):
    r = measure(ProbeSpec(target="127.0.0.1", port=responder.port, direction="downstream", flows=1, duration=1.0,
                          warmup=0.3, idle=0.2, cc="cubic"))
    assert r.goodput_bps > 1e6


def test_unknown_congestion_control_is_refused_not_replaced(responder):
    with pytest.raises(ProbeError, match="congestion control 'nosuchcc' not available"):
        measure(ProbeSpec(target="127.0.0.1", port=responder.port, flows=1, duration=0.5, warmup=0.1, idle=0.1,
                          cc="nosuchcc"))


def test_no_responder_is_one_line_from_the_cli():
    require_root("raw sockets and packet capture")
    from tests.support import free_tcp_port

    port = free_tcp_port()
    proc = subprocess.run([".venv/bin/hfcprov", "probe", "run", "--target", f"127.0.0.1:{port}",
                           "--duration", "0.5s", "--warmup", "0s", "--idle", "0.2s"], check=False, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and f"127.0.0.1:{port}" in proc.stderr


def test_cli_refuses_broadcast_target():
    proc = subprocess.run([".venv/bin/hfcprov", "probe", "run", "--target", "255.255.255.255"],
                          check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "broadcast" in proc.stderr and proc.stderr.count("\n") == 1
