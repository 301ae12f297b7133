"""MIB names for config files and SNMP: the one place hfcprov loads MIB definitions.

``mibs/`` ships compact copies of the standard modules a DOCSIS or PacketCable config names
(SNMPv2-MIB, IF-MIB, the SNMP framework modules, NOTIFICATION-LOG-MIB, DOCS-IF-MIB,
DOCS-IF3-MIB, DOCS-CABLE-DEVICE-MIB, DOCS-QOS3-MIB, the BPI+ and PacketCable MTA/signalling
modules; see ``scripts/compact_mibs.py``), read by a small SMI reader (``hfcprov.mib.smi``)
without pysnmp, so ``config encode`` stays quick::

    >>> resolve("docsDevNmAccessStatus.1")
    '1.3.6.1.2.1.69.1.2.1.7.1'
    >>> resolve('snmpCommunityStatus."public"')    # IMPLIED index: no length arc
    '1.3.6.1.6.3.18.1.1.1.8.112.117.98.108.105.99'
    >>> name_of("1.3.6.1.6.3.18.1.1.1.8.112.117.98.108.105.99")
    "snmpCommunityStatus.'public'"
    >>> enum_label("docsIfCmStatusValue", 12)
    'operational'

An operator's own MIB folders (``--mib-dir``, config and snmp commands alike) go through
``load_mib_dirs``: pysmi compiles them (``hfcprov.mib.compiler``, cached by digest) and their
names join this index. SNMP code imports its OIDs from here too (``hfcprov.snmp.oids``).
"""

from __future__ import annotations

import marshal
import os
import threading
import zlib

from hfcprov.cachedir import cache_root
from hfcprov.errors import HfcprovError
from hfcprov.mib.index import MibIndex, MibObject
from hfcprov.shipped import shipped_dir

__all__ = ["MIB_DIR", "PREFERRED_MODULES", "MibError", "MibIndex", "MibObject", "enum_label", "enums", "index",
           "load_mib_dirs", "name_of", "resolve"]

MIB_DIR = shipped_dir("mibs")  # mibs/ of a checkout, or hfcprov/mibs installed from a wheel

# Modules whose names win when another shipped module defines the same name: the ones DOCSIS
# and PacketCable config files mean (and the docsis C tool resolves), e.g. pktcMtaDevEnabled is
# PKTC-MTA-MIB's 1.3.6.1.4.1.4491.2.2.1.1.1.7, not PKTC-IETF-MTA-MIB's; the other stays
# reachable as PKTC-IETF-MTA-MIB::pktcMtaDevEnabled.
PREFERRED_MODULES = frozenset({"DOCS-BPI2-MIB", "PKTC-MTA-MIB", "PKTC-SIG-MIB"})


class MibError(HfcprovError):
    """A MIB folder or file given by the user cannot be read or compiled."""


def shipped_files():
    """The module files of ``mibs/`` (not its README)."""
    return sorted(p for p in MIB_DIR.iterdir()
                  if p.is_file() and not p.name.startswith(".") and p.suffix not in (".md", ".py", ".pyc"))


_index: MibIndex | None = None
_lock = threading.Lock()


def index() -> MibIndex:
    """The process-wide index of ``mibs/`` (and of any ``--mib-dir`` loaded since), built on first use."""
    global _index
    if _index is None:
        with _lock:
            if _index is None:
                _index = _shipped_index()
    return _index


def _shipped_index() -> MibIndex:
    """mibs/ read from its text, or from the marshal cache of an earlier read of the same files
    (~70 ms of CPU for the regexes against ~3 ms: it matters to a config encode per process)."""
    files = shipped_files()
    stamp = "|".join(f"{p.name}:{st.st_size}:{st.st_mtime_ns}" for p in files for st in [p.stat()])
    cache = cache_root() / f"mibindex-{zlib.crc32(stamp.encode()):08x}.marshal"
    try:
        with open(cache, "rb") as f:
            return MibIndex.from_state(marshal.load(f))
    except (OSError, EOFError, ValueError, TypeError, KeyError):
        pass
    idx = MibIndex()
    idx.load_texts([(str(p), p.read_text(errors="replace")) for p in files], prefer=PREFERRED_MODULES)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f".{cache.name}.{os.getpid()}")
        with open(tmp, "wb") as f:
            marshal.dump(idx.state(), f)
        os.replace(tmp, cache)
    except OSError:
        pass  # no writable cache (a service account): the next process reads the text again
    return idx


def resolve(name: str) -> str | None:
    """Numeric OID of a name such as ``docsDevNmAccessStatus.1``, ``snmpCommunityStatus.'public'``
    or ``MODULE::name.index``; numeric OIDs pass through; None when no loaded MIB defines it."""
    return index().resolve(name)


def name_of(oid: str) -> str | None:
    """Name of a numeric OID with its instance index (``docsDevResetNow.0``,
    ``vacmSecurityToGroupStatus.3."ops"``); None when unknown. ``resolve`` reads it back."""
    return index().name_of(oid)


def enums(name_or_oid: str) -> dict[int, str]:
    """The enum labels of an object's syntax (empty when it has none)."""
    obj = index().object(name_or_oid)
    return dict(obj.enums) if obj else {}


def enum_label(name_or_oid: str, value) -> str | None:
    """``enum_label("docsIfCmtsCmStatusValue", 8) == "operational"``; None when the object is not
    enumerated or ``value`` is not an integer (an agent may send anything)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return enums(name_or_oid).get(value)


def load_mib_dirs(dirs=(), warn=None) -> int:
    """The loader behind every command's ``--mib-dir`` (``config`` and ``snmp`` alike).

    Compiles each folder of ``dirs`` (subfolders included) together with ``mibs/`` with pysmi
    (cached by the sources' digest, so only the first run pays) and adds every name, OID, enum
    label and index they define to this index; a later folder's module wins over an earlier one
    and over the shipped copies. A module pysmi cannot compile is skipped and reported through
    ``warn(line)``, one line naming its file and the reason (without ``warn`` it raises
    ``MibError``). Returns how many names were added or changed. Imports nothing when ``dirs``
    is empty."""
    if not dirs:
        return 0
    from hfcprov.mib import compiler  # pysmi and pysnmp: only for an operator's folders

    return compiler.load_dirs(dirs, warn=warn)
