"""Names a user types for TLVs: "did you mean" for an unknown one, the docsis C tool's loose lookup for a
name that belongs elsewhere, and the C tool's ``DigitMap "file";`` statement.

The C tool looks every name up in one flat table whatever block it is in, so its users write
``UsServiceFlowRef 1;`` inside a ``DsServiceFlow`` (read as that block's TLV 1) or a name of TLV 24 inside
TLV 70 (written as that code there). hfcprov reads such a name the same way, and says what to write.
"""

from __future__ import annotations

from hfcprov.config.dictionary import Spec, names_under, specs_named
from hfcprov.config.errors import ConfigError
from hfcprov.config.framing import DIALPLAN_OID as DIGITMAP_OID
from hfcprov.config.framing import MAX_DIALPLAN as MAX_DIGITMAP

# The docsis C tool's ``DigitMap "file";`` sets the PacketCable 2.0 dial plan object (pktcEUERSTDMValue.1,
# at most 8192 bytes) to the file's bytes: DIGITMAP_OID, MAX_DIGITMAP.


def unknown_name(parent: Spec | None, name: str) -> ConfigError:
    """The error for a TLV name ``parent`` (None: a block of unknown TLVs) does not know, with "did you mean"."""
    from hfcprov.suggest import did_you_mean  # the error path only: difflib is no per-file encode's import

    if parent is None:
        return ConfigError(f"unknown TLV name {name!r} inside an unknown TLV (only GenericTLV is known there)")
    where = f"inside {parent.name}" if parent.path else "at the top level"
    return ConfigError(f"unknown TLV name {name!r} {where}{did_you_mean(name, names_under(parent))}")


def loose_spec(parent: Spec | None, name: str, path: str) -> tuple[Spec, bool, ConfigError]:
    """The docsis C tool's reading of ``name`` inside a block (at ``path``) that has no sub-TLV of that name:
    (spec, here, warning). ``here``: the block's own sub-TLV of the same code (``DsServiceFlowRef`` for
    ``UsServiceFlowRef`` in a ``DsServiceFlow``), else the named spec from elsewhere, whose code and value type
    the C tool writes. Raises ``unknown_name`` at the top level, or when the name is nowhere or has several codes.
    """
    found = [s for s in specs_named(name)] if path else []
    codes = sorted({s.code for s in found})
    if len(codes) != 1:
        err = unknown_name(parent, name)
        if len(codes) > 1:
            err = ConfigError(f"{err.message}; {name} is {' or '.join(s.path for s in found[:4])} elsewhere")
        raise err
    other = found[0]
    kids = parent.children if parent is not None else {}
    mine = kids.get(other.code)
    where = parent.name if parent is not None else f"TLV {path}"
    if mine is not None:
        return mine, True, ConfigError(
            f"{name} is not a sub-TLV of {where} (it is {other.path}): read as its TLV {mine.path}, {mine.name},"
            f" as the docsis C tool does; write {mine.name}", path=mine.path)
    return other, False, ConfigError(
        f"{name} is not a sub-TLV of {where} (it is {other.path}): written as TLV {path}.{other.code} with"
        f" {other.name}'s value type, as the docsis C tool does", path=f"{path}.{other.code}")


__all__ = ["DIGITMAP_OID", "MAX_DIGITMAP", "unknown_name", "loose_spec"]
