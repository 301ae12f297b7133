"""Run the probe across an emulated modem: responder on the server, probe on the CPE host.

The probe runs as its own process in the CPE namespace (``hfcprov probe run``),
so its sockets, routes and capture are exactly a home host's; the result
comes back as the JSON it writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from hfcprov.emu import netns
from hfcprov.emu.topology import ADDR, EmuError, Lab, stop_process
from hfcprov.probe.run import ProbeSpec
from hfcprov.results import RunResult

RESPONDER_PORT = 5201


def start_responder(lab: Lab, port: int = RESPONDER_PORT, timeout: float = 10.0) -> int:
    """Start the probe responder in the server namespace; returns its pid once it listens."""
    pid = lab.spawn("srv", [sys.executable, "-m", "hfcprov.probe.responder", "--port", str(port)])
    deadline = time.monotonic() + timeout
    while f":{port:04X} " not in netns.run(["cat", "/proc/net/tcp"], ns=lab.ns("srv")):
        if time.monotonic() > deadline:
            stop_process(pid)
            raise EmuError(f"probe responder did not start in {lab.ns('srv')}")
        time.sleep(0.05)
    return pid


def measure(lab: Lab, spec: ProbeSpec) -> RunResult:
    """Measure ``spec`` (its target defaults to the lab's server) from the CPE host of ``lab``."""
    spec = ProbeSpec(**{**asdict(spec), "target": spec.target or ADDR["srv"], "source": "emu"})
    if spec.shaped_rate_bps is None:
        queue = (lab.applied() or {}).get("queues", lab.queues).get(spec.direction) or {}
        spec.shaped_rate_bps = queue.get("rate_bps")
    responder = start_responder(lab, spec.port)
    try:
        with tempfile.TemporaryDirectory(prefix="hfemu-probe-") as tmp:
            out = Path(tmp) / "result.json"
            argv = [sys.executable, "-m", "hfcprov.probe.worker", json.dumps(asdict(spec)), str(out)]
            proc = subprocess.run(["ip", "netns", "exec", lab.ns("cpe"), *argv], check=False, capture_output=True, text=True,
                                  timeout=spec.idle + spec.warmup + spec.duration + 60)
            if proc.returncode != 0 or not out.exists():
                last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                raise EmuError(f"probe in {lab.ns('cpe')} failed: {last}")
            return RunResult.from_dict(json.loads(out.read_text()))
    finally:
        stop_process(responder)
