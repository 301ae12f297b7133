"""Issue 27, item 5: `hfcprov snmp demo-agent` serves the user's own files (one modem in sync, one drifted)
over real SNMP agents, so `snmp audit` can be tried without hardware."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO

EXAMPLE = REPO / "examples" / "buffer-control.cfg"



def _demo(*args):
    """The demo-agent process (we started it: we stop it) and its printed lines up to the audit command."""
    # started with SIGINT ignored, as a shell's background job (or a CI runner) starts it: Ctrl-C must still stop it
    proc = subprocess.Popen([sys.executable, "-m", "hfcprov", "snmp", "demo-agent", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    lines = []
    for line in proc.stdout:  # synchronise on what it prints, once its agents answer
        lines.append(line.rstrip("\n"))
        if line.strip().startswith("hfcprov snmp audit"):
            return proc, lines
    proc.wait(timeout=30)
    raise AssertionError(f"demo-agent ended: {proc.returncode} {proc.stderr.read()}")


def _stop(proc):
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)  # the agents stop in seconds
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return proc.returncode


@pytest.mark.slow  # an snmpsim agent and a real audit: ~10 s on a busy machine
def test_the_demo_serves_your_file_in_sync_and_drifted_and_the_audit_finds_which(tmp_path):
    text = tmp_path / "my-tier.cfg"
    text.write_text(EXAMPLE.read_text())
    proc, lines = _demo(text, "--listen", "127.0.0.1:0")
    try:
        audit = lines[-1].split()
        assert audit[:3] == ["hfcprov", "snmp", "audit"]
        folder = Path(audit[audit.index("--inventory") + 1]).parent
        assert "in sync" in lines[1] and "drifted: " in lines[2] and "TargetBuffer 65536" in lines[2]
        r = subprocess.run([sys.executable, "-m", "hfcprov", *audit[1:], "--format", "json"], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 4, r.stderr  # drift: its own exit status
        rows = [json.loads(line) for line in r.stdout.splitlines()]
        assert sorted(row["status"] for row in rows) == ["drifted", "in-sync"]
        assert {row["config_file"] for row in rows} == {"my-tier.cm"}
        drifted = next(row for row in rows if row["status"] == "drifted")
        assert "target buffer 32768 asked, 65536 applied" in drifted["detail"]
    finally:
        assert _stop(proc) == 0
    assert not folder.exists()  # a temporary folder goes with the agents


@pytest.mark.slow
def test_the_demo_keeps_its_files_in_a_folder_you_name(tmp_path):
    proc, lines = _demo(EXAMPLE, EXAMPLE, "--listen", "127.0.0.1:0", "--dir", tmp_path / "demo")
    try:
        assert len([line for line in lines if re.match(r"\s+0200000000", line)]) == 4
    finally:
        _stop(proc)
    assert (tmp_path / "demo" / "inventory.csv").read_text().count("\n") == 5
    assert sorted(p.name for p in (tmp_path / "demo" / "configs").iterdir()) == ["buffer-control-1.cm",
                                                                                 "buffer-control.cm"]


def test_a_file_without_service_flows_is_one_line(tmp_path):
    bare = tmp_path / "bare.cfg"
    bare.write_text("Main { NetworkAccess 1; }\n")
    r = subprocess.run([sys.executable, "-m", "hfcprov", "snmp", "demo-agent", str(bare), "--listen", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "bare.cfg: no service flow" in r.stderr and "Traceback" not in r.stderr


def test_the_readme_tries_it():
    readme = (REPO / "README.md").read_text()
    tries = readme.split("A few things to try")[1].split("```")[1]
    assert "hfcprov snmp demo-agent" in tries and "snmp audit" in tries
