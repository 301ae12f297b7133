"""hfcprov.sim: a discrete-event simulator of a DOCSIS service flow carrying TCP and probes.

Public API (the lab runner, ``hfcprov buffer table`` and the CLI use only this)::

    from hfcprov.sim import Scenario, run, run_many
    sc = Scenario(rate=2e6, buffer=64 * 1024, rtt=0.04, duration=30, probe_rate=10)
    result = run(sc)                      # hfcprov.results.RunResult, source="sim"
    results = run_many([sc, ...], jobs=4) # processes; input order kept
    Scenario.from_service_flow(sf, rtt=0.04, flows=[FlowSpec()])  # from hfcprov.model.ServiceFlow
    Scenario.from_dict(yaml_mapping, source="file.yaml")          # units parsed here

Modules and the interfaces between them (units: seconds, bytes, bits/s):

engine.Engine
    ``at(t, fn, arg)`` / ``after(dt, fn, arg)`` push ``(t, seq, fn, arg, None)`` on a heap;
    ``queue(line, t, fn, arg)`` puts an event on a FIFO hop's ``line`` (a deque: only its
    first event sits in the heap); ``run(until)`` pops and calls ``fn(arg)``; ``now`` is the
    clock; ``events`` counts. Cancellation is lazy (the owner ignores a stale event).

packet.Packet
    slots class ``(kind, flow, seq, size, ts, retx, sack)``; kinds DATA, ACK, PROBE, ECHO.
    ``seq`` is a segment index (DATA) or the cumulative ACK (ACK); ``size`` is IP bytes.

Sink (anything packets are delivered to)
    ``receive(pkt)``. Hosts dispatch on ``pkt.flow`` to endpoints (TCP sender/receiver, probes).

Link (one direction of one hop) -- link.Link is the token-bucket + drop-tail implementation
    ``send(pkt) -> bool`` (False: dropped by the buffer), also callable as ``receive``;
    ``waiting_bytes() -> int``; counters ``accepted``, ``dropped``, ``lost``, ``measured``,
    ``wait_sum``, ``wait_byte_sum``; attribute ``measure_from`` (warm-up end);
    it calls ``sink.receive(pkt)`` at the far end after queueing, shaping, serialisation,
    plant loss and propagation. Every hop a scenario needs is built by name from the
    registries of ``links`` (``factory(engine, scenario, sink, loss) -> link``):
    ``LINKS[scenario.mac]`` (``tokenbucket``; ``docsis``: the request-grant MAC of ``mac``,
    built by ``mac_link``), ``REVERSE_LINKS[scenario.reverse_mac]`` for the ACK direction,
    and ``QUEUES[scenario.aqm]``, the queue discipline of the shaped link (``none``:
    drop-tail; AQMs register here and read ``scenario.aqm_params``).
    TCP only ever calls ``link.send``, so it is untouched by the MAC or the queue.

loss: ``NoLoss``, ``Bernoulli(rate, rng)``, ``GilbertElliott(rate, burst, rng)``; ``lost() -> bool``.

cc.CongestionControl (window growth only; recovery is recovery.*, the RTO tcp.TcpSender's)
    ``on_ack(sender, acked_segments, rtt_or_None)``, ``ssthresh(sender) -> bytes``,
    ``on_recovery_exit(sender)``, ``on_timeout(sender)``, ``ecn`` (class flag) with
    ``on_ce(sender, marked)`` for ECN-capable (L4S) controls; reads/writes ``sender.cwnd``
    (bytes), reads ``ssthresh``, ``mss``, ``srtt``, ``min_rtt``, ``engine.now``,
    ``flight_bytes()``. Register in ``cc.CONGESTION_CONTROLS[name] = "module:Class"``
    (``cubic`` -> hfcprov.sim.tcp_cubic:cubic, ``fast`` -> hfcprov.sim.tcp_fast:Fast are
    pre-registered); ``Scenario.tcp.variant = name`` or per flow ``FlowSpec.variant``.

recovery.Reno / NewReno / Sack (``TcpOptions.recovery``, registry ``recovery.RECOVERIES``)
    What the sender does inside fast recovery, one object per sender (ns-3's TcpRecoveryOps):
    ``should_enter``, ``enter``, ``on_partial_ack``, ``send``, ``on_resend``, ``on_timeout``,
    ``flight_bytes``, ``lt_limit``; SACK's scoreboard (``on_sack``, ``on_advance``) is
    ``ranges.SegmentRanges`` plus counters: no ACK scans the window.

tcp.TcpSender / tcp.TcpReceiver
    sequence space, duplicate ACKs, recovery entry and exit, RFC 6298 RTO with timer
    granularity and minimum, delayed ACKs, socket-buffer window, super fast retransmit
    (``dupthresh=1``). Counters: ``retransmissions``, ``timeouts``, ``fast_retransmits``.

Traffic (run.py): ``FlowSpec(start, size|None, variant)`` bulk flows; ``ProbeSource``
    ping-like probes at ``Scenario.probe_rate``, filed idle/loaded by flow activity.
    ``Scenario.voice`` (``VoiceSpec``) adds a call as one more endpoint pair on the hosts
    (``voip.VoiceCall``); ``RunResult.mos`` scores it. ``TcpSender.supply(n)`` limits a
    sender to the first ``n`` segments (a relay forwarding what it has received).

run.Network builds all of the above for one scenario; ``run()`` / ``run_many()`` /
``run_with_voice()`` wrap it. Modules import each other without loops (tests/sim/test_structure.py).
"""

from hfcprov.sim.run import Network, run, run_many, run_with_voice
from hfcprov.sim.scenario import (
           FlowSpec,
           LossSpec,
           Scenario,
           ScenarioError,
           TcpOptions,
           VoiceSpec,
)

__all__ = ["FlowSpec", "LossSpec", "Network", "Scenario", "ScenarioError", "TcpOptions", "VoiceSpec", "run",
           "run_many", "run_with_voice"]
