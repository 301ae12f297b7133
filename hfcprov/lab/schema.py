"""The lab's point and run schema, declared once.

A grid axis is one field of ``Point`` with an ``axis(...)`` declaration: how the
campaign file's value is parsed, its default, its SQL column, its label in a
report, how it is written in a point's key and, for an axis that is not drawn on a
figure's x axis, how a report names it among the traffic variants. The SQL
columns, the CSV columns, the grid parser, ``Point.key`` and the report's labels
are all derived from these declarations, so adding an axis is one field.

A run's headline figures are ``METRICS``: column, SQL type, label and how to read
it from a ``RunResult``; the run table, its insert, the report's rows and the CSV
come from there.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields

from hfcprov.errors import HfcprovError
from hfcprov.queue.inputs import DEFAULT_CONGESTION_CONTROL, DEFAULT_PROFILE, DEFAULT_UPSTREAM_MODEL
from hfcprov.queue.profile import PROFILES, ProfileError, parse_profile
from hfcprov.units import format_bytes, format_duration, format_rate, parse_bytes, parse_link_rate, parse_rtt

class _Required:
    def __repr__(self):
        return "required"


REQUIRED = _Required()  # a key the file must give


def file_key(default, doc: str, example: str, unit: str | None = None):
    """A campaign-file key: its default, what it means, an example (docs/campaign-reference.md)."""
    meta = {"doc": doc, "example": example, "unit": unit}
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    if default is REQUIRED:
        return field(metadata={**meta, "required": True})
    return field(default=default, metadata=meta)

CONGESTION_CONTROLS = ("reno", "newreno", "sack", "cubic", "fast", "prague")
# The simulator's link model (hfcprov.sim Scenario.mac): a token bucket, or the DOCSIS
# request-grant upstream MAC (issue 7's calibrated model).
MACS = ("tokenbucket", "docsis")
# The upstream queue the simulator gives the flow (issue 20): drop-tail, DOCSIS-PIE, Low Latency
# DOCSIS, or ``file``: what the rendered config file's AQM TLVs say (hfcprov.queue.select)
AQMS = ("none", "docsis-pie", "lld", "file")


@dataclass(frozen=True)
class Axis:
    parse: Callable  # campaign value -> plain value; raises ValueError (or UnitError) saying why
    default: object  # REQUIRED, None (the template decides) or a value
    sql: str  # column type in the point table
    label: str  # words for a reader
    short: str  # name in Point.key
    show: Callable  # plain value -> text (Point.key, report labels)
    # how a report names this axis among a panel's traffic variants; None: a figure axis (rate, rtt, buffer)
    variant: Callable | None = None
    doc: str = ""  # one line for docs/campaign-reference.md
    example: str = ""
    unit: str | None = None
    missing: object = None  # the value of a store made before this axis existed (None: ``default``)


def _key_text(a: Axis, value) -> str:
    """How a point's key writes an axis value: as the report shows it ("40 ms") when that reads back
    as the same number, else exactly in the axis's base unit ("1.001 s"): two points must never share
    a key because the display rounds (1000 ms and 1001 ms both show as "1 s")."""
    text = a.show(value)
    if not isinstance(value, float):
        return text
    try:
        back = a.parse(text)
    except (ValueError, TypeError, HfcprovError):
        back = None
    if back is not None and math.isclose(back, value, rel_tol=1e-12, abs_tol=0.0):
        return text
    return f"{value:.12g} {a.unit}" if a.unit else f"{value:.12g}"


def axis(parse, default, sql, label, short, show, variant=None, doc="", example="", unit=None, missing=None):
    return field(metadata={"axis": Axis(parse, default, sql, label, short, show, variant, doc, example, unit,
                                        missing)})


def _positive(parser):
    def parse(v):
        x = parser(v)
        if not x:
            raise ValueError("must be greater than 0")  # a zero rate or buffer tests nothing
        return x
    return parse


def _whole(v) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"expected a whole number >= 1, got {v!r}")
    return v


def _choice(choices, what):
    def parse(v):
        s = str(v).lower()
        if s not in choices:
            from hfcprov.suggest import did_you_mean

            raise ValueError(f"unknown {what} {v!r} (known: {', '.join(choices)}){did_you_mean(s, choices)}")
        return s
    return parse


def _profile(v) -> str:
    """A modem profile as the campaign names it (``docsis3.1``, ``docsis3.1:map_interval=1ms``), checked."""
    try:
        return parse_profile(str(v)).name
    except ProfileError as err:
        raise ValueError(str(err)) from None


def _fraction(v) -> float:
    try:
        if isinstance(v, str) and v.strip().endswith("%"):
            x = float(v.strip()[:-1]) / 100
        elif isinstance(v, bool):
            raise ValueError
        else:
            x = float(v)
    except ValueError:
        raise ValueError(f"bad loss {v!r}: expected a fraction (0.01) or a percentage (1%)") from None
    if not 0 <= x < 1:
        raise ValueError(f"bad loss {v!r}: must be in [0, 1)")
    return x


def _plural_flows(n) -> str:
    return f"{n} flow{'s' if n != 1 else ''}"


@dataclass(frozen=True)
class Point:
    """One grid point and repetition: the unit that is run, stored and resumed.

    The axes are in expansion order (the last varies fastest), so a report's
    series come out grouped by rate.
    """

    index: int
    upstream_rate: float = axis(parse_link_rate, REQUIRED, "REAL NOT NULL", "upstream rate", "us",
                                format_rate, doc="the upstream service flow's MaxRateSustained (TLV 24.8)",
                                example="[1M, 2M, 5M, 10M]", unit="b/s")
    downstream_rate: float | None = axis(parse_link_rate, None, "REAL", "downstream rate", "ds",
                                         lambda v: format_rate(v) if v else "-",
                                         lambda v: f"{format_rate(v)} down",
                                         doc="the downstream flow's MaxRateSustained (TLV 25.8); absent: the "
                                             "template's", example="50M", unit="b/s")
    rtt: float = axis(parse_rtt, 0.04, "REAL NOT NULL", "added RTT", "rtt", format_duration,
                      doc="round-trip delay added beyond the modem (base RTT)", example="[40ms, 100ms]", unit="s")
    buffer: int = axis(_positive(parse_bytes), REQUIRED, "INTEGER NOT NULL", "TargetBuffer", "buf",
                       format_bytes, doc="the upstream flow's TargetBuffer (TLV 24.35.2); the modem's queue is "
                                         "hfcprov.model's queue_size of it", example="[16KiB, 64KiB, 256KiB]",
                       unit="bytes")
    flows: int = axis(_whole, 1, "INTEGER NOT NULL", "upstream TCP flows", "flows", str, _plural_flows,
                      doc="parallel long-lived upstream TCP flows", example="[1, 10]")
    congestion_control: str = axis(_choice(CONGESTION_CONTROLS, "congestion control"), DEFAULT_CONGESTION_CONTROL,
                                   "TEXT NOT NULL",
                                   "TCP congestion control", "cc", str, str,
                                   doc="TCP congestion control: " + " | ".join(CONGESTION_CONTROLS) +
                                       " (the kernel's reno stands for newreno and sack)", example="[reno, cubic]",
                                   missing="reno")
    loss: float = axis(_fraction, 0.0, "REAL NOT NULL", "plant loss", "loss", lambda v: f"{v:g}",
                       lambda v: f"loss {v:.2%}", doc="random plant packet loss, a fraction or a percentage",
                       example="1%")
    mac: str = axis(_choice(MACS, "mac"), DEFAULT_UPSTREAM_MODEL, "TEXT NOT NULL DEFAULT 'tokenbucket'",
                    "simulator link model", "mac", str, lambda v: f"{v} MAC",
                    doc="the simulator's upstream model: tokenbucket (a shaper) | docsis (the request-grant MAC of "
                        "the point's profile); measured points are unaffected", example="[tokenbucket, docsis]",
                    missing="tokenbucket")
    profile: str = axis(_profile, DEFAULT_PROFILE, "TEXT NOT NULL DEFAULT 'docsis2.0'", "modem profile", "profile",
                        str, str, doc="the modem's DOCSIS version and upstream channels (hfcprov.queue.profile): "
                        + " | ".join(PROFILES) + ", overrides after a colon (docsis3.1:map_interval=1ms); it decides "
                        "the simulator's request-grant MAC, the AQM a file's flow runs (aqm: file) and the advice",
                        example="[docsis3.1, 'docsis3.1:map_interval=1ms', docsis3.0-4ch]", missing="docsis2.0")
    aqm: str = axis(_choice(AQMS, "aqm"), "file", "TEXT NOT NULL DEFAULT 'none'", "upstream AQM", "aqm", str,
                    lambda v: {"none": "drop-tail", "file": "the modem's AQM"}.get(v, v),
                    doc="the upstream queue: " + " | ".join(AQMS) + " (none = drop-tail; file = what the profile's "
                        "modem runs for the rendered file: DOCSIS-PIE on DOCSIS 3.1 unless 24.40 / TLV 76 turn it off, "
                        "drop-tail on 2.0/3.0, a Low Latency aggregate's dual queue; lld = the file's Low Latency "
                        "aggregate service flow, TLV 70: the template rendered with aqm lld, or the shipped "
                        "lld-100x10 without a template; needs a DOCSIS 3.1 profile)", example="[none, docsis-pie, lld]",
                    missing="none")
    far_rtt: float | None = axis(parse_rtt, None, "REAL", "far server RTT", "far",
                                 lambda v: format_duration(v) if v else "-",
                                 lambda v: f"far server {format_duration(v)}" if v else "one server",
                                 doc="base RTT of a second, farther server behind the same tier: flows 2, 4, ... "
                                     "go there, the others to the near one at rtt (which the probes measure); "
                                     "the run's far_share is their share of the goodput. Simulator only",
                                 example="[200ms, 300ms]", unit="s")
    rep: int = 0  # repetition, 0-based
    seed: int = 1

    @property
    def key(self) -> str:
        """A readable identity that does not depend on the order of the grid."""
        parts = [f"{a.short}={_key_text(a, getattr(self, name))}" for name, a in AXES.items()]
        return " ".join(parts + [f"rep={self.rep}"])

    @property
    def tier(self) -> str:
        """The service tier a point belongs to: what an operator sells (the rates)."""
        up = format_rate(self.upstream_rate)
        return f"{up} up" if not self.downstream_rate else f"{format_rate(self.downstream_rate)} down / {up} up"

    def template_vars(self) -> dict:
        """Variables a tier template sees (plain numbers, names as in the grid)."""
        d = asdict(self)
        d["target_buffer"] = self.buffer
        d["rtt_ms"] = self.rtt * 1e3
        # the names the shipped tier templates (templates/*.j2) take as per-modem overrides
        d["us_rate"], d["us_buffer"] = self.upstream_rate, self.buffer
        if self.downstream_rate:
            d["ds_rate"] = self.downstream_rate
        else:
            del d["downstream_rate"]  # a template's default applies, not an explicit None
        return d

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Point:
        return cls(**d)


AXES: dict[str, Axis] = {f.name: f.metadata["axis"] for f in fields(Point) if "axis" in f.metadata}
# what the point table stores besides the axes: its place in the grid and its repetition
_EXTRA_COLS = {"idx": "INTEGER NOT NULL UNIQUE", "key": "TEXT NOT NULL UNIQUE", "tier": "TEXT NOT NULL"}
POINT_COLUMNS = (*_EXTRA_COLS, *AXES, "rep", "seed")


def point_table_columns() -> str:
    """The point table's grid columns as SQL (``name TYPE, ...``)."""
    cols = [f"{n} {t}" for n, t in _EXTRA_COLS.items()] + [f"{n} {a.sql}" for n, a in AXES.items()]
    return ",\n    ".join(cols + ["rep INTEGER NOT NULL", "seed INTEGER NOT NULL"])


def point_values(p: Point) -> tuple:
    """A point as the values of ``POINT_COLUMNS``."""
    return (p.index, p.key, p.tier, *(getattr(p, n) for n in AXES), p.rep, p.seed)


def point_from_row(row) -> Point:
    """A point from a point-table row (a mapping); axes a store predates take their default."""
    keys = set(row.keys())
    values = {n: row[n] if n in keys else (a.default if a.missing is None else a.missing) for n, a in AXES.items()}
    return Point(index=row["idx"], rep=row["rep"], seed=row["seed"], **values)


def variant_label(row, varying: set[str]) -> str:
    """How a report names a point's traffic variant: the varying non-figure axes, e.g. ``10 flows, cubic``."""
    return ", ".join(a.variant(row[n]) for n, a in AXES.items() if a.variant and n in varying)


VARIANT_AXES = tuple(n for n, a in AXES.items() if a.variant)


@dataclass(frozen=True)
class Metric:
    name: str
    sql: str
    label: str
    get: Callable  # RunResult -> value


METRICS = (
    Metric("duration", "REAL NOT NULL", "seconds measured", lambda r: r.duration),
    Metric("goodput_bps", "REAL NOT NULL", "goodput (b/s)", lambda r: r.goodput_bps),
    Metric("shaped_rate_bps", "REAL", "shaped rate (b/s)", lambda r: r.shaped_rate_bps),
    Metric("utilization", "REAL", "utilization", lambda r: r.utilization),
    Metric("latency_idle_p50", "REAL", "idle RTT p50 (s)", lambda r: r.latency_idle.p50),
    Metric("latency_loaded_mean", "REAL", "loaded RTT mean (s)", lambda r: r.latency_loaded.mean),
    Metric("latency_loaded_p50", "REAL", "loaded RTT p50 (s)", lambda r: r.latency_loaded.p50),
    Metric("latency_loaded_p90", "REAL", "loaded RTT p90 (s)", lambda r: r.latency_loaded.p90),
    Metric("latency_loaded_p99", "REAL", "loaded RTT p99 (s)", lambda r: r.latency_loaded.p99),
    Metric("probe_loss", "REAL", "probe loss", lambda r: r.latency_loaded.loss),
    Metric("packet_loss", "REAL", "packet loss", lambda r: r.packet_loss),
    Metric("mos", "REAL", "VoIP MOS", lambda r: r.mos),
    Metric("model", "TEXT", "model behind the figures", lambda r: r.extra.get("model")),
    Metric("far_share", "REAL", "far server's share of goodput", lambda r: r.extra.get("far_share")),
)
METRIC_NAMES = tuple(m.name for m in METRICS)


def run_table_columns() -> str:
    return ",\n    ".join(f"{m.name} {m.sql}" for m in METRICS)


def metric_values(r) -> tuple:
    return tuple(m.get(r) for m in METRICS)


CSV_COLUMNS = [*POINT_COLUMNS, "state", "error", "source", *METRIC_NAMES]
