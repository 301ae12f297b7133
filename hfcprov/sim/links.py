"""Links built by name: the registries of link models and queue disciplines.

Every hop the simulator builds for a scenario comes from a factory here, looked up
by name, so a new MAC or AQM is one registry entry and ``run.py`` special-cases
nothing. A factory is ``factory(engine, scenario, sink, loss) -> link`` where the
link has the ``Link`` surface (``hfcprov.sim``: ``send``/``receive``,
``waiting_bytes``, counters ``accepted``/``dropped``/``lost``/``measured``/
``wait_sum``/``wait_byte_sum``, attribute ``measure_from``, ``sink.receive`` at
the far end). An entry is the factory or ``"module:function"`` (imported on
first use, so optional parts stay optional and no module imports another in a loop).

- ``LINKS[scenario.mac]``: the data direction's link model. ``tokenbucket`` is
  the service flow as a shaper + byte buffer; it hands the buffer to
  ``QUEUES[scenario.aqm]``. ``docsis`` is the request-grant MAC (``mac_link``); ``cmts``
  the CMTS downstream (``cmts``: per-modem shaper, shared MPEG-framed channel).
- ``REVERSE_LINKS[scenario.reverse_mac]``: the ACK direction.
- ``QUEUES[scenario.aqm]``: the queue discipline of the shaped service flow
  (``tokenbucket`` link): ``none`` is the drop-tail ``link.Link``; AQMs (DOCSIS-PIE,
  the dual-queue coupled AQM of ``hfcprov.queue``, put on links by ``hfcprov.sim.aqm.link``, issue 20) register here and read
  their parameters from ``scenario.aqm_params``. The factory builds the whole hop
  (shaper, buffer, channel, loss, propagation ``rtt/2``), as ``droptail_link`` does.
"""

from __future__ import annotations

from hfcprov.sim.link import Link
from hfcprov.sim.registry import resolve
from hfcprov.sim.scenario import ScenarioError


def droptail_link(engine, sc, sink, loss) -> Link:
    """The service flow as a token bucket (rate, burst, peak) in front of a drop-tail byte buffer."""
    return Link(engine, sink, capacity=sc.channel or sc.peak or sc.rate, delay=sc.rtt / 2.0,
                buffer=sc.buffer, rate=sc.rate, burst=sc.burst, peak=sc.peak,
                overhead=sc.overhead, loss=loss, name="bottleneck")


def token_bucket_link(engine, sc, sink, loss):
    """``LINKS["tokenbucket"]``: the shaped service flow with the queue discipline ``sc.aqm``."""
    return lookup(QUEUES, "aqm", sc.aqm)(engine, sc, sink, loss)


def reverse_link(engine, sc, sink, loss) -> Link:
    """``REVERSE_LINKS["tokenbucket"]``: the ACK direction, unshaped unless reverse_rate/reverse_buffer."""
    return Link(engine, sink, capacity=sc.reverse_channel, delay=sc.rtt / 2.0, buffer=sc.reverse_buffer,
                rate=sc.reverse_rate, overhead=sc.overhead, loss=loss, name="reverse")


LINKS: dict[str, object] = {
    "tokenbucket": token_bucket_link,
    "docsis": "hfcprov.sim.aqm.link:make_docsis_link",  # mac_link.make_link, with DOCSIS-PIE on aqm: docsis-pie
    "cmts": "hfcprov.sim.cmts:make_link",  # a download through the CMTS's shaper and downstream channel
}
REVERSE_LINKS: dict[str, object] = {
    "tokenbucket": reverse_link,
    "docsis": "hfcprov.sim.mac_link:make_reverse_link",
    "cmts": "hfcprov.sim.cmts:make_reverse_link",  # an upload's ACKs down through the CMTS
}
QUEUES: dict[str, object] = {
    "none": droptail_link,
    "docsis-pie": "hfcprov.sim.aqm.link:make_pie_link",  # issue 20: DOCSIS-PIE
    "lld": "hfcprov.sim.aqm.link:make_dualq_link",  # issue 20: Low Latency DOCSIS dual queue
}


def lookup(registry: dict, key: str, name: str):
    """The factory registered as ``name``; ``key`` is the scenario key, for the error."""
    if name not in registry:
        raise ScenarioError(f"{key}: unknown link model {name!r} (known: {', '.join(registry)})")
    return resolve(registry, name)


def build(engine, sc, recv_host, send_host, data_loss, ack_loss) -> tuple:
    """The scenario's two directions: ``(bottleneck, reverse)``."""
    bottleneck = lookup(LINKS, "mac", sc.mac)(engine, sc, recv_host, data_loss)
    reverse = lookup(REVERSE_LINKS, "reverse_mac", sc.reverse_mac)(engine, sc, send_host, ack_loss)
    return bottleneck, reverse
