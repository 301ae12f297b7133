"""The upload experiment: one upstream service flow under bulk TCP, with probes and maybe a voice call.

The one place a campaign point (``hfcprov.lab``) and ``buffer advise --model sim``
(``SimModel``, the sizing policy's simulated model) build what they simulate, so that for
the same tier, RTT and traffic both run the same scenarios and the sizing policy picks the
same size.
"""

from __future__ import annotations

import functools
import statistics

from hfcprov.model import BufferControl, ServiceFlow
from hfcprov.queue.inputs import SizingInputs
from hfcprov.queue.predict import Prediction, latency_under_load
from hfcprov.queue.select import aqm_overrides
from hfcprov.queue.sizing import queue_delay
from hfcprov.results import RunResult
from hfcprov.sim.scenario import FlowSpec, LossSpec, Scenario, TcpOptions

# How a report names the simulator model behind a figure, per upstream link model.
MODEL_NAMES = {"tokenbucket": "sim: token bucket", "docsis": "sim: DOCSIS request-grant MAC"}


def model_name(mac: str) -> str:
    return MODEL_NAMES.get(mac, f"sim: {mac}")


def tier_flow(rate: float, buffer: int) -> ServiceFlow:
    """A tier given by its numbers alone: an upstream flow with a rate and a TargetBuffer (24.35.2)."""
    return ServiceFlow(direction="upstream", ref=1, qos_param_set_type=7, max_sustained_rate=rate,
                       buffer=BufferControl(target=buffer), buffer_source="24.35")


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
                    duration: float = 20.0, warmup: float = 5.0, seed: int = 1, name: str = "") -> Scenario:
    """``flows`` bulk uploads through ``flow`` over ``rtt``, probed every ``probe_interval``.

    ``duration`` is the measured time, after ``warmup`` (the simulator's own duration includes it).
    """
    return Scenario.from_service_flow(
        flow, rtt=rtt, flows=[FlowSpec() for _ in range(flows)], tcp=host_tcp(congestion_control, mac),
        data_loss=LossSpec(model="bernoulli", rate=loss) if loss else LossSpec(),
        probe_rate=1.0 / probe_interval, mac=mac, duration=warmup + duration, warmup=warmup, seed=seed,
        name=name, **aqm_overrides(aqm, flow))


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
    result.extra["model"] = model_name(scenario.mac)
    return result


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
        return f"sim:{tier.mac}" + ("+docsis-pie" if tier.aqm_latency_target is not None else "")

    def scenario(self, tier: SizingInputs, buffer: int, seed: int | None = None) -> Scenario:
        """``duration`` is the measured time, after ``warmup`` (as a campaign's traffic counts it)."""
        sc = upload_scenario(tier_flow(tier.rate, buffer), rtt=tier.rtt, flows=tier.flows,
                             congestion_control=tier.congestion_control, mac=tier.mac,
                             probe_interval=self.probe_interval, duration=self.duration, warmup=self.warmup,
                             seed=self.seed if seed is None else seed,
                             name=f"{tier.rate:g}b/s {buffer}B {tier.rtt:g}s x{tier.flows}")
        if tier.aqm_latency_target is not None:
            return sc.replace(sample_interval=None, aqm="docsis-pie",
                              aqm_params={"latency_target": tier.aqm_latency_target})
        return sc.replace(sample_interval=None)

    def prediction(self, tier: SizingInputs, buffer: int, results: list) -> Prediction:
        added = _median_of([queue_delay(r.latency_loaded.p50, r.latency_idle.p50, tier.rtt) for r in results])
        if added is None:
            added = latency_under_load(buffer, tier.rate)
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
