"""A cable modem's MAC address: every spelling operators write, reduced to one key.

Inventories, campaign files, CMTS tables and DHCP leases spell the same modem
``00:11:22:AA:BB:CC``, ``00-11-22-aa-bb-cc``, ``0011.22aa.bbcc`` (Cisco) or
``001122aabbcc``. Everything inside hfcprov keys a modem by ``normalize``'s form
(12 lowercase hex digits), so the file a campaign publishes, the inventory row and
the SNMP table index all name the same modem whatever the user typed.
"""

from __future__ import annotations

import re

from hfcprov.errors import HfcprovError

_SEPARATORS = re.compile(r"[:\-.\s]")
_HEX12 = re.compile(r"^[0-9a-f]{12}$")


class MacAddressError(HfcprovError, ValueError):
    """Text that is not a 48-bit MAC address."""


def normalize(text) -> str:
    """``00:11:22:AA:BB:CC``, ``00-11-22-aa-bb-cc``, ``0011.22aa.bbcc`` -> ``001122aabbcc``."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) != 6:
            raise MacAddressError(f"bad MAC address: {len(text)} octets, not 6")
        return bytes(text).hex()
    mac = _SEPARATORS.sub("", str(text)).lower()
    if not _HEX12.match(mac):
        raise MacAddressError(f"bad MAC address {text!r}")
    return mac


def colon(mac) -> str:
    """Any spelling -> ``00:11:22:aa:bb:cc`` (Kea, ISC dhcpd, Linux)."""
    m = normalize(mac)
    return ":".join(m[i : i + 2] for i in range(0, 12, 2))


def octets(mac) -> bytes:
    """Any spelling -> the 6 octets (an SNMP OCTET STRING value, a DHCP chaddr)."""
    return bytes.fromhex(normalize(mac))


def oid_index(mac) -> str:
    """Any spelling -> the OID index of a table indexed by a MacAddress (``0.17.34.170.187.204``)."""
    return ".".join(str(b) for b in octets(mac))


__all__ = ["MacAddressError", "colon", "normalize", "octets", "oid_index"]
