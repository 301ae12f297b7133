"""Per-flow counters a DOCSIS 3.1 / Low Latency modem reports, and their change over an interval.

What operators testing LLD poll, per service flow: packets, octets, policed drops and delays, AQM
drops (docsQosServiceFlowStatsTable), the queueing latency histogram and its maximum
(docsQosSfLatencyStatsTable), packets queue protection sanctioned and the ECN codepoints seen
(docsQosSfCongestionStatsTable). ``read_counters`` takes one snapshot in one table fetch;
``deltas`` turns two snapshots into what happened between them (counter wraps handled, a modem
that rebooted in between reported as such). Used by ``hfcprov snmp stats`` and by a ``kind: modem``
campaign, which stores a snapshot before and after every point.

A modem that serves only some of the tables (a DOCSIS 3.0 modem has no latency or congestion
table) gives the counters it has; a value of the wrong type is a ``CounterError`` naming the
object and what came back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from hfcprov import mib
from hfcprov.errors import HfcprovError
from hfcprov.snmp import oids
from hfcprov.snmp.typecheck import shown as _shown

_COLUMNS = {column: (key, width) for key, (column, width) in oids.FLOW_COUNTERS.items()}
COUNTER_KEYS = tuple(oids.FLOW_COUNTERS)


class CounterError(HfcprovError):
    """A modem's counter is not what its MIB says (type, length, value)."""


@dataclass
class FlowCounters:
    """One flow's counters at one moment: ``counters`` holds the keys of ``oids.FLOW_COUNTERS``
    the modem serves; the histogram's upper bin edges (microseconds) and counts (one more)."""

    sfid: int
    direction: str | None = None
    counters: dict[str, int] = field(default_factory=dict)
    hist_edges_us: tuple[int, ...] = ()
    hist_counts: tuple[int, ...] = ()

    def as_dict(self) -> dict:
        d = {"sfid": self.sfid, "direction": self.direction, **self.counters}
        if self.hist_counts:
            d["latency_histogram"] = {"edges_us": list(self.hist_edges_us), "counts": list(self.hist_counts)}
        return d


@dataclass
class Snapshot:
    """Every flow's counters, with the modem's sysUpTime (ticks) and the local time they were read."""

    uptime_ticks: int | None
    taken: float  # time.monotonic() when the answer came
    flows: dict[int, FlowCounters]
    wall: float = 0.0  # time.time(), for stored records

    def as_dict(self) -> dict:
        return {"uptime_ticks": self.uptime_ticks, "time": round(self.wall, 3),
                "flows": [f.as_dict() for f in sorted(self.flows.values(), key=lambda f: f.sfid)]}


async def read_counters(client, host: str, port: int) -> Snapshot:
    """One snapshot of every flow's counters (one table fetch)."""
    columns = [oids.SF_DIRECTION, *_COLUMNS, oids.LATENCY_BIN_EDGES, oids.LATENCY_BIN_COUNTS]
    scalars, tables = await client.fetch(host, port, [oids.SYS_UPTIME], columns)
    return snapshot(scalars.get(oids.SYS_UPTIME), tables)


def snapshot(uptime, tables: dict[str, dict[str, object]], taken: float | None = None) -> Snapshot:
    """A ``Snapshot`` from fetched columns (row index ifIndex.sfid); ``CounterError`` for a bad value."""
    if uptime is not None and (not _is_int(uptime) or not 0 <= uptime < 2**32):
        raise CounterError(f"sysUpTime.0: {_shown(uptime)} is not TimeTicks")
    flows: dict[int, FlowCounters] = {}

    def flow(column: str, index: str) -> FlowCounters | None:
        parts = index.split(".")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            return None  # not a ifIndex.sfid row: nothing to attribute it to
        sfid = int(parts[1])
        return flows.setdefault(sfid, FlowCounters(sfid))

    for index, value in tables.get(oids.SF_DIRECTION, {}).items():
        f = flow(oids.SF_DIRECTION, index)
        if f is not None:
            if not _is_int(value) or value not in oids.DIRECTION:
                raise CounterError(f"{mib.name_of(oids.SF_DIRECTION + '.' + index)}: {_shown(value)} is not "
                                   "downstream(1) or upstream(2)")
            f.direction = oids.DIRECTION[value]
    for column, (key, width) in _COLUMNS.items():
        limit = 2 ** (width or 32)
        for index, value in tables.get(column, {}).items():
            f = flow(column, index)
            if f is None:
                continue
            if not _is_int(value) or not 0 <= value < limit:
                kind = f"Counter{width}" if width else "Unsigned32"
                raise CounterError(f"{mib.name_of(column + '.' + index)}: {_shown(value)} is not a {kind}")
            f.counters[key] = value
    edges = tables.get(oids.LATENCY_BIN_EDGES, {})
    for index, counts in tables.get(oids.LATENCY_BIN_COUNTS, {}).items():
        f = flow(oids.LATENCY_BIN_COUNTS, index)
        if f is None:
            continue
        f.hist_edges_us = _words(oids.LATENCY_BIN_EDGES, index, edges.get(index, b""))
        f.hist_counts = _words(oids.LATENCY_BIN_COUNTS, index, counts)
        if len(f.hist_counts) != len(f.hist_edges_us) + 1:
            raise CounterError(f"{mib.name_of(oids.LATENCY_BIN_COUNTS + '.' + index)}: {len(f.hist_counts)} bins "
                               f"for {len(f.hist_edges_us)} edges (one more bin than edges expected)")
    return Snapshot(uptime, time.monotonic() if taken is None else taken, flows, wall=time.time())


def _words(column: str, index: str, value) -> tuple[int, ...]:
    if not isinstance(value, bytes) or len(value) % 4:
        raise CounterError(f"{mib.name_of(column + '.' + index)}: {_shown(value)} is not 4-octet words")
    return tuple(int.from_bytes(value[i:i + 4], "big") for i in range(0, len(value), 4))


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class FlowDelta:
    """What one flow did between two snapshots."""

    sfid: int
    direction: str | None
    seconds: float
    counts: dict[str, int]  # counter key -> increase (wraps handled); latency_max_us: the later value
    hist_edges_us: tuple[int, ...] = ()
    hist_counts: tuple[int, ...] = ()

    @property
    def packets_per_s(self) -> float | None:
        return self.counts["packets"] / self.seconds if "packets" in self.counts and self.seconds > 0 else None

    @property
    def bits_per_s(self) -> float | None:
        return self.counts["octets"] * 8 / self.seconds if "octets" in self.counts and self.seconds > 0 else None

    def as_dict(self) -> dict:
        d = {"sfid": self.sfid, "direction": self.direction, "seconds": round(self.seconds, 3), **self.counts,
             "packets_per_s": self.packets_per_s, "bits_per_s": self.bits_per_s}
        if self.hist_counts:
            d["latency_histogram"] = {"edges_us": list(self.hist_edges_us), "counts": list(self.hist_counts)}
        return d


class ModemRebooted(HfcprovError):
    """The modem's sysUpTime went back between two snapshots: its counters started again."""


def deltas(before: Snapshot, after: Snapshot) -> list[FlowDelta]:
    """Per flow present in both snapshots, the increase of each counter (a Counter32/64 that wrapped
    counts from its maximum); ``ModemRebooted`` when sysUpTime went back (the counters restarted)."""
    if before.uptime_ticks is not None and after.uptime_ticks is not None and after.uptime_ticks < before.uptime_ticks:
        raise ModemRebooted(f"sysUpTime went from {before.uptime_ticks} to {after.uptime_ticks} ticks: "
                            "the modem rebooted between the two readings, its counters started again")
    seconds = after.taken - before.taken
    out = []
    for sfid in sorted(set(before.flows) & set(after.flows)):
        a, b = before.flows[sfid], after.flows[sfid]
        counts = {}
        for key in COUNTER_KEYS:
            if key not in a.counters or key not in b.counters:
                continue
            width = oids.FLOW_COUNTERS[key][1]
            counts[key] = b.counters[key] if not width else (b.counters[key] - a.counters[key]) % 2**width
        hist = ()
        if b.hist_counts and len(a.hist_counts) == len(b.hist_counts) and a.hist_edges_us == b.hist_edges_us:
            hist = tuple((y - x) % 2**32 for x, y in zip(a.hist_counts, b.hist_counts))
        out.append(FlowDelta(sfid, b.direction or a.direction, seconds, counts, b.hist_edges_us if hist else (), hist))
    return out
