"""FAST TCP on Atov-Kennedy's 3 Mb/s down / 512 kb/s up access link, simple and DOCSIS."""

from hfcprov.sim import FlowSpec, Scenario, TcpOptions
from hfcprov.sim.run import Network

from .harness import bench_module

RATE = 3e6
FULL = RATE * 1460 / 1500 * 0.97  # 2.5% TCP/IP headers (their footnote 1), a little slack


def network(alpha, docsis, flows, duration):
    # Data downstream at 3 Mb/s with Cisco's 1024 ms of buffering, 100 ms RTT; ACKs go
    # upstream, through a DOCSIS 1.1 CM limited to 512 kb/s when ``docsis``.
    sc = Scenario(rate=RATE, buffer=int(RATE * 1.024 / 8), rtt=0.1, direction="downstream",
                  duration=duration, warmup=0.0, flows=flows, sample_interval=None,
                  tcp=TcpOptions(variant="fast", fast_alpha=alpha, delack_timeout=0.04))
    if docsis:
        sc = sc.replace(reverse_mac="docsis", reverse_mac_params={"preset": "docsis11"}, reverse_rate=512e3)
    return Network(sc)


def goodput(alpha, docsis):
    net = network(alpha, docsis, [FlowSpec()], 60.0)
    t0 = {}
    net.engine.at(10.0, lambda _: t0.update(b=net.received(0)))
    net.run()
    return (net.received(0) - t0["b"]) * 8 / 50.0


def test_fast_needs_alpha_of_about_three_on_a_simple_link():
    assert goodput(1, False) < 0.8 * FULL  # delayed-ACK burstiness + integer arithmetic
    assert goodput(3, False) > FULL
    assert goodput(12, False) > FULL


def test_request_grant_ack_path_needs_a_larger_alpha():
    simple3, docsis3 = goodput(3, False), goodput(3, True)
    assert docsis3 < simple3 - 0.15 * RATE
    assert goodput(8, True) > FULL


def test_later_joining_fast_flows_take_an_unfair_share():
    """Persistent congestion: a flow that joins a standing queue over-estimates baseRTT."""
    n, gap = 5, 20.0
    for docsis in (False, True):
        net = network(10, docsis, [FlowSpec(start=gap * i) for i in range(n)], gap * (n + 1))
        snap = {}
        net.engine.at(gap * n, lambda _, net=net, snap=snap: snap.update({i: net.received(i) for i in range(n)}))
        net.run()
        share = [net.received(i) - snap[i] for i in range(n)]
        assert share[-1] > 2 * share[0], (docsis, share)
        assert share[-1] == max(share) and share[0] < sum(share) / n


def test_alpha_against_flows_on_the_docsis_download_path():
    """Atov-Kennedy Table I's direction: through the CMTS (16 ms shaping calendar) with the ACKs
    through a DOCSIS 1.1 CM, one flow needs far more alpha than on the simple link (paper: 13
    against 3; here 8 against 3), and the total alpha needed grows with the number of flows
    (paper 13 -> 80; here 8 -> 20) while each flow's share falls (`bench/sim_atov.py`)."""
    atov = bench_module("sim_atov")

    def need(path, n, alphas):
        return atov.alpha_needed(path, n, seeds=(1,), duration=40.0, alphas=alphas)[0]

    assert need("simple", 1, (2, 3)) == 3
    one = need("cmts-16ms", 1, (3, 5, 6, 8, 10))
    assert one is not None and one >= 2 * 3
    ten = need("cmts-16ms", 10, (1, 2, 3))
    assert ten is not None and 10 * ten > one and ten < one


def test_acks_spread_over_several_cms_each_with_its_own_request_grant_cycle():
    """reverse_mac_params.cms: flow i's ACKs go up through CM i % cms on one upstream channel."""
    sc = network(10, True, [FlowSpec() for _ in range(4)], 10.0).sc
    sc = sc.replace(reverse_mac_params={"preset": "docsis11", "cms": 2})
    net = Network(sc)
    net.run()
    group = net.reverse
    assert [cm.accepted > 100 for cm in group.cms] == [True, True]
    assert group.accepted == sum(cm.accepted for cm in group.cms)
    assert group.cms[0].channel is group.cms[1].channel
    assert sum(r.rcv_nxt for r in net.receivers) > 0.8 * 3e6 * 10 / 8 / 1460 * 0.8


def test_an_ack_cm_near_its_burst_limit_needs_company_not_alpha():
    """A non-concatenating ACK CM on a 7 ms MAP advance (~9 ms cycle) cannot carry the delayed ACKs of
    a full 3 Mb/s download: four flows stay under 92% even with alpha 10. Spread over two CMs, each
    with its own cycle, alpha 4 fills the link (Atov-Kennedy: more CMs, alpha back towards 3)."""
    atov = bench_module("sim_atov")
    from hfcprov.sim import run

    one = run(atov.scenario("nc7", 4, 10, seed=1, duration=40.0)).goodput_bps
    two = run(atov.scenario("nc7x2", 4, 4, seed=1, duration=40.0)).goodput_bps
    assert one < 0.92 * atov.FULL < atov.FULL < two
