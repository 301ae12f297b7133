"""The service-flow model: what a config file provisions and the rules a modem applies to it.

    flows = service_flows(read_config("examples/buffer-control.cfg"))
    flows[0].queue_size()        # bytes: MULPI's Buffer Control rule, the one sim and emu use
    flows[0].burst               # Max Traffic Burst, DOCSIS default 3044
    flows[0].aqm.algorithm       # "docsis-pie" | "immediate" | "none" (TLV 24/25.40, TLV 76)
    upstream_aqm(flows[0], docsis_version="3.0")  # the AQM that modem runs on it, or None (drop-tail)
    low_latency_aggregates(flows, aggregate_service_flows(tree), modem_settings(tree))  # LLD dual queues

Sits below sim, emu, snmp, lab and tiers; imports only ``hfcprov.config`` (read by TLV name),
``hfcprov.errors`` and ``hfcprov.units``. Units: bits/s, bytes, seconds.
"""

from hfcprov.model.classifier import ANY_PROTOCOL, TCP_OR_UDP, Classifier
from hfcprov.model.flow import (
    AQM_ALGORITHMS,
    AQM_PARAMS,
    ASF_PARAMS,
    DEFAULT_AQM_LATENCY_TARGET,
    DEFAULT_DOCSIS_VERSION,
    DEFAULT_MAX_TRAFFIC_BURST,
    DEFAULT_QUEUE,
    DOCSIS_VERSIONS,
    LARGEST_QUEUE,
    QOS_PARAMS,
    AggregateServiceFlow,
    AqmSettings,
    BufferControl,
    BufferRejected,
    Direction,
    ModemSettings,
    ServiceFlow,
    qos_param_values,
    upstream_aqm,
)
from hfcprov.model.fromtree import aggregate_service_flows, classifiers, modem_settings, service_flows
from hfcprov.model.lld import (
    LowLatencyAggregate,
    ProactiveGrants,
    lld_findings,
    low_latency_aggregate,
    low_latency_aggregates,
    runs_low_latency,
)

__all__ = [
    "ANY_PROTOCOL", "TCP_OR_UDP", "AQM_ALGORITHMS", "AQM_PARAMS", "ASF_PARAMS", "DEFAULT_AQM_LATENCY_TARGET", "DEFAULT_DOCSIS_VERSION",
    "DEFAULT_MAX_TRAFFIC_BURST", "DEFAULT_QUEUE", "DOCSIS_VERSIONS", "LARGEST_QUEUE", "QOS_PARAMS", "AggregateServiceFlow", "AqmSettings", "BufferControl",
    "BufferRejected", "Classifier", "Direction", "ModemSettings", "ServiceFlow", "aggregate_service_flows",
    "classifiers", "modem_settings", "qos_param_values", "service_flows", "upstream_aqm",
    "LowLatencyAggregate", "ProactiveGrants", "lld_findings", "low_latency_aggregate", "low_latency_aggregates",
    "runs_low_latency",
]
