"""The AQM values a modem reports (QOS_PARAMS, DOCS-QOS3-MIB units) follow the model's one AQM rule."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hfcprov.config import parse_text
from hfcprov.model import AQM_PARAMS, AqmSettings, ServiceFlow, qos_param_values, service_flows, upstream_aqm


def reported(text: str) -> dict:
    (flow,) = [f for f in service_flows(parse_text(f"Main {{ {text} }}")) if f.direction == "upstream"]
    return {k: qos_param_values(flow)[k] for k in AQM_PARAMS}


def test_a_docsis31_modem_reports_pie_at_10ms_unless_the_file_disables_it():
    us = "UsServiceFlow {{ UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 5000000; {} }}"
    on = {"aqm_disabled": 2, "aqm_latency_target": 10, "aqm_algorithm": 3}
    assert reported(us.format("")) == on
    assert reported(us.format("AQMEncodings { SFAQMLatencyTarget 25; }")) == {**on, "aqm_latency_target": 25}
    off = {"aqm_disabled": 1, "aqm_latency_target": None, "aqm_algorithm": None}
    assert reported(us.format("AQMEncodings { SFAQMDisable 1; }")) == off
    assert reported("CMUpstreamAQMDisable 1; " + us.format("")) == off  # TLV 76
    # 24.40.3 = 2 on a flow in no Low Latency aggregate: the modem runs DOCSIS-PIE (hfcprov.model.lld)
    assert reported(us.format("AQMEncodings { AQMAlgorithm 2; }"))["aqm_algorithm"] == 3


@given(st.builds(AqmSettings, st.one_of(st.none(), st.booleans()), st.one_of(st.none(), st.integers(0, 255)),
                 st.one_of(st.none(), st.sampled_from([0, 1, 2])), cm_disabled=st.booleans()),
       st.sampled_from(["upstream", "downstream"]))
def test_reported_aqm_is_upstream_aqm(aqm, direction):
    flow = ServiceFlow(direction, aqm=aqm)
    got = {k: qos_param_values(flow)[k] for k in AQM_PARAMS}
    rule = upstream_aqm(flow)
    if direction == "downstream":
        assert got == dict.fromkeys(AQM_PARAMS)
    elif rule is None:
        assert got == {"aqm_disabled": 1, "aqm_latency_target": None, "aqm_algorithm": None}
    else:
        assert got == {"aqm_disabled": 2, "aqm_latency_target": round(rule.latency_target * 1000),
                       "aqm_algorithm": {"docsis-pie": 3, "immediate": 2}[rule.algorithm]}
