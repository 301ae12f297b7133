"""Every test folder is collected by the README's test command.

pytest silently skips folders whose names match its norecursedirs (``build`` among
its defaults), which once hid the bulk-build tests (then tests/build, now tests/tiers)
from full runs; this keeps it from recurring for any folder.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support import REPO


@pytest.mark.slow
def test_every_test_folder_is_collected_in_a_full_run():
    folders = sorted(p.name for p in (REPO / "tests").iterdir()
                     if p.is_dir() and any(p.glob("test_*.py")))
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                         cwd=REPO, capture_output=True, text=True).stdout
    collected = {line.split("/")[1] for line in out.splitlines() if line.startswith("tests/") and "::" in line}
    assert folders, "no test folders found"
    assert [f for f in folders if f not in collected] == []
