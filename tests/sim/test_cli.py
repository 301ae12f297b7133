"""``hfcprov sim run`` / ``sim sweep`` as a user runs them: real files, real processes."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def hfcprov(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hfcprov", *args], capture_output=True, text=True, check=False,
                          cwd=cwd or REPO, timeout=120)


@pytest.mark.slow
def test_run_example_prints_a_table_and_writes_json_and_png(tmp_path):
    out, png = tmp_path / "r.json", tmp_path / "q.png"
    p = hfcprov("sim", "run", "examples/sim-upstream.yaml", "--set", "duration=8s", "--set", "warmup=3s",
                "--out", str(out), "--plot", str(png))
    assert p.returncode == 0, p.stderr
    assert "goodput_mbps" in p.stdout and "rtt_loaded_p50_ms" in p.stdout
    d = json.loads(out.read_text())
    assert d["source"] == "sim" and 0.8 < d["utilization"] < 1.0
    assert d["series"]["queue_bytes"] and d["latency_loaded"]["count"] > 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_json_output_has_the_tables_names_and_units(tmp_path):
    # issue 27: --json had other names than the table (goodput_bps, nested latency_loaded.p50)
    p = hfcprov("sim", "run", "examples/sim-cohen-loss.yaml", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["flows"][0]["bytes"] == 3_000_000 and "series" not in d
    table = hfcprov("sim", "run", "examples/sim-cohen-loss.yaml").stdout.split("\n\n")
    assert table[0].split("\n")[0].split() == list(d["flows"][0])
    assert table[1].split("\n")[0].split() == list(d["summary"])
    assert f"{d['summary']['goodput_mbps']:.4g}" in table[1]


@pytest.mark.parametrize("args,message", [
    (["examples/sim-upstream.yaml", "--set", "tcp.mss=abc"], "tcp.mss: bad size 'abc'"),
    (["examples/sim-upstream.yaml", "--set", "buffer=10"], "buffer: 10 bytes cannot hold one full-size packet"),
    (["missing.yaml"], "missing.yaml: cannot read"),
])
def test_mistakes_are_one_line_and_exit_1_and_write_nothing(tmp_path, args, message):
    out = tmp_path / "r.json"
    p = hfcprov("sim", "run", *args, "--out", str(out))
    assert p.returncode == 1
    assert message in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_a_value_the_simulator_refuses_names_the_file_and_the_sweep_point(tmp_path):
    # the range checks ran when the simulation started, so their line named the key but not the file
    f = tmp_path / "s.yaml"
    f.write_text("rate: 2M\nbuffer: 64KiB\nduration: 2s\ntcp: {rcv_window_clamp: -5}\n")
    p = hfcprov("sim", "run", str(f))
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.strip() == f"hfcprov: error: {f}: tcp.rcv_window_clamp: -5 must be >= 0 (0: the default)"
    sweep, out = tmp_path / "sweep.yaml", tmp_path / "sweep.csv"
    sweep.write_text("base: {rate: 2M, buffer: 64KiB, duration: 2s}\ngrid:\n  tcp.delack_count: [2, 0]\n")
    p = hfcprov("sim", "sweep", str(sweep), "--csv", str(out), "--no-progress")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert f"{sweep} [tcp.delack_count=0]: tcp.delack_count: must be >= 1" in p.stderr
    assert not out.exists()  # refused before the first point ran


def test_bad_yaml_names_the_line(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("rate: 2M\nbuffer: [64KiB\n")
    p = hfcprov("sim", "run", str(f))
    assert p.returncode == 1 and f"{f}:" in p.stderr and "not valid YAML" in p.stderr


@pytest.mark.slow
def test_sweep_writes_csv_with_one_row_per_point(tmp_path):
    f = tmp_path / "sweep.yaml"
    f.write_text("base: {rate: 2M, buffer: 64KiB, rtt: 40ms, duration: 6s, warmup: 2s, probe_rate: 5}\n"
                 "grid:\n  buffer: [16KiB, 256KiB]\n  flows: [1, 2]\n")
    out = tmp_path / "sweep.csv"
    p = hfcprov("sim", "sweep", str(f), "--jobs", "2", "--csv", str(out), "--no-progress")
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [(r["buffer"], r["flows"]) for r in rows] == [("16KiB", "1"), ("16KiB", "2"), ("256KiB", "1"), ("256KiB", "2")]
    # the bigger buffer holds more delay under load (White et al.)
    assert float(rows[2]["rtt_loaded_p50_ms"]) > 3 * float(rows[0]["rtt_loaded_p50_ms"])


@pytest.mark.slow
def test_run_from_a_binary_config_file_uses_its_upstream_service_flow(tmp_path):
    config = pytest.importorskip("hfcprov.config", reason="config codec (issue 1) not in this tree")
    tree = config.parse_text(
        "Main { UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 2000000; "
        "MaxTrafficBurst 3044; BufferControl { TargetBuffer 16384; } } "
        "DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 20000000; } }")
    cm = tmp_path / "modem.cm"
    cm.write_bytes(config.encode(tree))
    p = hfcprov("sim", "run", "--config", str(cm), "--set", "duration=12s", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)["summary"]
    assert 0.85 < d["utilization"] < 1.0 and 0.85 * 2 < d["goodput_mbps"] < 2.0
    # 16 KiB at 2 Mb/s adds up to 65 ms to the 40 ms default RTT (PIE on a 3.1 modem: less); idle, the request-grant
    # loop (the default profile's MAC) adds about 5 ms: a packet waits for a request opportunity and a grant
    assert 55 < d["rtt_loaded_p50_ms"] < 115 and 42 < d["rtt_idle_p50_ms"] < 48  # DOCSIS-PIE (3.1) holds it lower
    # no Buffer Control: the modem's default queue (hfcprov.model), and the CLI says so
    p = hfcprov("sim", "run", "--config", str(cm), "--flow", "2", "--set", "duration=7s", "--json")
    assert p.returncode == 0, p.stderr
    assert "25[0] (ref 2) has no TargetBuffer" in p.stderr and "65536 bytes" in p.stderr and "--set buffer=" in p.stderr
    p = hfcprov("sim", "run", "--config", str(cm), "--flow", "2", "--set", "buffer=256KiB", "--set", "duration=8s")
    assert p.returncode == 0, p.stderr


def test_run_says_when_the_upstream_cannot_carry_its_rate(tmp_path):
    """A scenario's upstream on the request-grant MAC is simulated as a real one carries it: MULPI's default
    3044 B burst caps a 600 Mb/s flow near 12 Mb/s, and a 1 Gb/s flow is beyond a 3.1 OFDMA channel beside
    80% load. `sim run` says which and why (queue.sizing.upstream_checks, the rule config lint applies)."""
    scenario = tmp_path / "up.yaml"
    base = ("rate: 600M\nbuffer: 1MiB\nrtt: 20ms\nmac: docsis\nprofile: docsis3.1\nflows: [{start: 0s}]\n"
            "duration: 2s\nwarmup: 1s\n")
    scenario.write_text(base)
    p = hfcprov("sim", "run", str(scenario), "--json")
    assert p.returncode == 0, p.stderr
    assert "MaxTrafficBurst 3044 B caps this 600 Mb/s flow at about 11.9 Mb/s" in p.stderr
    assert json.loads(p.stdout)["summary"]["goodput_mbps"] < 12  # the simulation shows the cap it names
    scenario.write_text(base + "burst: 400000\n")  # two MAPs at the rate: no cap, nothing said
    p = hfcprov("sim", "run", str(scenario), "--json")
    assert p.returncode == 0 and "MaxTrafficBurst" not in p.stderr, p.stderr
    scenario.write_text(base.replace("600M", "1G").replace("docsis3.1", "docsis3.1:congestion=80%") + "burst: 1MB\n")
    p = hfcprov("sim", "run", str(scenario), "--json")
    assert p.returncode == 0 and "cannot carry this 1 Gb/s flow" in p.stderr, p.stderr
