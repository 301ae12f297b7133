"""Hypothesis strategies for config trees drawn from the whole TLV dictionary."""

from __future__ import annotations

import ipaddress
from functools import cache

from hypothesis import strategies as st

from hfcprov.config import ConfigError, ConfigTree, Tlv, VarBind
from hfcprov.config.dictionary import CM_MIC, CMTS_MIC, END, FRAGMENTED, PAD, ROOT, Spec
from hfcprov.config.tree import Layout

SKIP_TOP = {PAD, CM_MIC, CMTS_MIC, END, 254}  # 254 first makes a PacketCable MTA file (test_mta)
MAX_DEPTH = 4

ipv4 = st.integers(0, 2**32 - 1).map(lambda n: str(ipaddress.IPv4Address(n)))
ipv6 = st.integers(0, 2**128 - 1).map(lambda n: str(ipaddress.IPv6Address(n)))
mac = st.binary(min_size=6, max_size=6).map(lambda b: ":".join(f"{x:02x}" for x in b))
oid = st.tuples(st.integers(0, 2), st.integers(0, 39), st.lists(st.integers(0, 2**32), max_size=12)).map(
    lambda t: ".".join(str(a) for a in (t[0], t[1], *t[2])))
latin1 = st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=255), max_size=40)


def varbinds():
    values = st.one_of(
        st.tuples(st.just("Integer"), st.integers(-(2**31), 2**31 - 1)),
        st.tuples(st.sampled_from(["Counter32", "Gauge32", "TimeTicks"]), st.integers(0, 2**32 - 1)),
        st.tuples(st.just("Counter64"), st.integers(0, 2**64 - 1)),
        st.tuples(st.sampled_from(["OctetString", "Opaque"]), st.binary(max_size=60)),
        st.tuples(st.just("ObjectIdentifier"), oid),
        st.tuples(st.just("IpAddress"), ipv4),
        st.tuples(st.just("Null"), st.none()),
    )
    return st.tuples(oid, values).map(lambda t: VarBind(t[0], t[1][0], t[1][1]))


def _sized(spec: Spec, lo=0, hi=255):
    """(min, max) byte length a value of ``spec`` may take."""
    rule = spec.rule
    if rule.startswith("fixed:"):
        return int(rule[6:]), int(rule[6:])
    if spec.lrange:
        lo, hi = max(lo, spec.lrange[0]), min(hi, spec.lrange[1])
    return lo, hi


def leaf_values(spec: Spec):
    t = spec.type
    lo, hi = _sized(spec)
    if t.startswith("uint") and not t.endswith("list"):
        size = {"uint8": 1, "uint16": 2, "uint24": 3, "uint32": 4}[t]
        a, b = spec.vrange or (0, 2 ** (8 * size) - 1)
        return st.integers(a, min(b, 2 ** (8 * size) - 1))
    if t == "string":
        return st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=255), min_size=lo, max_size=min(hi, 60))
    if t == "string_nul":
        return st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=255),
                       min_size=max(lo - 1, 0), max_size=min(hi - 1, 60))
    if t in ("bytes", "md5_digest"):
        return st.binary(min_size=lo, max_size=min(hi, 60))
    if t == "empty":
        return st.just(b"")
    if t == "ipv4":
        return ipv4
    if t == "ipv6":
        return ipv6
    if t in ("ipv4_or_ipv6", "addrtype_u8+ipv4_or_ipv6"):
        return st.one_of(ipv4, ipv6)
    if t == "ipv4_or_ipv6+port_u16":
        return st.tuples(st.one_of(ipv4, ipv6), st.integers(0, 65535)).map(
            lambda p: f"{p[0]}:{p[1]}" if "." in p[0] else f"[{p[0]}]:{p[1]}")
    if t == "mac":
        return mac
    if t == "mac+mask":
        return st.tuples(mac, mac).map("/".join)
    if t in ("uint8_list", "uint16_list", "dual_qtag"):
        size = 1 if t == "uint8_list" else 2
        n_lo, n_hi = (2, 2) if t == "dual_qtag" else (lo // size, min(hi // size, 20))
        return st.lists(st.integers(0, 2 ** (8 * size) - 1), min_size=n_lo, max_size=n_hi)
    if t == "ipv4_list":
        return st.lists(ipv4, max_size=8)
    if t == "ipv6_list":
        return st.lists(ipv6, max_size=4)
    if t == "ipv6_prefix_list":
        return st.lists(st.tuples(ipv6, st.integers(0, 128)).map(lambda p: f"{p[0]}/{p[1]}"), max_size=4)
    if t == "ber_oid":
        return oid
    if t == "ber_oid+uint8":
        return st.tuples(oid, st.integers(0, 255))
    if t == "snmp_varbind_ber":
        return varbinds()
    raise AssertionError(f"no strategy for {spec.path} {t}")


def unknown_tlv(parent: Spec):
    # nested, 0 and 255 are ordinary sub-TLV codes (pad and end of data only at the top)
    codes = [c for c in (range(256) if parent.path else range(1, 255)) if c not in parent.children]
    return st.builds(Tlv, st.sampled_from(codes), st.binary(max_size=30))


CABLELABS = b"\xff\xff\xff"


@cache
def tlv_of(spec: Spec, depth: int = 1):
    if spec.compound:
        if depth >= MAX_DEPTH or not spec.children:
            return st.builds(lambda: Tlv(spec.code, None, []))
        if spec.vendor_specific:
            return vendor_specific(spec, depth)
        kids = [tlv_of(c, depth + 1) for c in spec.children.values()] + [unknown_tlv(spec)]
        return st.lists(st.one_of(kids), max_size=4).map(lambda ch: Tlv(spec.code, None, ch))
    if spec.code in FRAGMENTED and depth == 1:
        return st.binary(max_size=700).map(lambda v: Tlv(spec.code, v))
    return leaf_values(spec).filter(lambda v: fits(spec, v)).map(lambda v: Tlv(spec.code, v))


def vendor_specific(spec: Spec, depth: int):
    """A VendorSpecific TLV: CableLabs' vendor ID (or none) with the dictionary's sub-TLVs, or another
    vendor's ID with sub-TLVs of any code (8 excepted) as raw bytes."""
    typed = [tlv_of(c, depth + 1) for code, c in spec.children.items() if code != 8] + [unknown_tlv(spec)]
    cablelabs = st.tuples(st.sampled_from([[Tlv(8, CABLELABS)], []]), st.lists(st.one_of(typed), max_size=4)).map(
        lambda p: Tlv(spec.code, None, p[0] + p[1]))
    theirs = st.builds(Tlv, st.sampled_from([c for c in range(1, 255) if c != 8]), st.binary(max_size=20))
    other = st.tuples(st.binary(min_size=3, max_size=3).filter(lambda v: v != CABLELABS),
                      st.lists(theirs, max_size=4)).map(lambda p: Tlv(spec.code, None, [Tlv(8, p[0])] + p[1]))
    return st.one_of(cablelabs, other)


def fits(spec: Spec, value) -> bool:
    """Whether a drawn value meets the TLV's length rule (short OIDs for 38.6, for instance)."""
    try:
        spec.encode(value)
    except ConfigError:
        return False
    return True


def sample_values(spec: Spec) -> list:
    """Deterministic values for one leaf TLV: its range ends, or a typical value."""
    t = spec.type
    lo, hi = _sized(spec)
    if t.startswith("uint") and not t.endswith("list"):
        size = {"uint8": 1, "uint16": 2, "uint24": 3, "uint32": 4}[t]
        a, b = spec.vrange or (0, 2 ** (8 * size) - 1)
        return [a, min(b, 2 ** (8 * size) - 1)]
    simple = {
        "string": "a" * max(lo, 1), "string_nul": "a" * max(lo - 1, 1), "bytes": b"\x01" * max(lo, 1),
        "md5_digest": b"\x01" * 16, "empty": b"", "ipv4": "10.0.0.1", "ipv6": "2001:db8::1",
        "ipv4_or_ipv6": "10.0.0.1", "addrtype_u8+ipv4_or_ipv6": "2001:db8::1",
        "ipv4_or_ipv6+port_u16": "[2001:db8::1]:161", "mac": "00:11:22:33:44:55",
        "mac+mask": "00:11:22:33:44:55/ff:ff:ff:ff:ff:ff", "uint8_list": [1, 2], "uint16_list": [1, 2],
        "dual_qtag": [100, 200], "ipv4_list": ["10.0.0.1"], "ipv6_list": ["2001:db8::1"],
        "ipv6_prefix_list": ["2001:db8::/32"], "ber_oid": "1.3.6", "ber_oid+uint8": ("1.3.6.1.2.1.69", 1),
        "snmp_varbind_ber": VarBind("1.3.6.1.2.1.1.4.0", "OctetString", b"x"),
    }
    return [simple[t]]


def trees(max_tlvs: int = 8):
    tops = [tlv_of(s) for code, s in sorted(ROOT.children.items()) if code not in SKIP_TOP]
    return st.lists(st.one_of(*tops, unknown_tlv(ROOT)), max_size=max_tlvs).map(
        lambda tlvs: ConfigTree(tlvs=merge_cvc([without_extended_mic(t) for t in tlvs])))


def without_extended_mic(t: Tlv) -> Tlv:
    """A top-level TLV 43 without an Extended CMTS MIC setting (43.6): with a secret the encoder computes
    it (its digest is not the drawn one), which test_extended_mic covers; here it would only be noise."""
    if t.code == 43 and t.compound and any(c.code == 6 for c in t.children):
        return Tlv(43, None, [c for c in t.children if c.code != 6])
    return t


def merge_cvc(tlvs: list[Tlv]) -> list[Tlv]:
    """Adjacent TLVs of a CVC chain are one value (DOCSIS splits a chain over consecutive TLVs)."""
    out: list[Tlv] = []
    for t in tlvs:
        if out and t.code in FRAGMENTED and out[-1].code == t.code:
            out[-1] = Tlv(t.code, out[-1].value + t.value)
        else:
            out.append(t)
    return out


@st.composite
def layouts(draw, n: int):
    """Non-standard trailers real files have: MICs elsewhere or missing, pad bytes, odd tails."""
    marks = []
    for code in (CM_MIC, CMTS_MIC):
        if draw(st.booleans()):
            marks.append((draw(st.integers(0, n)), code))
    marks += [(draw(st.integers(0, n)), PAD) for _ in range(draw(st.integers(0, 3)))]
    marks.sort(key=lambda m: m[0])
    # the CM MIC must precede the CMTS MIC, which covers it
    idx = {c: i for i, (_, c) in enumerate(marks)}
    if CM_MIC in idx and CMTS_MIC in idx and idx[CMTS_MIC] < idx[CM_MIC]:
        i, j = idx[CM_MIC], idx[CMTS_MIC]
        marks[i], marks[j] = (marks[i][0], CMTS_MIC), (marks[j][0], CM_MIC)
    end = draw(st.booleans())
    tail = draw(st.binary(max_size=7)) if end else b""
    return Layout(marks=marks, end_marker=end, tail=tail)
