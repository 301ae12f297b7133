"""Which AQM a service flow runs, and its parameters: the selection rule from ``hfcprov.model``.

The answer is a pair of keys, ``{"aqm": ..., "aqm_params": ...}``, that the simulator's
scenario (``hfcprov.sim.links.QUEUES`` builds the queue from them) and the emulator's
packet stage (``hfcprov.emu.aqmstage``) both read; the algorithms are ``pie`` and ``dualq``.
The disciplines:

- ``none``: drop-tail (a DOCSIS 3.0 modem; AQM switched off by 24.40.1 or TLV 76),
- ``docsis-pie``: DOCSIS-PIE, on by default on every DOCSIS 3.1 upstream service flow
  (latency target 24.40.2, default 10 ms); which flows get it is ``hfcprov.model.upstream_aqm``'s
  rule for the modem's DOCSIS version (3.0: only where the file's 24.40 asks),
- ``lld``: Low Latency DOCSIS, the dual queue of an aggregate service flow (TLV 70/71
  with its 42 encodings: coupling factor, scheduling weight, queue protection; the
  low-latency flow's 24.40.4/5 immediate AQM ramp), unless TLV 91 disables it.

``aqm_params`` keys, with units parsed by ``parse_params`` (``latency_target: 20ms``):
docsis-pie: ``PieParams`` fields; lld: ``DualQParams`` fields plus ``latency_target``
(the classic flow's), ``ll_buffer``, ``ll_rate`` and ``nqb_probes`` (the scenario's
probes and voice call carry the NQB DSCP 45, which MULPI's default classifier sends
to the low-latency queue; default false: they share the classic queue). Downstream flows map to ``none``:
the CMTS's downstream AQM is the vendor's choice and not modelled.
"""

from __future__ import annotations

import dataclasses

from hfcprov.errors import HfcprovError
from hfcprov.model import DEFAULT_DOCSIS_VERSION, upstream_aqm
from hfcprov.queue.dualq import DualQParams
from hfcprov.queue.pie import AqmConfigError, PieParams
from hfcprov.queue.qprotect import QProtectParams
from hfcprov.units import parse_bytes, parse_duration, parse_rate

AQMS = ("none", "docsis-pie", "lld")

# parameters given as a duration (``latency_target: 20ms``): a scenario file refuses a bare number for them
DURATION_KEYS = {"latency_target", "interval", "max_burst", "burst_reset_timeout", "latency_low", "latency_high",
              "iaqm_max_th", "qp_latency_threshold", "qp_score_threshold"}
_BYTES = {"mean_pkt", "min_pkt", "max_frame", "quantum", "ll_buffer"}
_RATES = {"ll_rate"}
_QP = {"qp_latency_threshold": "latency_threshold", "qp_score_threshold": "score_threshold",
       "qp_lg_aging": "lg_aging"}


def pie_params(params: dict | None) -> PieParams:
    """``PieParams`` from parsed ``aqm_params`` (unknown keys named)."""
    return _build(PieParams, params or {}, "docsis-pie")


def dualq_params(params: dict | None) -> tuple[DualQParams, int | None, float | None, bool]:
    """``(DualQParams, ll_buffer, ll_rate, nqb_probes)`` from parsed ``aqm_params``."""
    p = dict(params or {})
    ll_buffer = p.pop("ll_buffer", None)
    ll_rate = p.pop("ll_rate", None)
    nqb = bool(p.pop("nqb_probes", False))
    for k in ("classic", "qprotect"):  # built below from the flat keys; a nested mapping would be lost
        if k in p:
            raise AqmConfigError(f"{k}: not a lld parameter (give the classic queue's and queue "
                                 "protection's keys at the top level, e.g. latency_target, qp_latency_threshold)")
    classic = {k: p.pop(k) for k in list(p) if k in {f.name for f in dataclasses.fields(PieParams)}}
    qp = {_QP[k]: p.pop(k) for k in list(p) if k in _QP}
    p["classic"] = _build(PieParams, classic, "lld")
    p["qprotect"] = _build(QProtectParams, qp, "lld")
    if "ll_dscp" in p:
        p["ll_dscp"] = tuple(p["ll_dscp"]) if isinstance(p["ll_dscp"], (list, tuple)) else (p["ll_dscp"],)
    return _build(DualQParams, p, "lld"), ll_buffer, ll_rate, nqb


def _build(cls, kw: dict, what: str):
    known = {f.name for f in dataclasses.fields(cls)}
    extra = {"lld": set(_QP) | {"ll_buffer", "ll_rate", "nqb_probes"} | {f.name for f in dataclasses.fields(PieParams)}}.get(what, set())
    for k in kw:
        if k not in known:
            allowed = sorted((known | extra) - {"classic", "qprotect"})
            raise AqmConfigError(f"{k}: not a {what} parameter (known: {', '.join(allowed)})")
    for f in dataclasses.fields(cls):  # a number where the field holds one: __post_init__ compares it
        v = kw.get(f.name)
        if f.name in kw and isinstance(f.default, (int, float)) and not isinstance(f.default, bool) \
                and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise AqmConfigError(f"{f.name}: expected a number, not {v!r}")
    try:
        return cls(**kw)
    except (TypeError, ValueError) as err:  # a value of the wrong type: compared in __post_init__
        raise AqmConfigError(f"{what}: {err}") from None


def parse_params(value, aqm: str) -> dict | None:
    """``aqm_params`` as a YAML mapping gives them, with quantities parsed (``10ms``, ``64KiB``)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise AqmConfigError(f"expected a mapping of {aqm} parameters (e.g. {{latency_target: 10ms}})")
    out = {}
    for k, v in value.items():
        try:
            if v is None:
                out[k] = None
            elif k in DURATION_KEYS:
                out[k] = parse_duration(v)
            elif k in _BYTES:
                out[k] = parse_bytes(v)
            elif k in _RATES:
                out[k] = parse_rate(v)
            else:
                out[k] = v
        except (HfcprovError, ValueError, TypeError) as err:
            raise AqmConfigError(f"{k}: {err}") from None
    if aqm == "lld":
        dualq_params(out)
    elif aqm == "docsis-pie":
        pie_params(out)
    return out


def aqm_keys(sf, docsis_version: str = DEFAULT_DOCSIS_VERSION, settings=None) -> dict:
    """``{"aqm": ..., "aqm_params": ...}`` for one ``hfcprov.model.ServiceFlow`` on its own, on a
    modem of ``docsis_version`` (``hfcprov.model.upstream_aqm``: the emulated modem's rule too)."""
    aqm = upstream_aqm(sf, settings, docsis_version)
    if aqm is None:
        return {"aqm": "none"}
    if aqm.algorithm == "immediate":  # a flow with only the immediate AQM: a low-latency queue
        return {"aqm": "lld", "aqm_params": _iaqm(sf)}
    params = {}
    if aqm.latency_target_ms:
        params["latency_target"] = aqm.latency_target
    return {"aqm": "docsis-pie", "aqm_params": params or None}


def _iaqm(sf) -> dict:
    p = {}
    if sf.aqm.iaqm_max_threshold_us:
        p["iaqm_max_th"] = sf.aqm.iaqm_max_threshold
    if sf.aqm.iaqm_range_exponent is not None:
        p["iaqm_lg_range"] = sf.aqm.iaqm_range_exponent
    return p


def asf_keys(asf, flows, settings=None, docsis_version: str = DEFAULT_DOCSIS_VERSION) -> dict:
    """Scenario keys for an upstream aggregate service flow (Low Latency DOCSIS): its rate and
    burst, the classic flow's buffer as the classic queue, and ``aqm: lld`` with the 70.42
    encodings, the classic flow's latency target and the low-latency flow's IAQM ramp.

    ``flows``: the file's ``ServiceFlow``s (the members are found by 24.36 / 70.42.1);
    ``settings``: ``hfcprov.model.ModemSettings`` (TLV 91 turns the aggregate back into
    its classic flow with DOCSIS-PIE). A DOCSIS 3.0 modem has no Low Latency DOCSIS: the
    classic flow's queue by ``aqm_keys`` (drop-tail unless its 24.40 asks for AQM).
    """
    members = [f for f in flows if f.asf_ref is not None and f.asf_ref == asf.ref and f.direction == asf.direction]
    ll = next((f for f in members if asf.low_latency_ref is not None and f.ref == asf.low_latency_ref), None)
    classic = next((f for f in members if f is not ll), None)
    if classic is None:
        raise AqmConfigError(f"aggregate service flow {asf.path or asf.ref}: no classic service flow names it (24.36)")
    rate = asf.max_sustained_rate or classic.max_sustained_rate
    if not rate:
        raise AqmConfigError(f"aggregate service flow {asf.path or asf.ref}: no Max Sustained Traffic Rate")
    keys = {"rate": float(rate), "buffer": classic.queue_size(), "direction": asf.direction,
            "burst": asf.max_traffic_burst or classic.burst, "name": asf.profile_name or asf.path or ""}
    if asf.peak_rate:
        keys["peak"] = float(asf.peak_rate)
    if ll is None or (settings is not None and settings.low_latency_disabled) or docsis_version == "3.0":
        keys.update(aqm_keys(classic, docsis_version, settings))
        return keys
    params: dict = {}
    if classic.aqm.latency_target_ms:
        params["latency_target"] = classic.aqm.latency_target
    params.update(_iaqm(ll))
    if asf.coupling_factor is not None:
        params["coupling"] = asf.coupling_factor / 10.0
    if asf.scheduling_weight:
        params["weight"] = asf.scheduling_weight
    if asf.queue_protection is not None:
        params["queue_protection"] = asf.queue_protection
    b = ll.buffer
    if any(v is not None for v in (b.minimum, b.target, b.maximum)):
        # else MULPI's low-latency default: 10 ms at the aggregate rate (``DualQueue``)
        params["ll_buffer"] = ll.queue_size(default=max(int(0.010 * rate / 8), 40_000))
    if ll.max_sustained_rate:
        params["ll_rate"] = float(ll.max_sustained_rate)
    keys.update({"aqm": "lld", "aqm_params": params})
    return keys


def aqm_overrides(choice: str, sf) -> dict:
    """Scenario keys for a campaign's ``aqm`` axis value: ``file`` keeps what the flow says
    (``aqm_keys``), the others force that queue, keeping the file's DOCSIS-PIE latency
    target where there is one. With ``lld`` the probes and the voice call are NQB-marked
    (the latency-sensitive traffic an LLD tier is sold for), the bulk flows stay classic
    unless their congestion control is ``prague``."""
    if choice == "file":
        return {}
    if choice == "none":
        return {"aqm": "none", "aqm_params": None}
    params = {"latency_target": sf.aqm.latency_target} if sf.aqm.latency_target_ms else {}
    if choice == "lld":
        params["nqb_probes"] = True
    return {"aqm": choice, "aqm_params": params or None}
