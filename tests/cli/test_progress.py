"""Progress with time left: whole lines every few seconds when stderr is not a terminal (a CI log), a bar
only on a terminal, nothing when quiet."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from hfcprov.cli.progress import ProgressReport, eta_seconds


def test_eta_is_the_rate_so_far():
    assert eta_seconds(0, 10, 5.0) is None
    assert eta_seconds(2, 10, 4.0) == pytest.approx(16.0)
    assert eta_seconds(10, 10, 4.0) == 0.0


def test_not_a_terminal_gives_whole_periodic_lines():
    out = io.StringIO()  # isatty() is False, as for a log file
    p = ProgressReport("rows", stream=out, every=0.0)
    assert p.mode == "lines"
    p.update(0, 4)
    p.advance()
    p.advance(failed=True)
    p.close()
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()  # no redraws, no escapes
    assert lines[-1].startswith("hfcprov: rows: 2/4, 1 failed, ") and "elapsed, about " in lines[-1]
    assert lines[-1].endswith(" left")


def test_lines_are_rate_limited():
    out = io.StringIO()
    p = ProgressReport("rows", stream=out, every=3600.0)
    p.update(0, 100)
    for _ in range(100):
        p.advance()
    assert out.getvalue() == ""


def test_off_prints_nothing():
    out = io.StringIO()
    p = ProgressReport("rows", stream=out, mode="off", every=0.0)
    p.update(1, 2)
    assert out.getvalue() == ""


def test_quiet_build_prints_only_the_result(tmp_path):
    inv = tmp_path / "m.csv"
    inv.write_text("mac,tier\n000000000001,res-50x5\n")
    r = subprocess.run([sys.executable, "-m", "hfcprov", "-q", "build", "-i", str(inv), "-o", str(tmp_path / "o"),
                        "--progress", "--no-cmts-mic"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == ""
