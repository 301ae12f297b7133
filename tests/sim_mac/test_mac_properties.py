"""Invariants of the request-grant MAC over random parameters and loads (hypothesis)."""

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hfcprov.queue.grant import MacParams

from .harness import run_cms

params = st.builds(
    MacParams,
    channel_rate=st.sampled_from([5.12e6, 10.24e6, 30.72e6]),
    map_interval=st.sampled_from([0.001, 0.002, 0.004]),
    map_advance=st.floats(0.0005, 0.006),
    max_request_minislots=st.sampled_from([100, 255, 4095]),
    fragmentation=st.booleans(),
    concatenation=st.booleans(),
    other_load=st.floats(0.0, 0.6),
    other_load_spread=st.floats(0.0, 0.3),
    contention_collision=st.floats(0.0, 0.5),
    random_placement=st.booleans(),
)


@settings(max_examples=30, deadline=None)
@given(params, st.integers(1, 3), st.floats(20, 3000), st.integers(64, 1500),
       st.sampled_from([None, 4000, 16384, 65536]), st.sampled_from([None, 1e6, 5e6]),
       st.sampled_from([None, 2048]))
# found by hypothesis: small frames concatenated into large grants put >100 frames on the channel
@example(MacParams(channel_rate=5.12e6, map_interval=0.004, map_advance=0.00390625, max_request_minislots=4095,
                   fragmentation=False, concatenation=True, other_load=0.0, other_load_spread=0.25,
                   contention_collision=0.25, random_placement=False),
         2, 2464.0, 64, None, None, None)
def test_conservation_order_and_no_early_delivery(p, n_cm, pps, size, buffer, rate, block):
    _, _, cms, sinks = run_cms(p, n_cm=n_cm, pps=pps, size=size, duration=0.5,
                               buffer=buffer, rate=rate, buffer_block=block)
    for cm, sink in zip(cms, sinks):
        # every accepted packet is delivered, still queued, or in flight on the channel
        in_flight = cm.accepted - len(sink.times) - len(cm.queue) - cm.lost
        # A grant's frames leave the queue when the burst starts and arrive over its duration, so
        # at most two grants' worth (one arriving, one starting) is ever on the channel.
        assert 0 <= in_flight * size <= 2 * p.max_request_bytes
        assert cm.charged <= (buffer if buffer is not None else 1 << 60)
        assert cm.charged >= 0 and cm.qbytes >= 0
        # nothing leaves before a request could have reached the CMTS and a MAP come back
        assert all(d >= p.map_advance for d in sink.delays)
        assert sink.seqs == sorted(sink.seqs)  # a CM's frames leave in FIFO order
        assert len(set(sink.seqs)) == len(sink.seqs)  # and once each
    # the channel never carries more than its rate (plus one burst of slack)
    total = sum(s.bytes for s in sinks)
    assert total * 8 <= p.channel_rate * 0.5 + 8 * 70000
