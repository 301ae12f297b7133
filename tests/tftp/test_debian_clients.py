"""Debian's TFTP clients (tftp-hpa, atftp) against hfcprov's server: static and dynamic files, refusals."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hfcprov.config import decode
from hfcprov.tftp import TftpServer
from hfcprov.tftp.dynamic import ConfigFileBuilder
from tests.support import require_tool

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dyn_server(root):
    builder = ConfigFileBuilder(REPO / "examples" / "inventory.csv")
    with TftpServer(root, dynamic=builder, timeout=1.0) as srv:
        yield srv


def _tftp_hpa(port, commands: str, cwd) -> subprocess.CompletedProcess:
    tftp = require_tool("tftp", "tftp-hpa")
    return subprocess.run([tftp, "127.0.0.1", str(port)], input=commands, text=True, capture_output=True,
                          cwd=cwd, timeout=30)


def _atftp(port, remote, local, *options) -> subprocess.CompletedProcess:
    atftp = require_tool("atftp", "atftp")
    args = [atftp, "-g", "-r", remote, "-l", str(local)]
    for o in options:
        args += ["--option", o]
    return subprocess.run(args + ["127.0.0.1", str(port)], capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("name", ["gold.cm", "exact.cm", "empty.cm", "big.bin", "cm/silver.cm"])
def test_tftp_hpa_static_identical(dyn_server, root, tmp_path, name):
    r = _tftp_hpa(dyn_server.port, f"mode octet\nrexmt 1\nget {name} out\nquit\n", tmp_path)
    assert (tmp_path / "out").read_bytes() == (root / name).read_bytes(), r.stdout + r.stderr


def test_tftp_hpa_dynamic_file(dyn_server, tmp_path):
    _tftp_hpa(dyn_server.port, "mode octet\nget 001095000003.cm out\nquit\n", tmp_path)
    tree = decode((tmp_path / "out").read_bytes())
    assert tree.find("20")[0].value == "127.0.0.1" and tree.find("24")


def test_tftp_hpa_refusals(dyn_server, root, tmp_path):
    (tmp_path / "up.cm").write_bytes(b"x" * 100)
    r = _tftp_hpa(dyn_server.port, "mode octet\nput up.cm new.cm\nget ../secret.txt s\nget nope.cm n\nquit\n", tmp_path)
    out = r.stdout + r.stderr
    assert "read-only" in out and "access violation" in out and "file not found" in out
    assert not (root / "new.cm").exists()


@pytest.mark.parametrize("options", [(), ("blksize 1428",), ("windowsize 8", "blksize 1024"), ("tsize 0", "timeout 2")])
def test_atftp_static_with_options(dyn_server, root, tmp_path, options):
    r = _atftp(dyn_server.port, "big.bin", tmp_path / "out", *options)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out").read_bytes() == (root / "big.bin").read_bytes()


def test_atftp_dynamic_file_with_windowsize(dyn_server, tmp_path):
    r = _atftp(dyn_server.port, "001095000006.cm", tmp_path / "out", "windowsize 4", "blksize 512")
    assert r.returncode == 0, r.stderr
    tree = decode((tmp_path / "out").read_bytes())
    assert tree.find("20")[0].value == "127.0.0.1"


def test_atftp_missing_file_fails(dyn_server, tmp_path):
    r = _atftp(dyn_server.port, "nope.cm", tmp_path / "out")
    assert r.returncode != 0 and "not found" in (r.stdout + r.stderr).lower()
