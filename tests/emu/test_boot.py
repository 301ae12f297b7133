"""The modem boots like a real one: TFTP fetch of a file hfcprov built, decode, apply, SNMP, reset."""

import json
import subprocess
import sys

import pytest

from hfcprov.config import encode, parse_text
from hfcprov.emu.topology import ADDR
from hfcprov.model import service_flows
from tests.emu import tcview

pytestmark = pytest.mark.root

CONFIG = """Main {
  NetworkAccess 1;
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 2000000; MaxTrafficBurst 3044;
                  BufferControl { TargetBuffer 16384; } }
  DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 10000000;
                  BufferControl { MinimumBuffer 8192; TargetBuffer 65536; } }
}"""

SNMP_SCRIPT = """
import json, sys
from hfcprov.snmp import oids, ops
from hfcprov.snmp.client import Credentials, SnmpClient, run
want = [oids.SYS_DESCR, oids.CONFIG_FILE, oids.RESET_NOW]
async def go():
    c = SnmpClient(Credentials(), timeout=1.0, retries=9)  # a busy machine's agent may take a few seconds
    try:
        got = await c.get(sys.argv[1], 161, want)
    finally:
        c.close()
    if sys.argv[2] == "reset":  # the snmp engineer's reset, as an operator would run it
        await ops.reset(sys.argv[1], 161, Credentials())
    return got
got = run(go())
print(json.dumps({k: (v.decode() if isinstance(v, bytes) else v) for k, v in got.items()}))
"""


def snmp(lab, action="get"):
    proc = subprocess.run(["ip", "netns", "exec", lab.ns("cmts"), sys.executable, "-c", SNMP_SCRIPT, ADDR["cm_rf"],
                           action], check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-800:]
    return json.loads(proc.stdout)


def qdisc(lab, dev):
    """The primary flow's class as the kernel has it: root kind, class rate (bit/s), leaf queue."""
    return {"root": tcview.qdiscs(lab, dev)[0]["kind"], "rate": tcview.classes(lab, dev).get("1:1", {}).get("rate"),
            "leaf": tcview.leaf(lab, dev, "1:1")}


@pytest.mark.slow
def test_modem_boots_from_a_file_hfcprov_built_and_applies_and_reports_its_values(lab_factory, tmp_path):
    from hfcprov.snmp import oids

    data = encode(parse_text(CONFIG))
    (tmp_path / "gold.cm").write_bytes(data)
    lab = lab_factory()
    applied = lab.boot(tmp_path, "gold.cm")
    assert applied["status"] == "operational" and applied["config_file"] == "gold.cm"
    # the queues in the kernel are the file's flows
    file_flows = {f.direction: f for f in service_flows(parse_text(CONFIG))}
    for direction, dev in (("upstream", "rf"), ("downstream", "lan")):
        q = qdisc(lab, dev)
        f = file_flows[direction]
        assert q["root"] == "htb" and q["leaf"]["kind"] == "bfifo"
        assert q["rate"] == f.max_sustained_rate
        assert q["leaf"]["options"]["limit"] == f.buffer.target
        assert applied["queues"][direction]["buffer"] == f.buffer.target
    tftp_log = (lab.state_dir / "tftp.log").read_text()
    assert "gold.cm" in tftp_log
    # SNMP answers what was applied
    got = snmp(lab)
    assert got[oids.CONFIG_FILE] == "gold.cm"
    assert "hfcprov emulated cable modem" in got[oids.SYS_DESCR]
    assert got[oids.RESET_NOW] == 2


@pytest.mark.slow
def test_reset_refetches_and_reapplies_a_changed_file(lab_factory, tmp_path):
    (tmp_path / "m.cm").write_bytes(encode(parse_text(CONFIG)))
    lab = lab_factory()
    lab.boot(tmp_path, "m.cm")
    assert qdisc(lab, "rf")["rate"] == 2_000_000
    # the operator changes the file, then resets the modem over SNMP
    (tmp_path / "m.cm").write_bytes(encode(parse_text(CONFIG.replace("MaxRateSustained 2000000", "MaxRateSustained 4000000"))))
    snmp(lab, "reset")
    applied = lab.wait_boot(2, timeout=120)  # a hang guard: a busy machine boots slowly, not wrongly
    assert applied["boots"] == 2 and applied["status"] == "operational"
    assert qdisc(lab, "rf")["rate"] == 4_000_000
    from hfcprov.snmp import oids

    assert snmp(lab)[oids.RESET_NOW] == 2


@pytest.mark.slow
def test_flow_the_modem_cannot_honour_is_refused_and_logged(lab_factory, tmp_path):
    big = CONFIG.replace("MinimumBuffer 8192; TargetBuffer 65536;", "MinimumBuffer 4000000; TargetBuffer 4000000;")
    (tmp_path / "big.cm").write_bytes(encode(parse_text(big)))
    lab = lab_factory()
    applied = lab.boot(tmp_path, "big.cm")
    assert len(applied["rejected"]) == 1 and "MinimumBuffer 4000000" in applied["rejected"][0]
    assert "downstream" not in applied["queues"] and "upstream" in applied["queues"]
    assert "MinimumBuffer 4000000" in (lab.state_dir / "modem.log").read_text()
    assert qdisc(lab, "lan")["root"] != "htb"


def test_corrupt_file_fails_the_boot_with_the_reason(lab_factory, tmp_path):
    data = bytearray(encode(parse_text(CONFIG)))
    data[5] ^= 0xFF  # breaks the CM MIC (or a TLV), as a bad file would
    (tmp_path / "bad.cm").write_bytes(bytes(data))
    lab = lab_factory()
    applied = lab.boot(tmp_path, "bad.cm")
    assert applied["status"] == "config-rejected" and applied["reason"]
