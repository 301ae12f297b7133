"""Quantities as engineers write them, parsed once at the edge into plain numbers.

- rates   -> bits per second (float):  ``5M``, ``5Mbps``, ``5 Mb/s``, ``1.5G``, ``500k``, ``5000000``
- sizes   -> bytes (int):              ``64K``, ``64KB``, ``64KiB``, ``1.5M``, ``65536``
- times   -> seconds (float):          ``40ms``, ``0.04s``, ``500us``, ``2s``

Rates use decimal prefixes (k = 1000) as line rates do; byte sizes use binary
prefixes (K = KB = KiB = 1024) as buffer sizes are quoted in the DOCSIS papers
("16 KiB", "64 KiB") and by ``tc``. A plain number is taken in the base unit for
rates and sizes; a time written without its unit is refused with a hint
(``--rtt 40`` -> "did you mean 40ms?"): engineers say "40" for 40 ms, the base
unit would make it 40 s. Python numbers passed by library code are seconds.

Where a value is surely a mistake the edge says so: ``parse_rtt`` refuses a
round-trip time over 10 s, ``parse_link_rate`` a rate under 1 kb/s, and
``parse_host_port`` a port outside 1..65535.
"""

from __future__ import annotations

import re

from hfcprov.errors import UnitError

_NUM = r"(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE](?P<exp>[+-]?[0-9]+))?"

_RATE_PREFIX = {"": 1, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "g": 1e9, "G": 1e9, "t": 1e12, "T": 1e12}
_RATE_RE = re.compile(rf"^\s*{_NUM}\s*(?P<prefix>[kKmMgGtT]?)(?P<unit>bps|bit/s|bits/s|b/s|bit|b)?\s*$")

_SIZE_PREFIX = {"": 1, "k": 1024, "K": 1024, "m": 1024**2, "M": 1024**2, "g": 1024**3, "G": 1024**3}
_SIZE_RE = re.compile(rf"^\s*{_NUM}\s*(?P<prefix>[kKmMgG]?)(?P<unit>iB|B|bytes|byte)?\s*$")

_TIME_SCALE = {"": 1.0, "s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "min": 60.0, "m": 60.0}
_TIME_RE = re.compile(rf"^\s*{_NUM}\s*(?P<unit>ms|us|µs|ns|sec|s|min|m)?\s*$")


def _number(m: re.Match) -> float:
    # one float() call: a huge exponent becomes inf (rejected below), not an OverflowError
    return float(f"{m.group('num')}e{m.group('exp') or 0}")


def _float(x: int | float, what: str) -> float:
    try:
        return float(x)
    except OverflowError:
        raise UnitError(f"bad {what} {x!r}: must be a finite number >= 0") from None


def parse_rate(text: str | int | float) -> float:
    """``'5M'`` -> ``5_000_000.0`` bits/s."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return _non_negative(_float(text, "rate"), text, "rate")
    m = _RATE_RE.match(str(text))
    if not m:
        raise UnitError(f"bad rate {text!r}: expected e.g. 5M, 5Mbps, 500k or 5000000 (bits/s)")
    return _non_negative(_number(m) * _RATE_PREFIX[m.group("prefix")], text, "rate")


def parse_bytes(text: str | int | float) -> int:
    """``'64KiB'`` -> ``65536`` bytes. The result must be a whole number of bytes."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = _float(text, "size")
    else:
        m = _SIZE_RE.match(str(text))
        if not m:
            raise UnitError(f"bad size {text!r}: expected e.g. 64K, 64KiB, 1.5M or 65536 (bytes)")
        value = _number(m) * _SIZE_PREFIX[m.group("prefix")]
    _non_negative(value, text, "size")  # before int(): int(inf) would raise OverflowError
    if value != int(value):
        raise UnitError(f"bad size {text!r}: not a whole number of bytes")
    return int(value)


def size_unit(text: str | int | float) -> tuple[str, int]:
    """The unit a size was typed in and how many bytes it counts: ``'10KB'`` -> ``('KB', 1024)``,
    ``'64K'`` -> ``('KiB', 1024)``, ``'1500'`` -> ``('bytes', 1)``; so an answer can be printed in the
    user's own unit, counted the way their input was read."""
    m = _SIZE_RE.match(str(text))
    if not m or not m.group("prefix"):
        return "bytes", 1
    prefix = m.group("prefix").upper()
    unit = m.group("unit") if m.group("unit") in ("iB", "B") else "iB"
    return prefix + unit, _SIZE_PREFIX[prefix]


def parse_duration(text: str | int | float) -> float:
    """``'40ms'`` -> ``0.04`` seconds. Text needs its unit (``'0'`` excepted); a Python number is seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return _non_negative(_float(text, "duration"), text, "duration")
    m = _TIME_RE.match(str(text))
    if not m:
        raise UnitError(f"bad duration {text!r}: expected e.g. 40ms, 0.5s, 500us or 2min")
    value = _non_negative(_number(m) * _TIME_SCALE[m.group("unit") or ""], text, "duration")
    if not m.group("unit") and value != 0:
        n = str(text).strip()
        raise UnitError(f"bad duration {text!r}: a time needs its unit: did you mean {n}ms? (or {n}s)")
    return value


def as_written(value):
    """A value from a YAML/JSON file as its text, so the text rules apply: ``rtt: 30`` (a YAML
    number) is refused like ``--rtt 30`` rather than taken as 30 seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


MAX_RTT = 10.0  # s: a round-trip time beyond this is a unit slip (40 for 40ms), not a path
MIN_LINK_RATE = 1000.0  # bits/s: no service flow is slower than 1 kb/s; 5 meant 5M


def parse_rtt(text: str | int | float) -> float:
    """A round-trip time in seconds; over 10 s is refused as surely a mistake."""
    value = parse_duration(text)
    if value > MAX_RTT:
        raise UnitError(f"bad RTT {text!r}: {format_duration(value)} is not a plausible round-trip time "
                        f"(over {MAX_RTT:g} s); did you mean {_digits(text)}ms?")
    return value


def parse_link_rate(text: str | int | float) -> float:
    """A service-flow or link rate in bits/s; under 1 kb/s is refused as surely a mistake."""
    value = parse_rate(text)
    if value < MIN_LINK_RATE:
        hint = f"; did you mean {_digits(text)}M?" if value else ""
        raise UnitError(f"bad rate {text!r}: {format_rate(value)} is not a plausible link rate (under 1 kb/s){hint}")
    return value


def _digits(text) -> str:
    m = re.match(rf"\s*{_NUM}", str(text))
    return m.group(0).strip() if m else str(text)


def parse_port(text: str | int, *, any_port: bool = False) -> int:
    """A TCP/UDP port, 1..65535 (0 too with ``any_port``: a listener that lets the kernel choose)."""
    low = 0 if any_port else 1
    try:
        port = int(str(text).strip())
    except ValueError:
        raise UnitError(f"bad port {text!r}: expected a number {low}..65535") from None
    if not low <= port <= 65535:
        raise UnitError(f"bad port {text!r}: out of range {low}..65535")
    return port


def parse_host_port(text: str, default_port: int, *, default_host: str = "", any_port: bool = False) -> tuple[str, int]:
    """``'host:port'``, ``'host'`` or ``'[v6]:port'`` -> (host, port), the port checked by ``parse_port``."""
    text = str(text).strip()
    if text.startswith("["):  # [2001:db8::1]:69
        host, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise UnitError(f"bad address {text!r}: expected [IPv6]:PORT")
        port = rest[1:]
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:  # a name, IPv4 or bare IPv6 address without a port
        host, port = text, ""
    if not port:
        return host or default_host, default_port
    try:
        return host or default_host, parse_port(port, any_port=any_port)
    except UnitError as err:
        raise UnitError(f"bad address {text!r}: {str(err).split(': ', 1)[1]}") from None


def _non_negative(value: float, text, what: str) -> float:
    if value < 0 or value != value or value == float("inf"):
        raise UnitError(f"bad {what} {text!r}: must be a finite number >= 0")
    return value


def format_rate(bps: float) -> str:
    """``5e6`` -> ``'5 Mb/s'``."""
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if bps >= scale:
            return f"{bps / scale:g} {prefix}b/s"
    return f"{bps:g} b/s"


def format_bytes(n: float) -> str:
    """``65536`` -> ``'64 KiB'``; exact byte counts that are not a round multiple stay in bytes."""
    for scale, prefix in ((1024**3, "Gi"), (1024**2, "Mi"), (1024, "Ki")):
        if n >= scale and n % (scale // 16 or 1) == 0:
            # a multiple of 1/16 has at most 4 decimals; :g would round 111.3125 to 111.312
            return f"{n / scale:.4f}".rstrip("0").rstrip(".") + f" {prefix}B"
    return f"{int(n)} B"


def format_duration(seconds: float) -> str:
    """``0.04`` -> ``'40 ms'``."""
    if seconds == 0:
        return "0 s"
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"
