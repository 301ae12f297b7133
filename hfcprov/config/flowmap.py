"""Service flows of a config tree: TLVs 24/25 (with 35 Buffer Control, 40 AQM), TLV 68 and
the DOCSIS 1.0 class of service (TLV 4), mapped onto ``hfcprov.flows.ServiceFlow``.

This is the one place that reads rates and buffers out of raw TLVs. Units: bits/s, bytes,
seconds. Sub-TLV codes follow MULPI Annex C.2.2 (the TLV dictionary has the names).
"""

from __future__ import annotations

from hfcprov.config.tree import ConfigTree, Tlv
from hfcprov.flows import BufferControl, ServiceFlow

US_FLOW, DS_FLOW, CLASS_OF_SERVICE, DEFAULT_US_TARGET_BUFFER = 24, 25, 4, 68
BUFFER_CONTROL, AQM = 35, 40  # [24/25].35 Buffer Control; [24/25].40 AQM Encodings (36 is the ASF reference)


def service_flows_of(tree: ConfigTree) -> list[ServiceFlow]:
    """Every service flow in file order: TLV 24/25 flows, then DOCSIS 1.0 classes of service."""
    default_target_ms = None
    for t in tree.tlvs:
        if t.code == DEFAULT_US_TARGET_BUFFER and isinstance(t.value, int):
            default_target_ms = t.value
    flows: list[ServiceFlow] = []
    seen = {US_FLOW: 0, DS_FLOW: 0, CLASS_OF_SERVICE: 0}
    for t in tree.tlvs:
        if t.code not in seen or not t.compound:
            continue
        index = seen[t.code]
        seen[t.code] += 1
        if t.code == CLASS_OF_SERVICE:
            flows.extend(_class_of_service(t, f"4[{index}]"))
        else:
            flows.append(_flow(t, f"{t.code}[{index}]", default_target_ms))
    return flows


def _int(node: Tlv, code: int) -> int | None:
    v = node.get(code)
    return v if isinstance(v, int) else None


def _flow(t: Tlv, path: str, default_target_ms: int | None) -> ServiceFlow:
    upstream = t.code == US_FLOW
    rate = _int(t, 8)
    buffer, source = BufferControl(), None
    bc = [c for c in t.children if c.code == BUFFER_CONTROL and c.compound]
    if bc:
        buffer = BufferControl(minimum=_int(bc[0], 1), target=_int(bc[0], 2), maximum=_int(bc[0], 3))
        source = f"{t.code}.{BUFFER_CONTROL}"
    elif upstream and default_target_ms and rate:
        # TLV 68 gives the default upstream target buffer in milliseconds of the flow's
        # max sustained rate (MULPI C.1.1.26); 0 leaves the choice to the CM.
        buffer = BufferControl(target=int(rate * default_target_ms / 8000))
        source = str(DEFAULT_US_TARGET_BUFFER)
    aqm = [c for c in t.children if c.code == AQM and c.compound]
    aqm_disabled = None
    if aqm and _int(aqm[0], 1) is not None:
        aqm_disabled = bool(_int(aqm[0], 1))
    name = t.get(4)
    latency = _int(t, 14) if not upstream else None
    return ServiceFlow(
        direction="upstream" if upstream else "downstream",
        ref=_int(t, 1), sfid=_int(t, 2),
        service_class_name=name if isinstance(name, str) else None,
        qos_param_set_type=_int(t, 6), traffic_priority=_int(t, 7),
        max_sustained_rate=_float(_int(t, 8)), max_traffic_burst=_int(t, 9),
        min_reserved_rate=_float(_int(t, 10)), peak_rate=_float(_int(t, 27)),
        max_concatenated_burst=_int(t, 14) if upstream else None,
        scheduling_type=_int(t, 15) if upstream else None,
        max_latency=latency / 1e6 if latency is not None else None,  # 25.14 is in microseconds
        buffer=buffer, buffer_source=source, aqm_disabled=aqm_disabled, path=path,
    )


def _float(v: int | None) -> float | None:
    return float(v) if v is not None else None


def _class_of_service(t: Tlv, path: str) -> list[ServiceFlow]:
    """A DOCSIS 1.0 class: 4.1 ClassID, 4.3 MaxRateUp, 4.4 PriorityUp, 4.5 GuaranteedUp,
    4.6 MaxBurstUp for the upstream; 4.2 MaxRateDown makes the downstream half."""
    class_id = _int(t, 1)
    flows = [ServiceFlow(direction="upstream", ref=class_id, traffic_priority=_int(t, 4),
                         max_sustained_rate=_float(_int(t, 3)), min_reserved_rate=_float(_int(t, 5)),
                         max_traffic_burst=_int(t, 6), path=path)]
    if _int(t, 2) is not None:
        flows.append(ServiceFlow(direction="downstream", ref=class_id, max_sustained_rate=_float(_int(t, 2)),
                                 path=path))
    return flows
