"""The error funnel: an unwritable output path or a damaged campaign database is one line naming the
path and the cause, exit status 1, no traceback, nothing half-written.

"Unwritable" is a path under a regular file: that refuses root too (CI runs as root, for whom a
read-only folder is writable). Not root, a read-only folder is tried as well.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

TINY = """name: tiny
target: sim
grid:
  upstream_rate: [2M]
  buffer: [16KiB, 32KiB]
  rtt: [40ms]
traffic:
  duration: 2s
  warmup: 1s
seed: 1
"""


def hfcprov(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hfcprov", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def one_line_error(r, *needles):
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("hfcprov: error:")]
    assert len(errors) == 1, r.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    root = tmp_path_factory.mktemp("funnel")
    (root / "tiny.yaml").write_text(TINY)
    r = hfcprov("campaign", "run", "tiny.yaml", "-d", "done.db", "-j", "1", cwd=root)
    assert r.returncode == 0, r.stderr
    return root


def writers(out):
    """Every command that writes a file a user names, aimed at ``out/<name>``."""
    return {
        "config encode -o": ["config", "encode", EXAMPLES / "buffer-control.cfg", "-o", out / "x.cm"],
        "config decode -o": ["config", "decode", EXAMPLES / "buffer-control.cfg", "-o", out / "x.txt"],
        "build -o": ["build", "-i", EXAMPLES / "inventory.csv", "-o", out / "cm"],
        "sim run --plot": ["sim", "run", EXAMPLES / "sim-upstream.yaml", "--set", "duration=6s", "--plot",
                           out / "p.png"],
        "sim run --out": ["sim", "run", EXAMPLES / "sim-upstream.yaml", "--set", "duration=6s", "--out",
                          out / "r.json"],
        "campaign run -d": ["campaign", "run", "tiny.yaml", "-d", out / "c.db"],
        "campaign run -o": ["campaign", "run", "tiny.yaml", "-d", "fresh.db", "-o", out / "r.html"],
        "campaign report -o": ["campaign", "report", "done.db", "-o", out / "r.html"],
    }


@pytest.mark.parametrize("name", list(writers(Path("x"))))
def test_output_under_a_regular_file_is_one_line(work, name):
    blocker = work / "blocker"
    blocker.write_text("a file, not a folder\n")
    args = writers(blocker)[name]
    r = hfcprov(*args, cwd=work)
    line = one_line_error(r, str(blocker))
    assert "not a campaign database" not in line
    assert blocker.read_text() == "a file, not a folder\n"
    assert not (work / "fresh.db").exists()  # -o checked before the run made anything


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder; the regular-file case covers root")
@pytest.mark.parametrize("name", list(writers(Path("x"))))
def test_output_in_a_read_only_folder_is_one_line(work, name):
    ro = work / "ro"
    ro.mkdir(exist_ok=True)
    ro.chmod(0o555)
    try:
        r = hfcprov(*writers(ro)[name], cwd=work)
        one_line_error(r, str(ro), "Permission denied")
        assert list(ro.iterdir()) == []  # not even a temporary file left
    finally:
        ro.chmod(0o755)


@pytest.fixture
def damaged(work):
    data = bytearray((work / "done.db").read_bytes())
    assert len(data) >= 4096 * 5
    data[4096 * 2:4096 * 5] = b"\xff" * (4096 * 3)  # the header is intact: SQLite opens it, then finds the damage
    (work / "damaged.db").write_bytes(bytes(data))
    return work / "damaged.db"


@pytest.mark.parametrize("args", [
    ["campaign", "status", "damaged.db"],
    ["campaign", "status", "--json", "damaged.db"],
    ["campaign", "report", "damaged.db", "-o", "r.html"],
    ["campaign", "run", "tiny.yaml", "--resume", "-d", "damaged.db"],
])
def test_damaged_database_is_one_line(work, damaged, args):
    r = hfcprov(*args, cwd=work)
    one_line_error(r, "damaged.db", "damaged campaign database")
    assert not (work / "r.html").exists()


def test_verbose_shows_the_traceback(work):
    (work / "blocker").write_text("x")
    r = hfcprov("-v", "config", "encode", EXAMPLES / "buffer-control.cfg", "-o", work / "blocker" / "x.cm", cwd=work)
    assert r.returncode == 1 and "Traceback" in r.stderr


def test_tftp_get_output_under_a_regular_file_is_one_line(tmp_path):
    import re
    import signal

    root = tmp_path / "root"
    root.mkdir()
    (root / "a.cm").write_bytes(b"\x03\x01\x01")
    server = subprocess.Popen([sys.executable, "-m", "hfcprov", "tftp", "serve", "--root", str(root), "--listen",
                               "127.0.0.1:0", "--log", str(tmp_path / "log")], stderr=subprocess.PIPE, text=True)
    try:
        port = re.search(r"on 127\.0\.0\.1:(\d+)", server.stderr.readline()).group(1)
        (tmp_path / "blocker").write_text("x")
        r = hfcprov("tftp", "get", f"127.0.0.1:{port}", "a.cm", "-o", tmp_path / "blocker" / "a.cm", cwd=tmp_path)
        one_line_error(r, str(tmp_path / "blocker"))
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
