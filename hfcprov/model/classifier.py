"""A packet classifier (TLV 22 upstream, 23 downstream) as the file gives it.

A CM tries classifiers from the highest RulePriority down; the first match names
the service flow (by reference or SFID); a packet nothing matches goes to the
primary flow of its direction. Only the IP criteria (22/23.9) are modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

ANY_PROTOCOL, TCP_OR_UDP = 256, 257  # 22/23.9.2 IpProto special values


@dataclass(frozen=True)
class Classifier:
    """A packet classifier (TLV 22/23) as the modem applies it: what it matches and the flow it feeds."""

    direction: str
    path: str  # e.g. "22[0]"
    ref: int | None = None  # .1 ClassifierRef
    sf_ref: int | None = None  # .3 ServiceFlowRef
    sfid: int | None = None  # .4 ServiceFlowId
    priority: int = 0  # .5 RulePriority: higher is tried first
    active: bool = True  # .6 ActivationState (default active)
    tos: tuple[int, int, int] | None = None  # 9.1 (low, high, mask)
    protocol: int = ANY_PROTOCOL  # 9.2
    src: tuple[int, int] | None = None  # 9.3/9.4 (addr, mask) as integers
    dst: tuple[int, int] | None = None  # 9.5/9.6
    src_ports: tuple[int, int] | None = None  # 9.7/9.8
    dst_ports: tuple[int, int] | None = None  # 9.9/9.10

    @property
    def name(self) -> str:
        return f"classifier {self.path}" + (f" (ref {self.ref})" if self.ref is not None else "")
