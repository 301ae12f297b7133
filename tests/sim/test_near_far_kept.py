"""bench/sim_vs_emu.py --near-far keeps the kernel's goodput pairs (``--json``) and compares the simulator
with a kept file (``--sim-from``) without the bed: the near/far comparison against Linux reproduces on any
machine."""

from __future__ import annotations

import importlib.util
import json
import sys

from tests.support import REPO


def _bench():
    spec = importlib.util.spec_from_file_location("sim_vs_emu_nf", REPO / "bench" / "sim_vs_emu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_kept_kernel_run_is_compared_without_the_bed(tmp_path, monkeypatch, capsys):
    b = _bench()
    kept = {"near": 0.02, "far": 0.08, "window": 2.0, "warmup": 1.0, "cases": {
        "10Mb/s/256KiB/20ms/1xreno+far80ms": {"kernel": [[6e6, 3e6], [5e6, 4e6], [6.3e6, 3e6]],
                                               "loads": [0.2, 0.3, 0.1]}}}
    path = tmp_path / "nf.json"
    path.write_text(json.dumps(kept))
    monkeypatch.setattr(b.topology, "up", lambda *a, **k: (_ for _ in ()).throw(AssertionError("no bed")))
    monkeypatch.setattr(sys, "argv", ["sim_vs_emu.py", "--near-far", "20ms,80ms", "--rates", "10M,50M",
                                      "--buffers", "256KiB", "--cc", "reno", "--sim-from", str(path),
                                      "--sim-seeds", "1"])
    assert b.main() == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("10Mb/s/256KiB/reno"))
    assert "2.00 [1.25-2.10]" in row  # the kept runs' ratio, median [min-max]
    assert "0.1-0.3" in row  # their load
    assert "50Mb/s" not in out.split("ratio err")[1]  # a case the file does not hold is left out
    assert "3 kernel runs, simulator seeds 1..1" in out
