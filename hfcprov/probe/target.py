"""Probes go only to the one host the user named: never broadcast, multicast or unspecified."""

from __future__ import annotations

import ipaddress
import json
import socket
import subprocess

from hfcprov.probe.errors import ProbeError


def check_target(target: str) -> str:
    """The IPv4 address to probe, or ``ProbeError`` saying why this target is refused."""
    try:
        addr = ipaddress.IPv4Address(socket.gethostbyname(target))
    except (OSError, ipaddress.AddressValueError) as err:
        raise ProbeError(f"target {target!r}: cannot resolve to an IPv4 address") from err
    why = None
    if addr.is_multicast:
        why = "a multicast address"
    elif addr == ipaddress.IPv4Address("255.255.255.255"):
        why = "the limited broadcast address"
    elif addr.is_unspecified:
        why = "the unspecified address"
    elif str(addr) in _local_broadcasts():
        why = "the broadcast address of a local subnet"
    if why:
        raise ProbeError(f"target {target} ({addr}) is {why}; probes go to one host only")
    return str(addr)


def _local_broadcasts() -> set[str]:
    """Directed broadcast addresses of this host's IPv4 subnets (from ``ip -j addr``)."""
    try:
        out = subprocess.run(["ip", "-j", "-4", "addr", "show"], check=False, capture_output=True, text=True, timeout=5).stdout
        links = json.loads(out or "[]")
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return set()
    found = set()
    for link in links:
        for a in link.get("addr_info", []):
            if a.get("broadcast"):
                found.add(a["broadcast"])
            elif a.get("prefixlen", 32) < 31:
                found.add(str(ipaddress.IPv4Network(f"{a['local']}/{a['prefixlen']}", strict=False).broadcast_address))
    return found
