"""Per-file CLI cost: one fresh `hfcprov config encode one.txt -o one.cm` process against `python -c pass`.

Provisioning systems call an encoder once per modem (the C `docsis` tool is used that way), so the
cost of one whole process matters, and it is mostly imports. Each command runs --runs times,
interleaved (A B C A B C ...) so a busy machine slows them alike; the table gives min / median / max
wall time and each median as a ratio to `python -c pass` run by the same interpreter in the same
run (the anchor: what any Python CLI pays before its first import).

    .venv/bin/python bench/startup.py                  # >= 20 runs each
    .venv/bin/python bench/startup.py --docsis /tmp/docsis/src/docsis   # the C tool beside it
    .venv/bin/python bench/startup.py --compare /tmp/old/.venv/bin/python   # another checkout, same run

The C tool is optional: build it yourself in a temporary folder and pass its path; its
`docsis -e one.txt key one.cm` is timed the same way (it needs a key file; one is written).
Absolute figures depend on the machine and its load; the ratios are what to compare.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEXT = """Main {
  NetworkAccess 1;
  MaxCPE 2;
  UsServiceFlow {
    UsServiceFlowRef 1;
    QosParamSetType 7;
    MaxRateSustained 10000000;
  }
  DsServiceFlow {
    DsServiceFlowRef 2;
    QosParamSetType 7;
    MaxRateSustained 50000000;
  }
}
"""

# the same config in the C docsis tool's own text form
DOCSIS_TEXT = """Main {
  NetworkAccess 1;
  MaxCPE 2;
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 10000000; }
  DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 50000000; }
}
"""


def timed(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.decode()[-500:]}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=25, help="runs per command (>= 20)")
    ap.add_argument("--docsis", help="path of a built C docsis tool to time beside it")
    ap.add_argument("--python", default=sys.executable, help="interpreter (default: this one)")
    ap.add_argument("--compare", metavar="PYTHON", help="also time `PYTHON -m hfcprov config encode` (e.g. the "
                                                        "venv of an older checkout: before/after in one run)")
    args = ap.parse_args()
    if args.runs < 20:
        ap.error("--runs must be at least 20")
    script = Path(args.python).with_name("hfcprov")
    work = Path(tempfile.mkdtemp(prefix="hfcprov-startup-"))
    try:
        (work / "one.txt").write_text(TEXT)
        commands = {
            "python -c pass (anchor)": [args.python, "-c", "pass"],
            "python -c 'import click'": [args.python, "-c", "import click"],
            "hfcprov config encode": [str(script) if script.exists() else args.python] +
                                     ([] if script.exists() else ["-m", "hfcprov"]) +
                                     ["config", "encode", "one.txt", "-o", "one.cm"],
            "python -m hfcprov config encode": [args.python, "-m", "hfcprov", "config", "encode", "one.txt",
                                                "-o", "one.cm"],
        }
        if args.compare:
            commands["compared: python -m hfcprov ..."] = [args.compare, "-m", "hfcprov", "config", "encode",
                                                          "one.txt", "-o", "one-compared.cm"]
        if args.docsis:
            (work / "one.docsis.txt").write_text(DOCSIS_TEXT)
            (work / "key").write_text("secret\n")
            commands["C docsis -e"] = [args.docsis, "-e", "one.docsis.txt", "key", "one-c.cm"]
        for cmd in commands.values():  # warm the page cache and .pyc files once
            timed(cmd, work)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, cmd in commands.items():
                times[name].append(timed(cmd, work))
        anchor = statistics.median(times["python -c pass (anchor)"])
        print(f"{args.runs} runs each, interleaved; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}; "
              f"{args.python}")
        if args.compare:
            print(f"compared: {args.compare}")
        print(f"{'command':<34} {'min ms':>8} {'median ms':>10} {'max ms':>8} {'x anchor':>9}")
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"{name:<34} {min(ts) * 1e3:>8.1f} {med * 1e3:>10.1f} {max(ts) * 1e3:>8.1f} {med / anchor:>9.2f}")
        ratio = statistics.median(times["hfcprov config encode"]) / anchor
        print(f"hfcprov config encode / python -c pass (medians): {ratio:.2f} (target <= 3)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
