"""TFTP wire format on tftpy's packet classes, plus the option rules hfcprov applies.

tftpy's ``TftpPacketFactory`` parses every datagram and its packet classes encode
DATA, ACK and OACK; only ERROR is subclassed, because tftpy can only send the
fixed text of each error code and a modem operator needs to read *why* (e.g.
"access violation: outside the root"). Option negotiation (RFC 2347) is ours:
tftpy's server knows blksize and tsize only, ignores ``timeout`` (RFC 2349) and
has no ``windowsize`` (RFC 7440).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from tftpy.TftpPacketFactory import TftpPacketFactory
from tftpy.TftpPacketTypes import (
    TftpPacketACK,
    TftpPacketDAT,
    TftpPacketERR,
    TftpPacketOACK,
    TftpPacketRRQ,
    TftpPacketWRQ,
)
from tftpy.TftpShared import TftpErrors, TftpException

from hfcprov.errors import HfcprovError

__all__ = [
    "DEFAULT_BLKSIZE",
    "MAX_BLKSIZE",
    "MIN_BLKSIZE",
    "ErrorPacket",
    "Options",
    "TftpErrors",
    "TftpProtocolError",
    "encode_ack",
    "encode_data",
    "encode_oack",
    "encode_rrq",
    "negotiate",
    "netascii",
    "parse",
]

DEFAULT_BLKSIZE = 512
MIN_BLKSIZE = 8  # RFC 2348
MAX_BLKSIZE = 65464  # RFC 2348: largest block that fits one UDP datagram
MAX_WINDOWSIZE = 65535  # RFC 7440

_factory = TftpPacketFactory()


class TftpProtocolError(HfcprovError):
    """A datagram that is not valid TFTP, or a transfer the peer aborted."""


class ErrorPacket(TftpPacketERR):
    """TFTP ERROR with our own message text (tftpy's encoder only knows the stock texts)."""

    def __init__(self, code: int = TftpErrors.NotDefined, message: str = ""):
        super().__init__()
        self.errorcode = code
        self.errmsg = message.encode("ascii", "replace") if message else self.errmsgs.get(code, b"error")

    def encode(self):
        self.buffer = struct.pack("!HH", self.opcode, self.errorcode) + self.errmsg[:400] + b"\0"
        return self


def parse(datagram: bytes):
    """One datagram -> a tftpy packet (RRQ, WRQ, DAT, ACK, ERR, OACK); ``TftpProtocolError`` if malformed."""
    try:
        return _factory.parse(datagram)
    except (TftpException, struct.error, UnicodeDecodeError, ValueError, IndexError) as err:
        raise TftpProtocolError(f"malformed TFTP datagram ({len(datagram)} bytes): {err}") from None


def encode_data(block: int, data: bytes) -> bytes:
    pkt = TftpPacketDAT()
    pkt.blocknumber = block & 0xFFFF
    pkt.data = data
    return pkt.encode().buffer


def encode_ack(block: int) -> bytes:
    pkt = TftpPacketACK()
    pkt.blocknumber = block & 0xFFFF
    return pkt.encode().buffer


def encode_oack(options: dict[str, int]) -> bytes:
    pkt = TftpPacketOACK()
    pkt.options = {k: str(v) for k, v in options.items()}
    return pkt.encode().buffer


def encode_error(code: int, message: str = "") -> bytes:
    return ErrorPacket(code, message).encode().buffer


def encode_rrq(filename: str, options: dict | None = None, mode: str = "octet", write: bool = False) -> bytes:
    pkt = TftpPacketWRQ() if write else TftpPacketRRQ()
    pkt.filename = filename
    pkt.mode = mode
    pkt.options = {k: str(v) for k, v in (options or {}).items()}
    if mode == "octet":
        return pkt.encode().buffer
    # tftpy refuses to encode any mode but octet; the wire form is the same.
    return struct.pack("!H", pkt.opcode) + filename.encode() + b"\0" + mode.encode() + b"\0" + b"".join(
        k.encode() + b"\0" + str(v).encode() + b"\0" for k, v in pkt.options.items())


@dataclass
class Options:
    """What one transfer runs with after negotiation; ``oack`` is what the server answers (empty: no OACK)."""

    blksize: int = DEFAULT_BLKSIZE
    timeout: float = 1.0
    windowsize: int = 1
    oack: dict | None = None


def negotiate(requested: dict, size: int | None, *, timeout: float, max_blksize: int = MAX_BLKSIZE,
              max_windowsize: int = 64) -> Options:
    """Server side of RFC 2347: accept what we support, clamp to our limits, ignore the rest.

    ``size`` is the file size for ``tsize`` (RFC 2349), ``timeout`` our default
    retransmission timeout in seconds. An option with a value outside its RFC
    range is left out of the OACK, which tells the client it was not accepted.
    """
    opts = Options(timeout=timeout, oack={})
    for raw_name, raw_value in requested.items():
        name = str(raw_name).lower()
        try:
            value = int(str(raw_value))
        except ValueError:
            continue
        if name == "blksize" and value >= MIN_BLKSIZE:
            opts.blksize = min(value, MAX_BLKSIZE, max_blksize)
            opts.oack["blksize"] = opts.blksize
        elif name == "timeout" and 1 <= value <= 255:
            opts.timeout = float(value)
            opts.oack["timeout"] = value
        elif name == "tsize" and value >= 0 and size is not None:
            opts.oack["tsize"] = size
        elif name == "windowsize" and 1 <= value <= MAX_WINDOWSIZE:
            opts.windowsize = min(value, max_windowsize)
            opts.oack["windowsize"] = opts.windowsize
    return opts


def netascii(data: bytes) -> bytes:
    """RFC 764 NVT form for ``netascii`` mode: LF -> CR LF, CR -> CR NUL."""
    return data.replace(b"\r", b"\r\0").replace(b"\n", b"\r\n")
