"""The floors stay one-way: hfcprov.queue sits on model/config/units/errors, and the emulator and the
templates reach the queue without loading the simulator.

Each check imports in a fresh interpreter: this test session has loaded the simulator already.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support import REPO

QUEUE_MODULES = ("pie", "dualq", "qprotect", "ecn", "select", "grant", "profile", "inputs", "sizing", "predict",
                 "socketbuf")


def loaded_after(*modules: str) -> set[str]:
    """The hfcprov modules a fresh interpreter holds after importing ``modules``."""
    code = ("import importlib, json, sys\n"
            f"for m in {list(modules)!r}: importlib.import_module(m)\n"
            "print(json.dumps(sorted(m for m in sys.modules if m == 'hfcprov' or m.startswith('hfcprov.'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def test_the_emulators_packet_stage_loads_nothing_of_the_simulator():
    loaded = loaded_after("hfcprov.emu.aqmstage")
    assert "hfcprov.queue.pie" in loaded and "hfcprov.queue.dualq" in loaded  # the algorithms it runs
    assert sorted(m for m in loaded if m.startswith("hfcprov.sim")) == []


def test_the_queue_room_imports_only_model_config_units_and_errors():
    below = loaded_after("hfcprov.model", "hfcprov.config", "hfcprov.units", "hfcprov.errors")
    loaded = loaded_after(*(f"hfcprov.queue.{m}" for m in QUEUE_MODULES))
    assert sorted(loaded - below - {"hfcprov.queue"} - {f"hfcprov.queue.{m}" for m in QUEUE_MODULES}) == []


def test_templates_and_bulk_builds_size_buffers_without_the_simulator():
    loaded = loaded_after("hfcprov.tiers.templates", "hfcprov.tiers.bulk", "hfcprov.tiers.inventory")
    assert "hfcprov.queue.sizing" in loaded
    assert sorted(m for m in loaded if m.startswith(("hfcprov.sim", "hfcprov.emu", "hfcprov.lab"))) == []
