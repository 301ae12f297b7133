"""The request-grant MAC on its own: access delay, request caps, rate limit, sharing, buffer accounting."""

import statistics

import pytest

from hfcprov.sim.engine import Engine
from hfcprov.sim.link import Link
from hfcprov.queue.grant import MacConfigError, MacParams
from hfcprov.sim.mac import UpstreamChannel

from .harness import Sink, cbr, mbps, run_cms


def test_lone_packet_waits_a_request_grant_cycle_on_an_idle_channel():
    """Not work-conserving: an idle channel still makes a packet wait for request + MAP + grant."""
    p = MacParams(map_interval=0.002, map_advance=0.003, propagation=0.0002, contention_collision=0.0)
    _, _, cms, sinks = run_cms(p, pps=10, size=200, duration=3.0)
    d = sinks[0].delays
    assert len(d) == 30
    # contention slot >= one MAP advance away, the grant >= another: two MAP advances at least
    assert min(d) > 2 * p.map_advance + p.propagation
    assert max(d) < 2 * (p.map_advance + 2 * p.map_interval) + p.propagation + 0.0005
    assert cms[0].requests_contention == 30 and cms[0].requests_piggyback == 0
    # the same packets over a plain shaped link leave at once
    eng = Engine()
    sink = Sink(eng)
    link = Link(eng, sink, capacity=30.72e6, rate=10e6, buffer=65536)
    cbr(eng, link, 0, 10, 200)
    eng.run(3.0)
    assert max(sink.delays) < 0.0002


def test_request_collisions_are_on_by_default_and_spread_the_access_delay():
    p = MacParams(map_interval=0.002, map_advance=0.003, propagation=0.0002)
    assert p.contention_collision > 0
    _, _, cms, sinks = run_cms(p, pps=10, size=200, duration=20.0)
    quiet = MacParams(map_interval=0.002, map_advance=0.003, propagation=0.0002, contention_collision=0.0)
    _, _, _, calm = run_cms(quiet, pps=10, size=200, duration=20.0)
    assert cms[0].collisions > 0
    assert max(sinks[0].delays) > max(calm[0].delays) + p.map_interval  # a backoff of at least a MAP
    assert statistics.pstdev(sinks[0].delays) > statistics.pstdev(calm[0].delays)


def test_docsis11_request_cap_limits_one_modem():
    """255 minislots x 16 B per request, one request per cycle: two 1524 B frames per cycle."""
    p = MacParams.docsis11()
    dur = 3.0
    _, _, cms, sinks = run_cms(p, pps=2000, size=1500, duration=dur, buffer=65536)
    got = mbps(sinks[0], dur)
    assert 2.5 < got < 5.5  # far below the 30 Mb/s channel
    assert cms[0].requests_piggyback > 100 and cms[0].dropped > 0
    _, _, _, sinks30 = run_cms(MacParams.docsis30(), pps=2000, size=1500, duration=dur, buffer=65536)
    assert mbps(sinks30[0], dur) > 2.5 * got


def test_cmts_enforces_max_sustained_rate():
    dur = 4.0
    sinks = run_cms(MacParams.docsis30(), pps=2000, size=1500, duration=dur,
                    buffer=65536, rate=10e6, burst=3044)[3]
    # sink counts IP bytes; the bucket counts frames (IP + 24 B), so slightly under 10 Mb/s
    assert mbps(sinks[0], dur) == pytest.approx(10.0 * 1500 / 1524, rel=0.04)


def test_several_modems_share_the_channel_fairly():
    dur = 3.0
    p = MacParams.docsis30(channel_rate=10.24e6)
    sinks = run_cms(p, n_cm=4, pps=1500, size=1500, duration=dur, buffer=32768)[3]
    rates = [mbps(s, dur) for s in sinks]
    assert sum(rates) < 10.24
    assert sum(rates) > 0.8 * 10.24 * 1500 / 1524
    assert max(rates) / min(rates) < 1.15


def test_other_modems_take_their_share():
    dur = 3.0
    base = MacParams.docsis30(channel_rate=10.24e6)
    _, _, _, alone = run_cms(base, pps=1500, duration=dur, buffer=32768)
    loaded = MacParams.docsis30(channel_rate=10.24e6, other_load=0.5, other_load_spread=0.3)
    _, _, _, shared = run_cms(loaded, pps=1500, duration=dur, buffer=32768)
    ratio = mbps(shared[0], dur) / mbps(alone[0], dur)
    assert 0.4 < ratio < 0.6


def test_contention_collisions_lengthen_access_delay():
    clean = run_cms(MacParams(), pps=20, size=200, duration=4.0)[3][0].delays
    noisy_run = run_cms(MacParams(contention_collision=0.5, backoff_maps=8), pps=20, size=200, duration=4.0)
    noisy = noisy_run[3][0].delays
    assert noisy_run[2][0].collisions > 10
    assert statistics.mean(noisy) > statistics.mean(clean) + 0.004


def test_buffer_counted_in_blocks_holds_fewer_small_packets():
    # 16 KiB in bytes holds ~160 100-byte packets; in 2 KiB blocks it holds 8.
    kw = {"pps": 50000, "size": 100, "duration": 0.01, "buffer": 16384}
    bytes_mode = run_cms(MacParams(), **kw)[2][0]
    block_mode = run_cms(MacParams(), buffer_block=2048, **kw)[2][0]
    assert bytes_mode.accepted > 100
    assert block_mode.accepted <= 8 + 2  # a grant may free a slot or two in 10 ms
    assert block_mode.charged <= 16384


def test_fragmentation_uses_partial_grants_under_a_tight_rate_limit():
    """A 1000 B Max Traffic Burst: whole-frame grants carry one frame per request-grant
    cycle and fall short of the rate; fragmented grants keep up with it."""
    dur = 3.0
    kw = {"pps": 1000, "size": 1500, "duration": dur, "buffer": 65536, "rate": 2e6, "burst": 1000}
    whole_run = run_cms(MacParams.docsis30(fragmentation=False), **kw)
    whole = mbps(whole_run[3][0], dur)
    frag = mbps(run_cms(MacParams.docsis30(), **kw)[3][0], dur)
    # the rate limiter counts the Ethernet frame, not the DOCSIS or fragment headers (MULPI C.2.2.7.2)
    assert frag == pytest.approx(2.0 * 1500 / 1518, rel=0.03)
    assert whole < 0.9 * frag
    cycles = whole_run[2][0].requests_piggyback + whole_run[2][0].requests_contention
    assert whole == pytest.approx(cycles * 1500 * 8 / dur / 1e6, rel=0.05)  # one frame per request


def test_same_seed_same_run_and_counters_add_up():
    a = run_cms(MacParams(other_load=0.3, other_load_spread=0.2), n_cm=2, pps=900, duration=1.0, buffer=20000, seed=7)
    b = run_cms(MacParams(other_load=0.3, other_load_spread=0.2), n_cm=2, pps=900, duration=1.0, buffer=20000, seed=7)
    assert a[3][0].times == b[3][0].times
    cm = a[2][0]
    assert cm.accepted + cm.dropped == 901  # t = 0 .. 1.0 inclusive
    # every accepted packet is delivered, queued, lost, or sent and not yet arrived when the run stops
    on_the_way = cm.accepted - (len(a[3][0].times) + len(cm.queue) + cm.lost)
    assert 0 <= on_the_way <= 3


def test_bad_parameters_are_rejected_with_one_line():
    with pytest.raises(MacConfigError, match="other_load"):
        MacParams(other_load=1.5)
    with pytest.raises(MacConfigError, match="map_interval"):
        UpstreamChannel(Engine(), MacParams(map_interval=0))
