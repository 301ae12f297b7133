"""snmpsim data files (.snmprec) for simulated cable modems and CMTSes.

The tests, the audit benchmark and the emulated modem all serve what a modem
"applied" through a real SNMP agent (snmpsim). This module writes the data
those agents serve, from the same ``ServiceFlow`` model the rest of hfcprov
uses, so a simulated modem and the audit cannot disagree on an OID.

An .snmprec line is ``OID|TAG|VALUE`` (TAG: 2 Integer, 4 OctetString, 4x hex
OctetString, 64 IpAddress, 65 Counter32, 66 Gauge32/Unsigned32, 67 TimeTicks);
``TAG:writecache`` makes a value settable. snmpsim picks a data file by the
request's community (v2c) or context name (v3), then by the endpoint the
request came in on: ``<data-dir>/<community>/1.3.6.1.6.1.1.<N>.snmprec`` serves
the N-th ``--agent-udpv4-endpoint`` (see ``hfcprov.snmp.simagent``).
"""

from __future__ import annotations

from hfcprov import macaddr
from hfcprov.model import BufferControl, BufferRejected, ServiceFlow, qos_param_values
from hfcprov.snmp import oids

INTEGER, OCTETS, HEX, IPADDRESS, COUNTER32, GAUGE32, TIMETICKS = "2", "4", "4x", "64", "65", "66", "67"


def snmprec(records: list[tuple[str, str, object]]) -> str:
    """Records ``(oid, tag, value)`` as .snmprec text, in OID order (snmpsim's GETNEXT needs it)."""
    lines = []
    for oid, tag, value in sorted(records, key=lambda r: tuple(int(p) for p in r[0].split("."))):
        text = str(value)
        if tag == OCTETS and (not text.isprintable() or "|" in text):
            tag, text = HEX, text.encode().hex()
        lines.append(f"{oid}|{tag}|{text}")
    return "\n".join(lines) + "\n"


def modem_snmprec(
    flows: list[ServiceFlow],
    sys_descr: str,
    config_file: str,
    status: int = oids.CM_OPERATIONAL,
    if_index: int = 2,
    first_sfid: int = 1,
    applied: dict[int, dict] | None = None,
    uptime_ticks: int = 360000,
    tftp_server: str | None = "10.0.0.1",
    boot_state: int = 1,
) -> str:
    """The .snmprec text of a DOCSIS 3.0 cable modem serving the service flows it applied.

    - ``flows``: the flows the modem runs (e.g. ``hfcprov.model.service_flows(tree)`` of the file it
      loaded). Each gets an SFID (its own ``sfid`` or ``first_sfid`` counting up) and three
      docsQosParamSetTable rows (active, admitted, provisioned; index ifIndex.type.sfid) with the
      max rate, burst, min reserved rate and Buffer Control minimum/target/maximum it carries, plus
      docsQosServiceFlowDirection and docsQosServiceFlowBufferSize (the queue the modem gives the
      flow, ``ServiceFlow.queue_size``; 0 for a flow it would refuse) in docsQosServiceFlowTable.
    - ``sys_descr``: sysDescr.0; ``config_file``: docsDevServerConfigFile.0, the file name it loaded.
    - ``status``: docsIfCmStatusValue.<if_index> (12 operational; e.g. 2 notReady for an offline modem).
    - ``applied``: per flow position, field overrides of what the modem really applied, e.g.
      ``{0: {"buffer_target": 65536}}`` for a modem that ignored the asked target buffer (keys are the
      names in ``hfcprov.snmp.oids.PARAM_SET``, plus ``buffer_size`` and ``param_sets``: which rows
      the flow has, default ``(1, 2, 3)`` active, admitted, provisioned; ``(3,)`` for a flow that
      is provisioned but not active). A value of None leaves the column out: e.g. the
      ``hfcprov.model.AQM_PARAMS`` columns for a DOCSIS 3.0 modem, whose MIB predates them.
    - ``tftp_server`` / ``boot_state``: docsDevServerConfigTftpAddressType/Address (IPv4 or IPv6) and
      docsDevServerBootState (1 operational), what the modem says about its own boot.
    - docsDevResetNow.0 is served as false(2) with the ``writecache`` variation, so an SNMP SET of
      true(1) succeeds (start snmpsim with ``--variation-module-options=writecache:file:PATH`` to
      have the set recorded in a shelve file another process can watch).
    """
    applied = applied or {}
    records: list[tuple[str, str, object]] = [
        (oids.SYS_DESCR, OCTETS, sys_descr),
        (oids.SYS_UPTIME, TIMETICKS, uptime_ticks),
        (oids.CONFIG_FILE, OCTETS, config_file),
        (f"{oids.CM_STATUS_VALUE}.{if_index}", INTEGER, status),
        *_boot_records(tftp_server, boot_state),
    ]
    reset_oid = oids.RESET_NOW
    next_sfid = first_sfid
    for pos, flow in enumerate(flows):
        sfid = flow.sfid or next_sfid
        next_sfid = max(next_sfid, sfid) + 1
        values = qos_param_values(flow)
        values.update(applied.get(pos, {}))
        direction = 2 if flow.direction == "upstream" else 1
        for set_type in values.get("param_sets", (oids.PARAM_SET_ACTIVE, oids.PARAM_SET_ADMITTED,
                                                  oids.PARAM_SET_PROVISIONED)):
            index = f"{if_index}.{set_type}.{sfid}"
            for key, column in oids.PARAM_SET.items():
                value = values.get(key)
                if value is None:
                    continue
                tag = OCTETS if key == "service_class_name" else INTEGER if key in _INTEGER_PARAMS else GAUGE32
                records.append((f"{column}.{index}", tag, value if tag == OCTETS else int(value)))
        buffer_size = values.get("buffer_size")
        if buffer_size is None:
            buffer_size = _queue_size(values)
        records.append((f"{oids.SF_DIRECTION}.{if_index}.{sfid}", INTEGER, direction))
        records.append((f"{oids.SF_BUFFER_SIZE}.{if_index}.{sfid}", GAUGE32, int(buffer_size)))
    text = snmprec(records)
    # the writecache variation needs "value=" syntax, so it is added outside snmprec()'s escaping
    return _insert_sorted(text, f"{reset_oid}|{INTEGER}:writecache|value=2")


# param-set columns whose SYNTAX is an INTEGER enumeration (TruthValue included), not Unsigned32
_INTEGER_PARAMS = ("aqm_disabled", "aqm_algorithm")


def _queue_size(values: dict) -> int:
    """The queue a modem gives the Buffer Control it applied (``values``); 0 if it would refuse it."""
    buffer = BufferControl(values.get("buffer_minimum"), values.get("buffer_target"), values.get("buffer_maximum"))
    try:
        return buffer.queue_size()
    except BufferRejected:
        return 0


def cmts_snmprec(modems: list[dict], sys_descr: str = "hfcprov simulated CMTS", docsis3: bool = True) -> str:
    """The .snmprec text of a CMTS that knows ``modems``: dicts with ``mac`` (any notation),
    ``ip`` and ``status`` (docsIfCmtsCmStatusValue, 8 operational), optional ``ipv6``,
    ``reg_status`` and ``in_status_table`` (False: listed in the registration table only). With
    ``docsis3`` the DOCS-IF3 registration table is served too (its status: operational(8) when the
    modem is, unless ``reg_status`` says otherwise)."""
    import ipaddress

    records: list[tuple[str, str, object]] = [(oids.SYS_DESCR, OCTETS, sys_descr)]
    for i, modem in enumerate(modems, 1):
        mac_hex = macaddr.normalize(modem["mac"])
        status = int(modem.get("status", oids.CMTS_CM_OPERATIONAL))
        if modem.get("in_status_table", True):  # False: a modem the registration table lists alone
            records += [
                (f"{oids.CMTS_CM_MAC}.{i}", HEX, mac_hex),
                (f"{oids.CMTS_CM_IP}.{i}", IPADDRESS, modem.get("ip") or "0.0.0.0"),
                (f"{oids.CMTS_CM_STATUS}.{i}", INTEGER, status),
            ]
        if docsis3:
            ip_hex = "".join(f"{int(p):02x}" for p in str(modem.get("ip") or "0.0.0.0").split("."))
            v6 = ipaddress.IPv6Address(modem["ipv6"]).packed.hex() if modem.get("ipv6") else "00" * 16
            reg = modem.get("reg_status", 8 if status == oids.CMTS_CM_OPERATIONAL else 1)
            records += [
                (f"{oids.REG_MAC}.{i}", HEX, mac_hex),
                (f"{oids.REG_IPV6}.{i}", HEX, v6),
                (f"{oids.REG_IPV4}.{i}", HEX, ip_hex),
                (f"{oids.REG_STATUS}.{i}", INTEGER, reg),
            ]
    return snmprec(records)


def _insert_sorted(text: str, line: str) -> str:
    key = lambda ln: tuple(int(p) for p in ln.split("|", 1)[0].split("."))
    lines = [ln for ln in text.splitlines() if ln] + [line]
    return "\n".join(sorted(lines, key=key)) + "\n"


__all__ = ["cmts_snmprec", "modem_snmprec", "snmprec"]


def _boot_records(tftp_server: str | None, boot_state: int) -> list[tuple[str, str, object]]:
    """docsDevServerBootState and the config file's TFTP server as InetAddressType + InetAddress."""
    import ipaddress

    records: list[tuple[str, str, object]] = [(oids.BOOT_STATE, INTEGER, boot_state)]
    if tftp_server:
        addr = ipaddress.ip_address(tftp_server)
        records += [(oids.CONFIG_TFTP_TYPE, INTEGER, 1 if addr.version == 4 else 2),
                    (oids.CONFIG_TFTP, HEX, addr.packed.hex())]
    return records


def live_uptime(text: str, elapsed: float = 0.0) -> str:
    """``text`` (.snmprec) with sysUpTime.0 counting from the agent's start, ``elapsed`` seconds in
    (snmpsim's ``numeric`` variation, 100 ticks a second): an agent started at each boot then
    reports a sysUpTime that restarts, as a rebooted modem's does."""
    line = f"{oids.SYS_UPTIME}|{TIMETICKS}:numeric|rate=100,offset={max(0, int(elapsed * 100))}"
    kept = [ln for ln in text.splitlines() if ln and not ln.startswith(f"{oids.SYS_UPTIME}|")]
    return _insert_sorted("\n".join(kept) + "\n", line)
