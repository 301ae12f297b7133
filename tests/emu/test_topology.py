"""The namespace plant: built, routed, offloads off, impairments detected, torn down without leftovers."""

import json
import os
import subprocess

import pytest

from hfcprov.emu import netns, topology
from hfcprov.emu.offload import FEATURES, _ethtool

pytestmark = pytest.mark.root


def _ns_with(prefix):
    return [n for n in netns.list_names() if n.startswith(prefix)]


def test_up_builds_four_namespaces_routes_end_to_end_and_down_removes_everything(lab_factory):
    lab = lab_factory(rtt=0.02)
    assert sorted(_ns_with(lab.name)) == sorted(lab.ns(n) for n in topology.NODES)
    route = json.loads(netns.run(["ip", "-j", "route", "get", topology.ADDR["srv"]], ns=lab.ns("cpe")))[0]
    assert route["dev"] == "lan0" and route["gateway"] == topology.ADDR["cm_lan"]
    # offloads are off on every veth, so byte limits count real frames
    import socket
    with netns.entered(lab.ns("cm")):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with s:
        for dev in ("lan", "rf"):
            assert not any(_ethtool(s, dev, get) for get, _ in FEATURES.values())
    # the kernel's delay method is stated; here a delay line process must exist when netem is missing
    assert lab.caps.delay_method in ("netem", "tun-delayline")
    if lab.caps.delay_method == "tun-delayline":
        assert os.path.exists(f"/proc/{lab.pids['delayline']}")
    pid = lab.pids.get("delayline")
    lab.down()
    assert _ns_with(lab.name) == []
    assert not lab.state_file.exists()
    if pid:
        assert not os.path.exists(f"/proc/{pid}")
    lab.down()  # idempotent


def test_down_all_finds_leftovers_of_a_crashed_run_by_prefix(lab_factory):
    a = lab_factory()
    b = lab_factory(rtt=0.01)
    # a crash: the state file is gone, namespaces and the delay line process stay
    a.state_file.unlink()
    pid = b.pids.get("delayline")
    os.unlink(b.state_file)
    removed = topology.down_all(lab_factory.prefix)
    assert set(removed) == {a.name, b.name}
    assert _ns_with(lab_factory.prefix) == []
    if pid:
        assert not os.path.exists(f"/proc/{pid}")
    assert topology.down_all(lab_factory.prefix) == []


def test_cli_up_status_down(lab_factory):
    env = dict(os.environ)
    up = subprocess.run([".venv/bin/hfcprov", "emu", "up", "--prefix", lab_factory.prefix, "--rtt", "10ms", "--json"],
                        check=False, capture_output=True, text=True, timeout=60)
    assert up.returncode == 0, up.stderr
    name = json.loads(up.stdout)["name"]
    try:
        st = subprocess.run([".venv/bin/hfcprov", "emu", "status", name], check=False, capture_output=True, text=True, env=env)
        assert st.returncode == 0 and name in st.stdout and "delay:" in st.stdout
        bad = subprocess.run([".venv/bin/hfcprov", "emu", "status", "hfemu-nosuch"], check=False, capture_output=True, text=True)
        assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "hfemu-nosuch" in bad.stderr
    finally:
        down = subprocess.run([".venv/bin/hfcprov", "emu", "down", "--all", "--prefix", lab_factory.prefix],
                              check=False, capture_output=True, text=True)
    assert down.returncode == 0 and name in down.stdout
    assert _ns_with(name) == []


def test_random_loss_drops_about_the_stated_fraction_each_way(lab_factory):
    from hfcprov.emu.measure import measure
    from hfcprov.probe.run import ProbeSpec

    lab = lab_factory(loss=0.2, seed=7)
    assert lab.caps.loss_method in ("netem", "nft-numgen", "iptables-statistic", "tun-delayline")
    r = measure(lab, ProbeSpec(target=None, flows=0, duration=0.1, warmup=0, idle=3.0, rate=100))
    # a probe survives when neither the request nor the reply is dropped: 1 - 0.8^2 = 0.36
    assert r.latency_idle.sent >= 250
    assert 0.26 < r.latency_idle.loss < 0.46, r.latency_idle


def test_iptables_loss_fallback_drops_about_the_stated_fraction(lab_factory):
    """Forced past netem and nft (nft stays the default where present): iptables' statistic match."""
    from hfcprov.emu.measure import measure
    from hfcprov.probe.run import ProbeSpec
    from tests.support import require_tool

    require_tool("iptables", "iptables")
    lab = lab_factory(loss=0.2, seed=7, loss_method="iptables-statistic")
    if "iptables-statistic" not in lab.caps.loss_methods():
        pytest.skip("the kernel has no statistic match for iptables")
    rules = netns.run(["iptables", "-S", "FORWARD"], ns=lab.ns("cmts"))
    assert "-m statistic --mode random --probability 0.2" in rules
    assert "hfemu" not in netns.run(["nft", "list", "ruleset"], ns=lab.ns("cmts"), check=False)
    r = measure(lab, ProbeSpec(target=None, flows=0, duration=0.1, warmup=0, idle=3.0, rate=100))
    assert r.latency_idle.sent >= 250
    assert 0.26 < r.latency_idle.loss < 0.46, r.latency_idle  # 1 - 0.8^2 = 0.36 per round trip


def test_default_loss_method_is_the_best_the_host_offers_and_a_missing_forced_one_is_one_error():
    from hfcprov.emu.caps import Capabilities

    assert Capabilities(netem=False, tun=True, nft=True, iptables=True).loss_method == "nft-numgen"
    assert Capabilities(netem=False, tun=True, nft=False, iptables=True).loss_method == "iptables-statistic"
    assert Capabilities(netem=True, tun=True, nft=True, iptables=True).loss_method == "netem"
    lab = topology.Lab(name="hfemu-nobuild", impairments=topology.Impairments(loss=0.1, loss_method="iptables-statistic"),
                       caps=Capabilities(netem=False, tun=True, nft=True, iptables=False))
    with pytest.raises(topology.EmuError) as err:
        lab._impair()  # refused before any command runs
    assert str(err.value) == ("loss method iptables-statistic is not available here "
                              "(this host offers: nft-numgen, tun-delayline)")
