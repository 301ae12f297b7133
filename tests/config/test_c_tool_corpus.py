"""The docsis C tool's own corpus (its tests/*.txt and the *.cm it ships): every input the C tool itself
rebuilds byte for byte, hfcprov rebuilds too, except where hfcprov differs on purpose (bench/c_tool_corpus.py
says why, checked on the bytes). Runs when HFCPROV_DOCSIS_TOOL names a built C tool whose sources' tests/
folder holds the corpus (or HFCPROV_DOCSIS_CORPUS names that folder)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .. import support

BENCH = support.REPO / "bench" / "c_tool_corpus.py"


def corpus_and_tool():
    tool = os.environ.get("HFCPROV_DOCSIS_TOOL")
    if not tool:
        pytest.skip("the docsis C tool is not built (set HFCPROV_DOCSIS_TOOL=/path/to/docsis/src/docsis)")
    corpus = Path(os.environ.get("HFCPROV_DOCSIS_CORPUS") or Path(tool).resolve().parent.parent / "tests")
    if not (corpus / "key").exists():
        pytest.skip(f"no C tool corpus at {corpus} (set HFCPROV_DOCSIS_CORPUS to its tests/ folder)")
    return corpus, tool


@pytest.mark.slow
@pytest.mark.timeout(1200)  # the C tool loads its ~340 MIB files for each of the 142 inputs
def test_every_input_the_c_tool_rebuilds_hfcprov_rebuilds_or_differs_on_purpose():
    corpus, tool = corpus_and_tool()
    run = subprocess.run([sys.executable, str(BENCH), "--corpus", str(corpus), "--encode-only"], capture_output=True,
                         text=True, timeout=1100, env={**os.environ, "HFCPROV_DOCSIS_TOOL": tool})
    misses = [line for line in run.stdout.splitlines() if line.startswith("  miss:")]
    # MIB names the corpus uses that hfcprov cannot resolve yet are issue 26 item 1 (hfcprov.mib); any
    # other miss without a stated cause is a parity bug
    unexplained = [m for m in misses if ": the C tool" not in m and "computed per MULPI" not in m
                   and "unknown OID" not in m]
    assert unexplained == [], run.stdout
    assert run.returncode in (0, 1) and "byte-exact" in run.stdout, run.stderr
