"""The modem's side of DHCP, as a cable modem asks and as a CMTS relays it.

A cable modem learns its address, TFTP server, config file name, time servers and time
offset from DHCP (MULPI: DHCPv4 with siaddr/file, options 2/4/7 and the CableLabs vendor
option 125 of enterprise 4491; DHCPv6 with vendor option 17 of enterprise 4491, sub-options
32 TFTP servers, 33 config file, 34 syslog servers, 37 RFC 868 time servers, 38 time offset).
The CMTS is the modem's relay agent: it fills giaddr (DHCPv4) or wraps the message in a
RELAY-FORW (DHCPv6). This module speaks both, so a test or the emulated modem gets a lease
from a real DHCP server (Kea) without raw sockets:

    lease = acquire4("001095000001", server=("127.0.0.1", 67), relay="127.0.0.1")
    lease.address, lease.file, lease.tftp_servers, lease.time_servers, lease.time_offset
    lease6 = acquire6("001095000001", server=("::1", 547), link="fd00:10::1")

``relay`` (v4) / ``link`` (v6) is the relay agent's address; the reply comes back to the
relay's port (``reply_port``: 67 / 547, or the server's ``-P`` port in a test). With
``relay=None`` a DHCPv4 client broadcasts from port 68 on ``interface`` as a modem on a
LAN does (root: SO_BINDTODEVICE and port 68); ``acquire6(mac, interface="rf")`` likewise
multicasts from port 546 to ff02::1:2, for the relay agent on the link (``boot.relay``, the CMTS).
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import struct
import time
from dataclasses import dataclass, field

from hfcprov import macaddr
from hfcprov.errors import HfcprovError

CABLELABS = 4491  # IANA enterprise number of Cable Television Laboratories
MAGIC = b"\x63\x82\x53\x63"
# what a DOCSIS 3.x modem asks for (MULPI): mask, time offset, router, time server, log server,
# TFTP server name / boot file name, CableLabs client configuration, V-I vendor-specific information
PRL4 = (1, 2, 3, 4, 7, 66, 67, 122, 125)
ORO6_4491 = (32, 33, 34, 37, 38)  # TFTP servers, config file, syslog servers, time servers, time offset


class DhcpError(HfcprovError):
    """No lease: no answer, a NAK, or an answer without an address; the message says which."""


@dataclass
class Lease4:
    """What a DHCPv4 server handed a modem (an ACK)."""

    mac: str
    address: str
    server_id: str
    siaddr: str
    file: str
    options: dict[int, bytes] = field(default_factory=dict)

    @property
    def vendor(self) -> dict[int, dict[int, bytes]]:
        """Option 125 by enterprise number, each its sub-options (RFC 3925)."""
        return _vivso(self.options.get(125, b""))

    @property
    def tftp_servers(self) -> list[str]:
        """125/4491 sub-option 2 when given, else siaddr (MULPI's order)."""
        listed = _addresses4(self.vendor.get(CABLELABS, {}).get(2, b""))
        return listed or ([self.siaddr] if self.siaddr != "0.0.0.0" else [])

    @property
    def time_servers(self) -> list[str]:
        return _addresses4(self.options.get(4, b""))

    @property
    def log_servers(self) -> list[str]:
        return _addresses4(self.options.get(7, b""))

    @property
    def time_offset(self) -> int | None:
        raw = self.options.get(2)
        return struct.unpack("!i", raw)[0] if raw and len(raw) == 4 else None

    @property
    def lease_time(self) -> int | None:
        raw = self.options.get(51)
        return struct.unpack("!I", raw)[0] if raw and len(raw) == 4 else None

    @property
    def ccc(self) -> dict[int, bytes]:
        """Option 122 (RFC 3495 CableLabs client configuration) sub-options."""
        return dict(_tlvs(self.options.get(122, b""), 1))


@dataclass
class Lease6:
    """What a DHCPv6 server handed a modem (a REPLY)."""

    mac: str
    address: str
    server_id: bytes
    options: dict[int, bytes] = field(default_factory=dict)
    vendor: dict[int, bytes] = field(default_factory=dict)  # option 17 of enterprise 4491, by sub-option

    @property
    def tftp_servers(self) -> list[str]:
        return _addresses6(self.vendor.get(32, b""))

    @property
    def file(self) -> str:
        return self.vendor.get(33, b"").decode("ascii", "replace")

    @property
    def log_servers(self) -> list[str]:
        return _addresses6(self.vendor.get(34, b""))

    @property
    def time_servers(self) -> list[str]:
        return _addresses6(self.vendor.get(37, b""))

    @property
    def time_offset(self) -> int | None:
        raw = self.vendor.get(38)
        return struct.unpack("!i", raw)[0] if raw and len(raw) == 4 else None


# --- DHCPv4 ------------------------------------------------------------------------------------------------------


def acquire4(mac, server: tuple[str, int] = ("255.255.255.255", 67), *, relay: str | None = None,
             reply_port: int | None = None, interface: str | None = None, timeout: float = 2.0,
             tries: int = 3, vendor_class: bytes = b"docsis3.0:", extra: dict[int, bytes] | None = None) -> Lease4:
    """DISCOVER, OFFER, REQUEST, ACK for ``mac``; the ACK as a ``Lease4``, or ``DhcpError``.

    Relayed (``relay`` = the CMTS's address, put in giaddr): sent from ``relay``:``reply_port``
    (default 67) to ``server``, the answers come back there. Direct (``relay=None``): broadcast
    from port 68 (``reply_port``) on ``interface`` with the broadcast flag, as a modem does."""
    chaddr = macaddr.octets(mac)
    xid = int.from_bytes(os.urandom(4), "big")
    sock = _socket4(relay, reply_port if reply_port is not None else 67 if relay else 68, interface)
    try:
        common = {55: bytes(PRL4), 57: struct.pack("!H", 1500), 60: vendor_class,
                  125: _vivso_request(CABLELABS, {1: bytes([2])}), **(extra or {})}
        offer = _exchange4(sock, server, _bootp(xid, chaddr, relay, {53: b"\x01", **common}), xid, (2,),
                           timeout, tries, "DHCPDISCOVER")
        request = {53: b"\x03", 50: socket.inet_aton(offer[0]), 54: offer[4].get(54, b""), **common}
        ack = _exchange4(sock, server, _bootp(xid, chaddr, relay, request), xid, (5, 6), timeout, tries,
                         "DHCPREQUEST")
    finally:
        sock.close()
    address, siaddr, file, _sname, options = ack
    if options.get(53) == b"\x06":
        raise DhcpError(f"DHCP server {server[0]} refused {macaddr.colon(mac)}: DHCPNAK "
                        f"{options.get(56, b'').decode('ascii', 'replace')}".rstrip())
    server_id = socket.inet_ntoa(options[54]) if len(options.get(54, b"")) == 4 else server[0]
    return Lease4(macaddr.normalize(mac), address, server_id, siaddr, file, options)


def _socket4(relay: str | None, port: int, interface: str | None) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if relay is None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        if interface:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, interface.encode())
    try:
        sock.bind((relay or "0.0.0.0", port))
    except OSError as err:
        sock.close()
        raise DhcpError(f"cannot listen for DHCP answers on {relay or '0.0.0.0'}:{port}: {err.strerror}") from None
    return sock


def _bootp(xid: int, chaddr: bytes, relay: str | None, options: dict[int, bytes]) -> bytes:
    flags = 0 if relay else 0x8000  # broadcast: the modem has no address yet to unicast to
    giaddr = socket.inet_aton(relay) if relay else bytes(4)
    head = struct.pack("!BBBBIHH4s4s4s4s16s64s128s", 1, 1, 6, 1 if relay else 0, xid, 0, flags, bytes(4),
                       bytes(4), bytes(4), giaddr, chaddr.ljust(16, b"\0"), b"", b"")
    body = b"".join(bytes([code, len(value)]) + value for code, value in options.items())
    return head + MAGIC + body + b"\xff"


def _exchange4(sock, server, packet: bytes, xid: int, wanted: tuple, timeout: float, tries: int, what: str):
    for _ in range(tries):
        sock.sendto(packet, server)
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            try:
                data, _ = sock.recvfrom(4096)
            except TimeoutError:
                break
            reply = _parse4(data, xid)
            if reply is not None and reply[4].get(53, b"\0")[0] in wanted:
                return reply
    raise DhcpError(f"no answer to {what} from DHCP server {server[0]}:{server[1]} "
                    f"({tries} tries, {timeout:g} s each)")


def _parse4(data: bytes, xid: int):
    if len(data) < 240 or data[0] != 2 or data[236:240] != MAGIC or struct.unpack("!I", data[4:8])[0] != xid:
        return None
    yiaddr = socket.inet_ntoa(data[16:20])
    siaddr = socket.inet_ntoa(data[20:24])
    sname = data[44:108].split(b"\0", 1)[0].decode("ascii", "replace")
    file = data[108:236].split(b"\0", 1)[0].decode("ascii", "replace")
    return yiaddr, siaddr, file, sname, options4(data)


def options4(data: bytes) -> dict[int, bytes]:
    """The options of a BOOTP/DHCPv4 message (after the magic cookie), by code."""
    options: dict[int, bytes] = {}
    pos = 240
    while pos < len(data):
        code = data[pos]
        if code == 0:
            pos += 1
            continue
        if code == 255 or pos + 1 >= len(data):
            break
        n = data[pos + 1]
        options[code] = options.get(code, b"") + data[pos + 2:pos + 2 + n]  # RFC 3396: long options concatenate
        pos += 2 + n
    return options


def _vivso_request(enterprise: int, sub: dict[int, bytes]) -> bytes:
    data = b"".join(bytes([c, len(v)]) + v for c, v in sub.items())
    return struct.pack("!IB", enterprise, len(data)) + data


def _vivso(raw: bytes) -> dict[int, dict[int, bytes]]:
    out, pos = {}, 0
    while pos + 5 <= len(raw):
        enterprise, n = struct.unpack("!IB", raw[pos:pos + 5])
        out[enterprise] = dict(_tlvs(raw[pos + 5:pos + 5 + n], 1))
        pos += 5 + n
    return out


# --- DHCPv6 ------------------------------------------------------------------------------------------------------


def duid_ll(mac) -> bytes:
    """DUID-LL (RFC 8415 type 3, hardware type 1) of a MAC: what a cable modem sends."""
    return struct.pack("!HH", 3, 1) + macaddr.octets(mac)


def link_local(mac) -> ipaddress.IPv6Address:
    """The modem's modified EUI-64 link-local address (RFC 4291), the source of its DHCPv6 messages."""
    b = bytearray(macaddr.octets(mac))
    b[0] ^= 0x02
    return ipaddress.IPv6Address(b"\xfe\x80" + bytes(6) + bytes(b[:3]) + b"\xff\xfe" + bytes(b[3:]))


def acquire6(mac, server: tuple[str, int] = ("ff02::1:2", 547), *, link: str | None = None, relay: str = "::1",
             reply_port: int = 547, interface: str | None = None, timeout: float = 2.0, tries: int = 3,
             duid: bytes | None = None) -> Lease6:
    """SOLICIT, ADVERTISE, REQUEST, REPLY for ``mac``; the REPLY as a ``Lease6``, or ``DhcpError``.

    Relayed (``link`` given), as a CMTS does it: each message in a RELAY-FORW with ``link`` (an
    address on the modem's link, which picks the subnet) sent from ``relay``:``reply_port`` to
    ``server``. Direct (``interface`` given, no ``link``), as a modem on its link: from port 546 to
    All_DHCP_Relay_Agents_and_Servers (ff02::1:2) on ``interface``, so the relay agent there (the
    CMTS) forwards it (root: port 546)."""
    client_id = duid or duid_ll(mac)
    if link is None and not interface:
        raise DhcpError("DHCPv6: give link (relayed) or interface (direct, on the modem's link)")
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    try:
        if link is None:
            to = _direct6(sock, interface, server)
        else:
            to = server
            try:
                sock.bind((relay, reply_port))
            except OSError as err:
                raise DhcpError(f"cannot listen for DHCPv6 answers on [{relay}]:{reply_port}: {err.strerror}") from None
        iaid = int.from_bytes(macaddr.octets(mac)[2:], "big")
        vendor_oro = struct.pack("!I", CABLELABS) + _opt6(1, b"".join(struct.pack("!H", c) for c in ORO6_4491))
        common = [(1, client_id), (6, struct.pack("!HH", 17, 23)), (8, b"\0\0"), (16, struct.pack("!I", CABLELABS)
                  + _len_prefixed(b"docsis3.0")), (17, vendor_oro)]
        ia = (3, struct.pack("!III", iaid, 0, 0))
        peer = link_local(mac).packed  # the relay's peer-address: where the modem's message came from
        xid = os.urandom(3)
        advertise = _exchange6(sock, to, link, peer, 1, xid, common + [ia], 2, timeout, tries, "SOLICIT")
        server_id = advertise.get(2)
        if server_id is None:
            raise DhcpError(f"DHCPv6 ADVERTISE from {server[0]} has no server identifier")
        xid = os.urandom(3)
        reply = _exchange6(sock, to, link, peer, 3, xid, common + [(2, server_id), (3, advertise.get(3, ia[1]))], 7,
                           timeout, tries, "REQUEST")
    finally:
        sock.close()
    address = _ia_address(reply.get(3, b""))
    if address is None:
        status = reply.get(13, b"")
        why = status[2:].decode("utf-8", "replace") if len(status) > 2 else "no address in IA_NA"
        raise DhcpError(f"DHCPv6 server {server[0]} gave {macaddr.colon(mac)} no address: {why}")
    vendor: dict[int, bytes] = {}
    raw = reply.get(17, b"")
    if len(raw) >= 4 and struct.unpack("!I", raw[:4])[0] == CABLELABS:
        vendor = dict(_tlvs(raw[4:], 2))
    return Lease6(macaddr.normalize(mac), address, server_id, reply, vendor)


def _direct6(sock: socket.socket, interface: str, server: tuple[str, int]) -> tuple:
    """Prepare ``sock`` for a client on ``interface``: port 546, multicast out of that interface;
    returns where to send (the server, scoped to the interface)."""
    try:
        index = socket.if_nametoindex(interface)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, interface.encode())
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
        sock.bind(("::", 546))
    except OSError as err:
        sock.close()
        raise DhcpError(f"cannot send DHCPv6 from port 546 on {interface}: {err.strerror}") from None
    return (server[0], server[1], 0, index)


def _opt6(code: int, value: bytes) -> bytes:
    return struct.pack("!HH", code, len(value)) + value


def _len_prefixed(value: bytes) -> bytes:
    return struct.pack("!H", len(value)) + value


def _exchange6(sock, server, link: str | None, peer: bytes, msg_type: int, xid: bytes, options: list, wanted: int,
               timeout: float, tries: int, what: str) -> dict[int, bytes]:
    inner = bytes([msg_type]) + xid + b"".join(_opt6(c, v) for c, v in options)
    packet = inner if link is None else bytes([12, 0]) + ipaddress.IPv6Address(link).packed + peer + _opt6(9, inner)
    for _ in range(tries):
        try:
            sock.sendto(packet, server)
        except OSError as err:
            # no usable source yet: the link-local address is still tentative (DAD), as just after
            # the link came up; the message counts as lost and the next try goes after the timeout
            if err.errno != errno.EADDRNOTAVAIL:
                raise DhcpError(f"sending {what} to [{server[0]}]:{server[1]}: {err.strerror}") from None
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            try:
                data, _ = sock.recvfrom(4096)
            except TimeoutError:
                break
            if link is None:
                message = data
            elif len(data) < 34 or data[0] != 13:  # RELAY-REPL
                continue
            else:
                message = dict(_tlvs(data[34:], 2)).get(9, b"")
            if len(message) >= 4 and message[0] == wanted and message[1:4] == xid:
                return dict(_tlvs(message[4:], 2))
    raise DhcpError(f"no answer to {what} from DHCPv6 server [{server[0]}]:{server[1]} "
                    f"({tries} tries, {timeout:g} s each)")


def _ia_address(ia_na: bytes) -> str | None:
    for code, value in _tlvs(ia_na[12:], 2):
        if code == 5 and len(value) >= 24:
            return str(ipaddress.IPv6Address(value[:16]))
    return None


# --- shared -----------------------------------------------------------------------------------------------------


def _tlvs(raw: bytes, width: int):
    """(code, value) pairs of a TLV run whose code and length are ``width`` bytes each."""
    fmt = "!BB" if width == 1 else "!HH"
    pos = 0
    while pos + 2 * width <= len(raw):
        code, n = struct.unpack(fmt, raw[pos:pos + 2 * width])
        yield code, raw[pos + 2 * width:pos + 2 * width + n]
        pos += 2 * width + n


def _addresses4(raw: bytes) -> list[str]:
    return [socket.inet_ntoa(raw[i:i + 4]) for i in range(0, len(raw) - len(raw) % 4, 4)]


def _addresses6(raw: bytes) -> list[str]:
    return [str(ipaddress.IPv6Address(raw[i:i + 16])) for i in range(0, len(raw) - len(raw) % 16, 16)]


__all__ = ["CABLELABS", "DhcpError", "Lease4", "Lease6", "acquire4", "acquire6", "duid_ll", "link_local"]
