"""A small reader of SMIv2 (and SMIv1) module text: names, OIDs, syntax, enums and table indexes.

Enough of the SMI for what a config file and an audit need of a MIB: every OBJECT-TYPE,
OBJECT IDENTIFIER, MODULE-IDENTITY, OBJECT-IDENTITY and NOTIFICATION-TYPE with its parent
arc; an object's SYNTAX (base type, enumerated labels, a fixed SIZE); textual conventions;
a row's INDEX (with IMPLIED) or AUGMENTS clause. It never imports pysnmp or pysmi: reading
hfcprov's shipped modules must stay cheap for ``config encode``. What it reads is a list of
``Definition`` rows, which ``hfcprov.mib.index.MibIndex`` resolves into OIDs.
"""

from __future__ import annotations

import re
from collections import namedtuple
from functools import cache



@cache
def _patterns():
    """The regexes, compiled on the first text read (a cached index needs none: ~8 ms saved)."""
    p = {}
    # A string or a comment, whichever starts first: a "--" inside a DESCRIPTION is not a comment
    # and a quote inside a comment does not open a string.
    p["strip"] = re.compile(r'"[^"]*"|--[^\n]*?(?:--|$)', re.MULTILINE)
    p["module"] = re.compile(r"([A-Z][\w-]*)\s+DEFINITIONS\s*::=\s*BEGIN(.*?)\bEND\b", re.DOTALL)
    p["imports"] = re.compile(r"\bIMPORTS\b.*?;", re.DOTALL)
    p["node"] = re.compile(
        r"\b([a-z][\w-]*)\s+(OBJECT-TYPE|OBJECT\s+IDENTIFIER|MODULE-IDENTITY|OBJECT-IDENTITY|"
        r"NOTIFICATION-TYPE|OBJECT-GROUP|NOTIFICATION-GROUP|MODULE-COMPLIANCE)\b(.*?)::=\s*\{([^}]*)\}",
        re.DOTALL)
    p["tc"] = re.compile(r"\b([A-Z][\w-]*)\s*::=\s*TEXTUAL-CONVENTION\b(.*?)\bSYNTAX\s+(.*?)(?=\n\s*\n|"
                         r"\b[a-zA-Z][\w-]*\s+(?:OBJECT-TYPE|OBJECT\s+IDENTIFIER|MODULE-IDENTITY|OBJECT-IDENTITY|"
                         r"NOTIFICATION-TYPE)\b|\b[A-Z][\w-]*\s*::=|\Z)", re.DOTALL)
    p["type"] = re.compile(r"\b([A-Z][\w-]*)\s*::=\s*(?!TEXTUAL-CONVENTION|SEQUENCE\b|CHOICE\b|BEGIN\b)"
                           r"((?:INTEGER|Integer32|Unsigned32|Gauge32|OCTET\s+STRING|BITS|OBJECT\s+IDENTIFIER)\b"
                           r"[^\n]*(?:\{[^}]*\})?[^\n]*)")
    p["syntax"] = re.compile(r"\bSYNTAX\s+(.*?)(?=\b(?:UNITS|MAX-ACCESS|ACCESS|STATUS|DISPLAY-HINT|DESCRIPTION|"
                             r"REFERENCE|INDEX|AUGMENTS|DEFVAL)\b|\Z)", re.DOTALL)
    p["index"] = re.compile(r"\bINDEX\s*\{([^}]*)\}")
    p["augments"] = re.compile(r"\bAUGMENTS\s*\{\s*([\w-]+)\s*\}")
    p["enum_item"] = re.compile(r"([a-zA-Z][\w-]*)\s*\(\s*(-?\d+)\s*\)")
    p["fixed_size"] = re.compile(r"\(\s*SIZE\s*\(\s*(\d+)\s*\)\s*\)")
    p["oid_item"] = re.compile(r"([a-zA-Z][\w-]*)\((\d+)\)")
    return p


INTEGER, STRING, OID, IPADDRESS = "int", "str", "oid", "ip"  # how an index value is written in an OID
_BASES = {
    "INTEGER": INTEGER, "Integer32": INTEGER, "Unsigned32": INTEGER, "Gauge32": INTEGER, "Gauge": INTEGER,
    "Counter32": INTEGER, "Counter": INTEGER, "Counter64": INTEGER, "TimeTicks": INTEGER,
    "OCTET STRING": STRING, "BITS": STRING, "Opaque": STRING, "NetworkAddress": IPADDRESS,
    "OBJECT IDENTIFIER": OID, "IpAddress": IPADDRESS,
}


# What a syntax is underneath its textual conventions: base kind (INTEGER, STRING, OID,
# IPADDRESS; "" unknown), enum labels, a fixed SIZE.
TypeInfo = namedtuple("TypeInfo", "base enums fixed", defaults=(None,))


# SNMPv2-TC (RFC 2579) and the TCs pysmi treats as base definitions: hfcprov ships no text of them.
BUILTIN_TCS: dict[str, TypeInfo] = {
    "TruthValue": TypeInfo(INTEGER, {1: "true", 2: "false"}),
    "RowStatus": TypeInfo(INTEGER, {1: "active", 2: "notInService", 3: "notReady", 4: "createAndGo",
                                    5: "createAndWait", 6: "destroy"}),
    "StorageType": TypeInfo(INTEGER, {1: "other", 2: "volatile", 3: "nonVolatile", 4: "permanent", 5: "readOnly"}),
    "TestAndIncr": TypeInfo(INTEGER, {}), "TimeStamp": TypeInfo(INTEGER, {}), "TimeInterval": TypeInfo(INTEGER, {}),
    "DisplayString": TypeInfo(STRING, {}), "PhysAddress": TypeInfo(STRING, {}), "DateAndTime": TypeInfo(STRING, {}),
    "MacAddress": TypeInfo(STRING, {}, 6), "TAddress": TypeInfo(STRING, {}),
    "AutonomousType": TypeInfo(OID, {}), "InstancePointer": TypeInfo(OID, {}), "VariablePointer": TypeInfo(OID, {}),
    "RowPointer": TypeInfo(OID, {}), "TDomain": TypeInfo(OID, {}),
}

# The SMI's own arcs (SNMPv2-SMI, RFC 2578): every MIB hangs off these.
SMI_ROOTS = {
    "iso": "1", "org": "1.3", "dod": "1.3.6", "internet": "1.3.6.1", "directory": "1.3.6.1.1",
    "mgmt": "1.3.6.1.2", "mib-2": "1.3.6.1.2.1", "transmission": "1.3.6.1.2.1.10", "experimental": "1.3.6.1.3",
    "private": "1.3.6.1.4", "enterprises": "1.3.6.1.4.1", "security": "1.3.6.1.5", "snmpV2": "1.3.6.1.6",
    "snmpDomains": "1.3.6.1.6.1", "snmpProxys": "1.3.6.1.6.2", "snmpModules": "1.3.6.1.6.3", "zeroDotZero": "0.0",
}


# One named node of a module, its OID still relative to a parent name: ``parent`` is
# ["docsDevBase", "3"] or ["1.3.6.1"] (already numeric); ``syntax`` "Unsigned32", "TruthValue",
# "INTEGER", "OCTET STRING", "SEQUENCE OF X" or "" (none); ``fixed`` a SIZE (n) (such a string is
# written without a length in an index); ``index`` a row's ((object name, implied), ...);
# ``augments`` the row this row augments (it shares its index).
Definition = namedtuple("Definition", "name module parent syntax enums fixed index augments")


def strip(text: str) -> str:
    """Module text without strings and comments (strings become "")."""
    return _patterns()["strip"].sub(lambda m: '""' if m.group(0)[0] == '"' else " ", text)


def modules(text: str) -> list[tuple[str, str]]:
    """(module name, body) of each module in stripped text."""
    return _patterns()["module"].findall(text)


def parse(texts, types: dict[str, TypeInfo]) -> list[Definition]:
    """The definitions of ``texts`` (raw module text, any number of modules each); textual
    conventions found on the way are added to ``types``."""
    p = _patterns()
    found = []
    bodies = []
    for text in texts:
        for module, body in modules(strip(text)):
            body = p["imports"].sub("", body, count=1)
            bodies.append((module, body))
            for name, _middle, syntax in p["tc"].findall(body):
                types.setdefault(name, _type_of(syntax, types, pending=True))
            for name, syntax in p["type"].findall(body):
                types.setdefault(name, _type_of(syntax, types, pending=True))
    _settle(types)
    for module, body in bodies:
        for name, kind, middle, value in p["node"].findall(body):
            if kind in ("OBJECT-GROUP", "NOTIFICATION-GROUP", "MODULE-COMPLIANCE"):
                continue  # conformance statements name no object an agent serves
            syntax, enums, fixed, index, augments = "", {}, None, (), None
            if kind == "OBJECT-TYPE":
                m = p["syntax"].search(middle)
                if m:
                    syntax = " ".join(m.group(1).split())
                    info = _type_of(syntax, types)
                    enums, fixed = info.enums, info.fixed
                    if p["enum_item"].search(syntax) and syntax.startswith(("INTEGER", "Integer32")):
                        syntax = "INTEGER"
                    elif "{" in syntax and syntax.startswith("BITS"):
                        syntax, enums = "BITS", {}
                    else:
                        syntax = syntax.split("(")[0].strip()
                m = p["index"].search(middle)
                if m:
                    index = tuple((item.split()[-1], item.split()[0] == "IMPLIED")
                                  for item in (p.strip() for p in m.group(1).split(",")) if item)
                m = p["augments"].search(middle)
                if m:
                    augments = m.group(1)
            found.append(Definition(name, module, oid_parts(value), syntax, enums, fixed, index, augments))
    return found


def type_info(syntax: str, types: dict[str, TypeInfo]) -> TypeInfo:
    """The base kind of a syntax as written in an OBJECT-TYPE (``Unsigned32``, ``SnmpAdminString``)."""
    return _type_of(syntax, types)


def _type_of(syntax: str, types: dict[str, TypeInfo], pending: bool = False) -> TypeInfo:
    p = _patterns()
    syntax = " ".join(syntax.split())
    fixed_m = p["fixed_size"].search(syntax)
    fixed = int(fixed_m.group(1)) if fixed_m else None
    head = syntax.split("(")[0].split("{")[0].strip()
    if head.startswith("SEQUENCE"):
        return TypeInfo("", {})
    base = _BASES.get(head)
    if base is not None:
        enums = {int(num): label for label, num in p["enum_item"].findall(syntax)} if base == INTEGER else {}
        return TypeInfo(base, enums, fixed)
    tc = types.get(head) or BUILTIN_TCS.get(head)
    if tc is None:
        # a TC defined later in the texts (settled afterwards) or nowhere (its base stays unknown)
        return TypeInfo(f"?{head}" if pending else "", {}, fixed)
    if tc.base.startswith("?"):
        return TypeInfo(f"?{head}" if pending else "", {}, fixed)
    return TypeInfo(tc.base, tc.enums, fixed if fixed is not None else tc.fixed)


def _settle(types: dict[str, TypeInfo]) -> None:
    """Resolve TCs defined in terms of TCs read after them."""
    for _ in range(4):
        open_ = {k: v for k, v in types.items() if v.base.startswith("?")}
        if not open_:
            return
        for name, info in open_.items():
            target = types.get(info.base[1:]) or BUILTIN_TCS.get(info.base[1:])
            if target is not None and not target.base.startswith("?"):
                types[name] = TypeInfo(target.base, target.enums, info.fixed if info.fixed is not None else target.fixed)
    for name, info in list(types.items()):
        if info.base.startswith("?"):
            types[name] = TypeInfo("", {}, info.fixed)


def oid_parts(value: str) -> list[str]:
    """``{ docsDevBase 3 }`` -> ["docsDevBase", "3"]; ``{ iso(1) org(3) 6 }`` -> ["1.3.6"]."""
    parts = []
    for token in value.split():
        m = _patterns()["oid_item"].fullmatch(token)
        parts.append(m.group(2) if m else token)
    if parts and parts[0].isdigit():
        return [".".join(parts)]
    return parts
