"""AQM for the simulator's service flows: DOCSIS-PIE and Low Latency DOCSIS (issue 20).

- ``pie``: DOCSIS-PIE (RFC 8034 / MULPI Annex M): ``PieParams``, the controller
  ``DocsisPie``, the rate-based ``qdelay_estimate``, a plain FIFO ``PieQueue``.
- ``dualq``: the LLD dual queue with the coupled AQM (RFC 9332 as MULPI applies it):
  ``DualQParams``, ``DualQueue``; ECN codepoints ``NOT_ECT``, ``ECT1``, ``ECT0``, ``CE``.
- ``qprotect``: queue protection (MULPI Annex P): ``QProtectParams``, ``QueueProtection``.
- ``link``: simulator hops with the ``Link`` surface: ``PieLink``, ``DualQueueLink``.
- ``ecn``: ECT(1) marking, CE echo and ``on_ce`` for flows whose congestion control
  is ECN-capable (``hfcprov.sim.tcp_prague.Prague``).

The queue objects are pure (no clock, no events): the emulator's userspace stage
(``hfcprov.emu.aqmstage``) runs the same code in real time.
"""

from hfcprov.sim.aqm.dualq import CE, ECT0, ECT1, NOT_ECT, DualQParams, DualQueue
from hfcprov.sim.aqm.pie import (
           AqmConfigError,
           DocsisPie,
           PieParams,
           PieQueue,
           qdelay_estimate,
)
from hfcprov.sim.aqm.qprotect import QProtectParams, QueueProtection

__all__ = ["CE", "ECT0", "ECT1", "NOT_ECT", "AqmConfigError", "DocsisPie", "DualQParams", "DualQueue",
           "PieParams", "PieQueue", "QProtectParams", "QueueProtection", "qdelay_estimate"]
