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
