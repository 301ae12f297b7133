"""What a buffer does to a tier, predicted: latency under load and TCP utilization per size.

The analytic model (``analytic``) is the sizing rule's own arithmetic per size: what the
request-grant MAC and DOCSIS-PIE hold first, then the senders' sawtooth (so its first size keeping
95% is the rule's need). ``predict`` / ``predict_aqm`` are the textbook sawtooth of synchronised
Reno flows over a drop-tail buffer, or over the queue PIE holds (RFC 8034). The simulator's experiment
(``hfcprov.sim.upload.SimModel``) answers the same question by simulation; both are a *model*:
a callable taking ``(SizingInputs, buffer)`` cells and returning one ``Prediction`` each, so
``buffer table`` and ``size_buffer`` run either without knowing which. A model with a true
``measures`` attribute (the simulator) is one the sizing policy chooses from, as a campaign
chooses from its points; the analytic one only illustrates the rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hfcprov.queue.inputs import SizingInputs, check_path

# TCP segment on the wire (MSS 1460 + 40 bytes of TCP/IP header): the packet unit of the model.
PACKET = 1500
# Packet granularity: a loss is seen a round trip after the queue overflowed (the window still grows
# meanwhile) and a drop-tail queue holds whole packets. On the simulator's token-bucket link, CUBIC
# needs the fluid share below plus this many full packets at every White et al. tier (docs/sizing.md).
SLACK_PACKETS = 3


@dataclass(frozen=True)
class Prediction:
    """One cell of ``buffer table``: what a flow of ``rate`` sees with ``buffer`` bytes at ``rtt``."""

    rate: float  # bits/s
    buffer: int  # bytes
    rtt: float  # seconds (base round trip, without queueing)
    flows: int
    latency_under_load: float  # seconds a packet waits behind a full buffer (buffer / rate)
    utilization: float  # 0..1 of rate that the TCP flows achieve
    model: str = "analytic"


# (tier, buffer size) -> its prediction, for a list of cells at once (a simulator runs them in parallel)
Model = Callable[[Sequence[tuple[SizingInputs, int]]], list[Prediction]]


def latency_under_load(buffer: int, rate: float) -> float:
    """Seconds to drain a full buffer at the flow's rate: the delay a VoIP packet sees behind a TCP upload."""
    return buffer * 8 / rate


def bdp_bytes(rate: float, rtt: float) -> float:
    return rate * rtt / 8


def reno_utilization(rate: float, buffer: int, rtt: float, flows: int = 1) -> float:
    """Long-run utilization of ``flows`` synchronised TCP Reno flows through a drop-tail buffer.

    The window (in packets, summed over flows) climbs one packet per flow per round
    from Wmax/2 to Wmax = BDP + buffer, then halves. Below the BDP a round lasts one
    base RTT and delivers W packets; above it the link is full. With no buffer this
    gives the textbook 3/4; with buffer >= BDP, 1. It ignores the DOCSIS request-grant
    delay, so it is an upper bound on what White et al. measured.
    """
    check_path(rate, rtt, flows)
    pipe = bdp_bytes(rate, rtt) / PACKET  # P, packets in flight that fill the link
    if pipe <= 0:
        return 1.0
    queue = buffer / PACKET
    w_max = pipe + queue
    # n synchronised flows halve together; desynchronised ones less so: the aggregate
    # drops by 1/(2n) on a loss, which is why more flows need less buffer.
    w_low = w_max * (1 - 1 / (2 * flows))
    if w_low >= pipe:
        return 1.0
    # Phase 1: window below the pipe, rounds of one RTT, W grows by `flows` per round.
    rounds1 = (pipe - w_low) / flows
    delivered1 = (w_low + pipe) / 2 * rounds1  # packets
    time1 = rounds1  # in RTTs
    # Phase 2: link full; rounds last W/pipe RTTs and deliver W packets each.
    rounds2 = queue / flows
    delivered2 = (pipe + w_max) / 2 * rounds2
    time2 = delivered2 / pipe
    spent = pipe * (time1 + time2)
    if spent == 0:  # a round trip so short (below ~1e-160 s) that the arithmetic underflows: no pipe at all
        return 1.0
    return (delivered1 + delivered2) / spent


def aimd_utilization(queue_over_pipe: float, beta: float) -> float:
    """Long-run share of the rate one AIMD sender keeps through a drop-tail buffer of
    ``queue_over_pipe`` BDPs: the window climbs linearly to pipe + buffer, then falls to beta x that
    (the fluid sawtooth of ``reno_utilization``, any back-off; the sizing rule's ``fluid_need``)."""
    pipe = 1.0
    w_max = pipe + queue_over_pipe
    w_low = beta * w_max
    if w_low >= pipe:
        return 1.0
    rise = pipe - w_low  # window below the pipe: rounds of one RTT, w_low -> pipe
    below = (w_low + pipe) / 2 * rise
    full = (pipe + w_max) / 2 * queue_over_pipe  # window above it: the link is full
    return (below + full) / (pipe * (rise + full / pipe))


def predict(rate: float, buffer: int, rtt: float, flows: int = 1) -> Prediction:
    """The analytic model: latency under load and TCP utilization for one (rate, buffer, rtt) cell."""
    check_path(rate, rtt, flows)
    return Prediction(
        rate=rate,
        buffer=buffer,
        rtt=rtt,
        flows=flows,
        latency_under_load=latency_under_load(buffer, rate),
        utilization=reno_utilization(rate, buffer, rtt, flows),
    )


def predict_aqm(rate: float, buffer: int, rtt: float, flows: int = 1, latency_target: float = 0.010) -> Prediction:
    """The analytic model with DOCSIS-PIE on: the queue settles at the latency target, not the buffer
    (RFC 8034); TCP sees a buffer of ``latency_target x rate`` at most. ``bench/sim_aqm.py`` checks it."""
    check_path(rate, rtt, flows)
    held = min(buffer, int(rate * latency_target / 8))
    return Prediction(rate=rate, buffer=buffer, rtt=rtt, flows=flows,
                      latency_under_load=min(latency_under_load(buffer, rate), latency_target),
                      utilization=reno_utilization(rate, held, rtt, flows), model="analytic: DOCSIS-PIE")


def analytic(cells: Sequence[tuple[SizingInputs, int]]) -> list[Prediction]:
    """The analytic ``Model``: the sizing rule's own terms (``hfcprov.queue.sizing.rule_bytes``), so the first
    size it gives 95% is the rule's need. The buffer first holds what waits for grants through the
    request-grant MAC (rate x ``SizingInputs.mac_delays``' hold), DOCSIS-PIE's standing queue (rate x its
    latency target) and ``SLACK_PACKETS`` whole packets; the rest is the senders' sawtooth
    (``aimd_utilization`` over BDP / sqrt(flows), the round trip plus the MAC's loop). A buffer smaller than
    the grant wait's hold also caps the rate (Little's law: at most the buffer waits ``hold``, so the flow
    carries at most buffer / hold). Latency under load is size / rate, or the AQM's target below it."""
    out = []
    for tier, buffer in cells:
        pipe, hold = tier.mac_delays()
        held = tier.rate * hold / 8
        target = tier.aqm_latency_target
        standing = tier.rate * target / 8 if target is not None else 0.0
        share = bdp_bytes(tier.rate, tier.rtt + pipe) / math.sqrt(tier.flows)
        sawtooth = max(0.0, buffer - held - standing - SLACK_PACKETS * PACKET)
        utilization = aimd_utilization(sawtooth / share, tier.backoff) if share > 0 else 1.0
        if held > 0:
            utilization = min(utilization, buffer / held)
        latency = latency_under_load(buffer, tier.rate)
        if target is None:
            out.append(Prediction(tier.rate, buffer, tier.rtt, tier.flows, latency, utilization))
        else:
            out.append(Prediction(tier.rate, buffer, tier.rtt, tier.flows, min(latency, target), utilization,
                                  "analytic: DOCSIS-PIE"))
    return out


def buffer_table(tiers: Sequence[SizingInputs], buffers: Sequence[int], model: Model | None = None) -> list[Prediction]:
    """Every (tier, buffer) cell, tier by tier in the order given; ``model`` defaults to ``analytic``.

    The model gets the whole table in one call (the simulator runs it in parallel).
    """
    return (model or analytic)([(tier, b) for tier in tiers for b in buffers])
