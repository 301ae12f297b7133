"""A lean SNMPv1/v2c engine: hand-built BER on one asyncio UDP socket.

Auditing thousands of modems is CPU-bound on the manager side, and pysnmp
spends most of it in machinery v2c does not need (per-target LCD rows in its
own MIB, security-model lookups, generic pyasn1 decoding): about 10 ms of CPU
per request. A v2c message is small fixed BER (RFC 3416), so this engine
builds and parses it directly with the BER helpers the config codec already
uses for TLV 11 VarBinds (``hfcprov.config.ber``), sends every request from one
socket and matches answers by request-id: well under 1 ms per request.
SNMPv3 (USM keys, engine discovery) stays on pysnmp (``PysnmpClient``).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import random
import socket

from hfcprov.config.ber import (
    TYPE_OF_TAG,
    decode_oid_body,
    decode_value,
    encode_oid,
    encode_value,
    read_tlv,
    tlv,
)
from hfcprov.config.errors import ConfigError
from hfcprov.snmp.base import (
    END_OF_MIB,
    BaseClient,
    SnmpAuthError,
    SnmpError,
    Typed,
)
from hfcprov.snmp.credentials import Credentials

GET, GETNEXT, RESPONSE, SET, GETBULK = 0xA0, 0xA1, 0xA2, 0xA3, 0xA5
NO_SUCH_OBJECT, NO_SUCH_INSTANCE, END_OF_MIB_VIEW = 0x80, 0x81, 0x82
ERROR_STATUS = ["noError", "tooBig", "noSuchName", "badValue", "readOnly", "genErr", "noAccess", "wrongType",
                "wrongLength", "wrongEncoding", "wrongValue", "noCreation", "inconsistentValue",
                "resourceUnavailable", "commitFailed", "undoFailed", "authorizationError", "notWritable",
                "inconsistentName"]
NULL = b"\x05\x00"
_EXCEPTIONS = {NO_SUCH_OBJECT: "noSuchObject", NO_SUCH_INSTANCE: "noSuchInstance"}
_INTEGER_TAGS = (0x02, 0x41, 0x42, 0x43, 0x46)  # Integer, Counter32, Gauge32, TimeTicks, Counter64


def _int(value: int) -> bytes:
    return encode_value("Integer", value)


def encode_request(pdu_type: int, request_id: int, community: bytes, oid_list: list[str],
                   non_repeaters: int = 0, max_repetitions: int = 0, values: list[bytes] | None = None,
                   version: int = 1) -> bytes:
    """A v2c (version 1; 0 for v1) message; ``values`` are BER-encoded values for a SET."""
    if values:
        var_binds = b"".join(tlv(0x30, encode_oid(o) + values[i]) for i, o in enumerate(oid_list))
    else:
        var_binds = _null_var_binds(tuple(oid_list))
    pdu = tlv(pdu_type, _int(request_id) + _int(non_repeaters) + _int(max_repetitions) + tlv(0x30, var_binds))
    return tlv(0x30, _int(version) + tlv(0x04, community) + pdu)


@functools.lru_cache(maxsize=1024)
def _null_var_binds(oid_list: tuple[str, ...]) -> bytes:
    """The var-binds of a GET/GETBULK: every modem of an audit is first asked the same objects."""
    return b"".join(tlv(0x30, encode_oid(o) + NULL) for o in oid_list)


def decode_response(data: bytes, typed: bool = False) -> tuple[int, int, int, list[tuple[str, object]], bytes]:
    """(request_id, error_status, error_index, var-binds, community) of a Response-PDU.
    Values are Python values (int, bytes, dotted str for IpAddress/OID), ``None`` for
    noSuchObject/noSuchInstance and ``END_OF_MIB`` for endOfMibView; with ``typed`` each is a
    ``Typed(type name, value)`` (``get``/``walk`` print the type). Raises ValueError."""
    try:
        tag, msg, _ = read_tlv(data, 0)
        if tag != 0x30:
            raise ValueError("not an SNMP message")
        _, _version, pos = read_tlv(msg, 0)
        tag, community, pos = read_tlv(msg, pos)
        tag, pdu, _ = read_tlv(msg, pos)
        if tag != RESPONSE:
            raise ValueError(f"PDU type 0x{tag:02x} is not a response")
        fields = []
        pos = 0
        for _ in range(3):
            _, body, pos = read_tlv(pdu, pos)
            fields.append(int.from_bytes(body, "big", signed=True))
        tag, vbs, _ = read_tlv(pdu, pos)
        out = []
        pos, end = 0, len(vbs)
        while pos < end:
            # a var-bind whose three lengths are each one byte (under 128: nearly every one) is cut
            # here; any other goes through read_tlv (same checks, same errors)
            vb_end = vpos = 0
            if pos + 5 < end and vbs[pos + 1] < 0x80 and vbs[pos + 3] < 0x80:
                vb_end = pos + 2 + vbs[pos + 1]
                vpos = pos + 4 + vbs[pos + 3]
            if vpos + 2 <= vb_end <= end and vpos + 2 + vbs[vpos + 1] <= vb_end:
                oid_body = vbs[pos + 4:vpos]
                vtag = vbs[vpos]
                vbody = vbs[vpos + 2:vpos + 2 + vbs[vpos + 1]]
                pos = vb_end
            else:
                vtag, vbody, oid_body, pos = _var_bind(vbs, pos)
            if vtag in (NO_SUCH_OBJECT, NO_SUCH_INSTANCE):
                value = Typed(_EXCEPTIONS[vtag], None) if typed else None
            elif vtag == END_OF_MIB_VIEW:
                value = END_OF_MIB
            elif vtag in _INTEGER_TAGS:
                # lenient: agents (pyasn1-based ones among them) send non-shortest integers
                # such as -128 as ff 80, which config files must not contain but SNMP may
                if not vbody:
                    raise ValueError("empty integer")
                value = int.from_bytes(vbody, "big", signed=vtag == 0x02)
            else:
                value = decode_value(vtag, vbody)[1]
            if typed and value is not END_OF_MIB and not isinstance(value, Typed):
                value = Typed(TYPE_OF_TAG.get(vtag, "Opaque"), value)
            out.append((decode_oid_body(oid_body), value))
        return fields[0], fields[1], fields[2], out, bytes(community)
    except (ConfigError, IndexError) as err:
        raise ValueError(f"malformed SNMP response: {err}") from None


def _var_bind(vbs: bytes, pos: int) -> tuple[int, bytes, bytes, int]:
    """(value tag, value body, OID body, next position) of the var-bind at ``pos``, any lengths."""
    _, vb, pos = read_tlv(vbs, pos)
    _, oid_body, vpos = read_tlv(vb, 0)
    vtag, vbody, _ = read_tlv(vb, vpos)
    return vtag, vbody, oid_body, pos


# After the last try, listen this many timeouts more for a late answer: a modem answering 0.3 s
# per var-bind needs ~12 s for a full request (``base.MAX_VARBINDS``); a dead one now costs
# 2 x 2 s + 10 s instead of 4 s with the defaults.
DEFAULT_PATIENCE = 5


class _Protocol(asyncio.DatagramProtocol):
    def __init__(self, pending: dict, typed: bool = False):
        self.pending = pending
        self.typed = typed

    def datagram_received(self, data, addr):
        try:
            request_id, *rest = decode_response(data, self.typed)
        except ValueError:
            return  # not ours or garbled: the request times out and is retried
        waiting = self.pending.get(request_id)
        if waiting is not None and waiting.addr == addr[:2]:
            waiting.answer(rest)

    def error_received(self, exc):  # ICMP port unreachable on loopback: treat as no answer
        pass


class _Waiting:
    """One request (every copy of it shares its request-id): the first answer, and how many came."""

    def __init__(self, loop, addr: tuple):
        self.addr = addr
        self.future = loop.create_future()
        self.answers = 0
        self.more = asyncio.Event()

    def answer(self, result) -> None:
        self.answers += 1
        if not self.future.done():
            self.future.set_result(result)
        self.more.set()


class V2cClient(BaseClient):
    """SNMPv2c (or v1 for GET/SET) over one UDP socket shared by every request of a run."""

    def __init__(self, credentials: Credentials, timeout: float = 2.0, retries: int = 1, version: int = 1,
                 typed: bool = False, patience: float | None = None):
        self.community = credentials.community.encode()
        self.typed = typed
        self.timeout, self.retries, self.version = timeout, retries, version
        # how long to keep listening after the last try for a slow agent's late answer
        self.patience = DEFAULT_PATIENCE * timeout if patience is None else patience
        self.hears_late_answers = self.patience > 0
        self._pending: dict[int, _Waiting] = {}
        self._ids = itertools.count(random.randrange(1, 2**30))
        self._transport = self._transport6 = None

    async def _socket(self, family: int = socket.AF_INET):
        """One socket per address family (an IPv6-only modem needs an IPv6 one), made on first use."""
        if family == socket.AF_INET6:
            if self._transport6 is None:
                self._transport6 = await self._open(family, "::")
            return self._transport6
        if self._transport is None:
            self._transport = await self._open(family, "0.0.0.0")
        return self._transport

    async def _open(self, family: int, any_addr: str):
        loop = asyncio.get_running_loop()
        sock = socket.socket(family, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)  # bursts of answers
        sock.bind((self._source_for(family == socket.AF_INET6, any_addr), 0))
        transport, _ = await loop.create_datagram_endpoint(lambda: _Protocol(self._pending, self.typed), sock=sock)
        return transport

    async def _request(self, host: str, port: int, pdu_type: int, oid_list: list[str], non_repeaters=0,
                       max_repetitions=0, values=None, once: bool = False) -> list[tuple[str, object]]:
        host = host.strip("[]")
        try:
            if ":" in host:
                addr = (socket.getaddrinfo(host, port, socket.AF_INET6, socket.SOCK_DGRAM)[0][4][0], port)
            else:
                addr = (socket.gethostbyname(host), port) if not host[:1].isdigit() else (host, port)
        except OSError as err:
            raise SnmpError(f"{host}:{port}: {err.strerror or err}") from None
        transport = await self._socket(socket.AF_INET6 if ":" in addr[0] else socket.AF_INET)
        loop = asyncio.get_running_loop()
        # every try carries the same request-id, so an answer to any copy counts (a slow agent's
        # answer to the first copy arrives after the second was sent)
        request_id = next(self._ids) & 0x7FFFFFFF
        message = encode_request(pdu_type, request_id, self.community, oid_list, non_repeaters, max_repetitions,
                                 values, self.version)
        waiting = _Waiting(loop, addr)
        self._pending[request_id] = waiting
        sent_at = loop.time()
        copies = 0
        try:
            result = None
            # once: one copy, awaited as long as every try would have been (set_many)
            tries, wait = (1, self.once_timeout) if once else (self.retries + 1, self.timeout)
            for _attempt in range(tries):
                transport.sendto(message, addr)
                copies += 1
                try:
                    result = await asyncio.wait_for(asyncio.shield(waiting.future), wait)
                    break
                except TimeoutError:
                    continue
            if result is None:
                result = await self._late_answer(waiting, copies, sent_at, host, port, once)
        finally:
            self._pending.pop(request_id, None)
        status, index, var_binds, _community = result
        if status:
            name = ERROR_STATUS[status] if status < len(ERROR_STATUS) else str(status)
            at = f" at {oid_list[index - 1]}" if 0 < index <= len(oid_list) else ""
            error = SnmpAuthError if name in ("authorizationError", "noAccess") else SnmpError
            raise error(f"{host}:{port}: {name}{at}")
        return var_binds

    async def _late_answer(self, waiting: _Waiting, copies: int, sent_at: float, host: str, port: int,
                           once: bool = False):
        """After the last try: a slow agent still answers, later. Wait ``patience`` for it; then for
        its answers to the other copies (each cost it as much: sending more now would only queue
        behind them), and remember how long it takes per var-bind (``BaseClient.varbind_budget``)."""
        loop = asyncio.get_running_loop()
        if self.patience <= 0:
            raise self._timeout_error(host, port, once)
        try:
            result = await asyncio.wait_for(asyncio.shield(waiting.future), self.patience)
        except TimeoutError:
            raise self._timeout_error(host, port, once) from None
        elapsed = loop.time() - sent_at
        deadline = loop.time() + self.patience
        while waiting.answers < copies and loop.time() < deadline:
            waiting.more.clear()
            try:
                await asyncio.wait_for(waiting.more.wait(), deadline - loop.time())
            except TimeoutError:
                break
        self.slow(host, port, elapsed / max(1, len(result[2])))
        return result

    async def _get(self, host, port, oid_list):
        return await self._request(host, port, GET, oid_list)

    async def _bulk(self, host, port, non_repeaters, max_repetitions, oid_list):
        return await self._request(host, port, GETBULK, oid_list, non_repeaters, max_repetitions)

    async def set_many(self, host: str, port: int, var_binds: list[tuple[str, str, object]],
                       once: bool = False) -> list:
        """SET several objects in one PDU (the agent applies all or none); ``(oid, type name, value)``
        each; ``once``: never resent (``BaseClient.set_many``). Returns the agent's var-binds."""
        encoded = []
        for oid, type_, value in var_binds:
            try:
                encoded.append(encode_value(type_, value))
            except ConfigError as err:
                raise SnmpError(f"{host}:{port}: {oid}: {err}") from None
        return await self._request(host, port, SET, [vb[0] for vb in var_binds], values=encoded, once=once)

    def close(self) -> None:
        for transport in (self._transport, self._transport6):
            if transport is not None:
                transport.close()
        self._transport = self._transport6 = None
        for waiting in self._pending.values():
            waiting.future.cancel()
