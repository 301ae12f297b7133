"""The simulator's AQM plumbing: ``hfcprov.queue``'s algorithms put on simulated links (issue 20).

The algorithms themselves (DOCSIS-PIE, the LLD dual queue, queue protection, the
rule that picks one from ``hfcprov.model``) are ``hfcprov.queue``'s, shared with the
emulator's packet stage. Here:

- ``link``: simulator hops with the ``Link`` surface: ``PieLink`` (DOCSIS-PIE on the
  token-bucket link), ``DualQueueLink`` (the dual queue's scheduler and shaper),
  ``PieCm`` (DOCSIS-PIE in front of the request-grant cable modem), and the factories
  ``links.QUEUES`` / ``links.LINKS`` name;
- ``ecn``: ECT(1) marking, CE echo and ``on_ce`` for flows whose congestion control
  is ECN-capable (``hfcprov.sim.tcp_prague.Prague``).
"""
