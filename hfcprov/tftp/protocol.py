"""The TFTP wire format, declared once: opcodes, error codes, options and packet layouts.

RFC 1350 (the packets), RFC 2347 (option negotiation, OACK, error 8), RFC 2348 (blksize),
RFC 2349 (timeout, tsize), RFC 7440 (windowsize). Everything in hfcprov that reads or writes
a TFTP datagram uses these names: the server's loop, the transfer state machine, the
many-modem client and the tests. The hot paths (an ACK arriving at the server, a DATA
arriving at the client, a DATA leaving the server) read and build the 4-byte header with
``HEADER`` and compare with the plain ``int`` opcodes below; ``parse`` and the ``encode_*``
functions are the general form over the same layouts.

Layouts (network byte order; ``0`` is a NUL byte)::

    RRQ/WRQ  | opcode:2 | filename | 0 | mode | 0 | (option | 0 | value | 0)*
    DATA     | opcode:2 | block:2  | 0..blksize bytes
    ACK      | opcode:2 | block:2  |
    ERROR    | opcode:2 | code:2   | message | 0
    OACK     | opcode:2 | (option | 0 | value | 0)*
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass, field

from hfcprov.errors import HfcprovError

__all__ = [
    "DEFAULT_BLKSIZE",
    "HEADER",
    "MAX_BLKSIZE",
    "MAX_WINDOWSIZE",
    "MIN_BLKSIZE",
    "MODES",
    "OPTIONS",
    "Ack",
    "Data",
    "Error",
    "ErrorCode",
    "Opcode",
    "OptionAck",
    "OptionRule",
    "Options",
    "Request",
    "TftpErrors",
    "TftpProtocolError",
    "encode_ack",
    "encode_data",
    "encode_error",
    "encode_oack",
    "encode_rrq",
    "negotiate",
    "netascii",
    "parse",
]


class Opcode(enum.IntEnum):
    """RFC 1350 section 5, and OACK from RFC 2347."""

    RRQ = 1
    WRQ = 2
    DATA = 3
    ACK = 4
    ERROR = 5
    OACK = 6


# Plain ints of the same declaration, for the per-datagram paths (an IntEnum attribute costs a lookup).
RRQ, WRQ, DATA, ACK, ERROR, OACK = (int(op) for op in Opcode)


class ErrorCode(enum.IntEnum):
    """RFC 1350 error codes, and 8 from RFC 2347 (member names as tftpy spells them)."""

    NotDefined = 0
    FileNotFound = 1
    AccessViolation = 2
    DiskFull = 3
    IllegalTftpOp = 4
    UnknownTID = 5
    FileAlreadyExists = 6
    NoSuchUser = 7
    FailedNegotiation = 8


TftpErrors = ErrorCode  # the name the tests and earlier code import

ERROR_TEXT = {  # RFC 1350's text for each code, sent when no reason is given
    ErrorCode.NotDefined: "Not defined, see error message (if any).",
    ErrorCode.FileNotFound: "File not found.",
    ErrorCode.AccessViolation: "Access violation.",
    ErrorCode.DiskFull: "Disk full or allocation exceeded.",
    ErrorCode.IllegalTftpOp: "Illegal TFTP operation.",
    ErrorCode.UnknownTID: "Unknown transfer ID.",
    ErrorCode.FileAlreadyExists: "File already exists.",
    ErrorCode.NoSuchUser: "No such user.",
    ErrorCode.FailedNegotiation: "Option negotiation failed.",
}

MODES = ("netascii", "octet", "mail")  # RFC 1350; "mail" is obsolete and never served


@dataclass(frozen=True)
class OptionRule:
    """One negotiable option: its valid range (``maximum`` None: unbounded), whether a larger request
    is answered with the maximum instead of being refused, and where it is defined."""

    name: str
    minimum: int
    maximum: int | None
    rfc: str
    clamped: bool = False

    def accepts(self, value: int) -> bool:
        return value >= self.minimum and (self.maximum is None or self.clamped or value <= self.maximum)

    def clamp(self, value: int) -> int:
        return value if self.maximum is None else min(value, self.maximum)


OPTIONS = {rule.name: rule for rule in (
    # 65464: the largest block one UDP datagram carries; a server may answer a smaller blksize (RFC 2348)
    OptionRule("blksize", 8, 65464, "RFC 2348", clamped=True),
    OptionRule("timeout", 1, 255, "RFC 2349"),
    OptionRule("tsize", 0, None, "RFC 2349"),
    OptionRule("windowsize", 1, 65535, "RFC 7440"),
)}

DEFAULT_BLKSIZE = 512  # RFC 1350
MIN_BLKSIZE = OPTIONS["blksize"].minimum
MAX_BLKSIZE = OPTIONS["blksize"].maximum
MAX_WINDOWSIZE = OPTIONS["windowsize"].maximum

HEADER = struct.Struct("!HH")  # opcode + block number (DATA, ACK) or error code (ERROR)
OPCODE = struct.Struct("!H")  # opcode alone: RRQ, WRQ, OACK, followed by NUL-terminated strings
MAX_ERROR_TEXT = 400  # bytes of an ERROR message we send (a modem logs it; keep it one short line)


class TftpProtocolError(HfcprovError):
    """A datagram that is not valid TFTP, or a transfer the peer aborted."""


# -- packets ------------------------------------------------------------------------------------


@dataclass
class Request:
    """RRQ or WRQ: ``options`` maps each option name as sent to its value text."""

    opcode: int
    filename: str
    mode: str
    options: dict[str, str] = field(default_factory=dict)


@dataclass
class Data:
    block: int
    data: bytes
    opcode: int = DATA


@dataclass
class Ack:
    block: int
    opcode: int = ACK


@dataclass
class Error:
    code: int
    message: str
    opcode: int = ERROR


@dataclass
class OptionAck:
    options: dict[str, str]
    opcode: int = OACK


def parse(datagram: bytes) -> Request | Data | Ack | Error | OptionAck:
    """One datagram as a packet; ``TftpProtocolError`` (what and at which byte) if it is not TFTP."""
    if len(datagram) < 2:
        raise TftpProtocolError(f"malformed TFTP datagram ({len(datagram)} bytes): shorter than an opcode")
    (opcode,) = OPCODE.unpack_from(datagram)
    if opcode in (DATA, ACK, ERROR):
        if len(datagram) < 4:
            raise TftpProtocolError(f"malformed TFTP datagram ({len(datagram)} bytes): "
                                    f"{Opcode(opcode).name} without its 2-byte number")
        number = (datagram[2] << 8) | datagram[3]
        if opcode == DATA:
            return Data(number, bytes(datagram[4:]))
        if opcode == ACK:
            return Ack(number)
        text = bytes(datagram[4:]).split(b"\0", 1)[0]  # a missing final NUL is forgiven
        return Error(number, text.decode("ascii", "replace"))
    if opcode in (RRQ, WRQ):
        strings = _strings(datagram, 2)
        if len(strings) < 2:
            raise TftpProtocolError(f"malformed TFTP datagram ({len(datagram)} bytes): "
                                    f"{Opcode(opcode).name} without a file name and a mode")
        return Request(opcode, strings[0], strings[1].lower(), _pairs(strings[2:], datagram))
    if opcode == OACK:
        return OptionAck(_pairs(_strings(datagram, 2), datagram))
    raise TftpProtocolError(f"malformed TFTP datagram ({len(datagram)} bytes): unknown opcode {opcode}")


def _strings(datagram: bytes, offset: int) -> list[str]:
    """The NUL-terminated ASCII strings from ``offset`` on (RFC 1350: netascii)."""
    body = bytes(datagram[offset:])
    if not body:
        return []
    if not body.endswith(b"\0"):
        start = offset + body.rfind(b"\0") + 1
        raise TftpProtocolError(f"malformed TFTP datagram ({len(datagram)} bytes): "
                                f"the string at byte {start} has no terminating NUL")
    try:
        return body[:-1].decode("ascii").split("\0")
    except UnicodeDecodeError as err:
        raise TftpProtocolError(f"malformed TFTP datagram ({len(datagram)} bytes): "
                                f"byte {offset + err.start} is not ASCII") from None


def _pairs(strings: list[str], datagram: bytes) -> dict[str, str]:
    if len(strings) % 2:
        raise TftpProtocolError(f"malformed TFTP datagram ({len(datagram)} bytes): "
                                f"option {strings[-1]!r} has no value")
    return dict(zip(strings[::2], strings[1::2]))


def encode_data(block: int, payload: bytes) -> bytes:
    """DATA (``block`` wraps at 65,536); the transfer builds one per block sent, so it stays this short."""
    return HEADER.pack(DATA, block & 0xFFFF) + payload


def encode_ack(block: int) -> bytes:
    return HEADER.pack(ACK, block & 0xFFFF)


def encode_error(code: int, message: str = "") -> bytes:
    """ERROR with our own text (why, e.g. "access violation: outside the root"), or RFC 1350's."""
    text = message or ERROR_TEXT.get(code, "error")
    return HEADER.pack(ERROR, code) + text.encode("ascii", "replace")[:MAX_ERROR_TEXT] + b"\0"


def _option_bytes(options: dict) -> bytes:
    return b"".join(str(k).encode("ascii") + b"\0" + str(v).encode("ascii") + b"\0" for k, v in options.items())


def encode_oack(options: dict) -> bytes:
    return OPCODE.pack(OACK) + _option_bytes(options)


def encode_rrq(filename: str, options: dict | None = None, mode: str = "octet", write: bool = False) -> bytes:
    """RRQ (or WRQ with ``write``), options in the order given."""
    return (OPCODE.pack(WRQ if write else RRQ) + filename.encode("ascii") + b"\0" + mode.encode("ascii") + b"\0"
            + _option_bytes(options or {}))


# -- option negotiation (RFC 2347) ----------------------------------------------------------


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
    if not requested:  # most modems ask for nothing: RFC 1350's defaults, no OACK
        return Options(timeout=timeout, oack={})
    opts = Options(timeout=timeout, oack={})
    for raw_name, raw_value in requested.items():
        name = str(raw_name).lower()
        rule = OPTIONS.get(name)
        try:
            value = int(str(raw_value))
        except ValueError:
            continue
        if rule is None or not rule.accepts(value):
            continue
        if name == "blksize":
            opts.blksize = min(rule.clamp(value), max_blksize)
            opts.oack["blksize"] = opts.blksize
        elif name == "timeout":
            opts.timeout = float(value)
            opts.oack["timeout"] = value
        elif name == "tsize" and size is not None:
            opts.oack["tsize"] = size
        elif name == "windowsize":
            opts.windowsize = min(value, max_windowsize)
            opts.oack["windowsize"] = opts.windowsize
    return opts


def netascii(data: bytes) -> bytes:
    """RFC 764 NVT form for ``netascii`` mode: LF -> CR LF, CR -> CR NUL."""
    return data.replace(b"\r", b"\r\0").replace(b"\n", b"\r\n")
