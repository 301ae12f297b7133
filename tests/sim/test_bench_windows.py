"""bench/sim_vs_emu.py's measured windows: a case with random loss is measured long enough to hold many
losses, not for the few buffer sawtooth periods a loss-free case needs."""

from __future__ import annotations

import importlib.util

from tests.support import REPO


def _bench():
    spec = importlib.util.spec_from_file_location("sim_vs_emu_windows", REPO / "bench" / "sim_vs_emu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_lossy_case_gets_the_loss_window_and_a_clean_one_its_sawtooth():
    b = _bench()
    case = (30e6, 192 * 1024, 0.03, 1, "reno")
    clean = b.window_for(*case, 10.0, 2.0, 120.0)
    assert 10.0 <= clean < b.LOSS_WINDOW  # two Reno sawtooth periods here: 14 s
    assert b.window_for(*case, 10.0, 2.0, 120.0, loss=0.002) == b.LOSS_WINDOW
    assert b.window_for(*case, 10.0, 2.0, 20.0, loss=0.002) == 20.0  # --max-window still caps it
    assert b.window_for(*case, 45.0, 2.0, 120.0, loss=0.002) == 45.0  # --duration longer than the floor wins
