"""The model read from a config tree: service flows (TLV 24/25, DOCSIS 1.0 TLV 4), classifiers
(22/23), aggregate service flows (70/71) and the file-wide settings (68, 76, 91).

Every field is found through the TLV dictionary by its name (``MaxRateSustained``,
``BufferControl.TargetBuffer``), never by a TLV number written here, so the dictionary
stays the one place that knows the codes. Units: bits/s, bytes, seconds.
"""

from __future__ import annotations

import ipaddress

from hfcprov.config.dictionary import ROOT, Spec
from hfcprov.config.tree import ConfigTree, Tlv
from hfcprov.model.classifier import ANY_PROTOCOL, Classifier
from hfcprov.model.flow import AggregateServiceFlow, AqmSettings, BufferControl, ModemSettings, ServiceFlow


class _Node:
    """A compound TLV read by child name through its dictionary spec (the first child of each code)."""

    __slots__ = ("tlv", "spec", "leaves", "subs")

    def __init__(self, tlv: Tlv, spec: Spec):
        self.tlv, self.spec = tlv, spec
        leaves: dict[int, object] = {}
        subs: dict[int, Tlv] = {}
        for c in tlv.children:  # one pass: every field below is a dict lookup
            if c.value is None:
                subs.setdefault(c.code, c)
            else:
                leaves.setdefault(c.code, c.value)
        self.leaves, self.subs = leaves, subs

    def _child(self, name: str) -> Spec:
        child = self.spec.by_name.get(name) or self.spec.child_named(name)
        if child is None:  # a renamed dictionary entry: a program error, caught by the tests
            raise LookupError(f"TLV dictionary: {self.spec.path or 'Main'} has no child named {name}")
        return child

    def value(self, name: str):
        return self.leaves.get(self._child(name).code)

    def int(self, name: str) -> int | None:
        v = self.value(name)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    def float(self, name: str) -> float | None:
        v = self.int(name)
        return float(v) if v is not None else None

    def str(self, name: str) -> str | None:
        v = self.value(name)
        return v if isinstance(v, str) else None

    def sub(self, name: str) -> _Node | None:
        spec = self._child(name)
        c = self.subs.get(spec.code)
        return _Node(c, spec) if c is not None else None


def _top(name: str) -> Spec:
    spec = ROOT.child_named(name)
    if spec is None:
        raise LookupError(f"TLV dictionary: no top-level TLV named {name}")
    return spec


def _each(tree: ConfigTree, name: str):
    """(node, "code[i]") for every compound top-level TLV called ``name``, in file order."""
    spec = _top(name)
    index = 0
    for t in tree.tlvs:
        if t.code == spec.code and t.compound:
            yield _Node(t, spec), f"{t.code}[{index}]"
            index += 1


def _top_int(tree: ConfigTree, name: str) -> int | None:
    """The last top-level leaf called ``name`` (a later setting overrides an earlier one)."""
    code, found = _top(name).code, None
    for t in tree.tlvs:
        if t.code == code and isinstance(t.value, int):
            found = t.value
    return found


def modem_settings(tree: ConfigTree) -> ModemSettings:
    aqm_off = _top_int(tree, "CMUpstreamAQMDisable")
    return ModemSettings(default_us_target_buffer_ms=_top_int(tree, "DefaultUpstreamTargetBuffer"),
                         cm_upstream_aqm_disable=None if aqm_off is None else bool(aqm_off),
                         low_latency_disable=_top_int(tree, "LowLatencyDisable"))


def service_flows(tree: ConfigTree) -> list[ServiceFlow]:
    """Every service flow in file order: TLV 24 and 25 flows, then DOCSIS 1.0 classes of service."""
    settings = modem_settings(tree)
    flows: list[ServiceFlow] = []
    spec_us, spec_ds = _top("UsServiceFlow"), _top("DsServiceFlow")
    seen = {spec_us.code: 0, spec_ds.code: 0}
    for t in tree.tlvs:
        if t.code in seen and t.compound:
            path = f"{t.code}[{seen[t.code]}]"
            seen[t.code] += 1
            upstream = t.code == spec_us.code
            flows.append(_flow(_Node(t, spec_us if upstream else spec_ds), upstream, path, settings))
    for node, path in _each(tree, "ClassOfService"):
        flows.extend(_class_of_service(node, path))
    return flows


# Fields whose dictionary name differs by direction: (upstream name, downstream name); None: not in that direction.
_BY_DIRECTION = {
    "ref": ("UsServiceFlowRef", "DsServiceFlowRef"),
    "sfid": ("UsServiceFlowId", "DsServiceFlowId"),
    "peak_rate": ("UpstreamPeakTrafficRate", "DownstreamPeakTrafficRate"),
    "asf_ref": ("UpstreamAggregateServiceFlowReference", "DownstreamAggregateServiceFlowReference"),
    "max_concatenated_burst": ("MaxConcatenatedBurst", None),
    "scheduling_type": ("SchedulingType", None),
    "max_latency": (None, "MaxDsLatency"),
}


def _flow(n: _Node, upstream: bool, path: str, settings: ModemSettings) -> ServiceFlow:
    def named(field: str) -> str | None:
        return _BY_DIRECTION[field][0 if upstream else 1]

    rate = n.int("MaxRateSustained")
    buffer, source = BufferControl(), None
    bc = n.sub("BufferControl")
    if bc is not None:
        buffer = BufferControl(minimum=bc.int("MinimumBuffer"), target=bc.int("TargetBuffer"),
                               maximum=bc.int("MaximumBuffer"))
        source = f"{n.tlv.code}.{bc.spec.code}"
    elif upstream and settings.default_us_target_buffer_ms and rate:
        # TLV 68: the default upstream target buffer in ms of the flow's max sustained rate
        # (MULPI C.1.1.26); 0 leaves the choice to the CM.
        buffer = BufferControl(target=int(rate * settings.default_us_target_buffer_ms / 8000))
        source = str(_top("DefaultUpstreamTargetBuffer").code)
    aqm = AqmSettings(cm_disabled=bool(upstream and settings.cm_upstream_aqm_disable))
    node = n.sub("AQMEncodings")
    if node is not None:
        disable = node.int("SFAQMDisable")
        aqm = AqmSettings(disable=None if disable is None else bool(disable),
                          latency_target_ms=node.int("SFAQMLatencyTarget"),
                          algorithm_code=node.int("AQMAlgorithm"),
                          iaqm_max_threshold_us=node.int("ImmediateAQMMaxThreshold"),
                          iaqm_range_exponent=node.int("ImmediateAQMRangeExponent"),
                          cm_disabled=aqm.cm_disabled)
    latency = n.int(named("max_latency")) if named("max_latency") else None
    return ServiceFlow(
        direction="upstream" if upstream else "downstream",
        ref=n.int(named("ref")), sfid=n.int(named("sfid")),
        service_class_name=n.str("ServiceClassName"),
        qos_param_set_type=n.int("QosParamSetType"), traffic_priority=n.int("TrafficPriority"),
        max_sustained_rate=n.float("MaxRateSustained"), max_traffic_burst=n.int("MaxTrafficBurst"),
        min_reserved_rate=n.float("MinReservedRate"), peak_rate=n.float(named("peak_rate")),
        max_concatenated_burst=n.int(named("max_concatenated_burst")) if upstream else None,
        scheduling_type=n.int(named("scheduling_type")) if upstream else None,
        max_latency=latency / 1e6 if latency is not None else None,  # MaxDsLatency is in microseconds
        asf_ref=n.int(named("asf_ref")),
        buffer=buffer, buffer_source=source, aqm=aqm, path=path,
    )


def _class_of_service(n: _Node, path: str) -> list[ServiceFlow]:
    """A DOCSIS 1.0 class: ClassID, MaxRateUp, PriorityUp, GuaranteedUp, MaxBurstUp make the
    upstream flow; MaxRateDown makes the downstream half."""
    class_id = n.int("ClassID")
    flows = [ServiceFlow(direction="upstream", ref=class_id, traffic_priority=n.int("PriorityUp"),
                         max_sustained_rate=n.float("MaxRateUp"), min_reserved_rate=n.float("GuaranteedUp"),
                         max_traffic_burst=n.int("MaxBurstUp"), path=path)]
    if n.int("MaxRateDown") is not None:
        flows.append(ServiceFlow(direction="downstream", ref=class_id, max_sustained_rate=n.float("MaxRateDown"),
                                 path=path))
    return flows


def aggregate_service_flows(tree: ConfigTree) -> list[AggregateServiceFlow]:
    """TLV 70 (upstream) and 71 (downstream) aggregate service flows, upstream first."""
    out = []
    for name, direction in (("UpstreamAggregateServiceFlow", "upstream"),
                            ("DownstreamAggregateServiceFlow", "downstream")):
        ref_name = "UpstreamServiceFlowReference" if direction == "upstream" else "DownstreamServiceFlowReference"
        peak_name = "UpstreamPeakTrafficRate" if direction == "upstream" else "DownstreamPeakTrafficRate"
        for n, path in _each(tree, name):
            ll = n.sub("LowLatencyAggregateSFEncodings")
            qp = ll.int("QueueProtectionEnable") if ll else None
            out.append(AggregateServiceFlow(
                direction=direction, ref=n.int(ref_name), profile_name=n.str("ASFQoSProfileName"),
                max_sustained_rate=n.float("MaxRateSustained"), max_traffic_burst=n.int("MaxTrafficBurst"),
                peak_rate=n.float(peak_name), min_reserved_rate=n.float("MinReservedRate"),
                low_latency_ref=ll.int("LowLatencyServiceFlowReference") if ll else None,
                classic_scn=ll.str("ClassicSFSCN") if ll else None,
                low_latency_scn=ll.str("LowLatencySFSCN") if ll else None,
                coupling_factor=ll.int("AQMCouplingFactor") if ll else None,
                scheduling_weight=ll.int("SchedulingWeight") if ll else None,
                queue_protection=None if qp is None else bool(qp), path=path))
    return out


def classifiers(tree: ConfigTree) -> list[Classifier]:
    """Every TLV 22/23 packet classifier, in file order."""
    spec_us, spec_ds = _top("UsPacketClass"), _top("DsPacketClass")
    seen = {spec_us.code: 0, spec_ds.code: 0}
    out = []
    for t in tree.tlvs:
        if t.code in seen and t.compound:
            path = f"{t.code}[{seen[t.code]}]"
            seen[t.code] += 1
            upstream = t.code == spec_us.code
            out.append(_classifier(_Node(t, spec_us if upstream else spec_ds), upstream, path))
    return out


def _addr(n: _Node, name: str) -> int | None:
    v = n.value(name)
    if v is None:
        return None
    return int(ipaddress.IPv4Address(v if isinstance(v, str) else bytes(v)))


def _classifier(n: _Node, upstream: bool, path: str) -> Classifier:
    kw = {}
    ip = n.sub("IpPacketClassifier")
    if ip is not None:
        tos = ip.value("IpTos")
        if isinstance(tos, (bytes, bytearray)) and len(tos) == 3:
            kw["tos"] = (tos[0], tos[1], tos[2])
        if ip.int("IpProto") is not None:
            kw["protocol"] = ip.int("IpProto")
        for key, a, m in (("src", "IpSrcAddr", "IpSrcMask"), ("dst", "IpDstAddr", "IpDstMask")):
            addr, mask = _addr(ip, a), _addr(ip, m)
            if addr is not None:
                kw[key] = (addr, 0xFFFFFFFF if mask is None else mask)
        for key, s, e in (("src_ports", "SrcPortStart", "SrcPortEnd"), ("dst_ports", "DstPortStart", "DstPortEnd")):
            start, end = ip.int(s), ip.int(e)
            if start is not None or end is not None:
                kw[key] = (0 if start is None else start, 0xFFFF if end is None else end)
    state = n.int("ActivationState")
    kw.setdefault("protocol", ANY_PROTOCOL)
    return Classifier(direction="upstream" if upstream else "downstream", path=path,
                      ref=n.int("ClassifierRef"), sf_ref=n.int("ServiceFlowRef"), sfid=n.int("ServiceFlowId"),
                      priority=n.int("RulePriority") or 0, active=state != 0, **kw)
