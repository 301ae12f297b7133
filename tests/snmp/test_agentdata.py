"""Simulated modem data (.snmprec) comes from ServiceFlows and parses back to the same values."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.model import AQM_PARAMS, BufferControl, ServiceFlow
from hfcprov.snmp import agentdata, oids


def parse(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        oid, tag, value = line.split("|", 2)
        out[oid] = (tag, value)
    return out


def test_records_are_in_oid_order_for_getnext():
    flows = [ServiceFlow("upstream", ref=1, max_sustained_rate=1e6), ServiceFlow("downstream", ref=2)]
    keys = [tuple(map(int, ln.split("|")[0].split("."))) for ln in agentdata.modem_snmprec(flows, "d", "f.cm").splitlines()]
    assert keys == sorted(keys) and len(keys) == len(set(keys))


def test_reset_is_settable_and_descr_escaped():
    recs = parse(agentdata.modem_snmprec([], "a|b", "x.cm"))
    assert recs[oids.RESET_NOW] == ("2:writecache", "value=2")
    assert recs[oids.SYS_DESCR] == ("4x", b"a|b".hex())  # '|' would break the record


rates = st.one_of(st.none(), st.integers(0, 10**10).map(float))
sizes = st.one_of(st.none(), st.integers(0, 2**32 - 1))
flow = st.builds(ServiceFlow, direction=st.sampled_from(["upstream", "downstream"]), max_sustained_rate=rates,
                 max_traffic_burst=sizes, min_reserved_rate=rates,
                 buffer=st.builds(BufferControl, sizes, sizes, sizes))


@settings(max_examples=60)
@given(st.lists(flow, max_size=4), st.integers(1, 1000))
def test_every_flow_parameter_is_served_per_param_set(flows, if_index):
    recs = parse(agentdata.modem_snmprec(flows, "m", "f.cm", if_index=if_index))
    for n, f in enumerate(flows, 1):
        assert recs[f"{oids.SF_DIRECTION}.{if_index}.{n}"] == ("2", "2" if f.direction == "upstream" else "1")
        want = {"max_sustained_rate": f.max_sustained_rate, "max_traffic_burst": f.max_traffic_burst,
                "min_reserved_rate": f.min_reserved_rate, "buffer_minimum": f.buffer.minimum,
                "buffer_target": f.buffer.target, "buffer_maximum": f.buffer.maximum}
        for key, value in want.items():
            for set_type in (1, 2, 3):
                got = recs.get(f"{oids.PARAM_SET[key]}.{if_index}.{set_type}.{n}")
                assert got == (None if value is None else ("66", str(int(value))))


def test_cmts_rows():
    recs = parse(agentdata.cmts_snmprec([{"mac": "00:11:22:33:44:55", "ip": "10.1.2.3", "status": 8}]))
    assert recs[f"{oids.CMTS_CM_MAC}.1"] == ("4x", "001122334455")
    assert recs[f"{oids.CMTS_CM_IP}.1"] == ("64", "10.1.2.3")
    assert recs[f"{oids.REG_IPV4}.1"] == ("4x", "0a010203")


def test_the_aqm_columns_are_served_with_their_mib_types():
    """TruthValue and the AlgInUse enumeration are INTEGERs, the latency target an Unsigned32 (ms);
    only upstream flows have them (the downstream queue is the CMTS's)."""
    us, ds = ServiceFlow("upstream", max_sustained_rate=1e6), ServiceFlow("downstream", max_sustained_rate=1e7)
    recs = parse(agentdata.modem_snmprec([us, ds], "m", "f.cm"))
    assert recs[f"{oids.PARAM_SET['aqm_disabled']}.2.1.1"] == ("2", "2")  # false(2): AQM on
    assert recs[f"{oids.PARAM_SET['aqm_latency_target']}.2.1.1"] == ("66", "10")
    assert recs[f"{oids.PARAM_SET['aqm_algorithm']}.2.1.1"] == ("2", "3")  # docsisPIE(3)
    assert not any(f"{oids.PARAM_SET[k]}.2.1.2" in recs for k in AQM_PARAMS)
    d30 = parse(agentdata.modem_snmprec([us], "m", "f.cm", applied={0: dict.fromkeys(AQM_PARAMS)}))
    assert not any(f"{oids.PARAM_SET[k]}.2.1.1" in d30 for k in AQM_PARAMS)
