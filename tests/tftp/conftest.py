"""A served root with files of the sizes that matter to TFTP, and a running server."""

from __future__ import annotations

import io
import os
import random

import pytest

from hfcprov.tftp import TftpServer

from .helpers import abandoning

# 0 and exact multiples of 512 need an empty final block; 7000 is a typical modem config.
SIZES = {"empty.cm": 0, "one.cm": 1, "short.cm": 511, "exact.cm": 512, "two.cm": 1024, "gold.cm": 7000,
         "big.bin": 100_000}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    base = tmp_path_factory.mktemp("tftp")
    r = base / "root"
    r.mkdir()
    rng = random.Random(4)
    for name, size in SIZES.items():
        (r / name).write_bytes(rng.randbytes(size))
    (r / "cm").mkdir()
    (r / "cm" / "silver.cm").write_bytes(rng.randbytes(3000))
    (r / "text.txt").write_bytes(b"line one\nline two\r\nend\n")
    (base / "secret.txt").write_bytes(b"outside the root")
    os.symlink(base / "secret.txt", r / "escape.cm")  # points out of the root
    os.symlink(r / "gold.cm", r / "alias.cm")  # stays inside
    return r


@pytest.fixture
def log():
    return io.StringIO()


@pytest.fixture
def server(root, log):
    with abandoning(TftpServer(root, port=0, log=log, timeout=1.0, retries=3)) as srv:
        yield srv
