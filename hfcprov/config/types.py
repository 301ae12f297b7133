"""Value types of DOCSIS TLVs: each knows its bytes, its text token and its YAML/JSON form.

``decode(raw) -> value``, ``encode(value) -> bytes``, ``to_text(value) -> str`` (the part
after the TLV name in the ``Main { ... }`` form), ``from_text(str) -> value``,
``to_plain(value)`` / ``from_plain(x)`` for YAML and JSON. Raised errors carry only the
message; the codec and the parsers add offset/line and TLV path.
"""

from __future__ import annotations

import re

from hfcprov.config import ber
from hfcprov.config.errors import ConfigError
from hfcprov.lazy import lazy

ipaddress = lazy("ipaddress")  # only address values need it (~1.3 ms of a per-file encode)


class ValueType:
    name = "bytes"

    def decode(self, raw: bytes):
        return bytes(raw)

    def encode(self, value) -> bytes:
        if not isinstance(value, (bytes, bytearray)):
            raise ConfigError(f"expected bytes, got {type(value).__name__}")
        return bytes(value)

    def to_text(self, value) -> str:
        return hex_text(value)

    def from_text(self, text: str):
        t = text.strip()
        if t[:1] == '"':  # the docsis C tool writes printable bytes as a string ("VLAN100")
            try:
                return unquote(t).encode("latin-1")
            except UnicodeEncodeError:
                raise ConfigError(f"bytes given as text must be latin-1: {text!r}") from None
        return parse_hex(text)

    def to_plain(self, value):
        return self.to_text(value)

    def from_plain(self, x):
        return self.from_text(str(x))


def hex_text(raw: bytes) -> str:
    return "0x" + bytes(raw).hex()


def parse_hex(text: str) -> bytes:
    t = text.strip()
    if t.startswith(("0x", "0X")):
        t = t[2:]
    t = t.replace(":", "").replace(" ", "")
    if len(t) % 2 or not re.fullmatch(r"[0-9A-Fa-f]*", t):
        raise ConfigError(f"bad hex value {text!r}: expected e.g. 0x00ff10")
    return bytes.fromhex(t)


def parse_int(text) -> int:
    if isinstance(text, bool):
        raise ConfigError(f"expected a number, got {text!r}")
    if isinstance(text, int):
        return text
    try:
        return int(str(text).strip(), 0)
    except ValueError:
        raise ConfigError(f"expected a whole number, got {text!r}") from None


class UInt(ValueType):
    def __init__(self, size: int):
        self.size = size
        self.limit = 1 << (8 * size)
        self.name = f"uint{size * 8}"

    def decode(self, raw):
        return int.from_bytes(raw, "big")

    def encode(self, value):
        if type(value) is not int:  # bool is refused too
            raise ConfigError(f"expected a whole number, got {value!r}")
        if not 0 <= value < self.limit:
            raise ConfigError(f"{value} does not fit {self.name} (0..{(1 << (8 * self.size)) - 1})")
        return value.to_bytes(self.size, "big")

    def to_text(self, value):
        return str(value)

    def from_text(self, text):
        return parse_int(text)

    def to_plain(self, value):
        return value

    def from_plain(self, x):
        return parse_int(x)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def quote(s: str) -> str:
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append(f"\\x{ord(ch):02x}")
    return '"' + "".join(out) + '"'


_UNESCAPE = re.compile(r'\\(x[0-9A-Fa-f]{2}|[\\"ntr])')


def unquote(text: str) -> str:
    t = text.strip()
    if len(t) < 2 or t[0] != '"' or t[-1] != '"':
        return t  # bare words are taken as they are (other tools allow them for names)

    def sub(m):
        e = m.group(1)
        return chr(int(e[1:], 16)) if e[0] == "x" else {"n": "\n", "t": "\t", "r": "\r"}.get(e, e)

    return _UNESCAPE.sub(sub, t[1:-1])


class String(ValueType):
    """Text kept byte for byte (latin-1 maps each byte to one character and back)."""

    name = "string"

    def decode(self, raw):
        return bytes(raw).decode("latin-1")

    def encode(self, value):
        if not isinstance(value, str):
            raise ConfigError(f"expected text, got {value!r}")
        try:
            return value.encode("latin-1")
        except UnicodeEncodeError:
            return value.encode("utf-8")

    def to_text(self, value):
        return quote(value)

    def from_text(self, text):
        return unquote(text)

    def to_plain(self, value):
        return value

    def from_plain(self, x):
        return str(x)


class StringNul(String):
    """A NUL-terminated string (service class names); the value excludes the NUL."""

    name = "string_nul"

    def decode(self, raw):
        if not raw or raw[-1] != 0:
            raise ConfigError("string is not NUL-terminated")
        return super().decode(raw[:-1])

    def encode(self, value):
        return super().encode(value) + b"\0"


class Empty(ValueType):
    name = "empty"

    def decode(self, raw):
        return b""

    def encode(self, value):
        if value not in (b"", None, True, ""):
            raise ConfigError("this TLV carries no value")
        return b""

    def to_text(self, value):
        return ""

    def from_text(self, text):
        # the docsis C tool writes an empty TLV as "Name 0x00;"
        if text.strip() not in ("", "0x", "0x00", "0X00", '""'):
            raise ConfigError("this TLV carries no value")
        return b""

    def to_plain(self, value):
        return ""


def _addr(text: str, version: int | None = None) -> ipaddress._BaseAddress:
    try:
        a = ipaddress.ip_address(str(text).strip())
    except ValueError:
        raise ConfigError(f"bad IP address {text!r}") from None
    if version and a.version != version:
        raise ConfigError(f"expected an IPv{version} address, got {text!r}")
    return a


class CanonicalText(ValueType):
    """A value held as its canonical text (an address, a MAC, an OID): text and plain forms are the
    value itself, and text is read by encoding and decoding it, which also normalises it."""

    def to_text(self, value):
        return value

    def from_text(self, text):
        return self.decode(self.encode(unquote(text)))

    def to_plain(self, value):
        return value


class IPAddr(CanonicalText):
    """IPv4 (4 bytes), IPv6 (16 bytes) or either, chosen by length."""

    def __init__(self, version: int | None):
        self.version = version
        self.name = {4: "ipv4", 6: "ipv6", None: "ipv4_or_ipv6"}[version]

    def decode(self, raw):
        if len(raw) not in (4, 16):
            raise ConfigError(f"an IP address has 4 or 16 bytes, not {len(raw)}")
        return str(ipaddress.ip_address(bytes(raw)))

    def encode(self, value):
        return _addr(value, self.version).packed

    def from_text(self, text):
        return str(_addr(unquote(text), self.version))


class TypedIP(IPAddr):
    """One byte address type (1 IPv4, 2 IPv6) then the address (L2VPN peers)."""

    def __init__(self):
        super().__init__(None)
        self.name = "addrtype_u8+ipv4_or_ipv6"

    def decode(self, raw):
        want = {1: 5, 2: 17}.get(raw[0]) if raw else None
        if want != len(raw):
            raise ConfigError("address type byte does not match the address length")
        return super().decode(raw[1:])

    def encode(self, value):
        packed = super().encode(value)
        return bytes([1 if len(packed) == 4 else 2]) + packed


class IPPort(CanonicalText):
    """An IPv4 or IPv6 address followed by a 2-byte port: ``1.2.3.4:161`` or ``[::1]:161``."""

    name = "ipv4_or_ipv6+port_u16"

    def decode(self, raw):
        if len(raw) not in (6, 18):
            raise ConfigError(f"address and port take 6 or 18 bytes, not {len(raw)}")
        a = ipaddress.ip_address(bytes(raw[:-2]))
        port = int.from_bytes(raw[-2:], "big")
        return f"{a}:{port}" if a.version == 4 else f"[{a}]:{port}"

    def encode(self, value):
        # also the docsis C tool's form: 10.0.0.1/161, 2001:db8::1/161
        m = re.fullmatch(r"\[?([0-9A-Fa-f.:]+?)\]?[:/](\d+)", str(value).strip())
        if not m or int(m.group(2)) > 65535:
            raise ConfigError(f"bad address:port {value!r}: expected 10.0.0.1:161 or [2001:db8::1]:161")
        return _addr(m.group(1)).packed + int(m.group(2)).to_bytes(2, "big")

    def to_c_tool(self, value):
        host, _, port = value.rpartition(":")
        return f"{host.strip('[]')}/{port}"


class Mac(CanonicalText):
    name = "mac"
    size = 6

    def decode(self, raw):
        return ":".join(f"{b:02x}" for b in raw)

    def encode(self, value):
        raw = parse_hex(str(value).replace("-", "").replace(".", ""))
        if len(raw) != self.size:
            raise ConfigError(f"bad MAC address {value!r}: expected 6 bytes like 00:11:22:33:44:55")
        return raw


class MacMask(Mac):
    """Destination MAC and mask of an Ethernet/LLC classifier: ``00:11:22:33:44:55/ff:ff:ff:ff:ff:ff``."""

    name = "mac+mask"

    def decode(self, raw):
        return f"{super().decode(raw[:6])}/{super().decode(raw[6:])}"

    def encode(self, value):
        mac, sep, mask = str(value).partition("/")
        if not sep:
            raise ConfigError(f"bad MAC/mask {value!r}: expected 00:11:22:33:44:55/ff:ff:ff:ff:ff:ff")
        return super().encode(mac) + super().encode(mask)


class UIntList(ValueType):
    """A list of fixed-size unsigned integers, written ``1,2,3``."""

    def __init__(self, size: int, name: str):
        self.item = UInt(size)
        self.name = name

    def decode(self, raw):
        n = self.item.size
        if len(raw) % n:
            raise ConfigError(f"length {len(raw)} is not a multiple of {n}")
        return [int.from_bytes(raw[i:i + n], "big") for i in range(0, len(raw), n)]

    def encode(self, value):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"expected a list of numbers, got {value!r}")
        return b"".join(self.item.encode(v) for v in value)

    def to_text(self, value):
        return ",".join(str(v) for v in value)

    def from_text(self, text):
        t = unquote(text).strip()
        return [parse_int(p) for p in re.split(r"[,\s]+", t) if p] if t else []

    def to_plain(self, value):
        return list(value)

    def from_plain(self, x):
        return [parse_int(v) for v in x] if isinstance(x, list) else self.from_text(str(x))


class IPList(ValueType):
    def __init__(self, version: int, prefix: bool, name: str):
        self.version, self.prefix, self.name = version, prefix, name
        self.size = (4 if version == 4 else 16) + (1 if prefix else 0)

    def decode(self, raw):
        if len(raw) % self.size:
            raise ConfigError(f"length {len(raw)} is not a multiple of {self.size}")
        out = []
        for i in range(0, len(raw), self.size):
            item = raw[i:i + self.size]
            a = str(ipaddress.ip_address(bytes(item[:16] if self.prefix else item)))
            if self.prefix and item[16] > 128:
                raise ConfigError(f"bad prefix length {item[16]} (0..128)")
            out.append(f"{a}/{item[16]}" if self.prefix else a)
        return out

    def encode(self, value):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"expected a list of addresses, got {value!r}")
        out = b""
        for v in value:
            addr, _, plen = str(v).partition("/")
            out += _addr(addr, self.version).packed
            if self.prefix:
                p = parse_int(plen or "x")
                if not 0 <= p <= 128:
                    raise ConfigError(f"bad prefix length in {v!r}")
                out += bytes([p])
        return out

    def to_text(self, value):
        return ",".join(value)

    def from_text(self, text):
        t = unquote(text).strip()
        return self.decode(self.encode([p for p in re.split(r"[,\s]+", t) if p])) if t else []

    def to_plain(self, value):
        return list(value)

    def from_plain(self, x):
        return self.decode(self.encode(list(x))) if isinstance(x, list) else self.from_text(str(x))


class Oid(CanonicalText):
    """A BER-encoded OBJECT IDENTIFIER, shown dotted (SNMPv3 view subtrees, trap filters)."""

    name = "ber_oid"

    def decode(self, raw):
        return ber.decode_oid(bytes(raw))

    def encode(self, value):
        return ber.encode_oid(str(value))

    def from_text(self, text):
        return resolve_oid(unquote(text))

    def to_c_tool(self, value):
        return f".{value}"  # the docsis C tool's grammar wants the leading dot here


class OidFlag(ValueType):
    """SNMP write-access control (TLV 10): an OID then one flag byte, written ``OID FLAG``."""

    name = "ber_oid+uint8"

    def decode(self, raw):
        if len(raw) < 3:
            raise ConfigError("SNMP write control is too short")
        return (ber.decode_oid(bytes(raw[:-1])), raw[-1])

    def encode(self, value):
        oid, flag = value
        if not 0 <= flag <= 255:
            raise ConfigError(f"flag {flag} does not fit one byte")
        return ber.encode_oid(oid) + bytes([flag])

    def to_text(self, value):
        return f"{value[0]} {value[1]}"

    def to_c_tool(self, value):
        return f".{value[0]} {value[1]}"

    def from_text(self, text):
        parts = text.split()
        if len(parts) != 2:
            raise ConfigError(f"expected 'OID FLAG', got {text!r}")
        return (resolve_oid(parts[0]), parse_int(parts[1]))

    def to_plain(self, value):
        return self.to_text(value)


class VarBindType(ValueType):
    """TLV 11 SNMP MIB object: ``OID TYPE VALUE`` (e.g. ``1.3.6.1.2.1.69.1.3.8.0 Integer 1``)."""

    name = "snmp_varbind_ber"

    def decode(self, raw):
        return ber.decode_varbind(bytes(raw))

    def encode(self, value):
        if not isinstance(value, ber.VarBind):
            raise ConfigError(f"expected an SNMP VarBind, got {value!r}")
        return ber.encode_varbind(value)

    def to_text(self, vb):
        if vb.type in ("OctetString", "Opaque"):
            v = vb.value
            shown = quote(v.decode("latin-1")) if vb.type == "OctetString" and _printable(v) else hex_text(v)
        elif vb.type == "Null":
            shown = ""
        else:
            shown = str(vb.value)
        return f"{vb.oid} {vb.type} {shown}".rstrip()

    def to_c_tool(self, vb):
        """The docsis C tool's names: String or HexString, IPAddress, ObjectID."""
        if vb.type == "OctetString":
            printable = _printable(vb.value)
            return f"{vb.oid} {'String' if printable else 'HexString'} " + (
                quote(vb.value.decode("latin-1")) if printable else hex_text(vb.value))
        text = self.to_text(vb)
        name = ber.C_TOOL_NAMES.get(vb.type)
        return text.replace(f" {vb.type}", f" {name}", 1) if name else text

    def from_text(self, text):
        parts = text.strip().split(None, 2)
        if len(parts) < 2:
            raise ConfigError(f"expected 'OID TYPE VALUE', got {text!r}")
        oid = resolve_oid(parts[0])
        given = parts[1]
        raw = parts[2] if len(parts) > 2 else ""
        form = given.lower()
        if form in ber.INPUT_FORMS:
            vb = ber.VarBind(oid, ber.INPUT_FORMS[form], _input_form(form, raw))
            ber.encode_varbind(vb)
            return vb
        type_ = ber.canonical_type(given)
        if type_ in ("Integer", *ber.UNSIGNED_BITS):
            value = parse_int(raw)
        elif type_ == "OctetString":
            r = raw.strip()
            if given.lower() == "hexstring" or (r.startswith(("0x", "0X")) and not r.startswith('"')):
                value = parse_hex(r)
            else:
                value = unquote(r).encode("latin-1", errors="strict") if _latin1(unquote(r)) else unquote(r).encode()
        elif type_ == "Opaque":
            value = parse_hex(raw)
        elif type_ == "ObjectIdentifier":
            value = resolve_oid(unquote(raw))
        elif type_ == "IpAddress":
            value = str(_addr(unquote(raw), 4))
        else:
            if raw.strip():
                raise ConfigError("Null takes no value")
            value = None
        vb = ber.VarBind(oid, type_, value)
        ber.encode_varbind(vb)  # range checks now, with the line at hand
        return vb

    def to_plain(self, value):
        return self.to_text(value)


def _input_form(form: str, raw: str):
    """The value of a docsis C tool / net-snmp value form (see ``ber.INPUT_FORMS``)."""
    import struct

    r = unquote(raw).strip()
    if form == "decimalstring":  # 1.2.3: one byte each
        parts = [parse_int(p) for p in re.split(r"[.\s]+", r) if p] if r else []
        if any(not 0 <= p <= 255 for p in parts):
            raise ConfigError(f"DecimalString {raw!r}: each number is one byte (0..255)")
        return bytes(parts)
    if form == "bitstring":  # SMIv2 BITS: bit numbers (bit 0 = the first byte's top bit), or hex
        if r[:2].lower() == "0x":
            return parse_hex(r)
        bits = [parse_int(p) for p in re.split(r"[,\s]+", r) if p] if r else []
        if any(not 0 <= b < 2048 for b in bits):
            raise ConfigError(f"BitString {raw!r}: bit numbers are 0..2047")
        out = bytearray((max(bits) // 8 + 1) if bits else 0)
        for b in bits:
            out[b // 8] |= 0x80 >> (b % 8)
        return bytes(out)
    if form in ("short", "char"):
        n = parse_int(r)
        lo, hi = (-(2**15), 2**16 - 1) if form == "short" else (-128, 255)
        if not lo <= n <= hi:
            raise ConfigError(f"{form.title()} {n} out of range {lo}..{hi}")
        return n
    if form in ("bigint", "unsignedbigint"):
        n = parse_int(r)
        if n < 0:
            raise ConfigError(f"BigInt {n}: only 0..18446744073709551615 (sent as Counter64)")
        return n
    try:  # Float/Double: net-snmp's Opaque wrapping (tag 0x9f78 float, 0x9f79 double)
        x = float(r)
    except ValueError:
        raise ConfigError(f"expected a number, got {raw!r}") from None
    return b"\x9f\x78\x04" + struct.pack(">f", x) if form == "float" else b"\x9f\x79\x08" + struct.pack(">d", x)


def _printable(raw: bytes) -> bool:
    return all(0x20 <= b <= 0x7E for b in raw)


def _latin1(s: str) -> bool:
    return all(ord(c) < 256 for c in s)


def resolve_oid(text: str) -> str:
    """Numeric OIDs pass through; a MIB name (``docsDevNmAccessStatus.1``) goes through hfcprov.mib."""
    t = text.strip().lstrip(".")
    if t.startswith("iso."):  # net-snmp's output (the docsis C tool's decode) names the root arc
        t = "1." + t[4:]
    if re.fullmatch(r"\d+(\.\d+)+", t):
        return t
    try:
        from hfcprov import mib
    except ImportError:
        mib = None
    found = mib.resolve(t) if mib is not None and hasattr(mib, "resolve") else None
    if not found and mib is not None and "::" not in t:
        # a net-snmp label path (system.sysContact.0, as the docsis C tool's sources have): its last name
        # says which object; the labels before it must lead there
        parts = t.split(".")
        last = max((i for i, p in enumerate(parts) if not p.isdigit()), default=0)
        if last > 0:
            found = mib.resolve(".".join(parts[last:]))
            near = max(i for i, p in enumerate(parts[:last]) if not p.isdigit()) if any(
                not p.isdigit() for p in parts[:last]) else 0
            above = mib.resolve(".".join(parts[near:last])) if found else None
            if found and not (above and found.lstrip(".").startswith(above.lstrip(".") + ".")):
                found = None
    if not found:
        raise ConfigError(f"unknown OID {text!r}: use a numeric OID or a name from the MIBs in mibs/")
    return found.lstrip(".")


TYPES: dict[str, ValueType] = {
    "uint8": UInt(1), "uint16": UInt(2), "uint24": UInt(3), "uint32": UInt(4),
    "bytes": ValueType(), "md5_digest": ValueType(), "pad": ValueType(), "end_of_data": ValueType(),
    "string": String(), "string_nul": StringNul(), "empty": Empty(),
    "ipv4": IPAddr(4), "ipv6": IPAddr(6), "ipv4_or_ipv6": IPAddr(None),
    "addrtype_u8+ipv4_or_ipv6": TypedIP(), "ipv4_or_ipv6+port_u16": IPPort(),
    "mac": Mac(), "mac+mask": MacMask(),
    "uint8_list": UIntList(1, "uint8_list"), "uint16_list": UIntList(2, "uint16_list"),
    "dual_qtag": UIntList(2, "dual_qtag"),
    "ipv4_list": IPList(4, False, "ipv4_list"), "ipv6_list": IPList(6, False, "ipv6_list"),
    "ipv6_prefix_list": IPList(6, True, "ipv6_prefix_list"),
    "ber_oid": Oid(), "ber_oid+uint8": OidFlag(), "snmp_varbind_ber": VarBindType(),
}
RAW = TYPES["bytes"]
