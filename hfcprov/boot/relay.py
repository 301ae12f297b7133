"""A CMTS's DHCP relay agent: between the modems' link and the DHCP servers of the headend.

A cable modem's DHCP never reaches the server directly: the CMTS relays it (MULPI). DHCPv4
(RFC 951/2131): a BOOTREQUEST broadcast on the cable side gets the CMTS's address in giaddr
and goes to the server; the server answers giaddr, and the relay hands the answer back on the
cable side (broadcast: the modem has no address yet). DHCPv6 (RFC 8415 section 19): a message
the modem multicast to ff02::1:2 goes to the server inside a RELAY-FORW whose link-address is
the CMTS's address on that link (it picks the subnet) and whose peer-address is the modem's
link-local source; the server's RELAY-REPL is unwrapped and sent to that peer, port 546.

The relay also sees what the server handed out, as a CMTS does: ``on_event(kind, mac, address)``
with ``kind`` "request4", "ack4", "nak4", "request6" or "reply6", so the CMTS knows which address
a modem holds (what it checks TLV 20/59 against at registration)::

    relay = DhcpRelay("rf", v4=("10.10.2.1", "10.10.3.2"), v6=("fd00:10:2::1", "fd00:10:3::2"),
                      on_event=cmts.dhcp_event).start()
    ...
    relay.stop()

Root: ports 67/547 and SO_BINDTODEVICE. Plain UDP sockets; one thread.
"""

from __future__ import annotations

import ipaddress
import selectors
import socket
import struct
import threading
from collections.abc import Callable

from hfcprov import macaddr
from hfcprov.boot.dhcpclient import MAGIC, _ia_address, _opt6, _tlvs, options4
from hfcprov.errors import HfcprovError

ALL_DHCP_RELAYS_AND_SERVERS = "ff02::1:2"
RELAY_FORW, RELAY_REPL, REPLY = 12, 13, 7
OPTION_RELAY_MSG, OPTION_INTERFACE_ID = 9, 18
MAX_HOPS = 16

EventHook = Callable[[str, str, str | None], None]


class RelayError(HfcprovError):
    """The relay agent could not open its sockets."""


class DhcpRelay:
    """Relay DHCPv4 (``v4 = (giaddr, server)``) and/or DHCPv6 (``v6 = (link_address, server)``)
    between the modems on ``interface`` and the servers (port 67 / 547)."""

    def __init__(self, interface: str, v4: tuple[str, str] | None = None, v6: tuple[str, str] | None = None,
                 on_event: EventHook | None = None):
        self.interface = interface
        self.v4, self.v6 = v4, v6
        self.on_event = on_event or (lambda *a: None)
        self.relayed = {"v4": 0, "v6": 0}
        self._sel = selectors.DefaultSelector()
        self._socks: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> DhcpRelay:
        try:
            self.index = socket.if_nametoindex(self.interface)
            if self.v4:
                self._link4 = self._open(socket.AF_INET, ("0.0.0.0", 67), device=True, broadcast=True)
                self._up4 = self._open(socket.AF_INET, (self.v4[0], 67))
                self._sel.register(self._link4, selectors.EVENT_READ, self._from_modem4)
                self._sel.register(self._up4, selectors.EVENT_READ, self._from_server4)
            if self.v6:
                self._link6 = self._open(socket.AF_INET6, ("::", 547), device=True)
                group = socket.inet_pton(socket.AF_INET6, ALL_DHCP_RELAYS_AND_SERVERS)
                self._link6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                                       group + struct.pack("@I", self.index))
                self._up6 = self._open(socket.AF_INET6, (self.v6[0], 547))
                self._sel.register(self._link6, selectors.EVENT_READ, self._from_modem6)
                self._sel.register(self._up6, selectors.EVENT_READ, self._from_server6)
        except OSError as err:
            self.stop()
            raise RelayError(f"DHCP relay on {self.interface}: {err.strerror or err}") from None
        self._thread = threading.Thread(target=self._loop, name="dhcp-relay", daemon=True)
        self._thread.start()
        return self

    def _open(self, family, address, device=False, broadcast=False) -> socket.socket:
        sock = socket.socket(family, socket.SOCK_DGRAM)
        self._socks.append(sock)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if device:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, self.interface.encode())
        if broadcast:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        sock.bind(address)
        return sock

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        for sock in self._socks:
            sock.close()
        self._sel.close()

    def _loop(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._sel.select(0.2):
                try:
                    data, peer = key.fileobj.recvfrom(4096)
                except OSError:
                    continue
                try:
                    key.data(data, peer)
                except (OSError, ValueError, IndexError, struct.error):
                    continue  # a malformed or unroutable message is dropped, as a relay does

    # -- DHCPv4 -----------------------------------------------------------------------------------
    def _from_modem4(self, data: bytes, peer) -> None:
        if len(data) < 240 or data[0] != 1 or data[236:240] != MAGIC or data[3] >= MAX_HOPS:
            return
        packet = bytearray(data)
        packet[3] += 1  # hops
        if packet[24:28] == bytes(4):  # giaddr: ours, unless a relay before us set it
            packet[24:28] = socket.inet_aton(self.v4[0])
        self._up4.sendto(bytes(packet), (self.v4[1], 67))
        self.relayed["v4"] += 1
        self.on_event("request4", macaddr.normalize(data[28:34]), None)

    def _from_server4(self, data: bytes, peer) -> None:
        if len(data) < 240 or data[0] != 2 or data[236:240] != MAGIC:
            return
        kind = options4(data).get(53, b"\0")[0]
        self._link4.sendto(data, ("255.255.255.255", 68))  # the modem has no address to unicast to yet
        mac = macaddr.normalize(data[28:34])
        if kind == 5:  # DHCPACK: the modem now holds yiaddr
            self.on_event("ack4", mac, socket.inet_ntoa(data[16:20]))
        elif kind == 6:
            self.on_event("nak4", mac, None)

    # -- DHCPv6 -----------------------------------------------------------------------------------
    def _from_modem6(self, data: bytes, peer) -> None:
        if len(data) < 4 or data[0] in (RELAY_FORW, RELAY_REPL, REPLY, 2):  # only a client's messages
            return
        source = ipaddress.IPv6Address(peer[0].split("%", 1)[0])
        forward = (bytes([RELAY_FORW, 0]) + ipaddress.IPv6Address(self.v6[0]).packed + source.packed
                   + _opt6(OPTION_INTERFACE_ID, self.interface.encode()) + _opt6(OPTION_RELAY_MSG, data))
        self._up6.sendto(forward, (self.v6[1], 547))
        self.relayed["v6"] += 1
        self.on_event("request6", _duid_mac(dict(_tlvs(data[4:], 2)).get(1, b"")) or "", None)

    def _from_server6(self, data: bytes, peer) -> None:
        if len(data) < 34 or data[0] != RELAY_REPL:
            return
        options = dict(_tlvs(data[34:], 2))
        message = options.get(OPTION_RELAY_MSG, b"")
        if len(message) < 4:
            return
        to = str(ipaddress.IPv6Address(data[18:34]))
        self._link6.sendto(message, (to, 546, 0, self.index))
        if message[0] == REPLY:
            inner = dict(_tlvs(message[4:], 2))
            mac = _duid_mac(inner.get(1, b""))
            address = _ia_address(inner.get(3, b""))
            if mac and address:
                self.on_event("reply6", mac, address)


def _duid_mac(duid: bytes) -> str | None:
    """The MAC inside a DUID-LL (type 3) or DUID-LLT (type 1) of hardware type 1, as a cable modem sends."""
    if len(duid) == 10 and duid[:4] == b"\0\x03\0\x01":
        return macaddr.normalize(duid[4:])
    if len(duid) == 14 and duid[:4] == b"\0\x01\0\x01":
        return macaddr.normalize(duid[8:])
    return None


__all__ = ["DhcpRelay", "RelayError"]
