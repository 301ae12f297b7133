"""The service-flow view of a config file: the one model every other part reads.

The simulator, the emulated modem, the SNMP audit and the campaign runner all
take ``ServiceFlow`` objects; none of them walks raw TLVs to find a rate or a
buffer. ``service_flows(tree)`` is the only place that maps TLVs 24/25 (and the
DOCSIS 1.0 class of service, TLV 4, and TLV 68) onto this model.

Units are plain numbers: bits/s for rates, bytes for sizes, seconds for times.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Direction = Literal["upstream", "downstream"]


@dataclass(frozen=True)
class BufferControl:
    """Service-flow TLV 24/25.35: the CM's queue for this flow, in bytes (DOCSIS 3.0)."""

    minimum: int | None = None  # 35.1 MinimumBuffer
    target: int | None = None  # 35.2 TargetBuffer
    maximum: int | None = None  # 35.3 MaximumBuffer


@dataclass(frozen=True)
class ServiceFlow:
    """One upstream (TLV 24) or downstream (TLV 25) service flow, or a DOCSIS 1.0 class of service."""

    direction: Direction
    ref: int | None = None  # 24/25.1 ServiceFlowReference (or 4.1 ClassID for DOCSIS 1.0)
    sfid: int | None = None  # 24/25.2 ServiceFlowId
    service_class_name: str | None = None  # 24/25.4
    qos_param_set_type: int | None = None  # 24/25.6 bitmask: 1 provisioned, 2 admitted, 4 active
    traffic_priority: int | None = None  # 24/25.7
    max_sustained_rate: float | None = None  # 24/25.8 bits/s
    max_traffic_burst: int | None = None  # 24/25.9 bytes
    min_reserved_rate: float | None = None  # 24/25.10 bits/s
    peak_rate: float | None = None  # 24/25.27 bits/s
    max_concatenated_burst: int | None = None  # 24.14 bytes
    scheduling_type: int | None = None  # 24.15: 2 best effort, 6 UGS, ...
    max_latency: float | None = None  # 25.14 seconds
    buffer: BufferControl = field(default_factory=BufferControl)
    # Where the buffer figures came from: "24.35"/"25.35", "68" (default upstream target), or None.
    buffer_source: str | None = None
    aqm_disabled: bool | None = None  # 24/25.36.1 SF AQM Disable
    path: str = ""  # TLV path of the flow in its file, e.g. "24[0]" (first TLV 24)

    @property
    def target_buffer(self) -> int | None:
        return self.buffer.target

    def as_dict(self) -> dict:
        return asdict(self)


def service_flows(tree) -> list[ServiceFlow]:
    """The service flows a config tree provisions, in file order.

    Implemented in ``hfcprov.config.flowmap`` (it needs the TLV dictionary);
    re-exported here so callers import the model and its source from one place.
    """
    from hfcprov.config.flowmap import service_flows_of

    return service_flows_of(tree)
