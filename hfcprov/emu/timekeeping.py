"""Did the emulated plant keep time? Its processes' priorities, the delay line's account, the verdict.

The TUN delay line (``hfcprov.emu.delayline``) is the wire: every packet it holds has a due
time (arrival + one-way delay), and every packet its AQM stage queues may leave once the
flow's token bucket allows. On a busy machine the process may wake late. It notes, for each
packet it writes, how late it was against its due time, and each stage notes the capacity it
lost while packets waited (tokens beyond the bucket's burst, accrued while the queue was not
empty, are sending time that went by unused). A measurement asks for these counters before and
after (``ask``, over a UNIX datagram socket the delay line answers) and ``verdict`` says whether
the plant kept time in between: a point measured on a plant that did not is an error, not a
low figure.

The plant's userspace processes run SCHED_FIFO (root may): the delay line at ``WIRE_PRIORITY``,
the emulated hosts (the probe on the CPE side, the responder on the server side) at
``HOST_PRIORITY``, below the wire. The hosts matter as much as the wire: a receiver preempted
while it holds its socket sends no ACKs meanwhile, then a burst of them, and the sender's burst
overflows a small queue early: 10 Mb/s, 16 KiB, 100 ms, Reno, two CPU-bound processes per core
beside it, hosts at normal priority 2.8-7.4 Mb/s over four runs, at SCHED_FIFO 7.449-7.464
(``bench/emu_timekeeping.py``; docs/emu.md). Those bursts are invisible to the delay line's
account; the priority prevents them.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import tempfile
from collections.abc import Callable

from hfcprov.errors import HfcprovError

WIRE_PRIORITY = 10  # SCHED_FIFO priority of the delay line (and its AQM stage): the wire
HOST_PRIORITY = 5  # ... of the emulated hosts' processes: below the wire, above every normal process
LATE = 0.001  # s: a packet written later than this after its due time was late
# a measurement fails when more than this share of its packets were late: the runs that kept time
# here (figures within 3 % of the simulator) stayed under 0.6 %, those that did not (the kernel busy
# for others) were at 12-40 %; between the two, a figure 9.7 % off passed a 2 % limit
MAX_LATE_SHARE = 0.01
MAX_LOST_SHARE = 0.01  # ... or when a stage lost more than this share of its sending time while backlogged
ATTEMPTS = 3  # measurements tried before a plant that keeps falling behind fails the point


class FellBehind(HfcprovError):
    """The emulated plant could not keep time during a measurement: the machine was too busy for it."""


def raise_priority(priority: int, pid: int = 0) -> str:
    """Run ``pid`` (0: the calling thread) SCHED_FIFO at ``priority``; returns the scheduling it got.

    Threads it starts afterwards inherit the policy. Refused (not root, no CAP_SYS_NICE): it keeps
    normal scheduling and the answer says so; the timekeeping account then shows what that cost."""
    try:
        os.sched_setscheduler(pid, os.SCHED_FIFO, os.sched_param(priority))
        return f"fifo {priority}"
    except (OSError, AttributeError) as err:
        return f"normal (SCHED_FIFO refused: {getattr(err, 'strerror', None) or err})"


@contextlib.contextmanager
def host_priority(priority: int = HOST_PRIORITY):
    """The calling thread (and the threads it starts meanwhile) at ``priority``, then back as it was:
    for a measurement run in-process, as an emulated host."""
    try:
        before = os.sched_getscheduler(0), os.sched_getparam(0)
    except OSError:
        before = None
    got = raise_priority(priority)
    try:
        yield got
    finally:
        if before is not None and got.startswith("fifo"):
            with contextlib.suppress(OSError):
                os.sched_setscheduler(0, before[0], before[1])


class Timekeeping:
    """The delay line's running account: packets written, how many late, the worst lateness."""

    def __init__(self, scheduling: str = "normal") -> None:
        self.scheduling = scheduling
        self.packets = 0
        self.late = 0
        self.late_seconds = 0.0  # summed over the late packets
        self.worst = 0.0
        self.refused = 0  # packets the kernel refused to take back (dropped)

    def written(self, lateness: float) -> None:
        self.packets += 1
        if lateness > LATE:
            self.late += 1
            self.late_seconds += lateness
            if lateness > self.worst:
                self.worst = lateness

    def as_dict(self, stages=()) -> dict:
        """The counters (running totals), with the worst lateness since the previous answer."""
        d = {"scheduling": self.scheduling, "packets": self.packets, "late": self.late,
             "late_seconds": self.late_seconds, "worst_late_s": self.worst, "refused": self.refused,
             "stages": [s.timekeeping() for s in stages]}
        self.worst = 0.0
        return d


def ask(path: str | os.PathLike, timeout: float = 5.0) -> dict:
    """The counters of the delay line whose control socket is ``path`` (raises OSError if it does not answer)."""
    with tempfile.TemporaryDirectory(prefix="hfemu-tk-") as tmp, \
            socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.bind(os.path.join(tmp, "c"))  # a datagram reply needs an address to come back to
        s.settimeout(timeout)
        s.sendto(b"timekeeping", os.fspath(path))
        return json.loads(s.recv(65536))


def verdict(before: dict, after: dict) -> dict:
    """What happened between two ``ask`` answers of one delay line, and whether it kept time.

    Returns the differences (packets, late, the worst lateness in between, per stage the
    backlogged seconds and the share of sending time lost) with ``ok`` and, when not,
    ``why``: one line per way it fell behind.
    """
    packets = after["packets"] - before["packets"]
    late = after["late"] - before["late"]
    out = {"scheduling": after["scheduling"], "packets": packets, "late": late,
           "late_share": late / packets if packets else 0.0,
           "mean_late_s": (after["late_seconds"] - before["late_seconds"]) / late if late else 0.0,
           "worst_late_s": after["worst_late_s"], "refused": after["refused"] - before["refused"], "stages": []}
    why = []
    if packets and out["late_share"] > MAX_LATE_SHARE:
        why.append(f"{late} of {packets} packets left the delay line more than {LATE * 1e3:g} ms late "
                   f"(mean {out['mean_late_s'] * 1e3:.1f} ms, worst {after['worst_late_s'] * 1e3:.1f} ms)")
    for b, a in zip(before["stages"], after["stages"]):
        busy = a["backlogged_s"] - b["backlogged_s"]
        lost = a["lost_bytes"] - b["lost_bytes"]
        share = lost / (busy * a["rate_bps"] / 8) if busy > 0 else 0.0
        out["stages"].append({"flow": a["flow"], "backlogged_s": busy, "lost_bytes": lost, "lost_share": share})
        if share > MAX_LOST_SHARE:
            why.append(f"the AQM stage of {a['flow']} lost {share:.1%} of its sending time to late wake-ups")
    out["ok"] = not why
    if why:
        out["why"] = why
    return out


def in_time(account: Callable[[], dict | None], measure_once: Callable[[], object], attempts: int = ATTEMPTS,
            plant: str = "the emulated plant"):
    """``measure_once()`` between two of ``account()``'s answers, as often as needed for one during which
    the plant kept time, at most ``attempts``; returns (its result, its verdict with ``attempts``).

    A measurement the plant fell behind in is not a figure: it is thrown away and taken again (a busy
    moment passes), and after ``attempts`` of them ``FellBehind`` says why. Without an account (no
    delay line: netem) the first result is returned with the verdict None."""
    for attempt in range(1, attempts + 1):
        before = account()
        result = measure_once()
        if before is None:
            return result, None
        kept = {**verdict(before, account()), "attempts": attempt}
        if kept["ok"]:
            return result, kept
    raise FellBehind(f"{plant} could not keep time in {attempts} measurement{'s' if attempts > 1 else ''} "
                     f"(the machine is too busy for it): {'; '.join(kept['why'])}")
