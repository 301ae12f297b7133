"""hfcprov.queue: what a cable modem does to a flow's packets, and how big its queue should be, on any clock.

One room for the modem's queue. The simulator (``hfcprov.sim``, virtual time) and the
emulated modem's packet stage (``hfcprov.emu.aqmstage``, real time) run the same
algorithms from here; the sizing policy that ``buffer advise``, ``buffer table``, the
templates and the campaign report share lives here too. It imports only
``hfcprov.model``, ``hfcprov.config``, ``hfcprov.units`` and ``hfcprov.errors``: nothing of
the simulator, the emulator, the templates or the lab.

Modules (units: seconds, bytes, bits/s):

``pie``       DOCSIS-PIE (RFC 8034, MULPI Annex M): ``PieParams``, the controller ``DocsisPie``
              (``update(qdelay)``, ``drop_early(size, queue_bytes)``), ``qdelay_estimate``, and the
              queue disciplines ``ByteFifo`` (drop-tail) and ``PieQueue``; ``AqmConfigError``.
``dualq``     Low Latency DOCSIS's dual queue with the coupled AQM (RFC 9332 as MULPI applies it):
              ``DualQParams``, ``DualQueue`` (``enqueue(item, size, now, flow, ecn, dscp) -> outcome``,
              ``dequeue(now)``), ``ramp_thresholds``.
``qprotect``  queue protection (MULPI Annex P): ``QProtectParams``, ``QueueProtection``, ``flow_hash``.
``ecn``       the ECN codepoints ``NOT_ECT``, ``ECT1``, ``ECT0``, ``CE`` and ``DSCP_NQB``.
``select``    which AQM a service flow runs, from ``hfcprov.model``'s rule: ``aqm_keys(sf, docsis_version)``,
              ``asf_keys(asf, flows, settings, docsis_version)`` (an LLD aggregate), ``aqm_overrides``
              (a campaign's ``aqm`` axis), ``parse_params`` / ``pie_params`` / ``dualq_params``.
``grant``     the request-grant cycle's timing: ``MacParams`` (MAP interval and advance, request limits,
              overheads; presets ``docsis11``, ``docsis30``), ``mac_access_delay(params)``,
              ``ETHERNET_OVERHEAD``. The simulator's MAC model and the sizing rule both read it.
``profile``   the modem profile: ``ModemProfile`` (DOCSIS version, channel set, MAP interval and the
              request-grant timing they fix; capacity, ``loop_delay``, ``burst_rate_cap``), ``PROFILES``
              (docsis2.0 = the 2011 calibration, docsis3.0-4ch/8ch, docsis3.1 (the default), ...),
              ``parse_profile("docsis3.1:map_interval=1ms")``, ``DEFAULT_PROFILE``.
``inputs``    ``SizingInputs``: every input a buffer size depends on (rate, RTT, flows, the senders'
              TCP, the upstream model and modem profile, the AQM, burst and peak, the latency budget);
              ``SizingError``; the one set of defaults every entry point takes (``DEFAULT_*``).
``sizing``    the one sizing policy: ``size_buffer(SizingInputs, model=None, *, min_buffer=False,
              sim_sizes=None) -> Advice``; its parts (``throughput_need``, ``rule_bytes``,
              ``queue_budget``, ``fluid_need``), ``choose`` (the policy over measured rows, which the
              campaign report applies), ``queue_delay``, White et al.'s findings.
``predict``   models of what a size does: ``Prediction``, the analytic ``predict`` / ``predict_aqm`` /
              ``analytic`` model, ``buffer_table(tiers, buffers, model)``. A model is a callable over
              ``(SizingInputs, buffer)`` cells; the simulator's is ``hfcprov.sim.upload.SimModel``.
``socketbuf`` the TCP socket-buffer limit for a CM bridging a fast downstream onto a slower LAN
              (Cohen & Ramanathan 1998).

The queue objects are pure: no clock and no events. Their owner calls them with ``now``
(the simulator's virtual time, the emulator's ``time.monotonic``) and shapes the departures.

A new input of the size is a field with a default on ``SizingInputs`` that ``rule_bytes``
reads, as the modem profile is (issue 28: its loop delay feeds ``sizing.mac_delays``).

The names below are importable from ``hfcprov.queue`` directly; each loads its module on first use.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "AqmConfigError": "pie", "ByteFifo": "pie", "DocsisPie": "pie", "PieParams": "pie", "PieQueue": "pie",
    "qdelay_estimate": "pie",
    "DualQParams": "dualq", "DualQueue": "dualq",
    "QProtectParams": "qprotect", "QueueProtection": "qprotect",
    "CE": "ecn", "DSCP_NQB": "ecn", "ECT0": "ecn", "ECT1": "ecn", "NOT_ECT": "ecn",
    "aqm_keys": "select", "aqm_overrides": "select", "asf_keys": "select",
    "ETHERNET_OVERHEAD": "grant", "MacConfigError": "grant", "MacParams": "grant", "mac_access_delay": "grant",
    "SizingError": "inputs", "SizingInputs": "inputs",
    "DEFAULT_PROFILE": "profile", "ModemProfile": "profile", "PROFILES": "profile", "ProfileError": "profile",
    "parse_profile": "profile",
    "Advice": "sizing", "choose": "sizing", "size_buffer": "sizing",
    "Prediction": "predict", "analytic": "predict", "buffer_table": "predict",
    "socket_buffer_limit": "socketbuf",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hfcprov.queue' has no attribute {name!r}")
    return getattr(importlib.import_module(f"hfcprov.queue.{module}"), name)
