"""Building request-grant MAC links for a scenario: ``links.LINKS["docsis"]`` and
``links.REVERSE_LINKS["docsis"]``.

The MAC model itself (channel, scheduler, cable modem) is ``hfcprov.sim.mac``; this
module turns a scenario's ``mac_params`` mapping into ``MacParams`` (``hfcprov.queue.grant``) and a ``CableModem``
on its own channel, with saturating neighbours when asked.
"""

from __future__ import annotations

import random

from hfcprov.queue.grant import MacConfigError, MacParams
from hfcprov.queue.profile import ModemProfile, parse_profile
from hfcprov.sim.mac import CableModem, UpstreamChannel
from hfcprov.sim.packet import DATA, Packet

_CM_KEYS = ("buffer_overhead", "buffer_block", "modems", "cms")  # the CMs', not the channel's
# The ACK path of a download (Atov-Kennedy's 512 kb/s DOCSIS 1.1 upstream)
REVERSE_DEFAULT = {"preset": "docsis11"}


def params_from(given: dict | None, default: dict | None = None) -> MacParams:
    """``MacParams`` from a scenario's mapping (MacParams fields, plus ``preset``: docsis11 |
    docsis30, plus the CM's keys); ``given=None``: ``default``, else ``MacParams()`` (the calibrated set)."""
    given = dict(given or default or {})  # empty: as if not given
    preset = given.pop("preset", "docsis30")
    factory = {"docsis11": MacParams.docsis11, "docsis30": MacParams.docsis30}.get(preset)
    if factory is None:
        raise MacConfigError(f"preset: {preset!r} is not one of docsis11, docsis30")
    known = set(MacParams.__dataclass_fields__)
    unknown = set(given) - known - set(_CM_KEYS)
    if unknown:
        raise MacConfigError(f"unknown key(s) {', '.join(sorted(unknown))} "
                             f"(known: preset, {', '.join(sorted(known | set(_CM_KEYS)))})")
    return factory(**{k: v for k, v in given.items() if k in known})


def check_params(given: dict | None) -> None:
    """A ``mac_params`` mapping is valid for one link kind: the CMTS downstream's
    (``hfcprov.sim.cmts``) when it names a CMTS-only key or a ``qam*`` preset, else the
    request-grant MAC's. Each factory checks its own kind again when the link is built."""
    from hfcprov.sim.cmts import CMTS_KEYS, QAM_RATES
    from hfcprov.sim.cmts import params_from as cmts_params

    given = dict(given or {})
    mac_keys = set(MacParams.__dataclass_fields__) | set(_CM_KEYS) | {"preset"}
    unknown = set(given) - mac_keys - CMTS_KEYS
    if unknown:
        raise MacConfigError(f"unknown key(s) {', '.join(sorted(unknown))} (known for mac: docsis: "
                             f"{', '.join(sorted(mac_keys))}; for mac: cmts: {', '.join(sorted(CMTS_KEYS))})")
    if (set(given) & (CMTS_KEYS - mac_keys)) or given.get("preset") in QAM_RATES:
        cmts_params(given)
    else:
        params_from(given)


def _modem(engine, scenario, sink, loss, given, default, *, buffer, rate, burst, name, stream):
    """The scenario's CM on its own request-grant channel (or ``cms`` CMs sharing it, flow i
    through CM i % cms, each with the service flow), plus ``modems`` saturating neighbours."""
    params = params_from(given, default)
    extra = given or default or {}
    channel = UpstreamChannel(engine, params, random.Random(f"{stream}-{scenario.seed}"))
    n = int(extra.get("cms", 1))
    if n < 1:
        raise MacConfigError(f"cms: {n} (the number of CMs the flows are spread over) must be >= 1")
    cms = [CableModem(channel, sink, delay=scenario.rtt / 2.0, buffer=buffer, rate=rate, burst=burst,
                      buffer_overhead=int(extra.get("buffer_overhead", 0)),
                      buffer_block=extra.get("buffer_block"), loss=loss, name=f"{name}{'.' + str(i) if i else ''}")
           for i in range(n)]
    for i in range(int(extra.get("modems", 0))):
        other = CableModem(channel, _Discard(), buffer=buffer or 65536, rate=rate,
                           burst=burst, name=f"{name}.other{i + 1}")
        _Saturate(engine, other)
    return cms[0] if n == 1 else ModemGroup(cms)


class ModemGroup:
    """Several CMs on one channel as one ``Link``: a packet of flow i goes through CM i % n
    (Atov-Kennedy's 2- and 3-CM runs: each CM has its own request-grant cycle)."""

    def __init__(self, cms: list[CableModem]) -> None:
        self.cms = cms

    def send(self, pkt) -> bool:
        return self.cms[pkt.flow % len(self.cms)].send(pkt)

    receive = send

    def waiting_bytes(self) -> int:
        return sum(cm.waiting_bytes() for cm in self.cms)

    def __getattr__(self, counter):  # accepted, dropped, lost, measured, wait_sum, wait_byte_sum
        if counter in ("accepted", "dropped", "lost", "measured", "wait_sum", "wait_byte_sum"):
            return sum(getattr(cm, counter) for cm in self.cms)
        raise AttributeError(counter)

    @property
    def measure_from(self) -> float:
        return self.cms[0].measure_from

    @measure_from.setter
    def measure_from(self, t: float) -> None:
        for cm in self.cms:
            cm.measure_from = t


def scenario_profile(scenario) -> ModemProfile:
    """The modem profile a ``mac: docsis`` scenario runs: ``Scenario.profile``; without one, the
    calibrated ``docsis2.0`` when ``mac_params`` (that model's parameters) are given, else the default."""
    if scenario.profile is None and scenario.mac_params:
        return parse_profile("docsis2.0")
    return parse_profile(scenario.profile)


def make_link(engine, scenario, sink, loss):
    """``links.LINKS["docsis"]`` factory: the scenario's service flow as one CM on a request-grant upstream.

    The profile decides the model (``scenario_profile``): ``docsis2.0`` is the calibrated 2011 model
    (``hfcprov.sim.mac``; ``Scenario.mac_params`` adjust it: None, the calibrated set;
    ``mac_params.modems`` adds that many saturating CMs with the same service flow, ``cms`` is for the
    ACK path only); the DOCSIS 3.0 and 3.1 profiles run the MULPI-timed model (``hfcprov.sim.mulpi``).
    """
    profile = scenario_profile(scenario)
    if profile.model == "mulpi":
        if scenario.mac_params:
            raise MacConfigError(f"mac_params: {', '.join(sorted(scenario.mac_params))} are the calibrated "
                                 f"docsis2.0 model's; profile {profile.name} takes its overrides in the "
                                 "profile (e.g. docsis3.1:map_interval=1ms)")
        from hfcprov.sim.mulpi import make_flow

        return make_flow(engine, profile, sink=sink, delay=scenario.rtt / 2.0, buffer=scenario.buffer,
                         rate=scenario.rate, burst=scenario.burst, peak=scenario.peak, loss=loss,
                         seed=scenario.seed)
    if int((scenario.mac_params or {}).get("cms", 1)) != 1:
        raise MacConfigError("mac_params: cms (flows spread over CMs) is for reverse_mac_params only")
    given = scenario.mac_params
    if profile.congestion and not (given or {}).get("other_load"):
        given = {**(given or {}), "other_load": profile.congestion}
    return _modem(engine, scenario, sink, loss, given, None,
                  buffer=scenario.buffer, rate=scenario.rate, burst=scenario.burst, name="cm0", stream="mac")


def make_reverse_link(engine, scenario, sink, loss):
    """``links.REVERSE_LINKS["docsis"]`` factory: ACKs (and probe echoes) go up through a request-grant CM.

    For downstream transfers such as Atov-Kennedy's (data at 3 Mb/s down, ACKs through
    the CM's 512 kb/s upstream): the ACK clock then carries the MAC's request-grant
    delays. Shaped by ``reverse_rate``/``reverse_buffer``; ``reverse_mac_params``
    (None: DOCSIS 1.1 with the default channel); ``cms: k`` sends flow i's ACKs through CM
    i % k, each with its own request-grant cycle on the one upstream channel.
    """
    return _modem(engine, scenario, sink, loss, scenario.reverse_mac_params, REVERSE_DEFAULT,
                  buffer=scenario.reverse_buffer, rate=scenario.reverse_rate, burst=None,
                  name="ack-cm", stream="ack-mac")


class _Discard:
    __slots__ = ()

    def receive(self, pkt) -> None:
        pass


class _Saturate:
    """Keeps another CM's queue full of MTU packets (a greedy neighbour on the channel)."""

    __slots__ = ("cm", "engine", "pkt")

    def __init__(self, engine, cm) -> None:
        self.engine = engine
        self.cm = cm
        self.pkt = Packet(DATA, -1, 0, 1500, 0.0)
        engine.at(0.0, self.top_up)

    def top_up(self, _=None) -> None:
        while self.cm.send(self.pkt):
            pass
        self.engine.after(0.001, self.top_up)
