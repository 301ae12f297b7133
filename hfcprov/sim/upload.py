"""The upload experiment: one upstream service flow under bulk TCP, with probes and maybe a voice call.

The one place a campaign point (``hfcprov.lab``) and ``buffer advise --model sim``
(``hfcprov.tiers.advisor.SimModel``) build what they simulate, so that for the same tier,
RTT and traffic both run the same scenarios and the sizing policy picks the same size.
"""

from __future__ import annotations

from hfcprov.model import BufferControl, ServiceFlow
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
                    duration: float = 20.0, warmup: float = 5.0, seed: int = 1, name: str = "",
                    far_rtt: float | None = None) -> Scenario:
    """``flows`` bulk uploads through ``flow`` over ``rtt``, probed every ``probe_interval``.

    ``duration`` is the measured time, after ``warmup`` (the simulator's own duration includes it).
    ``far_rtt``: a second, farther server; flows 2, 4, ... (odd indices) go there.
    """
    from hfcprov.sim.aqm.select import aqm_overrides

    return Scenario.from_service_flow(
        flow, rtt=rtt, flows=[FlowSpec(rtt=far_rtt if i % 2 else None) for i in range(flows)],
        tcp=host_tcp(congestion_control, mac),
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
