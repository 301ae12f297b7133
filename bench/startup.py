"""Per-file CLI cost: one fresh `hfcprov config encode one.txt -o one.cm` process against `python -c pass`.

Provisioning systems call an encoder once per modem (the C `docsis` tool is used that way), so the
cost of one whole process matters, and it is mostly imports. Each command runs --runs times,
interleaved (A B C A B C ...) so a busy machine slows them alike; the table gives min / median / max
wall time and each median as a ratio to `python -c pass` run by the same interpreter in the same
run (the anchor: what any Python CLI pays before its first import).

    .venv/bin/python bench/startup.py                  # >= 20 runs each
    .venv/bin/python bench/startup.py --docsis /tmp/docsis/src/docsis   # the C tool beside it
    .venv/bin/python bench/startup.py --compare /tmp/old/.venv/bin/python   # another checkout, same run
    .venv/bin/python bench/startup.py --python /tmp/wheel-venv/bin/python     # an installed wheel

The C tool is optional: build it yourself in a temporary folder and pass its path; its
`docsis -e one.txt key one.cm` is timed the same way (it needs a key file; one is written).
Absolute figures depend on the machine and its load; the ratios are what to compare.

The anchor is `python -c pass` of the interpreter given: its site runs that environment's .pth files
(an editable install's finder imports pathlib, re and urllib: about half of the anchor, which hfcprov
then finds loaded). For an installed wheel, pass its venv's python (`--python /venv/bin/python`).
`python -S -c pass` (no site at all) is shown as the interpreter's floor. Besides wall time, each
run's CPU time (user + sys of the child, from wait4) is given: on a shared machine it moves much
less with the load than wall time.

Children run without PYTHONDONTWRITEBYTECODE, so the warm-up run writes the .pyc files an install
has (pip compiles on install; a checkout writes them on first run); with the variable set, every
run would compile hfcprov's modules from source (~30 ms).
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


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, cpu) seconds of one run of ``cmd``; cpu = the child's user + sys time."""
    with open(os.devnull, "wb") as null, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=ENV, stdout=null, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err.read().decode()[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


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
            "python -S -c pass (no site)": [args.python, "-S", "-c", "pass"],
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
        wall: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        load = os.getloadavg()[0]
        for _ in range(args.runs):
            for name, cmd in commands.items():
                w, c = timed(cmd, work)
                wall[name].append(w)
                cpu[name].append(c)
        anchor = statistics.median(wall["python -c pass (anchor)"])
        cpu_anchor = statistics.median(cpu["python -c pass (anchor)"])
        print(f"{args.runs} runs each, interleaved; {os.cpu_count()} CPUs; load {load:.2f} -> "
              f"{os.getloadavg()[0]:.2f}; {args.python}")
        if args.compare:
            print(f"compared: {args.compare}")
        print(f"{'command':<34} {'wall min':>8} {'median':>7} {'max':>7} {'x anchor':>8}"
              f"  {'cpu min':>7} {'median':>7} {'max':>7} {'x anchor':>8}")
        for name in commands:
            w, c = wall[name], cpu[name]
            print(f"{name:<34} {min(w) * 1e3:>8.1f} {statistics.median(w) * 1e3:>7.1f} {max(w) * 1e3:>7.1f} "
                  f"{statistics.median(w) / anchor:>8.2f}  {min(c) * 1e3:>7.1f} {statistics.median(c) * 1e3:>7.1f} "
                  f"{max(c) * 1e3:>7.1f} {statistics.median(c) / cpu_anchor:>8.2f}")
        print("(ms; x anchor = median / median of python -c pass, same run)")
        for label, times in (("wall", wall), ("cpu", cpu)):
            enc = statistics.median(times["hfcprov config encode"])
            line = f"hfcprov config encode / python -c pass, {label} medians: " \
                   f"{enc / statistics.median(times['python -c pass (anchor)']):.2f} (target <= 3)"
            print(line)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
