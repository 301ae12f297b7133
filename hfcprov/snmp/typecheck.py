"""Does a value an agent sent fit its object's MIB syntax? Broken firmware sends anything.

The audit reads values of known objects and compares them; a modem that answers an INTEGER
column with an OCTET STRING, a Gauge32 with text or an enum with a value its MIB does not list
must become that modem's verdict (``error``, naming the object and what came back), never a
crash of the whole run. ``problem`` says what is wrong, from the object's syntax in
``hfcprov.mib`` (base type, enum labels, the SMI type's range).
"""

from __future__ import annotations

from hfcprov import mib
from hfcprov.mib import smi

_RANGES = {
    "Unsigned32": (0, 2**32 - 1), "Gauge32": (0, 2**32 - 1), "Counter32": (0, 2**32 - 1),
    "TimeTicks": (0, 2**32 - 1), "TimeStamp": (0, 2**32 - 1), "Counter64": (0, 2**64 - 1),
    "Integer32": (-2**31, 2**31 - 1), "INTEGER": (-2**31, 2**31 - 1),
}
_WORDS = {smi.INTEGER: "an integer", smi.STRING: "an OCTET STRING", smi.OID: "an OBJECT IDENTIFIER",
          smi.IPADDRESS: "an IpAddress"}


def shown(value) -> str:
    """What came back, short, for a message (secrets are never values the audit reads)."""
    if isinstance(value, bytes):
        return f"OCTET STRING 0x{value[:16].hex()}{'...' if len(value) > 16 else ''}"
    if value is None:
        return "no such object"
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return type(value).__name__
    if isinstance(value, str):
        return f"{'OBJECT IDENTIFIER' if value.count('.') != 3 else 'IpAddress'} {value[:40]}"
    return f"INTEGER {value}"


def problem(oid: str, value, column: str | None = None) -> str | None:
    """None when ``value`` (as the client returns it: int, bytes, str for IpAddress/OID) fits the
    syntax of the object ``oid`` is an instance of; else one line naming the instance, what came
    back and what the MIB says. An object no loaded MIB defines is not judged. ``column``: the
    object's OID when the caller knows it (a column it walked, a scalar's ``.0`` cut off), which
    spares searching the index for it: the audit checks every value of every modem."""
    if value is None:
        return None  # absent (noSuchObject): the caller decides what a missing value means
    idx = mib.index()
    spec = _column_spec(idx, column) if column else None
    if spec is None:
        obj = idx.object(oid)
        if obj is None or not obj.syntax:
            return None
        spec = _spec(idx, obj)
    obj, info, lo, hi = spec
    if info is None:
        return None
    if info.base == smi.INTEGER:
        if not isinstance(value, int) or isinstance(value, bool):
            return f"{_name(oid)}: {shown(value)} where the MIB says {_WORDS[info.base]} ({obj.syntax})"
        if info.enums and value not in info.enums:
            labels = ", ".join(f"{label}({n})" for n, label in sorted(info.enums.items()))
            return f"{_name(oid)}: INTEGER {value} is none of {labels}"
        if lo is not None and not lo <= value <= hi:
            return f"{_name(oid)}: INTEGER {value} is out of {obj.syntax}'s range {lo}..{hi}"
        return None
    if info.base == smi.STRING:
        if not isinstance(value, bytes):
            return f"{_name(oid)}: {shown(value)} where the MIB says an OCTET STRING ({obj.syntax})"
        if info.fixed is not None and len(value) != info.fixed:
            return f"{_name(oid)}: {len(value)} octets where {obj.syntax} has {info.fixed}"
        return None
    if info.base in (smi.OID, smi.IPADDRESS) and not isinstance(value, str):
        return f"{_name(oid)}: {shown(value)} where the MIB says {_WORDS[info.base]}"
    return None


# column OID -> (object, type info, range low, high): what ``problem`` asks the index for every value
_specs: dict[str, tuple] = {}
_specs_for: tuple = ()  # the index (and its size: a --mib-dir loaded since adds objects) they are of


def _column_spec(idx, column: str) -> tuple | None:
    global _specs, _specs_for
    stamp = (idx, len(idx.by_oid), len(idx.types))
    if _specs_for != stamp:
        _specs, _specs_for = {}, stamp
    spec = _specs.get(column)
    if spec is None:
        obj = idx.by_oid.get(column)
        if obj is None:
            return None
        spec = _specs[column] = _spec(idx, obj)
    return spec


def _spec(idx, obj) -> tuple:
    if not obj.syntax:
        return obj, None, None, None
    lo, hi = _RANGES.get(obj.syntax, _RANGES.get(_tc_base(obj.syntax), (None, None)))
    return obj, idx.type_info(obj.syntax), lo, hi


def _name(oid: str) -> str:
    """The instance's name for a message (decoding its index costs: only when something is wrong)."""
    return mib.name_of(oid) or oid


def _tc_base(syntax: str) -> str:
    """The SMI type under an unsigned textual convention (TimeStamp), for its range."""
    return {"TimeStamp": "TimeTicks", "TimeInterval": "INTEGER", "TestAndIncr": "INTEGER"}.get(syntax, "")
