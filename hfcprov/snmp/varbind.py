"""Var-binds for people: MIB names in, net-snmp's familiar output form or JSON out.

``snmp get/walk/set`` take names such as ``docsDevServerConfigFile.0`` (or
``DOCS-CABLE-DEVICE-MIB::docsDevServerConfigFile.0``, or numeric OIDs) and print
lines as ``snmpget`` does::

    DOCS-CABLE-DEVICE-MIB::docsDevServerConfigFile.0 = STRING: "gold.cm"
    DOCS-IF-MIB::docsIfCmStatusValue.2 = INTEGER: operational(12)

SET values take net-snmp's type letters (``i u t a o s x``, ``=`` for "the MIB's
type"); an INTEGER may be given by its enum label (``i upgradeFromMgt``).
"""

from __future__ import annotations

import ipaddress

from hfcprov import mib
from hfcprov.snmp.base import SnmpError, Typed

# net-snmp's type word per hfcprov.config.ber type name
_WORDS = {"Integer": "INTEGER", "OctetString": "STRING", "ObjectIdentifier": "OID", "IpAddress": "IpAddress",
          "Counter32": "Counter32", "Gauge32": "Gauge32", "TimeTicks": "Timeticks", "Opaque": "Opaque",
          "Counter64": "Counter64", "Null": "NULL"}
_MISSING = {"noSuchObject": "No Such Object available on this agent at this OID",
            "noSuchInstance": "No Such Instance currently exists at this OID"}
# net-snmp's SET type letters -> hfcprov.config.ber type names
SET_TYPES = {"i": "Integer", "u": "Gauge32", "t": "TimeTicks", "a": "IpAddress", "o": "ObjectIdentifier",
             "s": "OctetString", "x": "OctetString", "c": "Counter32", "C": "Counter64"}
# a MIB syntax (hfcprov.mib's record) -> the type a SET sends for "="
_SYNTAX_TYPES = {"INTEGER": "Integer", "Integer32": "Integer", "TruthValue": "Integer", "RowStatus": "Integer",
                 "InetAddressType": "Integer", "Unsigned32": "Gauge32", "Gauge32": "Gauge32",
                 "TimeTicks": "TimeTicks", "IpAddress": "IpAddress", "OBJECT IDENTIFIER": "ObjectIdentifier",
                 "Counter32": "Counter32", "Counter64": "Counter64"}


def resolve(name: str) -> str:
    """Numeric OID of a MIB name or numeric OID; SnmpError for a name no loaded MIB defines."""
    oid = mib.resolve(name)
    if oid is None:
        raise SnmpError(f"unknown MIB name {name!r} (not in hfcprov's MIBs; add the module with --mib-dir)")
    return oid


def display_name(oid: str) -> str:
    """``MODULE::name.index`` as net-snmp prints it, or ``.1.3.6...`` when no MIB names it."""
    found = mib.index().lookup(oid)
    name = mib.name_of(oid)
    if found is None or name is None:
        return "." + oid
    module = found[0].module
    return name if "::" in name or not module else f"{module}::{name}"


def _octets_text(data: bytes) -> tuple[str, str]:
    """("STRING", '"text"') for printable text, else ("Hex-STRING", "0A 00 00 01")."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        text = None
    if text is not None and all(c.isprintable() or c in "\r\n\t" for c in text):
        return "STRING", '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "Hex-STRING", " ".join(f"{b:02X}" for b in data)


def _ticks(value: int) -> str:
    cs = value % 100
    s = value // 100
    days, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    day = f"{days} day{'s' if days != 1 else ''}, " if days else ""
    return f"({value}) {day}{h}:{m:02d}:{s:02d}.{cs:02d}"


def _inet_text(oid: str, data: bytes) -> str | None:
    """An InetAddress of 4 or 16 bytes as an address (net-snmp prints hex; people read addresses)."""
    obj = mib.index().object(oid)
    if obj is not None and obj.syntax == "InetAddress" and len(data) in (4, 16):
        return str(ipaddress.ip_address(data))
    return None


def format_line(oid: str, value: Typed) -> str:
    """One line as ``snmpget``/``snmpwalk`` print it."""
    name = display_name(oid)
    if value.type in _MISSING:
        return f"{name} = {_MISSING[value.type]}"
    word = _WORDS.get(value.type, value.type)
    v = value.value
    if value.type == "Integer":
        label = mib.enum_label(oid, v) if mib.index().object(oid) else None
        text = f"{label}({v})" if label else str(v)
    elif value.type in ("OctetString", "Opaque"):
        word, text = _octets_text(v)
        address = _inet_text(oid, v) if word == "Hex-STRING" else None
        if address:
            text = f"{text} ({address})"
    elif value.type == "TimeTicks":
        text = _ticks(v)
    elif value.type == "ObjectIdentifier":
        text = display_name(v)
    else:
        text = str(v)
    return f"{name} = {word}: {text}"


def as_json(oid: str, value: Typed) -> dict:
    """The same var-bind as a JSON object: oid, name, type, value (text or hex), label/address where known."""
    found = mib.index().lookup(oid)
    d = {"oid": oid, "name": mib.name_of(oid), "module": found[0].module if found else None, "type": value.type}
    v = value.value
    if isinstance(v, bytes):
        word, _ = _octets_text(v)
        if word == "STRING":
            d["value"] = v.decode("ascii")
        else:
            d["value"], d["hex"] = None, v.hex()
            address = _inet_text(oid, v)
            if address:
                d["address"] = address
    else:
        d["value"] = v
    if value.type == "Integer" and found:
        label = mib.enum_label(oid, v)
        if label:
            d["label"] = label
    return d


def parse_set(name: str, letter: str, text: str) -> tuple[str, str, object]:
    """(oid, type name, value) for ``snmp set NAME TYPE VALUE``; SnmpError saying what is wrong."""
    oid = resolve(name)
    if letter == "=":
        obj = mib.index().object(oid)
        syntax = obj.syntax if obj else ""
        if obj and obj.enums:
            syntax = "INTEGER"
        type_ = _SYNTAX_TYPES.get(syntax, "OctetString" if obj else None)
        if type_ is None:
            raise SnmpError(f"{name}: no MIB syntax known; give the type (i, u, t, a, o, s, x)")
        letter = {"Integer": "i", "Gauge32": "u", "TimeTicks": "t", "IpAddress": "a", "ObjectIdentifier": "o",
                  "Counter32": "c", "Counter64": "C"}.get(type_, "s")
    if letter not in SET_TYPES:
        raise SnmpError(f"{name}: unknown type {letter!r} (i, u, t, a, o, s, x or =)")
    type_ = SET_TYPES[letter]
    try:
        if type_ == "Integer":
            value: object = _integer(oid, text)
        elif type_ in ("Gauge32", "TimeTicks", "Counter32", "Counter64"):
            value = int(text, 0)
        elif type_ == "IpAddress":
            value = str(ipaddress.IPv4Address(text))
        elif type_ == "ObjectIdentifier":
            value = resolve(text)
        elif letter == "x":
            value = bytes.fromhex(text.replace(":", " ").replace("0x", ""))
        else:
            value = text.encode()
    except ValueError as err:
        raise SnmpError(f"{name}: bad {type_} value {text!r}: {err}") from None
    return oid, type_, value


def _integer(oid: str, text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        pass
    labels = {label: value for value, label in mib.enums(oid).items()}
    if text in labels:
        return labels[text]
    choices = ", ".join(f"{label}({value})" for label, value in labels.items())
    raise ValueError(f"not a number{' or one of ' + choices if choices else ''}")
