"""A G.711 call beside one upstream TCP upload: White et al. Test 2 (Figures 9a-9d) in shape."""

import statistics

from hfcprov.sim import Scenario, TcpOptions, VoiceSpec, run


def call_mos(rate, kib, rtt=0.04, docsis=True, seeds=(1, 2)):
    out = []
    for seed in seeds:
        sc = Scenario(rate=rate, buffer=kib * 1024, rtt=rtt, duration=30, warmup=5, seed=seed,
                      sample_interval=None, tcp=TcpOptions(variant="newreno"), voice=VoiceSpec(),
                      mac="docsis" if docsis else "tokenbucket", profile="docsis2.0" if docsis else None)
        r = run(sc)
        out.append(r)
    return statistics.mean(r.mos for r in out), out


def test_one_mbps_small_buffer_best_large_buffer_ruins_the_call():
    """Figure 9a: at 1 Mb/s 16 KiB gives the best MOS; 64 KiB drops; 256 KiB fails."""
    m16, _ = call_mos(1e6, 16)
    m64, _ = call_mos(1e6, 64)
    m256, runs = call_mos(1e6, 256)
    assert m16 > 3.8
    assert m16 > m64 + 1.0 > m256 + 1.0
    assert m256 < 1.5
    v = runs[0].extra["voip"]
    assert v["mouth_to_ear"] > 1.0  # the call waits behind ~2 s of TCP data


def test_ten_mbps_big_buffer_costs_delay():
    """Figure 9d: above 128 KiB the MOS deteriorates (here through delay alone)."""
    m64, r64 = call_mos(10e6, 64, rtt=0.1, seeds=(1,))
    m256, r256 = call_mos(10e6, 256, rtt=0.1, seeds=(1,))
    assert m64 > m256
    assert r256[0].extra["voip"]["one_way_mean"] > r64[0].extra["voip"]["one_way_mean"] + 0.05
