"""Cheap name <-> OID index built from the SMIv2 text files in ``mibs/``.

The config codec renders TLV 11 (SNMP MIB object) with symbolic names and the
SNMP audit prints them, so this index must be cheap to import: it reads the
MIB text with a small parser and never imports pysnmp. It understands the
subset of SMIv2 that hfcprov's own compact MIBs use (OBJECT-TYPE, OBJECT
IDENTIFIER, MODULE-IDENTITY, OBJECT-IDENTITY, enumerated INTEGER syntax and
TEXTUAL-CONVENTION enums). An operator's full MIB set (the CLI's ``--mib-dir``)
goes through pysmi instead (``hfcprov.snmp.mibs.load_dirs``), which adds its names here.

    >>> resolve("docsDevNmAccessStatus.1")
    '1.3.6.1.2.1.69.1.2.1.7.1'
    >>> name_of("1.3.6.1.2.1.69.1.2.1.7.1")
    'docsDevNmAccessStatus.1'
    >>> enum_label("docsIfCmStatusValue", 12)
    'operational'
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from hfcprov.errors import HfcprovError
from hfcprov.shipped import shipped_dir

MIB_DIR = shipped_dir("mibs")  # mibs/ of a checkout, or hfcprov/mibs installed from a wheel

# The SMI's own arcs (SNMPv2-SMI, RFC 2578): every MIB hangs off these.
_SMI_ROOTS = {
    "iso": "1",
    "org": "1.3",
    "dod": "1.3.6",
    "internet": "1.3.6.1",
    "directory": "1.3.6.1.1",
    "mgmt": "1.3.6.1.2",
    "mib-2": "1.3.6.1.2.1",
    "transmission": "1.3.6.1.2.1.10",
    "experimental": "1.3.6.1.3",
    "private": "1.3.6.1.4",
    "enterprises": "1.3.6.1.4.1",
    "security": "1.3.6.1.5",
    "snmpV2": "1.3.6.1.6",
    "snmpDomains": "1.3.6.1.6.1",
    "snmpProxys": "1.3.6.1.6.2",
    "snmpModules": "1.3.6.1.6.3",
    "zeroDotZero": "0.0",
}

# Enumerated textual conventions of SNMPv2-TC (RFC 2579); pysnmp ships that module
# compiled, so it is not among the text files in mibs/.
_TC_ENUMS = {
    "TruthValue": {1: "true", 2: "false"},
    "RowStatus": {1: "active", 2: "notInService", 3: "notReady", 4: "createAndGo", 5: "createAndWait", 6: "destroy"},
    "StorageType": {1: "other", 2: "volatile", 3: "nonVolatile", 4: "permanent", 5: "readOnly"},
    "InetAddressType": {0: "unknown", 1: "ipv4", 2: "ipv6", 3: "ipv4z", 4: "ipv6z", 16: "dns"},
}


@dataclass
class MibObject:
    name: str
    oid: str
    module: str = ""
    syntax: str = ""  # base type or textual convention name, e.g. "Unsigned32", "TruthValue"
    enums: dict[int, str] = field(default_factory=dict)


_STRING = re.compile(r'"[^"]*"', re.DOTALL)
_COMMENT = re.compile(r"--.*?(?:--|$)", re.MULTILINE)
_MODULE = re.compile(r"([A-Z][\w-]*)\s+DEFINITIONS\s*::=\s*BEGIN(.*?)\bEND\b", re.DOTALL)
_IMPORTS = re.compile(r"\bIMPORTS\b.*?;", re.DOTALL)
_NODE = re.compile(
    r"\b([a-z][\w-]*)\s+(OBJECT-TYPE|OBJECT\s+IDENTIFIER|MODULE-IDENTITY|OBJECT-IDENTITY|"
    r"NOTIFICATION-TYPE|OBJECT-GROUP|NOTIFICATION-GROUP|MODULE-COMPLIANCE)\b(.*?)::=\s*\{([^}]*)\}",
    re.DOTALL,
)
_TC = re.compile(r"\b([A-Z][\w-]*)\s*::=\s*TEXTUAL-CONVENTION\b(.*?)\bSYNTAX\s+(INTEGER\s*\{[^}]*\}|[\w-]+)", re.DOTALL)
_SYNTAX = re.compile(r"\bSYNTAX\s+(INTEGER\s*\{[^}]*\}|OBJECT\s+IDENTIFIER|OCTET\s+STRING|SEQUENCE\s+OF\s+[\w-]+|[\w-]+)", re.DOTALL)
_ENUM_ITEM = re.compile(r"([a-zA-Z][\w-]*)\s*\(\s*(-?\d+)\s*\)")


class MibIndex:
    """Names, OIDs and enum labels from a set of SMIv2 text files."""

    def __init__(self) -> None:
        self.by_name: dict[str, MibObject] = {}
        self.by_oid: dict[str, MibObject] = {}

    # -- building ---------------------------------------------------------------
    def load_texts(self, texts: list[tuple[str, str]]) -> None:
        """Parse ``(source, text)`` pairs; parents may be defined in any file of the set."""
        pending: list[tuple[str, str, list[str], str, dict[int, str]]] = []  # name, module, oid parts, syntax, enums
        tcs: dict[str, dict[int, str]] = dict(_TC_ENUMS)
        for _source, text in texts:
            text = _COMMENT.sub("", _STRING.sub('""', text))
            for module, body in _MODULE.findall(text):
                body = _IMPORTS.sub("", body)
                for tc_name, _, tc_syntax in _TC.findall(body):
                    enums = _enums(tc_syntax)
                    if enums:
                        tcs[tc_name] = enums
                for name, kind, middle, oid_value in _NODE.findall(body):
                    syntax, enums = "", {}
                    if kind == "OBJECT-TYPE":
                        m = _SYNTAX.search(middle)
                        if m:
                            syntax = m.group(1)
                            enums = _enums(syntax)
                            if enums:
                                syntax = "INTEGER"
                            syntax = " ".join(syntax.split())
                    pending.append((name, module, _oid_parts(oid_value), syntax, enums))
        known = {name: obj.oid for name, obj in self.by_name.items()}
        known.update({k: v for k, v in _SMI_ROOTS.items() if k not in known})
        # Resolve in passes: a parent may appear after its children.
        while pending:
            left = []
            for name, module, parts, syntax, enums in pending:
                head, rest = parts[0], parts[1:]
                base = head if head.replace(".", "").isdigit() else known.get(head)
                if base is None:
                    left.append((name, module, parts, syntax, enums))
                    continue
                oid = ".".join([base, *rest])
                known[name] = oid
                self.add(name, oid, module=module, syntax=syntax, enums=enums or tcs.get(syntax, {}))
            if len(left) == len(pending):
                break  # parents nowhere in the set: those names stay unknown
            pending = left

    def add(self, name: str, oid: str, module: str = "", syntax: str = "", enums: dict[int, str] | None = None) -> None:
        obj = MibObject(name, oid, module, syntax, dict(enums or {}))
        self.by_name[name] = obj
        self.by_oid[oid] = obj

    # -- lookups -----------------------------------------------------------------
    def resolve(self, name: str) -> str | None:
        name = name.strip()
        if "::" in name:
            name = name.split("::", 1)[1]
        if _is_numeric(name.lstrip(".")):
            return name.lstrip(".")
        base, _, suffix = name.partition(".")
        obj = self.by_name.get(base)
        if obj is None and base in _SMI_ROOTS:  # mib-2, enterprises, ...: the SMI's own arcs
            obj = MibObject(base, _SMI_ROOTS[base], "SNMPv2-SMI")
        if obj is None:
            return None
        if suffix and not _is_numeric(suffix):
            return None
        return f"{obj.oid}.{suffix}" if suffix else obj.oid

    def lookup(self, oid: str) -> tuple[MibObject, str] | None:
        """The deepest known node at or above ``oid`` and the remaining index (may be "")."""
        parts = oid.strip().lstrip(".").split(".")
        for cut in range(len(parts), 0, -1):
            obj = self.by_oid.get(".".join(parts[:cut]))
            if obj is not None:
                return obj, ".".join(parts[cut:])
        return None

    def name_of(self, oid: str) -> str | None:
        found = self.lookup(oid)
        if found is None:
            return None
        obj, index = found
        return f"{obj.name}.{index}" if index else obj.name

    def object(self, name_or_oid: str) -> MibObject | None:
        if _is_numeric(name_or_oid.lstrip(".")):
            found = self.lookup(name_or_oid)
            return found[0] if found else None
        return self.by_name.get(name_or_oid.split("::")[-1].split(".")[0])


def _enums(syntax: str) -> dict[int, str]:
    if not syntax.startswith("INTEGER"):
        return {}
    return {int(num): label for label, num in _ENUM_ITEM.findall(syntax)}


def _oid_parts(value: str) -> list[str]:
    """``{ docsDevBase 3 }`` -> ["docsDevBase", "3"]; ``{ iso(1) org(3) 6 }`` -> ["1", "3", "6"]."""
    parts = []
    for token in value.split():
        m = re.fullmatch(r"([a-zA-Z][\w-]*)\((\d+)\)", token)
        if m:
            parts.append(m.group(2))
        else:
            parts.append(token)
    if parts and parts[0].isdigit():
        return [".".join(parts)]
    return parts


def _is_numeric(s: str) -> bool:
    return bool(s) and all(p.isdigit() for p in s.split("."))


_index: MibIndex | None = None
_lock = threading.Lock()


def index() -> MibIndex:
    """The process-wide index of mibs/, built on first use."""
    global _index
    if _index is None:
        with _lock:
            if _index is None:
                idx = MibIndex()
                idx.load_texts([(str(p), p.read_text(errors="replace")) for p in sorted(MIB_DIR.iterdir())
                                if p.is_file() and not p.name.startswith(".") and p.suffix not in (".md", ".py")])
                _index = idx
    return _index


def resolve(name: str) -> str | None:
    """Numeric OID of a symbolic name such as ``docsDevNmAccessStatus.1`` (module prefix allowed), or None."""
    return index().resolve(name)


def name_of(oid: str) -> str | None:
    """Symbolic name of a numeric OID, with its instance index: ``docsDevResetNow.0``; None when unknown."""
    return index().name_of(oid)


def enums(name_or_oid: str) -> dict[int, str]:
    """The enum labels of an object's syntax (empty when it has none)."""
    obj = index().object(name_or_oid)
    return dict(obj.enums) if obj else {}


def enum_label(name_or_oid: str, value: int) -> str | None:
    """``enum_label("docsIfCmtsCmStatusValue", 8) == "operational"``; None when not enumerated."""
    return enums(name_or_oid).get(int(value))


def add(name: str, oid: str, module: str = "", syntax: str = "", enums: dict[int, str] | None = None) -> None:
    """Add a name (e.g. from an operator's MIB compiled with pysmi) to the process-wide index."""
    index().add(name, oid, module=module, syntax=syntax, enums=enums)


class MibError(HfcprovError):
    """A MIB folder or file given by the user cannot be read or compiled."""


def load_mib_dirs(dirs=(), standard: bool = True) -> int:
    """The loader behind every command's ``--mib-dir`` (``config`` and ``snmp`` alike).

    Compiles hfcprov's ``mibs/`` and each folder of ``dirs`` with pysmi (cached by the sources'
    digest, so only the first run pays the ~3 s compile) and adds every name, OID and enum label
    they define to this index; a later folder's module wins over an earlier one and over the
    compact copies. With ``standard`` the full standard modules found on the machine are added
    first (``hfcprov.snmp.mibs.STANDARD_MODULES``: SNMPv2-MIB, IF-MIB, DOCS-IF-MIB,
    DOCS-CABLE-DEVICE-MIB, the IETF PacketCable MTA/signalling MIBs ...), so a config naming any
    object of them resolves. Returns how many names were added or changed; raises ``MibError``
    naming the file pysmi cannot compile. Never imports pysnmp when ``dirs`` is empty and
    ``standard`` is False."""
    if not dirs and not standard:
        return 0
    from hfcprov.snmp import mibs as compiled

    changed = compiled.load_standard() if standard else 0
    if dirs:
        changed += compiled.load_dirs(dirs)
    return changed
