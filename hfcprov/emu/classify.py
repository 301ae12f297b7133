"""Packet classifiers (TLV 22 upstream, 23 downstream) and how the emulated modem steers with them.

A DOCSIS cable modem puts every packet into one of its service flows: the
classifiers, tried from the highest RulePriority (22/23.5) down, name a flow by
its ServiceFlowReference (22/23.3); a packet no classifier matches goes to the
primary (first) flow of its direction. The IP criteria (22/23.9) are

    9.1 IpTos: (tos-low, tos-high, tos-mask): matches when low <= (ToS & mask) <= high
    9.2 IpProto: 0..255, 256 any protocol, 257 TCP or UDP
    9.3/9.4 IpSrcAddr/Mask, 9.5/9.6 IpDstAddr/Mask: (addr & mask) == (IP addr & mask)
    9.7/9.8 SrcPortStart/End, 9.9/9.10 DstPortStart/End: inclusive ranges (TCP/UDP only)

In tc each classifier becomes ``u32`` filters on the direction's root qdisc, one
tc priority per classifier in rule order (tc tries lower numbers first), all
pointing at the flow's band. u32 matches value/mask pairs only, so a range (ToS
or ports) is split into the aligned blocks that cover it exactly
(``range_blocks``); a classifier is the cross product of its blocks. Port
matches read the transport header at offset 20 and so also require IHL 5 (no IP
options), as a home host's packets are.

The classifiers themselves are read from the file by ``hfcprov.model.classifiers``.
"""

from __future__ import annotations

from dataclasses import dataclass

from hfcprov.errors import HfcprovError
from hfcprov.model import ANY_PROTOCOL, TCP_OR_UDP, Classifier

TCP, UDP = 6, 17
MAX_FILTERS = 64  # u32 filters one classifier may expand to before the modem refuses it


class ClassifierRefused(HfcprovError):
    """The modem cannot install a classifier; the message is the reason it logs."""


def range_blocks(lo: int, hi: int, width: int, care: int | None = None) -> list[tuple[int, int]]:
    """(value, mask) pairs whose union is exactly {x : lo <= (x & care) <= hi} over ``width`` bits.

    Bits outside ``care`` are never matched on. The blocks fix ``care``'s bits from the top
    down, so a plain range (care all ones) splits into at most 2 * width prefix blocks.
    """
    care = (1 << width) - 1 if care is None else care
    bits = [1 << i for i in reversed(range(width)) if care & (1 << i)]
    out: list[tuple[int, int]] = []

    def walk(value: int, mask: int, rest: list[int]) -> None:
        free = sum(rest)
        low, high = value, value | free  # smallest and largest (x & care) under this prefix
        if high < lo or low > hi:
            return
        if lo <= low and high <= hi:
            out.append((value, mask))
            return
        bit, tail = rest[0], rest[1:]
        walk(value, mask | bit, tail)
        walk(value | bit, mask | bit, tail)

    if lo <= hi:
        walk(0, 0, bits)
    return out


def u32_matches(c: Classifier) -> list[list[str]]:
    """The classifier as alternative u32 match lists (a packet matching any one list matches).

    Raises ``ClassifierRefused`` for criteria the modem cannot honour.
    """
    if c.tos and c.tos[0] > c.tos[1]:
        raise ClassifierRefused(f"{c.name}: IpTos low {c.tos[0]} > high {c.tos[1]}; not installed")
    for label, ports in (("SrcPort", c.src_ports), ("DstPort", c.dst_ports)):
        if ports and ports[0] > ports[1]:
            raise ClassifierRefused(f"{c.name}: {label}Start {ports[0]} > {label}End {ports[1]}; not installed")
    if c.protocol > TCP_OR_UDP:
        raise ClassifierRefused(f"{c.name}: IpProto {c.protocol} is not a protocol number; not installed")
    uses_ports = c.src_ports is not None or c.dst_ports is not None
    if c.protocol == TCP_OR_UDP or (uses_ports and c.protocol == ANY_PROTOCOL):
        protocols = [TCP, UDP]  # port criteria only ever match TCP and UDP
    elif c.protocol == ANY_PROTOCOL:
        protocols = [None]
    else:
        protocols = [c.protocol]
    fixed: list[str] = []
    if c.src:
        fixed += ["match", "u32", _hex(c.src[0] & c.src[1]), _hex(c.src[1]), "at", "12"]
    if c.dst:
        fixed += ["match", "u32", _hex(c.dst[0] & c.dst[1]), _hex(c.dst[1]), "at", "16"]
    if uses_ports:
        fixed += ["match", "u8", "0x05", "0x0f", "at", "0"]  # IHL 5: the ports sit at offset 20
    tos = range_blocks(c.tos[0], c.tos[1], 8, c.tos[2]) if c.tos else [None]
    sports = range_blocks(*c.src_ports, 16) if c.src_ports else [None]
    dports = range_blocks(*c.dst_ports, 16) if c.dst_ports else [None]
    count = len(protocols) * len(tos) * len(sports) * len(dports)
    if not tos or not sports or not dports:
        raise ClassifierRefused(f"{c.name}: its IpTos range can never match; not installed")
    if count > MAX_FILTERS:
        raise ClassifierRefused(f"{c.name}: needs {count} u32 filters, more than the {MAX_FILTERS} "
                                "this modem installs per classifier; not installed")
    out = []
    for proto in protocols:
        for t in tos:
            for sp in sports:
                for dp in dports:
                    m = list(fixed)
                    if proto is not None:
                        m += ["match", "u8", str(proto), "0xff", "at", "9"]
                    if t is not None and t[1]:
                        m += ["match", "u8", _hex(t[0]), _hex(t[1]), "at", "1"]
                    if sp is not None and sp[1]:
                        m += ["match", "u16", _hex(sp[0]), _hex(sp[1]), "at", "20"]
                    if dp is not None and dp[1]:
                        m += ["match", "u16", _hex(dp[0]), _hex(dp[1]), "at", "22"]
                    if not any(a == "match" for a in m):
                        m = ["match", "u32", "0", "0", "at", "0"]  # no criteria: every IP packet
                    out.append(m)
    return out


def _hex(v: int) -> str:
    return f"0x{v:x}"


@dataclass(frozen=True)
class Steering:
    """One installed classifier: its u32 match lists, the tc priority and the band it feeds."""

    classifier: Classifier
    prio: int  # tc filter priority (lower is tried first)
    band: int  # index of the flow in its direction's plans (0 is the primary flow)
    matches: list[list[str]]


def steer(flows_by_direction: dict[str, list], classifiers: list[Classifier]) -> tuple[list[Steering], list[str]]:
    """Which classifiers the modem installs, in rule order, and why it refuses the others.

    ``flows_by_direction`` holds each direction's installed ``ServiceFlow`` objects in band
    order; a classifier naming a flow that is not there (refused, or never provisioned) is
    not installed.
    """
    refused: list[str] = []
    # Highest RulePriority first; equal priorities in file order.
    ordered = sorted(enumerate(classifiers), key=lambda ic: (-ic[1].priority, ic[0]))
    out: list[Steering] = []
    prio = {"upstream": 0, "downstream": 0}
    for _, c in ordered:
        if not c.active:
            refused.append(f"{c.name}: ActivationState inactive; not installed")
            continue
        flows = flows_by_direction.get(c.direction, [])
        band = next((i for i, f in enumerate(flows)
                     if (c.sf_ref is not None and f.ref == c.sf_ref) or (c.sfid is not None and f.sfid == c.sfid)),
                    None)
        if band is None:
            which = f"ServiceFlowRef {c.sf_ref}" if c.sf_ref is not None else f"ServiceFlowId {c.sfid}"
            refused.append(f"{c.name}: its {c.direction} flow ({which}) is not installed; not installed")
            continue
        try:
            matches = u32_matches(c)
        except ClassifierRefused as err:
            refused.append(str(err))
            continue
        prio[c.direction] += 1
        out.append(Steering(classifier=c, prio=prio[c.direction], band=band, matches=matches))
    return out, refused
