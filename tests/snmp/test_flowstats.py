"""Per-flow counters (service-flow stats, latency histogram, congestion) read from a real agent, and
their change over an interval: ``hfcprov.snmp.flowstats`` and ``hfcprov snmp stats``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hfcprov.config import parse_text
from hfcprov.fileio import atomic_write
from hfcprov.model import service_flows
from hfcprov.snmp import agentdata, flowstats, oids
from hfcprov.snmp.client import Credentials, SnmpClient, run
from hfcprov.snmp.simagent import SnmpSimAgent, write_alias_data
from tests.support import free_udp_port

TIER = """Main { NetworkAccess 1;
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 10000000; AQMEncodings { SFAQMLatencyTarget 10; } }
  UsServiceFlow { UsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 1000000; }
  DsServiceFlow { DsServiceFlowRef 3; QosParamSetType 7; MaxRateSustained 50000000; } }"""
COMMUNITY = "n0t-in-a-file-name"


def lane(**kw):
    d = dict.fromkeys(flowstats.COUNTER_KEYS, 0)
    d.update(hist_edges_us=[100, 1000], hist_counts=[0, 0, 0])
    d.update(kw)
    return d


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """An snmpsim modem whose first upstream flow's counters are read live from a JSON file (as the
    emulated modem serves what its AQM stage counted); its community is in no file name."""
    tmp = tmp_path_factory.mktemp("live")
    counters = tmp / "counters.json"
    flows = service_flows(parse_text(TIER))
    text = agentdata.modem_snmprec(flows, "live modem", "live.cm",
                                   counter_sources={0: {"file": counters, "stage": 0, "lane": 0}},
                                   counters={2: {"packets": 7, "octets": 7000}})
    data = tmp / "data"
    write_alias_data(data, "modem", text)
    port = free_udp_port()
    with SnmpSimAgent(data, [("127.0.0.1", port)], communities={"modem": COMMUNITY}, variations=True) as agent:
        yield port, counters, data, agent


def read(port, community=COMMUNITY, timeout=2.0):
    async def go():
        client = SnmpClient(Credentials(community=community), timeout=timeout, retries=1, patience=0)
        try:
            return await flowstats.read_counters(client, "127.0.0.1", port)
        finally:
            client.close()

    return run(go())


def test_counters_are_served_live_from_the_file(live):
    port, counters, _data, _agent = live
    atomic_write(counters, json.dumps({"stages": [[lane(packets=10, octets=15000, ect1=4, ce=1, hist_counts=[6, 3, 1],
                                                        latency_max_us=2500)]]}))
    first = read(port)
    up = first.flows[1]
    assert up.direction == "upstream"
    assert (up.counters["packets"], up.counters["octets"], up.counters["ect1"], up.counters["ce"]) == (10, 15000, 4, 1)
    assert up.hist_edges_us == (100, 1000) and up.hist_counts == (6, 3, 1)
    assert first.flows[3].counters == {"packets": 7, "octets": 7000}  # a static flow: what the data file says
    atomic_write(counters, json.dumps({"stages": [[lane(packets=110, octets=165000, ect1=54, ce=1,
                                                        hist_counts=[56, 53, 1], latency_max_us=900)]]}))
    os.utime(counters, ns=(os.stat(counters).st_atime_ns, os.stat(counters).st_mtime_ns + 1_000_000))
    second = read(port)
    delta = {d.sfid: d for d in flowstats.deltas(first, second)}[1]
    assert delta.counts["packets"] == 100 and delta.counts["octets"] == 150000 and delta.counts["ect1"] == 50
    assert delta.counts["latency_max_us"] == 900  # a gauge: the later value
    assert delta.hist_counts == (50, 50, 0)


def test_the_community_is_in_no_file_name(live):
    port, _counters, data, agent = live
    names = [p.name for p in data.rglob("*")] + [p.name for p in Path(agent._tmp.name).rglob("*")]
    assert not [n for n in names if COMMUNITY in n]
    assert read(port).flows  # the community answers
    with pytest.raises(Exception, match="no SNMP answer"):
        read(port, community="modem", timeout=0.3)  # the file's name is not a community


def test_counter_wraps_and_reboots():
    before = flowstats.snapshot(1000, {oids.FLOW_COUNTERS["policed_drops"][0]: {"2.5": 2**32 - 10},
                                       oids.FLOW_COUNTERS["packets"][0]: {"2.5": 2**64 - 1}}, taken=0.0)
    after = flowstats.snapshot(2000, {oids.FLOW_COUNTERS["policed_drops"][0]: {"2.5": 5},
                                      oids.FLOW_COUNTERS["packets"][0]: {"2.5": 4}}, taken=10.0)
    (d,) = flowstats.deltas(before, after)
    assert d.counts == {"policed_drops": 15, "packets": 5} and d.packets_per_s == 0.5
    rebooted = flowstats.snapshot(100, {}, taken=20.0)
    with pytest.raises(flowstats.ModemRebooted):
        flowstats.deltas(after, rebooted)


@pytest.mark.parametrize("column,value", [
    (oids.FLOW_COUNTERS["packets"][0], b"12"),
    (oids.FLOW_COUNTERS["octets"][0], -1),
    (oids.LATENCY_BIN_COUNTS, b"\x00\x00\x01"),
    (oids.SF_DIRECTION, 3),
])
def test_a_bad_counter_names_the_object(column, value):
    with pytest.raises(flowstats.CounterError) as err:
        flowstats.snapshot(1, {column: {"2.5": value}})
    assert str(err.value).split(":")[0].endswith(".2.5")


def test_snmp_stats_prints_the_deltas_over_an_interval(live):
    port, counters, _data, _agent = live
    atomic_write(counters, json.dumps({"stages": [[lane(packets=1000, octets=1_000_000)]]}))
    community = Path(_agent._tmp.name) / "cf"
    atomic_write(community, COMMUNITY + "\n", mode=0o600)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HFCPROV_SNMP")}
    proc = subprocess.Popen([sys.executable, "-m", "hfcprov", "snmp", "stats", f"127.0.0.1:{port}", "--interval",
                             "1s", "--community-file", str(community), "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # the first reading is taken before the interval: count more after it is announced on stderr
    line = proc.stderr.readline()
    assert "first reading" in line, line
    atomic_write(counters, json.dumps({"stages": [[lane(packets=3000, octets=3_000_000)]]}))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    rows = {r["sfid"]: r for r in map(json.loads, out.splitlines())}
    assert rows[1]["packets"] == 2000 and rows[1]["octets"] == 2_000_000
    assert rows[1]["bits_per_s"] == pytest.approx(16_000_000 / rows[1]["seconds"], rel=1e-3)
