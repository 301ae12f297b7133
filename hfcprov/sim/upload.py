"""The upload experiment: one upstream service flow under bulk TCP, with probes and maybe a voice call.

The one place a campaign point (``hfcprov.lab``) and ``buffer advise --model sim``
(``SimModel``, the sizing policy's simulated model) build what they simulate, so that for
the same tier, RTT and traffic both run the same scenarios and the sizing policy picks the
same size.
"""

from __future__ import annotations

import dataclasses
import functools
import statistics

from hfcprov.model import BufferControl, ServiceFlow
from hfcprov.queue.inputs import SizingError, SizingInputs
from hfcprov.queue.predict import Prediction, latency_under_load
from hfcprov.queue.profile import parse_profile
from hfcprov.queue.select import aqm_overrides
from hfcprov.queue.sizing import queue_delay
from hfcprov.results import RunResult
from hfcprov.sim.scenario import FlowSpec, LossSpec, Scenario, TcpOptions

# How a report names the simulator model behind a figure, per upstream link model.
MODEL_NAMES = {"tokenbucket": "sim: token bucket", "docsis": "sim: DOCSIS request-grant MAC"}


def model_name(mac: str, profile: str | None = None) -> str:
    """``sim: token bucket`` or ``sim: DOCSIS request-grant MAC (docsis3.1)``: the model and the profile."""
    name = MODEL_NAMES.get(mac, f"sim: {mac}")
    return f"{name} ({parse_profile(profile).name})" if mac == "docsis" else name


def tier_flow(rate: float, buffer: int, burst: int | None = None, peak: float | None = None) -> ServiceFlow:
    """A tier given by its numbers: an upstream flow with a rate and a TargetBuffer (24.35.2), and the
    Max Traffic Burst and Peak Rate when given (None: the DOCSIS defaults, 3044 B and no peak)."""
    return ServiceFlow(direction="upstream", ref=1, qos_param_set_type=7, max_sustained_rate=rate,
                       max_traffic_burst=burst, peak_rate=peak, buffer=BufferControl(target=buffer),
                       buffer_source="24.35")


def host_tcp(congestion_control: str | None, mac: str) -> TcpOptions:
    """The hosts' TCP: the congestion control (None: the simulator's default); with the DOCSIS MAC
    also the Linux-like timers the MAC was calibrated with (``hfcprov.sim.mac.CALIBRATED_TCP``:
    200 ms minimum RTO, 40 ms delayed-ACK timer), so ``mac: docsis`` is the calibrated model."""
    options = {"variant": congestion_control} if congestion_control else {}
    if mac == "docsis":
        from hfcprov.sim.mac import CALIBRATED_TCP

        options.update(CALIBRATED_TCP)
    return TcpOptions(**options)


def upload_scenario(flow: ServiceFlow, *, rtt: float, flows: int = 1, congestion_control: str | None = "cubic",
                    mac: str = "docsis", loss: float = 0.0, aqm: str = "none", probe_interval: float = 0.1,
                    duration: float = 20.0, warmup: float = 5.0, seed: int = 1, name: str = "",
                    profile: str | None = None, queue: dict | None = None, far_rtt: float | None = None) -> Scenario:
    """``flows`` bulk uploads through ``flow`` over ``rtt``, probed every ``probe_interval``, on the modem
    ``profile`` (None: the default; it decides the request-grant model and, with ``aqm: file``, the AQM
    rule the modem applies to the flow).

    ``duration`` is the measured time, after ``warmup`` (the simulator's own duration includes it).
    ``queue``: the scenario keys of the queue the modem gives the traffic, as a config file decides
    them (``hfcprov.sim.fromconfig.tree_queue``: an aggregate service flow's dual queue); None: the
    flow's own (``flow_keys``) under the ``aqm`` axis value (``aqm_overrides``).
    ``far_rtt``: a second, farther server; flows 2, 4, ... (odd indices) go there.
    """
    modem = parse_profile(profile)
    common = dict(rtt=rtt, flows=[FlowSpec(rtt=far_rtt if i % 2 else None) for i in range(flows)],
                  tcp=host_tcp(congestion_control, mac),
                  data_loss=LossSpec(model="bernoulli", rate=loss) if loss else LossSpec(),
                  probe_rate=1.0 / probe_interval, mac=mac, profile=modem.name if mac == "docsis" else None,
                  duration=warmup + duration, warmup=warmup, seed=seed, name=name)
    if queue is not None:
        return Scenario(**{**queue, **common})
    return Scenario.from_service_flow(flow, modem.aqm_rule_version, **common, **aqm_overrides(aqm, flow))


def simulate(scenario: Scenario, voice: bool = False) -> RunResult:
    """Run one upload; top-level (picklable) so process pools and Dask workers can call it.

    ``voice``: a G.711 call rides beside the bulk flows and ``RunResult.mos`` scores it (White et al. Fig. 9).
    """
    if voice:
        from hfcprov.sim.run import run_with_voice

        result = run_with_voice(scenario)
    else:
        from hfcprov.sim.run import run

        result = run(scenario)
    result.extra["model"] = model_name(scenario.mac, scenario.profile)
    return result


# A simulated upstream carrying less than this share of the tier's rate (goodput over the rate, TCP/IP and
# Ethernet headers included: 1460 B of payload in a 1518 B frame is 96%) with an unbounded buffer is a model error
CARRY_SHARE = 0.85


class SimModel:
    """The simulator as the sizing policy's model (``hfcprov.queue.predict.Model``): each
    ``(SizingInputs, buffer)`` cell is this module's upload experiment (the same flow, hosts, probes
    and voice call a campaign point runs), repeated with seeds ``seed .. seed+seeds-1`` as a
    campaign's repetitions are; the figures are the medians. The tier gives the rate, RTT, flows,
    the senders' TCP, the upstream model and the AQM (DOCSIS-PIE at its latency target); the
    knobs here are the experiment's. Latency under load is ``queue_delay`` (loaded median RTT less
    the idle one, as the campaign report has it); utilization is goodput over the flow's rate.
    A table runs in parallel processes (``jobs``).
    """

    measures = True  # the sizing policy chooses from these figures, as a campaign from its points

    def __init__(self, duration: float = 15.0, warmup: float = 5.0, seed: int = 1, jobs: int | None = None,
                 seeds: int = 1, voice: bool = False, probe_interval: float = 0.1):
        self.duration, self.warmup, self.seed, self.jobs = duration, warmup, seed, jobs
        self.seeds, self.voice, self.probe_interval = seeds, voice, probe_interval

    @staticmethod
    def name(tier: SizingInputs) -> str:
        aqm = "+docsis-pie" if tier.aqm_latency_target is not None else ""
        return f"sim:{tier.mac}{aqm}" + (f" ({tier.modem.name})" if tier.mac == "docsis" else "")

    def scenario(self, tier: SizingInputs, buffer: int | None, seed: int | None = None) -> Scenario:
        """``duration`` is the measured time, after ``warmup`` (as a campaign's traffic counts it). The flow
        has the tier's burst and peak (``SizingInputs.tier_burst``, ``tier_peak``)."""
        sc = upload_scenario(tier_flow(tier.rate, buffer or 1 << 20, tier.tier_burst, tier.tier_peak), rtt=tier.rtt,
                             flows=tier.flows, congestion_control=tier.congestion_control, mac=tier.mac,
                             probe_interval=self.probe_interval, duration=self.duration, warmup=self.warmup,
                             seed=self.seed if seed is None else seed, profile=tier.profile,
                             name=f"{tier.rate:g}b/s {buffer}B {tier.rtt:g}s x{tier.flows}")
        sc = sc.replace(sample_interval=None, buffer=buffer)  # None: unbounded (``carries``)
        if tier.aqm_latency_target is not None:
            return sc.replace(aqm="docsis-pie", aqm_params={"latency_target": tier.aqm_latency_target})
        return sc.replace(aqm="none", aqm_params=None)

    def carries(self, tier: SizingInputs, share: float = CARRY_SHARE) -> float:
        """The simulated upstream's goodput share of the tier's rate with an unbounded buffer (drop-tail);
        below ``share`` it is a model error (``SizingError``, one line): no buffer size recommends
        itself against a plateau under the rate the tier is configured for."""
        plain = dataclasses.replace(tier, aqm_latency_target=None)
        (got,) = self([(plain, None)])
        if got.utilization < share:
            cause = ""
            cap = tier.burst_cap()
            if cap is not None:
                cause = (f": its Max Traffic Burst of {tier.tier_burst} B caps it at about {cap / 1e6:.1f} Mb/s on "
                         f"{tier.modem.name}'s MAPs; give a larger --burst")
            raise SizingError(f"model error: the simulated upstream ({got.model}) carries only "
                              f"{got.utilization:.0%} of the {tier.rate / 1e6:g} Mb/s tier with an unbounded buffer"
                              f"{cause}; no buffer size is recommended against that plateau")
        return got.utilization

    def prediction(self, tier: SizingInputs, buffer: int, results: list) -> Prediction:
        added = _median_of([queue_delay(r.latency_loaded.p50, r.latency_idle.p50, tier.rtt) for r in results])
        if added is None:
            added = latency_under_load(buffer, tier.rate) if buffer else 0.0
        utilization = _median_of([r.utilization or 0.0 for r in results])
        return Prediction(tier.rate, buffer, tier.rtt, tier.flows, added, min(1.0, utilization), self.name(tier))

    def __call__(self, cells) -> list[Prediction]:
        from hfcprov.sim.run import run_many

        seeds = [self.seed + r for r in range(self.seeds)]  # a campaign's repetition r runs seed + r
        scenarios = [self.scenario(tier, b, seed=s) for tier, b in cells for s in seeds]
        results = run_many(scenarios, jobs=self.jobs, worker=functools.partial(simulate, voice=self.voice))
        n = len(seeds)
        return [self.prediction(tier, b, results[i * n:(i + 1) * n]) for i, (tier, b) in enumerate(cells)]


def _median_of(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None
