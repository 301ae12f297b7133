"""ECN end to end for simulated TCP flows: ECT(1) on the data, CE counted and echoed, the sender told.

The TCP sender and receiver know nothing of ECN; a flow whose congestion control
says ``ecn = True`` is wrapped where it meets the network:

- its data go out as ECT(1) (``EctSender``, between the sender and its first hop),
- its receiver counts CE-marked arrivals (``CeCounter``) and every ACK it sends
  carries the running count in ``Packet.ecn`` (``AckEcho``), as AccECN's counter does,
- the sender's side reads the count on each ACK and hands the increase to the
  congestion control's ``on_ce(sender, n)`` before the ACK itself is processed.

``attach(sender, receiver, send_receivers, recv_receivers)`` installs all of it
in place: the hosts' per-flow endpoint lists are shared with the links that route
into them, so swapping an entry reroutes that flow's packets.
"""

from __future__ import annotations

from hfcprov.queue.ecn import CE, ECT1
from hfcprov.sim.packet import DATA


class EctSender:
    """The sender's link for an ECN flow: data leave as ECT(1)."""

    __slots__ = ("link",)

    def __init__(self, link) -> None:
        self.link = link

    def send(self, pkt) -> bool:
        if pkt.kind == DATA:
            pkt.ecn = ECT1
        return self.link.send(pkt)

    receive = send


class CeCounter:
    """In front of a receiver: counts CE-marked data segments."""

    __slots__ = ("ce", "receiver")

    def __init__(self, receiver) -> None:
        self.receiver = receiver
        self.ce = 0

    def receive(self, pkt) -> None:
        if pkt.ecn == CE:
            self.ce += 1
        self.receiver.receive(pkt)


class AckEcho:
    """The receiver's link for an ECN flow: each ACK carries the CE count so far."""

    __slots__ = ("counter", "link")

    def __init__(self, link, counter: CeCounter) -> None:
        self.link = link
        self.counter = counter

    def send(self, pkt) -> bool:
        pkt.ecn = self.counter.ce
        return self.link.send(pkt)

    receive = send


class EceReader:
    """In front of a sender: passes new CE echoes to its congestion control, then the ACK."""

    __slots__ = ("echoed", "sender")

    def __init__(self, sender) -> None:
        self.sender = sender
        self.echoed = 0

    def receive(self, pkt) -> None:
        count = pkt.ecn
        if count > self.echoed:
            s = self.sender
            s.cc.on_ce(s, count - self.echoed)
            self.echoed = count
        self.sender.receive(pkt)


def attach(sender, receiver, send_receivers: list, recv_receivers: list) -> CeCounter:
    """Make flow ``sender.flow`` ECN-capable end to end (see the module docstring)."""
    flow = sender.flow
    sender.link = EctSender(sender.link)
    counter = CeCounter(receiver)
    receiver.link = AckEcho(receiver.link, counter)
    recv_receivers[flow] = counter.receive
    send_receivers[flow] = EceReader(sender).receive
    return counter
