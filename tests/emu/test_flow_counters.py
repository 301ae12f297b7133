"""The emulated modem's per-flow counters over SNMP are what its AQM stage counted of known traffic.

Booted from a DOCSIS 3.1 file (upstream flow with DOCSIS-PIE, so the userspace stage queues it),
the modem serves docsQosServiceFlowStatsTable, docsQosSfLatencyStatsTable and
docsQosSfCongestionStatsTable from the stage's counts. The CPE sends a known number of UDP packets
of a known size, each ECN codepoint a known number of times, slowly enough that nothing is dropped:
the deltas read over SNMP from the CMTS side match them exactly.
"""

from __future__ import annotations

import socket
import time

import pytest

from hfcprov.config import encode, parse_text
from hfcprov.emu import netns
from hfcprov.emu.topology import ADDR
from hfcprov.snmp import flowstats
from hfcprov.snmp.client import Credentials, SnmpClient, run

pytestmark = pytest.mark.root

CONFIG = """Main {
  NetworkAccess 1;
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 5000000;
                  BufferControl { TargetBuffer 262144; } AQMEncodings { SFAQMLatencyTarget 10; } }
  DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 20000000; }
}"""
PAYLOAD = 472  # + 8 UDP + 20 IPv4 = 500 octets on the wire the stage sees
SENT = {0x00: 30, 0x02: 40, 0x01: 20, 0x03: 10}  # TOS ECN bits -> packets: not-ECT, ECT(0), ECT(1), CE


def counters(lab):
    async def go():
        client = SnmpClient(Credentials(community="public"), timeout=1.0, retries=2)
        try:
            return await flowstats.read_counters(client, ADDR["cm_rf"], 161)
        finally:
            client.close()

    with netns.entered(lab.ns("cmts")):
        return run(go())


def wait_for_update(lab, before_mtime: int, timeout: float = 10.0) -> None:
    """Until the delay line has written its counters after the last packet went through."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if lab.counters_file.stat().st_mtime_ns > before_mtime:
                return
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    raise AssertionError("the AQM stage never wrote its counters")


def test_counters_over_snmp_match_the_traffic_sent(lab_factory, tmp_path):
    (tmp_path / "gold.cm").write_bytes(encode(parse_text(CONFIG)))
    lab = lab_factory(docsis_version="3.1")
    applied = lab.boot(tmp_path, "gold.cm")
    assert applied["status"] == "operational" and "aqm" in applied["queues"]["upstream"], applied
    before = counters(lab)
    (sfid,) = [s for s, f in before.flows.items() if f.direction == "upstream"]
    with netns.entered(lab.ns("cpe")):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
            for tos, n in SENT.items():
                tx.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
                for _ in range(n):
                    tx.sendto(b"x" * PAYLOAD, (ADDR["srv"], 9))
                    time.sleep(0.002)  # 500 B / 2 ms = 2 Mbit/s under the 5 Mbit/s flow: no queue builds
    wait_for_update(lab, time.time_ns() + 300_000_000)  # a write after the stage released the last packet
    after = counters(lab)
    (delta,) = [d for d in flowstats.deltas(before, after) if d.sfid == sfid]
    total = sum(SENT.values())
    c = delta.counts
    assert (c["packets"], c["octets"]) == (total, total * (PAYLOAD + 28)), c
    assert (c["ect0"], c["ect1"], c["ce"]) == (SENT[0x02], SENT[0x01], SENT[0x03]), c
    assert c["policed_drops"] == c["aqm_drops"] == 0, c
    assert c["latency_packets"] == total and sum(delta.hist_counts) == total, (c, delta.hist_counts)
    assert 0 <= c["latency_max_us"] < 100_000
