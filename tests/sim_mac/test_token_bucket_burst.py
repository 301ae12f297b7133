"""White et al. Test 3: a 5 MB upload into a 5 MB token bucket; the buffer sets the transfer time."""

import statistics

from hfcprov.sim import FlowSpec, Scenario, TcpOptions, run

SIZE = 5_000_000


def transfer_time(kib, rtt, seeds=(1, 2)):
    times = []
    for seed in seeds:
        # The bucket holds the whole file, so only the ~25 Mb/s channel and the buffer limit it.
        sc = Scenario(rate=10e6, burst=SIZE, channel=25e6, buffer=kib * 1024, rtt=rtt, duration=40, seed=seed,
                      flows=[FlowSpec(size=SIZE)], sample_interval=None,
                      tcp=TcpOptions(variant="cubic", min_rto=0.2, delack_timeout=0.04))
        r = run(sc.replace(mac="docsis", mac_params={"preset": "docsis30", "channel_rate": 25e6}))
        assert r.flows[0].completion_time is not None
        times.append(r.flows[0].completion_time)
    return statistics.mean(times)


def test_small_buffer_wastes_the_burst():
    small, large = transfer_time(16, 0.1), transfer_time(256, 0.1)
    assert small > 2 * large
    assert large < 2 * SIZE * 8 / 10e6  # the burst beats the 10 Mb/s sustained rate (4 s)
