"""The numeric OIDs hfcprov reads and sets, named once, resolved from mibs/.

Everything in ``hfcprov.snmp`` (client, audit, reset, CMTS inventory, agent
data) takes its OIDs from here so a name and its number cannot drift apart.
"""

from __future__ import annotations

from hfcprov import mib


def _oid(name: str) -> str:
    oid = mib.resolve(name)
    if oid is None:  # a broken mibs/ folder is a packaging bug, not a user error
        raise LookupError(f"{name} is not defined in mibs/")
    return oid


SYS_DESCR = _oid("sysDescr.0")
SYS_UPTIME = _oid("sysUpTime.0")
CONFIG_FILE = _oid("docsDevServerConfigFile.0")
# what the modem says about its own boot (the audit's boot fields)
BOOT_STATE = _oid("docsDevServerBootState.0")
CONFIG_TFTP_TYPE = _oid("docsDevServerConfigTftpAddressType.0")
CONFIG_TFTP = _oid("docsDevServerConfigTftpAddress.0")
BOOT_SCALARS = (BOOT_STATE, CONFIG_TFTP_TYPE, CONFIG_TFTP)
RESET_NOW = _oid("docsDevResetNow.0")
CM_STATUS_VALUE = _oid("docsIfCmStatusValue")  # column; index is the CM MAC ifIndex (usually 2)

# docsQosParamSetTable columns; row index ifIndex.type.sfid
PARAM_SET = {
    "service_class_name": _oid("docsQosParamSetServiceClassName"),
    "max_sustained_rate": _oid("docsQosParamSetMaxTrafficRate"),
    "max_traffic_burst": _oid("docsQosParamSetMaxTrafficBurst"),
    "min_reserved_rate": _oid("docsQosParamSetMinReservedRate"),
    "buffer_minimum": _oid("docsQosParamSetMinimumBuffer"),
    "buffer_target": _oid("docsQosParamSetTargetBuffer"),
    "buffer_maximum": _oid("docsQosParamSetMaximumBuffer"),
    # DOCSIS 3.1 only (hfcprov.model.AQM_PARAMS)
    "aqm_disabled": _oid("docsQosParamSetAqmDisabled"),
    "aqm_latency_target": _oid("docsQosParamSetAqmLatencyTarget"),
    "aqm_algorithm": _oid("docsQosParamSetAqmAlgInUse"),
}
# docsQosServiceFlowTable columns; row index ifIndex.sfid
SF_DIRECTION = _oid("docsQosServiceFlowDirection")  # downstream(1), upstream(2)
SF_BUFFER_SIZE = _oid("docsQosServiceFlowBufferSize")

# Per-flow counters (row index ifIndex.sfid): docsQosServiceFlowStatsTable, and the Low Latency
# DOCSIS latency and congestion tables. Key -> (column, SMI counter width in bits; 0: a gauge)
FLOW_COUNTERS = {
    "packets": (_oid("docsQosServiceFlowPkts"), 64),
    "octets": (_oid("docsQosServiceFlowOctets"), 64),
    "policed_drops": (_oid("docsQosServiceFlowPolicedDropPkts"), 32),
    "policed_delays": (_oid("docsQosServiceFlowPolicedDelayPkts"), 32),
    "aqm_drops": (_oid("docsQosServiceFlowAqmDroppedPkts"), 64),
    "latency_packets": (_oid("docsQosSfLatencyStatsPkts"), 64),
    "latency_max_us": (_oid("docsQosSfLatencyStatsMaxLatency"), 0),
    "sanctioned": (_oid("docsQosSfCongestionSanctionedPkts"), 64),
    "ect0": (_oid("docsQosSfCongestionEct0Pkts"), 64),
    "ect1": (_oid("docsQosSfCongestionEct1Pkts"), 64),
    "ce": (_oid("docsQosSfCongestionCePkts"), 64),
    "ce_marked": (_oid("docsQosSfCongestionCeMarkedPkts"), 64),
}
LATENCY_BIN_EDGES = _oid("docsQosSfLatencyStatsHistBinEdges")  # 4-octet upper edges, microseconds
LATENCY_BIN_COUNTS = _oid("docsQosSfLatencyStatsHistCounts")  # 4-octet counts, one more than edges

# docsQosAsfTable columns (Aggregate Service Flows, TLV 70/71); row index ifIndex.asfid
ASF = {
    "direction": _oid("docsQosAsfDirection"),
    "profile_name": _oid("docsQosAsfServiceClassName"),
    "max_sustained_rate": _oid("docsQosAsfMaxSustainedRate"),
    "max_traffic_burst": _oid("docsQosAsfMaxTrafficBurst"),
    "peak_rate": _oid("docsQosAsfPeakTrafficRate"),
    "coupling_factor": _oid("docsQosAsfAqmCouplingFactor"),
    "scheduling_weight": _oid("docsQosAsfSchedulingWeight"),
    "queue_protection": _oid("docsQosAsfQueueProtection"),
    "low_latency_sfid": _oid("docsQosAsfLowLatencySfid"),
    "classic_sfid": _oid("docsQosAsfClassicSfid"),
}

PARAM_SET_ACTIVE, PARAM_SET_ADMITTED, PARAM_SET_PROVISIONED = 1, 2, 3
CM_OPERATIONAL = 12  # docsIfCmStatusValue operational(12)
CMTS_CM_OPERATIONAL = 8  # docsIfCmtsCmStatusValue operational(8)
DIRECTION = {1: "downstream", 2: "upstream"}

# CMTS side
CMTS_CM_MAC = _oid("docsIfCmtsCmStatusMacAddress")
CMTS_CM_IP = _oid("docsIfCmtsCmStatusIpAddress")
CMTS_CM_STATUS = _oid("docsIfCmtsCmStatusValue")
REG_MAC = _oid("docsIf3CmtsCmRegStatusMacAddr")
REG_IPV4 = _oid("docsIf3CmtsCmRegStatusIPv4Addr")
REG_IPV6 = _oid("docsIf3CmtsCmRegStatusIPv6Addr")
REG_STATUS = _oid("docsIf3CmtsCmRegStatusValue")
