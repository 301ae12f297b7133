"""Run the probe across an emulated modem: responder on the server, probe on the CPE host.

The probe runs as its own process in the CPE namespace (``hfcprov probe run``),
so its sockets, routes and capture are exactly a home host's; the result
comes back as the JSON it writes.

The plant's userspace parts (delay line, AQM stage) keep their own time account
(``hfcprov.emu.timekeeping``); a measurement during which they fell behind (a busy
machine) is taken again, and after ``ATTEMPTS`` of them ``FellBehind`` says so, instead
of returning figures of a slower plant. The account is in the result's ``extra["timekeeping"]``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from hfcprov.emu import timekeeping
from hfcprov.emu.topology import ADDR, EmuError, Lab, stop_process
from hfcprov.probe import DEFAULT_PORT
from hfcprov.probe.run import ProbeSpec
from hfcprov.results import RunResult

RESPONDER_PORT = DEFAULT_PORT


def start_responder(lab: Lab, port: int = RESPONDER_PORT, timeout: float = 10.0,
                    priority: int | None = timekeeping.HOST_PRIORITY) -> int:
    """Start the probe responder in the server namespace; returns its pid once it says it listens."""
    return lab.spawn("srv", [sys.executable, "-m", "hfcprov.probe.responder", "--port", str(port)],
                     ready=f"responder listening on 0.0.0.0:{port} (udp echo, tcp bulk)", timeout=timeout,
                     priority=priority)


def measure(lab: Lab, spec: ProbeSpec, host_priority: int | None = timekeeping.HOST_PRIORITY,
            attempts: int = timekeeping.ATTEMPTS) -> RunResult:
    """Measure ``spec`` (its target defaults to the lab's server) from the CPE host of ``lab``.

    The hosts (probe, responder) run SCHED_FIFO at ``host_priority``; None leaves them at normal
    scheduling (``bench/emu_timekeeping.py`` measures what that costs on a busy machine). A
    measurement during which the plant fell behind is taken again, ``attempts`` times at most
    (``timekeeping.in_time``; then ``timekeeping.FellBehind``)."""
    spec = ProbeSpec(**{**asdict(spec), "target": spec.target or ADDR["srv"], "source": "emu"})
    if spec.shaped_rate_bps is None:
        queue = (lab.applied() or {}).get("queues", lab.queues).get(spec.direction) or {}
        spec.shaped_rate_bps = queue.get("rate_bps")
    result, kept = timekeeping.in_time(lab.timekeeping, lambda: _measure_once(lab, spec, host_priority), attempts,
                                       f"the emulated plant of {lab.name}")
    if kept is not None:
        result.extra["timekeeping"] = kept
    return result


def _measure_once(lab: Lab, spec: ProbeSpec, host_priority: int | None) -> RunResult:
    responder = start_responder(lab, spec.port, priority=host_priority)
    try:
        with tempfile.TemporaryDirectory(prefix="hfemu-probe-") as tmp:
            out = Path(tmp) / "result.json"
            argv = [sys.executable, "-m", "hfcprov.probe.worker", json.dumps(asdict(spec)), str(out)]
            proc = subprocess.Popen(["ip", "netns", "exec", lab.ns("cpe"), *argv], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            scheduling = (timekeeping.raise_priority(host_priority, proc.pid) if host_priority is not None
                          else "normal")  # the home host
            try:
                _, stderr = proc.communicate(timeout=spec.idle + spec.warmup + spec.duration + 60)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, stderr = proc.communicate()
            if proc.returncode != 0 or not out.exists():
                last = (stderr.strip().splitlines() or ["no output"])[-1]
                raise EmuError(f"probe in {lab.ns('cpe')} failed: {last}")
            result = RunResult.from_dict(json.loads(out.read_text()))
    finally:
        stop_process(responder)
    result.extra["host_scheduling"] = scheduling
    return result
