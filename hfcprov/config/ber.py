"""The slice of ASN.1 BER that DOCSIS config files carry: OIDs and SNMP VarBinds (TLV 11).

A VarBind is ``SEQUENCE { name OBJECT IDENTIFIER, value <SMI type> }``. We encode the
definite form the docsis C tool (net-snmp) writes in config files: shortest lengths, except
the SEQUENCE's own length from 128 bytes on, which is always ``82 hh ll`` (``30 82 00 84``
where DER has ``30 81 84``: both valid BER, and a migration checked with ``cmp`` needs the
same bytes). ``decode_varbind`` reads both; anything the encoder would write otherwise is
kept by the codec as raw bytes so a file still re-encodes to the same bytes.
"""

from __future__ import annotations

from collections import namedtuple  # not typing.NamedTuple: typing costs a per-file encode ~3 ms

from hfcprov.config.errors import ConfigError
from hfcprov.lazy import lazy

ipaddress = lazy("ipaddress")  # only IpAddress values need it

# SMI value type name -> BER tag. Gauge32 and Unsigned32 share one tag (RFC 2578).
TAGS = {
    "Integer": 0x02, "OctetString": 0x04, "Null": 0x05, "ObjectIdentifier": 0x06,
    "IpAddress": 0x40, "Counter32": 0x41, "Gauge32": 0x42, "TimeTicks": 0x43,
    "Opaque": 0x44, "Counter64": 0x46,
}
TYPE_OF_TAG = {tag: name for name, tag in TAGS.items()}
# Names other DOCSIS text tools use for the same types.
TYPE_ALIASES = {
    "integer": "Integer", "int": "Integer", "integer32": "Integer",
    "string": "OctetString", "octetstring": "OctetString", "hexstring": "OctetString",
    "null": "Null", "objectid": "ObjectIdentifier", "oid": "ObjectIdentifier",
    "objectidentifier": "ObjectIdentifier", "ipaddress": "IpAddress",
    "counter": "Counter32", "counter32": "Counter32", "gauge": "Gauge32", "gauge32": "Gauge32",
    "unsigned32": "Gauge32", "timeticks": "TimeTicks", "opaque": "Opaque", "counter64": "Counter64",
}
# Value forms of the docsis C tool and net-snmp's snmpset, read into the types above (text input only):
# DecimalString 1.2.3 and BitString (SMIv2 BITS: bit numbers or hex) are OCTET STRINGs, Short and Char
# small Integers, BigInt/UnsignedBigInt a Counter64, Float/Double net-snmp's Opaque float/double.
INPUT_FORMS = {"decimalstring": "OctetString", "bitstring": "OctetString", "short": "Integer", "char": "Integer",
               "bigint": "Counter64", "unsignedbigint": "Counter64", "float": "Opaque", "double": "Opaque"}
# Type names the docsis C tool reads (hfcprov's own names are kept by default).
C_TOOL_NAMES = {"IpAddress": "IPAddress", "ObjectIdentifier": "ObjectID"}
UNSIGNED_BITS = {"Counter32": 32, "Gauge32": 32, "TimeTicks": 32, "Counter64": 64}


class VarBind(namedtuple("VarBind", "oid type value")):
    """One SNMP object set by the config file: numeric OID (str), SMI type name (str), Python value.

    Values: int for Integer/Counter32/Gauge32/TimeTicks/Counter64, bytes for OctetString
    and Opaque, dotted str for ObjectIdentifier and IpAddress, None for Null.
    """

    __slots__ = ()


def canonical_type(name: str) -> str:
    try:
        return TYPE_ALIASES[name.lower()]
    except KeyError:
        raise ConfigError(f"unknown SNMP type {name!r}; expected one of {', '.join(TAGS)}") from None


def _length(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def tlv(tag: int, body: bytes) -> bytes:
    return bytes([tag]) + _length(len(body)) + body


def read_tlv(data: bytes, pos: int, shortest: bool = True) -> tuple[int, bytes, int]:
    """(tag, body, next position) of the BER element at ``pos``; shortest-form lengths only, unless
    ``shortest`` is False (then any definite length of 1-4 bytes)."""
    if pos + 2 > len(data):
        raise ConfigError("BER element truncated")
    tag, first = data[pos], data[pos + 1]
    pos += 2
    if first & 0x80:
        count = first & 0x7F
        if count == 0 or count > 4 or pos + count > len(data):
            raise ConfigError("BER length invalid")
        n = int.from_bytes(data[pos:pos + count], "big")
        if shortest and (n < 0x80 or data[pos] == 0):
            raise ConfigError("BER length not in shortest form")
        pos += count
    else:
        n = first
    if pos + n > len(data):
        raise ConfigError(f"BER element of {n} bytes overruns its container")
    return tag, data[pos:pos + n], pos + n


_OID_BODIES: dict[str, bytes] = {}  # a config set repeats the same few OIDs in every modem's file


def encode_oid_body(oid: str) -> bytes:
    body = _OID_BODIES.get(oid) if type(oid) is str else None
    if body is None:
        body = _encode_oid_body(oid)
        if type(oid) is str:
            if len(_OID_BODIES) >= 4096:
                _OID_BODIES.clear()
            _OID_BODIES[oid] = body
    return body


def _encode_oid_body(oid: str) -> bytes:
    try:
        arcs = [int(a) for a in oid.strip(".").split(".")]
    except ValueError:
        raise ConfigError(f"bad OID {oid!r}: expected dotted numbers such as 1.3.6.1.2.1.1.1.0") from None
    if len(arcs) < 2 or arcs[0] > 2 or (arcs[0] < 2 and arcs[1] > 39) or min(arcs) < 0:
        raise ConfigError(f"bad OID {oid!r}: needs at least two arcs, the first 0-2")
    out = bytearray()
    for arc in [arcs[0] * 40 + arcs[1]] + arcs[2:]:
        chunk = [arc & 0x7F]
        arc >>= 7
        while arc:
            chunk.append(0x80 | (arc & 0x7F))
            arc >>= 7
        out += bytes(reversed(chunk))
    return bytes(out)


# An OID's leading arcs, decoded. The OIDs of an SNMP walk share their column's prefix and a plant's
# modems answer the same columns, so decoding only the last few bytes (the row index) of each and
# looking the rest up halves the audit's cost of reading an answer; the SFIDs, ifIndexes and MACs
# in the index differ from modem to modem, so the cache is of prefixes, not whole OIDs.
_OID_HEADS: dict[bytes, str] = {}
_OID_TAIL = 6  # bytes decoded on every call: ifIndex.type.sfid and the like


def decode_oid_body(body: bytes) -> str:
    n = len(body)
    if not n or body[-1] & 0x80:
        raise ConfigError("OID encoding truncated")
    cut = n - _OID_TAIL
    while cut > 0 and body[cut - 1] & 0x80:  # cut between two sub-identifiers
        cut -= 1
    if cut <= 0:
        return _decode_oid_arcs(body)
    head = bytes(body[:cut])
    text = _OID_HEADS.get(head)
    if text is None:
        text = _decode_oid_arcs(head)
        if len(_OID_HEADS) >= 4096:
            _OID_HEADS.clear()
        _OID_HEADS[head] = text
    tail = body[cut:]
    # an ASCII tail is one byte per sub-identifier (each under 128): no shortest-form question
    return text + "." + ".".join(map(str, tail if tail.isascii() else _sub_identifiers(tail)))


def _sub_identifiers(body: bytes) -> list[int]:
    """The base-128 sub-identifiers of ``body`` (its last byte ends one), each in shortest form."""
    arcs, arc, start = [], 0, True
    for b in body:
        if start and b == 0x80:
            raise ConfigError("OID sub-identifier not in shortest form")
        arc = (arc << 7) | (b & 0x7F)
        start = not (b & 0x80)
        if start:
            arcs.append(arc)
            arc = 0
    return arcs


def _decode_oid_arcs(body: bytes) -> str:
    """A whole OID body (its last byte ends a sub-identifier), the first byte giving two arcs."""
    arcs = _sub_identifiers(body)
    first = arcs[0]
    head = [min(first // 40, 2), first - 40 * min(first // 40, 2)]
    return ".".join(str(a) for a in head + arcs[1:])


def encode_oid(oid: str) -> bytes:
    return tlv(0x06, encode_oid_body(oid))


def decode_oid(data: bytes) -> str:
    tag, body, end = read_tlv(data, 0)
    if tag != 0x06 or end != len(data):
        raise ConfigError("not a single BER OBJECT IDENTIFIER")
    return decode_oid_body(body)


def _minimal_int(body: bytes) -> bool:
    return len(body) == 1 or not ((body[0] == 0 and body[1] < 0x80) or (body[0] == 0xFF and body[1] >= 0x80))


def encode_value(type_: str, value) -> bytes:
    tag = TAGS[type_]
    if type_ == "Integer":
        if not -(2**31) <= value < 2**31:
            raise ConfigError(f"Integer {value} out of range -2147483648..2147483647")
        body = value.to_bytes(max(1, (value + (value < 0)).bit_length() // 8 + 1), "big", signed=True)
    elif type_ in UNSIGNED_BITS:
        if not 0 <= value < 2 ** UNSIGNED_BITS[type_]:
            raise ConfigError(f"{type_} {value} out of range 0..{2 ** UNSIGNED_BITS[type_] - 1}")
        body = value.to_bytes(value.bit_length() // 8 + 1, "big")
    elif type_ in ("OctetString", "Opaque"):
        body = bytes(value)
    elif type_ == "ObjectIdentifier":
        body = encode_oid_body(value)
    elif type_ == "IpAddress":
        try:
            body = ipaddress.IPv4Address(value).packed
        except ValueError:
            raise ConfigError(f"bad IpAddress {value!r}") from None
    else:  # Null
        body = b""
    return tlv(tag, body)


def decode_value(tag: int, body: bytes):
    type_ = TYPE_OF_TAG.get(tag)
    if type_ is None:
        raise ConfigError(f"unsupported SNMP value tag 0x{tag:02x}")
    if type_ in ("Integer", *UNSIGNED_BITS):
        if not body or not _minimal_int(body):
            raise ConfigError(f"{type_} not in shortest form")
        signed = type_ == "Integer"
        value = int.from_bytes(body, "big", signed=True)
        if not signed and value < 0:
            raise ConfigError(f"{type_} is negative")
        if signed and not -(2**31) <= value < 2**31 or not signed and value >= 2 ** UNSIGNED_BITS[type_]:
            raise ConfigError(f"{type_} out of range")
        return type_, value
    if type_ in ("OctetString", "Opaque"):
        return type_, bytes(body)
    if type_ == "ObjectIdentifier":
        return type_, decode_oid_body(body)
    if type_ == "IpAddress":
        if len(body) != 4:
            raise ConfigError(f"IpAddress of {len(body)} bytes")
        return type_, str(ipaddress.IPv4Address(body))
    if body:
        raise ConfigError("Null with a value")
    return type_, None


def encode_varbind(vb: VarBind) -> bytes:
    """A config file's VarBind, in the docsis C tool's form (see the module docstring)."""
    body = encode_oid(vb.oid) + encode_value(vb.type, vb.value)
    n = len(body)
    if n < 0x80:
        return bytes((0x30, n)) + body
    if n > 0xFFFF:
        raise ConfigError(f"SNMP VarBind of {n} bytes: at most 65535")
    return bytes((0x30, 0x82, n >> 8, n & 0xFF)) + body


def decode_varbind(data: bytes) -> VarBind:
    tag, body, end = read_tlv(data, 0, shortest=False)
    if tag != 0x30 or end != len(data):
        raise ConfigError("SNMP VarBind is not one BER SEQUENCE")
    tag, oid_body, pos = read_tlv(body, 0)
    if tag != 0x06:
        raise ConfigError("SNMP VarBind does not start with an OID")
    oid = decode_oid_body(oid_body)
    tag, value_body, pos = read_tlv(body, pos)
    if pos != len(body):
        raise ConfigError("SNMP VarBind has trailing bytes")
    type_, value = decode_value(tag, value_body)
    return VarBind(oid, type_, value)
