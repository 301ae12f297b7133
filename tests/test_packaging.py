"""The wheel a user installs carries what the commands read: tier templates and MIBs.

Builds the real wheel (``pip wheel``, as ``pip install .`` does), installs it into a fresh venv
outside the checkout and runs the commands from a third folder, so nothing can come from the
checkout. The fresh venv reaches the dependencies through a .pth line to this interpreter's
site-packages (installing ~40 wheels again would only test pip); hfcprov itself must come from
the wheel, which the test checks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.support import REPO

pytestmark = pytest.mark.slow

NAMED = """Main {
  NetworkAccess 1;
  SnmpMibObject docsDevNmAccessStatus.1 Integer 4;
  SnmpMibObject sysContact.0 String "noc@example.net";
}
"""


def _run(cmd, cwd, env, check=True):
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    print("$", " ".join(map(str, cmd)), f"-> {result.returncode}\n{result.stdout}{result.stderr}")
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(hfcprov executable, a folder outside the checkout, env) of a venv holding only the wheel."""
    root = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    # a copy of the sources: the build must not leave build/ or *.egg-info in the checkout
    src = root / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info",
                                                             "build", "dist", "out", ".pytest_cache", ".hypothesis"))
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(src), "-w", str(root / "dist")], root, env)
    wheel = next((root / "dist").glob("hfcprov-*.whl"))
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], root, env)
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)], root, env)
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     root, env).stdout.strip())
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "zz_hfcprov_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    env["XDG_CACHE_HOME"] = str(root / "cache")
    where = _run([str(python), "-c", "import hfcprov; print(hfcprov.__file__)"], elsewhere, env).stdout
    assert where.startswith(str(site)), f"hfcprov imported from {where}, not from the wheel"
    return wheel, venv / "bin" / "hfcprov", elsewhere, env


def test_the_wheel_holds_templates_and_mibs(installed):
    wheel = installed[0]
    names = set(zipfile.ZipFile(wheel).namelist())
    for p in (REPO / "templates").iterdir():
        assert f"hfcprov/templates/{p.name}" in names
    for p in (REPO / "mibs").iterdir():
        assert f"hfcprov/mibs/{p.name}" in names
    # snmpsim's variation modules (the emulated modem's live counters): package data, not a package
    assert "hfcprov/snmp/simvariation/flowcounters.py" in names


def test_build_from_the_installed_wheel(installed):
    _, hfcprov, elsewhere, env = installed
    shutil.copy(REPO / "examples" / "inventory.csv", elsewhere / "inventory.csv")
    rows = [line for line in (elsewhere / "inventory.csv").read_text().splitlines()
            if line and not line.startswith("#")][1:]
    result = _run([hfcprov, "build", "-i", "inventory.csv", "-o", "cm"], elsewhere, env)
    assert f"{len(rows)} built" in result.stdout
    assert len(list((elsewhere / "cm").glob("*.cm"))) == len(rows)


def test_mib_names_from_the_installed_wheel(installed):
    _, hfcprov, elsewhere, env = installed
    (elsewhere / "named.txt").write_text(NAMED)
    _run([hfcprov, "config", "encode", "named.txt", "-o", "named.cm"], elsewhere, env)
    decoded = _run([hfcprov, "config", "decode", "--names", "named.cm"], elsewhere, env).stdout
    assert "SnmpMibObject docsDevNmAccessStatus.1 Integer 4;" in decoded
    assert 'SnmpMibObject sysContact.0 ' in decoded
    numeric = _run([hfcprov, "config", "decode", "named.cm"], elsewhere, env).stdout
    assert "1.3.6.1.2.1.69.1.2.1.7.1" in numeric


def test_a_plain_encode_from_the_installed_wheel_imports_no_click(installed):
    # the console script pip wrote -> hfcprov.cli.main -> the shortcut table, which must be in the wheel
    _, hfcprov, elsewhere, env = installed
    (elsewhere / "one.txt").write_text("Main { NetworkAccess 1; MaxCPE 2; }\n")
    python = hfcprov.with_name("python")
    result = _run([python, "-X", "importtime", hfcprov, "config", "encode", "one.txt", "-o", "one.cm"], elsewhere, env)
    imported = {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines() if line.count("|") == 2}
    assert "hfcprov.cli.shortcut_table" in imported and "hfcprov.config" in imported
    assert not {"click", "pathlib", "typing"} & imported
    assert (elsewhere / "one.cm").stat().st_size > 0
    # and anything unusual still reaches click: its usage error and status
    missing = _run([hfcprov, "config", "encode", "one.txt"], elsewhere, env, check=False)
    assert missing.returncode == 2 and "Missing option '-o'" in missing.stderr
