"""An audit that always finishes: whatever a modem sends becomes that modem's verdict.

- hypothesis drives a real agent (snmpsim; its data file rewritten per example) with random SMI
  types and values for every object the audit reads, on a DOCSIS 3.1 LLD config (flows, AQM,
  an aggregate service flow): every example ends in a verdict, none in a traceback or an
  "internal error";
- net-snmp ``snmpd`` modems with broken firmware (an INTEGER column answered as a string) in the
  middle of an inventory: each is ``error`` naming the object, every other modem is audited and
  the summary printed;
- a modem answering 0.3 s per var-bind is read (slowly), not reported unreachable;
- 62 extra flows are summarised with a count.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hfcprov.config import encode, parse_text
from hfcprov.fileio import atomic_write
from hfcprov.model import aggregate_service_flows, service_flows
from hfcprov.snmp import agentdata, oids
from hfcprov.snmp.audit import (
    DRIFTED,
    ERROR,
    IN_SYNC,
    STATUSES,
    UNREACHABLE,
    AuditTarget,
    Drift,
    ExpectedConfigs,
    audit_modem,
    summarize,
)
from hfcprov.snmp.client import Credentials, SnmpClient, run
from hfcprov.snmp.simagent import SnmpSimAgent, endpoint_datafile, write_endpoint_data
from hfcprov.snmp.snmpdagent import NetSnmpModem, snmpd_path
from tests.support import free_udp_port

LLD = """Main { NetworkAccess 1;
  UpstreamAggregateServiceFlow { UpstreamServiceFlowReference 9; MaxRateSustained 10000000;
    LowLatencyAggregateSFEncodings { LowLatencyServiceFlowReference 2; AQMCouplingFactor 15; SchedulingWeight 230;
                                     QueueProtectionEnable 1; } }
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; UpstreamAggregateServiceFlowReference 9;
                  MaxRateSustained 10000000; BufferControl { TargetBuffer 262144; } AQMEncodings { SFAQMLatencyTarget 15; } }
  UsServiceFlow { UsServiceFlowRef 2; QosParamSetType 7; UpstreamAggregateServiceFlowReference 9;
                  AQMEncodings { AQMAlgorithm 2; } }
  DsServiceFlow { DsServiceFlowRef 3; QosParamSetType 7; MaxRateSustained 50000000; } }"""
MAC = "00112233aa01"
NAME = f"{MAC}.cm"


@pytest.fixture(scope="module")
def lld(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lld")
    tree = parse_text(LLD)
    atomic_write(tmp / "configs" / NAME, encode(tree))
    return tmp, service_flows(tree), aggregate_service_flows(tree)


@pytest.fixture(scope="module")
def agent(lld):
    tmp, flows, aggregates = lld
    data = tmp / "data"
    write_endpoint_data(data, "public", [agentdata.modem_snmprec(flows, "lld modem", NAME, aggregates=aggregates)])
    port = free_udp_port()
    with SnmpSimAgent(data, [("127.0.0.1", port)]) as a:
        yield a, port, data


def _audit(port, configs, timeout=1.0, retries=0, patience=0.0):
    async def go():
        client = SnmpClient(Credentials(community="public"), timeout=timeout, retries=retries, patience=patience)
        try:
            return await audit_modem(client, AuditTarget(MAC, "127.0.0.1", port, NAME), ExpectedConfigs(configs))
        finally:
            client.close()

    return run(go())


def test_the_lld_modem_as_its_file_says_is_in_sync(agent, lld):
    _, port, _ = agent
    result = _audit(port, lld[0] / "configs")
    assert result.status == IN_SYNC, result.detail
    assert "1 aggregate service flows" in result.message


# -- hypothesis: random types and values for every object the audit reads ---------------------------
TAGS = {
    agentdata.INTEGER: st.integers(-(2**31), 2**31 - 1),
    agentdata.OCTETS: st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E, blacklist_characters="|"),
                              max_size=24),
    agentdata.HEX: st.binary(max_size=24).map(bytes.hex),
    agentdata.IPADDRESS: st.ip_addresses(v=4).map(str),
    agentdata.COUNTER32: st.integers(0, 2**32 - 1),
    agentdata.GAUGE32: st.integers(0, 2**32 - 1),
    agentdata.TIMETICKS: st.integers(0, 2**32 - 1),
    agentdata.COUNTER64: st.integers(0, 2**64 - 1),
    agentdata.OBJECT_ID: st.lists(st.integers(0, 2**16), min_size=1, max_size=6).map(
        lambda arcs: "1.3.6." + ".".join(map(str, arcs))),
}


def _objects(flows):
    """(instance OID, the record a sane modem serves) of every object the audit reads of this modem."""
    sane = agentdata.modem_snmprec(flows[1], "lld modem", NAME, aggregates=flows[2])
    out = []
    for line in sane.splitlines():
        oid, tag, value = line.split("|", 2)
        if tag.endswith(":writecache"):
            continue
        out.append((oid, tag, value))
    return out


@st.composite
def broken_modem(draw, objects):
    """Each object: as a sane modem serves it, missing, or any other SMI type with any value."""
    records = []
    for oid, tag, value in objects:
        kind = draw(st.sampled_from(["sane", "sane", "sane", "missing", "random"]))
        if kind == "sane":
            records.append(f"{oid}|{tag}|{value}")
        elif kind == "random":
            rtag = draw(st.sampled_from(sorted(TAGS)))
            records.append(f"{oid}|{rtag}|{draw(TAGS[rtag])}")
    # sometimes rows the file does not know: an odd index, a flow beyond the others
    if draw(st.booleans()):
        extra = draw(st.sampled_from([f"{oids.SF_DIRECTION}.2.99", f"{oids.SF_DIRECTION}.7",
                                      f"{oids.PARAM_SET['max_sustained_rate']}.2.1",
                                      f"{oids.ASF['direction']}.2.5.5"]))
        rtag = draw(st.sampled_from(sorted(TAGS)))
        records.append(f"{extra}|{rtag}|{draw(TAGS[rtag])}")
    return records


_written = [0]


def _serve(data, records) -> None:
    key = lambda line: tuple(int(p) for p in line.split("|", 1)[0].split("."))  # noqa: E731
    text = "\n".join(sorted(set(records), key=key)) + "\n"
    write_endpoint_data(data, "public", [text])
    # snmpsim notices a changed data file by its mtime in whole seconds: every example gets its own
    _written[0] += 1
    stamp = int(time.time()) + 10 + _written[0]
    for path in (data / "public.snmprec", endpoint_datafile(data, "public", 0)):
        os.utime(path, (stamp, stamp))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(data=st.data())
def test_any_types_and_values_end_in_a_verdict(agent, lld, data):
    _, port, folder = agent
    records = data.draw(broken_modem(_objects(lld)))
    _serve(folder, records)
    result = _audit(port, lld[0] / "configs")
    assert result.status in STATUSES
    assert "internal error" not in result.message, result.message
    if result.status == ERROR:  # names the object and what came back (or the missing config name)
        assert ": " in result.message, result.message
    json.dumps(result.as_dict(), default=str)  # and the row can be written out


def test_a_string_where_the_status_is_an_integer_names_the_object(agent, lld):
    _, port, folder = agent
    records = [f"{o}|{t}|{v}" for o, t, v in _objects(lld)
               if not o.startswith(oids.CM_STATUS_VALUE + ".")] + [f"{oids.CM_STATUS_VALUE}.2|4|operational"]
    _serve(folder, records)
    result = _audit(port, lld[0] / "configs")
    assert result.status == ERROR
    assert result.message.startswith("docsIfCmStatusValue: OCTET STRING 0x6f706572") and "integer" in result.message


# -- net-snmp snmpd: a garbage modem in the middle of an inventory ------------------------------------
needs_snmpd = pytest.mark.skipif(snmpd_path() is None, reason="net-snmp snmpd not installed "
                                                               "(scripts/debian-deps.sh snmpd)")


@needs_snmpd
def test_garbage_modems_in_an_inventory_do_not_stop_the_audit(lab, tmp_path):
    from tests.snmp.conftest import MACS

    # the file the snmpd modems should run: one upstream flow at 5 Mbit/s (conftest's tier)
    name = f"{MACS['insync']}.cm"
    rate_row = f"{oids.PARAM_SET['max_sustained_rate']}.2.1.1"
    status = oids.CM_STATUS_VALUE + ".2"
    garbage = {
        # docsIfCmStatusValue answered as a string (the traceback: mib.enum_label)
        "status-string": {"config_file": name, "override": {status: ["string", "operational"]}},
        # operational, right file, but the QoS Gauge32 column answered as a string
        "qos-string": {"config_file": name, "override": {
            f"{oids.SF_DIRECTION}.2.1": ["integer", "2"], f"{oids.SF_DIRECTION}.2.2": ["integer", "1"],
            rate_row: ["string", "5 Mbit/s"]}},
    }
    modems = {n: NetSnmpModem(free_udp_port(), state=s) for n, s in garbage.items()}
    for m in modems.values():
        m.start()
    try:
        rows = ["mac,ip,port,config"]
        order = [("insync", None), ("status-string", "0011220000e1"), ("drifted", None), ("qos-string", "0011220000e2"),
                 ("dead", None)]
        for n, mac in order:
            if mac is None:
                rows.append(f"{MACS[n]},127.0.0.1,{lab.ports[n]},{MACS[n]}.cm")
            else:
                rows.append(f"{mac},127.0.0.1,{modems[n].port},{name}")
        inv = tmp_path / "inventory.csv"
        inv.write_text("\n".join(rows) + "\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("HFCPROV_SNMP")}
        res = subprocess.run([sys.executable, "-m", "hfcprov", "snmp", "audit", "--inventory", str(inv), "--configs",
                              str(lab.configs), "--format", "json", "--timeout", "500ms", "--retries", "0",
                              "--patience", "0s"],
                             capture_output=True, text=True, timeout=120, env=env, check=False)
    finally:
        for m in modems.values():
            m.stop()
    assert "Traceback" not in res.stderr, res.stderr
    got = {r["mac"]: r for r in map(json.loads, res.stdout.splitlines())}
    assert {m: r["status"] for m, r in got.items()} == {
        MACS["insync"]: IN_SYNC, "0011220000e1": ERROR, MACS["drifted"]: DRIFTED, "0011220000e2": ERROR,
        MACS["dead"]: UNREACHABLE}
    assert got["0011220000e1"]["detail"].startswith("docsIfCmStatusValue: OCTET STRING")
    assert got["0011220000e2"]["detail"].startswith("docsQosParamSetMaxTrafficRate.2.1.1: OCTET STRING")
    assert res.returncode == 3  # error verdicts: not every modem could be audited
    assert "audited 5 modems" in res.stderr and "2 error" in res.stderr and "1 in-sync" in res.stderr


# -- slow and large modems ------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_modem_answering_slowly_is_read_not_unreachable(lab, tmp_path):
    """0.3 s per var-bind, the default timeout (2 s) and tries: its first answer comes after both tries."""
    from tests.snmp.conftest import MACS

    text = agentdata.modem_snmprec(lab.flows["insync"], "slow modem", f"{MACS['insync']}.cm")
    slow = []
    for line in text.splitlines():  # every var-bind costs the agent 0.3 s (snmpsim's delay variation)
        oid, tag, value = line.split("|", 2)
        if tag.endswith(":writecache"):
            slow.append(line)
        elif tag == agentdata.HEX:
            slow.append(f"{oid}|{tag}:delay|hexvalue={value},wait=300")
        else:
            slow.append(f"{oid}|{tag}:delay|value={value},wait=300")
    data = tmp_path / "data"
    write_endpoint_data(data, "public", ["\n".join(slow) + "\n"])
    port = free_udp_port()

    async def go(patience):
        client = SnmpClient(Credentials(community="public"), timeout=2.0, retries=1, patience=patience)
        try:
            target = AuditTarget(MACS["insync"], "127.0.0.1", port, f"{MACS['insync']}.cm")
            return await audit_modem(client, target, ExpectedConfigs(lab.configs))
        finally:
            client.close()

    with SnmpSimAgent(data, [("127.0.0.1", port)]):
        started = time.monotonic()
        result = run(go(30.0))  # the default (5 x 2 s) suffices on an idle machine; a busy one is slower
        took = time.monotonic() - started
    assert result.status == IN_SYNC, result.detail
    assert took > 4  # its first answer came after both 2 s tries
    with SnmpSimAgent(data, [("127.0.0.1", port)]):
        assert run(go(0.0)).status == UNREACHABLE  # without patience: what the audit said before


def test_the_default_patience_is_five_timeouts():
    client = SnmpClient(Credentials(community="public"), timeout=2.0, retries=1)
    assert client.patience == 10.0 and client.hears_late_answers


def test_a_dead_modem_costs_its_tries_and_the_patience_only():
    dead = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dead.bind(("127.0.0.1", 0))
    try:
        started = time.monotonic()
        result = _audit(dead.getsockname()[1], None, timeout=0.3, retries=1, patience=0.6)
        took = time.monotonic() - started
    finally:
        dead.close()
    assert result.status == UNREACHABLE
    assert 1.1 < took < 3.0  # 2 tries x 0.3 s + 0.6 s, and no second round of probes


def test_long_drift_lists_are_counted():
    drifts = [Drift(f"upstream sfid {s}", "flow", "not in the config file", "active on the modem")
              for s in range(3, 65)]
    drifts += [Drift("upstream flow 1 (sfid 1)", "buffer_target", 16384, 65536)]
    line = summarize(drifts)
    assert "62 extra upstream flows: sfid 3, sfid 4, sfid 5, sfid 6, sfid 7, sfid 8 (and 56 more)" in line
    assert "upstream flow 1 (sfid 1): target buffer 16384 asked, 65536 applied" in line
    assert len(line) < 300


def test_a_modem_with_62_extra_flows_is_one_short_line(agent, lld):
    """The audit reads past the file's flows (one GETBULK more each time) and counts what it found."""
    _, port, folder = agent
    _, flows, aggregates = lld
    voice = dataclasses.replace(flows[0], max_sustained_rate=128_000, asf_ref=None)
    extra = [dataclasses.replace(voice, sfid=100 + i) for i in range(62)]
    text = agentdata.modem_snmprec([*flows, *extra], "busy lld modem", NAME, aggregates=aggregates)
    _serve(folder, [ln for ln in text.splitlines() if not ln.split("|")[1].endswith(":writecache")])
    result = _audit(port, lld[0] / "configs")
    assert result.status == DRIFTED
    assert "62 extra upstream flows: sfid 100, sfid 101" in result.detail and "(and 56 more)" in result.detail
    assert len(result.detail) < 300


def test_an_aggregate_applied_otherwise_is_a_drift(agent, lld):
    """The applied ASF (coupling factor, member SFIDs) against TLV 70 of the file."""
    _, port, folder = agent
    _, flows, aggregates = lld
    text = agentdata.modem_snmprec(flows, "lld modem", NAME, aggregates=aggregates,
                                   applied_asf={0: {"coupling_factor": 10, "low_latency_sfid": 1, "classic_sfid": 2}})
    _serve(folder, [ln for ln in text.splitlines() if not ln.split("|")[1].endswith(":writecache")])
    result = _audit(port, lld[0] / "configs")
    assert result.status == DRIFTED, result.detail
    assert {d.field for d in result.drifts} == {"asf:coupling_factor", "asf:low_latency_sfid", "asf:classic_sfid"}
    assert "upstream aggregate 1 (asf 1): AQM coupling factor (tenths) 15 asked, 10 applied" in result.detail
    assert "low latency sfid 2 asked, 1 applied" in result.detail
