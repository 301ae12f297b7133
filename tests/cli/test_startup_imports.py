"""A per-file `hfcprov config encode` imports only what encoding a text config needs.

Provisioning systems run one encode per modem, so the process's cost is mostly imports
(bench/startup.py times it). This guards the import graph, not a time: a module that the encode
path does not use must not be pulled in by an import at the top of some module on the way.
The command runs in a fresh interpreter without site (``-S``; the checkout and site-packages are
put on the path by hand) so no .pth file's imports hide what hfcprov itself imports.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TEXT = """Main {
  NetworkAccess 1;
  MaxCPE 2;
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 10000000; }
  DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 50000000; }
}
"""

# Heavy third-party packages and other domains: none is needed to encode a text config. click is
# not either: a plain invocation is parsed by hfcprov.cli.shortcut (tests/cli/test_shortcut.py).
NEVER = ("click", "yaml", "jinja2", "pysnmp", "pysmi", "scapy", "matplotlib", "numpy", "rich", "tftpy", "distributed",
         "cryptography", "sqlite3", "json", "hfcprov.mib", "hfcprov.model", "hfcprov.tiers", "hfcprov.sim",
         "hfcprov.lab", "hfcprov.snmp", "hfcprov.tftp", "hfcprov.emu", "hfcprov.probe",
         # stdlib modules only other paths need (a server's socket, a temp-file dance, subprocesses)
         "socket", "tempfile", "shutil", "subprocess", "asyncio", "logging", "multiprocessing",
         "concurrent", "email", "http", "xml", "urllib.request", "csv", "decimal", "random", "bz2", "lzma",
         # the config tree and dictionary are plain classes: the dataclasses machinery costs ~3 ms
         "dataclasses",
         # ~3-4 ms each from a wheel: typing (a NamedTuple), pathlib (urllib.parse, ipaddress),
         # hashlib (OpenSSL, for one MD5: the CM MIC uses CPython's _md5)
         "typing", "pathlib", "ipaddress", "hashlib", "_hashlib", "hmac")

PROBE = """
import sys
from hfcprov.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exit:
    status = exit.code
from hfcprov.config.dictionary import ROOT
print("status", status)
print("unbuilt", *sorted(code for code, spec in ROOT.children.items() if "_mount" in spec.__dict__))
print("modules", *sorted(sys.modules))
"""


def run_encode(tmp_path, *args, text=TEXT):
    (tmp_path / "one.txt").write_text(text)
    path = [str(ROOT), *site.getsitepackages()]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    out = subprocess.run([sys.executable, "-S", "-c", PROBE, "config", "encode", "one.txt", "-o", "one.cm", *args],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) if " " in line else (line, "") for line in out.stdout.splitlines())
    return lines["status"], set(lines["unbuilt"].split()), set(lines["modules"].split())


def imported(modules, name):
    return name in modules or any(m.startswith(name + ".") for m in modules)


def test_encoding_a_text_config_imports_nothing_it_does_not_use(tmp_path):
    status, _, modules = run_encode(tmp_path)
    assert status in ("0", "None")
    data = (tmp_path / "one.cm").read_bytes()
    assert data and len(data) % 4 == 0  # a whole file: content, MIC, end marker, padding
    assert "hfcprov.config" in modules  # the probe really ran the command
    unwanted = [name for name in NEVER if imported(modules, name)]
    assert not unwanted, f"the encode path imports {unwanted}"


def test_encoding_builds_only_the_subtrees_the_config_uses(tmp_path):
    # 22/23/60 classifiers, 43 vendor-specific, 26.43: mounted subtrees the file does not use stay unbuilt
    _, unbuilt, _ = run_encode(tmp_path)
    assert {"22", "23", "43", "60"} <= unbuilt
    assert not {"24", "25"} & unbuilt


@pytest.mark.parametrize("source", ["Main { SnmpMibObject 1.3.6.1.2.1.1.4.0 String \"noc\"; }",
                                    "Main { UsPacketClass { ClassifierRef 1; IpTos 0x00ff00; } }"])
def test_other_statements_keep_the_path_light(tmp_path, source):
    _, _, modules = run_encode(tmp_path, text=source)
    assert not [name for name in ("yaml", "json", "hfcprov.mib", "socket", "sqlite3") if imported(modules, name)]


def test_a_one_process_build_of_a_csv_inventory_imports_no_click_yaml_or_multiprocessing(tmp_path):
    # `hfcprov build` is timed against the docsis C tool's batch mode (bench/bulk.py): click, PyYAML and
    # multiprocessing cost a tenth of a 1,000-modem build and it uses none of them
    (tmp_path / "m.csv").write_text("mac,tier\n000000000001,res-50x5\n")
    path = [str(ROOT), *site.getsitepackages()]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    out = subprocess.run([sys.executable, "-S", "-c", PROBE, "build", "-i", "m.csv", "-o", "out", "--jobs", "1",
                          "--no-cmts-mic"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    modules = set(dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)["modules"].split())
    assert (tmp_path / "out" / "000000000001.cm").exists() and "hfcprov.tiers.bulk" in modules
    assert not [name for name in ("click", "yaml", "multiprocessing", "rich") if imported(modules, name)]
