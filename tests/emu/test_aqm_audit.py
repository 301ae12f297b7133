"""The emulated modem reports the AQM it runs (DOCS-QOS3-MIB AQM columns) and the audit agrees with it."""

import json
import subprocess
import sys

import pytest

from hfcprov.config import encode, parse_text
from hfcprov.emu.topology import ADDR
from hfcprov.fileio import atomic_write

pytestmark = pytest.mark.root

CONFIG = """Main {
  NetworkAccess 1;
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 2000000;
                  BufferControl { TargetBuffer 65536; } AQMEncodings { SFAQMLatencyTarget 20; } }
  DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 10000000; }
}"""


def audit(lab, tmp_path):
    inv = tmp_path / "inv.csv"
    atomic_write(inv, f"mac,ip,port,config\n00aa00000701,{ADDR['cm_rf']},161,gold.cm\n")
    proc = subprocess.run(["ip", "netns", "exec", lab.ns("cmts"), sys.executable, "-m", "hfcprov", "snmp", "audit",
                           "--inventory", str(inv), "--configs", str(tmp_path), "--format", "json",
                           "--timeout", "1s"], check=False, capture_output=True, text=True, timeout=60)
    return proc.returncode, json.loads(proc.stdout.splitlines()[0]) if proc.stdout.strip() else proc.stderr


@pytest.mark.parametrize("version, exposed", [("3.1", True), ("3.0", False)])
@pytest.mark.slow
def test_the_audit_of_the_emulated_modem_compares_its_aqm(lab_factory, tmp_path, version, exposed):
    (tmp_path / "gold.cm").write_bytes(encode(parse_text(CONFIG)))
    lab = lab_factory(docsis_version=version)
    applied = lab.boot(tmp_path, "gold.cm")
    assert applied["status"] == "operational"
    assert "aqm" in applied["queues"]["upstream"]  # the file's 24.40 asks for AQM: 3.0 and 3.1 run it
    rc, row = audit(lab, tmp_path)
    assert rc == 0 and row["status"] == "in-sync", row
    assert row["aqm_exposed"] is exposed, row


@pytest.mark.slow
def test_two_upstream_flows_both_run_aqm_and_the_audit_agrees(lab_factory, tmp_path):
    """Two upstream flows: the stage runs one queue per flow (aqmstage.plan_stage), so the modem reports
    AQM on for both, as the model's rule (DOCSIS 3.1) expects, and the audit finds them in sync."""
    second = ("DsServiceFlow { DsServiceFlowRef 2;",
              "UsServiceFlow { UsServiceFlowRef 3; QosParamSetType 7; MaxRateSustained 128000; }\n"
              "  DsServiceFlow { DsServiceFlowRef 2;")
    (tmp_path / "gold.cm").write_bytes(encode(parse_text(CONFIG.replace(*second))))
    lab = lab_factory(docsis_version="3.1")
    applied = lab.boot(tmp_path, "gold.cm")
    up = applied["queues"]["upstream"]
    assert [f["stage"] for f in up["aqm"]["flows"]] == ["pie", "pie"], up
    rc, row = audit(lab, tmp_path)
    assert rc == 0 and row["status"] == "in-sync", row
