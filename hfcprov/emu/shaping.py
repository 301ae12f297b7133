"""A service flow as the emulated modem honours it: a token bucket feeding a byte-limited drop-tail queue.

The queue size is the model's rule (``hfcprov.model.BufferControl.queue_size``:
MULPI's Buffer Control, the same one the simulator uses). The flow becomes one ``htb`` class (its
token bucket) whose leaf is a ``bfifo`` of the chosen size in bytes, so the
queue delay under load is about buffer / rate as on a real modem. How the
classes and classifiers of all flows fit together: ``topology.Lab.apply`` and
docs/emu.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from hfcprov.errors import HfcprovError
from hfcprov.model import DEFAULT_QUEUE, LARGEST_QUEUE, ServiceFlow

# One Ethernet frame as tbf sees it on a veth (1500 MTU + 14 header): the bucket
# must hold at least this or tbf drops every full-size packet.
FRAME = 1514
# "No rate limit" (DOCSIS rate 0): faster than anything a veth in a namespace carries here.
NO_LIMIT = "10gbit"


class FlowRejected(HfcprovError):
    """The modem cannot honour a service flow; the message is the reason it logs."""


@dataclass(frozen=True)
class ModemModel:
    """What the emulated modem supports; a real modem's datasheet figures."""

    max_buffer: int = LARGEST_QUEUE  # largest queue it can give one flow, bytes
    default_buffer: int = DEFAULT_QUEUE  # its queue when the file has no TargetBuffer
    sys_descr: str = "hfcprov emulated cable modem <<HW_REV: 1.0; VENDOR: hfcprov; BOOTR: 1.0; SW_REV: 0.1; MODEL: EMU-1>>"


@dataclass(frozen=True)
class QueuePlan:
    """The queue one service flow gets: what tc is told and SNMP reports."""

    direction: str
    rate_bps: float | None  # None: no rate limit (DOCSIS rate 0)
    burst: int  # bytes
    peak_bps: float | None
    buffer: int  # bytes: the drop-tail limit actually provided
    flow: ServiceFlow

    def tc_args(self, dev: str, classid: str = "1:1", handle: str = "10:") -> list[list[str]]:
        """The tc commands giving this flow class ``classid`` of the htb root of ``dev``.

        The htb class is the flow's token bucket: rate = ceil = Max Sustained Rate, burst =
        cburst = Max Traffic Burst (no parent to borrow from, so it never exceeds its rate).
        Its leaf is the flow's drop-tail queue: a ``bfifo`` of ``buffer`` bytes, or, when the
        flow has a Peak Rate, a ``tbf`` at the peak rate with a one-frame bucket and the same
        byte limit, so a burst leaves no faster than the peak. Rate 0 (no limit) gets the line.
        """
        rate = f"{int(self.rate_bps)}bit" if self.rate_bps is not None else NO_LIMIT
        klass = ["tc", "class", "replace", "dev", dev, "parent", "1:", "classid", classid, "htb",
                 "rate", rate, "ceil", rate, "burst", str(self.burst), "cburst", str(self.burst),
                 "quantum", str(FRAME)]
        leaf = ["tc", "qdisc", "replace", "dev", dev, "parent", classid, "handle", handle]
        if self.peak_bps:
            leaf += ["tbf", "rate", f"{int(self.peak_bps)}bit", "burst", str(FRAME + 64), "limit", str(self.buffer)]
        else:
            leaf += ["bfifo", "limit", str(self.buffer)]
        return [klass, leaf]


def plan(flow: ServiceFlow, model: ModemModel | None = None) -> QueuePlan:
    """The queue the modem gives ``flow``, or ``FlowRejected`` saying why not."""
    model = model or ModemModel()
    reason = flow.buffer.rejection(model.max_buffer)
    if reason:
        raise FlowRejected(f"{flow.name}: {reason}")
    # A queue smaller than one frame would drop every full-size packet (tc's floor, not MULPI's).
    size = max(flow.queue_size(model.default_buffer, model.max_buffer), FRAME)
    burst = max(flow.burst, FRAME + 64)
    rate = flow.rate
    peak = flow.peak_rate if flow.peak_rate and rate and flow.peak_rate > rate else None
    return QueuePlan(direction=flow.direction, rate_bps=rate, burst=burst, peak_bps=peak, buffer=size, flow=flow)
